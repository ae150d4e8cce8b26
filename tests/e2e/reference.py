#!/usr/bin/env python3
"""Reference implementations of the end-to-end test programs (tests/e2e/programs/*.cot).

Every function of every program is implemented here again, in plain Python (standard library
only), straight from the language reference (docs/language.md); nothing is
taken from Cotangent's own output. `main` evaluates the reference on the test inputs below and
writes tests/e2e/programs/NAME.json (and tests/e2e/examples/NAME.json for examples/NAME.cot):

    {"cases": [{"fn": "f", "input": {...}, "expected": VALUE, "type": "f64[2, 3]", "tol": 1e-12},
               {"fn": "g", "input": {...}, "error": ["substring", ...]}, ...]}

`expected` is JSON as Cotangent's IO reads it: nested arrays for tensors, arrays for tuples,
and the strings "inf", "-inf", "nan" for non-finite reals. `type` is the exact dtype and shape of
the result, spelled as cotangent::Value::type_string() spells it. An error case is checked both
ways: the reference must fail on it too (with RefError), and Cotangent's message must contain
every substring.

Run:  python3 tests/e2e/reference.py          (regenerates every JSON file)
      python3 tests/e2e/reference.py --check  (only checks that the files are up to date)
"""

import json
import math
import os
import re
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAMS = os.path.join(HERE, "programs")
EXAMPLE_SOURCES = os.path.join(HERE, "..", "..", "examples")
EXAMPLE_CASES = os.path.join(HERE, "examples")

INF = float("inf")
NAN = float("nan")
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1
DEFAULT_TOL = 1e-12
F32_TOL = 1e-6


class RefError(Exception):
    """A run-time error of the language (the reference fails where Cotangent must)."""


# ----------------------------------------------------------------------------------------------
# Semantics helpers: IEEE reals (Python's math raises where IEEE gives inf or nan), checked i64
# arithmetic with Python's floor division and modulus, f32 rounding, checked indexing.


def fexp(x):
    try:
        return math.exp(x)
    except OverflowError:
        return INF


def flog(x):
    if math.isnan(x) or x < 0:
        return NAN
    if x == 0:
        return -INF
    return math.log(x)


def fsqrt(x):
    if math.isnan(x) or x < 0:
        return NAN
    return math.sqrt(x)


def flog1p(x):
    if math.isnan(x) or x < -1:
        return NAN
    if x == -1:
        return -INF
    return math.log1p(x)


def fexpm1(x):
    try:
        return math.expm1(x)
    except OverflowError:
        return INF


def flgamma(x):
    try:
        return math.lgamma(x)
    except ValueError:  # poles at 0, -1, -2, ...
        return INF


def sigmoid(x):
    if x >= 0:
        return 1.0 / (1.0 + fexp(-x))
    e = fexp(x)
    return e / (1.0 + e)


def fdiv(a, b):
    if b == 0:
        if a == 0 or math.isnan(a):
            return NAN
        sign = math.copysign(1.0, a) * math.copysign(1.0, b)
        return sign * INF
    return a / b


def fpow(x, y):
    if x == 0 and y < 0:  # a pole: C's pow gives inf (signed for odd integer exponents)
        odd = y == math.floor(y) and math.fmod(y, 2.0) != 0
        return math.copysign(INF, x) if odd else INF
    try:
        return math.pow(x, y)
    except ValueError:  # negative base, non-integer exponent
        return NAN
    except (OverflowError, ZeroDivisionError):
        return INF


def fmax(a, b):
    return a if a >= b else b


def fmin(a, b):
    return a if a <= b else b


def ck(v):
    if not I64_MIN <= v <= I64_MAX:
        raise RefError("integer overflow")
    return v


def ifloordiv(a, b):
    if b == 0:
        raise RefError("integer division by zero")
    return ck(a // b)


def imod(a, b):
    if b == 0:
        raise RefError("integer division by zero")
    return a % b


def iexact(a, b):
    if b == 0:
        raise RefError("integer division by zero")
    if a % b != 0:
        raise RefError("does not divide exactly")
    return ck(a // b)


def itrunc(x):
    """i64(x): truncation toward zero; NaN, infinities and values outside i64 are errors."""
    if math.isnan(x) or math.isinf(x):
        raise RefError("no integer value")
    t = math.trunc(x)
    if not I64_MIN <= t <= I64_MAX:
        raise RefError("out of range")
    return t


def f32(x):
    """Rounds a double to the nearest single-precision value."""
    if math.isnan(x) or math.isinf(x):
        return x
    return struct.unpack("<f", struct.pack("<f", x))[0]


def at(x, *idx):
    """x[i, j, ...] with the language's range check (Python would wrap negative indices)."""
    for i in idx:
        if not 0 <= i < len(x):
            raise RefError("index %d out of range" % i)
        x = x[i]
    return x


def rsum(values, zero=0.0):
    s = zero
    for v in values:
        s = s + v
    return s


def rmax(values):
    m = -INF
    for v in values:
        m = fmax(m, v)
    return m


def rmin(values):
    m = INF
    for v in values:
        m = fmin(m, v)
    return m


def zeros(n):
    return [0.0] * n


def matvec(A, x):
    return [rsum(A[i][j] * x[j] for j in range(len(x))) for i in range(len(A))]


def matmul(A, B):
    k = len(B)
    n = len(B[0]) if k else 0
    return [[rsum(A[i][l] * B[l][j] for l in range(k)) for j in range(n)] for i in range(len(A))]


def dot(x, y):
    return rsum(x[i] * y[i] for i in range(len(x)))


def sqnorm(x):
    return rsum(v * v for v in x)


def logsumexp(x):
    """The prelude's logsumexp: -inf for an empty or all -inf vector."""
    mx = rmax(x)
    if mx == -INF:
        return mx
    return mx + flog(rsum(fexp(v - mx) for v in x))


def softmax(x):
    mx = rmax(x)
    e = [fexp(v - mx) for v in x]
    s = rsum(e)
    return [fdiv(v, s) for v in e]


# ----------------------------------------------------------------------------------------------
# trace_diag.cot


def diag_matrix(x):
    n = len(x)
    return [[x[i] if i == j else 0.0 for j in range(n)] for i in range(n)]


def trace_of_diag(x):
    A = diag_matrix(x)
    return rsum(A[i][i] for i in range(len(x)))


def repeated_trace(x, k):
    s = 0.0
    for _ in range(k):
        s = s + trace_of_diag(x)
    return s


def trace_of_diag_power(x, k):
    n = len(x)
    D = diag_matrix(x)
    M = [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]
    for _ in range(k):
        M = matmul(M, D) if n else M
    return rsum(M[i][i] for i in range(n))


TRACE_DIAG = {
    "trace_of_diag": trace_of_diag,
    "trace_of_prelude_diag": trace_of_diag,
    "repeated_trace": repeated_trace,
    "trace_of_diag_power": trace_of_diag_power,
    "diag_matrix": diag_matrix,
}

TRACE_DIAG_CASES = [
    ("trace_of_diag", {"x": [1.0, 2.0, 3.0]}),
    ("trace_of_diag", {"x": [0.25, -4.5, 1e10, -1e10, 7.0]}),
    ("trace_of_diag", {"x": []}),
    ("trace_of_prelude_diag", {"x": [1.5, -2.0, 3.25, 4.0]}),
    ("repeated_trace", {"x": [1.0, 2.0, 3.5], "k": 4}),
    ("repeated_trace", {"x": [1.0, 2.0, 3.5], "k": 0}),
    ("repeated_trace", {"x": [1.0, 2.0, 3.5], "k": -3}),
    ("trace_of_diag_power", {"x": [1.0, 2.0, -0.5], "k": 3}),
    ("trace_of_diag_power", {"x": [1.0, 2.0, -0.5], "k": 0}),
    ("trace_of_diag_power", {"x": [0.9, 1.1], "k": 7}),
    ("diag_matrix", {"x": [1.0, -2.0, 3.0]}),
    # The off-diagonal entries are strong zeros: 0, not 0 * inf = nan.
    ("diag_matrix", {"x": [INF, 2.0, NAN]}),
    ("trace_of_diag", {"x": [INF, 1.0]}),
]

# ----------------------------------------------------------------------------------------------
# reductions.cot


def stats(x):
    return (rsum(x), rmax(x), rmin(x))


def column_stats(A):
    n = len(A[0]) if A else 0
    cols = [[A[r][j] for r in range(len(A))] for j in range(n)]
    return ([rsum(c) for c in cols], [rmax(c) for c in cols], [rmin(c) for c in cols])


def empty_tensor_reductions(x):
    n = len(x)
    return ([0.0] * n, [-INF] * n, [INF] * n)


REDUCTIONS = {
    "total": rsum,
    "largest": rmax,
    "smallest": rmin,
    "stats": stats,
    "column_stats": column_stats,
    "empty_tensor_reductions": empty_tensor_reductions,
    "frobenius_sq": lambda A: rsum(A[i][j] * A[i][j] for i in range(len(A)) for j in range(len(A[i]))),
    "row_max_minus_min": lambda A: [rmax(row) - rmin(row) for row in A],
    "sum_extends_right": lambda x: rsum(v + 1.0 for v in x),
    "sum_then_add": lambda x: rsum(x) + 1.0,
    "count_positive": lambda x: rsum((1 if v > 0.0 else 0 for v in x), 0),
    "max_even_positions": lambda x: rmax(x[i] if i % 2 == 0 else -INF for i in range(len(x))),
}

REDUCTIONS_CASES = [
    ("total", {"x": [1.0, 2.0, 3.0, 4.5]}),
    ("total", {"x": []}),
    ("largest", {"x": [-3.0, 7.5, 2.0, 7.25]}),
    ("largest", {"x": []}),
    ("largest", {"x": [-INF, -1e300]}),
    ("smallest", {"x": [-3.0, 7.5, -2.0, -3.5]}),
    ("smallest", {"x": []}),
    ("stats", {"x": [0.5, -1.5, 2.5]}),
    ("stats", {"x": []}),
    ("column_stats", {"A": [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0], [0.5, 0.25, 9.0]]}),
    ("column_stats", {"A": [[1.0, 2.0]]}),
    ("empty_tensor_reductions", {"x": [1.0, 2.0, 3.0]}),
    ("empty_tensor_reductions", {"x": []}),
    ("frobenius_sq", {"A": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]}),
    ("row_max_minus_min", {"A": [[1.0, 5.0, -2.0], [0.0, 0.0, 0.0], [-7.0, 3.5, 1.0]]}),
    ("sum_extends_right", {"x": [1.0, 2.0, 3.0]}),
    ("sum_extends_right", {"x": []}),
    ("sum_then_add", {"x": [1.0, 2.0, 3.0]}),
    ("sum_then_add", {"x": []}),
    ("count_positive", {"x": [1.0, -2.0, 0.0, 3.0, 1e-300]}),
    ("max_even_positions", {"x": [1.0, 100.0, 3.0, 200.0, 2.0]}),
    ("max_even_positions", {"x": []}),
]

# ----------------------------------------------------------------------------------------------
# iverson.cot


def forward_diff(x):
    n = len(x)
    return [(at(x, i + 1) if i + 1 < n else 0.0) - x[i] for i in range(n)]


def window3(x):
    n = len(x)
    return [
        (at(x, i - 1) if i > 0 else 0.0) + x[i] + (at(x, i + 1) if i + 1 < n else 0.0)
        for i in range(n)
    ]


def masked_gather(x, idx):
    n = len(x)
    return [at(x, k) if 0 <= k < n else 0.0 for k in idx]


def guarded_int_division(a, b):
    return [float(ifloordiv(a[i], b[i])) if b[i] != 0 else 0.0 for i in range(len(a))]


def shifted_rows(A):
    m = len(A)
    n = len(A[0]) if m else 0
    return [list(at(A, i + 1)) if i + 1 < m else [0.0] * n for i in range(m)]


