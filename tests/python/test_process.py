"""The package in the processes and loops Python users build around it: a fork after parallel
code ran (multiprocessing's default on Linux), transforms applied inside a loop, and inputs
that are not plain aligned NumPy arrays."""

import multiprocessing

import numpy as np
import pytest

import cotangent

SOURCE = """
def heavy(x: f64[n]) -> f64[n] { for i. sum j. sin(x[i] * x[j]) }
def sq(x: f64[n]) -> f64 { sum i. x[i] * x[i] }
def big(n: f64[m]) -> f64[m, m, m, m] { for i, j: m, k: m, l: m. n[i] }
"""


@pytest.fixture(scope="module")
def mod():
    return cotangent.loads(SOURCE, name="process.cot")


def heavy_reference(x):
    return np.sin(np.outer(x, x)).sum(axis=1)


def _child(mod, x, queue):
    queue.put(mod.heavy(x))


def test_a_forked_child_runs_native_code_after_the_parent_ran_parallel_loops(mod):
    # 2000 x 2000 terms: well over the parallel threshold, so the parent's call starts
    # OpenMP's threads (threads=0: all cores).
    x = np.linspace(0.0, 1.0, 2000)
    np.testing.assert_allclose(mod.heavy(x), heavy_reference(x), rtol=1e-12)
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child, args=(mod, x, queue))
    child.start()
    child.join(60)
    alive = child.is_alive()
    if alive:
        child.kill()
    assert not alive, "the forked child hung in native code"
    assert child.exitcode == 0
    np.testing.assert_allclose(queue.get(timeout=5), heavy_reference(x), rtol=1e-12)


def test_a_transform_applied_in_a_loop_is_built_once(mod):
    x = np.arange(4.0)
    first = cotangent.grad(mod.sq)
    first(x)
    for _ in range(50):
        g = cotangent.grad(mod.sq)
        np.testing.assert_array_equal(g(x), 2 * x)
    assert g.compiled_count == 1  # the same compiled code: nothing was differentiated again
    one = cotangent.grad(mod.sq.with_options(threads=1))
    assert one.threads == 1 and g.threads == 0  # shared, with the caller's options


def test_unaligned_arrays_are_copied_before_native_code_reads_them(mod):
    raw = np.zeros(8 * 5 + 1, dtype=np.uint8)
    x = np.frombuffer(raw.data, dtype=np.float64, count=5, offset=1)
    assert not x.flags.aligned and x.flags.c_contiguous
    x_values = np.arange(5.0)
    raw[1:] = x_values.view(np.uint8)
    out = np.empty(5)
    # Were x passed in place, out (elsewhere) would not matter; the copy is what native code
    # reads, and the values prove it read them right.
    assert mod.sq(x) == float(np.sum(x_values**2))
    np.testing.assert_allclose(mod.heavy(x, out=out), heavy_reference(x_values), rtol=1e-12)


class ArrayLike:
    """What torch tensors and other array libraries offer NumPy."""

    def __init__(self, values):
        self.values = np.asarray(values)

    def __array__(self, dtype=None):
        return self.values if dtype is None else self.values.astype(dtype)


class BrokenArray:
    dtype = np.float64

    def __array__(self, dtype=None):
        raise ValueError("cannot be an array")


def test_objects_with_array_are_accepted_and_failures_name_the_parameter(mod):
    assert mod.sq(ArrayLike([1.0, 2.0])) == 5.0
    with pytest.raises(ValueError, match=r"parameter `x` of `sq`.*cannot be an array"):
        mod.sq(BrokenArray())


def test_a_result_too_large_to_hold_is_the_languages_error_not_numpys(mod):
    # 400^4 = 2.56e10 elements: more than a tensor may hold; the compiled code says so with
    # its position instead of NumPy failing to allocate 200 GB.
    with pytest.raises(cotangent.EvaluationError) as info:
        mod.big(np.zeros(400))
    assert "268435456" in str(info.value), str(info.value)
    assert info.value.file == "process.cot"


def test_scipy_objective_takes_tuple_parameters_and_positions():
    m = cotangent.loads("""
def energy(p: (f64, f64[n]), c: f64) -> f64 {
  let (s, v) = p
  (s - c) ^ 2 + sum i. (v[i] - s) ^ 2
}""")
    start = (0.0, np.array([1.0, 2.0, 3.0]))
    fun, x0, unravel = cotangent.scipy_objective(m.energy, start, 1.5, wrt=0)
    np.testing.assert_array_equal(x0, [0.0, 1.0, 2.0, 3.0])
    value, grad = fun(x0)
    assert value == 1.5**2 + 1.0 + 4.0 + 9.0
    # d/ds = 2 (s - c) - 2 sum (v - s);  d/dv = 2 (v - s)
    np.testing.assert_array_equal(grad, [2 * (0.0 - 1.5) - 2 * 6.0, 2.0, 4.0, 6.0])
    ((s, v),) = unravel(x0)  # one entry per parameter fitted; p is a tuple
    assert s == 0.0 and isinstance(s, float)
    np.testing.assert_array_equal(v, start[1])


def test_module_functions_are_the_same_object_each_time(mod):
    assert mod.sq is mod.sq
    assert mod["sq"] is mod.sq


def test_out_overlapping_an_argument_names_the_parameter(mod):
    x = np.linspace(0.0, 1.0, 6)
    with pytest.raises(ValueError, match=r"overlaps the memory of parameter `x` of `heavy`"):
        mod.heavy(x, out=x)


def test_load_of_source_text_points_to_loads():
    with pytest.raises(TypeError, match="use cotangent.loads"):
        cotangent.load("def f(x: f64) -> f64 {\n  x\n}")


def test_inspect_signature_shows_parameters_types_and_out(mod):
    import inspect
    sig = inspect.signature(cotangent.grad(mod.sq))
    assert str(sig) == "(x: 'f64[n]', *, out=None) -> 'f64[n]'"
