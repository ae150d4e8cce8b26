#!/usr/bin/env bash
# Loading a module (issue 28, docs/benchmarks.md "Loading a module"): `cotangent run` of one
# function, through the interpreter on a small input, in a module of one model and in a module of
# twenty (bench/natural/gmm.cot twenty times over, its functions renamed NAME_K): what a command
# pays for the functions it does not run. Each command is timed as a whole process, several runs,
# pinned to one CPU (BENCH_CPU, default 0); with farm-bench when it is on PATH, else `time`.
# Usage: bench/run_module_load.sh [COTANGENT]   (default: the bench build's)
set -euo pipefail
source "$(dirname "$0")/common.sh"
if [ $# -ge 1 ]; then
  COT="$(realpath "$1")"
else
  bench_build cotangent
  COT="$BENCH_BUILD/cotangent"
fi
DIR="$OUT/module_load"
mkdir -p "$DIR"
/usr/bin/python3 - "$ROOT/bench/natural/gmm.cot" "$DIR" <<'PY'
import json, re, sys
import numpy as np
src, out = open(sys.argv[1]).read(), sys.argv[2]
models = []
for k in range(20):
    text = src
    for name in ("packed", "precision_factor", "objective", "gradient"):
        text = re.sub(r"\b%s\b" % name, f"{name}_{k}", text)
    models.append(text)
open(f"{out}/one.cot", "w").write(models[0])
open(f"{out}/twenty.cot", "w").write("\n".join(models))
rng = np.random.default_rng(1)
d, k, n = 3, 4, 20
json.dump({"alpha": rng.standard_normal(k).tolist(), "mu": rng.standard_normal((k, d)).tolist(),
           "q": rng.standard_normal((k, d)).tolist(),
           "l": rng.standard_normal((k, d * (d - 1) // 2)).tolist(),
           "x": rng.standard_normal((n, d)).tolist(), "m": 0, "gamma": 1.0},
          open(f"{out}/in.json", "w"))
PY
echo "$(bench_machine)"
for m in one twenty; do
  cmd=("$COT" run "$DIR/$m.cot" gradient_0 --input "$DIR/in.json" --backend interp)
  echo "## gradient_0 of $m.cot"
  if command -v farm-bench >/dev/null; then
    farm-bench -n 5 --pin "${BENCH_CPU:-0}" -- "${cmd[@]}" | grep -E "cpu s|wall s"
  else
    for _ in 1 2 3; do /usr/bin/time -f "%e s wall, %U s user" "${cmd[@]}" >/dev/null; done
  fi
done
