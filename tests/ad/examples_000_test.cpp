// The worked examples of [Bernstein20] ("Differentiating a Tensor Language", design.md
// §References), numbered EX-1..EX-17 here: EX-1..EX-4 are its §2.1 (convolution), EX-5 §2.3,
// EX-6..EX-10 §2.2 (zero costs), EX-11 and EX-12 the two programs of its introduction (§1),
// EX-13 §5.4, EX-14 §6.2, EX-15 §5.1, EX-16 §5.2 and EX-17 §6.1. Each program is written in our
// language; the expected derivative comes from a closed form, computed here in C++, and is also
// checked against finite differences of the primal program (which needs no AD).
//
// Shifted ranges: the paper's signal x has the range [-m+1, n); here it is an ordinary vector
// of length L = n + m - 1, and the paper's x[k] is our x[k + m - 1].
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ad/fd_harness.h"

namespace cotangent::adtest {
namespace COTANGENT_TEST_UNIT {

using Vec = std::vector<double>;

// f(x)[i] = sum_j x[i - j] c[j], in our coordinates.
Vec conv(const Vec& x, const Vec& c) {
  const size_t m = c.size(), n = x.size() - m + 1;
  Vec y(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < m; ++j) y[i] += x[i - j + m - 1] * c[j];
  }
  return y;
}

// EX-3: DTf(x, dy)[k] = sum_j [0 <= k + j < n] dy[k + j] c[j], k in [-m+1, n).
Vec conv_adjoint(const Vec& dy, const Vec& c) {
  const int m = static_cast<int>(c.size()), n = static_cast<int>(dy.size());
  Vec out(static_cast<size_t>(n + m - 1), 0.0);
  for (int k = -m + 1; k < n; ++k) {
    double s = 0;
    for (int j = 0; j < m; ++j) {
      if (0 <= k + j && k + j < n) s += dy[static_cast<size_t>(k + j)] * c[static_cast<size_t>(j)];
    }
    out[static_cast<size_t>(k + m - 1)] = s;
  }
  return out;
}

constexpr const char* kConv = R"(
def conv(x: f64[L], c: f64[m]) -> f64[L - m + 1] {
  for i: L - m + 1. sum j. x[i - j + m - 1] * c[j]
}

def deconv_loss(x: f64[L], c: f64[m], z: f64[L - m + 1]) -> f64 {
  let f = conv(x, c)
  sum k. (f[k] - z[k]) ^ 2
}
)";

constexpr const char* kConvDerived = R"(
def conv_jvp(x: f64[L], c: f64[m], dx: f64[L]) -> (f64[L - m + 1], f64[L - m + 1]) {
  jvp(conv, x)(x, c, dx)
}
def conv_vjp(x: f64[L], c: f64[m], dy: f64[L - m + 1]) -> f64[L] { vjp(conv, x)(x, c, dy) }
def conv_jac(x: f64[L], c: f64[m]) -> f64[L - m + 1, L] { jacobian(conv, x)(x, c) }
def deconv_grad(x: f64[L], c: f64[m], z: f64[L - m + 1]) -> f64[L] {
  grad(deconv_loss, x)(x, c, z)
}
)";

const Vec kX = {0.5, -1.25, 2.0, 0.75, -0.5, 1.5, 0.25};  // L = 7
const Vec kC = {1.0, -2.0, 0.5};                          // m = 3, n = 5

TEST(AdExamples000, EX1_convolution_forward_derivative) {
  AD_LOAD_EXAMPLE(kConv, kConvDerived);
  const Vec dx = {0.1, 0.2, -0.3, 0.4, 0.0, -1.0, 2.0};
  // D f(x; dx) = Gen i. Sum j. dx[i - j] c[j]: f is linear in x.
  Vec expected = conv(kX, kC);
  const Vec tangent = conv(dx, kC);
  expected.insert(expected.end(), tangent.begin(), tangent.end());
  EXPECT_TRUE(
      DerivedEquals(M, "conv_jvp", {f64_vector(kX), f64_vector(kC), f64_vector(dx)}, expected));
  // The finite-difference Jacobian times dx is the same tangent.
  auto J = fd_jacobian(P, "conv", {f64_vector(kX), f64_vector(kC)}, {0});
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_TRUE(RealsNear(J.value().times(dx), tangent, kFdTol));
  EXPECT_TRUE(DerivedMatchesFd(M, "conv_jac", "conv", {f64_vector(kX), f64_vector(kC)}, {0}));
}

