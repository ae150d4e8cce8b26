#!/usr/bin/env bash
# Derivatives on the command line: `cotangent grad` (values, --wrt, --output, errors) and
# `cotangent print --grad/--jvp/--vjp` (the derived function as source that checks and runs).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

cat >ad.cot <<'COT'
def loss(w: f64[k], X: f64[m, k], y: f64[m]) -> f64 {
  sum r. (dot(X[r], w) - y[r]) ^ 2
}
def predict(w: f64[k], X: f64[m, k]) -> f64[m] {
  for r. sum j. X[r, j] * w[j]
}
def scaled(x: f64, c: i64) -> f64 { f64(c) * x * x }
def hvp(w: f64[k], X: f64[m, k], y: f64[m], v: f64[k]) -> (f64[k], f64[k]) {
  jvp(grad(loss, w), w)(w, X, y, v)
}
COT
input='{"w": [1, 2], "X": [[1, 0], [0, 1]], "y": [1, 1]}'

# grad: the value and the gradient for every real parameter, by name.
cot_stdin "$input" grad ad.cot loss --input -
expect_status 0
expect_err_empty
expect_out '{"value": 1, "grad": {"w": [0, 2], "X": [[0, 0], [2, 4]], "y": [-0.0, -2]}}'

# --wrt picks and orders the parameters.
cot_stdin "$input" grad ad.cot loss --input - --wrt y,w
expect_status 0
expect_out '{"value": 1, "grad": {"y": [-0.0, -2], "w": [0, 2]}}'

# Integer parameters are never active; real numbers print as run prints them.
cot_stdin '{"x": 0.1, "c": 3}' grad ad.cot scaled --input -
expect_status 0
expect_out '{"value": 0.030000000000000006, "grad": {"x": 0.60000000000000009}}'

# --arg and --output work as for run.
write_npy w.npy '<f8' '2' '1.0 2.0'
cot_stdin '{"X": [[1, 0], [0, 1]], "y": [1, 1]}' grad ad.cot loss --arg w=w.npy --input - \
  --wrt w --output g.json
expect_status 0
expect_out_empty
[[ $(cat g.json) == '{"value": 1, "grad": {"w": [0, 2]}}' ]] || fail "g.json: $(cat g.json)"
cot_stdin "$input" grad ad.cot loss --input - --output g.npy
expect_status 2
expect_err_contains 'grad writes JSON'

# Errors: a non-scalar function, an unknown or integer parameter, exit code 1, located.
cot_stdin '{"w": [1, 2], "X": [[1, 0], [0, 1]]}' grad ad.cot predict --input -
expect_status 1
expect_out_empty
expect_err_first_line '^ad\.cot:4:1: error: grad needs a function that returns a real scalar; predict returns f64\[m\]$'
cot_stdin "$input" grad ad.cot loss --input - --wrt z
expect_status 1
expect_err_first_line '^ad\.cot:1:1: error: `loss` has no parameter named `z`$'
expect_err_contains 'help: its parameters are w: f64[k], X: f64[m, k], y: f64[m]'
cot_stdin '{"x": 0.1, "c": 3}' grad ad.cot scaled --input - --wrt c
expect_status 1
expect_err_first_line '^ad\.cot:7:20: error: parameter `c` of `scaled` has type i64 and cannot be differentiated$'
# Errors in --wrt come before errors in the input.
cot_stdin '{}' grad ad.cot loss --input - --wrt z
expect_status 1
expect_err_first_line 'has no parameter named `z`'
cot_stdin "$input" grad ad.cot nope --input -
expect_status 1
expect_err_first_line '^error: no function named `nope`$'
# Wrong usage: exit code 2.
cot grad ad.cot loss
expect_status 2
cot_stdin "$input" grad ad.cot loss --input - --wrt ,
expect_status 2
cot_stdin "$input" run ad.cot loss --input - --wrt w
expect_status 2
cot print ad.cot loss --grad w --jvp w
expect_status 2
cot run ad.cot loss --grad
expect_status 2

