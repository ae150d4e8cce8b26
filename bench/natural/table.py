#!/usr/bin/env python3
"""The plain programs of bench/natural beside the tuned programs of examples/gradbench (as
they were at commit c8bf9bc, through a cotangent built there) and beside GradBench's
hand-written C++ `manual` tool, on GradBench's default workloads (issue 28, item 3).

For every eval with a program in bench/natural and every workload (bench/gradbench/
workloads.py), each function (primal F, derivative J) is evaluated by every tool in turn,
round after round (the tools interleaved, so drift in the machine's load falls on all of
them); a round's figure is the median of GradBench's per-run `evaluate` timings of one
evaluate message, and a cell is the median over the rounds. The ratios are checked against
the issue's targets and a cell that misses its target is marked.

Then, per eval, the compile times of both cotangent builds: the `define` message (its wall
time), and the `prepare` timing of the first evaluate of each function in a new process with
an empty COTANGENT_CACHE_DIR (cold), again in a new process from that cache (warm), and the
second evaluate in that process (compiled code in memory: what is left is converting the input
and allocating the result, `conv`); warm - conv is what the warm cache costs.

    table.py --plain COTANGENT --tuned COTANGENT_C8BF9BC --tuned-dir EXAMPLES_AT_C8BF9BC
             [--manual BIN_DIR] OUT [--quick | --largest] [--evals gmm,ba,...]
             [--rounds 3] [--min-seconds 0.3] [--cpu 0] [--docs docs/benchmarks.md]
             [--machine LINE] [--command LINE] [--report-only]

--manual is the folder of the `manual` tool's executables (GradBench's tools/manual/bin,
built outside this repository; docs/benchmarks.md says how); without it that column is left
out. Writes OUT/natural.json and OUT/natural.md, and with --docs puts natural.md between
`<!-- BEGIN natural -->` and `<!-- END natural -->` in that file.
"""
import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "gradbench"))
import workloads as wl  # noqa: E402
from run import Tool, pin_to, rho_ok  # noqa: E402

EVALS = [e for e in wl.ORDER if os.path.exists(os.path.join(HERE, e + ".cot"))]
TOOLS = ("plain", "tuned", "manual")
# The issue's targets: plain/tuned of J and of F (at most), plain/manual of J (below), and the
# plain program's J/F (at most).
TARGET_J_TUNED, TARGET_F_TUNED, TARGET_J_MANUAL = 1.2, 1.1, 1.0
TARGET_JF = {"gmm": 3, "lstm": 3, "lse": 3, "llsq": 3, "kmeans": 3, "ode": 3, "ba": 6,
             "ht": 20, "det": 4}
TARGET_COLD_S, TARGET_WARM_MS, TARGET_DEFINE_S = 2.0, 20.0, 1.0
MISS = " ✗"


class Manual:
    """GradBench's `manual` tool through the interface its cpp.py driver uses: one process per
    evaluate, `BIN/MODULE INPUT.json FUNCTION`, printing the output and then one JSON timing per
    line. (cpp.py's define rebuilds the executable; here it only has to exist.)"""

    def __init__(self, bindir, pin):
        self.bindir, self.pin = bindir, pin

    def send(self, message):
        kind = message.get("kind")
        if kind == "define":
            exe = os.path.join(self.bindir, message["module"])
            ok = os.access(exe, os.X_OK)
            return {"success": ok} if ok else {"success": False, "error": f"no {exe}"}
        if kind != "evaluate":
            return {}
        with tempfile.NamedTemporaryFile("w", suffix=".json") as tmp:
            json.dump(message["input"], tmp)
            tmp.flush()
            p = subprocess.run(self.pin + [os.path.join(self.bindir, message["module"]),
                                           tmp.name, message["function"]],
                               text=True, capture_output=True)
        if p.returncode != 0:
            return {"success": False, "error": f"exit {p.returncode}: {p.stderr[-2000:]}"}
        lines = p.stdout.splitlines()
        return {"success": True, "output": json.loads(lines[0]),
                "timings": [json.loads(x) for x in lines[1:]]}

    def close(self):
        pass


