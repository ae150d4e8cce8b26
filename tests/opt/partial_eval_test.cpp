// Partial evaluation (src/opt/partial_eval.h): the rules of [HuotShaikhha] that apply to Core IR —
// loops with literal trip counts and unchanged state, ifs whose branches agree (O16), identity
// generators (O7), reads of constant generators (X2) and sums of zeros (O10). Each test runs the
// pass (verified, postcondition checked), checks the printed form, and compares values and op
// counts with the interpreter before and after.
#include "opt/partial_eval.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::Value;
using opt_test::compile;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;

ir::Program pe(const ir::Program& p, const std::string& fn) {
  return opt_test::run_pass(p, fn, opt::partially_evaluate, opt::partial_eval_postcondition);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

Value ramp(int64_t n, double scale = 1.0) {
  Value v = Value::zeros(cotangent::DType::F64, {n});
  auto d = v.f64_mut();
  for (int64_t k = 0; k < n; ++k)
    d[static_cast<size_t>(k)] = scale * (static_cast<double>(k) - 1.5);
  return v;
}

TEST(OptPartialEval, loops_with_literal_trip_counts_and_unchanged_state) {
  ir::Program p = compile(R"(
def lp(x: f64, k: i64) -> (f64, f64, f64, f64) {
  let (u, v) = loop (p, q) = (x, 1.0) for t < k { (p * x, q) }
  let w = loop r = x for t < k { r }
  (loop p = x for t < 0 { p * x }, loop p = x for t < 1 { p * x + f64(t) }, v + u, w)
}
)");
  ir::Program q = pe(p, "lp");
  const std::string out = printed(q, "lp");
  EXPECT_EQ(out,
            "def lp(x: f64, k: i64) -> (f64, f64, f64, f64) {\n"
            "  let (u, v) = loop (p, q) = (x, 1.0) for t < k {\n"
            "    let t7 = p * x\n"
            "    (t7, q)\n"
            "  }\n"
            "  let t27 = x * x\n"
            "  let t28 = f64(0)\n"
            "  let t29 = t27 + t28\n"
            "  let t25 = 1.0 + u\n"
            "  let t26 = (x, t29, t25, x)\n"
            "  t26\n"
            "}\n");
  for (int64_t k : {-1, 0, 1, 4}) expect_same_values(p, q, "lp", {Value::f64(1.5), Value::i64(k)});
}

// A for-loop whose body is pure bookkeeping of its state, and a while-loop that is left.
TEST(OptPartialEval, while_loops_are_not_evaluated) {
  ir::Program p = compile(R"(
def wl(x: f64) -> (f64, i64) {
  loop (v, c) = (x, 0) while v > 1.0 { (v / 2.0, c + 1) }
}
)");
  ir::Program q = pe(p, "wl");
  EXPECT_TRUE(contains(printed(q, "wl"), "while")) << printed(q, "wl");
  for (double x : {0.5, 3.0, 1000.0}) expect_same_values(p, q, "wl", {Value::f64(x)});
}

// Saving loops (reverse mode's forward sweep) are left exactly as they are, even with a
// literal trip count.
TEST(OptPartialEval, saving_loops_are_left_intact) {
  ir::Function f;
  f.name = "sv";
  ir::Builder b(f);
  const ir::VarId x = b.param("x", Type::scalar(Scalar::F64));
  auto loop = b.loop_for_saving({ir::Atom::of(x)}, ir::Atom::i64(1),
                                [&](const std::vector<ir::VarId>& s, ir::VarId) {
                                  return std::vector<ir::Atom>{ir::Atom::of(
                                      b.prim(Prim::Mul, {ir::Atom::of(s[0]), ir::Atom::of(x)}))};
                                },
                                {"p"});
  const ir::VarId i = b.index_var("i");
  const ir::VarId sum =
      b.reduce(ir::ReduceKind::Sum, {ir::IndexVar{i, SizeExpr::var(loop.size_name)}}, [&] {
        return ir::Atom::of(
            b.index(ir::Atom::of(loop.stacks[0]), {ir::affine_index(Affine::var(i))}));
      });
  const ir::VarId r = b.prim(Prim::Add, {ir::Atom::of(loop.final_state[0]), ir::Atom::of(sum)});
  b.finish({ir::Atom::of(r)});
  ir::Program p;
  p.sources = std::make_shared<SourceManager>();
  p.functions.push_back(f);
  ir::Program q = pe(p, "sv");
  EXPECT_EQ(printed(q, "sv"), printed(p, "sv"));
  expect_same_values(p, q, "sv", {Value::f64(1.25)});
}

// O16: if c then a else a is a, whatever the branches computed on the way.
TEST(OptPartialEval, if_with_equal_branches) {
  ir::Program p = compile(R"(
def ifs(x: f64, y: f64) -> f64 {
  let r = if x > 0.0 then { let a = x * 2.0
                            y } else y
  r * 3.0
}
def ifd(x: f64, y: f64) -> f64 {
  if x > 0.0 then y else x
}
)");
  ir::Program q = pe(p, "ifs");
  EXPECT_TRUE(contains(printed(q, "ifs"), "y * 3.0")) << printed(q, "ifs");
  ir::Program r = pe(p, "ifd");
  EXPECT_EQ(printed(r, "ifd"), printed(p, "ifd"));  // different branches stay
  for (double x : {-1.0, 2.0}) {
    expect_same_values(p, q, "ifs", {Value::f64(x), Value::f64(0.5)});
    expect_same_values(p, r, "ifd", {Value::f64(x), Value::f64(0.5)});
  }
}

// O7: map (x. x) A is A; a generator over a different shape is not a copy.
TEST(OptPartialEval, identity_generators) {
  ir::Program p = compile(R"(
def idg(A: f64[n, m]) -> f64 {
  let B = for i, j. A[i, j]
  let C = for i. A[i]
  sum i, j. B[i, j] * C[i, j]
}
def part(x: f64[n]) -> f64[n - 1] {
  for i: n - 1. x[i]
}
)");
  ir::Program q = pe(p, "idg");
  const std::string out = printed(q, "idg");
  EXPECT_FALSE(contains(out, "for")) << out;
  EXPECT_TRUE(contains(out, "let t13 = A[")) << out;  // C[i, j] reads A directly
  ir::Program r = pe(p, "part");
  EXPECT_TRUE(contains(printed(r, "part"), "for i: n - 1.")) << printed(r, "part");
  for (int64_t n : {1, 3}) {
    Value A = Value::zeros(cotangent::DType::F64, {n, 2});
    auto d = A.f64_mut();
    for (int64_t k = 0; k < 2 * n; ++k) d[static_cast<size_t>(k)] = 0.5 * static_cast<double>(k);
    expect_same_values(p, q, "idg", {A});
    expect_same_values(p, r, "part", {ramp(n + 1)});
  }
}

// X2/X4: reads of a constant generator are the constant where the read is provably in range
// (under the index ranges and the guards); elsewhere the read, and its range error, stay.
TEST(OptPartialEval, reads_of_constant_generators) {
  ir::Program p = compile(R"(
def ones(x: f64[n]) -> f64[n] {
  let o = for i: n. 1.0
  for i. [i + 1 < n] * (x[i] * o[i + 1])
}
def out_of_range(x: f64[n]) -> f64[n] {
  let o = for i: n. 1.0
  for i. x[i] * o[i + 1]
}
)");
  ir::Program q = pe(p, "ones");
  const std::string out = printed(q, "ones");
  EXPECT_TRUE(contains(out, " * 1.0\n")) << out;
  EXPECT_FALSE(contains(out, "o[")) << out;
  ir::Program r = pe(p, "out_of_range");
  EXPECT_TRUE(contains(printed(r, "out_of_range"), " + 1]")) << printed(r, "out_of_range");
  for (int64_t n : {0, 1, 4}) expect_same_values(p, q, "ones", {ramp(n)});
  auto before = run(p, "out_of_range", {ramp(3)}), after = run(r, "out_of_range", {ramp(3)});
  EXPECT_FALSE(before.ok);
  EXPECT_FALSE(after.ok);
  EXPECT_EQ(before.error, after.error);
}

// O10/X6: a sum of literal zeros is the literal zero.
TEST(OptPartialEval, sums_of_zeros) {
  ir::Program p = compile(R"(
def sz(x: f64[n]) -> f64 {
  let z = for i: n. 0.0
  (sum i. z[i]) + (sum i: n. 0.0) + x[0]
}
)");
  ir::Program q = pe(p, "sz");
  const std::string out = printed(q, "sz");
  EXPECT_FALSE(contains(out, "sum")) << out;
  EXPECT_TRUE(contains(out, "0.0 + 0.0")) << out;  // simplify folds it
  for (int64_t n : {1, 2, 6}) expect_same_values(p, q, "sz", {ramp(n)});
  EXPECT_EQ(run(p, "sz", {ramp(6)}).ops, 12);  // 5 + 5 additions in the sums, 2 outside
  // The sums are ordinary zeros (their terms are not strong zeros): the two additions stay
  // until simplify folds them.
  EXPECT_EQ(run(q, "sz", {ramp(6)}).ops, 2);
}

// A sum whose body does not read its index variables is the body once, times the count, under
// an if on the count: an empty sum stays an ordinary 0 (not 0 * inf) and runs nothing.
TEST(OptPartialEval, sums_of_invariant_bodies) {
  ir::Program p = compile(R"(
def inv(x: f64[n], a: f64, b: f64) -> f64 {
  (sum i: n. a * b) + (sum i: 3. exp(a)) + (sum i: n, j: 2. [n >= 2] * x[1] * b)
}
)");
  ir::Program q = pe(p, "inv");
  const std::string out = printed(q, "inv");
  EXPECT_FALSE(contains(out, "sum")) << out;
  EXPECT_TRUE(contains(out, "n >= 1")) << out;
  EXPECT_TRUE(contains(out, "f64(")) << out;
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t n : {0, 1, 2, 5}) {
    expect_same_values(p, q, "inv", {ramp(n), Value::f64(0.75), Value::f64(-1.5)});
    expect_same_values(p, q, "inv", {ramp(n), Value::f64(0.75), Value::f64(inf)});
  }
  // n = 0: the first and third sums are 0 even for b = inf; exp(a) runs once.
  // A sum of one term (n = 1) is not multiplied by 1: expect_same_values checks it costs no
  // more than before.
  const auto empty = run(q, "inv", {ramp(0), Value::f64(0.75), Value::f64(inf)});
  ASSERT_TRUE(empty.ok);
  ASSERT_EQ(empty.values.size(), 1u);
  EXPECT_LE(opt_test::rho(empty.values[0], 3.0 * std::exp(0.75)), 1e-15);
  // Before: n mul + (n - 1) add, 3 exp + 2 add, 2n (mul) + (2n - 1) add, 2 add between the sums.
  EXPECT_EQ(run(p, "inv", {ramp(5), Value::f64(0.75), Value::f64(-1.5)}).ops,
            (5 + 4) + (3 + 2) + (10 + 9) + 2);
  // After: each body once and one multiplication by its count; 2 adds.
  EXPECT_TRUE(contains(out, "if several")) << out;  // n >= 2 is not known
  EXPECT_EQ(run(q, "inv", {ramp(5), Value::f64(0.75), Value::f64(-1.5)}).ops,
            (1 + 1) + (1 + 1) + (1 + 1) + 2);
}

