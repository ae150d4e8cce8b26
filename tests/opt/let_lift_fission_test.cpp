// Loop fission in the let-lift pass (src/opt/let_lift.h; [Bernstein20] rules 5.6/5.7): a costly
// chain of statements in nested gen/reduce bodies that does not depend on an enclosing region
// moves out of it as a generator over the index variables it needs, read back where it was.
// Golden forms, values at sizes 0 and 1 and above, the op counts before and after (exact), and
// the non-cases.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <tuple>
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

ir::Program lift(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::let_lift, opt::let_lift_postcondition);
}

// (k, m) pairs: empty, single and larger extents on either side.
const std::vector<std::pair<int64_t, int64_t>> kSizes = {{0, 0}, {0, 3}, {3, 0}, {1, 1}, {1, 4},
                                                         {4, 1}, {2, 2}, {3, 5}, {8, 8}};

const char* kRegression = R"(
def f(w: f64[k], X: f64[m, k], y: f64[m]) -> f64[k] {
  for j. sum r. (sum i. X[r, i] * w[i] - y[r]) * X[r, j]
}
)";

TEST(OptLetLiftFission, RegressionGradientChainIsMaterialized) {
  auto p = compile(kRegression);
  EXPECT_TRUE(opt::let_lift_postcondition(p, *p.find("f")).has_value());
  auto q = lift(p, "f");
  EXPECT_EQ(printed(q, "f"), R"(def f(w: f64[k], X: f64[m, k], y: f64[m]) -> f64[k] {
  let t27 = [k >= 1] * {
    let t26 = for r_18: m. {
      let t25 = sum i_19: k. {
        let t20 = X[r_18, i_19]
        let t21 = w[i_19]
        let t22 = t20 * t21
        let t23 = y[r_18]
        let t24 = t22 - t23
        t24
      }
      t25
    }
    t26
  }
  let t17 = for j: k. {
    let t16 = sum r: m. {
      let t13 = t27[r]
      let t14 = X[r, j]
      let t15 = t13 * t14
      t15
    }
    t16
  }
  t17
}
)");
}

TEST(OptLetLiftFission, RegressionValuesAndOpCounts) {
  auto p = compile(kRegression);
  auto q = lift(p, "f");
  for (auto [k, m] : kSizes) {
    std::vector<Value> args = {tensor({k}, 0.25), tensor({m, k}, 0.5), tensor({m}, -0.75)};
    expect_same_values(p, q, "f", args);
    const int64_t before = run(p, "f", args).ops, after = run(q, "f", args).ops;
    if (k == 0 || m == 0) {
      EXPECT_EQ(before, 0);
      EXPECT_EQ(after, 0);
      continue;
    }
    // Before: per (j, r) the inner sum (k products, k differences, k - 1 additions) and one
    // product, plus m - 1 additions per j: O(k·m·k). After: the inner sum once per r, then
    // one product per (j, r) and the additions: O(m·k).
    EXPECT_EQ(before, k * (3 * k * m + m - 1)) << k << " " << m;
    EXPECT_EQ(after, 5 * k * m - k - m) << k << " " << m;
  }
}

// A statement the chain and the rest of the body both need is copied when it is a read (the
// row), and the row's slice read stays for X[r][j].
TEST(OptLetLiftFission, CostFreeSharedStatementIsCopied) {
  auto p = compile(R"(
def g(w: f64[k], X: f64[m, k]) -> f64[k] {
  for j. sum r. { let row = X[r]; (sum i. row[i] * w[i]) * row[j] }
}
)");
  auto q = lift(p, "g");
  EXPECT_EQ(printed(q, "g"), R"(def g(w: f64[k], X: f64[m, k]) -> f64[k] {
  let t24 = [k >= 1] * {
    let t23 = for r_16: m. {
      let row_17 = X[r_16]
      let t22 = sum i_18: k. {
        let t19 = row_17[i_18]
        let t20 = w[i_18]
        let t21 = t19 * t20
        t21
      }
      t22
    }
    t23
  }
  let t15 = for j: k. {
    let t14 = sum r: m. {
      let row = X[r]
      let t11 = t24[r]
      let t12 = row[j]
      let t13 = t11 * t12
      t13
    }
    t14
  }
  t15
}
)");
  for (auto [k, m] : kSizes) {
    expect_same_values(p, q, "g", {tensor({k}, 0.25), tensor({m, k}, 0.5)});
  }
}

