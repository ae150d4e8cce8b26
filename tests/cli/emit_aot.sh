#!/usr/bin/env bash
# `cotangent emit`: standalone C++ ahead of time. The example CMake project (examples/aot) is
# configured, built and run on the quick start's loss and gradient, and its numbers agree with
# `cotangent grad` (ρ ≤ 1e-12); a generated function reports a failing index read with its
# error code and the interpreter's words, at the source position.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

cot emit "$src_dir/examples/quickstart.cot" loss -o gen
expect_status 0
cot emit "$src_dir/examples/quickstart.cot" loss --grad -o gen
expect_status 0
[[ -f gen/cot_grad_loss.h && -f gen/cot_grad_loss.cpp && -f gen/cot_fn_loss.h ]] ||
  fail "emit wrote no files"
grep -q 'int cot_grad_loss(const int64_t\* sizes, const double\* in0_w, const double\* in1_X' \
  gen/cot_grad_loss.h || fail "no C declaration"
grep -q 'Sizes: sizes\[0\] = k, sizes\[1\] = m' gen/cot_grad_loss.h ||
  fail "the header does not list the sizes"

cmake -S "$src_dir/examples/aot" -B build -DCOTANGENT_GENERATED="$tmp/gen" >cmake.log 2>&1 ||
  { cat cmake.log >&2; fail "the example project does not configure"; }
cmake --build build >build.log 2>&1 || { cat build.log >&2; fail "the example project does not build"; }
build/fit_line >aot.txt 2>fit.txt || fail "the example program failed"
grep -q "loss after 200 steps" fit.txt || fail "the example did not descend"

cot grad "$src_dir/examples/quickstart.cot" loss --input "$src_dir/examples/quickstart.json"
expect_status 0
echo "$out" >grad.json
python3 - aot.txt grad.json <<'PY' || fail "the generated code disagrees with cotangent grad"
import json, sys
got = [float(l) for l in open(sys.argv[1]) if l.strip()]
g = json.load(open(sys.argv[2]))
def flat(v):
    return [x for e in v for x in flat(e)] if isinstance(v, list) else [float(v)]
want = [g["value"]] + flat(g["grad"]["w"]) + flat(g["grad"]["X"]) + flat(g["grad"]["y"])
assert len(got) == len(want), (got, want)
for a, b in zip(got, want):
    assert abs(a - b) / max(1.0, abs(a) + abs(b)) <= 1e-12, (a, b)
PY

# Errors: an out-of-range read returns a nonzero code and the message, with its position.
cat >pick.cot <<'COT'
def pick(x: f64[n], i: i64) -> f64 {
  x[i] * 2.0
}
COT
cot emit pick.cot pick -o gen
expect_status 0
cat >use_pick.cpp <<'CPP'
#include <cstdio>
#include "cot_fn_pick.h"
int main() {
  const int64_t sizes[] = {3};
  const double x[] = {1, 2, 3};
  double r = 0;
  char message[256] = "";
  int64_t i = 1;
  if (cot_fn_pick(sizes, x, &i, &r, 1, message, sizeof message) != 0 || r != 4.0) return 2;
  i = 5;
  const int code = cot_fn_pick(sizes, x, &i, &r, 1, message, sizeof message);
  std::printf("%d\n%s\n", code != 0, message);
  return 0;
}
CPP
c++ -std=c++20 -O2 -fopenmp -Igen use_pick.cpp gen/cot_fn_pick.cpp -o use_pick 2>cxx.log ||
  { cat cxx.log >&2; fail "the generated code does not compile"; }
./use_pick >pick.txt || fail "pick did not run"
[[ "$(sed -n 1p pick.txt)" == 1 ]] || fail "an out-of-range read returned 0"
grep -q 'pick.cot:2:3: error: index 5 is out of range for dimension 0 of x, which has shape \[3\]' \
  pick.txt || { cat pick.txt >&2; fail "the message is not the interpreter's"; }

# Usage errors.
cot emit "$src_dir/examples/quickstart.cot" loss
expect_status 2
expect_err_contains "emit needs -o DIR"
cot emit "$src_dir/examples/quickstart.cot" nothing -o gen
expect_status 1
expect_err_contains "no function named \`nothing\`"
echo "ok"