TEST(AdExamples000, EX2_one_hot_sensitivity_probe) {
  AD_LOAD_EXAMPLE(kConv, kConvDerived);
  // dx = Gen k. [k = 2] * 1 (the paper's k = 2 is our element 2 + m - 1 = 4), and the tangent
  // simplifies to Gen i. [0 <= i - 2 < m] * c[i - 2].
  Vec dx(kX.size(), 0.0);
  dx[2 + kC.size() - 1] = 1.0;
  Vec expected = conv(kX, kC);
  for (int i = 0; i < 5; ++i) {
    expected.push_back(0 <= i - 2 && i - 2 < 3 ? kC[static_cast<size_t>(i - 2)] : 0.0);
  }
  EXPECT_TRUE(RealsNear(conv(dx, kC), Vec(expected.begin() + 5, expected.end()), 0.0));
  EXPECT_TRUE(
      DerivedEquals(M, "conv_jvp", {f64_vector(kX), f64_vector(kC), f64_vector(dx)}, expected));
}

TEST(AdExamples000, EX3_convolution_adjoint_is_correlation) {
  AD_LOAD_EXAMPLE(kConv, kConvDerived);
  const Vec dy = {1.0, -0.5, 2.0, 0.25, -1.5};
  const Vec expected = conv_adjoint(dy, kC);
  auto J = fd_jacobian(P, "conv", {f64_vector(kX), f64_vector(kC)}, {0});
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_TRUE(RealsNear(J.value().transpose_times(dy), expected, kFdTol));
  EXPECT_TRUE(
      DerivedEquals(M, "conv_vjp", {f64_vector(kX), f64_vector(kC), f64_vector(dy)}, expected));
  // Adjoint identity <dy, D f dx> = <DT f dy, dx>.
  const Vec dx = {0.3, -0.1, 0.7, 0.2, -0.4, 0.9, -0.6};
  const Vec fdx = conv(dx, kC);
  double lhs = 0, rhs = 0;
  for (size_t i = 0; i < dy.size(); ++i) lhs += dy[i] * fdx[i];
  for (size_t i = 0; i < dx.size(); ++i) rhs += expected[i] * dx[i];
  EXPECT_NEAR(lhs, rhs, 1e-12);
}

TEST(AdExamples000, EX4_deconvolution_loss_gradient) {
  AD_LOAD_EXAMPLE(kConv, kConvDerived);
  const Vec z = {0.5, 1.0, -1.0, 2.0, 0.0};
  // let dy = Gen i. 2 ((Sum j. x[i-j] c[j]) - z[i]) in Gen i. Sum j. dy[i+j] c[j]
  Vec dy = conv(kX, kC);
  for (size_t i = 0; i < dy.size(); ++i) dy[i] = 2 * (dy[i] - z[i]);
  const Vec expected = conv_adjoint(dy, kC);
  const std::vector<Value> args = {f64_vector(kX), f64_vector(kC), f64_vector(z)};
  EXPECT_TRUE(FdGradientEquals(P, "deconv_loss", args, {0}, expected));
  EXPECT_TRUE(DerivedEquals(M, "deconv_grad", args, expected));
}

TEST(AdExamples000, EX5_kernel_gradient_single_and_batched) {
  constexpr const char* primal = R"(
def kernel_loss(w: f64[m], x: f64[L], z: f64[L - m + 1]) -> f64 {
  sum i. ((sum j. x[i - j + m - 1] * w[j]) - z[i]) ^ 2
}

def batched_loss(w: f64[m], x: f64[B, L], z: f64[B, L - m + 1]) -> f64 {
  sum k. sum i. ((sum j. x[k, i - j + m - 1] * w[j]) - z[k, i]) ^ 2
}
)";
  constexpr const char* derived = R"(
