"""The transforms grad, value_and_grad, jvp, vjp, jacobian, hessian and hvp: their conventions
(docs/language.md §8), their values against closed forms (TOL_EXACT), central finite
differences (TOL_FD) and the interpreter (TOL_EXACT), on functions with tuple parameters and
tuple results, and their compositions."""

import numpy as np
import pytest

import cotangent
from conftest import (TOL_EXACT, TOL_FD, assert_close, assert_matches_interp, fd_grad,
                      fd_jacobian, fd_jvp, interp, np_energy, np_loss, np_pair, random_like,
                      tree_map, tree_vdot)


def np_rosen_grad(x):
    g = np.zeros_like(x)
    g[:-1] += -400.0 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2.0 * (1.0 - x[:-1])
    g[1:] += 200.0 * (x[1:] - x[:-1] ** 2)
    return g


def np_rosen_hessian(x):
    n = x.size
    H = np.zeros((n, n))
    for i in range(n - 1):
        H[i, i] += 1200.0 * x[i] ** 2 - 400.0 * x[i + 1] + 2.0
        H[i + 1, i + 1] += 200.0
        H[i, i + 1] = H[i + 1, i] = -400.0 * x[i]
    return H


def loss_grads(w, X, y):
    r = X @ w - y
    return 2 * X.T @ r, 2 * np.outer(r, w), -2 * r


# --------------------------------------------------------------------------------------------
# grad and value_and_grad


def test_grad_by_name_position_and_default(mod, lsq):
    w, X, y = lsq
    gw, gX, gy = loss_grads(w, X, y)
    for g in (cotangent.grad(mod.loss, "w"), cotangent.grad(mod.loss, 0),
              cotangent.grad(mod.loss, -3), cotangent.grad(mod.loss, ["w"])):
        assert g.name == "grad(loss, w)"
        assert g.result_type == "f64[k]"
        assert g.parameters == mod.loss.parameters
        assert_close(g(w, X, y), gw, TOL_EXACT)
    both = cotangent.grad(mod.loss, "y", "w")
    assert both.name == "grad(loss, y, w)"
    r = both(w, X, y)
    assert_close(r, (gy, gw), TOL_EXACT)  # in the order named
    everything = cotangent.grad(mod.loss)
    assert everything.name == "grad(loss, w, X, y)"
    assert everything.result_type == "(f64[k], f64[m, k], f64[m])"
    assert_close(everything(w, X, y), (gw, gX, gy), TOL_EXACT)
    assert_close(cotangent.grad(mod.loss, ("X", 2))(w, X, y), (gX, gy), TOL_EXACT)


def test_grad_against_finite_differences(mod, lsq):
    w, X, y = lsq
    g = cotangent.grad(mod.loss)(w, X, y)
    for k in range(3):
        assert_close(g[k], fd_grad(mod.loss, [w, X, y], k), TOL_FD)


def test_grad_skips_integer_parameters(mod):
    g = cotangent.grad(mod.count)
    assert g.name == "grad(count, w)"
    w = np.array([1.0, -2.0, 0.5])
    assert_close(g(w, 3), 6.0 * w, TOL_EXACT)
    assert_close(g(w, 3), fd_grad(mod.count, [w, 3], 0), TOL_FD)


def test_grad_tuple_parameter(mod, pq):
    p, q = pq
    g = cotangent.grad(mod.energy, "p")
    assert g.result_type == "(f64[n], f64)"
    gp = assert_matches_interp(g, p, q)
    assert isinstance(gp, tuple) and isinstance(gp[0], np.ndarray) and type(gp[1]) is float
    # finite differences, component by component of the tuple
    v, s = p
    fd_v = fd_grad(lambda v_, q_: mod.energy((v_, s), q_), [v, q], 0)
    fd_s = fd_grad(lambda s_, q_: mod.energy((v, s_), q_), [s, q], 0)
    assert_close(gp, (fd_v, fd_s), TOL_FD)
    # every real parameter: ((dv, ds), dq)
    full = assert_matches_interp(cotangent.grad(mod.energy), p, q)
    assert_close(full[0], gp, TOL_EXACT)
    assert_close(full[1], fd_grad(mod.energy, [p, q], 1), TOL_FD)
    # the closed form: d/dq = s^2 v + s cos(q) v^2 + 2 q s
    assert_close(full[1], s * s * v + s * np.cos(q) * v * v + 2 * q * s, TOL_EXACT)


