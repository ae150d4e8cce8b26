"""The native backend from Python: out= arrays, arguments used in place or copied once, shapes
that change between calls (one compile per shape combination), several threads calling one
function at once, and f32, i64 and bool parameters and results."""

import threading

import numpy as np
import pytest

import cotangent
from conftest import (TOL_EXACT, assert_close, assert_matches_interp, assert_same_kind, interp,
                      np_loss, np_predict)


def address(a):
    return a.__array_interface__["data"][0]


# --------------------------------------------------------------------------------------------
# out=


def test_out_is_the_result(mod, lsq):
    w, X, _ = lsq
    out = np.full(5, np.nan)
    r = mod.predict(w, X, out=out)
    assert r is out
    assert_close(out, np_predict(w, X), TOL_EXACT)
    # again into the same memory, with other values
    r2 = mod.predict(-w, X, out=out)
    assert r2 is out and address(r2) == address(out)
    assert_close(out, np_predict(-w, X), TOL_EXACT)


def test_out_for_a_matrix_result_of_a_derived_function(mod, lsq):
    w, X, y = lsq
    g = cotangent.grad(mod.loss, "X")
    out = np.full((5, 3), np.nan)
    r = g(w, X, y, out=out)
    assert r is out
    assert_close(out, 2 * np.outer(X @ w - y, w), TOL_EXACT)
    assert_close(out, interp(g)(w, X, y), TOL_EXACT)


def test_out_for_tuple_results(mod):
    x = np.array([1.0, -2.0, 0.5])
    o0, o2 = np.full(3, np.nan), np.full((3, 2), np.nan)
    r = mod.split(x, out=(o0, None, o2))
    assert isinstance(r, tuple) and r[0] is o0 and r[2] is o2
    assert type(r[1]) is float and r[1] == -0.5
    np.testing.assert_array_equal(o0, 2 * x)
    np.testing.assert_array_equal(o2, np.stack([x, 2 * x], axis=1))
    # a 0-d array receives a scalar part; None everywhere allocates everything
    s = np.full((), np.nan)
    r = mod.split(x, out=(None, s, None))
    assert r[1] is s and float(s) == -0.5
    assert not np.shares_memory(r[0], o0)
    r = mod.split(x, out=None)
    assert_same_kind(r, (o0, -0.5, o2))


def test_out_for_scalar_and_other_dtypes(mod):
    s = np.full((), np.nan)
    assert mod.constant(out=s) is s and s[()] == 2.5
    k = np.full(3, -1, np.int64)
    r = mod.ints(np.array([1, 2, 3]), 5, out=(k, None))
    assert r[0] is k and r[1] == 6
    np.testing.assert_array_equal(k, [5, 10, 15])
    b = np.ones(2, np.bool_)
    r = mod.bools(np.array([True, False]), np.array([1.0, 2.0]), False, out=(b, None))
    assert r[0] is b
    np.testing.assert_array_equal(b, [False, False])
    f = np.full(2, np.nan, np.float32)
    assert mod.scale32(np.array([1.5, -2.0], np.float32), 2.0, out=f) is f
    np.testing.assert_array_equal(f, np.array([3.0, -4.0], np.float32))


def test_out_of_an_empty_result(mod):
    out = np.empty(0)
    r = mod.add(np.zeros(0), np.zeros(0), out=out)
    assert r is out and r.shape == (0,)


# --------------------------------------------------------------------------------------------
# Arguments in place, or copied once


def test_contiguous_arguments_are_used_in_place(mod):
    # The overlap check compares out with the memory the compiled code reads: it sees the
    # argument's own memory, so the argument was not copied.
    base = np.arange(8.0)
    with pytest.raises(ValueError, match="overlaps the memory of parameter `x`"):
        mod.ident(base[:4], out=base[2:6])
    # A read-only view is read in place too.
    ro = base[:4]
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="overlaps the memory of parameter `y`"):
        mod.add(np.ones(4), ro, out=base[3:7])
    # Inside a tuple argument, and for an f32 argument of an f32 parameter.
    with pytest.raises(ValueError, match="overlaps the memory of parameter `p`"):
        mod.first((base[:3], 2.0), np.ones(3), out=base[:3])
    b32 = np.arange(4.0, dtype=np.float32)
    with pytest.raises(ValueError, match="overlaps the memory of parameter `x`"):
        mod.scale32(b32, 2.0, out=b32)
    np.testing.assert_array_equal(b32, [0.0, 1.0, 2.0, 3.0])
    # An f32 array given to an f64 parameter is converted: a copy, which out may overlap.
    buf = np.zeros(4)
    x32 = buf.view(np.float32)[:4]
    x32[:] = [1.0, 2.0, 3.0, 4.0]
    assert np.shares_memory(x32, buf)
    r = mod.ident(x32, out=buf)
    assert r is buf
    np.testing.assert_array_equal(buf, [1.0, 2.0, 3.0, 4.0])
    np.testing.assert_array_equal(base, np.arange(8.0))  # nothing was written


