// Shared residuals in the transposer (design.md §7.4): when several gathers copy the body of one
// linear gen or sum, its costly primal values are materialized once and read at the gathered
// positions. Checks values (opt 0 against opt 2, NaN and infinities, empty and tiny sizes), the
// op counts within the cheap-gradient bound, and that a body copied once is left recomputed.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ad/ad_test_util.h"
#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using cot::ad_test::rho;

const char* kSource = R"(
def tridiag(a: f64[n], b: f64[n], c: f64[n], x: f64[n]) -> f64 {
  let y = for i. [i >= 1] * a[i] * x[i - 1] + b[i] * x[i] + [i + 1 < n] * c[i] * x[i + 1]
  sum i. y[i] * y[i]
}
def laplace2d(u: f64[n, n]) -> f64 {
  let v = for i, j. [i >= 1 && i + 1 < n && j >= 1 && j + 1 < n] *
    (u[i - 1, j] + u[i + 1, j] + u[i, j - 1] + u[i, j + 1] - 4.0 * u[i, j])
  sum i, j. v[i, j] * v[i, j]
}
def upper_matmul_trace(A: f64[n, n], B: f64[n, n]) -> f64 {
  let C = for i, j. sum k. [i <= k && k <= j] * A[i, k] * B[k, j]
  sum i, j. C[i, j] * C[i, j]
}
def one_read(x: f64[n]) -> f64 { sum i. exp(x[i]) * exp(x[i]) }
def total_variation(u: f64[n, n]) -> f64 {
  sum i, j. [i + 1 < n && j + 1 < n] *
    sqrt((u[i + 1, j] - u[i, j]) ^ 2 + (u[i, j + 1] - u[i, j]) ^ 2 + 0.001)
}
def local_kernel(x: f64[n]) -> f64 {
  sum i, j. [j >= i - 2 && j <= i + 2] * exp(-(x[i] - x[j]) * (x[i] - x[j]))
}
def nested_guards(w: f64[n], x: f64[n]) -> f64 {
  sum i. [i >= 1] * {
    let b = exp(x[i - 1] * w[i])
    b + [i + 1 < n] * sqrt(1.0 + b * (x[i + 1] - x[i]) ^ 2)
  }
}
def one_guarded_read(x: f64[n]) -> f64 { sum i. [i + 1 < n] * exp(x[i]) * exp(x[i]) }
)";

Module load(int opt) {
  return cot::ad_test::load_module(kSource, "residuals.cot", opt);
}

Value vec(std::vector<double> xs, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(xs.size())};
  Value v = Value::zeros(DType::F64, shape);
  for (size_t k = 0; k < xs.size(); ++k) v.f64_mut()[k] = xs[k];
  return v;
}

std::vector<double> ramp(size_t n, double scale, double shift) {
  std::vector<double> out(n);
  for (size_t k = 0; k < n; ++k) out[k] = std::sin(scale * static_cast<double>(k) + shift);
  return out;
}

bool same(double x, double y) {
  if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
  if (std::isinf(x) || std::isinf(y)) return x == y;
  return rho(x, y) <= 1e-12;
}

// value_and_grad at opt 0 (the reference) and opt 2 agree element by element.
void expect_agree(const std::string& fn, const std::vector<Value>& args) {
  static Module m0 = load(0), m2 = load(2);
  auto r0 = m0.value_and_grad(fn, args);
  auto r2 = m2.value_and_grad(fn, args);
  ASSERT_EQ(r0.ok(), r2.ok()) << fn;
  if (!r0.ok()) {
    EXPECT_EQ(r0.message(), r2.message());
    return;
  }
  EXPECT_TRUE(same(r0.value().value.as_f64(), r2.value().value.as_f64())) << fn;
  ASSERT_EQ(r0.value().grad.size(), r2.value().grad.size());
  for (size_t p = 0; p < r0.value().grad.size(); ++p) {
    auto g0 = r0.value().grad[p].value.f64_data();
    auto g2 = r2.value().grad[p].value.f64_data();
    ASSERT_EQ(g0.size(), g2.size());
    for (size_t k = 0; k < g0.size(); ++k) {
      EXPECT_TRUE(same(g0[k], g2[k]))
          << fn << " grad " << p << "[" << k << "]: " << g0[k] << " vs " << g2[k];
    }
  }
}

TEST(AdSharedResiduals, tridiag_values_agree_with_the_reference) {
  for (size_t n : {0, 1, 2, 3, 9}) {
    expect_agree("tridiag", {vec(ramp(n, 0.7, 0.1)), vec(ramp(n, 0.3, 1.0)), vec(ramp(n, 1.1, 2.0)),
                             vec(ramp(n, 0.5, 0.4))});
  }
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // A NaN in x[0]: a[0] multiplies it under the false bracket [0 >= 1], so only the rows that
  // read it through a true bracket become NaN, at both levels alike.
  expect_agree("tridiag",
               {vec({1, 2, 3, 4}), vec({1, 1, 1, 1}), vec({2, 0, 1, 5}), vec({nan, 1, -1, 2})});
  expect_agree("tridiag",
               {vec({1, 2, 3, 4}), vec({1, inf, 1, 1}), vec({2, 0, 1, 5}), vec({0.5, 1, -1, 2})});
}