def test_value_and_grad(mod, lsq, pq):
    w, X, y = lsq
    vg = cotangent.value_and_grad(mod.loss, "w")
    assert vg.name == "value_and_grad(loss, w)"
    assert vg.result_type == "(f64, f64[k])"
    value, g = assert_matches_interp(vg, w, X, y)
    assert type(value) is float
    assert_close(value, np_loss(w, X, y), TOL_EXACT)
    assert_close(g, loss_grads(w, X, y)[0], TOL_EXACT)
    # tuple parameter: (value, ((dv, ds), dq))
    p, q = pq
    value, (gp, gq) = assert_matches_interp(cotangent.value_and_grad(mod.energy), p, q)
    assert_close(value, np_energy(p, q), TOL_EXACT)
    assert_close(gp, cotangent.grad(mod.energy, "p")(p, q), TOL_EXACT)
    assert_close(gq, cotangent.grad(mod.energy, "q")(p, q), TOL_EXACT)


# --------------------------------------------------------------------------------------------
# jvp and vjp


def test_jvp_tuple_parameters_and_results(mod, pq, rng):
    p, q = pq
    f = cotangent.jvp(mod.pair)
    assert f.name == "jvp(pair, p, q)"
    assert [name for name, _ in f.parameters] == ["p", "q", "t_p", "t_q"]
    assert f.result_type == "((f64[n], f64), (f64[n], f64))"
    tp, tq = random_like(p, rng), random_like(q, rng)
    value, tangent = assert_matches_interp(f, p, q, tp, tq)
    assert_close(value, np_pair(p, q), TOL_EXACT)
    assert_close(tangent, fd_jvp(mod.pair, [p, q], [tp, tq]), TOL_FD)
    # by keyword
    value2, tangent2 = f(t_q=tq, t_p=tp, q=q, p=p)
    assert_close((value2, tangent2), (value, tangent), 0.0)


def test_jvp_subset_of_parameters(mod, pq, rng):
    p, q = pq
    f = cotangent.jvp(mod.pair, "q")
    assert [name for name, _ in f.parameters] == ["p", "q", "t_q"]
    tq = rng.standard_normal(q.shape)
    value, tangent = assert_matches_interp(f, p, q, tq)
    assert_close(tangent, fd_jvp(mod.pair, [p, q], [None, tq]), TOL_FD)
    # the closed form in q: (v^2 tq, 0.1 (tq . v) exp(0.1 q . v))
    v = p[0]
    assert_close(tangent, (v * v * tq, 0.1 * np.dot(tq, v) * np.exp(0.1 * np.dot(q, v))), TOL_EXACT)


def test_jvp_of_scalar_function(mod, lsq, rng):
    w, X, y = lsq
    t = rng.standard_normal(3)
    value, tangent = cotangent.jvp(mod.loss, "w")(w, X, y, t)
    assert_close(value, np_loss(w, X, y), TOL_EXACT)
    assert_close(tangent, float(loss_grads(w, X, y)[0] @ t), TOL_EXACT)


def test_vjp_tuple_parameters_and_results(mod, pq, rng):
    p, q = pq
    f = cotangent.vjp(mod.pair)
    assert f.name == "vjp(pair, p, q)"
    assert [name for name, _ in f.parameters] == ["p", "q", "ct"]
    assert f.parameters[2][1] == "(f64[n], f64)"
    assert f.result_type == "((f64[n], f64), f64[n])"
    ct = random_like(np_pair(p, q), rng)
    cp, cq = assert_matches_interp(f, p, q, ct)
    # <ct, J t> == <J^T ct, t> for random tangents, J t by jvp and by finite differences
    tp, tq = random_like(p, rng), random_like(q, rng)
    _, jt = cotangent.jvp(mod.pair)(p, q, tp, tq)
    lhs = tree_vdot(ct, jt)
    rhs = tree_vdot((cp, cq), (tp, tq))
    assert_close(lhs, rhs, TOL_EXACT)
    assert_close(tree_vdot(ct, fd_jvp(mod.pair, [p, q], [tp, tq])), rhs, TOL_FD)
    # cotangents as keywords
    cp2, cq2 = f(p=p, q=q, ct=ct)
    assert_close((cp2, cq2), (cp, cq), 0.0)


def test_vjp_subset_and_basis_cotangents(mod, pq):
    p, q = pq
    f = cotangent.vjp(mod.pair, "p")
    assert f.result_type == "(f64[n], f64)"
    v, s = p
    n = v.size
    # the cotangent (0, 1) picks the gradient of the scalar part: (2 s v + 0.1 q e, |v|^2)
    e = np.exp(0.1 * np.dot(q, v))
    dv, ds = assert_matches_interp(f, p, q, (np.zeros(n), 1.0))
    assert_close((dv, ds), (2 * s * v + 0.1 * q * e, float(v @ v)), TOL_EXACT)
    # the cotangent (e_0, 0) picks row 0 of the Jacobian of the tensor part
    c0 = np.zeros(n)
    c0[0] = 1.0
    dv, ds = f(p, q, (c0, 0.0))
    expected = np.zeros(n)
    expected[0] = np.cos(v[0]) * s + 2 * q[0] * v[0]
    assert_close((dv, ds), (expected, float(np.sin(v[0]))), TOL_EXACT)


