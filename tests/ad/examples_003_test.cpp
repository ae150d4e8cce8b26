// The examples of [UrbanSmagt] (element-wise defined tensors, design.md §References): its main
// example (§6, first and second order), the examples of its introduction and §5, tests of the
// authors' reference code (github.com/surban/TensorAlgDiff) and the scalar example of Fig. 2
// (§2). All indices 0-based. The element-wise derivative df -> dx is a vjp; expected values are
// the paper's formulas computed in C++, checked against finite differences of the primal too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "ad/fd_harness.h"

namespace cotangent::adtest {
namespace COTANGENT_TEST_UNIT {

using Vec = std::vector<double>;

// Jᵀ ct by finite differences equals the closed form, and the AD function `dfn` (called with
// args and then ct) equals it too.
void check_vjp(const Module& P, const Module& M, const std::string& fn, const std::string& dfn,
               const std::vector<Value>& args, const std::vector<int>& active, const Value& ct,
               const Vec& expected) {
  auto J = fd_jacobian(P, fn, args, active);
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_TRUE(RealsNear(J.value().transpose_times(real_elements(ct)), expected, kFdTol))
      << "closed form vs finite differences";
  std::vector<Value> a = args;
  a.push_back(ct);
  EXPECT_TRUE(DerivedEquals(M, dfn, a, expected));
}

// A Hessian of scalar `fn` w.r.t. args[k] by differences of finite-difference gradients.
Vec fd_hessian(const Module& P, const std::string& fn, std::vector<Value> args, int k) {
  const Vec x = real_elements(args[static_cast<size_t>(k)]);
  const size_t n = x.size();
  Vec H(n * n, 0.0);
  FdOptions inner;
  inner.rel_step = 1e-5;
  for (size_t c = 0; c < n; ++c) {
    const double h = 1e-4 * std::max(1.0, std::fabs(x[c]));
    Vec g[2];
    for (int s = 0; s < 2; ++s) {
      Vec y = x;
      y[c] += s == 0 ? h : -h;
      std::vector<Value> a = args;
      a[static_cast<size_t>(k)] = with_real_elements(args[static_cast<size_t>(k)], y);
      auto J = fd_jacobian(P, fn, a, {k}, inner);
      if (!J.ok()) return {};
      g[s] = J.value().row(0);
    }
    for (size_t r = 0; r < n; ++r) H[r * n + c] = (g[0][r] - g[1][r]) / (2 * h);
  }
  return H;
}

// ---------------------------------------------------------------------------------------------
// The main example (§6).

constexpr const char* kMain = R"(
def f(a: f64[I, K], b: f64[J, K], c: f64[I, I], d: f64[D]) -> f64[I, J] {
  for i, j. exp(-(sum k. (a[i, k] + b[j, k]) ^ 2 * c[i, i] + d[i + k] ^ 3))
}

# The paper's da, written out by hand, contracted with a weight: the first-order derivative
# without AD, for the second-order check.
def da_hand(a: f64[I, K], b: f64[J, K], c: f64[I, I], d: f64[D], df: f64[I, J], w: f64[I, K]) -> f64 {
  let F = f(a, b, c, d)
  sum p, q. w[p, q] * (sum j. -df[p, j] * F[p, j] * c[p, p] * 2.0 * (a[p, q] + b[j, q]))
}
)";

constexpr const char* kMainDerived = R"(
def vjp_f(a: f64[I, K], b: f64[J, K], c: f64[I, I], d: f64[D], df: f64[I, J])
    -> (f64[I, K], f64[J, K], f64[I, I], f64[D]) {
  vjp(f)(a, b, c, d, df)
}

def da_ad(a: f64[I, K], b: f64[J, K], c: f64[I, I], d: f64[D], df: f64[I, J], w: f64[I, K]) -> f64 {
  let da = vjp(f, a)(a, b, c, d, df)
  sum p, q. w[p, q] * da[p, q]
}

def second(a: f64[I, K], b: f64[J, K], c: f64[I, I], d: f64[D], df: f64[I, J], w: f64[I, K])
    -> (f64[I, K], f64[J, K], f64[I, I], f64[D]) {
  grad(da_ad, a, b, c, d)(a, b, c, d, df, w)
}

def jac_d(a: f64[I, K], b: f64[J, K], c: f64[I, I], d: f64[D]) -> f64[I, J, D] {
  jacobian(f, d)(a, b, c, d)
}
)";

