// Nested derivative operators and the language features AD must see through: loops of both
// kinds, computed-index reads, affine index patterns, max/min reductions, guards and `if`,
// `accum`, and a Jacobian per observation inside a `for`. Expected values are closed forms
// computed in C++ and checked against finite differences of AD-free programs.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ad/fd_harness.h"

namespace cotangent::adtest {
namespace COTANGENT_TEST_UNIT {

using Vec = std::vector<double>;

constexpr const char* kLoss = R"(
def loss(w: f64[k], X: f64[m, k], y: f64[m]) -> f64 {
  (sum r. (dot(X[r], w) - y[r]) ^ 2) + 0.1 * exp(w[0] * w[1])
}

# Its gradient by hand (no AD): 2 Xᵀ (X w - y) + 0.1 exp(w0 w1) (w1, w0, 0, ...).
def loss_grad_hand(w: f64[k], X: f64[m, k], y: f64[m]) -> f64[k] {
  let e = exp(w[0] * w[1])
  for j. (sum r. 2.0 * X[r, j] * (dot(X[r], w) - y[r])) +
    0.1 * e * ([j == 0] * w[1] + [j == 1] * w[0])
}
)";

struct LossData {
  Vec w = {0.3, -0.4, 0.8};
  Vec X = {1.0, 2.0, -1.0, 0.5, -0.5, 1.5, 2.0, 0.0, 1.0, -1.0, 1.0, 0.25};  // 4 x 3
  Vec y = {0.5, -1.0, 2.0, 0.0};
  std::vector<Value> args() const { return {f64_vector(w), f64_tensor({4, 3}, X), f64_vector(y)}; }
  // Hessian: 2 XᵀX + 0.1 e [[w1², 1 + w0 w1, 0], [1 + w0 w1, w0², 0], [0, 0, 0]].
  Vec hessian() const {
    Vec H(9, 0.0);
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j) {
        for (int r = 0; r < 4; ++r) H[i * 3 + j] += 2 * X[r * 3 + i] * X[r * 3 + j];
      }
    }
    const double e = 0.1 * std::exp(w[0] * w[1]);
    H[0] += e * w[1] * w[1];
    H[4] += e * w[0] * w[0];
    H[1] += e * (1 + w[0] * w[1]);
    H[3] += e * (1 + w[0] * w[1]);
    return H;
  }
};

TEST(AdExamplesNested, HessianVectorProductForwardOverReverse) {
  constexpr const char* derived = R"(
def hvp(w: f64[k], X: f64[m, k], y: f64[m], v: f64[k]) -> (f64[k], f64[k]) {
  jvp(grad(loss, w), w)(w, X, y, v)
}
def H(w: f64[k], X: f64[m, k], y: f64[m]) -> f64[k, k] { hessian(loss, w)(w, X, y) }
def g(w: f64[k], X: f64[m, k], y: f64[m]) -> f64[k] { grad(loss, w)(w, X, y) }
)";
  AD_LOAD_EXAMPLE(kLoss, derived);
  const LossData d;
  const Vec H = d.hessian();
  // The hand-written gradient is right, and its Jacobian is the closed-form Hessian.
  auto gh = P.evaluate("loss_grad_hand", d.args());
  ASSERT_TRUE(gh.ok()) << gh.message();
  EXPECT_TRUE(FdGradientEquals(P, "loss", d.args(), {0}, real_elements(gh.value())));
  auto JH = fd_jacobian(P, "loss_grad_hand", d.args(), {0});
  ASSERT_TRUE(JH.ok()) << JH.message();
  EXPECT_TRUE(RealsNear(JH.value().data, H, kFdTol));
  const Vec v = {1.0, -2.0, 0.5};
  Vec Hv(3, 0.0);
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) Hv[i] += H[i * 3 + j] * v[j];
  }
  Vec expected = real_elements(gh.value());
  expected.insert(expected.end(), Hv.begin(), Hv.end());
  std::vector<Value> a = d.args();
  a.push_back(f64_vector(v));
  EXPECT_TRUE(DerivedEquals(M, "hvp", a, expected, 1e-9));
  EXPECT_TRUE(DerivedEquals(M, "H", d.args(), H, 1e-9));
  EXPECT_TRUE(DerivedEquals(M, "g", d.args(), real_elements(gh.value()), 1e-9));
}

