"""Arguments and out= results are not copied (issue 26, item 3).

NumPy reports its allocations to tracemalloc, so the peak of traced memory during a call shows
whether the package copied an array: the compiled code's own memory is not traced. The
converse cases (a strided view, an int64 array for an f64 parameter) copy, and the same
measure sees it, so the test can fail."""

import tracemalloc

import numpy as np
import pytest

import cotangent

N = 1 << 20  # 8 MB of f64


@pytest.fixture(scope="module")
def scale():
    m = cotangent.loads("def scale(a: f64, x: f64[n]) -> f64[n] { for i. a * x[i] }")
    return m.scale


def traced_peak(call):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return result, peak - before


def test_contiguous_argument_and_out_are_not_copied(scale):
    x = np.linspace(0.0, 1.0, N)
    out = np.empty(N)
    scale(2.0, x, out=out)  # compile outside the measurement
    result, peak = traced_peak(lambda: scale(3.0, x, out=out))
    assert result is out
    assert out.__array_interface__["data"][0] == result.__array_interface__["data"][0]
    np.testing.assert_array_equal(out, 3.0 * x)
    assert peak < 64 * 1024, f"{peak} bytes traced: an array was copied"


def test_the_result_is_one_allocation(scale):
    x = np.linspace(0.0, 1.0, N)
    scale(2.0, x)
    result, peak = traced_peak(lambda: scale(3.0, x))
    np.testing.assert_array_equal(result, 3.0 * x)
    assert 8 * N <= peak < 8 * N + 64 * 1024, peak


@pytest.mark.parametrize("make", [lambda x: x[::2], lambda x: x.astype(np.int64)],
                         ids=["strided", "int64"])
def test_other_layouts_and_dtypes_are_copied_once(scale, make):
    x = make(np.linspace(0.0, 100.0, 2 * N))
    out = np.empty(x.shape[0])
    scale(2.0, x, out=out)
    result, peak = traced_peak(lambda: scale(3.0, x, out=out))
    np.testing.assert_array_equal(result, 3.0 * x.astype(np.float64))
    assert 8 * x.shape[0] <= peak < 8 * x.shape[0] + 64 * 1024, peak