struct MainData {
  int I = 3, J = 4, K = 5, D = 8;
  Vec a, b, c, d, df, w;
  explicit MainData(uint64_t seed) {
    std::mt19937_64 rng(seed);
    a = random_reals(15, rng);
    b = random_reals(20, rng);
    c = random_reals(9, rng);
    d = random_reals(8, rng);
    df = random_reals(12, rng);
    w = random_reals(15, rng);
  }
  double A(int i, int k) const { return a[static_cast<size_t>(i * K + k)]; }
  double B(int j, int k) const { return b[static_cast<size_t>(j * K + k)]; }
  double C(int i, int k) const { return c[static_cast<size_t>(i * I + k)]; }
  double dF(int i, int j) const { return df[static_cast<size_t>(i * J + j)]; }
  double F(int i, int j) const {
    double s = 0;
    for (int k = 0; k < K; ++k) {
      s += std::pow(A(i, k) + B(j, k), 2) * C(i, i) + std::pow(d[static_cast<size_t>(i + k)], 3);
    }
    return std::exp(-s);
  }
  std::vector<Value> args() const {
    return {f64_tensor({3, 5}, a), f64_tensor({4, 5}, b), f64_tensor({3, 3}, c), f64_vector(d)};
  }
  // da, db, dc, dd of the paper's §6, flattened in that order.
  Vec expected() const {
    Vec out;
    for (int p = 0; p < I; ++p) {
      for (int q = 0; q < K; ++q) {
        double s = 0;
        for (int j = 0; j < J; ++j) s += -dF(p, j) * F(p, j) * C(p, p) * 2 * (A(p, q) + B(j, q));
        out.push_back(s);
      }
    }
    for (int p = 0; p < J; ++p) {
      for (int q = 0; q < K; ++q) {
        double s = 0;
        for (int i = 0; i < I; ++i) s += -dF(i, p) * F(i, p) * C(i, i) * 2 * (A(i, q) + B(p, q));
        out.push_back(s);
      }
    }
    for (int p = 0; p < I; ++p) {
      for (int q = 0; q < I; ++q) {
        double s = 0;
        if (p == q) {
          for (int k = 0; k < K; ++k) {
            for (int j = 0; j < J; ++j) s += std::pow(A(q, k) + B(j, k), 2) * (-dF(q, j) * F(q, j));
          }
        }
        out.push_back(s);
      }
    }
    for (int p = 0; p < D; ++p) {
      double s = 0;  // empty range for p = 7: dd[7] = 0
      for (int z = std::max(0, p - 2); z <= std::min(4, p); ++z) {
        for (int j = 0; j < J; ++j) {
          s += -dF(p - z, j) * F(p - z, j) * 3 * d[static_cast<size_t>(p)] *
               d[static_cast<size_t>(p)];
        }
      }
      out.push_back(s);
    }
    return out;
  }
};

TEST(AdExamples003, Main_example_first_order) {
  AD_LOAD_EXAMPLE(kMain, kMainDerived);
  for (uint64_t seed : {123u, 7u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const MainData data(seed);
    const Vec expected = data.expected();
    EXPECT_EQ(expected.back(), 0.0);  // dd[7]
    check_vjp(P, M, "f", "vjp_f", data.args(), {0, 1, 2, 3}, f64_tensor({3, 4}, data.df), expected);
    EXPECT_TRUE(DerivedMatchesFd(M, "jac_d", "f", data.args(), {3}));
  }
}

TEST(AdExamples003, Main_example_second_order) {
  AD_LOAD_EXAMPLE(kMain, kMainDerived);
  const MainData data(123);
  std::vector<Value> args = data.args();
  args.push_back(f64_tensor({3, 4}, data.df));
  args.push_back(f64_tensor({3, 5}, data.w));
  // The hand-written da agrees with the closed form, and the AD da with it.
  double want = 0;
  const Vec e = data.expected();
  for (size_t k = 0; k < 15; ++k) want += data.w[k] * e[k];
  auto hand = P.evaluate("da_hand", args);
  ASSERT_TRUE(hand.ok()) << hand.message();
  EXPECT_TRUE(ValueNear(hand.value(), {want}, 1e-12));
  EXPECT_TRUE(DerivedEquals(M, "da_ad", args, {want}));
  // Differentiate the derivative again: against finite differences of the hand-written one.
  EXPECT_TRUE(DerivedMatchesFd(M, "second", "da_hand", args, {0, 1, 2, 3}));
}

// ---------------------------------------------------------------------------------------------
// The examples of the introduction and of §5.

constexpr const char* kSmall = R"(
def intro_square(x: f64[n]) -> f64[n, 4] { for i, j: 4. x[i] ^ 2 }
def intro_diag(x: f64[n, n]) -> f64[n] { for i. x[i, i] ^ 2 }
def intro_hankel(x: f64[6]) -> f64[3, 4] { for i: 3, j: 4. exp(x[i + j]) }
def s1(x: f64[n]) -> f64[n] { for i. sin(x[i]) }
def s2(x: f64[n], y: f64[n, m]) -> f64[n, m] { for i, j. x[i] * y[i, j] }
def s3(x: f64[n, n]) -> f64[n] { for i. x[i, i] ^ 3 }
def s4(x: f64[n, k], y: f64[k, m]) -> f64[n, m] { for i, j. sum l. x[i, l] * y[l, j] }
def s5(x: f64[12]) -> f64[3, 4] { for i: 3, j: 4. exp(x[4 * i + j]) }
)";

