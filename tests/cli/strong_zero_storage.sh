#!/usr/bin/env bash
# Strong zeros stored in tensors stay strong zeros (docs/language.md §5.6; issue 25, break 1): the
# red team's three programs at a point where their guards fail give the same finite value and
# gradient from `cotangent grad`, from `run` of a function that calls grad, and from the
# derived function that `print --grad` shows, run again as a program, at every --opt level on
# both backends; and the gradient is the closed form's.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"
export COTANGENT_CACHE_DIR="$tmp/cache"
py=/usr/bin/python3

cat >sz.cot <<'COT'
def t4(x: f64[n]) -> f64 { sum i. { let z = [x[i] > 0.0] * x[i]; z * z + z / x[i] } }
def s5(x: f64[n]) -> f64 { sum i. { let z = [x[i] > 0.0] * log(x[i]); z * z + z / x[i] } }
def v2(x: f64[n]) -> f64 { let t = for i. [x[i] > 0.0] * log(x[i]); sum i. t[i] / x[i] }
def g_t4(x: f64[n]) -> f64[n] { grad(t4, x)(x) }
def g_s5(x: f64[n]) -> f64[n] { grad(s5, x)(x) }
def g_v2(x: f64[n]) -> f64[n] { grad(v2, x)(x) }
COT
input='{"x": [0, 2, -1, 0.5]}'

# The closed forms: the terms where x > 0, 0 elsewhere.
$py - >want.json <<'PY'
import json, math
xs = [0.0, 2.0, -1.0, 0.5]
L = math.log
forms = {
    "t4": (lambda x: x * x + 1, lambda x: 2 * x),
    "s5": (lambda x: L(x) ** 2 + L(x) / x, lambda x: 2 * L(x) / x + (1 - L(x)) / x ** 2),
    "v2": (lambda x: L(x) / x, lambda x: (1 - L(x)) / x ** 2),
}
print(json.dumps({f: {"value": sum(h(x) for x in xs if x > 0),
                      "grad": [dh(x) if x > 0 else 0.0 for x in xs]}
                  for f, (h, dh) in forms.items()}))
PY

# close FN KIND: the JSON in $out (KIND: grad, run or run_value) against the closed form.
close() {
  local fn=$1 kind=$2
  echo "$out" >got.json
  $py - "$fn" "$kind" <<'PY' || fail "$last: not the closed form of $1: $out"
import json, sys
fn, kind = sys.argv[1], sys.argv[2]
want = json.load(open("want.json"))[fn]
got = json.load(open("got.json"))
rho = lambda a, b: abs(a - b) / max(1.0, abs(a) + abs(b))
if kind == "grad":
    pairs = [(got["value"], want["value"])] + list(zip(got["grad"]["x"], want["grad"]))
elif kind == "run":
    pairs = list(zip(got["result"], want["grad"]))
else:
    pairs = [(got["result"], want["value"])]
ok = all(isinstance(a, (int, float)) and rho(a, b) <= 1e-12 for a, b in pairs)
sys.exit(0 if ok and len(pairs) > 1 or kind == "run_value" and ok else 1)
PY
}

for fn in t4 s5 v2; do
  for level in 0 1 2; do
    for backend in interp native; do
      flags=(--opt "$level" --backend "$backend")
      cot_stdin "$input" run sz.cot "$fn" --input - "${flags[@]}"
      expect_status 0
      close "$fn" run_value
      cot_stdin "$input" grad sz.cot "$fn" --input - "${flags[@]}"
      expect_status 0
      close "$fn" grad
      cot_stdin "$input" run sz.cot "g_$fn" --input - "${flags[@]}"
      expect_status 0
      close "$fn" run
      # The derived function as print shows it, a program of its own, run again.
      cot print sz.cot "$fn" --grad --opt "$level"
      expect_status 0
      echo "$out" >"printed_$fn.cot"
      cot_stdin "$input" run "printed_$fn.cot" "grad_${fn}_x" --input - "${flags[@]}"
      expect_status 0
      close "$fn" run
    done
  done
done
echo "strong_zero_storage: ok"