def used_vertices_only(inp):
    """ht's input with the mesh cut to the vertices its residuals read (the triangles the
    correspondences name, renumbered), as cotangent's ht adapter cuts it before timing."""
    data, model = inp["data"], inp["data"]["model"]
    triangles = model["triangles"]
    tri_ids = sorted(set(data["correspondences"]))
    used = sorted({v for t in tri_ids for v in triangles[t]})
    vnew = {v: i for i, v in enumerate(used)}
    tnew = {t: i for i, t in enumerate(tri_ids)}
    model = dict(model, base_positions=[model["base_positions"][v] for v in used],
                 weights=[model["weights"][v] for v in used],
                 triangles=[[vnew[v] for v in triangles[t]] for t in tri_ids])
    data = dict(data, model=model, correspondences=[tnew[c] for c in data["correspondences"]])
    return dict(inp, data=data), len(used), len(inp["data"]["model"]["base_positions"])


def cotangent_tool(pin, binary, directory, cache):
    os.makedirs(cache, exist_ok=True)
    os.environ["COTANGENT_CACHE_DIR"] = cache
    return Tool(pin + [binary, "gradbench", directory, "--threads", "1"])


def evaluate(tool, name, fn, inp):
    r = tool.send({"kind": "evaluate", "module": name, "function": fn, "input": inp})
    if not r.get("success"):
        raise RuntimeError(r.get("error", "failed")[:1500])
    ns = [t["nanoseconds"] for t in r["timings"] if t["name"] == "evaluate"]
    prep = [t["nanoseconds"] for t in r["timings"] if t["name"] == "prepare"]
    return statistics.median(ns), (prep[0] if prep else None), r["output"]