constexpr const char* kSmallDerived = R"(
def d_intro_square(x: f64[n], df: f64[n, 4]) -> f64[n] { vjp(intro_square)(x, df) }
def d_intro_diag(x: f64[n, n], df: f64[n]) -> f64[n, n] { vjp(intro_diag)(x, df) }
def d_intro_hankel(x: f64[6], df: f64[3, 4]) -> f64[6] { vjp(intro_hankel)(x, df) }
def d_s1(x: f64[n], df: f64[n]) -> f64[n] { vjp(s1)(x, df) }
def d_s2(x: f64[n], y: f64[n, m], df: f64[n, m]) -> (f64[n], f64[n, m]) { vjp(s2)(x, y, df) }
def d_s3(x: f64[n, n], df: f64[n]) -> f64[n, n] { vjp(s3)(x, df) }
def d_s4(x: f64[n, k], y: f64[k, m], df: f64[n, m]) -> (f64[n, k], f64[k, m]) { vjp(s4)(x, y, df) }
def d_s5(x: f64[12], df: f64[3, 4]) -> f64[12] { vjp(s5)(x, df) }
)";

TEST(AdExamples003, Intro_x_squared_broadcast) {
  AD_LOAD_EXAMPLE(kSmall, kSmallDerived);
  std::mt19937_64 rng(42);
  const Vec x = random_reals(3, rng), df = random_reals(12, rng);
  Vec expected;  // dx[i] = sum_j df[i, j] 2 x[i]
  for (size_t i = 0; i < 3; ++i) {
    double s = 0;
    for (size_t j = 0; j < 4; ++j) s += df[i * 4 + j] * 2 * x[i];
    expected.push_back(s);
  }
  check_vjp(P, M, "intro_square", "d_intro_square", {f64_vector(x)}, {0}, f64_tensor({3, 4}, df),
            expected);
}

TEST(AdExamples003, Intro_diagonal_squared) {
  AD_LOAD_EXAMPLE(kSmall, kSmallDerived);
  std::mt19937_64 rng(43);
  const Vec x = random_reals(9, rng), df = random_reals(3, rng);
  Vec expected(9, 0.0);  // dx[i, j] = δ_ij df[i] 2 x[i, i]
  for (size_t i = 0; i < 3; ++i) expected[i * 4] = df[i] * 2 * x[i * 4];
  check_vjp(P, M, "intro_diag", "d_intro_diag", {f64_tensor({3, 3}, x)}, {0}, f64_vector(df),
            expected);
}

TEST(AdExamples003, Intro_exp_of_sum_index) {
  AD_LOAD_EXAMPLE(kSmall, kSmallDerived);
  std::mt19937_64 rng(44);
  const Vec x = random_reals(6, rng), df = random_reals(12, rng);
  Vec expected;  // dx[k] = sum_{i = max(0, k - M + 1)}^{min(N - 1, k)} df[i, k - i] exp x[k]
  for (int k = 0; k < 6; ++k) {
    double s = 0;
    for (int i = std::max(0, k - 3); i <= std::min(2, k); ++i) {
      s += df[static_cast<size_t>(i * 4 + k - i)] * std::exp(x[static_cast<size_t>(k)]);
    }
    expected.push_back(s);
  }
  check_vjp(P, M, "intro_hankel", "d_intro_hankel", {f64_vector(x)}, {0}, f64_tensor({3, 4}, df),
            expected);
}

