#!/usr/bin/env bash
# The plain programs of bench/natural beside the tuned programs of examples/gradbench at
# commit c8bf9bc and beside GradBench's hand-written C++ `manual` tool (issue 28; docs/
# benchmarks.md "Plain programs (issue 28)"): every eval with a plain program, at GradBench's
# default workloads, the tools interleaved round by round, pinned to one CPU (BENCH_CPU,
# default 0), one thread. Writes $BENCH_BUILD/results/natural.{json,md} and the block
# `natural` of docs/benchmarks.md.
#
# Usage: bench/run_natural.sh [--manual GRADBENCH_MANUAL_BIN] [--quick | --largest]
#                             [--evals gmm,ba,...] [--rounds N] [--min-seconds S]
#   PLAIN=COTANGENT     the current tool (default: build $BENCH_BUILD's cotangent)
#   TUNED_TREE=DIR      a checkout of commit c8bf9bc with its cotangent built in DIR/build
#                       (default: $BENCH_BUILD/c8bf9bc, made and built if missing)
#   --manual DIR        GradBench's tools/manual/bin, built outside this repository (see the
#                       docs); without it the manual column is left out
set -euo pipefail
source "$(dirname "$0")/common.sh"
TUNED_COMMIT=c8bf9bc
if [ -z "${PLAIN:-}" ]; then
  bench_build cotangent
  PLAIN="$BENCH_BUILD/cotangent"
fi
TUNED_TREE="${TUNED_TREE:-$BENCH_BUILD/$TUNED_COMMIT}"
if [ ! -x "$TUNED_TREE/build/cotangent" ]; then
  if [ ! -d "$TUNED_TREE" ]; then
    git -C "$ROOT" worktree add --detach "$TUNED_TREE" "$TUNED_COMMIT" >&2
  fi
  cmake -S "$TUNED_TREE" -B "$TUNED_TREE/build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" >/dev/null
  ninja -C "$TUNED_TREE/build" -j "${JOBS:-$(nproc)}" cotangent >&2
fi
mkdir -p "$OUT"
cd "$ROOT/bench/natural"
/usr/bin/python3 table.py "$OUT" --plain "$PLAIN" --tuned "$TUNED_TREE/build/cotangent" \
  --tuned-dir "$TUNED_TREE/examples/gradbench" --cpu "${BENCH_CPU:-0}" \
  --docs "$ROOT/docs/benchmarks.md" --machine "$(bench_machine)" \
  --command "bench/run_natural.sh $*" "$@"