def test_noncontiguous_arguments_are_copied(mod):
    # base[::2] is copied before the call: out may then share the base's memory, and the
    # result is the strided values, not what out held.
    base = np.arange(8.0)
    x = base[::2]
    assert not x.flags.c_contiguous
    r = mod.ident(x, out=base[4:])
    np.testing.assert_array_equal(r, [0.0, 2.0, 4.0, 6.0])
    np.testing.assert_array_equal(base, [0.0, 1.0, 2.0, 3.0, 0.0, 2.0, 4.0, 6.0])


def test_layouts_and_byte_orders(mod, rng):
    A = rng.standard_normal((3, 4))
    expected = (np.arange(1, 4)[:, None] * A).sum(axis=0)
    layouts = {
        "C": A,
        "F": np.asfortranarray(A),
        "transposed view": A.T.copy().T,
        "column slice": np.hstack([A, A])[:, :4],
        "negative strides": A[::-1, ::-1].copy()[::-1, ::-1],
        "big-endian": A.astype(">f8"),
        "float32": A.astype(np.float32),
    }
    for name, a in layouts.items():
        tol = 1e-6 if name == "float32" else TOL_EXACT
        assert_close(mod.colsum(a), expected, tol, name)
    # misaligned: a float64 array at an odd address
    buf = np.zeros(8 * 12 + 1, np.uint8)
    mis = np.frombuffer(buf.data, dtype=np.float64, count=12, offset=1).reshape(3, 4)
    mis[...] = A
    assert not mis.flags.aligned
    assert_close(mod.colsum(mis), expected, TOL_EXACT)
    x = rng.standard_normal(5)
    np.testing.assert_array_equal(mod.ident(x[::-1]), x[::-1])


def test_arguments_are_not_modified_and_results_are_fresh(mod):
    x = np.array([1.0, 2.0, 3.0])
    keep = x.copy()
    r = mod.ident(x)
    np.testing.assert_array_equal(r, x)
    assert not np.shares_memory(r, x)
    assert r.flags.c_contiguous and r.flags.writeable
    r[0] = 100.0
    np.testing.assert_array_equal(x, keep)
    r2 = mod.ident(x)
    assert not np.shares_memory(r, r2)
    assert r2[0] == 1.0


# --------------------------------------------------------------------------------------------
# Shapes changing between calls


def test_one_compile_per_shape_combination(rng):
    m = cotangent.loads("def loss(w: f64[k], X: f64[m, k], y: f64[m]) -> f64 {\n"
                        "  sum r. (dot(X[r], w) - y[r]) ^ 2\n}\n", name="shapes.cot")
    f = m.loss
    assert f.compiled_count == 0
    seen = set()
    for k, n in [(3, 5), (2, 4), (3, 5), (1, 1), (2, 4), (3, 6), (0, 2), (3, 0)]:
        w, X, y = rng.standard_normal(k), rng.standard_normal((n, k)), rng.standard_normal(n)
        assert_close(f(w, X, y), np_loss(w, X, y), TOL_EXACT, f"k={k}, m={n}")
        seen.add((k, n))
        assert f.compiled_count == len(seen)
    # the same shapes in other layouts and dtypes reuse the code
    w, X, y = np.ones(3), np.ones((5, 3)), np.ones(5)
    assert f(w.astype(np.float32), np.asfortranarray(X), y) == 20.0
    assert f.compiled_count == len(seen)


def test_shapes_changing_on_derived_functions(mod, rng):
    g = cotangent.grad(mod.rosen)
    before = g.compiled_count
    for n in (2, 7, 3, 7, 2):
        x = rng.standard_normal(n)
        assert_matches_interp(g, x)
    assert g.compiled_count == before + 3


def test_empty_tensors(mod):
    assert mod.loss(np.zeros(0), np.zeros((0, 0)), np.zeros(0)) == 0.0
    assert mod.loss(np.zeros(2), np.zeros((0, 2)), np.zeros(0)) == 0.0
    np.testing.assert_array_equal(mod.colsum(np.zeros((0, 3))), np.zeros(3))
    r = mod.ident(np.zeros(0))
    assert r.shape == (0,) and r.dtype == np.float64
    g = cotangent.grad(mod.loss, "w")(np.ones(2), np.zeros((0, 2)), np.zeros(0))
    np.testing.assert_array_equal(g, [0.0, 0.0])


# --------------------------------------------------------------------------------------------
# Threads


def run_in_threads(n, work):
    """Runs work(k) in n threads released together; returns their results (or raises the
    first exception one of them raised)."""
    barrier = threading.Barrier(n)
    results, errors = [None] * n, []

    def target(k):
        try:
            barrier.wait()
            results[k] = work(k)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=target, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not any(t.is_alive() for t in threads)
    if errors:
        raise errors[0]
    return results


def test_two_threads_call_one_function_at_once(mod):
    f = cotangent.grad(mod.loss)
    rng = np.random.default_rng(7)
    inputs = [[(rng.standard_normal(3), rng.standard_normal((5, 3)), rng.standard_normal(5))
               for _ in range(150)] for _ in range(2)]
    f(*inputs[0][0])  # compiled before the threads start
    results = run_in_threads(2, lambda k: [f(*args) for args in inputs[k]])
    for k in range(2):
        for args, r in zip(inputs[k], results[k]):
            w, X, y = args
            res = X @ w - y
            assert_close(r, (2 * X.T @ res, 2 * np.outer(res, w), -2 * res), TOL_EXACT)


