#!/usr/bin/python3
"""The introduction programs of [Bernstein20] in PyTorch, timed as bench/intro_scaling.cpp times
Cotangent: same inputs, same rule (one untimed warm-up call that checks the result, then
repeated calls until at least --min-reps runs and --budget seconds, at most --max-reps, none
started after --max-seconds; median and minimum), same CSV:

    impl,fn,what,opt,n,reps,median_s,min_s

what = primal: the function alone (no autograd graph: under torch.no_grad());
       grad:   the value and the gradient, written as a PyTorch user writes them:
               x.requires_grad_(); A = torch.diag(x); y = ...; y.backward(); x.grad.

f64 throughout. Runs with Debian's python3-torch under /usr/bin/python3. PyTorch runs on one
thread by default here (--threads), like the interpreter, and so that the other users of a
shared machine disturb it less; --threads 0 keeps PyTorch's own default.
"""

import argparse
import statistics
import sys
import time

import torch


def traces(x):
    A = torch.diag(x)
    return torch.trace(A) + torch.trace(A) + torch.trace(A) + torch.trace(A)


def row_col(x):
    A = torch.diag(x)
    return torch.dot(A[:, 0], A[0, :])


FUNCTIONS = {"traces": traces, "row_col": row_col}


def make_input(n):
    # Identical to input() in bench/intro_scaling.cpp.
    return torch.tensor([1.0 + 0.001 * (i % 1000) for i in range(n)], dtype=torch.float64)


def primal(f, x0):
    with torch.no_grad():
        return f(x0)


def value_and_grad(f, x):
    """x has requires_grad set; its gradient is reset so that calls do not accumulate."""
    x.grad = None
    y = f(x)
    y.backward()
    return y.detach(), x.grad


def check(name, x0, value, grad):
    """The closed forms of both programs (EX-11, EX-12 of tests/ad/examples_000_test.cpp)."""
    if name == "traces":
        want, want_grad = 4.0 * x0.sum(), torch.full_like(x0, 4.0)
    else:
        want_grad = torch.zeros_like(x0)
        want, want_grad[0] = x0[0] * x0[0], 2.0 * x0[0]
    assert torch.allclose(value, want, rtol=1e-9), (name, value, want)
    if grad is not None:
        assert torch.allclose(grad, want_grad, rtol=1e-9), name


def time_it(warm_up, call, args):
    """The rule of time_it() in bench/intro_scaling.cpp."""
    warm_up()  # untimed; checks the result
    runs = []

    def more():
        if len(runs) >= args.max_reps:
            return False
        if runs and sum(runs) >= args.max_seconds:
            return False
        return len(runs) < args.min_reps or sum(runs) < args.budget

    while more():
        t0 = time.perf_counter()
        call()
        runs.append(time.perf_counter() - t0)
    return len(runs), statistics.median(runs), min(runs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--min-reps", type=int, default=5)
    ap.add_argument("--budget", type=float, default=1.0)
    ap.add_argument("--max-reps", type=int, default=100)
    ap.add_argument("--max-seconds", type=float, default=60.0)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    sizes = [int(s) for s in args.sizes.split(",")]

    print("impl,fn,what,opt,n,reps,median_s,min_s")
    for name, f in FUNCTIONS.items():
        for n in sizes:
            x0 = make_input(n)
            x = x0.clone().requires_grad_()
            cases = (
                ("primal", lambda: check(name, x0, primal(f, x0), None), lambda: primal(f, x0)),
                ("grad", lambda: check(name, x0, *value_and_grad(f, x)),
                 lambda: value_and_grad(f, x)),
            )
            for what, warm_up, call in cases:
                reps, med, lo = time_it(warm_up, call, args)
                print(f"torch,{name},{what},-,{n},{reps},{med:.6e},{lo:.6e}", flush=True)
    print(f"# torch {torch.__version__}, threads {torch.get_num_threads()}", file=sys.stderr)


if __name__ == "__main__":
    main()
