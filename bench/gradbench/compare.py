#!/usr/bin/env python3
"""Times two builds of `cotangent` side by side on one eval's workloads: a change's effect,
measured as a ratio in one run. For each workload and round the two tools alternate (each a
`cotangent gradbench` process, defined once per eval), so drift in the machine's load falls on
both; a figure is the median of an evaluate's timings, and the table shows each round.

    compare.py BEFORE AFTER --eval ht [--workloads hand5,hand9] [--rounds 2]
               [--min-seconds 0.5] [--cpu 0]
"""
import argparse
import statistics
import sys

import workloads as wl
from run import Tool, pin_to


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("before")
    ap.add_argument("after")
    ap.add_argument("--eval", required=True)
    ap.add_argument("--workloads", default="", help="prefixes of the workloads to run")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--min-seconds", type=float, default=0.5)
    ap.add_argument("--cpu", type=int, default=None, help="pin both tools to this CPU")
    args = ap.parse_args()
    pin = pin_to(args.cpu)
    prefixes = [p for p in args.workloads.split(",") if p]
    tools = {}
    for label, binary in (("before", args.before), ("after", args.after)):
        tool = Tool(pin + [binary, "gradbench", "--threads", "1"])
        tool.send({"kind": "start", "eval": args.eval})
        defined = tool.send({"kind": "define", "module": args.eval})
        if not defined.get("success"):
            sys.exit(f"{label}: {args.eval} not defined: {defined.get('error')}")
        tools[label] = tool
    functions = wl.FUNCTIONS[args.eval]
    print(f"| workload | function | {args.before} (ms) | {args.after} (ms) | before / after |")
    print("|---|---|---:|---:|---:|")
    for desc, inp in wl.workloads(args.eval, False):
        if prefixes and not any(desc.startswith(p) for p in prefixes):
            continue
        inp = dict(inp, min_runs=1, min_seconds=args.min_seconds)
        for fn in functions:
            times = {"before": [], "after": []}
            for _ in range(args.rounds):
                for label, tool in tools.items():
                    r = tool.send({"kind": "evaluate", "module": args.eval, "function": fn,
                                   "input": inp})
                    if not r.get("success"):
                        sys.exit(f"{label}: {desc} {fn} failed: {r.get('error', '')[:500]}")
                    ns = [t["nanoseconds"] for t in r["timings"] if t["name"] == "evaluate"]
                    times[label].append(statistics.median(ns) / 1e6)
            b = " ".join(f"{t:.3f}" for t in times["before"])
            a = " ".join(f"{t:.3f}" for t in times["after"])
            ratio = statistics.median(times["before"]) / statistics.median(times["after"])
            print(f"| {desc} | {fn} | {b} | {a} | {ratio:.2f} |", flush=True)
    for tool in tools.values():
        tool.close()


if __name__ == "__main__":
    main()
