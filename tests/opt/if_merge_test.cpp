// Merging ifs on one condition (pass "if-merge").
#include "opt/if_merge.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ad/fd_harness.h"
#include "cotangent/cotangent.h"
#include "opt/cse.h"
#include "opt/opt_test_util.h"
#include "opt/simplify.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::Value;
using cotangent::adtest::f64_vector;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;
using opt_test::run_pass;

ir::Program merged(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::merge_ifs, opt::if_merge_postcondition);
}
// Merging, then CSE: what the pipeline does in one round.
ir::Program merged_and_shared(const ir::Program& p, const std::string& fn) {
  return run_pass(merged(p, fn), fn, opt::eliminate_common_subexpressions, opt::cse_postcondition);
}

using opt_test::curve;
using opt_test::empty_vector;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The shape reverse mode makes for logsumexp: a primal if and an adjoint if on one condition,
// a statement between reading the first, both else branches summing the same exps.
constexpr const char* kTwoIfs = R"(
def f(x: f64[n], flag: bool) -> f64 {
  let a = if flag then 0.0 else log(sum i. exp(x[i]))
  let b = a * 2.0
  let c = if flag then b else b / (sum i. exp(x[i]))
  c + a
})";

void expect_same_on_edge_cases(const ir::Program& p, const ir::Program& q) {
  for (bool flag : {false, true}) {
    for (int n : {1, 5}) expect_same_values(p, q, "f", {curve(n), Value::boolean(flag)});
    expect_same_values(p, q, "f", {empty_vector(), Value::boolean(flag)});
    expect_same_values(p, q, "f", {f64_vector({1.0, kInf, -kInf, kNaN}), Value::boolean(flag)});
    expect_same_values(p, q, "f", {f64_vector({kInf, 2.0}), Value::boolean(flag)});
  }
}

TEST(OptIfMerge, two_ifs_on_one_condition_become_one) {
  auto p = opt_test::compile(kTwoIfs);
  auto q = merged(p, "f");
  EXPECT_EQ(printed(q, "f"), R"(def f(x: f64[n], flag: bool) -> f64 {
  let (a, b, c, t16) = if flag then {
    let b_17 = 0.0 * 2.0
    let t19 = b_17 + 0.0
    (0.0, b_17, b_17, t19)
  } else {
    let t6 = sum i: n. {
      let t4 = x[i]
      let t5 = exp(t4)
      t5
    }
    let t7 = log(t6)
    let b_18 = t7 * 2.0
    let t13 = sum i_10: n. {
      let t11 = x[i_10]
      let t12 = exp(t11)
      t12
    }
    let t14 = b_18 / t13
    let t20 = t14 + t7
    (t7, b_18, t14, t20)
  }
  t16
}
)");  // c + a moved into the branches, where a is the literal 0.0 in one (simplify folds it)
  expect_same_on_edge_cases(p, q);
}

// Reverse mode's contributions to one element from the two branches of a primal if, merged:
// (a, b) = if c then {(A, 0.0)} else {(0.0, B)}; a + b. The sum moves into the branches, where
// it folds: a functional update of one element of a vector costs one operation per element
// touched, not one per element (a loop that updates v[t] is then linear, not quadratic).
TEST(OptIfMerge, an_operation_on_an_ifs_results_moves_into_its_branches) {
  auto p = opt_test::compile(R"(
def f(v: f64[n], s: f64[n], t: i64) -> f64[n] {
  for i. {
    let here = i == t
    let a = if here then 2.0 * v[i] * s[i] else 0.0
    let b = if here then 0.0 else s[i]
    a + b
  }
})");
  auto q = run_pass(merged(p, "f"), "f", opt::simplify_algebra, opt::simplify_postcondition);
  const std::string text = printed(q, "f");
  EXPECT_EQ(opt_test::count(text, " + "), 0) << text;
  EXPECT_EQ(opt_test::count(text, "if "), 1) << text;
  for (int64_t t : {-1, 0, 2, 4}) {
    for (int n : {0, 1, 5}) {
      expect_same_values(p, q, "f", {curve(n), curve(n), Value::i64(t)});
    }
    expect_same_values(
        p, q, "f", {f64_vector({kNaN, kInf, 1.0}), f64_vector({1.0, -kInf, kNaN}), Value::i64(t)});
  }
  // Before: 2 muls at i == t and one add per element; after: the 2 muls only.
  EXPECT_EQ(run(p, "f", {curve(5), curve(5), Value::i64(2)}).ops, 2 + 5);
  EXPECT_EQ(run(q, "f", {curve(5), curve(5), Value::i64(2)}).ops, 2);
}

