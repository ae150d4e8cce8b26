// Sharing generators equal up to the order of their indices (src/opt/transposed_cse.h): the
// golden form, values and op counts before and after, the GMM gradient's case, and the cases
// that must stay apart.
#include "opt/transposed_cse.h"

#include <gtest/gtest.h>

#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using opt_test::compile;
using opt_test::count;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;
using opt_test::run_pass;
using opt_test::tensor;

ir::Program share(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::share_transposed_generators, opt::transposed_cse_postcondition);
}

TEST(OptTransposedCse, AGeneratorInTheOtherOrderReadsTheFirst) {
  auto p = compile(R"(
def f(A: f64[m, n], B: f64[m, n]) -> f64 {
  let P = for i: m, j: n. A[i, j] * B[i, j]
  let Q = for j: n, i: m. B[i, j] * A[i, j]
  (sum i: m, j: n. P[i, j]) + (sum j: n, i: m. Q[j, i] * Q[j, i])
}
)");
  auto q = share(p, "f");
  EXPECT_EQ(printed(q, "f"), R"(def f(A: f64[m, n], B: f64[m, n]) -> f64 {
  let P = for i: m, j: n. {
    let t6 = A[i, j]
    let t7 = B[i, j]
    let t8 = t6 * t7
    t8
  }
  let t19 = sum i_16: m, j_17: n. {
    let t18 = P[i_16, j_17]
    t18
  }
  let t25 = sum j_20: n, i_21: m. {
    let t22 = P[i_21, j_20]
    let t23 = P[i_21, j_20]
    let t24 = t22 * t23
    t24
  }
  let t26 = t19 + t25
  t26
}
)");
  for (auto [m, n] : {std::pair<int64_t, int64_t>{1, 1}, {2, 5}, {4, 3}}) {
    std::vector<cotangent::Value> args{tensor({m, n}, 0.5), tensor({m, n}, -1.5)};
    expect_same_values(p, q, "f", args);
    // Q's m n multiplications are gone.
    EXPECT_EQ(run(p, "f", args).ops - run(q, "f", args).ops, m * n);
  }
  EXPECT_TRUE(opt::transposed_cse_postcondition(p, *p.find("f")).has_value());
}

TEST(OptTransposedCse, TheGmmGradientsTwoLayoutsOfOneValue) {
  // `for i, k, r` for the means and `for k, r, i` for the covariance factors: one is kept.
  auto p = compile(R"(
def f(Qx: f64[n, K, d], g: f64[K, n], x: f64[n, K, d]) -> f64[K, d] {
  let a = for i: n, k: K, r: d. 2.0 * Qx[i, k, r] * g[k, i]
  let b = for k: K, r: d, i: n. 2.0 * Qx[i, k, r] * g[k, i]
  for k: K, r: d. (sum i: n. a[i, k, r]) + (sum i: n. x[i, k, r] * b[k, r, i])
}
)");
  auto q = share(p, "f");
  EXPECT_EQ(count(printed(q, "f"), "= for"), 2) << printed(q, "f");
  EXPECT_EQ(count(printed(q, "f"), "b["), 0) << printed(q, "f");
  std::vector<cotangent::Value> args{tensor({3, 2, 4}, 0.25), tensor({2, 3}, -0.5),
                                     tensor({3, 2, 4}, 1.5)};
  expect_same_values(p, q, "f", args, 0.0);
  EXPECT_EQ(run(p, "f", args).ops - run(q, "f", args).ops, 2 * 3 * 2 * 4);
}

TEST(OptTransposedCse, StaysApartWhenAUseIsNotAnElementOrTheBodiesDiffer) {
  // whole: Q is a result (a whole-tensor use). rows: S is sliced. other: R is P in the same
  // order (left to "cse"), D is P plus one.
  auto p = compile(R"(
def whole(A: f64[m, n]) -> (f64[n, m], f64) {
  let P = for i: m, j: n. exp(A[i, j])
  let Q = for j: n, i: m. exp(A[i, j])
  (Q, sum i: m, j: n. P[i, j])
}
def rows(A: f64[m, n]) -> f64 {
  let P = for i: m, j: n. A[i, j] * A[i, j]
  let S = for j: n, i: m. A[i, j] * A[i, j]
  let T = S[0]
  (sum i: m, j: n. P[i, j]) + sum i: m. T[i]
}
def other(A: f64[n, n]) -> f64 {
  let P = for i: n, j: n. exp(A[i, j])
  let R = for j: n, i: n. exp(A[j, i])
  let D = for j: n, i: n. exp(A[i, j]) + 1.0
  sum i: n, j: n. P[i, j] * R[i, j] * D[j, i]
}
)");
  for (const char* fn : {"whole", "rows", "other"}) {
    auto q = share(p, fn);
    EXPECT_EQ(printed(q, fn), printed(p, fn)) << fn;
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
