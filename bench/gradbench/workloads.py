"""GradBench's default workloads (its evals, design.md §14), as (eval,
description, input) with the sizes and value distributions GradBench's eval programs use.
The random streams are numpy's, seeded as GradBench seeds them where it does, but not drawn in
the same order: the inputs have GradBench's shapes and statistics, not its exact numbers.
ba and ht read GradBench's data files; lstm draws a stand-in text of GradBench's shape (the
Shakespeare text is not available here), 14 bits per character.
"""
import math
import os

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.environ.get("GRADBENCH_DATA",
                      os.path.normpath(os.path.join(HERE, "..", "..", "..", "shared", "data",
                                                    "gradbench")))

# The functions of each eval: (primal, derivative); particle and saddle have four modes.
FUNCTIONS = {
    "gmm": ("objective", "jacobian"),
    "ba": ("objective", "jacobian"),
    "ht": ("objective", "jacobian"),
    "lstm": ("objective", "jacobian"),
    "lse": ("primal", "gradient"),
    "llsq": ("primal", "gradient"),
    "kmeans": ("cost", "dir"),
    "ode": ("primal", "gradient"),
    "det": ("primal", "gradient"),
    "particle": ("ff", "fr", "rf", "rr"),
    "saddle": ("ff", "fr", "rf", "rr"),
}
ORDER = ["gmm", "ba", "ht", "lstm", "lse", "llsq", "kmeans", "ode", "det", "particle", "saddle"]


def gmm(quick):
    sizes = [(d, k) for d in (2, 10, 20, 32, 64) for k in (5, 10, 25, 50, 100)]
    sizes.sort(key=lambda s: s[0] * s[1])
    if quick:
        sizes = [(2, 5), (10, 25)]
    n = 1000
    for d, k in sizes:
        rng = np.random.default_rng(31337)
        yield f"{d}_{k}_{n}", {
            "d": d, "k": k, "n": n, "m": 0, "gamma": 1.0,
            "x": rng.standard_normal((n, d)).tolist(),
            "alpha": rng.standard_normal(k).tolist(),
            "mu": rng.uniform(size=(k, d)).tolist(),
            "q": rng.standard_normal((k, d)).tolist(),
            "l": rng.standard_normal((k, d * (d - 1) // 2)).tolist(),
        }


def ba(quick):
    files = sorted((f for f in os.listdir(os.path.join(DATA, "ba")) if f.startswith("ba")),
                   key=lambda f: int(f[2:f.index("_")]))
    files = [f for f in files if int(f[2:f.index("_")]) <= (1 if quick else 14)]
    for f in files:
        with open(os.path.join(DATA, "ba", f)) as fh:
            rows = [list(map(float, line.split())) for line in fh if line.strip()]
        n, m, p = (int(v) for v in rows[0])
        yield f[:-4], {"n": n, "m": m, "p": p, "cam": rows[1], "x": rows[2], "w": rows[3][0],
                       "feat": rows[4]}


def ht(quick):
    # Provided by ht_input.py (the ADBench hand files and model folder to GradBench's JSON).
    from ht_input import workloads
    yield from workloads(os.path.join(DATA, "ht"), quick)


def lstm(quick):
    sizes = [(l, c) for l in (2, 4, 6) for c in (1024, 4096, 8192)]
    if quick:
        sizes = [(2, 1024)]
    b = 14
    rng = np.random.default_rng(31337)
    # A stand-in text: code points of English letters and punctuation, as bits.
    codes = rng.integers(32, 123, size=max(c for _, c in sizes))
    bits = [[float((int(ch) >> j) & 1) for j in range(b)] for ch in codes]
    for l, c in sizes:
        yield f"l={l},c={c}", {
            "main_params": rng.random((2 * l, 4 * b)).tolist(),
            "extra_params": rng.random((3, b)).tolist(),
            "state": rng.random((2 * l, b)).tolist(),
            "sequence": bits[:c],
        }


def lse(quick):
    rng = np.random.default_rng(31337)
    for i in range(2 if quick else 10):
        n = 2500 * 2 ** i
        yield f"n={n}", {"x": rng.uniform(size=n).tolist()}


def llsq(quick):
    ns = [16 * 2 ** i for i in range(9)] + [8196, 16392]
    if quick:
        ns = [16, 4096]
    for n in ns:
        rng = np.random.default_rng(31337)
        yield f"n={n},m=128", {"x": rng.uniform(size=128).tolist(), "n": n}


def kmeans(quick):
    sizes = [(k, n, d) for k in (10, 100, 1000) for n in (1000, 10000) for d in (8, 16)]
    sizes.sort(key=lambda s: s[0] * s[1] * s[2])
    if quick:
        sizes = [(10, 1000, 8), (100, 10000, 16)]
    for k, n, d in sizes:
        rng = np.random.default_rng(31337)
        points = rng.uniform(size=(n, d))
        yield f"k={k},n={n},d={d}", {"points": points.tolist(),
                                     "centroids": points[n - k:].tolist()}


def ode(quick):
    sizes = [(n, s) for n in (1000, 10000, 100000) for s in (1, 10, 100)]
    if quick:
        sizes = [(1000, 10), (10000, 10)]
    for n, s in sizes:
        rng = np.random.default_rng(31337)
        yield f"n={n},s={s}", {"x": rng.uniform(size=n).tolist(), "s": s}


def det(quick):
    for ell in range(5, 8 if quick else 12):
        rng = np.random.default_rng(31337)
        yield f"{ell}", {"A": rng.uniform(size=ell * ell).tolist(), "ell": ell}


def particle(quick):
    yield "w=0", {"w": 0.0}


def saddle(quick):
    yield "w=0", {"start": [1.0, 1.0]}


def workloads(name, quick=False):
    """(description, input) of each of the eval's default workloads (a few with quick)."""
    return list(globals()[name](quick))