def band_count(x):
    n = len(x)
    return rsum(
        rsum((1.0 if (i - j <= 1 and j - i <= 1) else 0.0) + 0.0 * x[i] for j in range(n))
        for i in range(n)
    )


IVERSON = {
    "forward_diff": forward_diff,
    "window3": window3,
    "safe_log": lambda x: [flog(v) if v > 0.0 else 0.0 for v in x],
    "safe_recip": lambda x: [1.0 / v if v != 0.0 else 0.0 for v in x],
    "masked_gather": masked_gather,
    "lower_triangle": lambda A: [[A[i][j] if j <= i else 0.0 for j in range(len(A))] for i in range(len(A))],
    "inversions": lambda x: rsum(
        rsum((1.0 if i < j else 0.0) * (1.0 if x[i] > x[j] else 0.0) for j in range(len(x)))
        for i in range(len(x))
    ),
    "guarded_int_division": guarded_int_division,
    "shifted_rows": shifted_rows,
    "band_count": band_count,
}

IVERSON_CASES = [
    ("forward_diff", {"x": [1.0, 4.0, 9.0, 16.0]}),
    ("forward_diff", {"x": [5.0]}),
    ("forward_diff", {"x": []}),
    ("window3", {"x": [1.0, 2.0, 3.0, 4.0, 5.0]}),
    ("window3", {"x": [7.0]}),
    ("safe_log", {"x": [1.0, 0.0, -2.0, 2.718281828459045, 1e-300]}),
    ("safe_recip", {"x": [2.0, 0.0, -4.0, -0.0]}),
    ("masked_gather", {"x": [10.0, 20.0, 30.0], "idx": [2, -1, 3, 0, 100, 1, -9223372036854775808]}),
    ("lower_triangle", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]}),
    ("inversions", {"x": [3.0, 1.0, 2.0, 5.0, 4.0]}),
    ("inversions", {"x": []}),
    ("guarded_int_division", {"a": [7, -7, 5, 0, -9], "b": [2, 2, 0, 3, -4]}),
    ("shifted_rows", {"A": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]}),
    ("band_count", {"x": [1.0, 2.0, 3.0, 4.0, 5.0]}),
    ("band_count", {"x": [1.0]}),
]

# ----------------------------------------------------------------------------------------------
# lazy_if.cot


def safe_div(a, b):
    return 0 if b == 0 else ifloordiv(a, b)


def pick(x, k):
    return at(x, k) if (k >= 0 and k < len(x)) else -1.0


def piecewise(x):
    if x < -1.0:
        return -x - 1.0
    if x > 1.0:
        return x - 1.0
    return 0.0


def choose_rows(A, flip):
    return [list(r) for r in reversed(A)] if flip else A


def guarded_overflow(a):
    return 0 if a > 1000 else ck(a * I64_MAX)


LAZY_IF = {
    "previous": lambda x: [at(x, i - 1) if i > 0 else 0.0 for i in range(len(x))],
    "safe_div": safe_div,
    "pick": pick,
    "piecewise": piecewise,
    "choose_rows": choose_rows,
    "sum_abs": lambda x: rsum(-v if v < 0.0 else v for v in x),
    "guarded_overflow": guarded_overflow,
}

LAZY_IF_CASES = [
    ("previous", {"x": [1.0, 2.0, 3.0]}),
    ("previous", {"x": []}),
    ("safe_div", {"a": 7, "b": 0}),
    ("safe_div", {"a": -7, "b": 2}),
    ("pick", {"x": [1.0, 2.0, 3.0], "k": 2}),
    ("pick", {"x": [1.0, 2.0, 3.0], "k": 3}),
    ("pick", {"x": [1.0, 2.0, 3.0], "k": -1}),
    ("piecewise", {"x": -3.0}),
    ("piecewise", {"x": 0.5}),
    ("piecewise", {"x": 2.5}),
    ("choose_rows", {"A": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "flip": True}),
    ("choose_rows", {"A": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "flip": False}),
    ("sum_abs", {"x": [-1.5, 2.0, -3.0, 0.0]}),
    ("guarded_overflow", {"a": 2000}),
    ("guarded_overflow", {"a": 1}),
    ("guarded_overflow", {"a": -1}),
    ("guarded_overflow", {"a": 2}, ["integer overflow"]),
]

# ----------------------------------------------------------------------------------------------
# loops.cot


def fib(n):
    a, b = 0, 1
    for _ in range(n):
        a, b = b, ck(a + b)
    return a


def prefix_sums(x):
    n = len(x)
    s = [0.0 * v for v in x]
    for t in range(n):
        s = [s[i] + (x[t] if i >= t else 0.0) for i in range(n)]
    return s


def nested_state(a, n):
    x, y, c = a, 1.0, 0
    for t in range(n):
        x, y, c = x + y, y * 2.0, ck(c + t)
    return (x, (y, c))


def horner(c, x):
    acc = 0.0
    for t in range(len(c)):
        acc = acc * x + c[t]
    return acc


def nested_loops(a, b):
    outer = 0
    for s in range(a):
        inner = 0
        for t in range(b):
            inner = inner + (s + 1) * (t + 1)
        outer = outer + inner
    return outer


def power_iteration(A, v0, steps):
    v = v0
    for _ in range(steps):
        w = matvec(A, v)
        nrm = fsqrt(sqnorm(w))
        v = [wi / nrm for wi in w]
    return v


def running_max(x):
    n = len(x)
    out, best = [0.0] * n, -INF
    for t in range(n):
        b = fmax(best, x[t])
        out, best = [b if i == t else out[i] for i in range(n)], b
    return (out, best)


def two_state(h0, c0, n):
    h, c = h0, c0
    for _ in range(n):
        h, c = [0.5 * h[i] + c[i] for i in range(len(h))], [c[i] - 0.25 * h[i] for i in range(len(h))]
    return (h, c)


LOOPS = {
    "fib": fib,
    "prefix_sums": prefix_sums,
    "nested_state": nested_state,
    "horner": horner,
    "nested_loops": nested_loops,
    "power_iteration": power_iteration,
    "running_max": running_max,
    "two_state": two_state,
}

LOOPS_CASES = [
    ("fib", {"n": 0}),
    ("fib", {"n": 1}),
    ("fib", {"n": 10}),
    ("fib", {"n": 91}),
    ("fib", {"n": 92}, ["integer overflow"]),
    ("prefix_sums", {"x": [1.0, 2.0, 3.0, 4.0]}),
    ("prefix_sums", {"x": []}),
    ("nested_state", {"a": 1.5, "n": 4}),
    ("nested_state", {"a": 1.5, "n": 0}),
    ("horner", {"c": [2.0, -3.0, 0.5, 7.0], "x": 1.5}),
    ("horner", {"c": [], "x": 1.5}),
    ("nested_loops", {"a": 3, "b": 4}),
    ("nested_loops", {"a": 0, "b": 4}),
    ("power_iteration", {"A": [[2.0, 1.0], [1.0, 3.0]], "v0": [1.0, 0.0], "steps": 25}),
    ("running_max", {"x": [1.0, 3.0, 2.0, 5.0, 4.0]}),
    ("running_max", {"x": []}),
    ("two_state", {"h0": [1.0, -1.0], "c0": [0.5, 2.0], "n": 5}),
]

# ----------------------------------------------------------------------------------------------
# while_loops.cot


def collatz(n0):
    n, k = n0, 0
    while n != 1:
        n, k = (ifloordiv(n, 2), k + 1) if imod(n, 2) == 0 else (ck(3 * n + 1), k + 1)
    return (n, k)


def gcd(a, b):
    while b != 0:
        a, b = b, imod(a, b)
    return a


def isqrt(a):
    if a < 2:
        return a
    x, y = a, ifloordiv(a + 1, 2)
    while y < x:
        x, y = y, ifloordiv(y + ifloordiv(a, y), 2)
    return x


def cbrt_bisect(c):
    lo, hi = 0.0, fmax(1.0, c)
    while hi - lo > 1e-12:
        mid = 0.5 * (lo + hi)
        if mid * mid * mid < c:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def halve_until_small(x):
    v, k = x, 0
    while sqnorm(v) > 1.0:
        v, k = [0.5 * e for e in v], k + 1
    return (v, k)


def no_iterations(x):
    s = x
    while s > 100.0:
        s = s - 1.0
    return s


WHILE_LOOPS = {
    "collatz": collatz,
    "gcd": gcd,
    "isqrt": isqrt,
    "cbrt_bisect": cbrt_bisect,
    "halve_until_small": halve_until_small,
    "no_iterations": no_iterations,
}

WHILE_LOOPS_CASES = [
    ("collatz", {"n0": 27}),
    ("collatz", {"n0": 1}),
    ("collatz", {"n0": 6}),
    ("gcd", {"a0": 48, "b0": 18}),
    ("gcd", {"a0": -12, "b0": 18}),
    ("gcd", {"a0": 12, "b0": -18}),
    ("gcd", {"a0": 7, "b0": 0}),
    ("isqrt", {"a": 0}),
    ("isqrt", {"a": 1}),
    ("isqrt", {"a": 15}),
    ("isqrt", {"a": 16}),
    ("isqrt", {"a": 1000000007}),
    ("cbrt_bisect", {"c": 27.0}),
    ("cbrt_bisect", {"c": 0.5}),
    ("halve_until_small", {"x": [3.0, 4.0]}),
    ("halve_until_small", {"x": [0.5, 0.5]}),
    ("halve_until_small", {"x": []}),
    ("no_iterations", {"x": 3.0}),
    ("no_iterations", {"x": 102.5}),
]

# ----------------------------------------------------------------------------------------------
# gather.cot


def packed(c, r, d):
    return ifloordiv(c * (2 * d - c - 1), 2) + r - c - 1


def unpack_lower(q, l):
    d = len(q)
    if len(l) != d * (d - 1) // 2:
        raise RefError("parameter l does not fit its type")
    return [
        [at(l, packed(c, r, d)) if r > c else (fexp(q[r]) if r == c else 0.0) for c in range(d)]
        for r in range(d)
    ]


def unpack_lower_bracket(l, x):
    d = len(x)
    return [[(at(l, packed(c, r, d)) if r > c else 0.0) + 0.0 * x[r] for c in range(d)] for r in range(d)]


GATHER = {
    "gather": lambda x, idx: [at(x, k) for k in idx],
    "gather_rows": lambda A, idx: [list(at(A, k)) for k in idx],
    "permute_twice": lambda x, p: [at(x, at(p, at(p, i))) for i in range(len(x))],
    "histogram": lambda idx, bins: [
        rsum((1.0 if idx[o] == k else 0.0) * (bins[k] * 0.0 + 1.0) for o in range(len(idx)))
        for k in range(len(bins))
    ],
    "unpack_lower": unpack_lower,
    "unpack_lower_bracket": unpack_lower_bracket,
    "flat_to_matrix": lambda v, A: [
        [at(v, imod(i * len(A[0]) + j, len(v))) + 0.0 * A[i][j] for j in range(len(A[0]))]
        for i in range(len(A))
    ],
    "reverse_mod": lambda x: [at(x, imod(len(x) - 1 - i, len(x))) + 0.0 * x[i] for i in range(len(x))],
}

