#!/usr/bin/env python3
"""Turns bench/run_native.sh's measurements into the table of docs/benchmarks.md and a plot.

    report.py RAW.jsonl OUT.md PLOT.png MACHINE COMMAND
"""
import json
import statistics
import sys


def rho(x, y):
    return abs(x - y) / max(1.0, abs(x) + abs(y))


def flatten(v):
    if isinstance(v, list):
        out = []
        for e in v:
            out.extend(flatten(e))
        return out
    return [float(v)]


def main():
    raw, out_md, plot, machine, command = sys.argv[1:6]
    rows = [json.loads(line) for line in open(raw) if line.strip()]
    kernels = []
    rounds = {}
    for r in rows:
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
        rounds.setdefault((r["kernel"], r["what"], r["threads"]), []).append(r["result"])
    # Per measurement, the median over the rounds of each process's median; the compile time of
    # the first round (the cache is empty then), the value of the first.
    m = {}
    for key, results in rounds.items():
        first = dict(results[0])
        if "median_s" in first:
            first["median_s"] = statistics.median(x["median_s"] for x in results)
            first["rounds"] = len(results)
        m[key] = first
    lines = [
        f"Measured with `{command}` on {machine}",
        "",
        "| kernel | hand-written C++ | Cotangent primal | ratio (≤ 1.25) | loss | gradient | "
        "gradient / loss (≤ 3) | compile primal / gradient | speed-up on 2 threads "
        "(primal, gradient) | same value |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    fig = []
    for k in kernels:
        base = m[(k, "baseline", 1)]
        prim = m[(k, "primal", 1)]
        loss = m[(k, "loss", 1)]
        grad = m[(k, "grad", 1)]
        prim2 = m[(k, "primal", 2)]
        grad2 = m[(k, "grad", 2)]
        value = flatten(m[(k, "value", 1)]["result"])
        same = rho(sum(value), base["value"]) <= 1e-10
        r1 = prim["median_s"] / base["median_s"]
        r2 = grad["median_s"] / loss["median_s"]
        ms = lambda s: f"{s * 1e3:.3g} ms"
        lines.append(
            f"| {k} | {ms(base['median_s'])} | {ms(prim['median_s'])} | {r1:.2f} | "
            f"{ms(loss['median_s'])} | {ms(grad['median_s'])} | {r2:.2f} | "
            f"{prim['compile_s']:.2f} s / {grad['compile_s']:.2f} s | "
            f"{prim['median_s'] / prim2['median_s']:.2f}, {grad['median_s'] / grad2['median_s']:.2f} | "
            f"{'yes' if same else 'NO'} |")
        fig.append((k, r1, r2))
    lines.append("")
    n_rounds = max(len(v) for v in rounds.values())
    lines.append(f"Times are medians over {n_rounds} processes, interleaved, of each process's "
                 "median run (one warm-up call first); compile times are the first process's, "
                 "with an empty cache. The hand-written C++ reads the same .npy inputs and its "
                 "checksum must equal Cotangent's value (ρ ≤ 1e-10: the last column).")
    open(out_md, "w").write("\n".join(lines) + "\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        fig_, ax = plt.subplots(figsize=(7, 3.2))
        xs = range(len(fig))
        ax.bar([x - 0.2 for x in xs], [f[1] for f in fig], width=0.4,
               label="primal / hand-written C++")
        ax.bar([x + 0.2 for x in xs], [f[2] for f in fig], width=0.4, label="gradient / loss")
        ax.axhline(1.25, color="C0", linestyle="--", linewidth=1)
        ax.axhline(3.0, color="C1", linestyle="--", linewidth=1)
        ax.set_xticks(list(xs))
        ax.set_xticklabels([f[0] for f in fig])
        ax.set_ylabel("time ratio (one thread)")
        ax.set_yscale("log")
        ax.legend(fontsize=8)
        fig_.tight_layout()
        fig_.savefig(plot, dpi=120)
    except ImportError:
        print("report.py: no matplotlib, no plot", file=sys.stderr)


if __name__ == "__main__":
    main()