// A sum of a one-hot if (reverse mode's contribution to one element of a vector a loop updates
// with `if i == t`) is its term at i = k when k is in range, else an ordinary 0.
TEST(OptPartialEval, sums_of_one_hot_ifs) {
  ir::Program p = compile(R"(
def oh(x: f64[n], k: i64) -> f64 {
  sum i. { let e = exp(x[i]); if i == k then e * x[i] else 0.0 }
}
)");
  ir::Program q = pe(p, "oh");
  const std::string out = printed(q, "oh");
  EXPECT_FALSE(contains(out, "sum")) << out;
  EXPECT_TRUE(contains(out, "x[k]")) << out;
  for (int64_t n : {0, 1, 4}) {
    for (int64_t k : {-1, 0, 2, 4}) expect_same_values(p, q, "oh", {ramp(n), Value::i64(k)});
  }
  // Before: n exps, n products where i == k (one), n - 1 additions; after: one exp and one
  // product.
  EXPECT_EQ(run(p, "oh", {ramp(4), Value::i64(2)}).ops, 4 + 1 + 3);
  EXPECT_EQ(run(q, "oh", {ramp(4), Value::i64(2)}).ops, 2);
  EXPECT_EQ(run(q, "oh", {ramp(4), Value::i64(7)}).ops, 0);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