GATHER_CASES = [
    ("gather", {"x": [10.0, 20.0, 30.0], "idx": [2, 0, 0, 1]}),
    ("gather", {"x": [10.0, 20.0, 30.0], "idx": []}),
    ("gather", {"x": [10.0, 20.0, 30.0], "idx": [1, 5]}, ["index 5", "[3]"]),
    ("gather", {"x": [10.0, 20.0, 30.0], "idx": [-1]}, ["index -1", "[3]"]),
    ("gather_rows", {"A": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "idx": [2, 2, 0]}),
    ("permute_twice", {"x": [1.0, 2.0, 3.0, 4.0], "p": [1, 2, 3, 0]}),
    ("histogram", {"idx": [0, 2, 2, 3, 2, 0], "bins": [0.0, 0.0, 0.0, 0.0, 0.0]}),
    ("unpack_lower", {"q": [0.0, 1.0, -1.0], "l": [2.0, 3.0, 4.0]}),
    ("unpack_lower", {"q": [0.5, 0.25, -0.5, 1.0], "l": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}),
    ("unpack_lower", {"q": [2.0], "l": []}),
    ("unpack_lower", {"q": [0.0, 1.0, -1.0], "l": [2.0, 3.0, 4.0, 5.0]}, ["parameter l", "f64[4]"]),
    ("unpack_lower_bracket", {"l": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "x": [0.0, 0.0, 0.0, 0.0]}),
    ("flat_to_matrix", {"v": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "A": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]}),
    ("reverse_mod", {"x": [1.0, 2.0, 3.0, 4.0, 5.0]}),
]

# ----------------------------------------------------------------------------------------------
# integers.cot


def divmod_all(a, b):
    q = [ifloordiv(a[i], b[i]) for i in range(len(a))]
    r = [imod(a[i], b[i]) for i in range(len(a))]
    bad = rsum(1.0 if ck(ck(q[i] * b[i]) + r[i]) != a[i] else 0.0 for i in range(len(a)))
    return (q, r, bad == 0.0)


def mixed(a, b):
    return ck(ck(ifloordiv(ck(ck(-a) * b), 3) + imod(a, 5)) - ck(-b))


def sum_ints(a):
    s = 0
    for v in a:
        s = ck(s + v)
    return s


def base3(x):
    return [[imod(ifloordiv(i, [1, 3, 9][d]), 3) + 0 * itrunc(x[i]) for d in range(3)] for i in range(len(x))]


INTEGERS = {
    "floordiv": ifloordiv,
    "modulus": imod,
    "divmod_all": divmod_all,
    "exact_div": iexact,
    "add": lambda a, b: ck(a + b),
    "sub": lambda a, b: ck(a - b),
    "mul": lambda a, b: ck(a * b),
    "neg": lambda a: ck(-a),
    "mixed": mixed,
    "sum_ints": sum_ints,
    "int_square": lambda a: ck(a * a),
    "conversions": lambda x, k: (itrunc(x), itrunc(-x), float(k), float(ifloordiv(k, 2))),
    "base3": base3,
}

INTEGERS_CASES = [
    ("floordiv", {"a": -7, "b": 2}),
    ("floordiv", {"a": 7, "b": -2}),
    ("floordiv", {"a": -7, "b": -2}),
    ("floordiv", {"a": 7, "b": 2}),
    ("floordiv", {"a": -6, "b": 3}),
    ("floordiv", {"a": 0, "b": -5}),
    ("floordiv", {"a": -1, "b": 1000}),
    ("floordiv", {"a": I64_MIN, "b": 2}),
    ("floordiv", {"a": I64_MIN, "b": -1}, ["integer overflow"]),
    ("floordiv", {"a": 7, "b": 0}, ["division by zero"]),
    ("modulus", {"a": -7, "b": 2}),
    ("modulus", {"a": 7, "b": -2}),
    ("modulus", {"a": -7, "b": -2}),
    ("modulus", {"a": 7, "b": 2}),
    ("modulus", {"a": -1, "b": 1000}),
    ("modulus", {"a": I64_MIN, "b": -1}),
    ("modulus", {"a": I64_MIN, "b": 3}),
    ("modulus", {"a": 7, "b": 0}, ["division by zero"]),
    ("divmod_all", {"a": [-7, 7, -7, 7, 0, 13, -13, 1], "b": [2, -2, -2, 2, 5, 4, 4, -1]}),
    ("exact_div", {"a": 8, "b": -2}),
    ("exact_div", {"a": -9, "b": 3}),
    ("exact_div", {"a": 0, "b": 7}),
    ("exact_div", {"a": 7, "b": 2}, ["divide exactly"]),
    ("exact_div", {"a": -7, "b": 2}, ["divide exactly"]),
    ("exact_div", {"a": 7, "b": 0}, ["division by zero"]),
    ("exact_div", {"a": I64_MIN, "b": -1}, ["integer overflow"]),
    ("add", {"a": I64_MAX - 1, "b": 1}),
    ("add", {"a": I64_MAX, "b": 1}, ["integer overflow"]),
    ("add", {"a": I64_MIN, "b": -1}, ["integer overflow"]),
    ("sub", {"a": I64_MIN + 1, "b": 1}),
    ("sub", {"a": I64_MIN, "b": 1}, ["integer overflow"]),
    ("sub", {"a": 0, "b": I64_MIN}, ["integer overflow"]),
    ("mul", {"a": 3037000499, "b": 3037000499}),
    ("mul", {"a": 3037000500, "b": 3037000500}, ["integer overflow"]),
    ("mul", {"a": -4611686018427387904, "b": 2}),
    ("mul", {"a": 4611686018427387904, "b": 2}, ["integer overflow"]),
    ("mul", {"a": I64_MIN, "b": -1}, ["integer overflow"]),
    ("neg", {"a": I64_MAX}),
    ("neg", {"a": I64_MIN}, ["integer overflow"]),
    ("mixed", {"a": 7, "b": 5}),
    ("mixed", {"a": -7, "b": 5}),
    ("mixed", {"a": 7, "b": -5}),
    ("sum_ints", {"a": [1, 2, 3, -10]}),
    ("sum_ints", {"a": []}),
    ("sum_ints", {"a": [I64_MAX, 1, -5]}, ["integer overflow"]),
    ("int_square", {"a": -5}),
    ("int_square", {"a": 3037000500}, ["integer overflow"]),
    ("conversions", {"x": 2.7, "k": -7}),
    ("conversions", {"x": -2.7, "k": 7}),
    ("conversions", {"x": 0.5, "k": 0}),
    ("conversions", {"x": -9.2233720368547758e18, "k": 0}, ["i64"]),
    ("conversions", {"x": 1e30, "k": 0}, ["i64", "range"]),
    ("conversions", {"x": NAN, "k": 0}, ["i64", "NaN"]),
    ("conversions", {"x": INF, "k": 0}, ["i64", "inf"]),
    ("base3", {"x": [0.0] * 12}),
]

# ----------------------------------------------------------------------------------------------
# tuples.cot


def flatten(t):
    (a, b), (c, (d, e)) = t
    return a + 10.0 * b + 100.0 * c + 1000.0 * d + 10000.0 * e


def moments(x):
    s1, s2 = rsum(x), rsum(v * v for v in x)
    mean = s1 / float(len(x))
    return (mean, s2 / float(len(x)) - mean * mean)


def split_even_odd(x):
    return ([v if i % 2 == 0 else 0.0 for i, v in enumerate(x)], [v if i % 2 == 1 else 0.0 for i, v in enumerate(x)])


def use_tuples(x):
    m, v = moments(x)
    e, o = split_even_odd(x)
    return (m + 1.0, v, [e[i] - o[i] for i in range(len(x))])


TUPLES = {
    "swap": lambda p: (p[1], p[0]),
    "nested": lambda a, b, c: ((a, b), (a + b, (b * c, c))),
    "flatten": flatten,
    "wildcards": lambda t: t[1],
    "moments": moments,
    "split_even_odd": split_even_odd,
    "use_tuples": use_tuples,
    "mixed_tuple": lambda A, flag: (ck(len(A) * len(A[0])), not flag, [[A[i][j] for i in range(len(A))] for j in range(len(A[0]))]),
    "parens": lambda x: x,
}

TUPLES_CASES = [
    ("swap", {"p": [1.5, 3]}),
    ("nested", {"a": 1.0, "b": 2.0, "c": 3.0}),
    ("flatten", {"t": [[1.0, 2.0], [3.0, [4.0, 5.0]]]}),
    ("wildcards", {"t": [1.0, 2.0, 3.0]}),
    ("moments", {"x": [1.0, 2.0, 3.0, 4.0]}),
    ("split_even_odd", {"x": [1.0, 2.0, 3.0, 4.0, 5.0]}),
    ("use_tuples", {"x": [2.0, -1.0, 0.5]}),
    ("mixed_tuple", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "flag": True}),
    ("parens", {"x": -2.5}),
]

# ----------------------------------------------------------------------------------------------
# calls.cot


def leaky_relu(x):
    return x if x > 0.0 else 0.01 * x


def model(w, X, b):
    return [leaky_relu(dot(row, w) + b) for row in X]


def loss(w, X, b, y):
    p = model(w, X, b)
    return rsum((p[r] - y[r]) * (p[r] - y[r]) for r in range(len(y))) / float(len(y))


def h1(x):
    return x + 1.0


def g1(x):
    return 2.0 * h1(x)


def f1(x):
    return g1(x) * g1(x - 1.0)


def gram(A):
    At = [[A[i][j] for i in range(len(A))] for j in range(len(A[0]))]
    return matmul(At, A)


CALLS = {
    "model": model,
    "relu": leaky_relu,
    "loss": loss,
    "h1": h1,
    "g1": g1,
    "f1": f1,
    "row_norms": lambda A: [fsqrt(sqnorm(r)) for r in A],
    "sum_of_row_norms": lambda A: rsum(fsqrt(sqnorm(r)) for r in A),
    "gram": gram,
    "outer_trace": lambda x, y: rsum(x[i] * y[i] for i in range(len(x))),
    "concat": lambda x, y: list(x) + list(y),
    "concat3": lambda x, y, z: list(x) + list(y) + list(z),
}

CALLS_CASES = [
    ("model", {"w": [1.0, -2.0], "X": [[1.0, 1.0], [3.0, 0.5], [0.0, 2.0]], "b": 0.5}),
    ("relu", {"x": -3.0}),
    ("relu", {"x": 0.0}),
    ("relu", {"x": 2.0}),
    ("loss", {"w": [1.0, -2.0], "X": [[1.0, 1.0], [3.0, 0.5], [0.0, 2.0]], "b": 0.5, "y": [0.0, 2.0, -4.0]}),
    ("f1", {"x": 3.0}),
    ("h1", {"x": -0.5}),
    ("g1", {"x": -1.0}),
    ("row_norms", {"A": [[3.0, 4.0], [1.0, 1.0], [0.0, 0.0]]}),
    ("sum_of_row_norms", {"A": [[3.0, 4.0], [1.0, 1.0], [0.0, 0.0]]}),
    ("gram", {"A": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]}),
    ("outer_trace", {"x": [1.0, 2.0, 3.0], "y": [4.0, 5.0, 6.0]}),
    ("concat", {"x": [1.0, 2.0], "y": [3.0, 4.0, 5.0]}),
    ("concat", {"x": [], "y": [3.0]}),
    ("concat3", {"x": [1.0], "y": [2.0, 3.0], "z": [4.0, 5.0, 6.0]}),
]

# ----------------------------------------------------------------------------------------------
# sizes.cot


def dims3(T):
    a = len(T)
    b = len(T[0]) if a else 0
    c = len(T[0][0]) if b else 0
    return a * 100 + b * 10 + c


def check_same(*lengths):
    if len(set(lengths)) > 1:
        raise RefError("size variable mismatch")


def weighted(x, w):
    check_same(len(x), len(w))
    return dot(x, w)


def affine_map(A, x, b):
    check_same(len(A[0]) if A else 0, len(x))
    check_same(len(A), len(b))
    return [dot(A[i], x) + b[i] for i in range(len(A))]


def differences(x):
    if len(x) - 1 < 0:
        raise RefError("negative extent")
    return [x[i + 1] - x[i] for i in range(len(x) - 1)]


