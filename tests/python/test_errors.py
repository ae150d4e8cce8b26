"""Every error path: compile errors (with their position, source line, caret and help), errors
at run time on both backends, wrong Python arguments (TypeError and ValueError naming the
parameter), derivative operators applied where they cannot be, and bad out= arrays."""

import numpy as np
import pytest

import cotangent
from conftest import SOURCE, TOL_EXACT, assert_close


def line_of(text, source=SOURCE):
    """The 1-based line of SOURCE that starts with `text`."""
    for k, line in enumerate(source.splitlines(), start=1):
        if line.startswith(text):
            return k
    raise AssertionError(f"no line starts with {text!r}")


BACKENDS = ["native", "interp"]


# --------------------------------------------------------------------------------------------
# Compile errors


SYNTAX = """\
def square(x: f64) -> f64 {
  x ** 2
}

def g(x: f64) -> f64 {
  x + 1
  2
}
"""


def test_syntax_error_position_caret_and_help():
    with pytest.raises(cotangent.CompileError) as info:
        cotangent.loads(SYNTAX, name="syntax.cot")
    e = info.value
    assert isinstance(e, cotangent.Error)
    assert (e.file, e.line, e.column) == ("syntax.cot", 2, 6)
    assert e.message == "expected an expression, found '*'"
    assert e.help == "powers are written `x ^ y`"
    text = str(e).splitlines()
    assert text[0] == "syntax.cot:2:6: error: expected an expression, found '*'"
    assert text[1] == "    x ** 2"
    assert text[2] == "       ^"  # under the second '*': column 6, after the two-space indent
    assert text[3] == "  help: powers are written `x ^ y`"
    # every definition's first syntax error is reported
    assert len(e.errors) == 2
    second = e.errors[1]
    assert (second.file, second.line, second.column) == ("syntax.cot", 7, 3)
    assert second.message.startswith("expected '}' to close the '{' opened at 5:22")
    assert "syntax.cot:7:3: error:" in str(e)
    assert second.rendered.startswith("syntax.cot:7:3: error:")
    assert "syntax.cot:7:3" in repr(second)


def test_type_error_with_suggestion(tmp_path):
    path = tmp_path / "errors.cot"
    path.write_text("def average(x: f64[n]) -> f64 {\n  let total = sum i. x[i]\n"
                    "  totl / f64(n)\n}\n")
    with pytest.raises(cotangent.CompileError) as info:
        cotangent.load(str(path))
    e = info.value
    assert (e.line, e.column) == (3, 3)
    assert e.file == str(path)
    assert e.message == "unknown name `totl`"
    assert e.help == "did you mean `total`?"
    assert "    totl / f64(n)\n    ^~~~\n" in str(e)


def test_derivative_error_in_source_fails_the_load():
    src = ("def predict(w: f64[k], X: f64[m, k]) -> f64[m] { for r. sum j. X[r, j] * w[j] }\n"
           "def e2(w: f64[k], X: f64[m, k]) -> f64[k] { grad(predict, w)(w, X) }\n")
    with pytest.raises(cotangent.CompileError) as info:
        cotangent.loads(src, name="d.cot")
    assert info.value.line == 2
    assert "grad needs a function that returns a real scalar; predict returns f64[m]" in info.value.message


def test_derivative_that_cannot_be_built():
    # trigamma has no derivative rule: grad(t) cannot be built. The module loads, its other
    # functions run, and what needs grad(t) raises CompileError when it is looked up.
    m = cotangent.loads("def t(x: f64) -> f64 { trigamma(x) * x }\n"
                        "def uses_grad(x: f64) -> f64 { grad(t)(x) + 1.0 }\n"
                        "def fine(x: f64) -> f64 { x * x + 1.0 }\n", name="broken.cot",
                        backend="interp")
    assert m.functions() == ["t", "uses_grad", "fine"]
    assert m.fine(3.0) == 10.0
    assert m.t(1.0) == pytest.approx(np.pi ** 2 / 6, rel=1e-12)  # trigamma(1) = pi^2 / 6
    for build in (lambda: m.uses_grad, lambda: m["uses_grad"], lambda: cotangent.grad(m.t)):
        with pytest.raises(cotangent.CompileError) as info:
            build()
        assert "cannot differentiate grad(t, x): `trigamma` has no derivative rule" in info.value.message
        assert info.value.file == "broken.cot"
    assert cotangent.grad(m.fine)(3.0) == 6.0


