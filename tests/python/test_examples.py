"""The Python examples (examples/python/*.py) run to the end: each is run as a script, as a user
runs it, with this interpreter and the environment's PYTHONPATH (made absolute, as the scripts
run from another directory), and must exit with 0 and print its `NAME: OK` line (printed after
its own assertions on the fit)."""

import os
import pathlib
import subprocess
import sys

import pytest

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples" / "python"

# script -> lines it must print (besides the final "NAME: OK")
CASES = {
    "logistic_regression.py": ["fitted weights:", "gradient norm at the optimum:"],
    "gmm_fit.py": ["fitted means:", "log-posterior:"],
    "least_squares.py": ["fitted parameters (a, b, c):", "Jacobian at p0 vs central differences:"],
    "rosenbrock_newton.py": ["trust-exact:", "Newton-CG:"],
}


def environment():
    env = dict(os.environ)
    paths = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def test_every_example_is_tested():
    scripts = {p.name for p in EXAMPLES.glob("*.py")}
    assert scripts == set(CASES), f"examples without a test case: {scripts - set(CASES)}"


@pytest.mark.parametrize("script", sorted(CASES))
def test_example_runs(script):
    path = EXAMPLES / script
    # From another directory: a script finds its .cot files relative to itself.
    proc = subprocess.run([sys.executable, str(path)], env=environment(), cwd="/",
                          capture_output=True, text=True, timeout=300)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{script} exited with {proc.returncode}:\n{output}"
    lines = proc.stdout.splitlines()
    name = script[:-len(".py")]
    assert lines and lines[-1] == f"{name}: OK", f"{script} did not print '{name}: OK':\n{output}"
    for expected in CASES[script]:
        assert any(expected in line for line in lines), f"{script} did not print {expected!r}:\n{output}"
