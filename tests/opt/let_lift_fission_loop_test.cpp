// Loop fission (src/opt/loop_fission.h) out of counted loops and through the branches of ifs on
// conditions bound outside the region: a chain nested in a counted loop's body that depends on
// neither the state nor the counter is materialized before the loop under [count >= 1]; a chain
// in an if branch is materialized under the branch's condition. Golden forms, values at empty
// and non-empty extents, trip counts 0, 1 and more, NaN, and the op counts.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "opt/let_lift.h"
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
using opt_test::tensor;

ir::Program lift(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::let_lift, opt::let_lift_postcondition);
}

TEST(OptLetLiftFissionLoop, RowSumMovesOutOfACountedLoop) {
  auto p = compile(R"(
def f(x: f64[n], A: f64[n, m], c: i64) -> f64[n] {
  loop s = x for t < c { for i. 0.5 * s[i] + tanh(sum j. A[i, j] * A[i, j]) }
}
)");
  auto q = lift(p, "f");
  EXPECT_EQ(printed(q, "f"), R"(def f(x: f64[n], A: f64[n, m], c: i64) -> f64[n] {
  let t27 = [c >= 1] * {
    let t26 = for i_19: n. {
      let t24 = sum j_20: m. {
        let t21 = A[i_19, j_20]
        let t22 = A[i_19, j_20]
        let t23 = t21 * t22
        t23
      }
      let t25 = tanh(t24)
      t25
    }
    t26
  }
  let t18 = loop s = x for t < c {
    let t17 = for i: n. {
      let t8 = s[i]
      let t9 = 0.5 * t8
      let t15 = t27[i]
      let t16 = t9 + t15
      t16
    }
    t17
  }
  t18
}
)") << printed(q, "f");
  for (int64_t c : {0, 1, 3}) {
    for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {2, 0}, {0, 3}, {3, 4}}) {
      expect_same_values(p, q, "f", {tensor({n}, 0.3), tensor({n, m}, -0.2), Value::i64(c)});
    }
  }
  Value a = tensor({2, 2}, 0.1);
  a.f64_mut()[1] = std::numeric_limits<double>::quiet_NaN();
  expect_same_values(p, q, "f", {tensor({2}, 0.3), a, Value::i64(2)});
  // Per iteration n * (2m - 1 + 3) before (the sum, tanh, the product and the addition); the
  // rows n * (2m - 1 + 1) once and 2n per iteration after.
  const std::vector<Value> args{tensor({3}, 0.3), tensor({3, 4}, -0.2), Value::i64(5)};
  EXPECT_EQ(run(p, "f", args).ops, 5 * 3 * 10);
  EXPECT_EQ(run(q, "f", args).ops, 3 * 8 + 5 * 3 * 2);
}

TEST(OptLetLiftFissionLoop, ChainInABranchIsMaterializedUnderItsCondition) {
  auto p = compile(R"(
def f(w: f64[k], X: f64[m, k], b: bool) -> f64[k] {
  for j. sum r. (if b then (sum i. X[r, i] * w[i]) * X[r, j] else X[r, j])
}
)");
  auto q = lift(p, "f");
  EXPECT_EQ(printed(q, "f"), R"(def f(w: f64[k], X: f64[m, k], b: bool) -> f64[k] {
  let t25 = [b && k >= 1] * {
    let t24 = for r_18: m. {
      let t23 = sum i_19: k. {
        let t20 = X[r_18, i_19]
        let t21 = w[i_19]
        let t22 = t20 * t21
        t22
      }
      t23
    }
    t24
  }
  let t17 = for j: k. {
    let t16 = sum r: m. {
      let t15 = if b then {
        let t11 = t25[r]
        let t12 = X[r, j]
        let t13 = t11 * t12
        t13
      } else {
        let t14 = X[r, j]
        t14
      }
      t15
    }
    t16
  }
  t17
}
)") << printed(q, "f");
  for (bool b : {false, true}) {
    for (auto [k, m] :
         std::vector<std::pair<int64_t, int64_t>>{{0, 0}, {0, 3}, {3, 0}, {1, 1}, {3, 4}}) {
      expect_same_values(p, q, "f", {tensor({k}, 0.3), tensor({m, k}, -0.2), Value::boolean(b)});
    }
  }
  const std::vector<Value> args{tensor({3}, 0.3), tensor({4, 3}, -0.2), Value::boolean(true)};
  // Per j: m * (2k - 1 + 1) before; the rows m * (2k - 1) once, m * (1 + 1) - 1 per j after.
  EXPECT_EQ(run(p, "f", args).ops, 3 * (4 * 6 + 3));
  EXPECT_EQ(run(q, "f", args).ops, 4 * 5 + 3 * (4 + 3));
}

// A chain that reads the state or the counter, and a while loop, stay.
TEST(OptLetLiftFissionLoop, WhatVariesInTheLoopStays) {
  auto p = compile(R"(
def f(x: f64[n], A: f64[n, m], c: i64) -> f64[n] {
  loop s = x for t < c { for i. tanh(sum j. A[i, j] * s[i]) }
}
def g(x: f64[n], A: f64[n, m], c: i64) -> f64[n] {
  loop s = x for t < c { for i. tanh(sum j. A[i, j] * f64(t)) }
}
def h(x: f64[n], A: f64[n, m]) -> f64[n] {
  loop s = x while s[0] < 10.0 { for i. s[i] + exp(sum j. A[i, j] * A[i, j]) }
}
)");
  for (const char* fn : {"f", "g", "h"}) {
    EXPECT_EQ(printed(lift(p, fn), fn), printed(p, fn)) << fn;
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