def interleave(x, y):
    check_same(len(x), len(y))
    return [x[i // 2] if i % 2 == 0 else y[i // 2] for i in range(2 * len(x))]


def pair_sums(x):
    n = iexact(len(x), 2)
    return [x[2 * i] + x[2 * i + 1] for i in range(n)]


def first_of_three(v):
    if len(v) != 3:
        raise RefError("does not fit")
    return v[0] + 0.0 * v[2]


SIZES = {
    "dims": lambda A: (len(A), len(A[0]) if A else 0, len(A) * (len(A[0]) if A else 0), len(A) - (len(A[0]) if A else 0)),
    "dims3": dims3,
    "weighted": weighted,
    "affine_map": affine_map,
    "differences": differences,
    "interleave": interleave,
    "pair_sums": pair_sums,
    "first_of_three": first_of_three,
    "mean_by_size": lambda x: fdiv(rsum(x), float(len(x))),
    "index_grid": lambda A: [[i * len(A[0]) + j for j in range(len(A[0]))] for i in range(len(A))],
}

SIZES_CASES = [
    ("dims", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}),
    ("dims", {"A": []}),
    ("dims3", {"T": [[[1.0, 2.0, 3.0, 4.0]] * 3] * 2}),
    ("weighted", {"x": [1.0, 2.0, 3.0], "w": [0.5, 0.25, 2.0]}),
    ("weighted", {"x": [1.0, 2.0, 3.0], "w": [1.0, 1.0]},
     ["size variable n", "parameter x", "parameter w", "[3]", "[2]"]),
    ("affine_map", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "x": [1.0, 0.0, -1.0], "b": [0.5, 0.25]}),
    ("affine_map", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "x": [1.0, 0.0], "b": [0.5, 0.25]},
     ["size variable n", "parameter A", "parameter x", "[2, 3]", "[2]"]),
    ("affine_map", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "x": [1.0, 0.0, -1.0], "b": [0.5]},
     ["size variable m", "parameter A", "parameter b", "[2, 3]", "[1]"]),
    ("differences", {"x": [1.0, 4.0, 9.0, 16.0]}),
    ("differences", {"x": [1.0]}),
    ("differences", {"x": []}, ["negative"]),
    ("interleave", {"x": [1.0, 3.0, 5.0], "y": [2.0, 4.0, 6.0]}),
    ("interleave", {"x": [1.0, 3.0, 5.0], "y": [2.0, 4.0]}, ["size variable n", "parameter x", "parameter y"]),
    ("pair_sums", {"x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}),
    ("pair_sums", {"x": [1.0, 2.0, 3.0]}, ["divide exactly"]),
    ("first_of_three", {"v": [1.0, 2.0, 3.0]}),
    ("first_of_three", {"v": [1.0, 2.0]}, ["parameter v", "f64[3]"]),
    ("mean_by_size", {"x": [1.0, 2.0, 4.0]}),
    ("mean_by_size", {"x": []}),
    ("index_grid", {"A": [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]}),
]

# ----------------------------------------------------------------------------------------------
# conv.cot


def conv1d(x, w):
    n, k = len(x), len(w)
    if n - k + 1 < 0:
        raise RefError("negative extent")
    return [rsum(at(x, i + j) * w[j] for j in range(k)) for i in range(n - k + 1)]


def conv2d(img, ker):
    h, w = len(img), len(img[0])
    p, q = len(ker), len(ker[0])
    return [
        [rsum(img[i + a][j + b] * ker[a][b] for a in range(p) for b in range(q)) for j in range(w - q + 1)]
        for i in range(h - p + 1)
    ]


def conv_same(x, w):
    n, k = len(x), len(w)
    half = ifloordiv(k, 2)
    out = []
    for i in range(n):
        out.append(rsum((at(x, i + j - half) if 0 <= i + j - half < n else 0.0) * w[j] for j in range(k)))
    return out


def conv_stride2(x, w):
    n, k = len(x), len(w)
    m = iexact(n - k, 2) + 1
    return [rsum(at(x, 2 * i + j) * w[j] for j in range(k)) for i in range(m)]


def conv_channels(x, w, b):
    ci, n = len(x), len(x[0])
    co, k = len(w), len(w[0][0])
    return [
        [b[o] + rsum(x[c][i + j] * w[o][c][j] for c in range(ci) for j in range(k)) for i in range(n - k + 1)]
        for o in range(co)
    ]


CONV = {
    "conv1d": conv1d,
    "conv2d": conv2d,
    "conv_same": conv_same,
    "conv_stride2": conv_stride2,
    "conv_channels": conv_channels,
}

CONV_CASES = [
    ("conv1d", {"x": [1.0, 2.0, 3.0, 4.0, 5.0], "w": [1.0, 0.0, -1.0]}),
    ("conv1d", {"x": [1.0, 2.0, 3.0], "w": [0.5, 0.25, 2.0]}),
    ("conv1d", {"x": [1.0, 2.0], "w": [1.0, 2.0, 3.0]}),
    ("conv1d", {"x": [1.0, 2.0], "w": [1.0, 2.0, 3.0, 4.0]}, ["negative"]),
    ("conv2d", {"img": [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0]],
                "ker": [[1.0, -1.0], [0.5, 2.0]]}),
    ("conv_same", {"x": [1.0, 2.0, 3.0, 4.0], "w": [1.0, 2.0, 3.0]}),
    ("conv_same", {"x": [1.0, 2.0, 3.0, 4.0, 5.0], "w": [1.0, 10.0, 100.0, 1000.0, 10000.0]}),
    ("conv_same", {"x": [1.0, 2.0, 3.0], "w": [0.5]}),
    ("conv_same", {"x": [1.0, 2.0, 3.0, 4.0], "w": [1.0, 2.0]}),
    ("conv_stride2", {"x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0], "w": [1.0, 1.0, 1.0]}),
    ("conv_stride2", {"x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "w": [1.0, 1.0, 1.0]}, ["divide exactly"]),
    ("conv_channels", {"x": [[1.0, 2.0, 3.0, 4.0], [0.5, -0.5, 1.5, -1.5]],
                       "w": [[[1.0, 0.0], [0.0, 1.0]], [[-1.0, 2.0], [0.5, 0.25]], [[0.0, 0.0], [1.0, 1.0]]],
                       "b": [0.1, 0.2, 0.3]}),
]

# ----------------------------------------------------------------------------------------------
# f32.cot (every f32 operation rounds to single precision)


def f32_sum(x):
    s = 0.0
    for v in x:
        s = f32(s + v)
    return s


def tenths(x):
    s = x
    for _ in range(10):
        s = f32(s + f32(0.1))
    return s


F32 = {
    "axpy": lambda a, x, y: [f32(f32(a * x[i]) + y[i]) for i in range(len(x))],
    "f32_sum": f32_sum,
    "f32_ops": lambda x, y: (f32(x + y), f32(x - y), f32(x * y), f32(fdiv(x, y)), -x),
    "add_tenth": lambda x: [f32(v + f32(0.1)) for v in x],
    "widen": lambda x: list(x),
    "narrow": lambda x: [f32(v) for v in x],
    "truncate": lambda x: [itrunc(v) for v in x],
    "from_ints": lambda k: ([f32(float(v)) for v in k], [float(v) for v in k]),
    "f32_exp_tanh": lambda x: [f32(f32(fexp(v)) - f32(math.tanh(v))) for v in x],
    "tenths": tenths,
    "f32_dot_mixed": lambda x, y: rsum(x[i] * y[i] for i in range(len(x))),
}

F32_CASES = [
    ("axpy", {"a": 0.1, "x": [1.0, 2.0, 3.0], "y": [0.2, 0.3, 1e8]}, None, 0.0),
    ("f32_sum", {"x": [0.1, 0.2, 0.3, 1e8, -1e8, 1.0 / 3.0]}, None, 0.0),
    ("f32_sum", {"x": []}, None, 0.0),
    ("f32_ops", {"x": 1.0 / 3.0, "y": 0.1}, None, 0.0),
    ("f32_ops", {"x": 1.0, "y": 0.0}, None, 0.0),
    ("add_tenth", {"x": [0.0, 0.2, 16777216.0]}, None, 0.0),
    ("widen", {"x": [0.1, -2.5, 3e38]}, None, 0.0),
    ("narrow", {"x": [0.1, 1.0 / 3.0, -2.5, 1e-50, 16777217.0]}, None, 0.0),
    ("truncate", {"x": [2.7, -2.7, 0.5, -0.5, 16777216.0, -3.0]}),
    ("from_ints", {"k": [0, 1, -7, 16777217, 9007199254740993]}, None, 0.0),
    ("f32_exp_tanh", {"x": [0.0, 0.5, -1.25, 3.0]}, None, F32_TOL),
    ("tenths", {"x": 0.0}, None, 0.0),
    ("tenths", {"x": 1000.0}, None, 0.0),
    ("f32_dot_mixed", {"x": [0.1, 0.2], "y": [10.0, 0.1]}),
]

# ----------------------------------------------------------------------------------------------
# power.cot

POWER = {
    "small_powers": lambda x: (1.0, x, x * x, x * x * x, x * x * x * x * x),
    "neg_square": lambda x: -(x * x),
    "right_assoc": lambda: fpow(2.0, 9.0),
    "real_exponent": lambda x, y: (fpow(x, 0.5), fpow(x, y), fpow(x, 2.0)),
    "negative_base": lambda x: ((-x) * (-x) * (-x), (-x) * (-x), fpow(-x, 0.5)),
    "powers_of_vector": lambda x: [v * v + fpow(2.0, v) for v in x],
    "pow_call": fpow,
    "sum_of_cubes": lambda x: rsum(v * v * v for v in x),
}

POWER_CASES = [
    ("small_powers", {"x": 1.5}),
    ("small_powers", {"x": -2.0}),
    ("small_powers", {"x": 0.0}),
    ("neg_square", {"x": 3.0}),
    ("neg_square", {"x": -3.0}),
    ("right_assoc", {}),
    ("real_exponent", {"x": 2.0, "y": 3.5}),
    ("real_exponent", {"x": 0.0, "y": -1.0}),
    ("negative_base", {"x": 2.0}),
    ("negative_base", {"x": -4.0}),
    ("powers_of_vector", {"x": [0.0, 1.0, -1.5, 3.0]}),
    ("pow_call", {"x": -8.0, "y": 1.0 / 3.0}),
    ("pow_call", {"x": -2.0, "y": 3.0}),
    ("pow_call", {"x": 10.0, "y": 400.0}),
    ("sum_of_cubes", {"x": [1.0, 2.0, -3.0, 0.5]}),
]

# ----------------------------------------------------------------------------------------------
# elementwise.cot

ELEMENTWISE = {
    "vec_ops": lambda x, y: ([a + b for a, b in zip(x, y)], [a - b for a, b in zip(x, y)],
                            [a * b for a, b in zip(x, y)], [fdiv(a, b) for a, b in zip(x, y)]),
    "scale": lambda x: ([2.0 * v for v in x], [v * 0.5 for v in x], [-v for v in x]),
    "vec_exp_log": lambda x: ([fexp(v) for v in x], [flog(v) for v in x]),
    "mat_ops": lambda A, B: [[2.0 * A[i][j] * B[i][j] - B[i][j] + math.tanh(A[i][j]) for j in range(len(A[0]))]
                             for i in range(len(A))],
    "vec_minmax": lambda x, y: ([fmax(a, b) for a, b in zip(x, y)], [fmin(a, b) for a, b in zip(x, y)]),
    "normalize": lambda x: [(1.0 / fsqrt(sqnorm(x))) * v for v in x],
    "sigmoid_layer": lambda W, x, b: [sigmoid(v + b[i]) for i, v in enumerate(matvec(W, x))],
    "squared": lambda x: [v * v for v in x],
    "add_scalar": lambda x, c: [v + c for v in x],
}

ELEMENTWISE_CASES = [
    ("vec_ops", {"x": [1.0, 2.0, -3.0, 1.0], "y": [4.0, -0.5, 2.0, 0.0]}),
    ("scale", {"x": [1.0, -2.0, 0.25]}),
    ("vec_exp_log", {"x": [1.0, 0.5, 0.0, 20.0]}),
    ("mat_ops", {"A": [[1.0, 2.0], [-0.5, 0.0]], "B": [[3.0, -1.0], [2.0, 5.0]]}),
    ("vec_minmax", {"x": [1.0, 5.0, -2.0], "y": [2.0, 3.0, -2.0]}),
    ("normalize", {"x": [3.0, 4.0]}),
    ("sigmoid_layer", {"W": [[1.0, -1.0], [0.5, 2.0], [0.0, 0.0]], "x": [2.0, 1.0], "b": [0.0, -3.0, 0.25]}),
    ("squared", {"x": [1.5, -2.0, 0.0]}),
    ("add_scalar", {"x": [1.5, -2.0, 0.0], "c": 10.0}),
]

# ----------------------------------------------------------------------------------------------
# builtins.cot

BUILTINS = {
    "unary": lambda x: (fexp(x), flog(x), math.sin(x), math.cos(x), math.tan(x), math.tanh(x), fsqrt(x)),
    "unary2": lambda x: (abs(x), sigmoid(x), flog1p(x), fexpm1(x), flgamma(x)),
    "binary": lambda x, y: (fpow(x, y), fmin(x, y), fmax(x, y), math.atan2(x, y)),
    "stop": lambda x: x * 2.0,
    "specials": lambda x: (INF, -INF, -INF, NAN, fdiv(x, 0.0), INF),
    "is_nan": lambda x: x != x,
    "logic": lambda a, b: (a and b, a or b, not a, a == b, a != b),
    "compare": lambda x, y: (x < y, x <= y, x > y, x >= y, x == y, x != y),
    "brackets": lambda x, y: (1.0 if x < y else 0.0) + 2.0 * (1.0 if x == y else 0.0) + 4.0 * (1.0 if x > y else 0.0),
}

BUILTINS_CASES = [
    ("unary", {"x": 0.5}),
    ("unary", {"x": 2.0}),
    ("unary", {"x": 0.0}),
    ("unary", {"x": -1.0}),
    ("unary2", {"x": 0.5}),
    ("unary2", {"x": -3.5}),
    ("unary2", {"x": 0.0}),
    ("unary2", {"x": -1.0}),
    ("unary2", {"x": 40.0}),
    ("unary2", {"x": -800.0}),
    ("binary", {"x": 2.0, "y": 10.0}),
    ("binary", {"x": 0.0, "y": -1.0}),
    ("binary", {"x": -1.0, "y": -1.0}),
    ("stop", {"x": 1.25}),
    ("specials", {"x": 3.0}),
    ("specials", {"x": -3.0}),
    ("specials", {"x": 0.0}),
    ("is_nan", {"x": NAN}),
    ("is_nan", {"x": INF}),
    ("is_nan", {"x": 1.0}),
    ("logic", {"a": True, "b": False}),
    ("logic", {"a": True, "b": True}),
    ("logic", {"a": False, "b": False}),
    ("compare", {"x": 1.0, "y": 2.0}),
    ("compare", {"x": 2.0, "y": 2.0}),
    ("compare", {"x": NAN, "y": 2.0}),
    ("brackets", {"x": 1.0, "y": 2.0}),
    ("brackets", {"x": 2.0, "y": 2.0}),
    ("brackets", {"x": 3.0, "y": 2.0}),
    ("brackets", {"x": NAN, "y": 2.0}),
]

# ----------------------------------------------------------------------------------------------
# rnn.cot


def rnn(h0, W, xs):
    s = h0
    h = len(h0)
    for step in range(len(xs)):
        # `sum j.` extends over `W[i, j] * s[j] + xs[step, i]`: xs[step, i] is added h times.
        s = [math.tanh(rsum(W[i][j] * s[j] + xs[step][i] for j in range(h))) for i in range(h)]
    return s


def rnn_step(W, U, b, hprev, x):
    check_same(len(W), len(hprev), len(b))
    return [math.tanh(dot(W[i], hprev) + dot(U[i], x) + b[i]) for i in range(len(b))]


def rnn_states(W, U, b, h0, xs):
    H = []
    hcur = h0
    for x in xs:
        hcur = rnn_step(W, U, b, hcur, x)
        H.append(hcur)
    return H


def rnn_readout(W, U, b, h0, xs, V):
    H = rnn_states(W, U, b, h0, xs)
    return [dot(V[r], at(H, len(xs) - 1)) for r in range(len(V))]


RNN_W = [[0.5, -0.25, 0.1], [0.2, 0.3, -0.4], [-0.1, 0.05, 0.6]]
RNN_U = [[1.0, 0.0], [0.5, -0.5], [-1.0, 0.25]]
RNN_B = [0.1, -0.2, 0.05]
RNN_H0 = [0.0, 0.5, -0.5]
RNN_XS = [[1.0, 2.0], [-0.5, 0.25], [0.0, 1.0], [2.0, -1.0]]

RNN = {
    "rnn": rnn,
    "rnn_step": rnn_step,
    "rnn_states": rnn_states,
    "rnn_readout": rnn_readout,
}

RNN_CASES = [
    ("rnn", {"h0": RNN_H0, "W": RNN_W, "xs": [[0.1, 0.2, 0.3], [-0.3, 0.0, 0.5]]}),
    ("rnn_step", {"W": RNN_W, "U": RNN_U, "b": RNN_B, "hprev": RNN_H0, "x": [1.0, -1.0]}),
    ("rnn_states", {"W": RNN_W, "U": RNN_U, "b": RNN_B, "h0": RNN_H0, "xs": RNN_XS}),
    ("rnn_readout", {"W": RNN_W, "U": RNN_U, "b": RNN_B, "h0": RNN_H0, "xs": RNN_XS,
                     "V": [[1.0, 2.0, 3.0], [-1.0, 0.0, 1.0]]}),
    ("rnn_step", {"W": RNN_W, "U": RNN_U, "b": RNN_B, "hprev": [0.0, 0.0], "x": [1.0, -1.0]},
     ["size variable h"]),
]

# ----------------------------------------------------------------------------------------------
# softmax.cot


def logsumexp_naive(x):
    return flog(rsum(fexp(v) for v in x))


def logsumexp_stable(x):
    mx = rmax(x)
    return mx + flog(rsum(fexp(v - mx) for v in x))


def softmax_stable(x):
    lse = logsumexp_stable(x)
    return [fexp(v - lse) for v in x]


def prelude_versions(x):
    p = softmax(x)
    return (logsumexp(x), p, rsum(p))


SOFTMAX = {
    "logsumexp_naive": logsumexp_naive,
    "logsumexp_stable": logsumexp_stable,
    "softmax_stable": softmax_stable,
    "prelude_versions": prelude_versions,
    "log_softmax": lambda x: [v - logsumexp(x) for v in x],
    "cross_entropy": lambda Z, labels: rsum(logsumexp(Z[r]) - at(Z[r], labels[r]) for r in range(len(Z))) / float(len(Z)),
    "softmax_rows": lambda Z: [softmax(r) for r in Z],
}

SOFTMAX_CASES = [
    ("logsumexp_naive", {"x": [1.0, 2.0, 3.0]}),
    ("logsumexp_naive", {"x": [1000.0, 1000.5]}),
    ("logsumexp_naive", {"x": []}),
    ("logsumexp_stable", {"x": [1.0, 2.0, 3.0]}),
    ("logsumexp_stable", {"x": [1000.0, 1000.5]}),
    ("logsumexp_stable", {"x": [-1000.0, -1000.5]}),
    ("softmax_stable", {"x": [1.0, 2.0, 3.0]}),
    ("softmax_stable", {"x": [1000.0, 1000.5, -1000.0]}),
    ("prelude_versions", {"x": [1.0, 2.0, 3.0]}),
    ("prelude_versions", {"x": [1000.0, 1000.5, -1000.0]}),
    ("prelude_versions", {"x": []}),
    ("prelude_versions", {"x": [-INF, -INF]}),
    ("log_softmax", {"x": [0.5, -0.5, 2.0]}),
    ("cross_entropy", {"Z": [[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]], "labels": [0, 1]}),
    ("cross_entropy", {"Z": [[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]], "labels": [0, 3]}, ["index 3", "[2, 3]"]),
    ("softmax_rows", {"Z": [[2.0, 1.0, 0.1], [0.5, 2.5, -1.0]]}),
]

# ----------------------------------------------------------------------------------------------
# gmm.cot

LOG_2PI = math.log(2.0 * 3.141592653589793)


def qmat(q, l):
    d = len(q)
    return [
        [fexp(q[r]) if r == c else (at(l, packed(c, r, d)) if r > c else 0.0) for c in range(d)]
        for r in range(d)
    ]


def gmm_objective(alphas, means, qs, ls, x, gamma, wm):
    K, n, d = len(alphas), len(x), len(x[0])
    Qs = [qmat(qs[k], ls[k]) for k in range(K)]
    sum_qs = [rsum(qs[k]) for k in range(K)]
    slse = 0.0
    for i in range(n):
        main = []
        for k in range(K):
            xc = [x[i][r] - means[k][r] for r in range(d)]
            Qx = [rsum(Qs[k][r][c] * xc[c] for c in range(d)) for r in range(d)]
            main.append(alphas[k] + sum_qs[k] - 0.5 * sqnorm(Qx))
        slse = slse + logsumexp(main)
    constant = -float(n * d) * 0.5 * LOG_2PI
    prior = rsum(
        0.5 * gamma * gamma * rsum(Qs[k][r][c] * Qs[k][r][c] for r in range(d) for c in range(d)) - wm * sum_qs[k]
        for k in range(K)
    )
    return constant + slse - float(n) * logsumexp(alphas) + prior


def gmm_objective_packed(alphas, means, icf, x, gamma, wm):
    d = len(means[0])
    qs = [row[:d] for row in icf]
    ls = [row[d:] for row in icf]
    return gmm_objective(alphas, means, qs, ls, x, gamma, wm)


GMM_ALPHAS = [0.5, -0.25, 1.0]
GMM_MEANS = [[0.0, 1.0, -1.0], [0.5, 0.5, 0.5], [-1.0, 2.0, 0.0]]
GMM_QS = [[0.1, -0.2, 0.3], [0.0, 0.0, 0.0], [-0.5, 0.25, 0.1]]
GMM_LS = [[0.5, -0.5, 0.25], [0.1, 0.2, 0.3], [-1.0, 0.0, 1.0]]
GMM_X = [[0.1, 0.2, 0.3], [1.0, -1.0, 0.5], [-0.5, 1.5, 2.0], [0.0, 0.0, 0.0]]

GMM = {
    "qmat": qmat,
    "gmm_objective": gmm_objective,
    "gmm_objective_packed": gmm_objective_packed,
}

GMM_CASES = [
    ("qmat", {"q": [0.0, 1.0, -1.0, 0.5], "l": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]}),
    ("gmm_objective", {"alphas": GMM_ALPHAS, "means": GMM_MEANS, "qs": GMM_QS, "ls": GMM_LS,
                       "x": GMM_X, "gamma": 1.0, "wm": 0.0}),
    ("gmm_objective", {"alphas": GMM_ALPHAS, "means": GMM_MEANS, "qs": GMM_QS, "ls": GMM_LS,
                       "x": GMM_X, "gamma": 0.5, "wm": 2.0}),
    ("gmm_objective_packed", {"alphas": GMM_ALPHAS, "means": GMM_MEANS,
                              "icf": [q + l for q, l in zip(GMM_QS, GMM_LS)],
                              "x": GMM_X, "gamma": 0.5, "wm": 2.0}),
    ("gmm_objective", {"alphas": [0.0], "means": [[1.0, 2.0]], "qs": [[0.0, 0.0]], "ls": [[0.0]],
                       "x": [[1.0, 2.0]], "gamma": 0.0, "wm": 0.0}),
]

# ----------------------------------------------------------------------------------------------
# lstm.cot


def lstm_step(Wx, Wh, b, x, hp, cp):
    h = len(hp)
    z = [[dot(Wx[g][i], x) + dot(Wh[g][i], hp) + b[g][i] for i in range(h)] for g in range(4)]
    c = [sigmoid(z[1][i]) * cp[i] + sigmoid(z[0][i]) * math.tanh(z[2][i]) for i in range(h)]
    hn = [sigmoid(z[3][i]) * math.tanh(c[i]) for i in range(h)]
    return (hn, c)


def lstm(Wx, Wh, b, h0, c0, xs):
    hh, cc = h0, c0
    for x in xs:
        hh, cc = lstm_step(Wx, Wh, b, x, hh, cc)
    return (hh, cc)


def lstm_loss(Wx, Wh, b, h0, c0, xs, ys):
    hh, cc, acc = h0, c0, 0.0
    for s in range(len(xs)):
        hh, cc = lstm_step(Wx, Wh, b, xs[s], hh, cc)
        acc = acc + rsum((hh[i] - ys[s][i]) * (hh[i] - ys[s][i]) for i in range(len(hh)))
    return fdiv(acc, float(len(xs)))


LSTM_WX = [[[0.1 * (g + 1) * (i - k + 0.5) for k in range(3)] for i in range(2)] for g in range(4)]
LSTM_WH = [[[0.05 * (g - i + j + 1) for j in range(2)] for i in range(2)] for g in range(4)]
LSTM_B = [[0.1, -0.1], [1.0, 0.5], [0.0, 0.2], [-0.3, 0.3]]
LSTM_XS = [[1.0, 0.5, -0.5], [0.0, 2.0, 1.0], [-1.0, -1.0, 0.25]]

LSTM = {"lstm_step": lstm_step, "lstm": lstm, "lstm_loss": lstm_loss}

LSTM_CASES = [
    ("lstm_step", {"Wx": LSTM_WX, "Wh": LSTM_WH, "b": LSTM_B, "x": [1.0, 0.5, -0.5], "hp": [0.1, -0.2],
                   "cp": [0.5, 0.0]}),
    ("lstm", {"Wx": LSTM_WX, "Wh": LSTM_WH, "b": LSTM_B, "h0": [0.0, 0.0], "c0": [0.0, 0.0], "xs": LSTM_XS}),
    ("lstm_loss", {"Wx": LSTM_WX, "Wh": LSTM_WH, "b": LSTM_B, "h0": [0.0, 0.0], "c0": [0.0, 0.0], "xs": LSTM_XS,
                   "ys": [[0.1, 0.2], [0.3, -0.1], [0.0, 0.5]]}),
]

# ----------------------------------------------------------------------------------------------
# blocks.cot


def shadow(x):
    y = x + 1.0
    y = y * 2.0
    return y - x


def nested_blocks(x):
    out = []
    for v in x:
        w = v * 2.0 + 1.0
        out.append(v + w)
    return out


BLOCKS = {
    "shadow": shadow,
    "block_expr": lambda x: (x * x + 1.0) + 2.0 * x,
    "semicolons": lambda x: x * (x + 1.0),
    "continuation": lambda x, y: (x + y) * (x - y) + fmax(x, y),
    "nested_blocks": nested_blocks,
    "scopes": lambda x: ([v * 3.0 for v in x], 10.0),
}

BLOCKS_CASES = [
    ("shadow", {"x": 3.0}),
    ("block_expr", {"x": 3.0}),
    ("semicolons", {"x": 3.0}),
    ("continuation", {"x": 3.0, "y": 5.0}),
    ("nested_blocks", {"x": [1.0, 2.0, -0.5]}),
    ("scopes", {"x": [1.0, 2.0]}),
]

# ----------------------------------------------------------------------------------------------
# bounds.cot

BOUNDS = {
    "read_at": lambda x, k: at(x, k),
    "read_2d": lambda A, i0, j0: at(A, i0, j0),
    "read_row": lambda A, k: list(at(A, k)),
    "pair_sums_unguarded": lambda x: [x[i] + at(x, i + 1) for i in range(len(x))],
    "pair_sums_guarded": lambda x: [x[i] + (at(x, i + 1) if i + 1 < len(x) else 0.0) for i in range(len(x))],
    "gather_unguarded": lambda x, idx: [at(x, k) for k in idx],
    "conv_wrong_extent": lambda x, w: [rsum(at(x, i + j) * w[j] for j in range(len(w))) for i in range(len(x))],
    "guard_too_weak": lambda x, k: at(x, k - 1) if k < len(x) else 0.0,
}

BOUNDS_CASES = [
    ("read_at", {"x": [1.0, 2.0, 3.0], "k": 2}),
    ("read_at", {"x": [1.0, 2.0, 3.0], "k": 3}, ["index 3", "[3]"]),
    ("read_at", {"x": [1.0, 2.0, 3.0], "k": -1}, ["index -1", "[3]"]),
    ("read_at", {"x": [], "k": 0}, ["index 0", "[0]"]),
    ("read_2d", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "i0": 1, "j0": 2}),
    ("read_2d", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "i0": 1, "j0": 3}, ["index 3", "[2, 3]"]),
    ("read_2d", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "i0": 2, "j0": 0}, ["index 2", "[2, 3]"]),
    ("read_row", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "k": 1}),
    ("read_row", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], "k": 2}, ["index 2", "[2, 3]"]),
    ("pair_sums_unguarded", {"x": [1.0, 2.0, 3.0]}, ["index 3", "[3]"]),
    ("pair_sums_unguarded", {"x": []}),
    ("pair_sums_guarded", {"x": [1.0, 2.0, 3.0]}),
    ("gather_unguarded", {"x": [1.0, 2.0, 3.0], "idx": [0, 7]}, ["index 7", "[3]"]),
    ("conv_wrong_extent", {"x": [1.0, 2.0, 3.0, 4.0], "w": [1.0, 2.0]}, ["index 4", "[4]"]),
    ("conv_wrong_extent", {"x": [1.0, 2.0, 3.0, 4.0], "w": [2.0]}),
    ("guard_too_weak", {"x": [1.0, 2.0, 3.0], "k": 2}),
    ("guard_too_weak", {"x": [1.0, 2.0, 3.0], "k": 5}),
    ("guard_too_weak", {"x": [1.0, 2.0, 3.0], "k": 0}, ["index -1", "[3]"]),
]

