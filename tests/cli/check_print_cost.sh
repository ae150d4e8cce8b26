#!/usr/bin/env bash
# `cotangent check`, `print` and `cost`: silence and exit 0 on success; exit 1 with
# `file:line:col: error:` messages for errors in the program; the cost report's JSON.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

cat >good.cot <<'COT'
# A comment.
def dot2(x: f64[n], y: f64[n]) -> f64 { sum i. x[i] * y[i] }
def band(x: f64[n]) -> f64 { sum i. [i > 0] * x[i] * 2.0 }
def soft(x: f64[n]) -> f64 { sum i. exp(x[i]) }
def shift(x: f64[n]) -> f64[n - 1] { for i: n - 1. x[i + 1] }
COT

# check: nothing printed, exit 0.
cot check good.cot
expect_status 0
expect_out_empty
expect_err_empty

# check: errors in the program exit 1 with every error, in source order, located.
cat >bad.cot <<'COT'
def a(x: f64) -> f64 { x + undefined_a }
def b(x: f64, n: i64) -> f64 { x * n }
COT
cot check bad.cot
expect_status 1
expect_out_empty
expect_err_first_line '^bad\.cot:1:28: error: unknown name `undefined_a`$'
expect_err_contains 'bad.cot:2:34: error: mismatched types f64 and i64 for `*`'
expect_err_contains '  help: convert the integer with `f64(...)`'
[[ $(grep -c ': error: ' <<<"$err") -eq 2 ]] || fail "expected exactly two errors"
# The source line and a caret under the error.
expect_err_contains $'  def a(x: f64) -> f64 { x + undefined_a }\n                             ^~~~~~~~~~~'

# A syntax error is a program error too.
printf 'def f(x: f64) -> f64 {\n  x +\n' >syntax.cot
cot check syntax.cot
expect_status 1
expect_err_first_line '^syntax\.cot:2:6: error: expected an expression, found end of file$'
# So is a file that cannot be read.
cot check missing.cot
expect_status 1
expect_err_first_line '^missing\.cot: error: cannot read missing\.cot$'

# print: the Core IR as source; it checks again.
cot print good.cot shift
expect_status 0
expect_err_empty
expected='def shift(x: f64[n]) -> f64[n - 1] {
  let t4 = for i: n - 1. {
    let t3 = x[i + 1]
    t3
  }
  t4
}'
expect_out "$expected"
printf '%s\n' "$out" >printed.cot
cot check printed.cot
expect_status 0
expect_err_empty
# print: errors.
cot print bad.cot a
expect_status 1
expect_out_empty
expect_err_first_line '^bad\.cot:1:28: error: '
cot print good.cot nope
expect_status 1
expect_err_first_line '^error: no function named `nope`$'
expect_err_contains 'help: the module defines: dot2, band, soft, shift'

# cost: {"ops", "add", "mul", "call"} with ops = add + mul + call.
cot_stdin '{"x": [1, 2, 3, 4], "y": [1, 1, 1, 1]}' cost good.cot dot2 --input -
expect_status 0
expect_err_empty
expect_out '{"ops": 7, "add": 3, "mul": 4, "call": 0}'
# Work masked by a false Iverson bracket costs nothing: 3 of 4 points, 1 multiplication each.
cot_stdin '{"x": [1, 2, 3, 4]}' cost good.cot band --input -
expect_status 0
expect_out '{"ops": 5, "add": 2, "mul": 3, "call": 0}'
cot_stdin '{"x": [1, 2, 3, 4]}' cost good.cot soft --input -
expect_out '{"ops": 7, "add": 3, "mul": 0, "call": 4}'
# The keys parse as JSON with integer values.
python3 -c '
import json, sys
c = json.loads(sys.argv[1])
assert sorted(c) == ["add", "call", "mul", "ops"], c
assert all(isinstance(v, int) for v in c.values()), c
assert c["ops"] == c["add"] + c["mul"] + c["call"], c
' "$out" || fail "cost output is not the expected JSON object"
# cost: errors.
cot_stdin '{"x": [1, 2]}' cost bad.cot a --input -
expect_status 1
expect_out_empty
expect_err_first_line '^bad\.cot:1:28: error: '
cot_stdin '{"x": [1, 2], "y": [1]}' cost good.cot dot2 --input -
expect_status 1
expect_out_empty
expect_err_first_line \
  '^good\.cot:2:21: error: size variable n is 2 from parameter x \(f64\[2\]\) but 1 from parameter y \(f64\[1\]\)$'

echo "check_print_cost.sh: ok"