TEST(AdExamplesNested, HessianIsSymmetric) {
  constexpr const char* primal = R"(
def lse_plus(x: f64[n]) -> f64 { logsumexp(x) + x[0] ^ 2 * x[1] + sin(x[1] * x[2]) }
)";
  constexpr const char* derived = R"(
def H(x: f64[n]) -> f64[n, n] { hessian(lse_plus, x)(x) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Vec x = {0.4, -1.1, 0.7, 2.0};
  // diag(s) - s sᵀ plus the polynomial and sine terms.
  double z = 0;
  for (double v : x) z += std::exp(v);
  Vec s;
  for (double v : x) s.push_back(std::exp(v) / z);
  Vec H(16, 0.0);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 4; ++j) H[i * 4 + j] = (i == j ? s[i] : 0.0) - s[i] * s[j];
  }
  H[0] += 2 * x[1];
  H[1] += 2 * x[0];
  H[4] += 2 * x[0];
  const double c = std::cos(x[1] * x[2]), sn = std::sin(x[1] * x[2]);
  H[5] += -sn * x[2] * x[2];
  H[10] += -sn * x[1] * x[1];
  H[6] += c - sn * x[1] * x[2];
  H[9] += c - sn * x[1] * x[2];
  auto r = M.evaluate("H", {f64_vector(x)});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_TRUE(ValueNear(r.value(), H, 1e-9));
  const Vec got = real_elements(r.value());
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < i; ++j) EXPECT_NEAR(got[i * 4 + j], got[j * 4 + i], 1e-12);
  }
}

TEST(AdExamplesNested, GradOfAFunctionThatCallsGrad) {
  constexpr const char* primal = R"(
def f(x: f64[n]) -> f64 { sum i. x[i] ^ 2 * sin(x[i]) }
# g = |∇f|², with ∇f written by hand
def g_hand(x: f64[n]) -> f64 {
  sum i. (2.0 * x[i] * sin(x[i]) + x[i] ^ 2 * cos(x[i])) ^ 2
}
)";
  constexpr const char* derived = R"(
def g(x: f64[n]) -> f64 {
  let d = grad(f, x)(x)
  sum i. d[i] ^ 2
}
def dg(x: f64[n]) -> f64[n] { grad(g)(x) }
def d2(x: f64) -> f64 { grad(grad(sq, x), x)(x) }
def sq(x: f64) -> f64 { x * x * x }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Vec x = {0.5, -1.2, 2.0};
  Vec expected;  // 2 f'_i f''_i
  double gval = 0;
  for (double t : x) {
    const double f1 = 2 * t * std::sin(t) + t * t * std::cos(t);
    const double f2 = 2 * std::sin(t) + 4 * t * std::cos(t) - t * t * std::sin(t);
    expected.push_back(2 * f1 * f2);
    gval += f1 * f1;
  }
  EXPECT_TRUE(FdGradientEquals(P, "g_hand", {f64_vector(x)}, {0}, expected));
  EXPECT_TRUE(DerivedEquals(M, "g", {f64_vector(x)}, {gval}));
  EXPECT_TRUE(DerivedEquals(M, "dg", {f64_vector(x)}, expected, 1e-9));
  EXPECT_TRUE(DerivedEquals(M, "d2", {Value::f64(1.5)}, {9.0}));  // (x³)'' = 6x
}

TEST(AdExamplesNested, JacobianPerObservationInsideFor) {
  constexpr const char* primal = R"(
def layer(w: f64[k], x: f64[k]) -> f64[k] {
  let s = sum j. w[j]
  for i. tanh(w[i] * x[i] + s)
}
)";
  constexpr const char* derived = R"(
