"""The package's entry points: load/loads, Module, Function and its attributes and options,
calling conventions, source, cost, ravel and scipy_objective."""

import os

import numpy as np
import pytest

import cotangent
from conftest import (SOURCE, TOL_EXACT, TOL_FD, assert_close, assert_matches_interp,
                      assert_same_kind, fd_grad, interp, np_loss, np_pair, np_predict, np_rosen)

FIRST = """\
def predict(w: f64[k], X: f64[m, k]) -> f64[m] {
  for r. sum j. X[r, j] * w[j]
}

def loss(w: f64[k], X: f64[m, k], y: f64[m]) -> f64 {
  let p = predict(w, X)
  sum r. (p[r] - y[r]) ^ 2
}
"""
FIRST_ARGS = (np.array([0.5, -0.25]), np.array([[1.0, 2], [3, 4], [5, 6]]), np.array([1.0, 2, 3]))


# --------------------------------------------------------------------------------------------
# The package


def test_all_names_exist():
    for name in cotangent.__all__:
        assert hasattr(cotangent, name), name
    for name in ("load", "loads", "grad", "value_and_grad", "jvp", "vjp", "jacobian", "hessian",
                 "hvp", "source", "cost", "ravel", "scipy_objective", "Error", "CompileError",
                 "EvaluationError", "Function", "Module"):
        assert name in cotangent.__all__, name


def test_error_hierarchy():
    assert issubclass(cotangent.Error, Exception)
    assert issubclass(cotangent.CompileError, cotangent.Error)
    assert issubclass(cotangent.EvaluationError, cotangent.Error)
    assert not issubclass(cotangent.CompileError, cotangent.EvaluationError)


# --------------------------------------------------------------------------------------------
# load and loads


@pytest.fixture(scope="module")
def cot_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "first.cot"
    path.write_text(FIRST)
    return path


def test_load_file(cot_file):
    m = cotangent.load(str(cot_file))
    assert m.name == str(cot_file)
    assert m.functions() == ["predict", "loss"]
    assert m.loss(*FIRST_ARGS) == 7.25
    assert repr(m) == f"<cotangent.Module {cot_file}>"


def test_load_accepts_a_path_object(cot_file):
    # os.PathLike, as open() and np.load take it.
    m = cotangent.load(cot_file)
    assert m.loss(*FIRST_ARGS) == 7.25


def test_load_interp_backend(cot_file):
    m = cotangent.load(str(cot_file), backend="interp")
    assert m.loss.backend == "interp"
    assert m.loss(*FIRST_ARGS) == 7.25
    np.testing.assert_array_equal(m.predict(*FIRST_ARGS[:2]), [0.0, 0.5, 1.0])


def test_loads_name_and_prelude(mod):
    assert mod.name == "shared.cot"
    user = mod.functions()
    assert user[:3] == ["loss", "predict", "rosen"]
    assert "logsumexp" not in user
    everything = mod.functions(prelude=True)
    for name in ("logsumexp", "dot", "softmax", "matmul"):
        assert name in everything
    assert set(user) <= set(everything)
    assert mod.functions(prelude=False) == user


def test_loads_default_name():
    m = cotangent.loads("def f(x: f64) -> f64 { x + 1.0 }")
    assert m.name == "<string>"
    assert m.f(1.5) == 2.5


def test_empty_module():
    m = cotangent.loads("")
    assert m.functions() == []
    assert "dot" in m  # the prelude is there all the same
    assert m.dot(np.array([1.0, 2.0]), np.array([3.0, 4.0])) == 11.0


@pytest.mark.parametrize("opt", [0, 1, 2])
def test_opt_levels_agree(opt, lsq):
    m = cotangent.loads(SOURCE, name="opt.cot", opt=opt, backend="interp")
    assert m.opt_level == opt
    assert_close(m.loss(*lsq), np_loss(*lsq), TOL_EXACT)
    assert_close(cotangent.grad(m.loss, "w")(*lsq), 2 * lsq[1].T @ (lsq[1] @ lsq[0] - lsq[2]),
                 TOL_EXACT)