def kernel_grad(w: f64[m], x: f64[L], z: f64[L - m + 1]) -> f64[m] {
  grad(kernel_loss, w)(w, x, z)
}
def batched_grad(w: f64[m], x: f64[B, L], z: f64[B, L - m + 1]) -> f64[m] {
  grad(batched_loss, w)(w, x, z)
}
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Vec w = kC;
  const std::vector<Vec> xs = {kX, {1.0, 0.5, -0.5, 0.25, 2.0, -1.0, 0.0}};
  const std::vector<Vec> zs = {{0.5, 1.0, -1.0, 2.0, 0.0}, {-0.5, 0.0, 1.0, 1.5, -2.0}};
  // DTf(x; w, dy) = Gen j. Sum i. x[i - j] dy[i]; summed over the batch.
  auto kernel_adjoint = [&](const Vec& x, const Vec& z) {
    Vec dy = conv(x, w);
    for (size_t i = 0; i < dy.size(); ++i) dy[i] = 2 * (dy[i] - z[i]);
    Vec g(w.size(), 0.0);
    for (size_t j = 0; j < w.size(); ++j) {
      for (size_t i = 0; i < dy.size(); ++i) g[j] += x[i - j + w.size() - 1] * dy[i];
    }
    return g;
  };
  const Vec single = kernel_adjoint(xs[0], zs[0]);
  const std::vector<Value> a1 = {f64_vector(w), f64_vector(xs[0]), f64_vector(zs[0])};
  EXPECT_TRUE(FdGradientEquals(P, "kernel_loss", a1, {0}, single));
  EXPECT_TRUE(DerivedEquals(M, "kernel_grad", a1, single));
  Vec batched = single;
  const Vec second = kernel_adjoint(xs[1], zs[1]);
  for (size_t j = 0; j < w.size(); ++j) batched[j] += second[j];
  const std::vector<Value> a2 = {f64_vector(w), f64_matrix(xs), f64_matrix(zs)};
  EXPECT_TRUE(FdGradientEquals(P, "batched_loss", a2, {0}, batched));
  EXPECT_TRUE(DerivedEquals(M, "batched_grad", a2, batched));
}

constexpr const char* kTraceEye = R"(
def trace_eye(x: f64, v: f64[n]) -> f64 {
  trace(for i: n, j: n. [i == j] * x)
}

def trace_eye_let(x: f64, v: f64[n]) -> f64 {
  let A = for i: n, j: n. [i == j] * x
  let T = for g: n. A[g, g]
  sum i. T[i]
}
)";

TEST(AdExamples000, EX6_trace_of_eye) {
  constexpr const char* derived = R"(
def d_trace_eye(x: f64, v: f64[n]) -> f64 { grad(trace_eye, x)(x, v) }
def d_trace_eye_let(x: f64, v: f64[n], dy: f64) -> f64 { vjp(trace_eye_let, x)(x, v, dy) }
)";
  AD_LOAD_EXAMPLE(kTraceEye, derived);
  const Value v = f64_vector({0, 0, 0, 0, 0});  // n = 5; only its length matters
  // trace(eye(x)) = n x; DT(x; dy) = trace(eye(dy)) = n dy.
  auto val = P.evaluate("trace_eye", {Value::f64(1.5), v});
  ASSERT_TRUE(val.ok()) << val.message();
  EXPECT_EQ(val.value().as_f64(), 7.5);
  EXPECT_TRUE(FdGradientEquals(P, "trace_eye", {Value::f64(1.5), v}, {0}, {5.0}));
  EXPECT_TRUE(DerivedEquals(M, "d_trace_eye", {Value::f64(1.5), v}, {5.0}));
  EXPECT_TRUE(
      DerivedEquals(M, "d_trace_eye_let", {Value::f64(1.5), v, Value::f64(0.75)}, {5 * 0.75}));
}

TEST(AdExamples000, EX6_gradient_cost_is_the_forward_cost) {
  constexpr const char* derived = R"(
def d_trace_eye_let(x: f64, v: f64[n]) -> f64 { grad(trace_eye_let, x)(x, v) }
)";
  AD_LOAD_EXAMPLE(kTraceEye, derived);
  // n - 1 additions forward as written (the optimizer makes the sum of n copies of x one
  // multiplication f64(n) * x); the adjoint n dy likewise (plus the forward pass, which it may
  // or may not recompute): at most twice the forward cost, and linear in n.
  for (int64_t n : {8, 16}) {
    const Value v = Value::zeros(DType::F64, {n});
    auto fwd = P.cost("trace_eye_let", {Value::f64(1.5), v});
    ASSERT_TRUE(fwd.ok()) << fwd.message();
    EXPECT_LE(fwd.value().ops, n - 1);
    EXPECT_GE(fwd.value().ops, 1);
    auto rev = M.cost("d_trace_eye_let", {Value::f64(1.5), v});
    ASSERT_TRUE(rev.ok()) << rev.message();
    EXPECT_LE(rev.value().ops, 2 * fwd.value().ops + 2) << "n = " << n;
  }
}

