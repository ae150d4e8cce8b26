#!/usr/bin/env bash
# Native code at the edges of size and threads (issue 25, breaks 2 and 11): results too large to
# build fail as in the interpreter (exit 1, the same message, nothing on standard output), and
# a team of threads that cannot be created runs on fewer threads instead of ending the process.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

cat >big.cot <<'COT'
def f5(x: f64[n]) -> f64[n, n, n, n, n] { for a: n, b: n, c: n, d: n, e: n. x[a] }
def f5z(x: f64[n], y: f64[m]) -> f64[n, n, n, n, n, m] {
  for a: n, b: n, c: n, d: n, e: n, g: m. x[a] * y[g]
}
def f3(x: f64[n]) -> f64[n, n, n] { for a: n, b: n, c: n. x[a] }
def p(x: f64[n]) -> f64[n] { for i. exp(x[i]) * 2.0 + log(1.0 + x[i] * x[i]) }
COT
python3 - <<'PY'
import json
json.dump({"x": [0.5] * 7000}, open("x7000.json", "w"))
json.dump({"x": [0.5] * 7000, "y": []}, open("x7000y0.json", "w"))
json.dump({"x": [0.5] * 800}, open("x800.json", "w"))
json.dump({"x": [((k * 7919) % 2000) / 1000.0 - 1.0 for k in range(100003)]}, open("x1e5.json", "w"))
PY

# The same error from both backends, and nothing else: the red team's [7000]^5 (a segfault),
# with a trailing 0 ({"result": null}, exit 0), and 800^3 (minutes and 6.6 GB).
for c in "f5 x7000.json" "f5z x7000y0.json" "f3 x800.json"; do
  set -- $c
  cot run big.cot "$1" --input "$2" --backend interp
  expect_status 1
  expect_out_empty
  want=$err
  cot run big.cot "$1" --input "$2" --backend native --threads 1
  expect_status 1
  expect_out_empty
  [[ $err == "$want" ]] || fail "native code's error differs from the interpreter's: $want"
done
expect_err_first_line '^big\.cot:5:37: error: a tensor of shape \[800, 800, 800\] has 512000000 elements, more than the limit of 268435456$'

# An `if` whose branches build a tensor over the limit: its slot is never allocated (it was
# 2.7 TB of heap, refused at entry as "out of memory"), and the branch reports the interpreter's
# error.
cat >slot.cot <<'COT'
def fi(x: f64[n], c: bool) -> f64 {
  let t = if c then for a: n, b: n, d: n. x[a] else for a: n, b: n, d: n. 0.0
  t[0, 0, 0]
}
COT
python3 -c 'import json; json.dump({"x": [0.5] * 7000, "c": True}, open("xc.json", "w"))'
cot run slot.cot fi --input xc.json --backend interp
expect_status 1
want=$err
for level in 0 2; do
  cot run slot.cot fi --input xc.json --opt $level
  expect_status 1
  [[ $err == "$want" ]] || fail "native code's error differs from the interpreter's: $want"
done
expect_err_first_line '^slot\.cot:2:21: error: a tensor of shape \[7000, 7000, 7000\] has 343000000000 elements'

# Results do not depend on the number of threads, to the bit (a loop in vector lanes split
# among the threads).
cot run big.cot p --input x1e5.json --threads 1
expect_status 0
one=$out
for t in 2 3 7; do
  cot run big.cot p --input x1e5.json --threads $t
  expect_status 0
  [[ $out == "$one" ]] || fail "the result on $t threads differs from the result on one"
done

# Threads that cannot be created (an address space too small for 4000 thread stacks): libgomp
# would end the process with "Thread creation failed"; the team shrinks to what can be made.
# Under a sanitizer's runtime, which reserves terabytes of address space, the limit cannot be
# set, and the binary does not start: nothing to test there.
if (ulimit -v 1000000 && "$bin" --help >/dev/null 2>&1); then
  status=0
  last="cotangent run big.cot p --input x1e5.json --threads 4000 (ulimit -v 1000000)"
  (ulimit -v 1000000 && exec "$bin" run big.cot p --input x1e5.json --threads 4000) \
    >"$tmp/.out" 2>"$tmp/.err" || status=$?
  out=$(cat "$tmp/.out")
  err=$(cat "$tmp/.err")
  expect_status 0
  expect_err_empty
  [[ $out == "$one" ]] || fail "the result on the threads that could be created differs"
fi
echo "native_limits: ok"
