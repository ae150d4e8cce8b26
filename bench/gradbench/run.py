#!/usr/bin/env python3
"""Runs GradBench's evals at their default workloads through `cotangent gradbench` (the tool
protocol, one process per eval, as GradBench's intermediary runs a tool) and, on the same
inputs in the same run, through the project's PyTorch implementations (torch_evals.py).

Each evaluate repeats its function per GradBench's Runs convention (at least min_runs calls
and min_seconds in all); a workload's figure is the mean of its timings, as GradBench's
scores use, and the median beside it. The outputs of the two tools are compared (ρ ≤ 1e-4,
GradBench's tolerance). Writes OUT/gradbench.json; report.py turns it into tables and a plot.

    run.py COTANGENT OUT [--evals gmm,lse,...] [--quick] [--min-seconds S] [--no-torch]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import workloads as wl

RHO = 1e-4


def rho_ok(x, y, path="output"):
    """The first mismatch between two JSON values (GradBench's comparison), or None."""
    if isinstance(x, (int, float)) and isinstance(y, (int, float)):
        bad = abs(x - y) / max(1.0, abs(x) + abs(y)) > RHO
        return f"{path}: {x} vs {y}" if bad else None
    if isinstance(x, list) and isinstance(y, list):
        if len(x) != len(y):
            return f"{path}: lengths {len(x)} vs {len(y)}"
        for i, (a, b) in enumerate(zip(x, y)):
            if (m := rho_ok(a, b, f"{path}[{i}]")):
                return m
        return None
    if isinstance(x, dict) and isinstance(y, dict):
        if set(x) != set(y):
            return f"{path}: keys {sorted(x)} vs {sorted(y)}"
        for k in x:
            if (m := rho_ok(x[k], y[k], f"{path}.{k}")):
                return m
        return None
    return None if x == y else f"{path}: {x!r} vs {y!r}"


class Tool:
    """`cotangent gradbench` as a child process, one JSON message per line."""

    def __init__(self, cmd):
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True, bufsize=1)
        self.id = 0

    def send(self, message):
        message = dict(message, id=self.id)
        self.id += 1
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("the tool ended without answering")
        response = json.loads(line)
        if response.get("id") != message["id"]:
            raise RuntimeError(f"response id {response.get('id')} for message {message['id']}")
        return response

    def close(self):
        self.proc.stdin.close()
        self.proc.wait()


def timed(call, min_runs, min_seconds):
    """GradBench's Runs loop in Python: (nanoseconds per call, the last result)."""
    ns, total, result = [], 0, None
    while len(ns) < min_runs or total < min_seconds * 1e9:
        t0 = time.perf_counter_ns()
        result = call()
        ns.append(time.perf_counter_ns() - t0)
        total += ns[-1]
    return ns, result


def summary(ns):
    return {"mean_ns": statistics.fmean(ns), "median_ns": statistics.median(ns), "runs": len(ns)}


def pin_to(cpu):
    """Pins this process to `cpu` (none: no pinning); returns the prefix that pins a child."""
    if cpu is None:
        return []
    os.sched_setaffinity(0, {cpu})
    return ["taskset", "-c", str(cpu)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cotangent")
    ap.add_argument("out")
    ap.add_argument("--evals", default=",".join(wl.ORDER))
    ap.add_argument("--quick", action="store_true", help="a few small workloads per eval")
    ap.add_argument("--min-seconds", type=float, default=1.0)
    ap.add_argument("--no-torch", action="store_true")
    ap.add_argument("--cpu", type=int, default=None, help="pin both tools to this CPU")
    args = ap.parse_args()
    pin = pin_to(args.cpu)
    torch_evals = {}
    if not args.no_torch:
        import torch
        torch.set_num_threads(1)
        import torch_evals as te
        torch_evals = te.EVALS
    rows = []
    for name in args.evals.split(","):
        functions = wl.FUNCTIONS[name]
        tool = Tool(pin + [args.cotangent, "gradbench", "--threads", "1"])
        tool.send({"kind": "start", "eval": name})
        defined = tool.send({"kind": "define", "module": name})
        if not defined.get("success"):
            print(f"{name}: not defined: {defined.get('error')}", file=sys.stderr)
            tool.close()
            continue
        peer = torch_evals[name]() if name in torch_evals else None
        for desc, inp in wl.workloads(name, args.quick):
            inp = dict(inp, min_runs=1, min_seconds=args.min_seconds)
            state = peer.prepare(inp) if peer else None
            for fn in functions:
                t0 = time.perf_counter()
                r = tool.send({"kind": "evaluate", "module": name, "function": fn,
                               "input": inp, "description": desc})
                wall = time.perf_counter() - t0
                row = {"eval": name, "workload": desc, "function": fn, "tool": "cotangent",
                       "success": bool(r.get("success")), "wall_s": wall}
                if row["success"]:
                    row.update(summary([x["nanoseconds"] for x in r["timings"]
                                        if x["name"] == "evaluate"]))
                else:
                    row["error"] = r.get("error", "")[:2000]
                rows.append(row)
                line = f"{name} {desc} {fn}: cotangent " + (
                    f"{row['mean_ns'] / 1e6:.3f} ms" if row["success"] else "FAILED")
                if peer:
                    ns, result = timed(lambda: getattr(peer, fn)(state), 1, args.min_seconds)
                    prow = {"eval": name, "workload": desc, "function": fn, "tool": "pytorch",
                            "success": True, **summary(ns)}
                    if row["success"]:
                        mismatch = rho_ok(peer.output(fn, result), r["output"])
                        prow["agrees"] = row["agrees"] = mismatch is None
                        if mismatch:
                            prow["mismatch"] = mismatch
                    rows.append(prow)
                    line += f", pytorch {prow['mean_ns'] / 1e6:.3f} ms" + (
                        "" if prow.get("agrees", True) else f" (DISAGREE: {prow['mismatch']})")
                print(line, file=sys.stderr, flush=True)
        tool.close()
        save(rows, args.out)  # after every eval: a long run interrupted keeps what it measured


def save(rows, out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "gradbench.json"), "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