# ----------------------------------------------------------------------------------------------
# generators.cot

GENERATORS = {
    "transpose_gen": lambda A: [[A[i][j] for i in range(len(A))] for j in range(len(A[0]))],
    "copy_rows": lambda A: [list(r) for r in A],
    "nested_for": lambda A: [[A[i][j] * float(i + j) for j in range(len(A[0]))] for i in range(len(A))],
    "rank3": lambda x, y, z: [[[x[i] * y[j] + z[k] for k in range(len(z))] for j in range(len(y))] for i in range(len(x))],
    "repeat_rows": lambda x: [list(x) for _ in range(3)],
    "scaled_copies": lambda x: [[v * float(i + 1) for v in x] for i in range(2)],
    "pairs": lambda x: [[[x[i] * float(k) + x[j] for k in range(2)] for j in range(len(x))] for i in range(len(x))],
    "indices": lambda x: ([i for i in range(len(x))], [float(i) * x[i] for i in range(len(x))]),
    "last_matrix": lambda T: [list(r) for r in at(T, len(T) - 1)],
    "row_of_first": lambda T: list(at(T, 0, len(T[0]) - 1)),
    "empty_gen": lambda x: [],
    "positive": lambda x: [v > 0.0 for v in x],
    "upsample": lambda x: [x[i // 2] for i in range(2 * len(x))],
}

T234 = [[[100.0 * a + 10.0 * b + c for c in range(4)] for b in range(3)] for a in range(2)]

GENERATORS_CASES = [
    ("transpose_gen", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}),
    ("copy_rows", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}),
    ("nested_for", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]}),
    ("rank3", {"x": [1.0, 2.0], "y": [1.0, -1.0, 0.5], "z": [0.0, 10.0]}),
    ("repeat_rows", {"x": [1.0, 2.0]}),
    ("scaled_copies", {"x": [1.0, 2.0, 3.0]}),
    ("pairs", {"x": [1.0, 2.0]}),
    ("indices", {"x": [5.0, 6.0, 7.0]}),
    ("last_matrix", {"T": T234}),
    ("row_of_first", {"T": T234}),
    ("empty_gen", {"x": [1.0, 2.0, 3.0]}, None, None, "f64[0, 3]"),
    ("positive", {"x": [1.0, -2.0, 0.0, 3.0]}),
    ("upsample", {"x": [1.0, 2.0, 3.0]}),
]