def test_default_opt_level(mod):
    # 2, unless COTANGENT_OPT says otherwise (docs/language.md §9)
    assert mod.opt_level == int(os.environ.get("COTANGENT_OPT", "2"))


def test_load_options_are_validated():
    with pytest.raises(ValueError, match="backend"):
        cotangent.loads("", backend="gpu")
    with pytest.raises(ValueError, match="opt must be 0, 1 or 2"):
        cotangent.loads("", opt=3)
    with pytest.raises(ValueError, match="threads"):
        cotangent.loads("", threads=-1)
    with pytest.raises(ValueError, match="max_while_iterations"):
        cotangent.loads("", max_while_iterations=-1)


def test_load_options_reach_functions():
    m = cotangent.loads(SOURCE, name="o.cot", backend="interp", threads=3, max_while_iterations=5)
    f = m.halvings
    assert f.backend == "interp" and f.threads == 3
    assert f(16.0) == 4  # 4 iterations: under the limit
    with pytest.raises(cotangent.EvaluationError, match="5 iterations"):
        f(1000.0)  # 10 iterations
    # Derived functions keep the module's options.
    assert cotangent.grad(m.rosen).backend == "interp"


# --------------------------------------------------------------------------------------------
# Module


def test_module_lookup(mod):
    assert "loss" in mod
    assert "logsumexp" in mod
    assert "no_such" not in mod
    assert mod.loss.name == "loss"
    assert mod["loss"].signature == mod.loss.signature
    assert mod["logsumexp"].name == "logsumexp"
    names = dir(mod)
    assert "loss" in names and "pair" in names and "functions" in names


def test_module_missing_function(mod):
    with pytest.raises(AttributeError, match="no function named `lossy`") as e:
        mod.lossy
    assert "loss" in str(e.value)  # the message lists what the module defines
    with pytest.raises(KeyError):
        mod["lossy"]
    assert not hasattr(mod, "lossy")


def test_module_shares_compiled_code_between_lookups():
    m = cotangent.loads("def twice(x: f64[n]) -> f64[n] { 2.0 * x }")
    assert m.twice.compiled_count == 0
    x = np.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(m.twice(x), 2 * x)
    np.testing.assert_array_equal(m["twice"](x + 1), 2 * x + 2)
    assert m.twice.compiled_count == 1
    assert m["twice"].compiled_count == 1
    m.twice(np.ones(2))
    assert m["twice"].compiled_count == 2
    # with_options copies share the compiled code too
    assert m.twice.with_options(threads=1).compiled_count == 2


def test_prelude_functions(mod, rng):
    x = rng.standard_normal(5)
    y = rng.standard_normal(5)
    assert_close(mod.logsumexp(x), float(np.log(np.sum(np.exp(x)))), TOL_EXACT)
    assert_close(mod.dot(x, y), float(x @ y), TOL_EXACT)
    assert_close(mod.softmax(x), np.exp(x) / np.sum(np.exp(x)), TOL_EXACT)
    A = rng.standard_normal((2, 3))
    assert_close(mod.matmul(A, A.T), A @ A.T, TOL_EXACT)
    assert_close(mod.logsumexp(np.array([1.0, 2.0, 1000.0])), 1000.0 + np.log1p(np.exp(-998) + np.exp(-999)),
                 TOL_EXACT)
    g = cotangent.grad(mod.logsumexp)(x)
    assert_close(g, np.exp(x) / np.sum(np.exp(x)), TOL_EXACT)


# --------------------------------------------------------------------------------------------
# Function


def test_function_attributes(mod):
    f = mod.loss
    assert f.name == "loss"
    assert f.parameters == [("w", "f64[k]"), ("X", "f64[m, k]"), ("y", "f64[m]")]
    assert f.result_type == "f64"
    assert f.signature == "loss(w: f64[k], X: f64[m, k], y: f64[m]) -> f64"
    assert repr(f) == "<cotangent.Function loss(w: f64[k], X: f64[m, k], y: f64[m]) -> f64>"
    assert f.backend == "native"
    assert f.threads == 0
    p = mod.pair
    assert p.parameters == [("p", "(f64[n], f64)"), ("q", "f64[n]")]
    assert p.result_type == "(f64[n], f64)"