TEST(AdExamples003, Section5_f1_sin) {
  AD_LOAD_EXAMPLE(kSmall, kSmallDerived);
  const Vec x = {0.5, -1.0, 2.0}, df = {1.0, -2.0, 0.5};
  Vec expected;
  for (size_t i = 0; i < 3; ++i) expected.push_back(df[i] * std::cos(x[i]));
  check_vjp(P, M, "s1", "d_s1", {f64_vector(x)}, {0}, f64_vector(df), expected);
}

TEST(AdExamples003, Section5_f2_row_scaling) {
  AD_LOAD_EXAMPLE(kSmall, kSmallDerived);
  std::mt19937_64 rng(45);
  const Vec x = random_reals(2, rng), y = random_reals(6, rng), df = random_reals(6, rng);
  Vec expected(8, 0.0);
  for (size_t i = 0; i < 2; ++i) {
    for (size_t j = 0; j < 3; ++j) {
      expected[i] += df[i * 3 + j] * y[i * 3 + j];     // dx[i] = sum_j df y
      expected[2 + i * 3 + j] = df[i * 3 + j] * x[i];  // dy[i, j] = df x[i]
    }
  }
  check_vjp(P, M, "s2", "d_s2", {f64_vector(x), f64_tensor({2, 3}, y)}, {0, 1},
            f64_tensor({2, 3}, df), expected);
}

TEST(AdExamples003, Section5_f3_diagonal_cubed) {
  AD_LOAD_EXAMPLE(kSmall, kSmallDerived);
  std::mt19937_64 rng(46);
  const Vec x = random_reals(16, rng), df = random_reals(4, rng);
  Vec expected(16, 0.0);
  for (size_t i = 0; i < 4; ++i) expected[i * 5] = df[i] * 3 * x[i * 5] * x[i * 5];
  check_vjp(P, M, "s3", "d_s3", {f64_tensor({4, 4}, x)}, {0}, f64_vector(df), expected);
}

TEST(AdExamples003, Section5_f4_matmul) {
  AD_LOAD_EXAMPLE(kSmall, kSmallDerived);
  std::mt19937_64 rng(47);
  const int n = 2, k = 3, m = 4;
  const Vec x = random_reals(6, rng), y = random_reals(12, rng), df = random_reals(8, rng);
  Vec expected(18, 0.0);
  for (int i = 0; i < n; ++i) {
    for (int l = 0; l < k; ++l) {
      for (int j = 0; j < m; ++j) {
        expected[static_cast<size_t>(i * k + l)] += df[i * m + j] * y[l * m + j];
        expected[static_cast<size_t>(6 + l * m + j)] += df[i * m + j] * x[i * k + l];
      }
    }
  }
  check_vjp(P, M, "s4", "d_s4", {f64_tensor({2, 3}, x), f64_tensor({3, 4}, y)}, {0, 1},
            f64_tensor({2, 4}, df), expected);
}

TEST(AdExamples003, Section5_f5_strided_index) {
  AD_LOAD_EXAMPLE(kSmall, kSmallDerived);
  std::mt19937_64 rng(48);
  const Vec x = random_reals(12, rng), df = random_reals(12, rng);
  Vec expected;  // exactly one term, i = floor(β / M)
  for (int b = 0; b < 12; ++b)
    expected.push_back(df[static_cast<size_t>(b)] * std::exp(x[static_cast<size_t>(b)]));
  check_vjp(P, M, "s5", "d_s5", {f64_vector(x)}, {0}, f64_tensor({3, 4}, df), expected);
}

// ---------------------------------------------------------------------------------------------
// Tests from the reference code's test suite.