def test_missing_file():
    with pytest.raises(cotangent.Error) as info:
        cotangent.load("/nonexistent/dir/model.cot")
    assert "cannot read /nonexistent/dir/model.cot" in str(info.value)
    assert info.value.help


# --------------------------------------------------------------------------------------------
# Errors at run time, on both backends


@pytest.mark.parametrize("backend", BACKENDS)
def test_index_out_of_range(mod, backend):
    f = mod.gather.with_options(backend=backend)
    with pytest.raises(cotangent.EvaluationError) as info:
        f(np.array([1.0, 2.0, 3.0]), np.array([0, 5]))
    e = info.value
    assert e.message == "index 5 is out of range for dimension 0 of x, which has shape [3]"
    line = line_of("def gather")
    col = SOURCE.splitlines()[line - 1].index("x[idx[o]]") + 1
    assert (e.file, e.line, e.column) == ("shared.cot", line, col)
    lines = str(e).splitlines()
    assert lines[0] == f"shared.cot:{line}:{col}: error: {e.message}"
    assert lines[2].strip() == "^~~~~~~~~"
    # a negative index too
    with pytest.raises(cotangent.EvaluationError, match="index -1 is out of range"):
        f(np.array([1.0, 2.0, 3.0]), np.array([-1]))
    # and the function still works afterwards
    np.testing.assert_array_equal(f(np.array([1.0, 2.0, 3.0]), np.array([2, 0])), [3.0, 1.0])


@pytest.mark.parametrize("backend", BACKENDS)
def test_mismatched_sizes(mod, backend):
    f = mod.add.with_options(backend=backend)
    with pytest.raises(cotangent.EvaluationError) as info:
        f(np.ones(3), np.ones(2))
    e = info.value
    assert e.message == ("size variable n is 3 from parameter x (f64[3]) but 2 from parameter y "
                         "(f64[2])")
    assert e.line == line_of("def add")
    assert "note: n is first bound by x" in str(e)
    # in a derived function: loss's y must have m = 2 rows of X
    g = cotangent.grad(mod.loss, "w").with_options(backend=backend)
    with pytest.raises(cotangent.EvaluationError, match="size variable m is 2 from parameter X"):
        g(np.ones(3), np.ones((2, 3)), np.ones(4))


def test_native_and_interp_report_the_same_error(mod):
    texts = []
    for backend in BACKENDS:
        with pytest.raises(cotangent.EvaluationError) as info:
            mod.gather.with_options(backend=backend)(np.zeros(2), np.array([1, 2]))
        texts.append(str(info.value))
    assert texts[0] == texts[1]


@pytest.mark.parametrize("backend", BACKENDS)
def test_integer_overflow(mod, backend):
    f = mod.square.with_options(backend=backend)
    assert f(3037000499) == 3037000499 ** 2
    with pytest.raises(cotangent.EvaluationError,
                       match=r"integer overflow in `\*`: 3037000500 \* 3037000500"):
        f(3037000500)


@pytest.mark.parametrize("backend", BACKENDS)
def test_while_loop_over_its_limit(mod, backend):
    f = mod.halvings.with_options(backend=backend, max_while_iterations=5)
    with pytest.raises(cotangent.EvaluationError) as info:
        f(1000.0)
    e = info.value
    assert e.message == "the while loop did not finish within 5 iterations"
    assert e.line == line_of("  let (_, c) = loop")
    assert "max_while_iterations" in e.help
    assert f(32.0) == 5  # exactly at the limit