TEST(AdExamples000, EX7_sum_of_squares_two_spellings) {
  constexpr const char* primal = R"(
def sos(x: f64[n]) -> f64 { sum i. x[i] * x[i] }
def sos_let(x: f64[n]) -> f64 {
  let y = for i. x[i] * x[i]
  sum i. y[i]
}
)";
  constexpr const char* derived = R"(
def d_sos(x: f64[n], dy: f64) -> f64[n] { vjp(sos)(x, dy) }
def d_sos_let(x: f64[n], dy: f64) -> f64[n] { vjp(sos_let)(x, dy) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Vec x = {0.5, -1.5, 2.0, 3.25};
  const double dy = -0.8;
  Vec expected;  // Gen i. 2 x[i] dy
  for (double v : x) expected.push_back(2 * v * dy);
  Vec grad;
  for (double v : x) grad.push_back(2 * v);
  EXPECT_TRUE(FdGradientEquals(P, "sos", {f64_vector(x)}, {0}, grad));
  EXPECT_TRUE(FdGradientEquals(P, "sos_let", {f64_vector(x)}, {0}, grad));
  EXPECT_TRUE(DerivedEquals(M, "d_sos", {f64_vector(x), Value::f64(dy)}, expected));
  EXPECT_TRUE(DerivedEquals(M, "d_sos_let", {f64_vector(x), Value::f64(dy)}, expected));
  // Both spellings cost n multiplications and n - 1 additions.
  auto c1 = P.cost("sos", {f64_vector(x)});
  auto c2 = P.cost("sos_let", {f64_vector(x)});
  ASSERT_TRUE(c1.ok() && c2.ok());
  EXPECT_EQ(c1.value().mul, 4);
  EXPECT_EQ(c1.value().add, 3);
  EXPECT_EQ(c2.value().ops, c1.value().ops);
}

TEST(AdExamples000, EX8_dead_code) {
  constexpr const char* primal = R"(
def dead(x: f64) -> f64 {
  let z0 = x
  let z1 = x
  let z2 = exp(x)
  let z3 = z2 * x
  2.0 * x
}
)";
  constexpr const char* derived = R"(
def d_dead(x: f64, dy: f64) -> f64 { vjp(dead)(x, dy) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  EXPECT_TRUE(FdGradientEquals(P, "dead", {Value::f64(0.7)}, {0}, {2.0}));
  EXPECT_TRUE(DerivedEquals(M, "d_dead", {Value::f64(0.7), Value::f64(1.25)}, {2.5}));
}

TEST(AdExamples000, EX9_linear_dag_transposition) {
  constexpr const char* primal = R"(
def dag(x: f64, y: f64) -> (f64, f64) {
  let a = 2.0 * x + 3.0 * y
  let b = 4.0 * x + a
  let z = 8.0 * x
  let w = 5.0 * a + 6.0 * b
  (z, w)
}
)";
  constexpr const char* derived = R"(
def dag_t(x: f64, y: f64, zb: f64, wb: f64) -> (f64, f64) { vjp(dag)(x, y, (zb, wb)) }
def dag_d(x: f64, y: f64, dx: f64, dy: f64) -> ((f64, f64), (f64, f64)) { jvp(dag)(x, y, dx, dy) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  // The printed transpose: b = 6w; a = 5w + b; x = 2a + 4b + 8z; y = 3a.
  const double zb = 0.5, wb = -1.5;
  const double b = 6 * wb, a = 5 * wb + b;
  const Vec expected = {2 * a + 4 * b + 8 * zb, 3 * a};
  EXPECT_TRUE(RealsNear(expected, {8 * zb + 46 * wb, 33 * wb}, 1e-15));
  const std::vector<Value> args = {Value::f64(1.0), Value::f64(2.0)};
  auto J = fd_jacobian(P, "dag", args, {0, 1});
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_TRUE(RealsNear(J.value().transpose_times({zb, wb}), expected, kFdTol));
  EXPECT_TRUE(
      DerivedEquals(M, "dag_t", {args[0], args[1], Value::f64(zb), Value::f64(wb)}, expected));
  // Adjoint identity against the forward derivative.
  const double dx = 0.25, dy = -0.75;
  EXPECT_TRUE(DerivedEquals(M, "dag_d", {args[0], args[1], Value::f64(dx), Value::f64(dy)},
                            {8.0, 46.0 + 66.0, 8 * dx, 46 * dx + 33 * dy}));
  EXPECT_NEAR(zb * 8 * dx + wb * (46 * dx + 33 * dy), expected[0] * dx + expected[1] * dy, 1e-12);
}

