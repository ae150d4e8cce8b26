#!/usr/bin/env bash
# The native backend beside hand-written C++ (issue 5, docs/benchmarks.md "Native code"):
# for each kernel of bench/native/kernels.cot, in one run on this machine,
#   - the primal through `cotangent bench` and straightforward C++ loops (bench/native/
#     baselines.cpp) compiled with the flags the backend uses, one thread each;
#   - the loss and its gradient (`cotangent bench --grad`), one thread;
#   - the primal and gradient on two threads (the speed-up from one to two);
#   - the time to compile each (a fresh cache, so nothing is loaded from disk).
# Checks that both compute the same value, writes $BENCH_BUILD/results/native.{json,md} and
# docs/img/native.png. Each measurement is taken in ROUNDS processes, the rows of a kernel
# interleaved round by round, and reported as the median over the rounds of each process's
# median: on a shared VM the speed of a process varies by up to a third from one process to
# the next, far more than within one. The one-thread rows all run on one CPU (BENCH_CPU,
# default 0): here the two CPUs differ by up to 1.7x at times (a neighbour on one of them).
# Usage: bench/run_native.sh [RUNS] [ROUNDS]   (about three minutes)
set -euo pipefail
source "$(dirname "$0")/common.sh"
RUNS="${1:-30}"
ROUNDS="${2:-5}"
bench_build cotangent
bench_python_deps
DATA="$OUT/native"
mkdir -p "$DATA"
/usr/bin/python3 "$ROOT/bench/native/make_inputs.py" "$DATA"
# The flags of src/codegen/compiler.cpp's default_flags(), for an executable.
FLAGS=(-std=c++20 -O3 -march=native -mno-avx512f -fopenmp -ffp-contract=off)
"${CXX:-c++}" "${FLAGS[@]}" "$ROOT/bench/native/baselines.cpp" -o "$DATA/baselines"
COT="$BENCH_BUILD/cotangent"
KERNELS="$ROOT/bench/native/kernels.cot"
export COTANGENT_CACHE_DIR="$DATA/cache"
rm -rf "$COTANGENT_CACHE_DIR"
PIN=()
if command -v taskset > /dev/null; then PIN=(taskset -c "${BENCH_CPU:-0}"); fi
RAW="$DATA/raw.jsonl"
: > "$RAW"
# kernel, primal function, loss function, the loss's extra parameters (not the primal's)
while read -r kernel primal loss extra; do
  dir="$DATA/$kernel"
  all=$(cat "$dir/args.txt")
  pargs="$all"
  for p in $extra; do pargs=$(echo "$pargs" | sed "s|--arg $p=[^ ]*||"); done
  row() { echo "{\"kernel\": \"$kernel\", \"what\": \"$1\", \"threads\": $2, \"result\": $3}" >> "$RAW"; }
  # shellcheck disable=SC2086
  for _ in $(seq "$ROUNDS"); do
    row primal 1 "$("${PIN[@]}" "$COT" bench "$KERNELS" "$primal" $pargs --input "$dir/in.json" --runs "$RUNS" --threads 1)"
    row baseline 1 "$("${PIN[@]}" "$DATA/baselines" "$kernel" "$dir" "$RUNS")"
    row loss 1 "$("${PIN[@]}" "$COT" bench "$KERNELS" "$loss" $all --input "$dir/in.json" --runs "$RUNS" --threads 1)"
    row grad 1 "$("${PIN[@]}" "$COT" bench "$KERNELS" "$loss" $all --input "$dir/in.json" --runs "$RUNS" --threads 1 --grad)"
    row primal 2 "$("$COT" bench "$KERNELS" "$primal" $pargs --input "$dir/in.json" --runs "$RUNS" --threads 2)"
    row grad 2 "$("$COT" bench "$KERNELS" "$loss" $all --input "$dir/in.json" --runs "$RUNS" --threads 2 --grad)"
  done
  # shellcheck disable=SC2086
  row value 1 "$("$COT" run "$KERNELS" "$primal" $pargs --input "$dir/in.json")"
done <<'KERNELS'
dot dot_f dot_f
matvec matvec_f matvec_loss b
conv conv_f conv_loss
gmm gmm_f gmm_f
lstm lstm_step_f lstm_loss
KERNELS
/usr/bin/python3 "$ROOT/bench/native/report.py" "$RAW" "$OUT/native.md" "$ROOT/docs/img/native.png" \
  "$(bench_machine)" "bench/run_native.sh $RUNS $ROUNDS"
cat "$OUT/native.md"
