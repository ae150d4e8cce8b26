#!/usr/bin/env bash
# The README's offline install: a virtual environment that sees Debian's NumPy, then
# `pip install --no-build-isolation --no-deps .` from the source tree, with the extension from
# the CMake build ($COTANGENT_BUILD_DIR); then the installed package is imported and used from
# outside the source tree, without PYTHONPATH.
set -euo pipefail
src="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
/usr/bin/python3 -m venv --system-site-packages "$work/venv"
(cd "$src" && "$work/venv/bin/pip" install --no-build-isolation --no-deps --no-index -q .)
cd "$work"
env -u PYTHONPATH "$work/venv/bin/python" - <<'PY'
import numpy as np
import cotangent
assert cotangent.__file__.startswith(__import__("sys").prefix), cotangent.__file__
m = cotangent.loads("def f(x: f64[n]) -> f64 { sum i. x[i] * x[i] }")
g = cotangent.grad(m.f)(np.array([1.0, 2.0, 3.0]))
assert np.array_equal(g, [2.0, 4.0, 6.0]), g
print("installed package works:", cotangent.__file__)
PY