def per_obs(w: f64[k], X: f64[m, k]) -> f64[m, k, k] {
  for r. jacobian(layer, w)(w, X[r])
}
)";
  AD_LOAD_EXAMPLE(primal, derived);
  std::mt19937_64 rng(99);
  const Vec w = random_reals(3, rng), X = random_reals(12, rng);
  Vec expected;
  for (int r = 0; r < 4; ++r) {
    const Vec x(X.begin() + r * 3, X.begin() + r * 3 + 3);
    // d layer_i / d w_j = (1 - t_i²)(x_i [i == j] + 1)
    const double s = w[0] + w[1] + w[2];
    Vec block;
    for (int i = 0; i < 3; ++i) {
      const double t = std::tanh(w[i] * x[i] + s);
      for (int j = 0; j < 3; ++j) block.push_back((1 - t * t) * ((i == j ? x[i] : 0.0) + 1));
    }
    auto J = fd_jacobian(P, "layer", {f64_vector(w), f64_vector(x)}, {0});
    ASSERT_TRUE(J.ok()) << J.message();
    EXPECT_TRUE(RealsNear(J.value().data, block, kFdTol)) << "observation " << r;
    expected.insert(expected.end(), block.begin(), block.end());
  }
  EXPECT_TRUE(DerivedEquals(M, "per_obs", {f64_vector(w), f64_tensor({4, 3}, X)}, expected));
}

TEST(AdExamplesNested, GradientThroughForLoop) {
  constexpr const char* primal = R"(
def power(x: f64, k: i64) -> f64 { loop p = 1.0 for t < k { p * x } }
def rnn(W: f64[d, d], h0: f64[d], n: i64) -> f64 {
  let h = loop h = h0 for t < n { for i. tanh(sum j. W[i, j] * h[j]) }
  sum i. h[i]
}
)";
  constexpr const char* derived = R"(
def d_power(x: f64, k: i64) -> f64 { grad(power)(x, k) }
def d_rnn(W: f64[d, d], h0: f64[d], n: i64) -> (f64[d, d], f64[d]) { grad(rnn)(W, h0, n) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  EXPECT_TRUE(
      DerivedEquals(M, "d_power", {Value::f64(1.5), Value::i64(5)}, {5 * std::pow(1.5, 4)}));
  EXPECT_TRUE(DerivedEquals(M, "d_power", {Value::f64(1.5), Value::i64(0)}, {0.0}));
  std::mt19937_64 rng(5);
  const std::vector<Value> args = {f64_tensor({3, 3}, random_reals(9, rng)),
                                   f64_vector(random_reals(3, rng)), Value::i64(4)};
  EXPECT_TRUE(DerivedMatchesFd(M, "d_rnn", "rnn", args, {0, 1}));
}

TEST(AdExamplesNested, GradientThroughWhileLoop) {
  constexpr const char* primal = R"(
def halving_sum(x: f64, w: f64) -> f64 {
  let (_, s) = loop (v, s) = (x, 0.0) while v > 1.0 { (v * 0.5, s + v * w) }
  s
}
)";
  constexpr const char* derived = R"(
def d_halving_sum(x: f64, w: f64) -> (f64, f64) { grad(halving_sum)(x, w) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  // x = 10: v = 10, 5, 2.5, 1.25 are > 1 (c = 4 iterations); s = x w (1 + 1/2 + 1/4 + 1/8).
  const double x = 10, w = 0.3, geo = 1 + 0.5 + 0.25 + 0.125;
  const std::vector<Value> args = {Value::f64(x), Value::f64(w)};
  EXPECT_TRUE(FdGradientEquals(P, "halving_sum", args, {0, 1}, {w * geo, x * geo}));
  EXPECT_TRUE(DerivedEquals(M, "d_halving_sum", args, {w * geo, x * geo}));
}

