// Loop fission through guards (src/opt/loop_fission.h): a costly chain inside a bracket of a
// gen/reduce body is materialized over the index variables it needs, at the points where the
// original evaluated it at least once (the guard and the ranges projected onto those variables
// by Fourier-Motzkin); points that would not have been evaluated stay under a guard, inside H or
// around it. Golden forms, values (NaN and infinities included) and op counts that never grow,
// at empty, single and larger sizes, and the guards that cannot be projected exactly.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
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

// The same with a NaN and an infinity among the first elements (when there are that many).
Value special(std::vector<int64_t> shape, double seed) {
  Value v = tensor(std::move(shape), seed);
  auto xs = v.f64_mut();
  if (xs.size() > 1) xs[1] = std::numeric_limits<double>::quiet_NaN();
  if (xs.size() > 2) xs[2] = -std::numeric_limits<double>::infinity();
  return v;
}

ir::Program lift(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::let_lift, opt::let_lift_postcondition);
}

// The band of a transposed 3-tap convolution (as in the x adjoint of tests/opt/corpus/shifts.cot's
// conv3): for each j, the i with i <= j <= i + 2 read a value that depends on i only. Every i of
// [0, n) is in the band of some j (j = i), so H covers all of them, unguarded.
TEST(OptLetLiftFissionGuard, BandOfATransposedStencil) {
  auto p = compile(R"(
def band(x: f64[n], w: f64[3]) -> f64[n] {
  for j: n. sum i: n. [i <= j && j <= i + 2] * exp(sum k: 3. [i + k < n] * x[i + k] * w[k]) * w[j - i]
}
)");
  EXPECT_TRUE(opt::let_lift_postcondition(p, *p.find("band")).has_value());
  auto q = lift(p, "band");
  EXPECT_EQ(printed(q, "band"), R"(def band(x: f64[n], w: f64[3]) -> f64[n] {
  let t25 = for i_17: n. {
    let t23 = sum k_18: 3. {
      let t22 = [i_17 + k_18 < n] * {
        let t19 = x[i_17 + k_18]
        let t20 = w[k_18]
        let t21 = t19 * t20
        t21
      }
      t22
    }
    let t24 = exp(t23)
    t24
  }
  let t16 = for j: n. {
    let t15 = sum i: n. {
      let t14 = [i <= j && j <= i + 2] * {
        let t11 = t25[i]
        let t12 = w[j - i]
        let t13 = t11 * t12
        t13
      }
      t14
    }
    t15
  }
  t16
}
)");
  for (int64_t n : {0, 1, 2, 3, 4, 9}) {
    for (bool nan : {false, true}) {
      std::vector<Value> args = {nan ? special({n}, 0.25) : tensor({n}, 0.25), tensor({3}, 0.5)};
      expect_same_values(p, q, "band", args);
      const int64_t before = run(p, "band", args).ops, after = run(q, "band", args).ops;
      EXPECT_LE(after, before) << n;
      if (n >= 3) {
        EXPECT_LT(after, before) << n;
      }
    }
  }
}

// [r > 0] keeps r = 0 out of H: the guard moves into H's body (the row value of r = 0 is never
// computed, as in the original).
TEST(OptLetLiftFissionGuard, GuardOnTheKeptIndexGoesInsideH) {
  auto p = compile(R"(
def guarded(w: f64[k], X: f64[m, k]) -> f64[k] {
  for j. sum r. [r > 0] * ((sum i. X[r, i] * w[i]) * X[r, j])
}
)");
  auto q = lift(p, "guarded");
  EXPECT_EQ(printed(q, "guarded"), R"(def guarded(w: f64[k], X: f64[m, k]) -> f64[k] {
  let t24 = [k >= 1] * {
    let t23 = for r_16: m. {
      let t22 = [r_16 >= 1] * {
        let t21 = sum i_17: k. {
          let t18 = X[r_16, i_17]
          let t19 = w[i_17]
          let t20 = t18 * t19
          t20
        }
        t21
      }
      t22
    }
    t23
  }
  let t15 = for j: k. {
    let t14 = sum r: m. {
      let t13 = [r >= 1] * {
        let t10 = t24[r]
        let t11 = X[r, j]
        let t12 = t10 * t11
        t12
      }
      t13
    }
    t14
  }
  t15
}
)");
  for (int64_t k : {0, 1, 2, 5}) {
    for (int64_t m : {0, 1, 2, 4}) {
      std::vector<Value> args = {special({k}, 0.25), tensor({m, k}, 0.5)};
      expect_same_values(p, q, "guarded", args);
      const int64_t before = run(p, "guarded", args).ops, after = run(q, "guarded", args).ops;
      EXPECT_LE(after, before) << k << " " << m;
      if (k >= 2 && m >= 2) {
        EXPECT_LT(after, before) << k << " " << m;
      }
    }
  }
}