# ----------------------------------------------------------------------------------------------
# guards.cot


def back_substitute(U, b):
    n = len(b)
    z = [0.0] * n
    for t in range(n):
        r = n - 1 - t
        s = rsum(U[r][j] * z[j] if j > r else 0.0 for j in range(n))
        z = [fdiv(b[r] - s, U[r][r]) if i == r else z[i] for i in range(n)]
    return z


GUARDS = {
    "masked_max_min": lambda x: (rmax(x[i] if i > 0 else 0.0 for i in range(len(x))),
                                 rmin(x[i] if i > 0 else 0.0 for i in range(len(x)))),
    "never_true_max": lambda x: rmax(0.0 for _ in x),
    "empty_guards": lambda x: (0.0, 0.0, rsum(x[i] if i == 2 else 0.0 for i in range(len(x)))),
    "non_convex": lambda x: (rsum(v if i != 1 else 0.0 for i, v in enumerate(x)),
                             rsum(v if i in (0, 2) else 0.0 for i, v in enumerate(x)),
                             rsum(v if i >= 2 else 0.0 for i, v in enumerate(x))),
    "odd_positions": lambda x: rsum(at(x, 2 * i + 1) if 2 * i + 1 < len(x) else 0.0 for i in range(len(x))),
    "exclusive_prefix": lambda x: [rsum(x[j] if j < i else 0.0 for j in range(len(x))) for i in range(len(x))],
    "reversed_offset": lambda x: [(at(x, len(x) - 3 - i) if len(x) - 1 - i >= 2 else 0.0) + 0.0 * x[i]
                                  for i in range(len(x))],
    "runtime_bound": lambda x, k: rsum(x[i] if i + k < len(x) else 0.0 for i in range(len(x))),
    "guarded_row_max": lambda A: [rmax((A[i][j] if i >= 1 else 0.0) for i in range(len(A))) for j in range(len(A[0]))],
    "tridiagonal_matvec": lambda A, x: [rsum((A[i][j] if abs(i - j) <= 1 else 0.0) * x[j] for j in range(len(x)))
                                        for i in range(len(x))],
    "anti_trace": lambda A: rsum(A[i][j] if i + j == len(A) - 1 else 0.0 for i in range(len(A)) for j in range(len(A))),
    "window_sums": lambda x: [rsum(x[j] if i <= j < i + 3 else 0.0 for j in range(len(x))) for i in range(len(x))],
    "back_substitute": back_substitute,
}

