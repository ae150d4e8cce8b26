// Common subexpressions across sibling regions (src/opt/region_cse.h): golden forms, values and
// op counts before and after (empty ranges, NaN and infinities included), and the cases that
// must stay apart.
#include "opt/region_cse.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <variant>

#include "opt/inline.h"
#include "opt/opt_test_util.h"
#include "opt/pipeline.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::DType;
using cotangent::Value;
using opt_test::compile;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;
using opt_test::run_pass;
using opt_test::vec;

Value mat(int64_t m, int64_t k, double seed) {
  Value v = Value::zeros(DType::F64, {m, k});
  for (int64_t e = 0; e < m * k; ++e) {
    v.f64_mut()[static_cast<size_t>(e)] = seed * static_cast<double>(e % 5) - 0.3 * e;
  }
  return v;
}

std::vector<double> ramp(int64_t n, double a) {
  std::vector<double> out;
  for (int64_t i = 0; i < n; ++i) out.push_back(a * static_cast<double>(i) - 0.5);
  return out;
}

ir::Program share(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::share_across_regions, opt::region_cse_postcondition);
}

// The row value of a loss and of its gradient: both regions compute the dot product of row r.
constexpr const char* kRows = R"(
def f(X: f64[m, k], w: f64[k], y: f64[m]) -> f64 {
  let a = sum r. (dot(X[r], w) - y[r]) ^ 2
  let g = for j. exp(dot(X[j], w))
  a + sum j. g[j]
}
)";

TEST(OptRegionCse, RowValueOfTwoRegionsIsMaterializedOnce) {
  auto p = compile(kRows);
  auto inlined = run_pass(p, "f", opt::inline_functions, opt::no_inlinable_calls);
  ASSERT_TRUE(opt::region_cse_postcondition(inlined, *inlined.find("f")).has_value());
  auto q = share(inlined, "f");
  const std::string out = printed(q, "f");
  EXPECT_EQ(out, R"(def f(X: f64[m, k], w: f64[k], y: f64[m]) -> f64 {
  let shared = for r_41: m. {
    let t42 = X[r_41]
    let t47 = sum i_43: k. {
      let t44 = t42[i_43]
      let t45 = w[i_43]
      let t46 = t44 * t45
      t46
    }
    t47
  }
  let a = sum r: m. {
    let t11 = [k >= 1] * {
      let t49 = shared[r]
      t49
    }
    let t12 = y[r]
    let t13 = t11 - t12
    let t14 = t13 * t13
    t14
  }
  let g = for j: m. {
    let t34 = [k >= 1] * {
      let t50 = shared[j]
      t50
    }
    let t23 = exp(t34)
    t23
  }
  let t27 = sum j_25: m. {
    let t26 = g[j_25]
    t26
  }
  let t28 = a + t27
  t28
}
)") << out;
  for (int64_t m : {0, 1, 4}) {
    for (int64_t k : {0, 1, 3}) {
      expect_same_values(inlined, q, "f", {mat(m, k, 0.7), vec(ramp(k, 0.4)), vec(ramp(m, 1.1))});
      // One dot product per row instead of two: m (2k - 1) fewer ops when k >= 1.
      if (k >= 1) {
        EXPECT_EQ(run(inlined, "f", {mat(m, k, 0.7), vec(ramp(k, 0.4)), vec(ramp(m, 1.1))}).ops -
                      run(q, "f", {mat(m, k, 0.7), vec(ramp(k, 0.4)), vec(ramp(m, 1.1))}).ops,
                  m * (2 * k - 1));
      }
    }
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_same_values(inlined, q, "f", {mat(2, 2, 0.5), vec({nan, 1.0}), vec({0.0, inf})});
  expect_same_values(inlined, q, "f", {mat(2, 2, 0.5), vec({inf, -inf}), vec({1.0, 2.0})});
}

