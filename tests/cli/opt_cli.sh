#!/usr/bin/env bash
# The optimizer on the command line: --opt levels give the same values, `cost` counts the
# program as it runs at that level (and a derivative of it with --value-and-grad), and
# --dump-after prints functions after a pass; bad levels and pass names are usage errors.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

cat >intro.cot <<'COT'
def traces(x: f64[n]) -> f64 {
  let A = diag(x)
  trace(A) + trace(A) + trace(A)
}
COT
input='{"x": [1, 2, 3, 4, 5, 6, 7, 8]}'

# The same value at every level.
for level in 0 1 2; do
  cot_stdin "$input" run intro.cot traces --input - --opt "$level"
  expect_status 0
  expect_out '{"result": 108}'
done

# cost counts the program as the compiler runs it: the gradient's count at --opt=2 is linear
# in n and within the cheap-gradient bound 4 * ops(f) + size(inputs) + size(outputs).
cot_stdin "$input" cost intro.cot traces --input - --opt=2
expect_status 0
f_ops=$(sed -E "s/.*\"ops\": ([0-9]+).*/\\1/" <<<"$out")
cot_stdin "$input" cost intro.cot traces --input - --opt=2 --value-and-grad
expect_status 0
vg_ops=$(sed -E "s/.*\"ops\": ([0-9]+).*/\\1/" <<<"$out")
if ((vg_ops > 4 * f_ops + 8 + 1)); then
  fail "ops(value_and_grad traces) = $vg_ops exceeds the bound 4 * $f_ops + 9"
fi
# At --opt=0 the derivative sums dense n-by-n adjoints: more than the bound allows.
cot_stdin "$input" cost intro.cot traces --input - --opt=0 --value-and-grad
expect_status 0
vg0_ops=$(sed -E "s/.*\"ops\": ([0-9]+).*/\\1/" <<<"$out")
if ((vg0_ops <= vg_ops)); then
  fail "the optimizer did not make the gradient cheaper ($vg0_ops at --opt=0, $vg_ops at --opt=2)"
fi

# cost of a jvp or vjp needs more arguments: a clear error.
cot_stdin "$input" cost intro.cot traces --input - --vjp x
expect_status 1
expect_err_contains "needs its tangent or cotangent arguments"

# --dump-after prints the function after the pass, to standard error.
cot_stdin "$input" run intro.cot traces --input - --dump-after inline
expect_status 0
expect_out '{"result": 108}'
expect_err_contains "# after inline: traces"
expect_err_contains "def traces(x: f64[n]) -> f64 {"

# --dump-after of a loop-IR pass prints the loop IR of each function the native backend
# compiles, to standard error (docs/design.md §10).
cot_stdin "$input" run intro.cot traces --input - --dump-after long-sums
expect_status 0
expect_out '{"result": 108}'
expect_err_contains "# after long-sums: traces"
expect_err_contains "loop function cot_fn0"
cot_stdin "$input" run intro.cot traces --input - --dump-after all
expect_status 0
expect_err_contains "# after inline: traces"
expect_err_contains "# after plan-memory: traces"

# Usage errors.
cot_stdin "$input" run intro.cot traces --input - --opt 3
expect_status 2
expect_err_contains "--opt needs a level: 0 (unoptimized), 1 (local clean-ups) or 2 (everything)"
cot_stdin "$input" run intro.cot traces --input - --dump-after no-such-pass
expect_status 2
expect_err_contains "--dump-after needs the name of an optimizer pass (inline"
expect_err_contains "of a loop-IR pass (interchange-sums, split-windows, interchange-split-sums, long-sums"

# A bad COTANGENT_OPT is an error, not a silent default.
COTANGENT_OPT=7 cot_stdin "$input" run intro.cot traces --input -
expect_status 1
expect_err_contains "COTANGENT_OPT"

echo "opt_cli: ok"