TEST(AdSharedResiduals, laplace2d_values_agree_with_the_reference) {
  for (int64_t n : {0, 1, 2, 3, 5}) {
    expect_agree("laplace2d", {vec(ramp(static_cast<size_t>(n * n), 0.9, 0.2), {n, n})});
  }
  std::vector<double> u = ramp(16, 0.9, 0.2);
  u[5] = std::numeric_limits<double>::quiet_NaN();
  u[0] = std::numeric_limits<double>::infinity();  // a corner: read by no interior point
  expect_agree("laplace2d", {vec(u, {4, 4})});
}

TEST(AdSharedResiduals, upper_matmul_trace_values_agree_with_the_reference) {
  for (int64_t n : {0, 1, 4}) {
    const size_t k = static_cast<size_t>(n * n);
    expect_agree("upper_matmul_trace",
                 {vec(ramp(k, 0.4, 0.0), {n, n}), vec(ramp(k, 0.8, 1.0), {n, n})});
  }
}

TEST(AdSharedResiduals, gradients_are_within_the_cheap_gradient_bound) {
  Module m = load(2);
  for (size_t n : {20, 80}) {
    const int64_t s = static_cast<int64_t>(n);
    struct Case {
      std::string fn;
      std::vector<Value> args;
    };
    std::vector<Case> cases = {
        {"tridiag",
         {vec(ramp(n, 0.7, 0.1)), vec(ramp(n, 0.3, 1.0)), vec(ramp(n, 1.1, 2.0)),
          vec(ramp(n, 0.5, 0.4))}},
        {"laplace2d", {vec(ramp(n * n, 0.9, 0.2), {s, s})}},
        {"upper_matmul_trace",
         {vec(ramp(n * n, 0.4, 0.0), {s, s}), vec(ramp(n * n, 0.8, 1.0), {s, s})}},
    };
    for (const auto& c : cases) {
      int64_t inputs = 0;
      for (const auto& a : c.args) inputs += a.numel();
      auto f = m.cost(c.fn, c.args);
      auto g = m.derivative_cost(c.fn, DerivativeKind::ValueAndGrad, c.args);
      ASSERT_TRUE(f.ok() && g.ok()) << c.fn;
      EXPECT_LE(g.value().ops, 4 * f.value().ops + inputs + 1)
          << c.fn << " n=" << n << ": ops(f) " << f.value().ops << ", ops(value_and_grad) "
          << g.value().ops;
    }
  }
}

// tridiag's six reads each had a gather recomputing the row (about 7 ops per row each); with the
// row shared, the gradient costs about three times the function.
TEST(AdSharedResiduals, tridiag_row_is_computed_once_for_all_gathers) {
  Module m = load(2);
  const size_t n = 50;
  std::vector<Value> args = {vec(ramp(n, 0.7, 0.1)), vec(ramp(n, 0.3, 1.0)), vec(ramp(n, 1.1, 2.0)),
                             vec(ramp(n, 0.5, 0.4))};
  auto f = m.cost("tridiag", args);
  auto g = m.derivative_cost("tridiag", DerivativeKind::ValueAndGrad, args);
  ASSERT_TRUE(f.ok() && g.ok());
  EXPECT_LE(g.value().ops, 7 * f.value().ops / 2);
  auto text = m.print_derivative("tridiag", DerivativeKind::ValueAndGrad);
  ASSERT_TRUE(text.ok());
  // The primal sum, the shared row and the gathers; the row's products `b[i] * x[i]` appear in
  // the primal and the shared row only.
  const std::string& t = text.value();
  int products = 0;
  for (size_t at = t.find("b["); at != std::string::npos; at = t.find("b[", at + 1)) ++products;
  EXPECT_LE(products, 3) << t;
}

// One read: the body is copied once, so nothing is materialized (the gather recomputes).
TEST(AdSharedResiduals, a_body_copied_once_is_recomputed) {
  Module m = load(2);
  expect_agree("one_read", {vec({0.5, -1.0, 2.0})});
  expect_agree("one_read", {vec({})});
  auto text = m.print_derivative("one_read", DerivativeKind::Grad);
  ASSERT_TRUE(text.ok());
  int gens = 0;
  for (size_t at = text.value().find("= for "); at != std::string::npos;
       at = text.value().find("= for ", at + 1)) {
    ++gens;
  }
  EXPECT_EQ(gens, 1) << text.value();
}