TEST(AdExamplesNested, ComputedIndexReadsScatterAdd) {
  constexpr const char* primal = R"(
def gather_dot(x: f64[n], idx: i64[k], w: f64[k]) -> f64 { sum o. w[o] * x[idx[o]] ^ 2 }
def scatter(idx: i64[k], w: f64[k]) -> f64[4] { accum[4] o. (idx[o], w[o] * w[o]) }
)";
  constexpr const char* derived = R"(
def d_gather_dot(x: f64[n], idx: i64[k], w: f64[k]) -> (f64[n], f64[k]) {
  grad(gather_dot)(x, idx, w)
}
def d_scatter(idx: i64[k], w: f64[k], ct: f64[4]) -> f64[k] { vjp(scatter)(idx, w, ct) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Vec x = {0.5, -1.0, 2.0, 1.5};
  const std::vector<int64_t> idx = {2, 0, 2, 3, 2};
  const Vec w = {1.0, -0.5, 0.25, 2.0, -1.0};
  Vec expected(4 + 5, 0.0);
  for (size_t o = 0; o < idx.size(); ++o) {
    const double xi = x[static_cast<size_t>(idx[o])];
    expected[static_cast<size_t>(idx[o])] += 2 * w[o] * xi;  // repeated indices accumulate
    expected[4 + o] = xi * xi;
  }
  const std::vector<Value> args = {f64_vector(x), i64_vector(idx), f64_vector(w)};
  EXPECT_TRUE(FdGradientEquals(P, "gather_dot", args, {0, 2}, expected));
  EXPECT_TRUE(DerivedEquals(M, "d_gather_dot", args, expected));
  // The adjoint of accum is a gather: w-cotangent 2 w[o] ct[idx[o]].
  const Vec ct = {1.0, 10.0, 100.0, 1000.0};
  Vec e2;
  for (size_t o = 0; o < idx.size(); ++o) e2.push_back(2 * w[o] * ct[static_cast<size_t>(idx[o])]);
  auto J = fd_jacobian(P, "scatter", {i64_vector(idx), f64_vector(w)}, {1});
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_TRUE(RealsNear(J.value().transpose_times(ct), e2, kFdTol));
  EXPECT_TRUE(DerivedEquals(M, "d_scatter", {i64_vector(idx), f64_vector(w), f64_vector(ct)}, e2));
}

TEST(AdExamplesNested, AffineIndexPatterns) {
  constexpr const char* primal = R"(
def affine(x: f64[n], A: f64[n, n]) -> f64 {
  (sum i: n - 1. x[i + 1] * x[i]) + (sum i: n / 2. x[2 * i]) + (sum i. A[i, i] ^ 2) +
    (sum i. A[n - 1 - i, 0] * x[i])
}
)";
  constexpr const char* derived = R"(
def d_affine(x: f64[n], A: f64[n, n]) -> (f64[n], f64[n, n]) { grad(affine)(x, A) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  std::mt19937_64 rng(21);
  const int n = 4;
  const Vec x = random_reals(4, rng), A = random_reals(16, rng);
  Vec expected(4 + 16, 0.0);
  for (int i = 0; i + 1 < n; ++i) {
    expected[i + 1] += x[i];
    expected[i] += x[i + 1];
  }
  for (int i = 0; i < n / 2; ++i) expected[2 * i] += 1;
  for (int i = 0; i < n; ++i) {
    expected[4 + i * n + i] += 2 * A[i * n + i];
    expected[4 + (n - 1 - i) * n] += x[i];
    expected[i] += A[(n - 1 - i) * n];
  }
  const std::vector<Value> args = {f64_vector(x), f64_tensor({4, 4}, A)};
  EXPECT_TRUE(FdGradientEquals(P, "affine", args, {0, 1}, expected));
  EXPECT_TRUE(DerivedEquals(M, "d_affine", args, expected));
}

TEST(AdExamplesNested, MaxAndMinReductionsGoToTheFirstExtremum) {
  constexpr const char* primal = R"(
def top(x: f64[n]) -> f64 { max i. x[i] }
def bottom(x: f64[n]) -> f64 { min i. x[i] }
def col_max(A: f64[m, n]) -> f64[n] { max i. A[i] }
)";
  constexpr const char* derived = R"(