TEST(AdExamples000, EX10_skipped_entry_sum) {
  constexpr const char* primal = R"(
def skip_one(x: f64[n]) -> f64 { x[0] + sum i. [i >= 2] * x[i] }
)";
  constexpr const char* derived = R"(
def d_skip_one(x: f64[n], dy: f64) -> f64[n] { vjp(skip_one)(x, dy) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Vec x = {1, 2, 3, 4, 5, 6};
  // [dy, 0, dy, dy, ...]
  EXPECT_TRUE(FdGradientEquals(P, "skip_one", {f64_vector(x)}, {0}, {1, 0, 1, 1, 1, 1}));
  EXPECT_TRUE(DerivedEquals(M, "d_skip_one", {f64_vector(x), Value::f64(2.5)},
                            {2.5, 0, 2.5, 2.5, 2.5, 2.5}));
  // The adjoint is a literal: its arithmetic grows at most linearly with n.
  std::vector<int64_t> ops;
  for (int64_t n : {16, 32, 64}) {
    auto c = M.cost("d_skip_one", {Value::zeros(DType::F64, {n}), Value::f64(1.0)});
    ASSERT_TRUE(c.ok()) << c.message();
    ops.push_back(c.value().ops);
  }
  EXPECT_LE(ops[2] - ops[1], 2 * (ops[1] - ops[0]) + 2) << ops[0] << " " << ops[1] << " " << ops[2];
}

constexpr const char* kIntro = R"(
# [Bernstein20] §1, pathology 1: k = 3 traces of one diagonal matrix.
def traces(x: f64[n]) -> f64 {
  let A = diag(x)
  trace(A) + trace(A) + trace(A)
}

# pathology 2: a row times a column of a diagonal matrix.
def row_col(x: f64[n]) -> f64 {
  let A = diag(x)
  dot(for i. A[i, 0], for j. A[0, j])
}
)";

constexpr const char* kIntroDerived = R"(
def d_traces(x: f64[n], dy: f64) -> f64[n] { vjp(traces)(x, dy) }
def d_row_col(x: f64[n], dy: f64) -> f64[n] { vjp(row_col)(x, dy) }
)";

TEST(AdExamples000, EX11_intro_repeated_trace_of_diag) {
  AD_LOAD_EXAMPLE(kIntro, kIntroDerived);
  const Vec x = {0.5, -1.0, 2.0, 3.0};
  // Gen i. k dy, k = 3.
  EXPECT_TRUE(FdGradientEquals(P, "traces", {f64_vector(x)}, {0}, {3, 3, 3, 3}));
  EXPECT_TRUE(DerivedEquals(M, "d_traces", {f64_vector(x), Value::f64(0.5)}, {1.5, 1.5, 1.5, 1.5}));
}

// The cost of the optimized gradient (--opt=2): the adjoint of the matrix is summed as n-by-n
// tensors by the AD, and fusion and the bracket rules reduce it to O(n) (at --opt=0 it is
// O(n^2)).
::cotangent::Result<::cotangent::Module> optimized(const std::string& source) {
  ::cotangent::LoadOptions o;
  o.opt_level = 2;
  return ::cotangent::Module::from_string(source, "intro.cot", o);
}

TEST(AdExamples000, EX11_gradient_cost_is_linear) {
  auto loaded = optimized(std::string(kIntro) + kIntroDerived);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  const ::cotangent::Module& M = loaded.value();
  // O(kN), not O(kN^2): doubling N at most doubles the arithmetic (plus a constant).
  std::vector<int64_t> ops;
  for (int64_t n : {16, 32, 64}) {
    auto c = M.cost("d_traces", {Value::zeros(DType::F64, {n}), Value::f64(1.0)});
    ASSERT_TRUE(c.ok()) << c.message();
    ops.push_back(c.value().ops);
  }
  EXPECT_LE(ops[2] - ops[1], 2 * (ops[1] - ops[0]) + 4) << ops[0] << " " << ops[1] << " " << ops[2];
}