// The later region needs the value only in one branch: it reads it there, for free.
TEST(OptRegionCse, LaterRegionUnderABranchReads) {
  auto p = compile(R"(
def f(X: f64[m, k], w: f64[k], y: f64[m]) -> f64 {
  let a = sum r. (dot(X[r], w) - y[r]) ^ 2
  let g = for j. if y[j] > 0.0 then dot(X[j], w) * 2.0 else 1.0
  a + sum j. g[j]
}
)");
  auto inlined = run_pass(p, "f", opt::inline_functions, opt::no_inlinable_calls);
  auto q = share(inlined, "f");
  EXPECT_EQ(opt_test::count(printed(q, "f"), "shared["), 2) << printed(q, "f");
  for (int64_t m : {0, 3}) {
    for (int64_t k : {0, 2}) {
      expect_same_values(inlined, q, "f", {mat(m, k, 0.9), vec(ramp(k, 0.3)), vec(ramp(m, 0.6))});
    }
  }
}

// The later region is a sum over j nested, through a branch, in a gen over i: the pair (i, j)
// matches R's (r, c), and the branch reads the table.
constexpr const char* kNested = R"(
def f(X: f64[m, k], W: f64[n, k], y: f64[m]) -> f64 {
  let a = sum r, c. (dot(X[r], W[c]) - y[r]) ^ 2
  let g = for i. if y[i] > 0.0 then sum j. exp(dot(X[i], W[j])) else 1.0
  a + sum i. g[i]
}
)";

TEST(OptRegionCse, LaterRegionNestedUnderABranchReads) {
  auto p = compile(kNested);
  auto inlined = run_pass(p, "f", opt::inline_functions, opt::no_inlinable_calls);
  ASSERT_TRUE(opt::region_cse_postcondition(inlined, *inlined.find("f")).has_value());
  auto q = share(inlined, "f");
  const std::string out = printed(q, "f");
  EXPECT_EQ(out, R"(def f(X: f64[m, k], W: f64[n, k], y: f64[m]) -> f64 {
  let shared = for r_45: m, c_46: n. {
    let t47 = X[r_45]
    let t48 = W[c_46]
    let t53 = sum i_49: k. {
      let t50 = t47[i_49]
      let t51 = t48[i_49]
      let t52 = t50 * t51
      t52
    }
    t53
  }
  let a = sum r: m, c: n. {
    let t14 = [k >= 1] * {
      let t55 = shared[r, c]
      t55
    }
    let t15 = y[r]
    let t16 = t14 - t15
    let t17 = t16 * t16
    t17
  }
  let g = for i_19: m. {
    let t20 = y[i_19]
    let t21 = t20 > 0.0
    let t32 = if t21 then {
      let t31 = sum j: n. {
        let t44 = [k >= 1] * {
          let t56 = shared[i_19, j]
          t56
        }
        let t30 = exp(t44)
        t30
      }
      t31
    } else { 1.0 }
    t32
  }
  let t36 = sum i_34: m. {
    let t35 = g[i_34]
    t35
  }
  let t37 = a + t36
  t37
}
)") << out;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t m : {0, 1, 3}) {
    for (int64_t n : {0, 1, 2}) {
      for (int64_t k : {0, 1, 3}) {
        const std::vector<Value> in = {mat(m, k, 0.7), mat(n, k, -0.4), vec(ramp(m, 1.1))};
        expect_same_values(inlined, q, "f", in);
        // One dot product per (i, j) of the branch taken (y[i] > 0 for i >= 1) fewer.
        const int64_t taken = m >= 2 ? m - 1 : 0;
        if (k >= 1) {
          EXPECT_EQ(run(inlined, "f", in).ops - run(q, "f", in).ops, taken * n * (2 * k - 1));
        }
      }
    }
  }
  expect_same_values(inlined, q, "f", {mat(2, 2, 0.5), mat(2, 2, 0.1), vec({nan, 1.0})});
  expect_same_values(inlined, q, "f", {mat(2, 2, 0.5), mat(2, 2, 0.1), vec({inf, -inf})});
  Value X = mat(2, 2, 0.5);
  X.f64_mut()[1] = inf;
  expect_same_values(inlined, q, "f", {X, mat(2, 2, 0.1), vec({1.0, 2.0})});
}

