#!/usr/bin/env bash
# `cotangent emit` with hostile names (issue 25, break 9): functions and parameters named like C
# and C++ keywords, library names, macros and the ABI's own names, a tuple `x` beside a
# parameter `x_0`, a user function grad_g beside the gradient of g, and a `%` in the source
# file's name. Every emitted source compiles (all of them linked into one program, and the
# headers as C), the functions compute the right values, and an error message carries the
# file name as it is, never read as a printf format.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.bash"

src='p%lld%s.cot'
cat >"$src" <<'COT'
def free(int: f64[n], double: f64[n]) -> f64 {
  sum i. int[i] * double[i]
}
def sizes(sizes: f64[n], result: f64) -> f64[n] {
  for i. sizes[i] * result
}
def result(threads: f64, message: f64, message_size: f64) -> f64 {
  threads + message * message_size
}
def threads(return: f64, NULL: f64, errno: f64, EOF: f64, stdin: f64) -> f64 {
  return * NULL - errno + EOF * stdin
}
def message(x: (f64, f64[n]), x_0: f64, x_1: f64[n]) -> (f64, f64[n]) {
  let (a, b) = x;
  (a * x_0, for i. b[i] + x_1[i])
}
def int(class: f64[n], new: i64) -> f64 {
  class[new] * 2.0
}
def double(inputs: f64, outputs: f64, ctx: f64, code: f64, v: f64, buf: f64, site: f64) -> f64 {
  inputs + outputs + ctx + code + v + buf + site
}
def NULL(delete: f64, this: f64, auto: f64, char: f64, namespace: f64, template: f64) -> f64 {
  delete * this + auto * char + namespace * template
}
def errno(malloc: f64, printf: f64, cot_ctx: f64, cot_entry: f64, memcpy: f64) -> f64 {
  malloc + printf + cot_ctx + cot_entry + memcpy
}
def g(w: f64[n]) -> f64 {
  sum i. w[i] * w[i]
}
def grad_g(w: f64[n]) -> f64[n] {
  for i. 3.0 * w[i]
}
def __x(_y: f64) -> f64 {
  2.0 * _y
}
COT
cot check "$src"
expect_status 0

for fn in free sizes result threads message int double NULL errno g grad_g __x; do
  cot emit "$src" "$fn" -o gen
  expect_status 0
done
cot emit "$src" g --grad -o gen
expect_status 0
# The gradient of g and the user's grad_g are different functions in different files.
[[ -f gen/cot_grad_g.cpp && -f gen/cot_fn_grad_g.cpp ]] || fail "emit --grad g and grad_g collide"
grep -q '^int cot_fn_message(const int64_t\* sizes, const double\* in0_x_0, const double\* in1_x_1, const double\* in2_x_0, const double\* in3_x_1, double\* out0, double\* out1, int threads' \
  gen/cot_fn_message.h || { cat gen/cot_fn_message.h >&2; fail "the tuple's leaves are not named by position"; }
grep -q '//   in2_x_0: x_0, 1 double' gen/cot_fn_message.h || fail "the header does not label the leaves"

