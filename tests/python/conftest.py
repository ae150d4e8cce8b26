"""Shared fixtures and helpers of the Python package's tests.

Every test file loads the same module (SOURCE) once, in a module-scoped fixture, so a function is
compiled to native code once per shape and per process; the compiled objects land in the disk
cache ($COTANGENT_CACHE_DIR, set by ctest), so the other files (other processes) load them from
there.

Reals are compared with rho(x, y) = |x - y| / max(1, |x| + |y|), elementwise, and a stated
tolerance: TOL_EXACT between the native backend and the interpreter, TOL_FD against central
finite differences.

The helpers are plain functions; the test files import them with `from conftest import ...`
(pytest puts this directory on sys.path, as it has no __init__.py).
"""

import numpy as np
import pytest

import cotangent

TOL_EXACT = 1e-12  # native vs interpreter, and vs closed forms computed in NumPy
TOL_FD = 1e-6  # against central finite differences
FD_STEP = 1e-6

SOURCE = """\
# The module the Python tests share (tests/python/conftest.py).
def loss(w: f64[k], X: f64[m, k], y: f64[m]) -> f64 {
  sum r. (dot(X[r], w) - y[r]) ^ 2
}

def predict(w: f64[k], X: f64[m, k]) -> f64[m] {
  for r. tanh(sum j. X[r, j] * w[j])
}

def rosen(x: f64[n]) -> f64 {
  sum i: n - 1. 100.0 * (x[i + 1] - x[i] ^ 2) ^ 2 + (1.0 - x[i]) ^ 2
}

# A tuple parameter and a tuple result, nonlinear in every real input.
def pair(p: (f64[n], f64), q: f64[n]) -> (f64[n], f64) {
  let (v, s) = p
  (for i. sin(v[i]) * s + q[i] * v[i] * v[i],
   s * sqnorm(v) + exp(0.1 * dot(q, v)))
}

# A tuple parameter and a tensor result (for jacobian).
def first(p: (f64[n], f64), q: f64[n]) -> f64[n] {
  let (a, _) = pair(p, q)
  a
}

# A tuple parameter and a scalar result (for grad, value_and_grad, hessian).
def energy(p: (f64[n], f64), q: f64[n]) -> f64 {
  let (v, s) = p
  let a = sum i. v[i] * q[i]
  let b = sum i. sin(q[i]) * v[i] * v[i]
  s * s * a + log(1.0 + sqnorm(v)) + s * b + sqnorm(q) * s
}

def cube(x: f64) -> f64 { x * x * x }

# Composition written in the language, to compare with the Python transforms.
def cube_second(x: f64) -> f64 { grad(grad(cube, x), x)(x) }
def rosen_hvp(x: f64[n], v: f64[n]) -> (f64[n], f64[n]) { jvp(grad(rosen, x), x)(x, v) }

def count(w: f64[k], n: i64) -> f64 { f64(n) * sqnorm(w) }

def gather(x: f64[n], idx: i64[k]) -> f64[k] { for o. x[idx[o]] }

def halvings(x: f64) -> i64 {
  let (_, c) = loop (v, c) = (x, 0) while v > 1.0 { (v / 2.0, c + 1) }
  c
}

def add(x: f64[n], y: f64[n]) -> f64[n] { x + y }

def ident(x: f64[n]) -> f64[n] { x }

def colsum(A: f64[m, n]) -> f64[n] { for j. sum i. A[i, j] * f64(i + 1) }

def split(x: f64[n]) -> (f64[n], f64, f64[n, 2]) {
  (2.0 * x, sum i. x[i], for i, j: 2. x[i] * f64(j + 1))
}

def scale32(x: f32[n], a: f32) -> f32[n] { a * x }

def quad32(x: f32[n], a: f32) -> f32 { sum i. a * x[i] * x[i] * x[i] }

def ints(k: i64[n], s: i64) -> (i64[n], i64) { (for i. k[i] * s, sum i. k[i]) }

def bools(b: bool[n], x: f64[n], flag: bool) -> (bool[n], f64) {
  (for i. b[i] && flag, sum i. [b[i]] * x[i])
}

def square(k: i64) -> i64 { k * k }

def constant() -> f64 { 2.5 }
"""


@pytest.fixture(scope="module")
def mod():
    """SOURCE loaded once per test file (the native backend, the default)."""
    return cotangent.loads(SOURCE, name="shared.cot")


@pytest.fixture
def rng():
    return np.random.default_rng(20240601)


# ---------------------------------------------------------------------------------------------
# Comparing values


def rho(x, y):
    """max over the elements of |x - y| / max(1, |x| + |y|); 0 where both are the same
    infinity or both NaN."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    assert x.shape == y.shape, f"shapes differ: {x.shape} and {y.shape}"
    if x.size == 0:
        return 0.0
    same = (x == y) | (np.isnan(x) & np.isnan(y))
    with np.errstate(invalid="ignore"):
        r = np.abs(x - y) / np.maximum(1.0, np.abs(x) + np.abs(y))
    r = np.where(same, 0.0, r)
    r = np.where(np.isnan(r), np.inf, r)
    return float(np.max(r))


def assert_close(actual, expected, tol, path="result"):
    """actual and expected have the same structure (tuples of the same length, arrays of the
    same shape, scalars) and every real differs by at most tol in rho."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple), f"{path}: expected a tuple, got {type(actual).__name__}"
        assert len(actual) == len(expected), f"{path}: {len(actual)} elements, not {len(expected)}"
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_close(a, e, tol, f"{path}[{k}]")
        return
    if isinstance(expected, np.ndarray) and expected.ndim > 0:
        assert isinstance(actual, np.ndarray), f"{path}: expected an array, got {actual!r}"
        assert actual.shape == expected.shape, f"{path}: shape {actual.shape}, not {expected.shape}"
    else:
        assert np.ndim(actual) == 0, f"{path}: expected a scalar, got shape {np.shape(actual)}"
    r = rho(actual, expected)
    assert r <= tol, f"{path}: rho = {r:.3g} > {tol:g}\n actual:   {actual!r}\n expected: {expected!r}"