# print --grad: the derived function as source, named from its operator.
cot print ad.cot loss --grad w
expect_status 0
expect_err_empty
[[ ${out%%$'\n'*} == '# grad(loss, w), as the compiler builds it' ]] || fail "first line"
expect_out_contains $'\ndef grad_loss_w(w: f64[k], X: f64[m, k], y: f64[m]) -> f64[k] {\n'
printf '%s\n' "$out" >grad_loss.cot
cot_stdin "$input" run grad_loss.cot grad_loss_w --input -
expect_status 0
expect_out '{"result": [0, 2]}'
# Names are optional: every real parameter; --grad=a,b spells the same.
cot print ad.cot loss --grad
expect_status 0
expect_out_contains 'def grad_loss_w_X_y('
cot print ad.cot loss --grad=X,y
expect_status 0
expect_out_contains 'def grad_loss_X_y('

# print --jvp / --vjp of a non-scalar function; the printed defs run.
cot print ad.cot predict --jvp w
expect_status 0
expect_out_contains $'# jvp(predict, w), as the compiler builds it\ndef jvp_predict_w(w: f64[k], X: f64[m, k], t_w: f64[k]) -> (f64[m], f64[m]) {'
printf '%s\n' "$out" >jvp.cot
cot_stdin '{"w": [1, 2], "X": [[1, 3], [2, 4]], "t_w": [1, 0]}' run jvp.cot jvp_predict_w --input -
expect_status 0
expect_out '{"result": [[7, 10], [1, 2]]}'
cot print ad.cot predict --vjp w
expect_status 0
printf '%s\n' "$out" >vjp.cot
cot_stdin '{"w": [1, 2], "X": [[1, 3], [2, 4]], "ct": [1, 1]}' run vjp.cot vjp_predict_w --input -
expect_status 0
expect_out '{"result": [3, 7]}'

# print --grad errors: exit 1 with the checker's words.
cot print ad.cot predict --grad
expect_status 1
expect_err_first_line '^ad\.cot:4:1: error: grad needs a function that returns a real scalar; predict returns f64\[m\]$'
cot print ad.cot scaled --grad c
expect_status 1
expect_err_contains 'parameter `c` of `scaled` has type i64 and cannot be differentiated'
cot print ad.cot loss --vjp q
expect_status 1
expect_err_contains '`loss` has no parameter named `q`'

# print FN: derived functions FN calls follow, as defs; the whole text runs again. (--opt 0:
# the optimizer inlines the derived function into hvp, and then there is nothing to follow.)
cot print ad.cot hvp --opt 0
expect_status 0
expect_out_contains '  let t'
expect_out_contains 'jvp(grad(loss, w), w)(w, X, y, v)'
expect_out_contains $'\n# jvp(grad(loss, w), w), as the compiler builds it\ndef jvp_grad_loss_w_w('
expect_out_contains $'\ndef loss('
printf '%s\n' "$out" >hvp.cot
hvp_input='{"w": [1, 2], "X": [[1, 0], [0, 1]], "y": [1, 1], "v": [1, -1]}'
cot_stdin "$hvp_input" run hvp.cot hvp --input -
expect_status 0
expected=$out
cot_stdin "$hvp_input" run ad.cot hvp --input -
expect_out "$expected"
expect_out '{"result": [[0, 2], [2, -2]]}'
# Optimized, it is one self-contained function that computes the same.
cot print ad.cot hvp
expect_status 0
printf '%s\n' "$out" >hvp2.cot
cot_stdin "$hvp_input" run hvp2.cot hvp --input -
expect_out '{"result": [[0, 2], [2, -2]]}'

# A derived function that cannot be built breaks only the functions that need it: check reports
# them (exit 1), the others run, and the broken ones give the error when run.
cat >broken.cot <<'COT'
def t(x: f64) -> f64 { trigamma(x) * x }
def uses_grad(x: f64) -> f64 { grad(t)(x) }
def fine(x: f64) -> f64 { x * x }
COT
cot check broken.cot
expect_status 1
expect_err_contains 'error: `uses_grad` cannot run: cannot differentiate grad(t, x): `trigamma` has no derivative rule'
cot_stdin '{"x": 3}' run broken.cot fine --input -
expect_status 0
expect_out '{"result": 9}'
cot_stdin '{"x": 3}' run broken.cot uses_grad --input -
expect_status 1
expect_err_contains 'cannot differentiate grad(t, x)'
cot_stdin '{"x": 3}' grad broken.cot t --input -
expect_status 1
expect_err_contains 'cannot differentiate value_and_grad(t, x)'

echo "ad_cli.sh: ok"