def test_two_threads_compile_a_new_shape_at_once():
    m = cotangent.loads("def f(x: f64[n], A: f64[n, n]) -> f64[n] { for i. sum j. A[i, j] * x[j] + x[i] }",
                        name="race.cot")
    f = m.f
    x, A = np.arange(3.0), np.arange(9.0).reshape(3, 3)
    results = run_in_threads(2, lambda k: f(x + k, A))
    for k in range(2):
        np.testing.assert_array_equal(results[k], A @ (x + k) + 3 * (x + k))  # the sum holds + x[i]
    assert f.compiled_count == 1


def test_threads_with_out_and_errors_at_once(mod):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(50)
    idx = rng.integers(0, 50, size=40)

    def work(k):
        if k == 0:  # errors, over and over
            n = 0
            for _ in range(100):
                try:
                    mod.gather(x, np.array([0, 50]))
                except cotangent.EvaluationError as e:
                    assert "index 50 is out of range" in e.message
                    n += 1
            return n
        out = np.full(40, np.nan)
        for _ in range(100):
            r = mod.gather(x, idx, out=out)
            assert r is out
            np.testing.assert_array_equal(out, x[idx])
        return out.copy()

    n_errors, last = run_in_threads(2, work)
    assert n_errors == 100
    np.testing.assert_array_equal(last, x[idx])


def test_thread_counts_agree(rng):
    m = cotangent.loads("def mv(A: f64[m, n], x: f64[n]) -> f64[m] { for i. sum j. A[i, j] * sin(x[j]) }",
                        name="threads.cot")
    A, x = rng.standard_normal((300, 40)), rng.standard_normal(40)
    expected = A @ np.sin(x)
    for threads in (0, 1, 2):
        f = m.mv.with_options(threads=threads)
        assert f.threads == threads
        assert_close(f(A, x), expected, TOL_EXACT)


# --------------------------------------------------------------------------------------------
# f32, i64 and bool


def test_f32_parameters_and_results(mod):
    x = np.array([0.1, -2.5, 3.0], np.float32)
    r = mod.scale32(x, 0.3)
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, np.float32(0.3) * x)  # the same IEEE single operations
    np.testing.assert_array_equal(r, interp(mod.scale32)(x, 0.3))
    q = mod.quad32(x, np.float32(1.5))
    assert type(q) is float
    assert q == float(np.float32(q))  # an f32 value, widened exactly
    assert_close(q, float(np.sum(1.5 * x.astype(np.float64) ** 3)), 1e-6)
    assert q == interp(mod.quad32)(x, np.float32(1.5))


def test_i64_parameters_and_results(mod):
    k = np.array([2 ** 40, -3, 7], np.int64)
    r, total = mod.ints(k, 1000)
    assert r.dtype == np.int64 and type(total) is int
    np.testing.assert_array_equal(r, k * 1000)
    assert total == 2 ** 40 + 4
    r32, total32 = mod.ints(np.array([1, 2], np.int32), -1)
    np.testing.assert_array_equal(r32, [-1, -2])
    assert r32.dtype == np.int64 and total32 == 3
    assert_matches_interp(mod.ints, k, -7)
    with pytest.raises(cotangent.EvaluationError, match="integer overflow"):
        mod.ints(np.array([2 ** 62]), 4)


def test_bool_parameters_and_results(mod):
    b = np.array([True, False, True, True])
    x = np.array([1.0, 10.0, 100.0, 1000.0])
    flags, s = mod.bools(b, x, True)
    assert flags.dtype == np.bool_
    np.testing.assert_array_equal(flags, b)
    assert s == 1101.0
    flags, s = mod.bools(b, x, np.bool_(False))
    np.testing.assert_array_equal(flags, [False] * 4)
    assert s == 1101.0
    flags, s = mod.bools([False, True, False, False], x, True)  # a list of bools
    np.testing.assert_array_equal(flags, [False, True, False, False])
    assert s == 10.0
    assert_matches_interp(mod.bools, b[::-1], x, True)


def test_native_matches_interp_on_derivatives(mod, lsq, pq, rng):
    w, X, y = lsq
    for f in (cotangent.grad(mod.loss), cotangent.value_and_grad(mod.loss, "w"),
              cotangent.jacobian(mod.predict, "w"), cotangent.hessian(mod.loss, "w")):
        args = (w, X) if f.name.startswith("jacobian") else (w, X, y)
        assert_matches_interp(f, *args)
    p, q = pq
    assert_matches_interp(cotangent.jvp(mod.pair), p, q, (rng.standard_normal(4), 0.5), rng.standard_normal(4))
    assert_matches_interp(cotangent.vjp(mod.pair), p, q, (rng.standard_normal(4), -1.5))
    assert_matches_interp(cotangent.hvp(mod.energy), p, q, (rng.standard_normal(4), 0.5), rng.standard_normal(4))