GUARDS_CASES = [
    ("masked_max_min", {"x": [-5.0, -3.0, -4.0]}),
    ("masked_max_min", {"x": [5.0, 3.0, 4.0]}),
    ("masked_max_min", {"x": [5.0]}),
    ("masked_max_min", {"x": []}),
    ("never_true_max", {"x": [-5.0, -3.0, -4.0]}),
    ("never_true_max", {"x": []}),
    ("empty_guards", {"x": [1.0, 2.0, 4.0, 8.0]}),
    ("empty_guards", {"x": [1.0, 2.0]}),
    ("non_convex", {"x": [1.0, 2.0, 4.0, 8.0]}),
    ("odd_positions", {"x": [1.0, 2.0, 4.0, 8.0, 16.0]}),
    ("odd_positions", {"x": [1.0, 2.0, 4.0, 8.0]}),
    ("exclusive_prefix", {"x": [1.0, 2.0, 4.0, 8.0]}),
    ("reversed_offset", {"x": [1.0, 2.0, 4.0, 8.0, 16.0]}),
    ("reversed_offset", {"x": [1.0, 2.0]}),
    ("runtime_bound", {"x": [1.0, 2.0, 4.0, 8.0, 16.0], "k": 2}),
    ("runtime_bound", {"x": [1.0, 2.0, 4.0, 8.0, 16.0], "k": -3}),
    ("runtime_bound", {"x": [1.0, 2.0, 4.0, 8.0, 16.0], "k": 9}),
    ("guarded_row_max", {"A": [[-1.0, -2.0], [-3.0, -4.0], [-5.0, -6.0]]}),
    ("guarded_row_max", {"A": [[-1.0, 2.0], [3.0, -4.0], [5.0, 1.0]]}),
    ("tridiagonal_matvec", {"A": [[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [9.0, 10.0, 11.0, 12.0],
                                  [13.0, 14.0, 15.0, 16.0]], "x": [1.0, -1.0, 2.0, 0.5]}),
    ("anti_trace", {"A": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]}),
    ("window_sums", {"x": [1.0, 2.0, 4.0, 8.0, 16.0]}),
    ("back_substitute", {"U": [[2.0, 1.0, -1.0], [0.0, 3.0, 2.0], [0.0, 0.0, 4.0]], "b": [1.0, 2.0, 8.0]}),
]

# ----------------------------------------------------------------------------------------------
# names.cot


def state_named_n(x):
    s = x
    for _ in range(2):
        s = [v * 2.0 for v in s]
    return s


NAMES = {
    "builtin_names": lambda x: fexp(x + 1.0) + 2.0,
    "user_temps": lambda x: (x * 2.0 + 1.0) * (x * 2.0) + x * 2.0,
    "inner_shadow": lambda x: [rsum(x[i] + float(i) for i in range(len(x))) for _ in x],
    "size_shadow": lambda x: 2.5 * x[0],
    "state_named_n": state_named_n,
    "index_named_n": lambda x: [v + 1.0 for v in x],
    "g": lambda x: x + 1.0,
    "param_like_fn": lambda g, e: (g + 1.0) * 2.0 + fexp(e),
}

NAMES_CASES = [
    ("builtin_names", {"x": 1.5}),
    ("user_temps", {"x": 1.5}),
    ("inner_shadow", {"x": [1.0, 2.0, 3.0]}),
    ("size_shadow", {"x": [4.0, 5.0]}),
    ("state_named_n", {"x": [1.0, 2.0, 3.0]}),
    ("index_named_n", {"x": [1.0, 2.0, 3.0]}),
    ("g", {"x": 1.0}),
    ("param_like_fn", {"g": 1.5, "exp": 0.5}),
]

# ----------------------------------------------------------------------------------------------
# spec_first_look.cot (tests/data/language_first_look.cot)

SPEC_FIRST_LOOK = {
    "dot": dot,
    "matvec": matvec,
    "logsumexp": logsumexp_stable,
    "trace_of_diag": trace_of_diag,
    "rnn": rnn,
    "loss": lambda w, X, y: rsum((dot(X[r], w) - y[r]) * (dot(X[r], w) - y[r]) for r in range(len(y))),
}

SPEC_FIRST_LOOK_CASES = [
    ("dot", {"x": [1.0, 2.0, 3.0], "y": [4.0, -5.0, 6.0]}),
    ("dot", {"x": [], "y": []}),
    ("matvec", {"A": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "x": [1.0, -1.0]}),
    ("logsumexp", {"x": [1.0, 2.0, 3.0]}),
    ("logsumexp", {"x": [1000.0, 1000.0]}),
    ("trace_of_diag", {"x": [1.0, 2.0, 3.0]}),
    ("rnn", {"h0": [0.1, -0.1], "W": [[0.5, -0.5], [0.25, 1.0]], "xs": [[1.0, 0.0], [0.0, 1.0], [-1.0, 0.5]]}),
    ("loss", {"w": [1.0, 2.0], "X": [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], "y": [1.0, 2.0, 3.0]}),
]

# ----------------------------------------------------------------------------------------------
# examples/quickstart.cot (cases in tests/e2e/examples/quickstart.json)


def qs_predict(w, X):
    return [dot(row, w) for row in X]


def qs_loss(w, X, y):
    p = qs_predict(w, X)
    return rsum((p[r] - y[r]) * (p[r] - y[r]) for r in range(len(y)))


def qs_smooth(x):
    return [0.5 * (x[r] + (at(x, r - 1) if r > 0 else 0.0) + (x[r] if r == 0 else 0.0)) for r in range(len(x))]


def qs_descend(w0, X, y, steps):
    w, l = w0, qs_loss(w0, X, y)
    for _ in range(steps):
        res = [dot(X[r], w) - y[r] for r in range(len(y))]
        g = [2.0 * rsum(res[r] * X[r][j] for r in range(len(y))) for j in range(len(w))]
        w2 = [w[j] - 0.004 * g[j] for j in range(len(w))]
        w, l = w2, qs_loss(w2, X, y)
    return (w, l)


QUICKSTART = {
    "predict": qs_predict,
    "loss": qs_loss,
    "smooth": qs_smooth,
    "descend": qs_descend,
    "main": lambda w, X, y: (qs_loss(w, X, y), qs_predict(w, X), qs_smooth(y), qs_descend(w, X, y, 200)),
}

QS_W = [0.5, -0.25]
QS_X = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]]
QS_Y = [1.0, 2.0, 3.0, 4.0]

QUICKSTART_CASES = [
    ("main", {"w": QS_W, "X": QS_X, "y": QS_Y}),
    ("predict", {"w": QS_W, "X": QS_X}),
    ("loss", {"w": QS_W, "X": QS_X, "y": QS_Y}),
    ("smooth", {"x": [1.0, 3.0, 5.0, 4.0]}),
    ("smooth", {"x": []}),
    ("descend", {"w0": QS_W, "X": QS_X, "y": QS_Y, "steps": 0}),
    ("descend", {"w0": QS_W, "X": QS_X, "y": QS_Y, "steps": 50}),
]

EXAMPLES = {
    "quickstart": (QUICKSTART, QUICKSTART_CASES),
}

# ----------------------------------------------------------------------------------------------
# segments.cot


def members(idx, j):
    """The points of segment j, in order (a key out of range belongs to none)."""
    return [i for i in range(len(idx)) if idx[i] == j]


def segment_rows(idx, x, w):
    d = len(x[0]) if x else 0
    return [[rsum(x[i][l] for i in members(idx, j)) for l in range(d)] for j in range(len(w))]


def segment_cols(idx, x, w):
    return [[rsum(x[l][i] for i in members(idx, j)) for j in range(len(w))] for l in range(len(x))]


def weighted_hist(idx, v, w):
    return [rsum(-((1.0 * v[i]) * w[j]) for i in members(idx, j)) for j in range(len(w))]


def segment_means(idx, v, w):
    out = []
    for j in range(len(w)):
        pts = members(idx, j)
        if not pts and idx:
            out.append(0.0)  # a strong zero over a strong zero (no point reached the segment)
        else:
            out.append(fdiv(rsum(v[i] for i in pts), rsum(1.0 for i in pts)))
    return out


def pairs(a, b, v, w):
    k = len(w)
    return [[rsum(v[i] for i in range(len(v)) if a[i] == j and b[i] == m) for m in range(k)]
            for j in range(k)]


def segment_gather(idx, pos, v, w):
    return [rsum(at(v, pos[i]) for i in members(idx, j)) for j in range(len(w))]


def nan_min(values):
    """min j. e: NaN as soon as one value is (language.md §6, `min`); inf over no values."""
    m = INF
    for x in values:
        if math.isnan(x):
            return NAN
        m = fmin(m, x)
    return m


def km_distances(points, centroids):
    d = len(points)
    n = len(points[0]) if points else 0
    return [[rsum((points[l][i] - centroids[j][l]) * (points[l][i] - centroids[j][l])
                  for l in range(d)) for j in range(len(centroids))] for i in range(n)]


def km_cost(points, centroids):
    return rsum(nan_min(row) for row in km_distances(points, centroids))


def km_dir(points, centroids):
    """The gradient of km_cost in the centroids over its Hessian's diagonal. Each point's term is
    the squared distance to its nearest centroid (the first at the minimum; none when the
    minimum is NaN): its gradient is 2 (c - p) at that centroid, its Hessian 2. A centroid no
    point is nearest to has a strong zero over a strong zero, 0; with no points, 0 / 0."""
    k = len(centroids)
    d = len(points)
    n = len(points[0]) if points else 0
    nearest = []
    for row in km_distances(points, centroids):
        m = nan_min(row)
        nearest.append(next((j for j in range(k) if row[j] == m), k))
    out = []
    for j in range(k):
        pts = [i for i in range(n) if nearest[i] == j]
        row = []
        for l in range(d):
            if not pts and n > 0:
                row.append(0.0)
                continue
            g = rsum(2.0 * (centroids[j][l] - points[l][i]) for i in pts)
            row.append(fdiv(g, rsum(2.0 for i in pts)))
        out.append(row)
    return out


def last_column_key(tab, v):
    k = len(tab[0]) if tab else 0
    return [rsum(v[i] for i in range(len(v)) if tab[i][k - 1] == j) for j in range(k)]


def segment_total(idx, v, w):
    return [rsum(v[i] for i in members(idx, j)) for j in range(len(w))]


def segment_count(idx, v, w):
    return [rsum(1.0 for i in members(idx, j)) for j in range(len(w))]


def fewer_segments(idx, v, w):
    if len(w) < 5:
        raise RefError("the extent k - 5 of index j is negative")
    return [rsum(v[i] for i in members(idx, j)) for j in range(len(w) - 5)]


SEGMENTS = {
    "segment_total": segment_total,
    "segment_count": segment_count,
    "fewer_segments": fewer_segments,
    "means_of_helpers": segment_means,
    "last_column_key": last_column_key,
    "segment_rows": segment_rows,
    "segment_cols": segment_cols,
    "weighted_hist": weighted_hist,
    "segment_means": segment_means,
    "pairs": pairs,
    "segment_gather": segment_gather,
    "km_cost": km_cost,
    "km_dir": km_dir,
}

SEG_IDX = [0, 2, 2, 5, 1, 0, -1, 6, 100, I64_MIN, I64_MAX, 3]
SEG_V = [1.5, -0.0, 2.0, 2.25, -4.0, 0.5, 7.0, 8.0, 9.0, 10.0, 11.0, NAN]
SEG_W = [1.0, -2.0, 0.5, INF, NAN, 3.0]  # segment 4 is empty and weighs NaN
SEG_X = [[1.0 + 0.5 * i, 2.0 - i, 0.25 * i * i] for i in range(12)]
KM_POINTS = [[0.0, 0.1, 5.0, 5.2, 4.9, 9.0, 0.3],
             [0.0, -0.2, 5.0, 4.7, 5.1, 9.5, 0.1]]
KM_CENTROIDS = [[0.5, 0.0], [5.5, 5.5], [100.0, 100.0], [9.0, 9.0]]  # centroid 2 is nearest to none