// The chain sits two regions deep and depends on both of them (r and s), and on a read bound
// in the outer one (copied into the generator).
TEST(OptLetLiftFission, ChainTwoLevelsDeepRangesOverBoth) {
  auto p = compile(R"(
def h(A: f64[m, p, k], B: f64[p, k], C: f64[m]) -> f64[k] {
  for j. sum r. { let c = C[r]; (sum s. (sum i. A[r, s, i] * c) * B[s, j]) * c }
}
)");
  auto q = lift(p, "h");
  EXPECT_EQ(printed(q, "h"), R"(def h(A: f64[m, p, k], B: f64[p, k], C: f64[m]) -> f64[k] {
  let t28 = [k >= 1] * {
    let t27 = for r_20: m, s_21: p. {
      let c_22 = C[r_20]
      let t26 = sum i_23: k. {
        let t24 = A[r_20, s_21, i_23]
        let t25 = t24 * c_22
        t25
      }
      t26
    }
    t27
  }
  let t19 = for j: k. {
    let t18 = sum r: m. {
      let c = C[r]
      let t16 = sum s: p. {
        let t13 = t28[r, s]
        let t14 = B[s, j]
        let t15 = t13 * t14
        t15
      }
      let t17 = t16 * c
      t17
    }
    t18
  }
  t19
}
)");
  for (auto [k, m] : kSizes) {
    for (int64_t pp : {0, 1, 3}) {
      std::vector<Value> args = {tensor({m, pp, k}, 0.5), tensor({pp, k}, 0.25), tensor({m}, -0.5)};
      expect_same_values(p, q, "h", args);
      if (k >= 2 && m >= 1 && pp >= 1) {
        EXPECT_LT(run(q, "h", args).ops, run(p, "h", args).ops) << k << " " << m << " " << pp;
      }
    }
  }
}

// A region with several index variables (for a, b after flattening): the chain depends on a
// only, so it is computed once per a, not once per (a, b).
TEST(OptLetLiftFission, PartOfAJointRegion) {
  auto p = compile(R"(
def o(w: f64[k], X: f64[m, k], v: f64[n]) -> f64[m, n] {
  for a. for b. exp(sum i. X[a, i] * w[i]) * v[b]
}
)");
  auto q = lift(p, "o");
  EXPECT_EQ(printed(q, "o"), R"(def o(w: f64[k], X: f64[m, k], v: f64[n]) -> f64[m, n] {
  let t26 = [n >= 1] * {
    let t25 = for a_18: m. {
      let t23 = sum i_19: k. {
        let t20 = X[a_18, i_19]
        let t21 = w[i_19]
        let t22 = t20 * t21
        t22
      }
      let t24 = exp(t23)
      t24
    }
    t25
  }
  let t17 = for a: m, b: n. {
    let t13 = t26[a]
    let t14 = v[b]
    let t15 = t13 * t14
    t15
  }
  t17
}
)");
  for (auto [k, m] : kSizes) {
    for (int64_t n : {0, 1, 5}) {
      std::vector<Value> args = {tensor({k}, 0.25), tensor({m, k}, 0.5), tensor({n}, 1.5)};
      expect_same_values(p, q, "o", args);
      const int64_t after = run(q, "o", args).ops;
      // exp and the dot product once per a (when the b range is not empty), one product per
      // (a, b).
      const int64_t per_a = k == 0 ? 1 : 2 * k;
      EXPECT_EQ(after, (n == 0 ? 0 : m * per_a) + m * n) << k << " " << m << " " << n;
    }
  }
}