def test_while_loop_limit_from_load():
    m = cotangent.loads(SOURCE, name="limit.cot", max_while_iterations=3)
    with pytest.raises(cotangent.EvaluationError, match="within 3 iterations"):
        m.halvings(100.0)
    assert m.halvings.with_options(max_while_iterations=0)(100.0) == 7


# --------------------------------------------------------------------------------------------
# Wrong Python arguments


def test_missing_argument(mod):
    with pytest.raises(TypeError, match=r"loss\(\) missing 2 required arguments: 'X', 'y'"):
        mod.loss(np.ones(2))
    with pytest.raises(TypeError, match="missing 1 required argument: 'w'"):
        mod.loss(X=np.ones((2, 2)), y=np.ones(2))


def test_unexpected_keyword_and_duplicates(mod):
    with pytest.raises(TypeError, match="unexpected keyword argument 'z'") as info:
        mod.add(np.ones(2), np.ones(2), z=1.0)
    assert "add(x: f64[n], y: f64[n]) -> f64[n]" in str(info.value)  # the signature helps
    with pytest.raises(TypeError, match="multiple values for argument 'x'"):
        mod.add(np.ones(2), np.ones(2), x=np.ones(2))
    with pytest.raises(TypeError, match=r"add\(\) takes 2 arguments but 3 were given"):
        mod.add(np.ones(2), np.ones(2), np.ones(2))
    with pytest.raises(TypeError, match="takes 0 arguments but 1 were given"):
        mod.constant(1.0)


def test_wrong_dtype(mod):
    x64 = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match=r"parameter `x` of `scale32` is f32\[n\]; given an array of "
                                        r"dtype float64") as info:
        mod.scale32(x64, 2.0)
    assert "astype(np.float32)" in str(info.value)
    with pytest.raises(TypeError, match=r"parameter `idx` of `gather` is i64\[k\].*float64"):
        mod.gather(x64, np.array([0.0, 1.0]))
    with pytest.raises(TypeError, match=r"parameter `b` of `bools` is bool\[n\].*int64"):
        mod.bools(np.array([1, 0]), x64, True)
    with pytest.raises(TypeError, match=r"parameter `x` of `add` is f64\[n\].*complex128"):
        mod.add(np.array([1j, 2j]), x64)
    with pytest.raises(TypeError, match="parameter `k` of `square` is i64; given an array of dtype float32"):
        mod.square(np.float32(2.0))
    with pytest.raises(TypeError, match="parameter `a` of `scale32` is f32; given an array of dtype float64"):
        mod.scale32(np.ones(2, np.float32), np.array(2.0))  # a 0-d float64 array
    with pytest.raises(TypeError, match="parameter `k` of `square` is i64; given an array of dtype uint64"):
        mod.square(np.uint64(3))


def test_safe_dtype_conversions_are_accepted(mod):
    # float32 -> f64, int -> f64, int32 -> i64: NumPy's safe casts, copied once
    x32 = np.array([1.5, 2.5], np.float32)
    r = mod.add(x32, np.array([1, 2], np.int32))
    assert r.dtype == np.float64
    np.testing.assert_array_equal(r, [2.5, 4.5])
    np.testing.assert_array_equal(mod.gather(np.array([5.0, 6.0]), np.array([1, 0], np.int32)),
                                  [6.0, 5.0])
    np.testing.assert_array_equal(mod.scale32(np.array([1, 2], np.int8), 2.0),
                                  np.array([2, 4], np.float32))
    total = mod.ints(np.array([True, False, True]), 3)  # bool -> i64
    np.testing.assert_array_equal(total[0], [3, 0, 3])
    assert total[1] == 2


