// Loop unswitching (pass "unswitch").
#include "opt/unswitch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ad/fd_harness.h"
#include "cotangent/cotangent.h"
#include "opt/licm.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::Value;
using cotangent::adtest::f64_matrix;
using cotangent::adtest::f64_vector;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;
using opt_test::run_pass;

ir::Program unswitched(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::unswitch_loops, opt::unswitch_postcondition);
}
// Unswitching, then hoisting: what the pipeline does in one round.
ir::Program unswitched_and_hoisted(const ir::Program& p, const std::string& fn) {
  return run_pass(unswitched(p, fn), fn, opt::hoist_invariants, opt::licm_postcondition);
}

using opt_test::curve;
using opt_test::empty_vector;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The shape reverse mode makes for logsumexp: a gather whose body branches on a condition of the
// row, the taken branch recomputing the row's sum for every element.
constexpr const char* kGather = R"(
def f(x: f64[n], flag: bool) -> f64[n] {
  for j. if flag then 0.0 else exp(x[j]) / (sum i. exp(x[i]))
})";

TEST(OptUnswitch, gather_branching_on_an_outer_condition_becomes_two_copies) {
  auto p = opt_test::compile(kGather);
  auto q = unswitched(p, "f");
  EXPECT_EQ(printed(q, "f"), R"(def f(x: f64[n], flag: bool) -> f64[n] {
  let t12 = if flag then {
    let t22 = for j_13: n. 0.0
    t22
  } else {
    let t32 = for j_23: n. {
      let t24 = x[j_23]
      let t25 = exp(t24)
      let t29 = sum i_26: n. {
        let t27 = x[i_26]
        let t28 = exp(t27)
        t28
      }
      let t30 = t25 / t29
      t30
    }
    t32
  }
  t12
}
)");
  for (bool flag : {false, true}) {
    for (int n : {1, 5}) expect_same_values(p, q, "f", {curve(n), Value::boolean(flag)});
    expect_same_values(p, q, "f", {empty_vector(), Value::boolean(flag)});
    expect_same_values(p, q, "f", {f64_vector({1.0, kInf, -kInf, kNaN}), Value::boolean(flag)});
  }
}

// After unswitching, the sum leaves the copy's gather: O(n) instead of O(n^2), and nothing at
// all when n = 0 (the hoisted sum sits under [n >= 1]).
TEST(OptUnswitch, the_invariant_sum_then_leaves_the_gather) {
  auto p = opt_test::compile(kGather);
  auto q = unswitched_and_hoisted(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_LT(text.find("sum i"), text.find("for j_23")) << text;
  EXPECT_NE(text.find("n >= 1"), std::string::npos) << text;
  for (bool flag : {false, true}) {
    for (int n : {1, 6}) expect_same_values(p, q, "f", {curve(n), Value::boolean(flag)});
    expect_same_values(p, q, "f", {empty_vector(), Value::boolean(flag)});
    expect_same_values(p, q, "f", {f64_vector({kNaN, 2.0, kInf}), Value::boolean(flag)});
  }
  // n * (n exps + (n - 1) adds + 1 exp + 1 div) before; 2n - 1 + 2n after.
  EXPECT_EQ(run(p, "f", {curve(6), Value::boolean(false)}).ops, 6 * (6 + 5 + 2));
  EXPECT_EQ(run(q, "f", {curve(6), Value::boolean(false)}).ops, 11 + 12);
  EXPECT_EQ(run(q, "f", {curve(6), Value::boolean(true)}).ops, 0);
  EXPECT_EQ(run(q, "f", {empty_vector(), Value::boolean(false)}).ops, 0);
}

// Every `if` on the condition is folded in each copy, nested ones (in a guard, in an inner
// generator) included; a reduction is unswitched like a generator.
TEST(OptUnswitch, every_if_on_the_condition_is_folded_in_each_copy) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], flag: bool) -> f64 {
  sum j. {
    let a = if flag then x[j] else x[j] * (sum i. x[i] * x[i])
    let b = [j >= 1] * (if flag then 1.0 else 2.0)
    let c = for k: 2. if flag then x[j] + f64(k) else x[j]
    a + b + c[1]
  }
})");
  auto q = unswitched(p, "f");
  const std::string text = printed(q, "f");
  // One if (the split) is left, on flag.
  EXPECT_EQ(opt_test::count(text, "if "), 1) << text;
  EXPECT_EQ(opt_test::count(text, "if flag then"), 1) << text;
  for (bool flag : {false, true}) {
    for (int n : {0, 1, 4}) expect_same_values(p, q, "f", {curve(n), Value::boolean(flag)});
    expect_same_values(p, q, "f", {f64_vector({-kInf, kInf, kNaN}), Value::boolean(flag)});
  }
}

// Two conditions that both pay: each copy is split again, on the other one.
TEST(OptUnswitch, two_conditions_split_twice) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], a: bool, b: bool) -> f64[n] {
  for j. {
    let u = if a then 0.0 else sum i. exp(x[i])
    let v = if b then sum i. x[i] * x[i] else 1.0
    x[j] * u + v
  }
})");
  auto q = unswitched_and_hoisted(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(opt_test::count(text, "for j"), 4) << text;
  for (bool a : {false, true}) {
    for (bool b : {false, true}) {
      for (int n : {0, 1, 5}) {
        expect_same_values(p, q, "f", {curve(n), Value::boolean(a), Value::boolean(b)});
      }
    }
  }
}