SEGMENTS_CASES = [
    ("segment_rows", {"idx": SEG_IDX, "x": SEG_X, "w": SEG_W}),
    ("segment_rows", {"idx": [], "x": [], "w": SEG_W}),  # n = 0 (and d = 0)
    ("segment_rows", {"idx": [1, 1, 0], "x": [[], [], []], "w": SEG_W}),  # d = 0
    ("segment_rows", {"idx": SEG_IDX, "x": SEG_X, "w": []}, None, None, "f64[0, 3]"),  # k = 0
    ("segment_cols", {"idx": SEG_IDX, "x": [list(c) for c in zip(*SEG_X)], "w": SEG_W}),
    ("segment_cols", {"idx": [], "x": [[], []], "w": SEG_W}),  # n = 0, d = 2
    ("segment_cols", {"idx": [-3, 7], "x": [[1.0, 2.0]], "w": SEG_W}),  # every key out of range
    ("weighted_hist", {"idx": SEG_IDX, "v": SEG_V, "w": SEG_W}),
    ("weighted_hist", {"idx": [], "v": [], "w": SEG_W}),
    ("weighted_hist", {"idx": SEG_IDX, "v": SEG_V, "w": []}),
    ("segment_means", {"idx": SEG_IDX, "v": SEG_V, "w": SEG_W}),
    ("segment_means", {"idx": [0, 0, 2, 2, 2, 0], "v": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0], "w": SEG_W}),
    ("segment_means", {"idx": [], "v": [], "w": SEG_W}),  # 0 / 0 everywhere
    ("segment_means", {"idx": [9, -9], "v": [1.0, 2.0], "w": SEG_W}),  # no segment reached
    ("pairs", {"a": SEG_IDX, "b": [1, 0, 0, 5, 1, 2, 0, 1, 1, 1, 1, 3], "v": SEG_V, "w": SEG_W}),
    ("pairs", {"a": [], "b": [], "v": [], "w": SEG_W}),
    ("segment_gather", {"idx": [0, 7, 1], "pos": [2, 9, 0], "v": [1.0, 2.0, 3.0], "w": [1.0, 2.0]}),
    ("segment_gather", {"idx": [0, 1, 1], "pos": [2, 9, 0], "v": [1.0, 2.0, 3.0], "w": [1.0, 2.0]},
     ["index 9", "[3]"]),
    ("km_cost", {"points": KM_POINTS, "centroids": KM_CENTROIDS}),
    ("km_cost", {"points": KM_POINTS, "centroids": [[0.5, 0.0], [5.5, NAN], [9.0, 9.0]]}),
    ("km_dir", {"points": KM_POINTS, "centroids": KM_CENTROIDS}),
    ("km_dir", {"points": KM_POINTS, "centroids": [[0.5, 0.0], [5.5, NAN], [9.0, 9.0]]}),
    ("km_dir", {"points": [[], []], "centroids": KM_CENTROIDS}),  # no points: 0 / 0
    ("means_of_helpers", {"idx": [0, 0, 2, 2, 2, 0], "v": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                          "w": SEG_W}),
    ("means_of_helpers", {"idx": SEG_IDX, "v": SEG_V, "w": SEG_W}),
    ("last_column_key", {"tab": [[], []], "v": [1.0, 2.0]}, None, None, "f64[0]"),  # k = 0
    ("last_column_key", {"tab": [[0, 2, 1], [5, 5, 1], [9, 9, 0]], "v": [1.0, 2.0, 3.0]}),
    ("segment_total", {"idx": SEG_IDX, "v": SEG_V, "w": SEG_W}),
    ("segment_count", {"idx": SEG_IDX, "v": SEG_V, "w": SEG_W}),
    ("fewer_segments", {"idx": [0, 1, 2, 6], "v": [1.0, 2.0, 3.0, 4.0], "w": [1.0] * 7}),
    ("fewer_segments", {"idx": [0, 1, 2], "v": [1.0, 2.0, 3.0], "w": [1.0, INF]},
     ["k - 5", "negative"]),
]

# ----------------------------------------------------------------------------------------------
# The table of programs: name -> (reference functions, cases). A case is
# (fn, input[, error substrings[, tol[, type override]]]).

ALL = {
    "trace_diag": (TRACE_DIAG, TRACE_DIAG_CASES),
    "reductions": (REDUCTIONS, REDUCTIONS_CASES),
    "iverson": (IVERSON, IVERSON_CASES),
    "lazy_if": (LAZY_IF, LAZY_IF_CASES),
    "loops": (LOOPS, LOOPS_CASES),
    "while_loops": (WHILE_LOOPS, WHILE_LOOPS_CASES),
    "gather": (GATHER, GATHER_CASES),
    "integers": (INTEGERS, INTEGERS_CASES),
    "tuples": (TUPLES, TUPLES_CASES),
    "calls": (CALLS, CALLS_CASES),
    "sizes": (SIZES, SIZES_CASES),
    "conv": (CONV, CONV_CASES),
    "f32": (F32, F32_CASES),
    "power": (POWER, POWER_CASES),
    "elementwise": (ELEMENTWISE, ELEMENTWISE_CASES),
    "builtins": (BUILTINS, BUILTINS_CASES),
    "rnn": (RNN, RNN_CASES),
    "softmax": (SOFTMAX, SOFTMAX_CASES),
    "gmm": (GMM, GMM_CASES),
    "lstm": (LSTM, LSTM_CASES),
    "blocks": (BLOCKS, BLOCKS_CASES),
    "bounds": (BOUNDS, BOUNDS_CASES),
    "generators": (GENERATORS, GENERATORS_CASES),
    "spec_first_look": (SPEC_FIRST_LOOK, SPEC_FIRST_LOOK_CASES),
    "guards": (GUARDS, GUARDS_CASES),
    "names": (NAMES, NAMES_CASES),
    "segments": (SEGMENTS, SEGMENTS_CASES),
}

# ----------------------------------------------------------------------------------------------
# Types: the signatures are read from the .cot files, so that inputs are converted to the
# parameter types (f32 inputs rounded) and results are checked against the declared structure.


def split_top(text, sep=","):
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


def parse_type(text):
    """'(f64, i64[n, m])' -> ('tuple', [('f64', 1?)...]); tensors are (dtype, rank)."""
    text = text.strip()
    if text.startswith("("):
        assert text.endswith(")"), text
        return ("tuple", [parse_type(t) for t in split_top(text[1:-1])])
    m = re.match(r"^(f64|f32|i64|bool)(\[(.*)\])?$", text, re.S)
    assert m, "cannot parse type %r" % text
    rank = len(split_top(m.group(3))) if m.group(2) else 0
    return (m.group(1), rank)


def signatures(cot_path):
    src = open(cot_path).read()
    src = re.sub(r"#[^\n]*", "", src)
    sigs = {}
    for m in re.finditer(r"def\s+(\w+)\s*\((.*?)\)\s*->\s*(.*?)\s*\{", src, re.S):
        params = []
        for p in split_top(m.group(2)):
            name, _, ty = p.partition(":")
            params.append((name.strip(), parse_type(ty)))
        sigs[m.group(1)] = (params, parse_type(m.group(3)))
    return sigs


def convert_input(v, ty, where):
    if ty[0] == "tuple":
        assert isinstance(v, (list, tuple)) and len(v) == len(ty[1]), where
        return tuple(convert_input(e, t, where) for e, t in zip(v, ty[1]))
    dtype, rank = ty
    if rank > 0:
        assert isinstance(v, (list, tuple)), where
        return [convert_input(e, (dtype, rank - 1), where) for e in v]
    if dtype == "bool":
        assert isinstance(v, bool), where
        return v
    if dtype == "i64":
        assert isinstance(v, int) and not isinstance(v, bool), where
        assert I64_MIN <= v <= I64_MAX, where
        return v
    assert isinstance(v, (int, float)) and not isinstance(v, bool), where
    return f32(float(v)) if dtype == "f32" else float(v)


def typed_output(v, ty, where):
    """Checks a reference result against the declared structure; returns (json, type string)."""
    if ty[0] == "tuple":
        assert isinstance(v, tuple) and len(v) == len(ty[1]), "%s: expected a %d-tuple, got %r" % (where, len(ty[1]), v)
        parts = [typed_output(e, t, where) for e, t in zip(v, ty[1])]
        return [p[0] for p in parts], "(" + ", ".join(p[1] for p in parts) + ")"
    dtype, rank = ty
    shape = []

    def walk(x, r):
        if r == 0:
            return scalar_json(x, dtype, where)
        assert isinstance(x, list), "%s: expected a rank-%d list, got %r" % (where, r, x)
        depth = rank - r
        if len(shape) <= depth:
            shape.append(len(x))
        assert shape[depth] == len(x), "%s: ragged tensor" % where
        return [walk(e, r - 1) for e in x]

    j = walk(v, rank)
    while len(shape) < rank:
        shape.append(0)  # below an empty dimension; cases with other shapes override the type
    return j, dtype + ("[" + ", ".join(str(d) for d in shape) + "]" if rank else "")


def scalar_json(x, dtype, where):
    if dtype == "bool":
        assert isinstance(x, bool), "%s: expected bool, got %r" % (where, x)
        return x
    if dtype == "i64":
        assert isinstance(x, int) and not isinstance(x, bool), "%s: expected i64, got %r" % (where, x)
        assert I64_MIN <= x <= I64_MAX, where
        return x
    assert isinstance(x, float), "%s: expected a real, got %r" % (where, x)
    if dtype == "f32":
        assert math.isnan(x) or f32(x) == x, "%s: %r is not an f32 value" % (where, x)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x


def input_json(v):
    if isinstance(v, (list, tuple)):
        return [input_json(e) for e in v]
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return v


def build_cases(src_dir, name, funcs, cases):
    sigs = signatures(os.path.join(src_dir, name + ".cot"))
    missing = set(sigs) - set(funcs)
    assert not missing, "%s.cot: no reference for %s" % (name, sorted(missing))
    out = []
    for case in cases:
        fn, inp = case[0], case[1]
        error = case[2] if len(case) > 2 else None
        tol = case[3] if len(case) > 3 and case[3] is not None else DEFAULT_TOL
        type_override = case[4] if len(case) > 4 else None
        params, result_ty = sigs[fn]
        where = "%s.%s(%s)" % (name, fn, json.dumps(input_json(inp))[:60])
        assert [p[0] for p in params] == list(inp), "%s: parameters are %s" % (where, [p[0] for p in params])
        args = [convert_input(inp[p], t, where) for p, t in params]
        entry = {"fn": fn, "input": {p: input_json(a) for (p, _), a in zip(params, args)}}
        try:
            value = funcs[fn](*args)
        except RefError as e:
            assert error is not None, "%s: the reference failed: %s" % (where, e)
            entry["error"] = error
            out.append(entry)
            continue
        assert error is None, "%s: the reference succeeded (%r) but an error is expected" % (where, value)
        expected, type_string = typed_output(value, result_ty, where)
        entry["expected"] = expected
        entry["type"] = type_override or type_string
        entry["tol"] = tol
        out.append(entry)
    return {"cases": out}


def render(doc):
    lines = ['{"cases": [']
    for k, case in enumerate(doc["cases"]):
        sep = "," if k + 1 < len(doc["cases"]) else ""
        lines.append("  " + json.dumps(case, allow_nan=False) + sep)
    lines.append("]}")
    return "\n".join(lines) + "\n"


def main(argv):
    check_only = "--check" in argv
    stale = []
    jobs = [(PROGRAMS, name, PROGRAMS, f, c) for name, (f, c) in ALL.items()]
    jobs += [(EXAMPLE_SOURCES, name, EXAMPLE_CASES, f, c) for name, (f, c) in EXAMPLES.items()]
    for src_dir, name, out_dir, funcs, cases in jobs:
        text = render(build_cases(src_dir, name, funcs, cases))
        os.makedirs(out_dir, exist_ok=True)
        path = os.path.join(out_dir, name + ".json")
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            stale.append(path)
            if not check_only:
                with open(path, "w") as f:
                    f.write(text)
    programs = {os.path.splitext(f)[0] for f in os.listdir(PROGRAMS) if f.endswith(".cot")}
    assert programs == set(ALL), "programs without reference: %s" % sorted(programs - set(ALL))
    examples = {os.path.splitext(f)[0] for f in os.listdir(EXAMPLE_SOURCES) if f.endswith(".cot")}
    assert examples == set(EXAMPLES), "examples without reference: %s" % sorted(examples - set(EXAMPLES))
    if check_only and stale:
        print("out of date: " + ", ".join(stale))
        return 1
    print("%s %d files" % ("checked" if check_only else "wrote", len(jobs)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