TEST(AdExamples003, Suite1_three_arguments_first_and_second_order) {
  constexpr const char* primal = R"(
def t1(x: f64[p, q], y: f64[q, q], z: f64[r]) -> f64[p, q, r] {
  for i, j, k. x[i, j] ^ 2 + 2.0 * y[j, j] * z[k] ^ 3
}
def t1_dz_hand(x: f64[p, q], y: f64[q, q], z: f64[r], df: f64[p, q, r]) -> f64[r] {
  for k. sum i, j. df[i, j, k] * 2.0 * y[j, j] * 3.0 * z[k] ^ 2
}
)";
  constexpr const char* derived = R"(
def d_t1(x: f64[p, q], y: f64[q, q], z: f64[r], df: f64[p, q, r]) -> (f64[p, q], f64[q, q], f64[r]) {
  vjp(t1)(x, y, z, df)
}
def t1_dz(x: f64[p, q], y: f64[q, q], z: f64[r], df: f64[p, q, r]) -> f64[r] {
  let (_, _, dz) = vjp(t1)(x, y, z, df)
  dz
}
def t1_dz_y(x: f64[p, q], y: f64[q, q], z: f64[r], df: f64[p, q, r]) -> f64[r, q, q] {
  jacobian(t1_dz, y)(x, y, z, df)
}
def t1_dz_z(x: f64[p, q], y: f64[q, q], z: f64[r], df: f64[p, q, r]) -> f64[r, r] {
  jacobian(t1_dz, z)(x, y, z, df)
}
)";
  AD_LOAD_EXAMPLE(primal, derived);
  std::mt19937_64 rng(51);
  const int p = 3, q = 4, r = 5;
  const Vec x = random_reals(12, rng), y = random_reals(16, rng), z = random_reals(5, rng),
            df = random_reals(60, rng);
  auto DF = [&](int i, int j, int k) { return df[static_cast<size_t>((i * q + j) * r + k)]; };
  Vec expected(12 + 16 + 5, 0.0);
  for (int i = 0; i < p; ++i) {
    for (int j = 0; j < q; ++j) {
      for (int k = 0; k < r; ++k) {
        expected[static_cast<size_t>(i * q + j)] +=
            DF(i, j, k) * 2 * x[static_cast<size_t>(i * q + j)];
        expected[static_cast<size_t>(12 + j * q + j)] +=
            DF(i, j, k) * 2 * std::pow(z[static_cast<size_t>(k)], 3);
        expected[static_cast<size_t>(28 + k)] +=
            DF(i, j, k) * 2 * y[static_cast<size_t>(j * q + j)] * 3 * z[static_cast<size_t>(k)] *
            z[static_cast<size_t>(k)];
      }
    }
  }
  const std::vector<Value> args = {f64_tensor({3, 4}, x), f64_tensor({4, 4}, y), f64_vector(z)};
  check_vjp(P, M, "t1", "d_t1", args, {0, 1, 2}, f64_tensor({3, 4, 5}, df), expected);
  // Second order: the Jacobians of dz against finite differences of the hand-written dz.
  std::vector<Value> a2 = args;
  a2.push_back(f64_tensor({3, 4, 5}, df));
  auto dz = P.evaluate("t1_dz_hand", a2);
  ASSERT_TRUE(dz.ok()) << dz.message();
  EXPECT_TRUE(ValueNear(dz.value(), Vec(expected.begin() + 28, expected.end()), 1e-12));
  EXPECT_TRUE(DerivedMatchesFd(M, "t1_dz_y", "t1_dz_hand", a2, {1}));
  EXPECT_TRUE(DerivedMatchesFd(M, "t1_dz_z", "t1_dz_hand", a2, {2}));
}

constexpr const char* kSuite = R"(
def t2(x: f64[10]) -> f64[7] { for i: 7. x[i + 2] }
def t3(x: f64[n, 10]) -> f64[n] { for i. sum s: 7. x[i, s] }
def t4(x: f64[n]) -> f64[n / 2] { for i: n / 2. x[2 * i] }
def t5(x: f64[50]) -> f64[3, 10] { for s: 3, t: 10. x[10 * s + t] ^ 2 }
def t8(x: f64[N, S, M], y: f64[T, N]) -> f64[T, N] {
  for t, n. y[t, n] ^ 2 * sum s. x[n, s, 2 * s] ^ 2 + x[n, s, 0] ^ 2 - y[t, 0]
}
)";

