// Let-lifting (src/opt/let_lift.h): nested binders flatten ([Bernstein20] rule 5.27 and its sum
// analogue), through a sole guard too; the cost never changes; the non-cases stay.
#include "opt/let_lift.h"

#include <gtest/gtest.h>

#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::DType;
using cotangent::Value;
using opt_test::compile;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;
using opt_test::run_pass;

Value mat(int64_t n, int64_t m, double seed) {
  Value v = Value::zeros(DType::F64, {n, m});
  for (int64_t k = 0; k < n * m; ++k) {
    v.f64_mut()[static_cast<size_t>(k)] = seed * static_cast<double>(k % 5) - 0.125 * k;
  }
  return v;
}

ir::Program lift(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::let_lift, opt::let_lift_postcondition);
}

TEST(OptLetLift, NestedGensFlatten) {
  auto p = compile(R"(
def g(A: f64[n, m]) -> f64[n, m, 2] {
  for i. for j. for k: 2. A[i, j] * f64(k)
}
)");
  auto q = lift(p, "g");
  EXPECT_EQ(printed(q, "g"), R"(def g(A: f64[n, m]) -> f64[n, m, 2] {
  let t11 = for i: n, j: m, k: 2. {
    let t6 = A[i, j]
    let t7 = f64(k)
    let t8 = t6 * t7
    t8
  }
  t11
}
)");
  EXPECT_TRUE(opt::let_lift_postcondition(p, *p.find("g")).has_value());
  for (int64_t n : {1, 3}) expect_same_values(p, q, "g", {mat(n, 2, 0.5)});
}

TEST(OptLetLift, NestedScalarSumsFlattenAtTheSameCost) {
  auto p = compile(R"(
def s(A: f64[n, m]) -> f64 {
  sum i. sum j. A[i, j] * A[i, j]
}
def t(A: f64[n, m]) -> f64 {
  sum i. [i > 0] * sum j. [j < i] * A[i, j]
}
)");
  auto q = lift(p, "s");
  EXPECT_EQ(printed(q, "s"), R"(def s(A: f64[n, m]) -> f64 {
  let t9 = sum i: n, j: m. {
    let t5 = A[i, j]
    let t6 = A[i, j]
    let t7 = t5 * t6
    t7
  }
  t9
}
)");
  auto r = lift(p, "t");
  EXPECT_EQ(printed(r, "t"), R"(def t(A: f64[n, m]) -> f64 {
  let t9 = sum i: n, j: m. {
    let t8 = [i >= 1] * {
      let t6 = [j < i] * {
        let t5 = A[i, j]
        t5
      }
      t6
    }
    t8
  }
  t9
}
)");
  for (auto [n, m] : {std::pair<int64_t, int64_t>{1, 1}, {3, 4}, {5, 2}}) {
    expect_same_values(p, q, "s", {mat(n, m, 0.5)});
    expect_same_values(p, r, "t", {mat(n, m, 0.5)});
    EXPECT_EQ(run(q, "s", {mat(n, m, 0.5)}).ops, run(p, "s", {mat(n, m, 0.5)}).ops);
    EXPECT_EQ(run(r, "t", {mat(n, m, 0.5)}).ops, run(p, "t", {mat(n, m, 0.5)}).ops);
  }
}

TEST(OptLetLift, GuardedGenFlattens) {
  auto p = compile(R"(
def h(A: f64[n, m]) -> f64[n, m] {
  for i. [i > 0] * for j. A[i, j]
}
)");
  auto q = lift(p, "h");
  EXPECT_EQ(printed(q, "h"), R"(def h(A: f64[n, m]) -> f64[n, m] {
  let t8 = for i: n, j: m. {
    let t9 = [i >= 1] * {
      let t5 = A[i, j]
      t5
    }
    t9
  }
  t8
}
)");
  expect_same_values(p, q, "h", {mat(3, 2, 0.25)});
}

TEST(OptLetLift, NonCasesStay) {
  auto p = compile(R"(
def a(x: f64[n], y: f64[m]) -> f64[n, m] {
  for i. { let e = exp(x[i]); for j. e * y[j] }
}
def b(A: f64[n, m]) -> f64 {
  max i. max j. A[i, j]
}
def c(A: i64[n, m]) -> i64 {
  sum i. sum j. A[i, j]
}
def d(A: f64[n, m]) -> f64[m] {
  sum i: n. sum k. A[k]
}
def e(A: f64[n, m]) -> f64 {
  sum i. (sum j. A[i, j]) * 2.0
}
)");
  for (const char* fn : {"a", "b", "c", "d", "e"}) {
    auto q = lift(p, fn);
    EXPECT_EQ(printed(q, fn), printed(p, fn)) << fn;
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
