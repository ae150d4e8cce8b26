#!/usr/bin/python3
"""Checks that each plain program of bench/natural/ computes what the tuned program of the same
eval (examples/gradbench/) computes, through `cotangent gradbench` (GradBench's tool protocol)
on GradBench's workloads (bench/gradbench/workloads.py).

For each eval that has a program here, two tools are started, one serving bench/natural and one
serving examples/gradbench. Every function of the eval is evaluated by both on each workload
(the quick ones by default, GradBench's default ones with --all), and the outputs are compared
number by number: rho(x, y) = |x - y| / max(1, |x| + |y|). The script prints the max rho per
workload and function, then per eval and function, and exits 1 if one exceeds the tolerance
(1e-10), if the two outputs have different shapes, or if a function fails in either tool.
Evals with no program here are skipped, with a note.

    /usr/bin/python3 bench/natural/agree.py COTANGENT [--all] [--evals lse,det]
                                            [--workloads 5,6] [--tolerance 1e-10]
                                            [--natural DIR] [--tuned DIR]
"""
import argparse
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench", "gradbench"))

import workloads as wl  # noqa: E402
from run import Tool  # noqa: E402

TUNED = os.path.join(ROOT, "examples", "gradbench")


class Mismatch(Exception):
    """The two outputs do not have the same shape (or are not both numbers)."""


def number(v):
    """A JSON number of an output, or one of the strings the tool writes for non-finite reals."""
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    if v in ("inf", "-inf", "nan"):
        return float(v)
    return None


def rho(x, y):
    if x == y or (math.isnan(x) and math.isnan(y)):
        return 0.0
    if not (math.isfinite(x) and math.isfinite(y)):
        return math.inf
    return abs(x - y) / max(1.0, abs(x) + abs(y))


def max_rho(x, y, path="output"):
    """The largest rho over the numbers of two outputs, which must have the same shape, and the
    path of the number where it is reached."""
    a, b = number(x), number(y)
    if a is not None and b is not None:
        return rho(a, b), path
    if isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            raise Mismatch(f"{path} has {len(x)} elements in natural, {len(y)} in tuned")
        worst = (0.0, path)
        for i, (u, v) in enumerate(zip(x, y)):
            r = max_rho(u, v, f"{path}[{i}]")
            if r[0] > worst[0] or math.isnan(r[0]):
                worst = r
        return worst
    if isinstance(x, dict) and isinstance(y, dict):
        if set(x) != set(y):
            raise Mismatch(f"{path} has keys {sorted(x)} in natural, {sorted(y)} in tuned")
        worst = (0.0, path)
        for k in x:
            r = max_rho(x[k], y[k], f"{path}.{k}")
            if r[0] > worst[0]:
                worst = r
        return worst
    raise Mismatch(f"{path} is {kind(x)} in natural but {kind(y)} in tuned")


def kind(v):
    if number(v) is not None:
        return "a number"
    if isinstance(v, list):
        return f"a list of {len(v)}"
    return type(v).__name__


def start(binary, directory, name):
    tool = Tool([binary, "gradbench", directory, "--threads", "1"])
    tool.send({"kind": "start", "eval": name})
    defined = tool.send({"kind": "define", "module": name})
    if not defined.get("success"):
        tool.close()
        raise RuntimeError(f"{os.path.join(directory, name + '.cot')} is not defined: "
                           f"{defined.get('error')}")
    return tool


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cotangent", help="the cotangent binary")
    ap.add_argument("--all", action="store_true",
                    help="GradBench's default workloads (default: the quick ones)")
    ap.add_argument("--evals", default=",".join(wl.ORDER), help="evals to check (default: all)")
    ap.add_argument("--workloads", default="", help="prefixes of the workloads to run")
    ap.add_argument("--tolerance", type=float, default=1e-10)
    ap.add_argument("--natural", default=HERE, help="the plain programs (default: this folder)")
    ap.add_argument("--tuned", default=TUNED, help="the tuned programs (default: examples/gradbench)")
    args = ap.parse_args()
    prefixes = [p for p in args.workloads.split(",") if p]
    failures = []
    summary = []  # (eval, function, max rho, workloads)
    for name in args.evals.split(","):
        if name not in wl.FUNCTIONS:
            sys.exit(f"agree.py: no eval named {name!r}; the evals are {', '.join(wl.ORDER)}")
        if not os.path.exists(os.path.join(args.natural, name + ".cot")):
            print(f"{name}: skipped, {os.path.join(args.natural, name + '.cot')} does not exist"
                  " (the corpus has the nine evals of issue 28)", flush=True)
            continue
        try:
            tools = {"natural": start(args.cotangent, os.path.abspath(args.natural), name),
                     "tuned": start(args.cotangent, os.path.abspath(args.tuned), name)}
        except RuntimeError as e:
            failures.append(f"{name}: {e}")
            print(f"{name}: FAILED: {e}", flush=True)
            continue
        worst = {fn: [0.0, [], 0] for fn in wl.FUNCTIONS[name]}  # rho, workloads, failures
        for desc, inp in wl.workloads(name, not args.all):
            if prefixes and not any(desc.startswith(p) for p in prefixes):
                continue
            inp = dict(inp, min_runs=1, min_seconds=0)
            for fn in wl.FUNCTIONS[name]:
                outputs, seconds, failed = {}, {}, False
                for label, tool in tools.items():
                    t0 = time.perf_counter()
                    r = tool.send({"kind": "evaluate", "module": name, "function": fn,
                                   "input": inp, "description": desc})
                    seconds[label] = time.perf_counter() - t0
                    if not r.get("success"):
                        message = (f"{name} {desc} {fn}: the {label} program failed: "
                                   f"{str(r.get('error', ''))[:1000]}")
                        failures.append(message)
                        print(message, flush=True)
                        failed = True
                        worst[fn][2] += 1
                        break
                    outputs[label] = r.get("output")
                if failed:
                    continue
                try:
                    r, where = max_rho(outputs["natural"], outputs["tuned"])
                except Mismatch as e:
                    message = f"{name} {desc} {fn}: the outputs' shapes differ: {e}"
                    failures.append(message)
                    print(message, flush=True)
                    worst[fn][2] += 1
                    continue
                bad = not r <= args.tolerance
                if bad:
                    failures.append(f"{name} {desc} {fn}: max rho {r:.3g} > {args.tolerance:g}"
                                    f" at {where}")
                worst[fn][0] = r if (r > worst[fn][0] or math.isnan(r)) else worst[fn][0]
                worst[fn][1].append(desc)
                print(f"{name} {desc} {fn}: max rho {r:.3g}"
                      f"{' at ' + where if r > 0 else ''}{'  EXCEEDS THE TOLERANCE' if bad else ''}"
                      f" (wall: natural {seconds['natural']:.2f} s, tuned {seconds['tuned']:.2f} s)",
                      flush=True)
        for tool in tools.values():
            tool.close()
        for fn, (r, descs, failed) in worst.items():
            summary.append((name, fn, r, descs, failed))
    print()
    print("| eval | function | max rho | workloads compared | failed |")
    print("|---|---|---:|---|---:|")
    for name, fn, r, descs, failed in summary:
        print(f"| {name} | {fn} | {r:.3g} | {' '.join(descs) or '(none)'} | {failed} |")
    if failures:
        print(f"\n{len(failures)} failure(s):", file=sys.stderr)
        for f in failures:
            print(f"  {f}", file=sys.stderr)
        sys.exit(1)
    print(f"\nall agree within rho <= {args.tolerance:g}")


if __name__ == "__main__":
    main()