constexpr const char* kSuiteDerived = R"(
def d_t2(x: f64[10], df: f64[7]) -> f64[10] { vjp(t2)(x, df) }
def d_t3(x: f64[n, 10], df: f64[n]) -> f64[n, 10] { vjp(t3)(x, df) }
def d_t4(x: f64[n], df: f64[n / 2]) -> f64[n] { vjp(t4)(x, df) }
def d_t5(x: f64[50], df: f64[3, 10]) -> f64[50] { vjp(t5)(x, df) }
def d_t8(x: f64[N, S, M], y: f64[T, N], df: f64[T, N]) -> (f64[N, S, M], f64[T, N]) {
  vjp(t8)(x, y, df)
}
)";

TEST(AdExamples003, Suite2_offset_index_with_feasibility_guards) {
  AD_LOAD_EXAMPLE(kSuite, kSuiteDerived);
  std::mt19937_64 rng(52);
  const Vec x = random_reals(10, rng), df = random_reals(7, rng);
  Vec expected(10, 0.0);  // if{β - 2 >= 0} if{8 - β >= 0} df[β - 2]
  for (int b = 2; b <= 8; ++b) expected[static_cast<size_t>(b)] = df[static_cast<size_t>(b - 2)];
  check_vjp(P, M, "t2", "d_t2", {f64_vector(x)}, {0}, f64_vector(df), expected);
}

TEST(AdExamples003, Suite3_partial_sum_becomes_a_guard) {
  AD_LOAD_EXAMPLE(kSuite, kSuiteDerived);
  std::mt19937_64 rng(53);
  const Vec x = random_reals(30, rng), df = random_reals(3, rng);
  Vec expected(30, 0.0);  // dx[p, q] = [q <= 6] df[p]
  for (int pp = 0; pp < 3; ++pp) {
    for (int q = 0; q <= 6; ++q)
      expected[static_cast<size_t>(pp * 10 + q)] = df[static_cast<size_t>(pp)];
  }
  check_vjp(P, M, "t3", "d_t3", {f64_tensor({3, 10}, x)}, {0}, f64_vector(df), expected);
}

TEST(AdExamples003, Suite4_even_positions) {
  AD_LOAD_EXAMPLE(kSuite, kSuiteDerived);
  std::mt19937_64 rng(54);
  const Vec x = random_reals(8, rng), df = random_reals(4, rng);
  Vec expected(8, 0.0);  // [β / 2 is int] df[β / 2]
  for (int b = 0; b < 8; b += 2) expected[static_cast<size_t>(b)] = df[static_cast<size_t>(b / 2)];
  check_vjp(P, M, "t4", "d_t4", {f64_vector(x)}, {0}, f64_vector(df), expected);
}

TEST(AdExamples003, Suite5_flattened_index_squared) {
  AD_LOAD_EXAMPLE(kSuite, kSuiteDerived);
  std::mt19937_64 rng(55);
  const Vec x = random_reals(50, rng), df = random_reals(30, rng);
  Vec expected(50, 0.0);  // 0 for β >= 30
  for (int b = 0; b < 30; ++b) {
    expected[static_cast<size_t>(b)] = df[static_cast<size_t>(b)] * 2 * x[static_cast<size_t>(b)];
  }
  check_vjp(P, M, "t5", "d_t5", {f64_vector(x)}, {0}, f64_tensor({3, 10}, df), expected);
}

constexpr const char* kGauss = R"(
def t6(Sg: f64[S, N, N], mu: f64[S, N], V: f64[R, N]) -> f64[R, S, N] {
  for r, s, n. sqrt(1.0 / (1.0 + 2.0 * Sg[s, n, n] ^ 2)) *
    exp(-(mu[s, n] - V[r, n]) ^ 2 / (1.0 + 2.0 * Sg[s, n, n]))
}
def t7(Sg: f64[S, N, N], mu: f64[S, N], V: f64[R, N]) -> f64[R, S, R, N] {
  for r, s, t, n. sqrt(1.0 / (1.0 + 4.0 * Sg[s, n, n] ^ 2)) *
    exp(-2.0 * (mu[s, n] - (V[r, n] + V[t, n]) / 2.0) ^ 2 / (1.0 + 4.0 * Sg[s, n, n]) -
        (V[r, n] - V[t, n]) ^ 2 / 2.0)
}
def t6_loss(Sg: f64[S, N, N], mu: f64[S, N], V: f64[R, N], W: f64[R, S, N]) -> f64 {
  let G = t6(Sg, mu, V)
  sum r, s, n. W[r, s, n] * G[r, s, n]
}
def t7_loss(Sg: f64[S, N, N], mu: f64[S, N], V: f64[R, N], W: f64[R, S, R, N]) -> f64 {
  let G = t7(Sg, mu, V)
  sum r, s, t, n. W[r, s, t, n] * G[r, s, t, n]
}
)";

