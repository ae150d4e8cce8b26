"""Per-call time of compiled functions called from Python (the package's Function on NumPy
arrays), beside call_overhead.cpp's C++ calls (bench/run_python_overhead.sh).
Usage: call_overhead.py CASE CALLS [--out]: one JSON line, the median over 15 batches of the
time per call in nanoseconds; --out passes preallocated result arrays (out=)."""

import json
import os
import sys
import time

import numpy as np

import cotangent

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def filled(shape, phase):
    n = int(np.prod(shape))
    return (0.5 * np.sin(0.37 * np.arange(n) + phase)).reshape(shape)


def main():
    which, calls = sys.argv[1], int(sys.argv[2])
    use_out = "--out" in sys.argv[3:]
    if which == "tiny":
        f = cotangent.load(os.path.join(ROOT, "bench/python/overhead.cot"), threads=1).tiny
        args = (0.75,)
    elif which == "scale":
        f = cotangent.load(os.path.join(ROOT, "bench/python/overhead.cot"), threads=1).scale
        args = (2.0, filled((8,), 0.0))
    elif which == "gmm_grad":
        m = cotangent.load(os.path.join(ROOT, "examples/gradbench/gmm.cot"), threads=1)
        f = cotangent.grad(m.objective, "alpha", "mu", "q", "l")
        d, k, n = 10, 25, 1000
        args = (filled((k,), 0.1), filled((k, d), 0.2), filled((k, d), 0.3),
                filled((k, d * (d - 1) // 2), 0.4), filled((n, d), 0.5), 0, 1.0)
    else:
        sys.exit(f"unknown case {which}")
    result = f(*args)
    kwargs = {}
    if use_out:
        if isinstance(result, tuple):
            kwargs["out"] = tuple(np.empty_like(r) for r in result)
        elif isinstance(result, np.ndarray):
            kwargs["out"] = np.empty_like(result)
        else:
            sys.exit(f"{which} returns a number: nothing for out=")
    per_call = []
    for batch in range(16):
        t0 = time.perf_counter_ns()
        for _ in range(calls):
            f(*args, **kwargs)
        t1 = time.perf_counter_ns()
        if batch:
            per_call.append((t1 - t0) / calls)
    per_call.sort()
    side = "python_out" if use_out else "python"
    print(json.dumps({"side": side, "case": which, "ns_per_call": round(per_call[len(per_call) // 2], 1)}))


if __name__ == "__main__":
    main()