// A root that is a sum over a range that may be empty is a strong zero then (its users' additions
// are free): the read keeps it one, so the op count does not grow at p = 0.
TEST(OptLetLiftFission, StrongZeroOfAnEmptySumIsKept) {
  auto p = compile(R"(
def z(A: f64[m, p], X: f64[m, k]) -> f64[k] {
  for j. sum r. (sum i. A[r, i] * A[r, i]) + X[r, j]
}
)");
  auto q = lift(p, "z");
  EXPECT_EQ(printed(q, "z"), R"(def z(A: f64[m, p], X: f64[m, k]) -> f64[k] {
  let t23 = [k >= 1] * {
    let t22 = for r_16: m. {
      let t21 = sum i_17: p. {
        let t18 = A[r_16, i_17]
        let t19 = A[r_16, i_17]
        let t20 = t18 * t19
        t20
      }
      t21
    }
    t22
  }
  let t15 = for j: k. {
    let t14 = sum r: m. {
      let t11 = [p >= 1] * {
        let t24 = t23[r]
        t24
      }
      let t12 = X[r, j]
      let t13 = t11 + t12
      t13
    }
    t14
  }
  t15
}
)");
  for (auto [k, m] : kSizes) {
    for (int64_t pp : {0, 1, 4}) {
      std::vector<Value> args = {tensor({m, pp}, 0.5), tensor({m, k}, 0.25)};
      expect_same_values(p, q, "z", args);
      if (pp == 0) {
        EXPECT_EQ(run(q, "z", args).ops, run(p, "z", args).ops);
      }
    }
  }
}

TEST(OptLetLiftFission, NonCasesStay) {
  auto p = compile(R"(
def guarded(w: f64[k], X: f64[m, k]) -> f64[k] {
  for j. sum r. [X[r, 0] > 0.0] * ((sum i. X[r, i] * w[i]) * X[r, j])
}
def on_j(w: f64[k], X: f64[m, k]) -> f64[k] {
  for j. sum r. (sum i. X[r, i] * w[j]) * X[r, j]
}
def cost_free(X: f64[m, k]) -> f64[k] {
  for j. sum r. f64(2 * r + 1) * X[r, j]
}
def guard_root(y: f64[m], X: f64[m, k]) -> f64[k] {
  for j. sum r. ([X[r, 0] > 0.0] * exp(y[r])) + X[r, j]
}
def once(w: f64[k], X: f64[m, k]) -> f64[1] {
  for j: 1. sum r. (sum i. X[r, i] * w[i]) * X[r, j]
}
)");
  for (const char* fn : {"guarded", "on_j", "cost_free", "guard_root", "once"}) {
    EXPECT_FALSE(opt::let_lift_postcondition(p, *p.find(fn)).has_value()) << fn;
    auto q = lift(p, fn);
    EXPECT_EQ(printed(q, fn), printed(p, fn)) << fn;
  }
}

// The whole pipeline keeps the hoist (fusion does not copy H back into `for j. sum r`): the
// gradient of the quickstart's loss costs O(m·k), not O(k·m·k).
TEST(OptLetLiftFission, PipelineGradientOfLeastSquaresIsLinear) {
  const char* src = R"(
def loss(w: f64[k], X: f64[m, k], y: f64[m]) -> f64 {
  let p = for r. sum i. X[r, i] * w[i]
  sum r. (p[r] - y[r]) ^ 2
}
)";
  cotangent::LoadOptions o0, o2;
  o0.opt_level = 0;
  o2.opt_level = 2;
  auto m0 = cotangent::Module::from_string(src, "ls.cot", o0);
  auto m2 = cotangent::Module::from_string(src, "ls.cot", o2);
  ASSERT_TRUE(m0.ok()) << m0.message();
  ASSERT_TRUE(m2.ok()) << m2.message();
  for (int64_t n : {1, 2, 4, 8, 16}) {
    std::vector<Value> args = {tensor({n}, 0.25), tensor({n, n}, 0.5), tensor({n}, -0.75)};
    auto c0 =
        m0.value().derivative_cost("loss", cotangent::DerivativeKind::ValueAndGrad, args, {"w"});
    auto c2 =
        m2.value().derivative_cost("loss", cotangent::DerivativeKind::ValueAndGrad, args, {"w"});
    ASSERT_TRUE(c0.ok()) << c0.message();
    ASSERT_TRUE(c2.ok()) << c2.message();
    // As AD builds it: the residual of row r is recomputed for every j, O(n^3); after the
    // pipeline: at most 6 n^2 + 2 n - 1 (4 n^2 + 2 n - 1 when the residual rows of the value
    // and of the gradient are shared).
    EXPECT_EQ(c0.value().ops, 2 * n * n * n + 4 * n * n + 6 * n - 1) << n;
    EXPECT_LE(c2.value().ops, 6 * n * n + 2 * n - 1) << n;
  }
}