constexpr const char* kGaussDerived = R"(
def j6_sg(Sg: f64[S, N, N], mu: f64[S, N], V: f64[R, N]) -> f64[R, S, N, S, N, N] {
  jacobian(t6, Sg)(Sg, mu, V)
}
def j6_v(Sg: f64[S, N, N], mu: f64[S, N], V: f64[R, N]) -> f64[R, S, N, R, N] {
  jacobian(t6, V)(Sg, mu, V)
}
def j7_v(Sg: f64[S, N, N], mu: f64[S, N], V: f64[R, N]) -> f64[R, S, R, N, R, N] {
  jacobian(t7, V)(Sg, mu, V)
}
def j7_sg(Sg: f64[S, N, N], mu: f64[S, N], V: f64[R, N]) -> f64[R, S, R, N, S, N, N] {
  jacobian(t7, Sg)(Sg, mu, V)
}
def h6_mu(Sg: f64[S, N, N], mu: f64[S, N], V: f64[R, N], W: f64[R, S, N]) -> f64[S, N, S, N] {
  hessian(t6_loss, mu)(Sg, mu, V, W)
}
def h7_v(Sg: f64[S, N, N], mu: f64[S, N], V: f64[R, N], W: f64[R, S, R, N]) -> f64[R, N, R, N] {
  hessian(t7_loss, V)(Sg, mu, V, W)
}
)";

std::vector<Value> gauss_args(uint64_t seed, int64_t w_rank) {
  std::mt19937_64 rng(seed);
  const Value Sg =
      with_real_elements(Value::zeros(DType::F64, {3, 4, 4}), random_reals(48, rng, 0.1, 1.0));
  const Value mu = with_real_elements(Value::zeros(DType::F64, {3, 4}), random_reals(12, rng));
  const Value V = with_real_elements(Value::zeros(DType::F64, {2, 4}), random_reals(8, rng));
  std::vector<int64_t> wshape =
      w_rank == 3 ? std::vector<int64_t>{2, 3, 4} : std::vector<int64_t>{2, 3, 2, 4};
  const Value W = with_real_elements(Value::zeros(DType::F64, wshape), random_reals(96, rng));
  return {Sg, mu, V, W};
}

void expect_hessian(const Module& P, const Module& M, const std::string& loss, const std::string& h,
                    const std::vector<Value>& args, int k) {
  const Vec want = fd_hessian(P, loss, args, k);
  ASSERT_FALSE(want.empty());
  auto r = M.evaluate(h, args);
  ASSERT_TRUE(r.ok()) << r.message();
  const Vec got = real_elements(r.value());
  EXPECT_TRUE(RealsNear(got, want, 1e-5)) << "hessian vs second differences";
  const size_t n = static_cast<size_t>(std::sqrt(static_cast<double>(got.size())));
  ASSERT_EQ(n * n, got.size());
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < i; ++j) EXPECT_NEAR(got[i * n + j], got[j * n + i], 1e-10);
  }
}

TEST(AdExamples003, Suite6_gaussian_overlap_with_diagonal_cokernel) {
  AD_LOAD_EXAMPLE(kGauss, kGaussDerived);
  std::vector<Value> args = gauss_args(56, 3);
  const std::vector<Value> a3(args.begin(), args.begin() + 3);
  EXPECT_TRUE(DerivedMatchesFd(M, "j6_sg", "t6", a3, {0}));
  EXPECT_TRUE(DerivedMatchesFd(M, "j6_v", "t6", a3, {2}));
  expect_hessian(P, M, "t6_loss", "h6_mu", args, 1);
}

TEST(AdExamples003, Suite7_two_index_maps_of_one_argument) {
  AD_LOAD_EXAMPLE(kGauss, kGaussDerived);
  std::vector<Value> args = gauss_args(57, 4);
  const std::vector<Value> a3(args.begin(), args.begin() + 3);
  EXPECT_TRUE(DerivedMatchesFd(M, "j7_v", "t7", a3, {2}));
  EXPECT_TRUE(DerivedMatchesFd(M, "j7_sg", "t7", a3, {0}));
  expect_hessian(P, M, "t7_loss", "h7_v", args, 2);
}

