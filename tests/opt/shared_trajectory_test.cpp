// A loop nested in a sum, differentiated (region-cse's shared trajectory, src/opt/region_cse.h):
// the primal runs the loop for its final state and each gather of the gradient runs it again to
// save its states. At --opt=2 it runs once per point, into a table of its trajectory that both
// read. The values and gradients agree with --opt=0 and with the closed forms of Horner's rule,
// on empty ranges, zero trip counts, infinities and NaN too.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ad/ad_test_util.h"
#include "cotangent/cotangent.h"
#include "opt/opt_test_util.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using cot::ad_test::rho;

constexpr double kTol = 1e-12;

// p(x) = sum_t c[t] x^(m-1-t) by Horner's rule, per element, the last coefficient masked (a
// guard in the body keeps loop-batch from running the loop over all points at once, which
// makes the trajectory unnecessary; see loop_batch_test.cpp); `tri` runs a loop whose trip count
// depends on the point (no table of one row length: left alone).
const char* kSource = R"(
def horner(x: f64[n], c: f64[m]) -> f64 {
  sum i. loop p = 0.0 for t < m { p * x[i] + [t + 1 < m] * c[t] }
}
def horner_scalar(x: f64[n], c: f64) -> f64 {
  sum i. loop p = 0.0 for t < 5 { p * x[i] + [t < 4] * c }
}
def horner_squared(x: f64[n], c: f64[6]) -> f64 {
  sum i. { let p = loop p = 0.0 for t < 6 { p * x[i] + [t < 5] * c[t] }; p * p }
}
def tri(x: f64[n]) -> f64 {
  sum i. loop p = 1.0 for t < i { p * x[i] + x[t] }
}
)";

Module load(int opt) {
  return cot::ad_test::load_module(kSource, "trajectory.cot", opt);
}

using cot::opt_test::count;
using cot::opt_test::vec;

// Equal within kTol, or both NaN.
void expect_close(double a, double b, const std::string& what) {
  if (std::isnan(a) || std::isnan(b)) {
    EXPECT_TRUE(std::isnan(a) && std::isnan(b)) << what << ": " << a << " vs " << b;
  } else if (std::isinf(a) || std::isinf(b)) {
    EXPECT_EQ(a, b) << what;
  } else {
    EXPECT_LE(rho(a, b), kTol) << what << ": " << a << " vs " << b;
  }
}

void expect_same(const Value& a, const Value& b, const std::string& what) {
  ASSERT_EQ(a.shape(), b.shape()) << what;
  const auto xa = a.f64_data();
  const auto xb = b.f64_data();
  for (size_t k = 0; k < xa.size(); ++k)
    expect_close(xa[k], xb[k], what + "[" + std::to_string(k) + "]");
}

TEST(OptSharedTrajectory, the_loop_runs_once_per_point) {
  Module m = load(2);
  for (const char* fn : {"horner", "horner_scalar", "horner_squared"}) {
    auto text = m.print_derivative(fn, DerivativeKind::ValueAndGrad);
    ASSERT_TRUE(text.ok()) << text.message();
    // One forward loop (saving, into the table) and one reverse pass per gather.
    EXPECT_EQ(count(text.value(), " saving "), 1) << fn << "\n" << text.value();
    EXPECT_EQ(count(text.value(), "let trajectory = for "), 1) << fn << "\n" << text.value();
  }
  // The trip count of tri's loop varies with the point: nothing is shared.
  auto text = m.print_derivative("tri", DerivativeKind::ValueAndGrad);
  ASSERT_TRUE(text.ok()) << text.message();
  EXPECT_EQ(count(text.value(), "trajectory"), 0) << text.value();
}