// R's single index variable maps onto the inner of two nested regions over the same extent
// (the copy goes to the deepest region it names), not the outer one.
TEST(OptRegionCse, IndexVariableMapsOntoTheInnerRegion) {
  auto p = compile(R"(
def f(X: f64[m, k], w: f64[k]) -> f64 {
  let a = sum r. exp(dot(X[r], w))
  let g = for i: m. sum j: m. [j != i] * dot(X[j], w) * X[i, 0]
  a + sum i. g[i]
}
)");
  auto inlined = run_pass(p, "f", opt::inline_functions, opt::no_inlinable_calls);
  auto q = share(inlined, "f");
  EXPECT_EQ(opt_test::count(printed(q, "f"), "shared["), 2) << printed(q, "f");
  for (int64_t m : {0, 1, 3}) {
    for (int64_t k : {1, 3}) {
      expect_same_values(inlined, q, "f", {mat(m, k, 0.9), vec(ramp(k, 0.3))});
    }
  }
}

// Left alone: the first region computes the value only under a guard (materializing it would
// evaluate skipped work), and regions over different ranges.
TEST(OptRegionCse, GuardedFirstOccurrenceAndOtherRangesStayApart) {
  const char* kCases[] = {
      R"(
def f(X: f64[m, k], w: f64[k]) -> f64 {
  let a = sum r. [r >= 1] * dot(X[r], w)
  let g = for j. exp(dot(X[j], w))
  a + sum j. g[j]
}
)",
      R"(
def f(X: f64[m, k], w: f64[k], Y: f64[k, k]) -> f64 {
  let a = sum r. dot(X[r], w)
  let g = for j. exp(dot(Y[j], w))
  a + sum j. g[j]
}
)"};
  for (const char* text : kCases) {
    auto p = compile(text);
    auto inlined = run_pass(p, "f", opt::inline_functions, opt::no_inlinable_calls);
    auto q = share(inlined, "f");
    EXPECT_EQ(printed(q, "f"), printed(inlined, "f"));
  }
}