def compile_times(args, pin, label, binary, directory, name, desc, inp):
    """define, and each function's prepare: cold, warm, in memory (ns)."""
    cache = tempfile.mkdtemp(prefix=f"cot-cache-{label}-{name}-", dir=args.out)
    row = {"eval": name, "tool": label, "workload": desc}
    inp = dict(inp, min_runs=1, min_seconds=0)
    try:
        for phase in ("cold", "warm"):
            tool = cotangent_tool(pin, binary, directory, cache)
            tool.send({"kind": "start", "eval": name})
            t0 = time.perf_counter_ns()
            d = tool.send({"kind": "define", "module": name})
            row[f"define_{phase}_ns"] = time.perf_counter_ns() - t0
            if not d.get("success"):
                raise RuntimeError(d.get("error", "")[:1500])
            for fn in wl.FUNCTIONS[name]:
                row[f"{fn}_{phase}_ns"] = evaluate(tool, name, fn, inp)[1]
                if phase == "warm":
                    row[f"{fn}_conv_ns"] = evaluate(tool, name, fn, inp)[1]
            tool.close()
    except RuntimeError as e:
        row["error"] = str(e)
    shutil.rmtree(cache, ignore_errors=True)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--plain", help="the current cotangent")
    ap.add_argument("--tuned", help="a cotangent built at c8bf9bc")
    ap.add_argument("--tuned-dir", help="examples/gradbench at c8bf9bc")
    ap.add_argument("--manual", default=None, help="GradBench's tools/manual/bin")
    ap.add_argument("--evals", default=",".join(EVALS))
    ap.add_argument("--quick", action="store_true", help="quick workloads, one round")
    ap.add_argument("--largest", action="store_true", help="each eval's largest workload")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--min-seconds", type=float, default=0.3)
    ap.add_argument("--cpu", type=int, default=None, help="pin every tool to this CPU")
    ap.add_argument("--docs", default=None, help="docs/benchmarks.md to update")
    ap.add_argument("--machine", default="")
    ap.add_argument("--command", default="")
    ap.add_argument("--report-only", action="store_true",
                    help="only write the tables from OUT/natural.json")
    args = ap.parse_args()
    if args.quick:
        args.rounds = 1
    args.out = os.path.abspath(args.out)
    os.makedirs(args.out, exist_ok=True)
    if args.report_only:  # the tables again from OUT/natural.json
        saved = json.load(open(os.path.join(args.out, "natural.json")))
        for k, v in saved.get("settings", {}).items():
            setattr(args, k, v)
        finish(args, saved["timings"], saved["compile"])
        return
    if not (args.plain and args.tuned and args.tuned_dir):
        ap.error("--plain, --tuned and --tuned-dir are needed")
    pin = pin_to(args.cpu)
    programs = {"plain": (args.plain, HERE), "tuned": (args.tuned, args.tuned_dir)}
    caches = os.path.join(args.out, "natural-cache")
    rows, compiles = [], []
    for name in args.evals.split(","):
        loads = wl.workloads(name, args.quick)
        if args.largest:
            loads = loads[-1:]
        # Compile times on the first workload run, before anything is in a cache.
        for label, (binary, directory) in programs.items():
            c = compile_times(args, pin, label, binary, directory, name, *loads[0])
            compiles.append(c)
            print(f"{name} compile {label}: " + ", ".join(
                f"{k[:-3]} {v / 1e6:.1f} ms" for k, v in c.items() if k.endswith("_ns")
                and v is not None) + (f" ERROR {c['error'][:300]}" if "error" in c else ""),
                file=sys.stderr, flush=True)
        tools = {}
        for label, (binary, directory) in programs.items():
            tools[label] = cotangent_tool(pin, binary, directory, os.path.join(caches, label))
        if args.manual:
            tools["manual"] = Manual(args.manual, pin)
        for label, tool in list(tools.items()):
            tool.send({"kind": "start", "eval": name})
            d = tool.send({"kind": "define", "module": name})
            if not d.get("success"):
                print(f"{name}: {label} not defined: {d.get('error', '')[:500]}", file=sys.stderr)
                tool.close()
                del tools[label]
        for desc, inp in loads:
            inp = dict(inp, min_runs=1, min_seconds=args.min_seconds)
            inputs = {label: inp for label in tools}
            if name == "ht" and "manual" in tools:  # the adapters' difference, measured
                tools["manual_used"] = tools["manual"]
                inputs["manual_used"], used, total = used_vertices_only(inp)
            for fn in wl.FUNCTIONS[name]:
                times = {label: [] for label in tools}
                outputs, errors = {}, {}
                # The first evaluate of each tool compiles (its prepare); not timed here.
                for rnd in range(args.rounds):
                    for label, tool in tools.items():
                        if label in errors:
                            continue
                        try:
                            ns, _, out = evaluate(tool, name, fn, inputs[label])
                        except RuntimeError as e:
                            errors[label] = str(e)
                            continue
                        times[label].append(ns)
                        if rnd == 0:
                            outputs[label] = out
                row = {"eval": name, "workload": desc, "function": fn}
                if "manual_used" in tools:
                    row["vertices_used"], row["vertices"] = used, total
                for label in tools:
                    if times[label]:
                        row[label + "_rounds_ns"] = times[label]
                        row[label + "_ns"] = statistics.median(times[label])
                    if label in errors:
                        row[label + "_error"] = errors[label]
                for other in ("tuned", "manual"):
                    if "plain" in outputs and other in outputs:
                        m = rho_ok(outputs["plain"], outputs[other])
                        if m:
                            row[f"{other}_mismatch"] = m[:300]
                if "manual_used" in outputs and "manual" in outputs:
                    m = rho_ok(outputs["manual_used"], outputs["manual"])
                    if m:
                        row["manual_used_mismatch"] = m[:300]
                rows.append(row)
                print(f"{name} {desc} {fn}: " + ", ".join(
                    f"{label} {row[label + '_ns'] / 1e6:.3f} ms" if label + "_ns" in row
                    else f"{label} FAILED" for label in tools) + "".join(
                    f" [{o} differs: {row[o + '_mismatch']}]" for o in ("tuned", "manual")
                    if o + "_mismatch" in row), file=sys.stderr, flush=True)
        tools.pop("manual_used", None)
        for tool in tools.values():
            tool.close()
        save(args, rows, compiles)  # after every eval: an interrupted run keeps what it has
    shutil.rmtree(caches, ignore_errors=True)
    finish(args, rows, compiles)