# Every source compiles, and all of them link into one program (their internals are static).
cat >use.cpp <<'CPP'
#include <cmath>
#include <cstdio>
#include <cstring>
#include "cot_fn_NULL.h"
#include "cot_fn___x.h"
#include "cot_fn_double.h"
#include "cot_fn_errno.h"
#include "cot_fn_free.h"
#include "cot_fn_g.h"
#include "cot_fn_grad_g.h"
#include "cot_fn_int.h"
#include "cot_fn_message.h"
#include "cot_fn_result.h"
#include "cot_fn_sizes.h"
#include "cot_fn_threads.h"
#include "cot_grad_g.h"
static int failures = 0;
static void expect(bool ok, const char* what) {
  if (!ok) {
    std::printf("wrong: %s\n", what);
    ++failures;
  }
}
int main() {
  const int64_t n3[] = {3};
  const double a[] = {1, 2, 3}, b[] = {4, 5, 6};
  double r = 0, v3[3] = {0, 0, 0};
  char msg[256] = "";
  expect(cot_fn_free(n3, a, b, &r, 1, msg, sizeof msg) == 0 && r == 32, "free");
  expect(cot_fn_sizes(n3, a, b, v3, 1, msg, sizeof msg) == 0 && v3[2] == 12, "sizes");
  expect(cot_fn_result(nullptr, a, a + 1, a + 2, &r, 1, msg, sizeof msg) == 0 && r == 7, "result");
  const double five[] = {2, 3, 1, 4, 5};
  expect(cot_fn_threads(nullptr, five, five + 1, five + 2, five + 3, five + 4, &r, 1, msg,
                        sizeof msg) == 0 && r == 25, "threads");
  double x0 = 2, x_0 = 10, t0 = 0;
  expect(cot_fn_message(n3, &x0, a, &x_0, b, &t0, v3, 1, msg, sizeof msg) == 0 && t0 == 20 &&
             v3[0] == 5 && v3[2] == 9, "message (a tuple beside x_0)");
  const double seven[] = {1, 2, 3, 4, 5, 6, 7};
  expect(cot_fn_double(nullptr, seven, seven + 1, seven + 2, seven + 3, seven + 4, seven + 5,
                       seven + 6, &r, 1, msg, sizeof msg) == 0 && r == 28, "double");
  const double six[] = {1, 2, 3, 4, 5, 6};
  expect(cot_fn_NULL(nullptr, six, six + 1, six + 2, six + 3, six + 4, six + 5, &r, 1, msg,
                     sizeof msg) == 0 && r == 44, "NULL");
  expect(cot_fn_errno(nullptr, five, five + 1, five + 2, five + 3, five + 4, &r, 1, msg,
                      sizeof msg) == 0 && r == 15, "errno");
  expect(cot_fn___x(nullptr, a + 2, &r, 1, msg, sizeof msg) == 0 && r == 6, "__x");
  expect(cot_fn_g(n3, a, &r, 1, msg, sizeof msg) == 0 && r == 14, "g");
  expect(cot_grad_g(n3, a, v3, 1, msg, sizeof msg) == 0 && v3[0] == 2 && v3[2] == 6, "grad(g)");
  expect(cot_fn_grad_g(n3, a, v3, 1, msg, sizeof msg) == 0 && v3[0] == 3 && v3[2] == 9,
         "the user's grad_g");
  int64_t i = 1;
  expect(cot_fn_int(n3, a, &i, &r, 1, msg, sizeof msg) == 0 && r == 4, "int");
  i = 7;
  const int code = cot_fn_int(n3, a, &i, &r, 1, msg, sizeof msg);
  expect(code != 0, "int out of range returns an error");
  std::printf("%s\n", msg);
  return failures;
}
CPP
c++ -std=c++20 -O1 -Wall -fopenmp -Igen use.cpp gen/*.cpp -o use 2>cxx.log ||
  { cat cxx.log >&2; fail "the generated code does not compile"; }
./use >use.txt || { cat use.txt >&2; fail "the generated functions computed wrong values"; }
grep -qF 'p%lld%s.cot:18:3: error: index 7 is out of range for dimension 0 of class, which has shape [3]' \
  use.txt || { cat use.txt >&2; fail "the message does not carry the file name as it is"; }

# The headers are C as well.
{
  for h in gen/*.h; do echo "#include \"$(basename "$h")\""; done
  echo 'int main(void) { return 0; }'
} >use.c
cc -std=c11 -Wall -Igen -fsyntax-only use.c 2>cc.log || { cat cc.log >&2; fail "a header is not C"; }

# A file name with quotes, backslashes and control characters reaches the message as it is.
odd=$'q"\\\t?\x01.cot'
cat >"$odd" <<'COT'
def pick(x: f64[n], i: i64) -> f64 {
  x[i]
}
COT
cot emit "$odd" pick -o odd
expect_status 0
cat >use_odd.cpp <<'CPP'
#include <cstdio>
#include "cot_fn_pick.h"
int main() {
  const int64_t sizes[] = {2};
  const double x[] = {1, 2};
  int64_t i = 9;
  double r = 0;
  char msg[256] = "";
  if (cot_fn_pick(sizes, x, &i, &r, 1, msg, sizeof msg) == 0) return 2;
  std::fputs(msg, stdout);
  return 0;
}
CPP
c++ -std=c++20 -O1 -fopenmp -Iodd use_odd.cpp odd/cot_fn_pick.cpp -o use_odd 2>cxx.log ||
  { cat cxx.log >&2; fail "the code of a file with an odd name does not compile"; }
./use_odd >odd.txt || fail "use_odd did not run"
[[ $(head -c ${#odd} odd.txt) == "$odd" ]] || { cat -A odd.txt >&2; fail "the odd file name changed"; }
# A name too long for a file name: the files are named by its first 150 characters and a hash,
# the C function keeps the whole name.
long=$(printf 'f%.0s' $(seq 300))
printf 'def %s(x: f64) -> f64 {\n  3.0 * x\n}\n' "$long" >long.cot
cot emit long.cot "$long" -o long
expect_status 0
base=$(basename "$(ls long/*.h)" .h)
[[ ${#base} -eq $((150 + 17)) && $base == cot_fn_fff*_[0-9a-f]* ]] || fail "long file name: $base"
cat >use_long.cpp <<CPP
#include "$base.h"
int main() {
  const double x = 2;
  double r = 0;
  return cot_fn_$long(nullptr, &x, &r, 1, nullptr, 0) == 0 && r == 6 ? 0 : 1;
}
CPP
c++ -std=c++20 -O1 -fopenmp -Ilong use_long.cpp "long/$base.cpp" -o use_long 2>cxx.log ||
  { cat cxx.log >&2; fail "the code of a long name does not compile"; }
./use_long || fail "the function of a long name computed a wrong value"
echo "ok"