TEST(OptSharedTrajectory, horner_matches_its_closed_form) {
  Module m = load(2);
  const std::vector<double> x = {0.5, -1.5, 2.0};
  const std::vector<double> c = {0.25, -1.0, 3.0, 0.5};
  auto r = m.value_and_grad("horner", {vec(x), vec(c)});
  ASSERT_TRUE(r.ok()) << r.message();
  double value = 0;
  std::vector<double> dc(c.size(), 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    double p = 0;
    double dp = 0;
    // The last coefficient is masked: it adds nothing and has no derivative.
    for (size_t t = 0; t + 1 < c.size(); ++t) {
      const double power = std::pow(x[i], static_cast<double>(c.size() - 1 - t));
      p += c[t] * power;
      dc[t] += power;
      dp += c[t] * static_cast<double>(c.size() - 1 - t) *
            std::pow(x[i], static_cast<double>(c.size() - 2 - t));
    }
    value += p;
    expect_close(r.value().grad[0].value.f64_data()[i], dp, "d/dx[" + std::to_string(i) + "]");
  }
  expect_close(r.value().value.as_f64(), value, "value");
  for (size_t t = 0; t < c.size(); ++t) {
    expect_close(r.value().grad[1].value.f64_data()[t], dc[t], "d/dc[" + std::to_string(t) + "]");
  }
}

TEST(OptSharedTrajectory, values_and_gradients_agree_with_opt_zero) {
  Module m0 = load(0);
  Module m2 = load(2);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::nan("");
  const std::vector<std::vector<double>> xs = {
      {}, {0.7}, {0.5, -1.5, 2.0, 0.0, 1.0}, {inf, 1.0}, {nan, -2.0, 0.5}};
  const std::vector<std::vector<double>> cs = {{}, {2.0}, {0.25, -1.0, 3.0, 0.5}};
  auto compare = [&](const std::string& fn, const std::vector<Value>& args,
                     const std::string& where) {
    auto a = m0.value_and_grad(fn, args);
    auto b = m2.value_and_grad(fn, args);
    ASSERT_EQ(a.ok(), b.ok()) << where << (a.ok() ? b.message() : a.message());
    if (!a.ok()) {
      EXPECT_EQ(a.message(), b.message()) << where;
      return;
    }
    expect_close(a.value().value.as_f64(), b.value().value.as_f64(), where + " value");
    ASSERT_EQ(a.value().grad.size(), b.value().grad.size()) << where;
    for (size_t k = 0; k < a.value().grad.size(); ++k) {
      if (a.value().grad[k].value.shape().empty()) {
        expect_close(a.value().grad[k].value.as_f64(), b.value().grad[k].value.as_f64(),
                     where + " grad " + std::to_string(k));
      } else {
        expect_same(a.value().grad[k].value, b.value().grad[k].value,
                    where + " grad " + std::to_string(k));
      }
    }
  };
  for (size_t xi = 0; xi < xs.size(); ++xi) {
    const std::string at = " at x #" + std::to_string(xi);
    for (size_t ci = 0; ci < cs.size(); ++ci) {
      compare("horner", {vec(xs[xi]), vec(cs[ci])}, "horner" + at + ", c #" + std::to_string(ci));
    }
    compare("horner_scalar", {vec(xs[xi]), Value::f64(0.3)}, "horner_scalar" + at);
    compare("horner_squared", {vec(xs[xi]), vec({0.5, -1.0, 0.25, 2.0, -0.5, 1.0})},
            "horner_squared" + at);
    compare("tri", {vec(xs[xi])}, "tri" + at);
  }
}

// The gradient costs fewer operations than four times the function: the loop's forward sweep
// runs once per point, not once for the value and once per gather.
TEST(OptSharedTrajectory, gradient_within_four_times_the_function) {
  Module m = load(2);
  std::vector<double> x;
  x.reserve(40);
  for (int i = 0; i < 40; ++i) x.push_back(0.05 * i - 1.0);
  const std::vector<Value> args = {vec(x), vec({0.25, -1.0, 3.0, 0.5, 1.5, -2.0})};
  auto f = m.cost("horner", args);
  auto vg = m.derivative_cost("horner", DerivativeKind::ValueAndGrad, args);
  ASSERT_TRUE(f.ok()) << f.message();
  ASSERT_TRUE(vg.ok()) << vg.message();
  EXPECT_LE(vg.value().ops, 4 * f.value().ops) << f.value().ops << " " << vg.value().ops;
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
