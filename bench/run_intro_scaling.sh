#!/usr/bin/env bash
# The scaling table and plot of docs/benchmarks.md: builds bench/intro_scaling in build-bench,
# times the introduction programs of [Bernstein20] in Cotangent (--opt=2 and --opt=0) and in
# PyTorch (bench/torch_intro.py) side by side, one after the other in this run, writes
# build-bench/results/intro_scaling.{csv,md} and docs/img/intro_scaling.png, and prints the
# table. Environment: SIZES (default 100,1000,10000), TIMING (extra flags for both timers,
# e.g. "--min-reps 3 --budget 0.5").
set -euo pipefail
# shellcheck source=bench/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

SIZES_GIVEN="${SIZES:-}"
SIZES="${SIZES:-100,1000,10000}"
TIMING="${TIMING:-}"
bench_python_deps
bench_build intro_scaling
mkdir -p "$ROOT/docs/img"
machine="$(bench_machine)"
# shellcheck disable=SC2086  # TIMING is a list of flags
"$BENCH_BUILD/bench/intro_scaling" --root "$ROOT" --sizes "$SIZES" $TIMING \
  > "$OUT/intro_scaling_cotangent.csv"
# shellcheck disable=SC2086
/usr/bin/python3 "$ROOT/bench/torch_intro.py" --sizes "$SIZES" $TIMING \
  > "$OUT/intro_scaling_torch.csv" 2> "$OUT/torch_version.txt"
torch_version="$(/usr/bin/python3 -c 'import torch; print(torch.__version__)')"
{
  echo "Measured on: $machine PyTorch $torch_version (Debian python3-torch), one thread."
  echo
  echo "Command: \`${SIZES_GIVEN:+SIZES=$SIZES_GIVEN }${TIMING:+TIMING=\"$TIMING\" }bench/run_intro_scaling.sh\`"
  echo
  /usr/bin/python3 "$ROOT/bench/intro_report.py" "$OUT/intro_scaling_cotangent.csv" \
    "$OUT/intro_scaling_torch.csv" --plot "$ROOT/docs/img/intro_scaling.png"
  echo
  echo "![time against n, log-log](img/intro_scaling.png)"
} > "$OUT/intro_scaling.md"
cat "$OUT/intro_scaling.md"