TEST(AdExamples003, Suite8_constant_subscripts_and_liberated_sums) {
  AD_LOAD_EXAMPLE(kSuite, kSuiteDerived);
  std::mt19937_64 rng(58);
  const int T = 2, N = 4, S = 3, Mx = 9;
  const Vec x = random_reals(108, rng), y = random_reals(8, rng), df = random_reals(8, rng);
  auto X = [&](int n, int s, int m) { return x[static_cast<size_t>((n * S + s) * Mx + m)]; };
  auto Y = [&](int t, int n) { return y[static_cast<size_t>(t * N + n)]; };
  auto DF = [&](int t, int n) { return df[static_cast<size_t>(t * N + n)]; };
  Vec expected(108 + 8, 0.0);
  for (int n = 0; n < N; ++n) {
    for (int s = 0; s < S; ++s) {
      for (int t = 0; t < T; ++t) {
        expected[static_cast<size_t>((n * S + s) * Mx + 2 * s)] +=
            DF(t, n) * Y(t, n) * Y(t, n) * 2 * X(n, s, 2 * s);
        expected[static_cast<size_t>((n * S + s) * Mx + 0)] +=
            DF(t, n) * Y(t, n) * Y(t, n) * 2 * X(n, s, 0);
      }
    }
  }
  for (int t = 0; t < T; ++t) {
    for (int q = 0; q < N; ++q) {
      double inner = 0;
      for (int s = 0; s < S; ++s)
        inner += X(q, s, 2 * s) * X(q, s, 2 * s) + X(q, s, 0) * X(q, s, 0) - Y(t, 0);
      double e = DF(t, q) * 2 * Y(t, q) * inner;
      if (q == 0) {
        for (int n = 0; n < N; ++n) {
          for (int s = 0; s < S; ++s) e += DF(t, n) * Y(t, n) * Y(t, n) * -1.0;
        }
      }
      expected[static_cast<size_t>(108 + t * N + q)] = e;
    }
  }
  check_vjp(P, M, "t8", "d_t8", {f64_tensor({4, 3, 9}, x), f64_tensor({2, 4}, y)}, {0, 1},
            f64_tensor({2, 4}, df), expected);
}

// ---------------------------------------------------------------------------------------------
// Fig. 2 (§2): symbolic reverse accumulation on scalars, with shared nodes.

TEST(AdExamples003, Fig2_shared_subexpressions) {
  constexpr const char* primal = R"(
def sinh_(u: f64) -> f64 { (exp(u) - exp(-u)) / 2.0 }
def fig2(x1: f64, x2: f64, x3: f64) -> f64 {
  sin(sin(x1 * (x2 + x3) + sinh_(x2 + x3)))
}
def shared(x: f64) -> f64 {
  let s = x ^ 2
  sin(s) * cos(s)
}
)";
  constexpr const char* derived = R"(
def d_fig2(x1: f64, x2: f64, x3: f64) -> (f64, f64, f64) { grad(fig2)(x1, x2, x3) }
def d_shared(x: f64) -> f64 { grad(shared)(x) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const double x1 = 0.4, x2 = -0.3, x3 = 0.9;
  const double u = x1 * (x2 + x3) + std::sinh(x2 + x3);
  const double g = std::cos(std::sin(u)) * std::cos(u);
  const Vec expected = {g * (x2 + x3), g * (x1 + std::cosh(x2 + x3)),
                        g * (x1 + std::cosh(x2 + x3))};
  const std::vector<Value> args = {Value::f64(x1), Value::f64(x2), Value::f64(x3)};
  EXPECT_TRUE(FdGradientEquals(P, "fig2", args, {0, 1, 2}, expected));
  EXPECT_TRUE(DerivedEquals(M, "d_fig2", args, expected));
  const double x = 0.7;
  EXPECT_TRUE(FdGradientEquals(P, "shared", {Value::f64(x)}, {0}, {2 * x * std::cos(2 * x * x)}));
  EXPECT_TRUE(DerivedEquals(M, "d_shared", {Value::f64(x)}, {2 * x * std::cos(2 * x * x)}));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::adtest
