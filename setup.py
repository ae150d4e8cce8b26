"""Builds the Python package from the project's CMake build (pyproject.toml).

The extension is the CMake target `python` (pybind11), built in build/ (or the directory
$COTANGENT_BUILD_DIR names) against the interpreter that runs this script; the package's
Python files come from python/cotangent/. Nothing is downloaded.
"""

import glob
import os
import shutil
import subprocess
import sys
import sysconfig

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

ROOT = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("COTANGENT_BUILD_DIR", os.path.join(ROOT, "build"))


class BinaryDistribution(Distribution):
    """A wheel for this platform and interpreter: it holds a compiled extension."""

    def has_ext_modules(self):
        return True


class BuildWithCMake(build_py):
    def run(self):
        build = BUILD
        if not os.path.exists(os.path.join(build, "CMakeCache.txt")):
            subprocess.check_call(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                                   f"-DPython_EXECUTABLE={sys.executable}"])
        subprocess.check_call(["cmake", "--build", build, "--target", "python", "-j",
                               str(os.cpu_count() or 1)])
        super().run()
        # The extension of this interpreter: a build directory configured for another Python
        # holds one that this one cannot import.
        suffix = sysconfig.get_config_var("EXT_SUFFIX")
        built = glob.glob(os.path.join(build, "python", "cotangent", "_cotangent" + suffix))
        if not built:
            raise RuntimeError(
                f"the CMake build in {build} has no _cotangent{suffix} for {sys.executable}; "
                f"configure a build for it (COTANGENT_BUILD_DIR=another directory) or "
                f"reconfigure this one with -DPython_EXECUTABLE={sys.executable}")
        target = os.path.join(self.build_lib, "cotangent")
        os.makedirs(target, exist_ok=True)
        for so in built:
            shutil.copy2(so, target)


setup(
    packages=["cotangent"],
    package_dir={"cotangent": "python/cotangent"},
    cmdclass={"build_py": BuildWithCMake},
    distclass=BinaryDistribution,
    # setuptools' own files go to the CMake build directory, not beside the sources.
    options={"build": {"build_base": os.path.join(BUILD, "setuptools")},
             "egg_info": {"egg_base": os.path.join(BUILD, "setuptools")}},
)