def test_vjp_of_scalar_function(mod, lsq):
    w, X, y = lsq
    gw = cotangent.vjp(mod.loss, "w")(w, X, y, 2.0)
    assert_close(gw, 2.0 * loss_grads(w, X, y)[0], TOL_EXACT)


# --------------------------------------------------------------------------------------------
# jacobian and hessian


def test_jacobian(mod, lsq):
    w, X, _ = lsq
    J = cotangent.jacobian(mod.predict, "w")
    assert J.name == "jacobian(predict, w)"
    assert J.result_type == "f64[m, k]"
    Jw = assert_matches_interp(J, w, X)
    assert Jw.shape == (5, 3)
    assert_close(Jw, (1 - np.tanh(X @ w) ** 2)[:, None] * X, TOL_EXACT)
    assert_close(Jw, fd_jacobian(mod.predict, [w, X], 0), TOL_FD)
    # with respect to a matrix: shape result + parameter
    JX = assert_matches_interp(cotangent.jacobian(mod.predict, "X"), w, X)
    assert JX.shape == (5, 5, 3)
    assert_close(JX, fd_jacobian(mod.predict, [w, X], 1), TOL_FD)


def test_jacobian_of_function_with_tuple_parameter(mod, pq):
    p, q = pq
    J = assert_matches_interp(cotangent.jacobian(mod.first, "q"), p, q)
    assert J.shape == (4, 4)
    assert_close(J, np.diag(p[0] ** 2), TOL_EXACT)
    assert_close(J, fd_jacobian(mod.first, [p, q], 1), TOL_FD)
    # a scalar result counts as a tensor: the Jacobian is the gradient
    Je = cotangent.jacobian(mod.energy, 1)(p, q)
    assert_close(Je, cotangent.grad(mod.energy, "q")(p, q), TOL_EXACT)


def test_jacobian_integer_valued_positions(mod, rng):
    A = rng.standard_normal((3, 2))
    J = assert_matches_interp(cotangent.jacobian(mod.colsum, "A"), A)
    assert J.shape == (2, 3, 2)
    expected = np.zeros((2, 3, 2))
    for j in range(2):
        for i in range(3):
            expected[j, i, j] = i + 1
    assert_close(J, expected, 0.0)


def test_hessian(mod, rng):
    x = rng.standard_normal(5)
    H = cotangent.hessian(mod.rosen, "x")
    assert H.name == "hessian(rosen, x)"
    assert H.result_type == "f64[n, n]"
    Hx = assert_matches_interp(H, x)
    assert_close(Hx, np_rosen_hessian(x), TOL_EXACT)
    grad = cotangent.grad(mod.rosen)
    assert_close(grad(x), np_rosen_grad(x), TOL_EXACT)
    assert_close(Hx, fd_jacobian(grad, [x], 0), TOL_FD)
    assert_close(Hx, Hx.T, 0.0)


def test_hessian_of_function_with_tuple_parameter(mod, pq):
    p, q = pq
    H = assert_matches_interp(cotangent.hessian(mod.energy, "q"), p, q)
    v, s = p
    # d2/dq2 = diag(-s sin(q) v^2 + 2 s)
    assert_close(H, np.diag(-s * np.sin(q) * v * v + 2 * s), TOL_EXACT)
    assert_close(H, fd_jacobian(cotangent.grad(mod.energy, "q"), [p, q], 1), TOL_FD)


# --------------------------------------------------------------------------------------------
# Composition


def test_hvp(mod, rng):
    x, v = rng.standard_normal(5), rng.standard_normal(5)
    f = cotangent.hvp(mod.rosen, "x")
    assert f.name == "jvp(grad(rosen, x), x)"
    assert [name for name, _ in f.parameters] == ["x", "t_x"]
    g, Hv = assert_matches_interp(f, x, v)
    H = cotangent.hessian(mod.rosen, "x")(x)
    assert_close(g, np_rosen_grad(x), TOL_EXACT)
    assert_close(Hv, H @ v, TOL_EXACT)
    assert_close(Hv, np_rosen_hessian(x) @ v, TOL_EXACT)
    # jvp(grad(f)) spelled out, and the same composition written in the language
    assert_close(cotangent.jvp(cotangent.grad(mod.rosen))(x, v), (g, Hv), TOL_EXACT)
    assert_close(mod.rosen_hvp(x, v), (g, Hv), TOL_EXACT)
    # hvp without names: every real parameter
    assert_close(cotangent.hvp(mod.rosen)(x, v), (g, Hv), TOL_EXACT)


