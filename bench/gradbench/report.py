#!/usr/bin/env python3
"""Tables and a plot from run.py's OUT/gradbench.json: per eval and workload, Cotangent's
primal and derivative times (means of GradBench's per-run timings), J/F, and PyTorch's
derivative time with the ratio PyTorch / Cotangent; per eval the median J/F against the issue's
targets.

    report.py OUT/gradbench.json OUT/gradbench.md PLOT.png [MACHINE-LINE]
"""
import json
import statistics
import sys
from collections import defaultdict

import workloads as wl

TARGET = {"gmm": 2.5, "lstm": 2.5, "lse": 2.5, "llsq": 2.5, "kmeans": 2.5, "ode": 2.5,
          "ba": 6, "ht": 25}


def ms(ns):
    return f"{ns / 1e6:.3f}"


def main():
    rows = json.load(open(sys.argv[1]))
    machine = sys.argv[4] if len(sys.argv) > 4 else ""
    cell = {}
    order = defaultdict(list)
    for r in rows:
        key = (r["eval"], r["workload"])
        if key not in order[r["eval"]]:
            order[r["eval"]].append(key)
        cell[(r["eval"], r["workload"], r["function"], r["tool"])] = r
    out = []
    summary = []
    jf_by_eval = {}
    for name in [e for e in wl.ORDER if e in order]:
        fns = wl.FUNCTIONS[name]
        out.append(f"### {name}\n")
        if len(fns) == 2:
            p, d = fns
            torch = any(k[3] == "pytorch" and k[0] == name for k in cell)
            head = f"| workload | {p} (ms) | {d} (ms) | J/F |"
            sep = "|---|---:|---:|---:|"
            if torch:
                head += f" PyTorch {d} (ms) | PyTorch / Cotangent |"
                sep += "---:|---:|"
            out += [head, sep]
            jfs, speedups = [], []
            for _, desc in order[name]:
                cp, cd = cell.get((name, desc, p, "cotangent")), cell.get((name, desc, d, "cotangent"))
                if not (cp and cd and cp["success"] and cd["success"]):
                    out.append(f"| {desc} | failed | | | |")
                    continue
                jf = cd["mean_ns"] / cp["mean_ns"]
                jfs.append(jf)
                line = f"| {desc} | {ms(cp['mean_ns'])} | {ms(cd['mean_ns'])} | {jf:.2f} |"
                if torch:
                    td = cell.get((name, desc, d, "pytorch"))
                    if td:
                        s = td["mean_ns"] / cd["mean_ns"]
                        speedups.append(s)
                        flag = "" if td.get("agrees", True) else " (outputs disagree)"
                        line += f" {ms(td['mean_ns'])} | {s:.1f}{flag} |"
                    else:
                        line += " | |"
                out.append(line)
            if jfs:
                jf_by_eval[name] = jfs
                target = TARGET.get(name)
                summary.append(
                    f"| {name} | {statistics.median(jfs):.2f} | {max(jfs):.2f} | "
                    f"{target if target else '—'} | "
                    + (f"{statistics.median(speedups):.1f} |" if speedups else "— |"))
        else:
            out += ["| workload | " + " | ".join(f"{f} (ms)" for f in fns) + " |",
                    "|---|" + "---:|" * len(fns)]
            for _, desc in order[name]:
                cs = [cell.get((name, desc, f, "cotangent")) for f in fns]
                out.append(f"| {desc} | " + " | ".join(
                    ms(c["mean_ns"]) if c and c["success"] else "failed" for c in cs) + " |")
        out.append("")
    head = ["| eval | median J/F | worst J/F | target | median PyTorch / Cotangent (derivative) |",
            "|---|---:|---:|---:|---:|"]
    text = "\n".join(([machine, ""] if machine else []) + ["### Summary\n"] + head + summary
                     + [""] + out)
    open(sys.argv[2], "w").write(text + "\n")
    print(text)
    plot(jf_by_eval, sys.argv[3])


def plot(jf_by_eval, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    names = list(jf_by_eval)
    fig, ax = plt.subplots(figsize=(8, 4))
    for i, name in enumerate(names):
        ys = jf_by_eval[name]
        ax.scatter([i] * len(ys), ys, s=14, color="tab:blue", alpha=0.7)
        if name in TARGET:
            ax.plot([i - 0.3, i + 0.3], [TARGET[name]] * 2, color="tab:red", lw=2)
    ax.set_xticks(range(len(names)), names)
    ax.set_yscale("log")
    ax.set_ylabel("derivative time / primal time (J/F)")
    ax.set_title("Cotangent on GradBench's workloads, one thread (red: the target)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