def test_wrong_python_type(mod):
    with pytest.raises(TypeError, match=r"parameter `x` of `add` is f64\[n\]: expected a NumPy array; given str"):
        mod.add("abc", np.ones(2))
    with pytest.raises(TypeError, match="given dict"):
        mod.add({"a": 1}, np.ones(2))
    with pytest.raises(TypeError, match=r"parameter `x` of `add` is f64\[n\]: expected a NumPy array; given float"):
        mod.add(1.0, np.ones(2))
    with pytest.raises(TypeError, match="parameter `x` of `cube` is f64; given str"):
        mod.cube("1.0")
    with pytest.raises(TypeError, match="parameter `x` of `cube` is f64; given NoneType"):
        mod.cube(None)
    with pytest.raises(TypeError, match="parameter `x` of `cube` is f64; given a bool"):
        mod.cube(True)
    with pytest.raises(TypeError, match="parameter `k` of `square` is i64; given a float"):
        mod.square(2.0)
    with pytest.raises(TypeError, match="parameter `k` of `square` is i64; given a bool"):
        mod.square(False)
    with pytest.raises(TypeError, match="parameter `flag` of `bools` is bool; given an int"):
        mod.bools(np.array([True]), np.ones(1), 1)
    with pytest.raises(TypeError, match="parameter `flag` of `bools` is bool; given a float"):
        mod.bools(np.array([True]), np.ones(1), 1.0)


def test_tuple_parameter_errors(mod):
    q = np.ones(2)
    with pytest.raises(TypeError, match=r"parameter `p` of `pair` is a tuple \(f64\[n\], f64\); given list"):
        mod.pair([np.ones(2), 1.0], q)
    with pytest.raises(TypeError, match="given ndarray"):
        mod.pair(np.ones(2), q)
    with pytest.raises(ValueError, match="of 2 elements; given 3"):
        mod.pair((np.ones(2), 1.0, 2.0), q)
    with pytest.raises(TypeError, match="parameter `p` of `pair`, element 1, is f64; given str"):
        mod.pair((np.ones(2), "s"), q)
    with pytest.raises(cotangent.EvaluationError, match="size variable n"):
        mod.pair((np.ones(3), 1.0), q)


def test_wrong_shape(mod):
    with pytest.raises(ValueError, match=r"parameter `x` of `add` is f64\[n\] \(rank 1\); given an array "
                                         r"of shape \(3, 1\)"):
        mod.add(np.ones((3, 1)), np.ones(3))
    with pytest.raises(ValueError, match=r"parameter `A` of `colsum` is f64\[m, n\] \(rank 2\); given an "
                                         r"array of shape \(3,\)"):
        mod.colsum(np.ones(3))
    with pytest.raises(ValueError, match=r"parameter `x` of `cube` is f64 \(a scalar\); given an array of "
                                         r"shape \(1,\)"):
        mod.cube(np.array([1.0]))
    with pytest.raises(ValueError, match="parameter `x` of `add` is f64\\[n\\]; given a list that is not an array"):
        mod.add([1.0, [2.0, 3.0]], np.ones(2))


def test_integers_out_of_range(mod):
    with pytest.raises(ValueError, match="parameter `k` of `square` is i64; given an int out of its range"):
        mod.square(2 ** 63)
    assert mod.square(-(2 ** 31)) == 2 ** 62


def test_int_too_large_for_f64_names_the_parameter(mod):
    with pytest.raises((ValueError, OverflowError), match="parameter `x` of `cube`"):
        mod.cube(10 ** 400)


# --------------------------------------------------------------------------------------------
# Derivative operators applied where they cannot be


