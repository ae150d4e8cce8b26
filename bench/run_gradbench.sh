#!/usr/bin/env bash
# GradBench's evals at their default workloads (issue 6, docs/benchmarks.md "GradBench"):
# every eval through `cotangent gradbench` (GradBench's tool protocol), and the evals GradBench
# has a PyTorch tool for through the project's PyTorch implementations (bench/gradbench/
# torch_evals.py), on the same inputs, in one run, both pinned to one CPU (BENCH_CPU, default
# 0), one thread each. Writes $BENCH_BUILD/results/gradbench.{json,md} and docs/img/gradbench.png.
# Usage: bench/run_gradbench.sh [--quick] [--evals gmm,lse,...] [--min-seconds S]
#   (GradBench's default is --min-seconds 1: about half an hour for all evals, the first run
#   longer while each workload's code is compiled into the cache)
set -euo pipefail
source "$(dirname "$0")/common.sh"
bench_build cotangent
bench_python_deps
cd "$ROOT/bench/gradbench"
/usr/bin/python3 run.py "$BENCH_BUILD/cotangent" "$OUT" --cpu "${BENCH_CPU:-0}" "$@"
/usr/bin/python3 report.py "$OUT/gradbench.json" "$OUT/gradbench.md" "$ROOT/docs/img/gradbench.png" \
  "$(bench_machine)"