TEST(AdExamples000, EX12_intro_row_times_column_of_diag) {
  AD_LOAD_EXAMPLE(kIntro, kIntroDerived);
  const Vec x = {1.5, -1.0, 2.0, 3.0, 0.25};
  auto v = P.evaluate("row_col", {f64_vector(x)});
  ASSERT_TRUE(v.ok()) << v.message();
  EXPECT_EQ(v.value().as_f64(), 2.25);  // x[0]^2
  // Gen i. [i = 0] 2 x[0] dy
  EXPECT_TRUE(FdGradientEquals(P, "row_col", {f64_vector(x)}, {0}, {3.0, 0, 0, 0, 0}));
  EXPECT_TRUE(DerivedEquals(M, "d_row_col", {f64_vector(x), Value::f64(-2.0)}, {-6.0, 0, 0, 0, 0}));
}

// The same for the row times a column of diag(x): at --opt=2 the gradient costs O(1).
TEST(AdExamples000, EX12_gradient_cost_does_not_grow) {
  auto loaded = optimized(std::string(kIntro) + kIntroDerived);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  const ::cotangent::Module& M = loaded.value();
  std::vector<int64_t> ops;
  for (int64_t n : {16, 32, 64}) {
    auto c = M.cost("d_row_col", {Value::zeros(DType::F64, {n}), Value::f64(1.0)});
    ASSERT_TRUE(c.ok()) << c.message();
    ops.push_back(c.value().ops);
  }
  // Only x[0] matters: the same few operations at every n.
  EXPECT_EQ(ops[0], ops[2]) << ops[0] << " " << ops[1] << " " << ops[2];
  EXPECT_LE(ops[2], 4);
}

TEST(AdExamples000, EX13_pointwise_product_and_matmul) {
  constexpr const char* primal = R"(
def pointwise(A: f64[n, n], B: f64[n, n]) -> f64[n, n] { for i, j. A[i, j] * B[i, j] }
def mm(A: f64[n, n], B: f64[n, n]) -> f64[n, n] { for i, j. sum k. A[i, k] * B[k, j] }
)";
  constexpr const char* derived = R"(
def d_pointwise(A: f64[n, n], B: f64[n, n], dY: f64[n, n]) -> (f64[n, n], f64[n, n]) {
  vjp(pointwise)(A, B, dY)
}
def d_mm(A: f64[n, n], B: f64[n, n], dY: f64[n, n]) -> (f64[n, n], f64[n, n]) { vjp(mm)(A, B, dY) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  std::mt19937_64 rng(13);
  const int n = 3;
  const Vec A = random_reals(9, rng), B = random_reals(9, rng), dY = random_reals(9, rng);
  Vec pw, mmv(18, 0.0);
  for (int k = 0; k < 9; ++k) pw.push_back(dY[k] * B[k]);
  for (int k = 0; k < 9; ++k) pw.push_back(dY[k] * A[k]);
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      for (int k = 0; k < n; ++k) {
        mmv[i * n + k] += dY[i * n + j] * B[k * n + j];      // dA = dY Bᵀ
        mmv[9 + k * n + j] += A[i * n + k] * dY[i * n + j];  // dB = Aᵀ dY
      }
    }
  }
  const std::vector<Value> args = {f64_tensor({3, 3}, A), f64_tensor({3, 3}, B)};
  for (const char* fn : {"pointwise", "mm"}) {
    auto J = fd_jacobian(P, fn, args, {0, 1});
    ASSERT_TRUE(J.ok()) << J.message();
    EXPECT_TRUE(
        RealsNear(J.value().transpose_times(dY), std::string(fn) == "mm" ? mmv : pw, kFdTol))
        << fn;
  }
  EXPECT_TRUE(DerivedEquals(M, "d_pointwise", {args[0], args[1], f64_tensor({3, 3}, dY)}, pw));
  EXPECT_TRUE(DerivedEquals(M, "d_mm", {args[0], args[1], f64_tensor({3, 3}, dY)}, mmv));
}

TEST(AdExamples000, EX14_product_tree) {
  constexpr const char* primal = R"(
def tree(x: f64[8]) -> f64 {
  ((x[0] * x[1]) * (x[2] * x[3])) * ((x[4] * x[5]) * (x[6] * x[7]))
}
)";
  constexpr const char* derived = R"(