// [j >= 2] only holds for some j when k >= 3: H sits under [k >= 3], so at k <= 2 nothing is
// computed, as in the original.
TEST(OptLetLiftFissionGuard, GuardOnTheDroppedIndexGuardsH) {
  auto p = compile(R"(
def late(w: f64[k], X: f64[m, k]) -> f64[k] {
  for j. sum r. [j >= 2] * ((sum i. X[r, i] * w[i]) * X[r, j])
}
)");
  auto q = lift(p, "late");
  EXPECT_EQ(printed(q, "late"), R"(def late(w: f64[k], X: f64[m, k]) -> f64[k] {
  let t23 = [k >= 3] * {
    let t22 = for r_16: m. {
      let t21 = sum i_17: k. {
        let t18 = X[r_16, i_17]
        let t19 = w[i_17]
        let t20 = t18 * t19
        t20
      }
      t21
    }
    t22
  }
  let t15 = for j: k. {
    let t14 = sum r: m. {
      let t13 = [j >= 2] * {
        let t10 = t23[r]
        let t11 = X[r, j]
        let t12 = t10 * t11
        t12
      }
      t13
    }
    t14
  }
  t15
}
)");
  for (int64_t k : {0, 1, 2, 3, 5}) {
    for (int64_t m : {0, 1, 3}) {
      std::vector<Value> args = {tensor({k}, 0.25), special({m, k}, 0.5)};
      expect_same_values(p, q, "late", args);
      const int64_t before = run(p, "late", args).ops, after = run(q, "late", args).ops;
      EXPECT_LE(after, before) << k << " " << m;
      if (k <= 2) {
        EXPECT_EQ(after, before) << k << " " << m;
      }
      if (k >= 4 && m >= 1) {
        EXPECT_LT(after, before) << k << " " << m;
      }
    }
  }
}

// Guards whose projection is not exact or not affine stay: a coefficient 2 on the index that
// would be projected away (the integer points of 2j <= r are not those of the rational
// shadow), a condition computed in the region, a disjunction.
TEST(OptLetLiftFissionGuard, GuardsThatDoNotProjectStay) {
  auto p = compile(R"(
def strided(w: f64[k], X: f64[m, k]) -> f64[k] {
  for j. sum r. [2 * j <= r && r <= 2 * j] * ((sum i. X[r, i] * w[i]) * X[r, j])
}
def computed(w: f64[k], X: f64[m, k]) -> f64[k] {
  for j. sum r. [X[r, j] > 0.0] * ((sum i. X[r, i] * w[i]) * X[r, j])
}
def either(w: f64[k], X: f64[m, k]) -> f64[k] {
  for j. sum r. [r == j || r == 0] * ((sum i. X[r, i] * w[i]) * X[r, j])
}
)");
  for (const char* fn : {"strided", "computed", "either"}) {
    EXPECT_FALSE(opt::let_lift_postcondition(p, *p.find(fn)).has_value()) << fn;
    auto q = lift(p, fn);
    EXPECT_EQ(printed(q, fn), printed(p, fn)) << fn;
  }
}

// A guard that may be a strong zero is not materialized (its additions are free), but the
// chain inside it is, under the same guard.
TEST(OptLetLiftFissionGuard, ChainInsideAGuardRoot) {
  auto p = compile(R"(
def guard_root(y: f64[m], X: f64[m, k]) -> f64[k] {
  for j. sum r. ([r > 0] * exp(y[r])) + X[r, j]
}
)");
  auto q = lift(p, "guard_root");
  EXPECT_EQ(printed(q, "guard_root"), R"(def guard_root(y: f64[m], X: f64[m, k]) -> f64[k] {
  let t18 = [k >= 1] * {
    let t17 = for r_13: m. {
      let t16 = [r_13 >= 1] * {
        let t14 = y[r_13]
        let t15 = exp(t14)
        t15
      }
      t16
    }
    t17
  }
  let t12 = for j: k. {
    let t11 = sum r: m. {
      let t8 = [r >= 1] * {
        let t7 = t18[r]
        t7
      }
      let t9 = X[r, j]
      let t10 = t8 + t9
      t10
    }
    t11
  }
  t12
}
)");
  for (int64_t k : {0, 1, 2, 5}) {
    for (int64_t m : {0, 1, 2, 4}) {
      std::vector<Value> args = {special({m}, 0.25), tensor({m, k}, 0.5)};
      expect_same_values(p, q, "guard_root", args);
      const int64_t before = run(p, "guard_root", args).ops;
      const int64_t after = run(q, "guard_root", args).ops;
      EXPECT_LE(after, before) << k << " " << m;
      if (k >= 2 && m >= 2) {
        EXPECT_LT(after, before) << k << " " << m;
      }
    }
  }
}

// The whole pipeline: the gradient of conv3 (tests/opt/corpus/shifts.cot) computes each output
// of the convolution once, not once per neighbour in the transposed stencil.
TEST(OptLetLiftFissionGuard, PipelineGradientOfConv3IsLinear) {
  const char* src = R"(
def conv3(x: f64[n], w: f64[3]) -> f64 {
  let y = for i: n. sum k: 3. [i + k < n] * x[i + k] * w[k]
  sum i. y[i] * y[i]
}
)";
  cotangent::LoadOptions o0, o2;
  o0.opt_level = 0;
  o2.opt_level = 2;
  auto m0 = cotangent::Module::from_string(src, "conv3.cot", o0);
  auto m2 = cotangent::Module::from_string(src, "conv3.cot", o2);
  ASSERT_TRUE(m0.ok()) << m0.message();
  ASSERT_TRUE(m2.ok()) << m2.message();
  for (int64_t n : {0, 1, 2, 3, 10, 100}) {
    std::vector<Value> args = {tensor({n}, 0.25), tensor({3}, 0.5)};
    auto f = m2.value().cost("conv3", args);
    auto c0 = m0.value().derivative_cost("conv3", cotangent::DerivativeKind::ValueAndGrad, args);
    auto c2 = m2.value().derivative_cost("conv3", cotangent::DerivativeKind::ValueAndGrad, args);
    ASSERT_TRUE(f.ok()) << f.message();
    ASSERT_TRUE(c0.ok()) << c0.message();
    ASSERT_TRUE(c2.ok()) << c2.message();
    EXPECT_LE(c2.value().ops, c0.value().ops) << n;
    // The cheap-gradient bound.
    EXPECT_LE(c2.value().ops, 4 * f.value().ops + n + 3 + 1) << n;
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