// A condition computed from a parameter outside the region (as logsumexp's `mx` is infinite),
// an accumulation and a counted loop.
TEST(OptUnswitch, accum_and_counted_loop_with_a_computed_condition) {
  auto p = opt_test::compile(R"(
def g(x: f64[n], idx: i64[n]) -> f64[3] {
  let big = x[0] > 1.0
  accum[3] o. (idx[o], if big then x[o] else x[o] / (sum i. x[i] * x[i]))
}
def h(x: f64[n], k: i64) -> f64 {
  let big = x[0] > 1.0
  loop s = 0.0 for t < k { s + (if big then 1.0 else sum i. x[i]) }
})");
  auto q = unswitched(unswitched(p, "g"), "h");
  EXPECT_NE(printed(q, "g").find("if big then"), std::string::npos) << printed(q, "g");
  EXPECT_LT(printed(q, "g").find("if big then"), printed(q, "g").find("accum")) << printed(q, "g");
  EXPECT_LT(printed(q, "h").find("if big then"), printed(q, "h").find("loop")) << printed(q, "h");
  Value idx = Value::zeros(cotangent::DType::I64, {4});
  for (int64_t k = 0; k < 4; ++k) idx.i64_mut()[k] = (k * 2) % 3;
  for (double x0 : {0.5, 2.0, kNaN, kInf}) {
    Value x = f64_vector({x0, -0.5, 1.5, 0.25});
    expect_same_values(p, q, "g", {x, idx});
    for (int64_t k : {0, 1, 3}) expect_same_values(p, q, "h", {x, Value::i64(k)});
  }
}

// Left alone: a condition that varies in the region, branches with no invariant work (cheap or
// depending on the index), and an if on a condition bound inside the region.
TEST(OptUnswitch, leaves_regions_where_it_does_not_pay) {
  auto p = opt_test::compile(R"(
def varies(x: f64[n]) -> f64[n] {
  for j. if x[j] > 0.0 then sum i. x[i] else 0.0
}
def cheap(x: f64[n], flag: bool) -> f64[n] {
  for j. if flag then x[j] else x[j] * 2.0
}
def indexed(x: f64[n], flag: bool) -> f64[n] {
  for j. if flag then 0.0 else sum i. x[i] * x[j]
}
def inner(x: f64[n]) -> f64[n] {
  for j. { let c = x[0] > x[j]; if c then sum i. x[i] else 0.0 }
})");
  for (const char* fn : {"varies", "cheap", "indexed", "inner"}) {
    auto q = unswitched(p, fn);
    EXPECT_EQ(printed(q, fn), printed(p, fn)) << fn;
    EXPECT_FALSE(opt::unswitch_postcondition(p, *p.find(fn)).has_value()) << fn;
  }
}

TEST(OptUnswitch, postcondition_rejects_a_region_it_would_split) {
  auto p = opt_test::compile(kGather);
  auto broken = opt::unswitch_postcondition(p, *p.find("f"));
  ASSERT_TRUE(broken.has_value());
  EXPECT_NE(broken->find("flag"), std::string::npos) << *broken;
}

// Through the whole pipeline: the gradient of a row-wise logsumexp no longer recomputes the
// row's sum of exps for every element (O(m c^2) before), so doubling c at most about doubles
// the gradient's cost.
TEST(OptUnswitch, rowwise_logsumexp_gradient_is_linear_in_the_row_length) {
  const std::string src = R"(
def f(Z: f64[m, c]) -> f64 {
  sum r. logsumexp(Z[r])
})";
  cotangent::LoadOptions o;
  o.opt_level = 2;
  auto m = cotangent::Module::from_string(src, "rows.cot", o);
  ASSERT_TRUE(m.ok()) << m.message();
  auto matrix = [](int rows, int cols) {
    std::vector<std::vector<double>> z(static_cast<size_t>(rows));
    for (int r = 0; r < rows; ++r) {
      for (int k = 0; k < cols; ++k) z[static_cast<size_t>(r)].push_back(0.1 * r - 0.05 * k * k);
    }
    return f64_matrix(z);
  };
  auto ops = [&](int cols) {
    auto c =
        m.value().derivative_cost("f", cotangent::DerivativeKind::ValueAndGrad, {matrix(4, cols)});
    EXPECT_TRUE(c.ok()) << c.message();
    return c.ok() ? c.value().ops : 0;
  };
  const int64_t small = ops(16), large = ops(32);
  EXPECT_LE(large, 2 * small + 40) << small << " " << large;
  // Values and gradients agree with the reference, infinities included.
  cotangent::LoadOptions o0;
  o0.opt_level = 0;
  auto m0 = cotangent::Module::from_string(src, "rows.cot", o0);
  ASSERT_TRUE(m0.ok()) << m0.message();
  for (const Value& z : {matrix(3, 5), f64_matrix({{1.0, kInf}, {-kInf, -kInf}, {0.5, kNaN}})}) {
    opt_test::expect_same_value_and_grad(m.value(), m0.value(), "f", {z});
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