def d_tree(x: f64[8]) -> f64[8] { grad(tree)(x) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Vec x = {1.5, -0.5, 2.0, 0.75, -1.25, 1.1, 0.9, -2.0};
  Vec expected;
  for (size_t i = 0; i < 8; ++i) {
    double p = 1;
    for (size_t j = 0; j < 8; ++j) {
      if (j != i) p *= x[j];
    }
    expected.push_back(p);
  }
  EXPECT_TRUE(FdGradientEquals(P, "tree", {f64_vector(x)}, {0}, expected));
  EXPECT_TRUE(DerivedEquals(M, "d_tree", {f64_vector(x)}, expected));
}

TEST(AdExamples000, EX15_let_lifting_product) {
  constexpr const char* primal = R"(
def lifted(a: f64, b: f64, c: f64) -> f64 { { let x = exp(a); x * b } * c }
)";
  constexpr const char* derived = R"(
def d_lifted(a: f64, b: f64, c: f64) -> (f64, f64, f64) { grad(lifted)(a, b, c) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const double a = 0.3, b = -1.2, c = 2.5;
  const Vec expected = {std::exp(a) * b * c, std::exp(a) * c, std::exp(a) * b};
  const std::vector<Value> args = {Value::f64(a), Value::f64(b), Value::f64(c)};
  EXPECT_TRUE(FdGradientEquals(P, "lifted", args, {0, 1, 2}, expected));
  EXPECT_TRUE(DerivedEquals(M, "d_lifted", args, expected));
}

TEST(AdExamples000, EX16_pair_of_arrays) {
  // Arrays of pairs do not exist in the language (tuples of tensors do): the pair-eliminated
  // (struct-of-arrays) form.
  constexpr const char* primal = R"(
def pairs(u: f64[n]) -> f64 {
  let (x0, x1) = (for i. u[i], for i. u[i])
  sum i. x0[i] * x1[i]
}
)";
  constexpr const char* derived = R"(
def d_pairs(u: f64[n]) -> f64[n] { grad(pairs)(u) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Vec u = {0.5, -2.0, 1.5};
  EXPECT_TRUE(FdGradientEquals(P, "pairs", {f64_vector(u)}, {0}, {1.0, -4.0, 3.0}));
  EXPECT_TRUE(DerivedEquals(M, "d_pairs", {f64_vector(u)}, {1.0, -4.0, 3.0}));
}

TEST(AdExamples000, EX17_one_hot_probes_give_partials_and_hessians) {
  constexpr const char* primal = R"(
def cubic(x: f64[n]) -> f64 { (sum i. x[i] ^ 3) + x[0] * x[1] }
)";
  constexpr const char* derived = R"(
def probe(x: f64[n], e: f64[n]) -> (f64, f64) { jvp(cubic)(x, e) }
def g_cubic(x: f64[n]) -> f64[n] { grad(cubic)(x) }
def hess_probe(x: f64[n], e: f64[n]) -> (f64[n], f64[n]) { jvp(g_cubic)(x, e) }
def H(x: f64[n]) -> f64[n, n] { hessian(cubic, x)(x) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Vec x = {0.5, -1.5, 2.0};
  const Vec g = {3 * 0.25 + -1.5, 3 * 2.25 + 0.5, 3 * 4.0};
  const Vec Hm = {6 * 0.5, 1, 0, 1, 6 * -1.5, 0, 0, 0, 6 * 2.0};
  EXPECT_TRUE(FdGradientEquals(P, "cubic", {f64_vector(x)}, {0}, g));
  double value = 0.125 - 3.375 + 8 - 0.75;
  for (size_t i = 0; i < 3; ++i) {
    Vec e(3, 0.0);
    e[i] = 1.0;
    SCOPED_TRACE("probe " + std::to_string(i));
    // ∂f/∂x_i = Df(x, Gen k. [k = i])
    EXPECT_TRUE(DerivedEquals(M, "probe", {f64_vector(x), f64_vector(e)}, {value, g[i]}));
    Vec want = g;
    for (size_t j = 0; j < 3; ++j) want.push_back(Hm[j * 3 + i]);
    EXPECT_TRUE(DerivedEquals(M, "hess_probe", {f64_vector(x), f64_vector(e)}, want));
  }
  EXPECT_TRUE(DerivedEquals(M, "H", {f64_vector(x)}, Hm));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::adtest