def finish(args, rows, compiles):
    text = report(rows, compiles, args)
    open(os.path.join(args.out, "natural.md"), "w").write(text + "\n")
    print(text)
    if args.docs:
        update_docs(args.docs, text)


def save(args, rows, compiles):
    with open(os.path.join(args.out, "natural.json"), "w") as f:
        settings = {k: getattr(args, k) for k in ("quick", "largest", "rounds", "min_seconds",
                                                  "manual", "machine", "command")}
        json.dump({"settings": settings, "timings": rows, "compile": compiles}, f, indent=1)


def ms(ns):
    if ns is None:
        return "—"
    v = ns / 1e6
    return f"{v:.3g}" if v < 100 else f"{v:.0f}"


def ratio(a, b, target, strict=False):
    if a is None or b is None:
        return "—", None
    r = a / b
    miss = r >= target if strict else r > target
    return f"{r:.2f}" + (MISS if miss else ""), r


def report(rows, compiles, args):
    manual = args.manual is not None
    out = []
    if args.machine:
        out += [args.machine, ""]
    if args.command:
        out += [f"Command: `{args.command}`", ""]
    mode = ("the quick workloads, one round" if args.quick else
            "each eval's largest workload" if args.largest else "every default workload")
    out += [f"Workloads: {mode}; {args.rounds} round(s), each evaluate repeated for "
            f"{args.min_seconds} s; times in ms (medians). {MISS.strip()}: misses its target.", ""]
    summary = ["### Summary (worst workload of each eval)", "",
               "| eval | plain J / tuned J (≤ 1.2) | plain F / tuned F (≤ 1.1) | "
               + ("plain J / manual J (< 1) | " if manual else "")
               + "plain J/F | target J/F |",
               "|---|---:|---:|" + ("---:|" if manual else "") + "---:|---:|"]
    detail = []
    for name in [e for e in EVALS if any(r["eval"] == e for r in rows)]:
        p, d = wl.FUNCTIONS[name]
        cell = {(r["workload"], r["function"]): r for r in rows if r["eval"] == name}
        descs = list(dict.fromkeys(r["workload"] for r in rows if r["eval"] == name))
        head = ("| workload | plain F | plain J | tuned F | tuned J | "
                + ("manual F | manual J | " if manual else "")
                + "J plain/tuned | F plain/tuned | " + ("J plain/manual | " if manual else "")
                + "J/F plain |")
        detail += [f"### {name} (F = {p}, J = {d})", "", head,
                   "|---|" + "---:|" * (head.count("|") - 2)]
        worst = {"jt": None, "ft": None, "jm": None, "jf": None}
        notes = []
        for desc in descs:
            rf, rj = cell.get((desc, p), {}), cell.get((desc, d), {})
            g = lambda r, k: r.get(k + "_ns")
            jt, jt_v = ratio(g(rj, "plain"), g(rj, "tuned"), TARGET_J_TUNED)
            ft, ft_v = ratio(g(rf, "plain"), g(rf, "tuned"), TARGET_F_TUNED)
            jm, jm_v = ratio(g(rj, "plain"), g(rj, "manual"), TARGET_J_MANUAL, strict=True)
            jf, jf_v = ratio(g(rj, "plain"), g(rf, "plain"), TARGET_JF.get(name, 1e9))
            for k, v in (("jt", jt_v), ("ft", ft_v), ("jm", jm_v), ("jf", jf_v)):
                if v is not None and (worst[k] is None or v > worst[k][0]):
                    worst[k] = (v, {"jt": jt, "ft": ft, "jm": jm, "jf": jf}[k])
            line = (f"| {desc} | {ms(g(rf, 'plain'))} | {ms(g(rj, 'plain'))} | "
                    f"{ms(g(rf, 'tuned'))} | {ms(g(rj, 'tuned'))} | ")
            if manual:
                line += f"{ms(g(rf, 'manual'))} | {ms(g(rj, 'manual'))} | "
            line += f"{jt} | {ft} | " + (f"{jm} | " if manual else "") + f"{jf} |"
            detail.append(line)
            for r in (rf, rj):
                for label in TOOLS + ("manual_used",):
                    if label + "_error" in r:
                        notes.append(f"- {desc} {r['function']}: {label} failed: "
                                     + r[label + "_error"].splitlines()[0][:300])
                for o in ("tuned", "manual"):
                    if o + "_mismatch" in r:
                        notes.append(f"- {desc} {r['function']}: plain and {o} differ "
                                     f"(ρ > 1e-4): {r[o + '_mismatch']}")
            if rj.get("manual_used_ns") and rf.get("manual_used_ns") and rj.get("plain_ns"):
                notes.append(
                    f"- {desc}: manual on only the {rj['vertices_used']} of {rj['vertices']} "
                    f"vertices the residuals read (as cotangent's adapter times it): F "
                    f"{ms(rf['manual_used_ns'])}, J {ms(rj['manual_used_ns'])} ms; plain J / "
                    f"that = {rj['plain_ns'] / rj['manual_used_ns']:.2f}")
        detail += [""] + notes + ([""] if notes else [])
        w = lambda k: worst[k][1] if worst[k] else "—"
        summary.append(f"| {name} | {w('jt')} | {w('ft')} | " + (f"{w('jm')} | " if manual else "")
                       + f"{w('jf')} | {TARGET_JF.get(name, '—')} |")
    comp = ["### Compile times", "",
            f"Per eval and build, on the workload named: `define` (target ≤ {TARGET_DEFINE_S:g} s), "
            f"and each function's `prepare` at its first evaluate: cold, from an empty cache "
            f"(target ≤ {TARGET_COLD_S:g} s), warm, in a new process from that cache, and conv, "
            f"the second evaluate in that process (converting the input, allocating the "
            f"result); the warm target ({TARGET_WARM_MS:g} ms) is checked on warm - conv. "
            f"Seconds for define and cold, ms for warm and conv.", "",
            "| eval | build | workload | define cold (s) | define warm (s) | F cold (s) | J cold (s) "
            "| F warm (ms) | J warm (ms) | F conv (ms) | J conv (ms) |",
            "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for c in compiles:
        p, d = wl.FUNCTIONS[c["eval"]]
        sec = lambda k, t: ("—" if c.get(k) is None else
                            f"{c[k] / 1e9:.2f}" + (MISS if c[k] / 1e9 > t else ""))

        def warm(fn):
            w, v = c.get(f"{fn}_warm_ns"), c.get(f"{fn}_conv_ns")
            if w is None:
                return "—"
            miss = (w - (v or 0)) / 1e6 > TARGET_WARM_MS
            return f"{w / 1e6:.1f}" + (MISS if miss else "")

        conv = lambda fn: "—" if c.get(f"{fn}_conv_ns") is None else f"{c[f'{fn}_conv_ns'] / 1e6:.1f}"
        label = "plain (current)" if c["tool"] == "plain" else "tuned (c8bf9bc)"
        comp.append(f"| {c['eval']} | {label} | {c['workload']} | "
                    f"{sec('define_cold_ns', TARGET_DEFINE_S)} | {sec('define_warm_ns', TARGET_DEFINE_S)} | "
                    f"{sec(p + '_cold_ns', TARGET_COLD_S)} | {sec(d + '_cold_ns', TARGET_COLD_S)} | "
                    f"{warm(p)} | {warm(d)} | {conv(p)} | {conv(d)} |")
        if "error" in c:
            comp.append(f"| | error: {c['error'].splitlines()[0][:200]} | | | | | | | | | |")
    return "\n".join(out + summary + [""] + comp + [""] + detail).rstrip("\n")


def update_docs(path, text):
    doc = open(path).read()
    pattern = re.compile(r"(<!-- BEGIN natural -->\n).*?(<!-- END natural -->)", re.S)
    if not pattern.search(doc):
        sys.exit(f"table.py: {path} has no block natural")
    doc = pattern.sub(lambda m: m.group(1) + text + "\n" + m.group(2), doc)
    open(path, "w").write(doc)
    print(f"table.py: {path}: block natural refreshed", file=sys.stderr)


if __name__ == "__main__":
    main()