def test_derivative_of_integer_parameter(mod):
    for wrt in ("n", 1):
        with pytest.raises(cotangent.CompileError) as info:
            cotangent.grad(mod.count, wrt)
        e = info.value
        assert e.message == "parameter `n` of `count` has type i64 and cannot be differentiated"
        assert e.help == "only parameters of real type (f64, f32, tensors and tuples of them) are active"
        line = line_of("def count")
        assert (e.line, e.column) == (line, SOURCE.splitlines()[line - 1].index("n: i64") + 1)
    with pytest.raises(cotangent.CompileError, match=r"`idx` of `gather` has type i64\[k\] and cannot"):
        cotangent.jvp(mod.gather, "idx")


def test_grad_of_non_scalar_function(mod):
    for op in (cotangent.grad, cotangent.value_and_grad, cotangent.hessian):
        with pytest.raises(cotangent.CompileError) as info:
            op(mod.predict, "w")
        assert info.value.message == (f"{op.__name__} needs a function that returns a real scalar; "
                                      "predict returns f64[m]")
        assert info.value.line == line_of("def predict")
        assert "jvp and vjp accept any real result" in info.value.help
    with pytest.raises(cotangent.CompileError, match="returns a real scalar; pair returns"):
        cotangent.grad(mod.pair)
    with pytest.raises(cotangent.CompileError, match="returns a real scalar; gather returns"):
        cotangent.hvp(mod.gather, "x")


def test_jacobian_and_hessian_need_one_tensor_parameter(mod):
    with pytest.raises(cotangent.CompileError, match="exactly one parameter"):
        cotangent.jacobian(mod.predict)
    with pytest.raises(cotangent.CompileError, match="exactly one parameter"):
        cotangent.jacobian(mod.predict, "w", "X")
    with pytest.raises(cotangent.CompileError, match="real tensor"):
        cotangent.jacobian(mod.pair, "q")  # a tuple result
    with pytest.raises(cotangent.CompileError, match="jacobian needs a tensor parameter, not a tuple"):
        cotangent.jacobian(mod.first, "p")
    with pytest.raises(cotangent.CompileError, match="needs a tensor parameter, not a tuple"):
        cotangent.hessian(mod.energy, "p")
    # a scalar is a tensor of rank 0
    assert cotangent.jacobian(mod.cube, "x")(1.5) == pytest.approx(6.75, rel=1e-15)
    assert cotangent.hessian(mod.cube, "x")(1.5) == pytest.approx(9.0, rel=1e-15)


def test_bad_active_parameters(mod):
    with pytest.raises(cotangent.CompileError) as info:
        cotangent.grad(mod.loss, "zz")
    assert info.value.message == "`loss` has no parameter named `zz`"
    assert info.value.help == "its parameters are w: f64[k], X: f64[m, k], y: f64[m]"
    with pytest.raises(cotangent.CompileError, match="parameter `w` is named twice"):
        cotangent.grad(mod.loss, "w", 0)
    with pytest.raises(ValueError, match="loss has 3 parameters; position 3 is out of range"):
        cotangent.grad(mod.loss, 3)
    with pytest.raises(ValueError, match="position -4 is out of range"):
        cotangent.grad(mod.loss, -4)
    with pytest.raises(TypeError, match="active parameters are names or positions; given 1.5"):
        cotangent.grad(mod.loss, 1.5)
    with pytest.raises(TypeError, match="given True"):
        cotangent.grad(mod.loss, True)
    with pytest.raises(TypeError, match="grad takes a cotangent.Function"):
        cotangent.grad(lambda x: x)
    with pytest.raises(TypeError, match="jvp takes a cotangent.Function"):
        cotangent.jvp("loss")


def test_derived_parameter_names_do_not_clash():
    # jvp names its tangents t_NAME and vjp its cotangent ct; a function may already use them.
    m = cotangent.loads("def f(x: f64, ct: f64) -> f64 { x * ct }\n"
                        "def g(x: f64, t_x: f64) -> f64 { x * t_x }\n", backend="interp")
    for d in (cotangent.vjp(m.f, "x"), cotangent.jvp(m.g, "x")):
        names = [name for name, _ in d.parameters]
        assert len(set(names)) == len(names), d.signature
    # so that every argument can be passed by keyword
    jvp_g = cotangent.jvp(m.g, "x")
    names = [name for name, _ in jvp_g.parameters]
    value, tangent = jvp_g(**dict(zip(names, (2.0, 3.0, 5.0))))
    assert (value, tangent) == (6.0, 15.0)