// Costly values under a guard that is the whole body: total_variation's square root and
// local_kernel's exponential sit inside `[pred] * {...}`, materialized as `for i. [pred] * v(i)`;
// nested_guards has values at two depths (b under one guard, the square root under two).
TEST(AdSharedResiduals, guarded_values_agree_with_the_reference) {
  for (int64_t n : {0, 1, 2, 3, 6}) {
    const size_t k = static_cast<size_t>(n);
    expect_agree("total_variation", {vec(ramp(k * k, 0.9, 0.2), {n, n})});
    expect_agree("local_kernel", {vec(ramp(k, 0.8, 0.3))});
    expect_agree("nested_guards", {vec(ramp(k, 0.6, 0.1)), vec(ramp(k, 1.3, 0.5))});
    expect_agree("one_guarded_read", {vec(ramp(k, 0.7, 0.0))});
  }
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // The corner u[3, 3] is read by no position where the guard holds: the tables are strong
  // zeros there, so the NaN stays out of the gradient at both levels. A NaN and an infinity
  // inside spread through the rows that read them, alike at both levels.
  std::vector<double> u = ramp(16, 0.9, 0.2);
  u[15] = nan;
  expect_agree("total_variation", {vec(u, {4, 4})});
  u[5] = inf;
  expect_agree("total_variation", {vec(u, {4, 4})});
  u = ramp(16, 0.9, 0.2);
  u[6] = nan;
  expect_agree("total_variation", {vec(u, {4, 4})});
  expect_agree("local_kernel", {vec({0.5, nan, -1.0, 2.0, 0.25, 1.0, -0.5})});
  expect_agree("local_kernel", {vec({0.5, 1.0, inf, 2.0, 0.25, 1.0, -0.5})});
  expect_agree("local_kernel", {vec({inf, 1.0, -inf})});
  // w[0] is read at no position where the guard holds; x[3] only under the inner guard.
  expect_agree("nested_guards", {vec({nan, 0.1, 0.2, 0.3}), vec({1.0, -0.5, 0.25, inf})});
  expect_agree("nested_guards", {vec({0.3, nan, 0.2, 0.1}), vec({1.0, -0.5, 0.25, 2.0})});
  expect_agree("nested_guards", {vec({0.3, 0.4, inf, 0.1}), vec({1.0, -inf, 0.25, 2.0})});
}

TEST(AdSharedResiduals, guarded_gradients_are_within_the_cheap_gradient_bound) {
  Module m = load(2);
  for (size_t n : {20, 80}) {
    const int64_t s = static_cast<int64_t>(n);
    struct Case {
      std::string fn;
      std::vector<Value> args;
    };
    std::vector<Case> cases = {
        {"total_variation", {vec(ramp(n * n, 0.9, 0.2), {s, s})}},
        {"local_kernel", {vec(ramp(n, 0.8, 0.3))}},
        {"nested_guards", {vec(ramp(n, 0.6, 0.1)), vec(ramp(n, 1.3, 0.5))}},
    };
    for (const auto& c : cases) {
      int64_t inputs = 0;
      for (const auto& a : c.args) inputs += a.numel();
      auto f = m.cost(c.fn, c.args);
      auto g = m.derivative_cost(c.fn, DerivativeKind::ValueAndGrad, c.args);
      ASSERT_TRUE(f.ok() && g.ok()) << c.fn;
      EXPECT_LE(g.value().ops, 4 * f.value().ops + inputs + 1)
          << c.fn << " n=" << n << ": ops(f) " << f.value().ops << ", ops(value_and_grad) "
          << g.value().ops;
    }
  }
}

int occurrences(const std::string& text, const std::string& what) {
  int count = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
    ++count;
  }
  return count;
}

// The three gathers of total_variation (two for local_kernel) read the guarded tables instead of
// recomputing the square root (the exponential): it appears in the primal and the table only.
TEST(AdSharedResiduals, guarded_values_are_computed_once_for_all_gathers) {
  Module m = load(2);
  auto tv = m.print_derivative("total_variation", DerivativeKind::ValueAndGrad);
  ASSERT_TRUE(tv.ok());
  EXPECT_EQ(occurrences(tv.value(), "sqrt("), 2) << tv.value();
  auto lk = m.print_derivative("local_kernel", DerivativeKind::ValueAndGrad);
  ASSERT_TRUE(lk.ok());
  EXPECT_EQ(occurrences(lk.value(), "exp("), 2) << lk.value();
}

// One read under a guard: the body is copied once, so nothing is materialized.
TEST(AdSharedResiduals, a_guarded_body_copied_once_is_recomputed) {
  Module m = load(2);
  expect_agree("one_guarded_read", {vec({0.5, -1.0, 2.0})});
  auto text = m.print_derivative("one_guarded_read", DerivativeKind::Grad);
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(occurrences(text.value(), "= for "), 1) << text.value();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