def test_call_positional_keyword_mixed(mod, lsq):
    w, X, y = lsq
    expected = np_loss(w, X, y)
    for value in (mod.loss(w, X, y), mod.loss(w=w, X=X, y=y), mod.loss(w, y=y, X=X),
                  mod.loss(y=y, X=X, w=w)):
        assert type(value) is float
        assert_close(value, expected, TOL_EXACT)


def test_call_results_and_types(mod, lsq):
    w, X, _ = lsq
    r = mod.predict(w, X)
    assert isinstance(r, np.ndarray) and r.dtype == np.float64 and r.shape == (5,)
    assert_close(r, np_predict(w, X), TOL_EXACT)
    assert mod.constant() == 2.5 and type(mod.constant()) is float
    n = mod.halvings(1000.0)
    assert n == 10 and type(n) is int
    k, total = mod.ints(np.array([1, 2, 3]), 4)
    assert type(total) is int and total == 6
    np.testing.assert_array_equal(k, [4, 8, 12])
    assert k.dtype == np.int64
    b, s = mod.bools(np.array([True, False, True]), np.array([1.0, 2.0, 3.0]), True)
    assert b.dtype == np.bool_ and type(s) is float
    np.testing.assert_array_equal(b, [True, False, True])
    assert s == 4.0


def test_tuple_parameter_and_result(mod, pq):
    p, q = pq
    r = assert_matches_interp(mod.pair, p, q)
    assert isinstance(r, tuple) and len(r) == 2
    assert_close(r, np_pair(p, q), TOL_EXACT)
    # keyword, and a tuple holding a NumPy scalar and a list
    r2 = mod.pair(q=q, p=(list(p[0]), np.float64(p[1])))
    assert_close(r2, r, 0.0)


def test_lists_and_numpy_scalars(mod):
    np.testing.assert_array_equal(mod.add([1.0, 2.0], (3.0, 4.0)), [4.0, 6.0])
    np.testing.assert_array_equal(mod.add([1, 2], [3, 4]), [4.0, 6.0])
    assert mod.cube(np.float64(2.0)) == 8.0
    assert mod.cube(np.array(3.0)) == 27.0  # a 0-d array
    assert mod.cube(2) == 8.0  # a Python int for an f64
    assert mod.square(np.int64(7)) == 49
    assert mod.square(np.array(-3, dtype=np.int32)) == 9
    assert mod.count(np.array([1.0, 2.0]), np.int32(3)) == 15.0


def test_with_options(mod, lsq):
    f = mod.loss
    g = f.with_options(backend="interp")
    assert g.backend == "interp" and f.backend == "native"
    assert g.name == f.name and g.signature == f.signature
    assert_close(g(*lsq), f(*lsq), TOL_EXACT)
    t = f.with_options(threads=1)
    assert t.threads == 1 and t.backend == "native"
    assert_close(t(*lsq), f(*lsq), TOL_EXACT)
    back = g.with_options(backend="native")
    assert back.backend == "native"
    assert_close(back(*lsq), f(*lsq), TOL_EXACT)
    # with_options leaves the options it is not given alone
    assert f.with_options(threads=2).with_options(backend="interp").threads == 2
    with pytest.raises(ValueError, match="backend"):
        f.with_options(backend="cuda")
    with pytest.raises(ValueError, match="threads"):
        f.with_options(threads=-2)
    with pytest.raises(ValueError, match="max_while_iterations"):
        f.with_options(max_while_iterations=-1)
    with pytest.raises(TypeError):
        f.with_options("interp")  # keyword-only


def test_with_options_max_while_iterations(mod):
    f = mod.halvings
    assert f(1000.0) == 10
    assert f.with_options(max_while_iterations=10)(1000.0) == 10
    assert f.with_options(max_while_iterations=0)(1e300) == 997  # 0: no limit
    for backend in ("native", "interp"):
        g = f.with_options(backend=backend, max_while_iterations=9)
        with pytest.raises(cotangent.EvaluationError, match="within 9 iterations"):
            g(1000.0)
        assert g(512.0) == 9


