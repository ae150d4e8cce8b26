#!/usr/bin/env bash
# The Python package's per-call overhead (issue 26, docs/benchmarks.md "Calling from Python"):
# the same compiled functions called through the C++ API (bench/python/call_overhead.cpp:
# CompiledFunction::call on views of the caller's memory) and from Python
# (bench/python/call_overhead.py: Function.__call__ on NumPy arrays, with and without out=),
# one thread, pinned to one CPU, the processes interleaved round by round; reported as the
# median over the rounds of each process's median time per call. Cases: `tiny` (a scalar in,
# a scalar out: nothing but the call), `scale` (a scalar and an f64[8] in, an f64[8] out) and
# `gmm_grad` (the gradient of examples/gradbench/gmm.cot at d = 10, K = 25, n = 1000).
# Writes $BENCH_BUILD/results/python_overhead.{json,md}.
# Usage: bench/run_python_overhead.sh [ROUNDS]   (about a minute)
set -euo pipefail
source "$(dirname "$0")/common.sh"
ROUNDS="${1:-5}"
bench_build call_overhead python
export COTANGENT_CACHE_DIR="$OUT/python_overhead_cache"
export PYTHONPATH="$BENCH_BUILD/python"
PIN=()
if command -v taskset > /dev/null; then PIN=(taskset -c "${BENCH_CPU:-0}"); fi
RAW="$OUT/python_overhead.jsonl"
: > "$RAW"
for round in $(seq "$ROUNDS"); do
  for c in tiny scale gmm_grad; do
    calls=100000
    if [ "$c" = gmm_grad ]; then calls=20; fi
    "${PIN[@]}" "$BENCH_BUILD/bench/call_overhead" "$c" "$calls" >> "$RAW"
    "${PIN[@]}" /usr/bin/python3 "$ROOT/bench/python/call_overhead.py" "$c" "$calls" >> "$RAW"
    if [ "$c" != tiny ]; then
      "${PIN[@]}" /usr/bin/python3 "$ROOT/bench/python/call_overhead.py" "$c" "$calls" --out >> "$RAW"
    fi
  done
  echo "round $round of $ROUNDS done" >&2
done
MACHINE="$(bench_machine)"
/usr/bin/python3 - "$RAW" "$OUT" "$MACHINE" "$ROUNDS" <<'PY'
import json, statistics, sys
raw, out, machine, rounds = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
rows = [json.loads(line) for line in open(raw)]
med = {}
for r in rows:
    med.setdefault((r["case"], r["side"]), []).append(r["ns_per_call"])
med = {k: statistics.median(v) for k, v in med.items()}
def us(ns):
    return f"{ns / 1000:.2f} µs" if ns < 1e6 else f"{ns / 1e6:.3f} ms"
lines = [
    "| function | C++ API (views) | Python | Python, `out=` | Python − C++ |",
    "|---|---|---|---|---|",
]
for case in ["tiny", "scale", "gmm_grad"]:
    cpp, py = med[(case, "cpp")], med[(case, "python")]
    pyo = med.get((case, "python_out"))
    lines.append(f"| `{case}` | {us(cpp)} | {us(py)} | {us(pyo) if pyo else '–'} | "
                 f"{(py - cpp) / 1000:+.2f} µs" + (f" ({(pyo - cpp) / 1000:+.2f} µs with out=)" if pyo else "") + " |")
text = "\n".join(lines) + f"\n\nMedian of {rounds} rounds, one thread, one CPU. {machine}\n"
open(f"{out}/python_overhead.md", "w").write(text)
json.dump({f"{c}/{s}": v for (c, s), v in med.items()}, open(f"{out}/python_overhead.json", "w"), indent=1)
print(text)
PY