// A value per point of a region nested at the top of R's body (a row's terms): the gathers of
// a gradient recompute exp(t[i] * x[j]) over the same (i, j) with the roles swapped. It is
// materialized over both regions' index variables, one statement at a time.
TEST(OptRegionCse, ValueOfANestedRegionIsMaterializedOverBoth) {
  auto p = compile(R"(
def f(t: f64[n], x: f64[n]) -> (f64[n], f64[n]) {
  let a = for i. sum j. exp(t[i] * x[j])
  let b = for j. sum i. exp(t[i] * x[j]) * t[i]
  (a, b)
})");
  auto q = share(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(opt_test::count(text, "exp("), 1) << text;
  for (int64_t n : {0, 1, 4}) {
    expect_same_values(p, q, "f", {vec(ramp(n, 0.3)), vec(ramp(n, -0.2))});
  }
  const double inf = std::numeric_limits<double>::infinity();
  expect_same_values(p, q, "f", {vec({1.0, inf, -inf}), vec({0.5, 0.0, std::nan("")})});
  // 3 per (i, j) twice plus one product per (i, j) in b, minus the sums' last additions;
  // after: 2 per (i, j) in the table, then 1 and 2 per (i, j).
  const std::vector<Value> args = {vec(ramp(4, 0.3)), vec(ramp(4, -0.2))};
  EXPECT_EQ(run(p, "f", args).ops, 16 * 2 + 4 * 3 + 16 * 3 + 4 * 3);
  EXPECT_EQ(run(q, "f", args).ops, 16 * 2 + 4 * 3 + 16 * 1 + 4 * 3);
}

// The value under a guard at the top of the nested region (a triangular sum's term) is a table
// under the same guard, read where a later region's guard implies it; a later region whose
// guard does not imply it (the other triangle) keeps its own computation.
TEST(OptRegionCse, GuardedValueOfANestedRegionIsSharedWhereTheGuardHolds) {
  auto p = compile(R"(
def f(t: f64[n], x: f64[n]) -> (f64[n], f64[n]) {
  let a = for i. sum j. [j <= i] * sin(t[i] * x[j])
  let b = for j. sum i. [j <= i] * cos(t[i] * x[j])
  (a, b)
}
def g(t: f64[n], x: f64[n]) -> (f64[n], f64[n]) {
  let a = for i. sum j. [j <= i] * sin(t[i] * x[j])
  let b = for j. sum i. [i < j] * cos(t[i] * x[j])
  (a, b)
})");
  auto q = share(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_NE(text.find("let shared = for i_"), std::string::npos) << text;
  EXPECT_EQ(opt_test::count(text, " * x["), 0) << text;
  EXPECT_EQ(opt_test::count(text, "t["), 1) << text;
  auto r = share(p, "g");
  EXPECT_EQ(printed(r, "g"), printed(p, "g"));
  for (int64_t n : {0, 1, 2, 5}) {
    const std::vector<Value> args = {vec(ramp(n, 0.3)), vec(ramp(n, -0.2))};
    expect_same_values(p, q, "f", args);
  }
  // Before: 3 per point of each triangle (10 points at n = 4), minus the sums' last additions;
  // after: the products once, then 2 per point of each triangle.
  const std::vector<Value> args = {vec(ramp(4, 0.3)), vec(ramp(4, -0.2))};
  EXPECT_EQ(run(p, "f", args).ops, 2 * (10 * 3 - 4));
  EXPECT_EQ(run(q, "f", args).ops, 10 + 2 * (10 * 2 - 4));
}

// A plain loop with one state per point (Horner's rule per data point) is a value like any
// other: computed once per point, read by both regions.
TEST(OptRegionCse, RecurrencePerPointIsMaterializedOnce) {
  auto p = compile(R"(
def f(x: f64[n], c: f64[4]) -> (f64, f64[n]) {
  let a = sum i. { let q = loop q = 0.0 for t < 4 { q * x[i] + c[t] }; q * q }
  let b = for i. 2.0 * (loop q = 0.0 for t < 4 { q * x[i] + c[t] })
  (a, b)
})");
  auto q = share(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(opt_test::count(text, "loop "), 1) << text;
  const std::vector<double> c = {0.5, -1.0, 2.0, 0.25};
  for (int64_t n : {0, 1, 5}) expect_same_values(p, q, "f", {vec(ramp(n, 0.3)), vec(c)});
  const double inf = std::numeric_limits<double>::infinity();
  expect_same_values(p, q, "f", {vec({inf, std::nan(""), 1.0}), vec(c)});
  // Per point: the loop (8), q * q and 2 * q; the sum's additions. After: the loop once.
  const std::vector<Value> args = {vec(ramp(5, 0.3)), vec(c)};
  EXPECT_EQ(run(p, "f", args).ops, 5 * (8 + 1 + 8 + 1) + 4);
  EXPECT_EQ(run(q, "f", args).ops, 5 * (8 + 1 + 1) + 4);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot

namespace cot {
namespace COTANGENT_TEST_UNIT {

// A chain of 70 nested calls computed in two regions: one share per level, more than any
// fixed bound small enough to be a loop guard (the pass stopped at 64 and its postcondition
// reported the rest as a compiler error).
TEST(OptRegionCse, ALongChainIsSharedToTheEnd) {
  std::string chain = "x[i]";
  for (int k = 0; k < 70; ++k) chain = "sin(" + chain + ")";
  auto p = compile("def f(x: f64[n], y: f64[n]) -> f64 {\n  let a = sum i. " + chain +
                   "\n  let b = sum i. " + chain + " * y[i]\n  a * b\n}\n");
  auto q = share(p, "f");
  EXPECT_FALSE(opt::region_cse_postcondition(q, *q.find("f")).has_value());
  expect_same_values(p, q, "f", {vec({0.1, 0.2}), vec({1.0, 2.0})});
  // The chain is computed once per element: 70 calls fewer per element.
  EXPECT_EQ(run(p, "f", {vec({0.1, 0.2}), vec({1.0, 2.0})}).ops -
                run(q, "f", {vec({0.1, 0.2}), vec({1.0, 2.0})}).ops,
            2 * 70);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot

namespace cot {
namespace COTANGENT_TEST_UNIT {

// Eight costly values that no later region computes come before a chain of six that one does.
// A probe copies and rescans the function, so a candidate that failed is not tried again
// after every share, only once more at the end, and one whose value no later region computes
// by value numbers is not probed. (Each share adds a table whose own value is a
// candidate that fails too: 19 distinct; trying every failed one again after each share made
// 83 tries.)
TEST(OptRegionCse, AFailedCandidateIsNotTriedAfterEveryShare) {
  std::string apart, chain = "x[i]";
  for (int k = 0; k < 8; ++k) apart += "exp(z[i, " + std::to_string(k) + "]) + ";
  for (int k = 0; k < 6; ++k) chain = "sin(" + chain + ")";
  auto p = compile("def f(x: f64[n], y: f64[n], z: f64[n, 8]) -> f64 {\n  let a = sum i. " + apart +
                   chain + "\n  let b = sum i. " + chain + " * exp(y[i])\n  a * b\n}\n");
  opt::RegionCseStats stats;
  auto before = *p.find("f");
  ir::Program q = p;
  *q.find("f") = opt::share_across_regions(p, before, stats).function;
  EXPECT_FALSE(opt::region_cse_postcondition(q, *q.find("f")).has_value());
  EXPECT_EQ(stats.shared, 6u);
  EXPECT_GE(stats.distinct, 8u + 6u);
  EXPECT_LE(stats.tried, 2 * stats.distinct + stats.shared);
  // The eight exponentials, and the tables the shares add, fail the value-number test (no later
  // region computes their values) without a probe: every probe shared.
  EXPECT_EQ(stats.probed, stats.shared);
  Value z = mat(2, 8, 0.1);
  expect_same_values(p, q, "f", {vec({0.1, 0.2}), vec({1.0, 2.0}), z});
  const std::vector<Value> args = {vec({0.1, 0.2}), vec({1.0, 2.0}), z};
  EXPECT_EQ(run(p, "f", args).ops - run(q, "f", args).ops, 2 * 6);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot

namespace cot {
namespace COTANGENT_TEST_UNIT {

// The value-number test before a probe must not reject what the probe shares. Here the later
// region computes the candidate's chain (the integer sum `d`, then the table over k) with the
// sum nested inside the table's body (licm cannot hoist it out of a non-affine extent), where
// its binder is one level deeper than in the chain: bound variables hash by how many binders
// out they are, not by their depth from the hashed statement (a review found the pass missing
// this share). The whole pipeline runs with the costly postconditions, whose search does not
// use the test.
TEST(OptRegionCse, the_value_number_test_sees_a_chain_nested_one_level_deeper) {
  auto p = compile(R"(
def f(x: f64[n], idx: i64[n, c]) -> (f64[n], f64[n]) {
  let A = for i. {
    let d = sum m. idx[i, m]
    let g = for k: c * c. exp(x[i] * f64(d)) * f64(k)
    g[0] * g[1] + f64(d)
  }
  let B = for j. {
    let g2 = for k: c * c. exp(x[j] * f64(sum m. idx[j, m])) * f64(k)
    g2[0] * g2[1]
  }
  (A, B)
}
)");
  opt::PipelineOptions o;
  ASSERT_TRUE(o.check_costly_postconditions);
  auto r = opt::optimize_function(p, *p.find("f"), o);
  ASSERT_TRUE(std::holds_alternative<ir::Function>(r)) << std::get<opt::PipelineError>(r).message;
  ir::Program q = p;
  *q.find("f") = std::get<ir::Function>(std::move(r));
  EXPECT_NE(printed(q, "f").find("shared"), std::string::npos) << printed(q, "f");
  Value idx = Value::zeros(cotangent::DType::I64, {2, 2});
  auto id = idx.i64_mut();
  id[0] = 1, id[1] = 2, id[2] = 3, id[3] = 1;
  expect_same_values(p, q, "f", {vec({0.1, 0.2}), idx});
  // Each point's table of c * c exponentials is computed once, not twice.
  EXPECT_LT(run(q, "f", {vec({0.1, 0.2}), idx}).ops, run(p, "f", {vec({0.1, 0.2}), idx}).ops);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