def test_function_with_parameter_named_out():
    m = cotangent.loads("def h(out: f64, x: f64[n]) -> f64[n] { out * x }", backend="interp")
    np.testing.assert_array_equal(m.h(out=2.0, x=np.array([1.0, 3.0])), [2.0, 6.0])
    np.testing.assert_array_equal(m.h(3.0, np.array([1.0])), [3.0])


def test_native_matches_interp_across_functions(mod, lsq, pq, rng):
    w, X, y = lsq
    assert_matches_interp(mod.loss, w, X, y)
    assert_matches_interp(mod.predict, w, X)
    assert_matches_interp(mod.rosen, rng.standard_normal(6))
    assert_matches_interp(mod.energy, *pq)
    assert_matches_interp(mod.split, rng.standard_normal(3))
    assert_matches_interp(mod.gather, rng.standard_normal(4), np.array([3, 0, 0, 2, 1]))
    assert_matches_interp(mod.ints, np.array([5, -2]), 3)
    assert_matches_interp(mod.bools, np.array([False, True]), np.array([1.5, 2.5]), True)
    assert_matches_interp(mod.quad32, rng.standard_normal(3).astype(np.float32), 1.5)
    assert_matches_interp(mod.cube_second, 1.25)
    assert_matches_interp(mod.rosen_hvp, rng.standard_normal(4), rng.standard_normal(4))


# --------------------------------------------------------------------------------------------
# source and cost


def test_source(mod):
    text = cotangent.source(mod.cube)
    assert text.startswith("def cube(x: f64) -> f64 {")
    assert text == mod.cube.source()
    g = cotangent.source(cotangent.grad(mod.cube))
    assert "# grad(cube, x), as the compiler builds it" in g
    assert "def grad_cube_x(x: f64) -> f64 {" in g
    # The printed derivative is a program: load it and it computes the same values.
    printed = cotangent.loads(g, backend="interp")
    assert printed.grad_cube_x(1.5) == pytest.approx(3 * 1.5 ** 2, rel=1e-15)
    assert "def softmax" in cotangent.source(mod.softmax)


def test_cost_matches_the_documented_counts():
    m = cotangent.loads(FIRST, name="first.cot", opt=2)  # counts after the optimizer
    c = cotangent.cost(m.loss, *FIRST_ARGS)
    assert c == {"ops": 17, "add": 8, "mul": 9, "call": 0}
    assert m.loss.cost(*FIRST_ARGS) == c
    assert cotangent.cost(m.loss, w=FIRST_ARGS[0], X=FIRST_ARGS[1], y=FIRST_ARGS[2]) == c


def test_cost_of_dot_and_derivatives():
    m = cotangent.loads("def d(x: f64[n], y: f64[n]) -> f64 { sum i. x[i] * y[i] }", opt=2)
    x, y = np.array([1.0, 2, 3, 4]), np.array([5.0, 6, 7, 8])
    assert cotangent.cost(m.d, x, y) == {"ops": 7, "add": 3, "mul": 4, "call": 0}
    c = cotangent.cost(cotangent.grad(m.d, "x"), x, y)
    assert c["ops"] == c["add"] + c["mul"] + c["call"]
    assert c["mul"] == 0 and c["add"] == 0  # the gradient in x is y itself
    j = cotangent.cost(cotangent.jvp(m.d, "x"), x, y, np.ones(4))
    assert j["ops"] == j["add"] + j["mul"] + j["call"] and j["mul"] >= 4


# --------------------------------------------------------------------------------------------
# ravel and scipy_objective


def test_ravel_round_trip():
    a = np.arange(6.0).reshape(2, 3)
    b = 2.5
    c = np.array([7.0, 8.0])
    flat, unravel = cotangent.ravel(a, b, c)
    np.testing.assert_array_equal(flat, [0, 1, 2, 3, 4, 5, 2.5, 7, 8])
    assert flat.dtype == np.float64
    a2, b2, c2 = unravel(flat * 2)
    np.testing.assert_array_equal(a2, a * 2)
    assert a2.shape == (2, 3)
    assert type(b2) is float and b2 == 5.0
    np.testing.assert_array_equal(c2, c * 2)
    with pytest.raises(ValueError, match="9 values"):
        unravel(np.zeros(8))
    flat, unravel = cotangent.ravel()
    assert flat.shape == (0,) and unravel(flat) == ()