def test_hvp_tuple_parameter(mod, pq, rng):
    p, q = pq
    f = cotangent.hvp(mod.energy, "p")
    tp = random_like(p, rng)
    g, Hv = assert_matches_interp(f, p, q, tp)
    assert_close(g, cotangent.grad(mod.energy, "p")(p, q), TOL_EXACT)
    grad_p = cotangent.grad(mod.energy, "p")
    assert_close(Hv, fd_jvp(grad_p, [p, q], [tp, None]), TOL_FD)
    # symmetry of the Hessian: <t1, H t2> == <t2, H t1>
    t2 = random_like(p, rng)
    _, Ht2 = f(p, q, t2)
    assert_close(tree_vdot(tp, Ht2), tree_vdot(t2, Hv), TOL_EXACT)


def test_grad_of_grad(mod):
    d2 = cotangent.grad(cotangent.grad(mod.cube))
    assert d2.name == "grad(grad(cube, x), x)"
    for x in (-1.5, 0.0, 2.0):
        assert_close(d2(x), 6.0 * x, TOL_EXACT)
        assert_close(d2(x), mod.cube_second(x), TOL_EXACT)
        assert_close(interp(d2)(x), 6.0 * x, TOL_EXACT)
    d3 = cotangent.grad(d2, "x")
    assert_close(d3(0.7), 6.0, TOL_EXACT)
    assert_close(cotangent.grad(mod.cube)(2.0), fd_grad(mod.cube, [2.0], 0), TOL_FD)


def test_jvp_of_grad_equals_hessian_times_vector(mod, lsq, rng):
    w, X, y = lsq
    t = rng.standard_normal(3)
    g, Ht = cotangent.jvp(cotangent.grad(mod.loss, "w"), "w")(w, X, y, t)
    H = cotangent.hessian(mod.loss, "w")(w, X, y)
    assert_close(H, 2 * X.T @ X, TOL_EXACT)
    assert_close(Ht, H @ t, TOL_EXACT)
    assert_close(g, loss_grads(w, X, y)[0], TOL_EXACT)
    # the Hessian is also the Jacobian of the gradient, and the vjp of the gradient is H^T c
    assert_close(cotangent.jacobian(cotangent.grad(mod.loss, "w"), "w")(w, X, y), H, TOL_EXACT)
    assert_close(cotangent.vjp(cotangent.grad(mod.loss, "w"), "w")(w, X, y, t), H.T @ t, TOL_EXACT)


def test_transform_of_prelude_function(mod, rng):
    x = rng.standard_normal(4)
    s = np.exp(x) / np.sum(np.exp(x))
    assert_close(cotangent.grad(mod.logsumexp)(x), s, TOL_EXACT)
    H = cotangent.hessian(mod.logsumexp, "x")(x)
    assert_close(H, np.diag(s) - np.outer(s, s), TOL_EXACT)


def test_transforms_on_f32(mod):
    x = np.array([1.0, -2.0, 0.5], np.float32)
    g = cotangent.grad(mod.quad32)
    assert g.result_type == "(f32[n], f32)"
    gx, ga = assert_matches_interp(g, x, 2.0)
    assert gx.dtype == np.float32
    assert_close(gx, 6.0 * x.astype(np.float64) ** 2, 1e-7)
    assert_close(ga, float(np.sum(x.astype(np.float64) ** 3)), 1e-7)
    value, tangent = cotangent.jvp(mod.scale32, "x")(x, 3.0, np.ones(3, np.float32))
    assert value.dtype == np.float32 and tangent.dtype == np.float32
    np.testing.assert_array_equal(tangent, np.full(3, 3.0, np.float32))
    H = cotangent.hessian(mod.quad32, "x")(x, 2.0)
    assert H.dtype == np.float32
    assert_close(H, np.diag(12.0 * x.astype(np.float64)), 1e-7)


def test_derived_functions_with_options(mod, lsq):
    w, X, y = lsq
    g = cotangent.grad(mod.loss, "w")
    gi = g.with_options(backend="interp")
    assert gi.backend == "interp" and gi.name == g.name
    assert_close(gi(w, X, y), g(w, X, y), TOL_EXACT)
    # a transform of an interpreter function runs on the interpreter
    assert cotangent.grad(interp(mod.loss), "w").backend == "interp"


def test_transforms_return_new_functions_and_compose(mod):
    f = mod.rosen
    assert isinstance(cotangent.grad(f), cotangent.Function)
    for make in (cotangent.grad, cotangent.value_and_grad, cotangent.jvp, cotangent.vjp,
                 cotangent.hvp):
        d = make(f)
        assert isinstance(d, cotangent.Function)
        assert d.name != f.name
    # the derived function's source is a program that computes the same values
    text = cotangent.source(cotangent.hessian(f, "x"))
    assert "# hessian(rosen, x), as the compiler builds it" in text