// After merging, CSE shares the sum the two else branches computed.
TEST(OptIfMerge, cse_then_shares_the_sum_of_both_branches) {
  auto p = opt_test::compile(kTwoIfs);
  auto q = merged_and_shared(p, "f");
  EXPECT_EQ(opt_test::count(printed(q, "f"), "sum i"), 1) << printed(q, "f");
  expect_same_on_edge_cases(p, q);
  // 2 * (n exps + n - 1 adds) + log + 2 muls/divs + add before; one sum after.
  EXPECT_EQ(run(p, "f", {curve(5), Value::boolean(false)}).ops, 2 * (5 + 4) + 1 + 1 + 1 + 1);
  EXPECT_EQ(run(q, "f", {curve(5), Value::boolean(false)}).ops, (5 + 4) + 1 + 1 + 1 + 1);
  EXPECT_EQ(run(q, "f", {curve(5), Value::boolean(true)}).ops,
            run(p, "f", {curve(5), Value::boolean(true)}).ops);
}

// Inside a branch of `if flag`, flag is known: nested ifs on it fold (in a generator too). The
// read x[k] between the ifs does not depend on the first: it stays before the merged if.
TEST(OptIfMerge, a_known_condition_folds_inside_its_branches) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], flag: bool, k: i64) -> f64 {
  let s = if flag then 1.0 else 0.0
  let r = x[k] + s
  let t = if flag then r * 3.0 else {
    let u = for j. if flag then x[j] else s + x[j]
    (if flag then 2.0 else r) + u[0] + s
  }
  t
})");
  auto q = merged(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(opt_test::count(text, "if "), 1) << text;
  EXPECT_LT(text.find("x[k]"), text.find("if flag")) << text;
  EXPECT_EQ(opt_test::count(text, "0.0 + t10"), 1) << text;  // s is 0.0 in the else branch
  for (bool flag : {false, true}) {
    for (int64_t k : {0, 2}) {
      expect_same_values(p, q, "f", {curve(3), Value::boolean(flag), Value::i64(k)});
      expect_same_values(p, q, "f",
                         {f64_vector({kNaN, kInf, -kInf}), Value::boolean(flag), Value::i64(k)});
    }
    // Out of range: the same error at both.
    auto a = run(p, "f", {curve(2), Value::boolean(flag), Value::i64(5)});
    auto b = run(q, "f", {curve(2), Value::boolean(flag), Value::i64(5)});
    EXPECT_FALSE(a.ok);
    EXPECT_EQ(a.error, b.error);
  }
}

// Ifs on different conditions, and a pair whose first may fail with a failing read between,
// are left alone.
TEST(OptIfMerge, leaves_ifs_that_must_stay_apart) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], a: bool, b: bool, k: i64) -> f64 {
  let u = if a then x[0] else 1.0
  let v = if b then 2.0 else x[1]
  let w = x[k]
  let z = if a then w else 3.0
  u + v + z
})");
  auto q = merged(p, "f");
  EXPECT_EQ(printed(q, "f"), printed(p, "f"));
}

// The result of an earlier if on the condition that cannot merge (it may fail, and so may the
// read between) is known inside the later one's branches.
TEST(OptIfMerge, an_earlier_result_is_known_where_the_ifs_do_not_merge) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], flag: bool, k: i64) -> f64 {
  let s = if flag then x[0] * 2.0 else 0.5
  let w = x[k]
  let t = if flag then w else w * s
  t + s
})");
  auto q = merged(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(opt_test::count(text, "if flag"), 2) << text;
  EXPECT_EQ(opt_test::count(text, "w * 0.5"), 1) << text;
  for (bool flag : {false, true}) {
    for (int64_t k : {0, 2}) {
      expect_same_values(p, q, "f", {curve(3), Value::boolean(flag), Value::i64(k)});
      expect_same_values(p, q, "f",
                         {f64_vector({kNaN, kInf, -kInf}), Value::boolean(flag), Value::i64(k)});
    }
  }
}

TEST(OptIfMerge, postcondition_rejects_ifs_it_would_merge) {
  auto p = opt_test::compile(kTwoIfs);
  auto broken = opt::if_merge_postcondition(p, *p.find("f"));
  ASSERT_TRUE(broken.has_value());
  EXPECT_NE(broken->find("two ifs on flag"), std::string::npos) << *broken;
  auto q = merged(p, "f");
  EXPECT_FALSE(opt::if_merge_postcondition(q, *q.find("f")).has_value());
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