def assert_same_kind(actual, expected, path="result"):
    """actual has expected's structure, dtypes and Python types exactly."""
    if isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), path
        for k, (a, e) in enumerate(zip(actual, expected)):
            assert_same_kind(a, e, f"{path}[{k}]")
    elif isinstance(expected, np.ndarray):
        assert isinstance(actual, np.ndarray), f"{path}: {actual!r} is not an array"
        assert actual.dtype == expected.dtype, f"{path}: dtype {actual.dtype}, not {expected.dtype}"
        assert actual.shape == expected.shape, f"{path}: shape {actual.shape}, not {expected.shape}"
    else:
        assert type(actual) is type(expected), f"{path}: {type(actual)} is not {type(expected)}"


def interp(f):
    return f.with_options(backend="interp")


def assert_matches_interp(f, *args, tol=TOL_EXACT):
    """f (native) and f on the interpreter give the same structure, types and values; returns
    the native result."""
    native = f(*args)
    reference = interp(f)(*args)
    assert_same_kind(native, reference)
    assert_close(native, reference, tol)
    return native


# ---------------------------------------------------------------------------------------------
# Trees of values (tuples of arrays and floats), for finite differences


def tree_map(fn, *trees):
    if isinstance(trees[0], tuple):
        return tuple(tree_map(fn, *parts) for parts in zip(*trees))
    return fn(*trees)


def tree_leaves(tree):
    if isinstance(tree, tuple):
        return [leaf for part in tree for leaf in tree_leaves(part)]
    return [tree]


def tree_vdot(a, b):
    return float(sum(np.vdot(np.asarray(x, np.float64), np.asarray(y, np.float64))
                     for x, y in zip(tree_leaves(a), tree_leaves(b))))


def _as_leaf(like, value):
    """value with the Python type of `like`: a float for a scalar, an array otherwise."""
    if isinstance(like, np.ndarray):
        return np.asarray(value, dtype=like.dtype)
    return float(value)


def fd_jvp(fun, args, tangents, h=FD_STEP):
    """Central differences of fun(*args) along `tangents` (a tree per argument; None for an
    argument that stays fixed)."""
    def shifted(sign):
        out = []
        for a, t in zip(args, tangents):
            if t is None:
                out.append(a)
            else:
                out.append(tree_map(lambda x, dx: _as_leaf(x, np.asarray(x) + sign * h * np.asarray(dx)),
                                    a, t))
        return out
    plus = fun(*shifted(+1))
    minus = fun(*shifted(-1))
    return tree_map(lambda p, m: _as_leaf(p, (np.asarray(p, np.float64) - np.asarray(m, np.float64)) / (2 * h)),
                    plus, minus)


def fd_grad(fun, args, k, h=FD_STEP):
    """The gradient of the scalar fun(*args) with respect to argument k (an array or a float),
    element by element by central differences."""
    x = args[k]
    if not isinstance(x, np.ndarray):
        t = 1.0
        return fd_jvp(fun, args, [t if j == k else None for j in range(len(args))], h)
    g = np.zeros(x.shape)
    for idx in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[idx] = 1.0
        g[idx] = fd_jvp(fun, args, [e if j == k else None for j in range(len(args))], h)
    return g


def fd_jacobian(fun, args, k, h=FD_STEP):
    """The Jacobian of the tensor-valued fun(*args) with respect to array argument k, of shape
    result.shape + args[k].shape."""
    x = args[k]
    cols = {}
    for idx in np.ndindex(x.shape):
        e = np.zeros(x.shape)
        e[idx] = 1.0
        cols[idx] = np.asarray(fd_jvp(fun, args, [e if j == k else None for j in range(len(args))], h))
    out_shape = next(iter(cols.values())).shape
    J = np.zeros(out_shape + x.shape)
    for idx, col in cols.items():
        J[(Ellipsis,) + idx] = col
    return J


def random_like(tree, rng):
    return tree_map(lambda x: _as_leaf(x, rng.standard_normal(np.shape(x))), tree)


# ---------------------------------------------------------------------------------------------
# NumPy versions of SOURCE's functions, and arguments for them


def np_loss(w, X, y):
    return float(np.sum((X @ w - y) ** 2))


def np_predict(w, X):
    return np.tanh(X @ w)


def np_rosen(x):
    return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2))


def np_pair(p, q):
    v, s = p
    return (np.sin(v) * s + q * v * v, float(s * np.dot(v, v) + np.exp(0.1 * np.dot(q, v))))


def np_energy(p, q):
    v, s = p
    return float(s * s * np.dot(v, q) + np.log(1.0 + np.dot(v, v)) + s * np.sum(np.sin(q) * v * v)
                 + np.dot(q, q) * s)


@pytest.fixture
def lsq(rng):
    """Arguments (w, X, y) of loss: k = 3, m = 5."""
    return rng.standard_normal(3), rng.standard_normal((5, 3)), rng.standard_normal(5)


@pytest.fixture
def pq(rng):
    """Arguments (p, q) of pair and energy: n = 4."""
    return (rng.standard_normal(4), float(rng.standard_normal())), rng.standard_normal(4)
