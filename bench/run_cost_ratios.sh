#!/usr/bin/env bash
# The op-count ratio table of docs/benchmarks.md: builds bench/cost_ratios in build-bench, runs
# it over the whole corpus at --opt=2, writes build-bench/results/cost_ratios.md and prints it.
# Arguments are passed to cost_ratios (e.g. --pathology-sizes 10,100 for a quicker run).
# Where the bound does not hold, the table says so and a note goes to stderr; the exit status
# is non-zero only when the table could not be made.
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

bench_build cost_ratios
machine="$(bench_machine)"
status=0
"$BENCH_BUILD/bench/cost_ratios" --root "$ROOT" "$@" > "$OUT/cost_ratios.body.md" || status=$?
if [ "$status" -gt 1 ]; then exit "$status"; fi
{
  echo "Measured on: $machine"
  echo
  echo "Command: \`bench/run_cost_ratios.sh${*:+ $*}\`"
  echo
  cat "$OUT/cost_ratios.body.md"
} > "$OUT/cost_ratios.md"
cat "$OUT/cost_ratios.md"
if [ "$status" -ne 0 ]; then
  echo "note: the cheap-gradient bound does not hold everywhere (see the summary above)" >&2
fi