def d_top(x: f64[n]) -> f64[n] { grad(top)(x) }
def d_bottom(x: f64[n]) -> f64[n] { grad(bottom)(x) }
def d_col_max(A: f64[m, n], ct: f64[n]) -> f64[m, n] { vjp(col_max)(A, ct) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  // No ties: finite differences agree.
  EXPECT_TRUE(FdGradientEquals(P, "top", {f64_vector({1, 4, 2})}, {0}, {0, 1, 0}));
  EXPECT_TRUE(DerivedEquals(M, "d_top", {f64_vector({1, 4, 2})}, {0, 1, 0}));
  // Ties: the first maximizer (minimizer) in index order.
  EXPECT_TRUE(DerivedEquals(M, "d_top", {f64_vector({1, 3, 2, 3})}, {0, 1, 0, 0}));
  EXPECT_TRUE(DerivedEquals(M, "d_bottom", {f64_vector({2, -1, -1, 5})}, {0, 1, 0, 0}));
  // Elementwise over rows; column 1 has a tie between rows 0 and 2.
  const Value A = f64_matrix({{1, 5}, {3, 2}, {0, 5}});
  EXPECT_TRUE(DerivedEquals(M, "d_col_max", {A, f64_vector({10, 20})}, {0, 20, 10, 0, 0, 0}));
}

TEST(AdExamplesNested, GuardsAndIf) {
  constexpr const char* primal = R"(
def rises(x: f64[n]) -> f64 {
  sum i. [i > 0 && x[i - 1] < x[i]] * (x[i] - x[i - 1]) ^ 2
}
def safe_log_sum(x: f64[n]) -> f64 { sum i. [x[i] > 0.0] * log(x[i]) }
def branchy(x: f64[n], s: f64) -> f64 {
  if s > 0.0 then sum i. x[i] ^ 2 * s else sum i. exp(x[i]) * s
}
)";
  constexpr const char* derived = R"(
def d_rises(x: f64[n]) -> f64[n] { grad(rises)(x) }
def d_safe_log_sum(x: f64[n]) -> f64[n] { grad(safe_log_sum)(x) }
def d_branchy(x: f64[n], s: f64) -> (f64[n], f64) { grad(branchy)(x, s) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Vec x = {1.0, 3.0, 2.0, 5.0};
  // Rises at i = 1 (by 2) and i = 3 (by 3): d/dx = 2 Δ at x[i], -2 Δ at x[i - 1].
  const Vec er = {-4, 4, -6, 6};
  EXPECT_TRUE(FdGradientEquals(P, "rises", {f64_vector(x)}, {0}, er));
  EXPECT_TRUE(DerivedEquals(M, "d_rises", {f64_vector(x)}, er));
  // The guard is a strong zero: no NaN from log of non-positive entries, in the derivative too.
  const Vec y = {2.0, -1.0, -0.5, 0.5};
  EXPECT_TRUE(FdGradientEquals(P, "safe_log_sum", {f64_vector(y)}, {0}, {0.5, 0, 0, 2}));
  EXPECT_TRUE(DerivedEquals(M, "d_safe_log_sum", {f64_vector(y)}, {0.5, 0, 0, 2}, 0.0));
  const Vec z = {0.5, -1.0};
  EXPECT_TRUE(DerivedEquals(M, "d_branchy", {f64_vector(z), Value::f64(2.0)}, {2, -4, 1.25}));
  EXPECT_TRUE(
      DerivedEquals(M, "d_branchy", {f64_vector(z), Value::f64(-2.0)},
                    {-2 * std::exp(0.5), -2 * std::exp(-1.0), std::exp(0.5) + std::exp(-1.0)}));
  EXPECT_TRUE(
      FdGradientEquals(P, "branchy", {f64_vector(z), Value::f64(-2.0)}, {0, 1},
                       {-2 * std::exp(0.5), -2 * std::exp(-1.0), std::exp(0.5) + std::exp(-1.0)}));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::adtest
