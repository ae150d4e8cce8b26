// Readers that take a tangent whole along one chain of regions (two loops in a sum's body that
// both read x): reverse mode copies the chain once for both and adds their contributions
// (ad/transpose.cpp, region_contribution). Each copy runs the primal body and the loops' reverse
// passes again, and the copies of nested regions multiply (design.md §7.10): the gradient had
// one copy per loop. Checks the gradient against its closed form at every level on the
// interpreter and natively, and that the derivative has one copy of the sum's body.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ad/fd_harness.h"
#include "cotangent/cotangent.h"
#include "opt/opt_test_util.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {
namespace {

using adtest::f64_vector;
using adtest::kExactTol;
using adtest::real_elements;
using adtest::RealsNear;

const char* kSource = R"(
def f(x: f64[n], w: f64[m]) -> f64 {
  sum i. {
    let a = loop s = 0.0 for t < n { 0.5 * s + x[t] * w[i] }
    let b = loop s = 1.0 for t < n { s + sin(x[t] * w[i]) }
    a * b
  }
}
def g(x: f64[n], w: f64[m]) -> f64 {
  sum i. {
    let e = exp(w[i]) * cos(w[i])
    let a = loop s = 0.0 for t < n { 0.5 * s + x[t] * e }
    let b = loop s = 1.0 for t < n { s + sin(x[t] * e) }
    a * b
  }
}
)";

// a_i = sum_t 0.5^(n-1-t) x_t w_i and b_i = 1 + sum_t sin(x_t w_i), so
// df/dx_t = sum_i 0.5^(n-1-t) w_i b_i + a_i cos(x_t w_i) w_i.
std::vector<double> closed_form(const std::vector<double>& x, const std::vector<double>& w) {
  const size_t n = x.size();
  std::vector<double> g(n, 0.0);
  for (double wi : w) {
    double a = 0.0, b = 1.0;
    for (size_t t = 0; t < n; ++t) {
      a = 0.5 * a + x[t] * wi;
      b += std::sin(x[t] * wi);
    }
    for (size_t t = 0; t < n; ++t) {
      g[t] += std::pow(0.5, static_cast<double>(n - 1 - t)) * wi * b + a * std::cos(x[t] * wi) * wi;
    }
  }
  return g;
}

Module load(int opt) {
  LoadOptions o;
  o.opt_level = opt;
  auto m = Module::from_string(kSource, "whole_readers.cot", o);
  EXPECT_TRUE(m.ok()) << m.message();
  return std::move(m.value());
}

void expect_gradient(const Module& m, Backend backend, const std::string& where) {
  EvalOptions eval;
  eval.backend = backend;
  const std::vector<std::vector<double>> xs = {{}, {0.3}, {0.3, -1.2, 2.0, 0.7}};
  const std::vector<std::vector<double>> ws = {{}, {1.5}, {0.5, -0.25, 2.0}};
  for (const auto& x : xs) {
    for (const auto& w : ws) {
      auto r = m.value_and_grad("f", {f64_vector(x), f64_vector(w)}, {}, eval);
      ASSERT_TRUE(r.ok()) << where << ": " << r.message();
      EXPECT_TRUE(RealsNear(real_elements(r.value().grad[0].value), closed_form(x, w), kExactTol))
          << where << ": n = " << x.size() << ", m = " << w.size();
      // g is f at e = exp(w) cos(w) in place of w.
      std::vector<double> e;
      for (double wi : w) e.push_back(std::exp(wi) * std::cos(wi));
      auto rg = m.value_and_grad("g", {f64_vector(x), f64_vector(w)}, {"x"}, eval);
      ASSERT_TRUE(rg.ok()) << where << ": " << rg.message();
      EXPECT_TRUE(RealsNear(real_elements(rg.value().grad[0].value), closed_form(x, e), kExactTol))
          << where << ": g, n = " << x.size() << ", m = " << w.size();
    }
  }
}

TEST(AdWholeReaders, GradientAtEveryLevelOnTheInterpreter) {
  for (int opt : {0, 1, 2}) {
    expect_gradient(load(opt), Backend::Interpreter, "interpreter --opt " + std::to_string(opt));
  }
}

TEST(AdWholeReaders, GradientNatively) {
  expect_gradient(load(2), Backend::Native, "native --opt 2");
}

// The primal sum and, for each of x and w, one copy of it for both loops' contributions
// (before: one per loop, five sums in all).
TEST(AdWholeReaders, OneCopyOfTheChainForBothReaders) {
  Module m = load(0);
  auto text = m.print_derivative("f", DerivativeKind::Grad);
  ASSERT_TRUE(text.ok()) << text.message();
  EXPECT_EQ(cot::opt_test::count(text.value(), "sum i"), 3) << text.value();
}

// With respect to x alone, g's body is copied once for both loops, so its costly primal value
// e is recomputed in that copy, not stored in a table for it (shared residuals count the
// copies as the gathers make them): one generator, the gather's over x.
TEST(AdWholeReaders, ASingleCopyStoresNoResidualTable) {
  Module m = load(0);
  auto text = m.print_derivative("g", DerivativeKind::Grad, {"x"});
  ASSERT_TRUE(text.ok()) << text.message();
  EXPECT_EQ(cot::opt_test::count(text.value(), "= for i"), 1) << text.value();
}

}  // namespace
}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