def test_scipy_objective_values(mod, lsq):
    w, X, y = lsq
    fun, x0, unravel = cotangent.scipy_objective(mod.loss, w, X, y, wrt="w")
    np.testing.assert_array_equal(x0, w)
    value, g = fun(x0)
    assert_close(value, np_loss(w, X, y), TOL_EXACT)
    assert_close(g, 2 * X.T @ (X @ w - y), TOL_EXACT)
    # several parameters, some by keyword
    fun2, x02, unravel2 = cotangent.scipy_objective(mod.loss, w, X, y=y, wrt=("w", "y"))
    assert x02.shape == (8,)
    value2, g2 = fun2(x02)
    assert_close(value2, value, TOL_EXACT)
    assert_close(g2, np.concatenate([2 * X.T @ (X @ w - y), -2 * (X @ w - y)]), TOL_EXACT)
    w3, y3 = unravel2(x02 + 1.0)
    np.testing.assert_array_equal(w3, w + 1.0)
    np.testing.assert_array_equal(y3, y + 1.0)


def test_scipy_objective_minimize(mod, lsq):
    scipy_optimize = pytest.importorskip("scipy.optimize")
    w0, X, y = lsq
    fun, x0, unravel = cotangent.scipy_objective(mod.loss, np.zeros(3), X, y, wrt=("w",))
    res = scipy_optimize.minimize(fun, x0, jac=True, method="L-BFGS-B", options={"gtol": 1e-12})
    (w,) = unravel(res.x)
    expected = np.linalg.lstsq(X, y, rcond=None)[0]
    assert_close(w, expected, 1e-6)
    # Rosenbrock with BFGS reaches (1, ..., 1)
    fun, x0, unravel = cotangent.scipy_objective(mod.rosen, np.full(4, -0.5), wrt="x")
    res = scipy_optimize.minimize(fun, x0, jac=True, method="BFGS", options={"gtol": 1e-10})
    assert_close(unravel(res.x)[0], np.ones(4), 1e-5)


def test_scipy_objective_scalar_parameter(mod):
    # a scalar parameter: unravel gives a float
    fun, x0, unravel = cotangent.scipy_objective(mod.cube, 2.0, wrt="x")
    assert x0.shape == (1,)
    v, g = fun(np.array([3.0]))
    assert v == 27.0
    np.testing.assert_array_equal(g, [27.0])
    assert unravel(np.array([4.0])) == (4.0,)


def test_scipy_objective_f32_parameter(mod):
    # SciPy works in float64; the objective gives an f32 parameter its dtype back.
    x = np.array([1.0, -2.0], np.float32)
    fun, x0, unravel = cotangent.scipy_objective(mod.quad32, x, 2.0, wrt="x")
    value, g = fun(x0.astype(np.float64))
    assert value == pytest.approx(2.0 * (1.0 - 8.0))
    np.testing.assert_allclose(g, 6.0 * x.astype(np.float64) ** 2)


def test_scipy_objective_errors(mod, lsq):
    w, X, y = lsq
    with pytest.raises(ValueError, match="no parameter named 'v'"):
        cotangent.scipy_objective(mod.loss, w, X, y, wrt="v")
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'"):
        cotangent.scipy_objective(mod.loss, w, X, y, z=1.0, wrt="w")
    with pytest.raises(TypeError, match="missing arguments: y"):
        cotangent.scipy_objective(mod.loss, w, X, wrt="w")
    with pytest.raises(TypeError, match="multiple values"):
        cotangent.scipy_objective(mod.loss, w, X, y, w=w, wrt="w")
    with pytest.raises(TypeError, match="takes 3 arguments"):
        cotangent.scipy_objective(mod.loss, w, X, y, y, wrt="w")


def test_gradient_against_finite_differences_via_api(mod, rng):
    x = rng.standard_normal(5)
    g = cotangent.grad(mod.rosen)(x)
    assert_close(g, fd_grad(mod.rosen, [x], 0), TOL_FD)
    # and the closed form
    assert_close(mod.rosen(x), np_rosen(x), TOL_EXACT)
