// The finite-difference oracle itself, on functions whose derivatives are known by hand. These
// tests use no derivative operator, so they pass before automatic differentiation exists.
#include "ad/fd_harness.h"

#include <gtest/gtest.h>

#include <cmath>

namespace cotangent::adtest {
namespace COTANGENT_TEST_UNIT {

constexpr const char* kSource = R"(
def cubes(x: f64[n]) -> f64 {
  sum i. x[i] ^ 3
}

def mixed(x: f64, y: f64) -> f64 {
  exp(x) * sin(y) + x * y
}

def lin(A: f64[m, n], x: f64[n]) -> f64[m] {
  for i. sum j. A[i, j] * x[j]
}

def with_int(x: f64[n], k: i64) -> (f64, f64[n]) {
  (x[k] * x[k], for i. f64(k) * x[i])
}

def narrow(x: f32[n]) -> f32 {
  sum i. x[i] * x[i]
}

def kink(x: f64) -> f64 {
  abs(x)
}

def shapes(x: f64[n * m], A: f64[n, m], v: f64[d], l: f64[d * (d - 1) / 2], h: f64[k / 2], p: (f64[k], i64)) -> f64 {
  0.0
}
)";

TEST(AdFiniteDiffHarness, RhoIsTheSpecifiedMeasure) {
  EXPECT_EQ(rho(1.0, 1.0), 0.0);
  EXPECT_DOUBLE_EQ(rho(0.0, 1e-7), 1e-7);             // absolute near zero
  EXPECT_DOUBLE_EQ(rho(1000.0, 1001.0), 1.0 / 2001);  // relative when large
  EXPECT_DOUBLE_EQ(rho(-2.0, 2.0), 1.0);
}

TEST(AdFiniteDiffHarness, GradientOfACubicSum) {
  auto m = load(kSource, "harness.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  const std::vector<double> x = {0.5, -1.25, 2.0, 3.5};
  std::vector<double> want;
  for (double v : x) want.push_back(3 * v * v);
  auto J = fd_jacobian(m.value(), "cubes", {f64_vector(x)}, {0});
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_EQ(J.value().rows, 1);
  EXPECT_EQ(J.value().cols, 4);
  EXPECT_TRUE(J.value().finite);
  EXPECT_LT(J.value().inconsistency, 1e-8);
  EXPECT_TRUE(RealsNear(J.value().row(0), want, 1e-7));
  EXPECT_TRUE(FdGradientEquals(m.value(), "cubes", {f64_vector(x)}, {0}, want));
  // A wrong closed form is caught.
  std::vector<double> wrong = want;
  wrong[2] += 1e-4;
  EXPECT_FALSE(FdGradientEquals(m.value(), "cubes", {f64_vector(x)}, {0}, wrong));
}

TEST(AdFiniteDiffHarness, PartialsOfTwoScalars) {
  auto m = load(kSource, "harness.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  const double x = 0.3, y = -1.1;
  auto J = fd_jacobian(m.value(), "mixed", {Value::f64(x), Value::f64(y)}, {0, 1});
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_TRUE(RealsNear(J.value().row(0),
                        {std::exp(x) * std::sin(y) + y, std::exp(x) * std::cos(y) + x}, 1e-9));
  // Only the second parameter active.
  auto Jy = fd_jacobian(m.value(), "mixed", {Value::f64(x), Value::f64(y)}, {1});
  ASSERT_TRUE(Jy.ok()) << Jy.message();
  EXPECT_TRUE(RealsNear(Jy.value().row(0), {std::exp(x) * std::cos(y) + x}, 1e-9));
}

TEST(AdFiniteDiffHarness, JacobianOfALinearMapIsTheMatrix) {
  auto m = load(kSource, "harness.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  const Value A = f64_matrix({{1, 2, 3}, {4, 5, 6}});
  const Value x = f64_vector({0.5, -1, 2});
  auto J = fd_jacobian(m.value(), "lin", {A, x}, {1});
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_EQ(J.value().rows, 2);
  EXPECT_EQ(J.value().cols, 3);
  EXPECT_TRUE(RealsNear(J.value().data, {1, 2, 3, 4, 5, 6}, 1e-9));
  // J t and Jᵀ c.
  EXPECT_TRUE(RealsNear(J.value().times({1, 0, -1}), {-2, -2}, 1e-9));
  EXPECT_TRUE(RealsNear(J.value().transpose_times({1, 10}), {41, 52, 63}, 1e-9));
  // With respect to A: d(Ax)_i / dA_kl = [i == k] x_l, columns row-major over A.
  auto JA = fd_jacobian(m.value(), "lin", {A, x}, {0});
  ASSERT_TRUE(JA.ok()) << JA.message();
  EXPECT_TRUE(RealsNear(JA.value().data, {0.5, -1, 2, 0, 0, 0, 0, 0, 0, 0.5, -1, 2}, 1e-9));
  // Both: columns of A first, then x.
  auto Jb = fd_jacobian(m.value(), "lin", {A, x}, {0, 1});
  ASSERT_TRUE(Jb.ok()) << Jb.message();
  EXPECT_EQ(Jb.value().cols, 9);
  EXPECT_NEAR(Jb.value().at(1, 8), 6.0, 1e-9);
}

TEST(AdFiniteDiffHarness, IntegerParametersStayFixedAndTuplesFlatten) {
  auto m = load(kSource, "harness.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  const Value x = f64_vector({1.5, -2, 0.25});
  auto J = fd_jacobian(m.value(), "with_int", {x, Value::i64(1)}, {0});
  ASSERT_TRUE(J.ok()) << J.message();
  // Rows: the scalar x[1]^2, then the vector 1 * x.
  EXPECT_EQ(J.value().rows, 4);
  EXPECT_TRUE(RealsNear(J.value().data, {0, -4, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, 1e-9));
}

TEST(AdFiniteDiffHarness, F32UsesACoarserStep) {
  auto m = load(kSource, "harness.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  auto J = fd_jacobian(m.value(), "narrow", {f32_vector({0.5, -1.5})}, {0});
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_TRUE(RealsNear(J.value().row(0), {1.0, -3.0}, 1e-3));
}

TEST(AdFiniteDiffHarness, KinksShowAsInconsistency) {
  auto m = load(kSource, "harness.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  // |x| at x = 7e-7: the steps h = 1e-6 and h / 2 both straddle the kink, differently.
  auto J = fd_jacobian(m.value(), "kink", {Value::f64(7e-7)}, {0});
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_GT(J.value().inconsistency, 1e-3);
  auto K = fd_jacobian(m.value(), "kink", {Value::f64(0.5)}, {0});
  ASSERT_TRUE(K.ok()) << K.message();
  EXPECT_LT(K.value().inconsistency, 1e-9);
  EXPECT_TRUE(RealsNear(K.value().row(0), {1.0}, 1e-9));
}

TEST(AdFiniteDiffHarness, SubsetOfColumns) {
  auto m = load(kSource, "harness.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  FdOptions opt;
  opt.max_columns = 2;
  const std::vector<double> x = {1, 2, 3, 4, 5, 6};
  auto J = fd_jacobian(m.value(), "cubes", {f64_vector(x)}, {0}, opt);
  ASSERT_TRUE(J.ok()) << J.message();
  int computed = 0;
  for (int64_t c = 0; c < J.value().cols; ++c) {
    if (!J.value().computed[static_cast<size_t>(c)]) {
      EXPECT_TRUE(std::isnan(J.value().at(0, c)));
      continue;
    }
    ++computed;
    EXPECT_NEAR(J.value().at(0, c), 3 * x[static_cast<size_t>(c)] * x[static_cast<size_t>(c)],
                1e-7);
  }
  EXPECT_EQ(computed, 2);
}

TEST(AdFiniteDiffHarness, TypeStringsParse) {
  TypeSpec t;
  ASSERT_TRUE(parse_type("(f64[n, m + 1], (i64, bool), f32)", &t));
  ASSERT_TRUE(t.is_tuple);
  ASSERT_EQ(t.elems.size(), 3u);
  EXPECT_EQ(t.elems[0].dims, (std::vector<std::string>{"n", "m + 1"}));
  EXPECT_FALSE(t.all_real());
  EXPECT_EQ(t.to_string(), "(f64[n, m + 1], (i64, bool), f32)");
  int64_t v = 0;
  EXPECT_TRUE(eval_size("d * (d - 1) / 2", {{"d", 4}}, &v));
  EXPECT_EQ(v, 6);
  EXPECT_FALSE(eval_size("n / 2", {{"n", 3}}, &v));  // inexact
  EXPECT_FALSE(eval_size("n + q", {{"n", 3}}, &v));  // unknown
  EXPECT_TRUE(eval_size("(n - k) / 2 + 1", {{"n", 7}, {"k", 3}}, &v));
  EXPECT_EQ(v, 3);
}

TEST(AdFiniteDiffHarness, RandomArgumentsFitTheirTypes) {
  auto m = load(kSource, "harness.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  auto info = m.value().function("shapes");
  ASSERT_TRUE(info.ok()) << info.message();
  std::mt19937_64 rng(12345);
  for (int trial = 0; trial < 10; ++trial) {
    std::map<std::string, int64_t> sizes;
    auto args = random_arguments(info.value(), rng, &sizes);
    ASSERT_TRUE(args.ok()) << args.message();
    for (const char* var : {"n", "m", "d", "k"}) {
      ASSERT_TRUE(sizes.count(var)) << var;
      EXPECT_GE(sizes[var], 3);
      EXPECT_LE(sizes[var], 5);
    }
    EXPECT_EQ(sizes["k"] % 2, 0);  // k / 2 must divide
    const auto& a = args.value();
    EXPECT_EQ(a[0].shape(), (std::vector<int64_t>{sizes["n"] * sizes["m"]}));
    EXPECT_EQ(a[3].numel(), sizes["d"] * (sizes["d"] - 1) / 2);
    ASSERT_TRUE(a[5].is_tuple());
    EXPECT_EQ(a[5].elems()[1].dtype(), DType::I64);
    for (double x : real_elements(a[0])) {
      EXPECT_GE(x, -1.0);
      EXPECT_LT(x, 1.0);
    }
    // The interpreter accepts them.
    auto r = m.value().evaluate("shapes", a);
    EXPECT_TRUE(r.ok()) << r.message();
  }
  // Fixed sizes are kept; a fixed seed gives the same values.
  std::mt19937_64 r1(7), r2(7);
  std::map<std::string, int64_t> s1{{"n", 2}}, s2{{"n", 2}};
  auto a1 = random_arguments(info.value(), r1, &s1);
  auto a2 = random_arguments(info.value(), r2, &s2);
  ASSERT_TRUE(a1.ok() && a2.ok());
  EXPECT_EQ(s1["n"], 2);
  EXPECT_EQ(real_elements(a1.value()[1]), real_elements(a2.value()[1]));
}

TEST(AdFiniteDiffHarness, ComparisonsOfNonFiniteValues) {
  const double inf = HUGE_VAL, nan = std::nan("");
  EXPECT_TRUE(RealsNear({inf, nan, 1.0}, {inf, nan, 1.0 + 1e-12}, 1e-10));
  EXPECT_FALSE(RealsNear({inf}, {-inf}, 1e-10));
  EXPECT_FALSE(RealsNear({nan}, {0.0}, 1e-10));
  EXPECT_FALSE(RealsNear({1.0, 2.0}, {1.0}, 1e-10));
  EXPECT_FALSE(ValuesNear(Value::f64(1.0), Value::f32(1.0f), 1e-10));
  EXPECT_TRUE(ValuesNear(Value::tuple({Value::f64(1.0), Value::i64(2)}),
                         Value::tuple({Value::f64(1.0), Value::i64(2)}), 0.0));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::adtest
