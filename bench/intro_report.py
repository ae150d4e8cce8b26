#!/usr/bin/python3
"""Turns the CSV of bench/intro_scaling.cpp and bench/torch_intro.py into the scaling table of
docs/benchmarks.md (markdown, on stdout) and its log-log plot.

    intro_report.py COTANGENT.csv TORCH.csv --plot docs/img/intro_scaling.png

Times are medians. "grad/primal" is each implementation's time of the value and gradient over
the time of the function alone. The last two columns are PyTorch's time over Cotangent's at
--opt=2, for the function and for its value and gradient: above 1, Cotangent is faster.
"""

import argparse
import csv
import sys


def load(path):
    rows = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            rows[(r["impl"], r["fn"], r["what"], r["opt"], int(r["n"]))] = float(r["median_s"])
    return rows


def ms(t):
    """A time with its unit, three significant digits: 5.41 µs, 74.4 µs, 9.70 s."""
    if t is None:
        return "—"
    for scale, unit in ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs")):
        if t >= scale:
            break
    v = t / scale
    return f"{v:#.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "—"
    r = a / b
    return f"{r:.2f}" if r < 10 else f"{r:,.0f}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cotangent_csv")
    ap.add_argument("torch_csv")
    ap.add_argument("--plot", help="write a log-log PNG here")
    args = ap.parse_args()
    rows = load(args.cotangent_csv)
    rows.update(load(args.torch_csv))
    fns = [fn for fn in ("traces", "row_col") if any(k[1] == fn for k in rows)]
    sizes = sorted({k[4] for k in rows})

    def get(impl, fn, what, opt, n):
        return rows.get((impl, fn, what, opt, n))

    out = sys.stdout
    out.write("| function | n | Cotangent --opt=2: primal | grad | grad/primal "
              "| Cotangent --opt=0: primal | grad "
              "| PyTorch: primal | grad | grad/primal "
              "| PyTorch ÷ Cotangent --opt=2: primal | grad |\n")
    out.write("|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
    for fn in fns:
        for n in sizes:
            c2p, c2g = get("cotangent", fn, "primal", "2", n), get("cotangent", fn, "grad", "2", n)
            c0p, c0g = get("cotangent", fn, "primal", "0", n), get("cotangent", fn, "grad", "0", n)
            tp, tg = get("torch", fn, "primal", "-", n), get("torch", fn, "grad", "-", n)
            out.write(f"| {fn} | {n} | {ms(c2p)} | {ms(c2g)} | {ratio(c2g, c2p)} | {ms(c0p)} "
                      f"| {ms(c0g)} | {ms(tp)} | {ms(tg)} | {ratio(tg, tp)} "
                      f"| {ratio(tp, c2p)} | {ratio(tg, c2g)} |\n")
    out.write("\nMedian wall-clock times; grad = value and gradient. The last two columns: "
              "PyTorch's time over Cotangent's at --opt=2 (above 1, Cotangent is faster).\n")

    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, axes = plt.subplots(1, len(fns), figsize=(5.5 * len(fns), 4.2), squeeze=False)
        series = [
            ("cotangent", "primal", "2", "Cotangent --opt=2, f", "C0", "-", "o"),
            ("cotangent", "grad", "2", "Cotangent --opt=2, value and grad", "C0", "--", "s"),
            ("cotangent", "primal", "0", "Cotangent --opt=0, f", "C2", ":", "o"),
            ("cotangent", "grad", "0", "Cotangent --opt=0, value and grad", "C2", ":", "s"),
            ("torch", "primal", "-", "PyTorch, f", "C1", "-", "o"),
            ("torch", "grad", "-", "PyTorch, value and grad", "C1", "--", "s"),
        ]
        for ax, fn in zip(axes[0], fns):
            for impl, what, opt, label, color, style, marker in series:
                pts = [(n, get(impl, fn, what, opt, n)) for n in sizes]
                pts = [(n, t) for n, t in pts if t is not None]
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], color=color,
                            linestyle=style, marker=marker, label=label)
            # Guides: slopes 1 and 2 through the smallest PyTorch gradient time.
            t0 = get("torch", fn, "grad", "-", sizes[0])
            if t0:
                for k, lbl, style in ((1, "∝ n", "-"), (2, "∝ n²", "-.")):
                    ax.plot(sizes, [t0 * (n / sizes[0]) ** k for n in sizes], color="0.6",
                            linestyle=style, linewidth=0.8, label=lbl)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlabel("n")
            ax.set_ylabel("median time (s)")
            ax.set_title(fn)
            ax.grid(True, which="major", linewidth=0.4)
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=110)


if __name__ == "__main__":
    main()