// A row that the body reads again per point of a nested region (the centered point of a
// Mahalanobis-like form, read per r in sum r. sum c. Q[j, r, c] * xc[c]) is materialized over
// every index variable of the path, and its elements read the table directly: reverse mode's
// gathers then read xc instead of recomputing the row per point. A row each of whose elements
// is read once per point (g) stays.
TEST(OptLetLiftFission, RowOfAContractionBecomesATable) {
  auto p = compile(R"(
def f(x: f64[n, d], m: f64[k, d], Q: f64[k, d, d]) -> f64 {
  sum i, j. { let xc = for r. x[i, r] - m[j, r]; sum r. (sum c. Q[j, r, c] * xc[c]) ^ 2 }
}
def g(x: f64[n, d], m: f64[k, d]) -> f64 {
  sum i, j. { let xc = for r. x[i, r] - m[j, r]; sum r. exp(xc[r]) * xc[r] }
}
)");
  auto q = lift(p, "f");
  EXPECT_EQ(printed(q, "f"), R"(def f(x: f64[n, d], m: f64[k, d], Q: f64[k, d, d]) -> f64 {
  let xc_29 = for i_22: n, j_23: k, r_24: d. {
    let t25 = x[i_22, r_24]
    let t26 = m[j_23, r_24]
    let t27 = t25 - t26
    t27
  }
  let t21 = sum i: n, j: k. {
    let xc = xc_29[i, j]
    let t20 = sum r_13: d. {
      let t18 = sum c: d. {
        let t15 = Q[j, r_13, c]
        let t16 = xc_29[i, j, c]
        let t17 = t15 * t16
        t17
      }
      let t19 = t18 * t18
      t19
    }
    t20
  }
  t21
}
)");  // the row read xc is dead: dead-code elimination removes it
  auto r = lift(p, "g");
  EXPECT_EQ(printed(r, "g").find("xc_"), std::string::npos) << printed(r, "g");
  for (auto [nn, kk, dd] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{
           {0, 2, 3}, {2, 0, 3}, {2, 3, 0}, {1, 1, 1}, {3, 2, 4}}) {
    const std::vector<Value> args = {tensor({nn, dd}, 0.3), tensor({kk, dd}, -0.2),
                                     tensor({kk, dd, dd}, 0.1)};
    expect_same_values(p, q, "f", args);
    EXPECT_EQ(run(p, "f", args).ops, run(q, "f", args).ops) << nn << " " << kk << " " << dd;
    expect_same_values(p, r, "g", {args[0], args[1]});
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot

namespace cot {
namespace COTANGENT_TEST_UNIT {

// An extent that is not affine (the packed strict lower triangle, d(d - 1)/2) cannot go into a
// bracket's predicate, so H's guard tests it as a computed value evaluated where R evaluates
// it: the gradient of a packed-triangular parameter stops rebuilding the whole packed vector
// for each of its elements.
const char* kPacked = R"(
def g(A: f64[K, d, d]) -> f64[K, d * (d - 1) / 2] {
  for k, p: d * (d - 1) / 2. {
    let v = for q: d * (d - 1) / 2. sum r, c. [r == c + 1 + q % 2] * A[k, r, c] * A[k, c, r]
    v[p] * (sum q. v[q])
  }
}
)";

TEST(OptLetLiftFission, NonAffineExtentIsTestedAsAComputedValue) {
  auto p = compile(kPacked);
  auto q = lift(p, "g");
  const std::string out = printed(q, "g");
  EXPECT_NE(out.find("let extent = (d * d - d) / 2"), std::string::npos) << out;
  EXPECT_NE(out.find("nonempty = extent >= 1"), std::string::npos) << out;
  for (int64_t kk : {0, 1, 3}) {
    for (int64_t d : {0, 1, 2, 3, 5}) {
      std::vector<Value> args = {tensor({kk, d, d}, 0.25)};
      expect_same_values(p, q, "g", args);
      const int64_t before = run(p, "g", args).ops, after = run(q, "g", args).ops;
      EXPECT_LE(after, before) << kk << " " << d;
      // The packed vector once per k instead of once per (k, p) of the d(d-1)/2 of them.
      if (kk >= 1 && d >= 3) {
        EXPECT_LT(after, before) << kk << " " << d;
      }
      if (kk >= 1 && d == 5) {
        EXPECT_LT(3 * after, before) << kk << " " << d;
      }
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