# --------------------------------------------------------------------------------------------
# out=


def test_out_must_fit(mod):
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"out must be f64\[3\]; given an array of dtype float64 and shape \(4,\)"):
        mod.add(x, x, out=np.empty(4))
    with pytest.raises(ValueError, match=r"out must be f64\[3\]; given an array of dtype float32"):
        mod.add(x, x, out=np.empty(3, np.float32))
    with pytest.raises(ValueError, match=r"out must be f64\[3\]; given .* shape \(1, 3\)"):
        mod.add(x, x, out=np.empty((1, 3)))
    with pytest.raises(ValueError, match="C-contiguous"):
        mod.add(x, x, out=np.empty(6)[::2])
    with pytest.raises(ValueError, match="C-contiguous"):
        mod.colsum(np.ones((2, 2)), out=np.empty((2, 4))[:, ::2][0])
    ro = np.zeros(3)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out is read-only"):
        mod.add(x, x, out=ro)
    np.testing.assert_array_equal(ro, 0.0)
    with pytest.raises(TypeError, match="out must be a NumPy array; given list"):
        mod.add(x, x, out=[0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"out must be f64; given"):
        mod.constant(out=np.empty((), np.float32))


def test_out_for_tuple_results(mod):
    x = np.array([1.0, 2.0])
    with pytest.raises(TypeError, match="out must be a tuple of 3"):
        mod.split(x, out=np.empty(2))
    with pytest.raises(ValueError, match="out must be a tuple of 3; given 2"):
        mod.split(x, out=(np.empty(2), None))
    with pytest.raises(ValueError, match=r"out\[2\] must be f64\[2, 2\]"):
        mod.split(x, out=(None, None, np.empty((2, 3))))


def test_out_overlapping_an_argument(mod):
    base = np.arange(4.0)
    with pytest.raises(ValueError, match="out overlaps the memory of parameter `x`"):
        mod.add(base[:3], np.ones(3), out=base[1:])
    x = np.arange(3.0)
    with pytest.raises(ValueError, match="overlaps the memory of parameter `y`"):
        mod.add(np.ones(3), x, out=x)
    with pytest.raises(ValueError, match="overlaps the memory of parameter `p` of `first`"):
        mod.first((x, 2.0), np.ones(3), out=x)
    np.testing.assert_array_equal(x, [0.0, 1.0, 2.0])  # nothing was written


def test_out_parts_overlapping_each_other(mod):
    # Two parts of the result in one array: one of them would be overwritten by the other.
    a = np.full(3, np.nan)
    x = np.array([1.0, 2.0, 3.0])
    with pytest.raises(ValueError):
        mod.rosen_hvp(x, x + 1.0, out=(a, a))


def test_out_needs_the_native_backend(mod):
    f = mod.add.with_options(backend="interp")
    with pytest.raises(TypeError, match="out= needs the native backend"):
        f(np.ones(2), np.ones(2), out=np.empty(2))
    with pytest.raises(TypeError, match=r"cost\(\) takes no out="):
        cotangent.cost(mod.add, np.ones(2), np.ones(2), out=np.empty(2))


def test_errors_leave_the_function_usable(mod, lsq):
    w, X, y = lsq
    for bad in ((w, X, y[:2]), (w.astype(np.float32)[None], X, y), ("w", X, y)):
        with pytest.raises((TypeError, ValueError, cotangent.Error)):
            mod.loss(*bad)
    assert_close(mod.loss(w, X, y), float(np.sum((X @ w - y) ** 2)), TOL_EXACT)
