// GradBench's ode through the tool: `primal` against a direct C++ Runge-Kutta integration
// (ρ ≤ 1e-12) and, for n ≤ 4, against the exact solution y_i(2) = x_0 ⋯ x_i 2^(i+1) / (i+1)!
// (the solution is then a polynomial of degree ≤ 4 in t, which the fourth-order scheme
// integrates exactly; ρ ≤ 1e-12). `gradient` against the exact solution's gradient
// y_{n-1}(2) / x_i for n ≤ 4 (ρ ≤ 1e-12), against five-point central differences of the C++
// integration, and against forward mode (`jvp` of the last value along directions, ρ ≤ 1e-12).
//
// The last value is a polynomial in each x_i, so the five-point difference
// (−f(x+2h) + 8f(x+h) − 8f(x−h) + f(x−2h)) / 12h has truncation error h⁴ f⁽⁵⁾ / 30 and rounding
// error about ε|f|/h. With h = 1e-3, values and derivatives of order 1 (the inputs are scaled so
// that y stays of order 1) and ε ≈ 1e-16, both are below 1e-11, so ρ ≤ 1e-8 holds.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "eval_harness.h"

namespace cot::gradbench::testing {
namespace COTANGENT_TEST_UNIT {

using nlohmann::json;

// y' = f(y) with f(y)_0 = x_0, f(y)_i = x_i y_{i-1}.
std::vector<double> derivative(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> z(x.size());
  for (size_t i = 0; i < x.size(); ++i) z[i] = i == 0 ? x[0] : x[i] * y[i - 1];
  return z;
}

// y(2) from y(0) = 0 by s classical Runge-Kutta steps.
std::vector<double> integrate(const std::vector<double>& x, int s) {
  const size_t n = x.size();
  const double h = 2.0 / s;
  std::vector<double> y(n, 0.0);
  auto along = [&](const std::vector<double>& k, double c) {
    std::vector<double> p(n);
    for (size_t i = 0; i < n; ++i) p[i] = y[i] + c * k[i];
    return p;
  };
  for (int step = 0; step < s; ++step) {
    const std::vector<double> k1 = derivative(x, y);
    const std::vector<double> k2 = derivative(x, along(k1, h / 2));
    const std::vector<double> k3 = derivative(x, along(k2, h / 2));
    const std::vector<double> k4 = derivative(x, along(k3, h));
    for (size_t i = 0; i < n; ++i) y[i] += h * (k1[i] + 2 * k2[i] + 2 * k3[i] + k4[i]) / 6;
  }
  return y;
}

std::vector<double> five_point_gradient(const std::vector<double>& x, int s, double h) {
  auto last = [s](std::vector<double> v) { return integrate(v, s).back(); };
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    auto at = [&](double d) {
      std::vector<double> v = x;
      v[i] += d;
      return last(v);
    };
    g[i] = (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h);
  }
  return g;
}

// x_i = (i + 1) / 2 · u_i with u_i in [0.5, 1.5): then x_0 ⋯ x_i 2^(i+1) / (i+1)! is the product
// of the u's, so the solution stays of order 1 however long x is.
std::vector<double> scaled_input(int n, uint64_t seed) {
  std::vector<double> x = Uniform(seed).vector(n);
  for (int i = 0; i < n; ++i) x[i] = (i + 1) / 2.0 * (0.5 + x[i]);
  return x;
}

json input(const std::vector<double>& x, int s) {
  return {{"x", x}, {"s", s}, {"min_runs", 1}, {"min_seconds", 0}};
}

TEST(GradbenchOde, PrimalAndGradientMatchReferences) {
  Tool tool = eval_tool();
  // n = 1000, s = 10 is one of GradBench's workloads; y's last values underflow to 0 there, so
  // only the primal is compared.
  const std::vector<std::pair<int, int>> sizes{{4, 1}, {4, 4}, {12, 10}, {1000, 10}};
  for (auto [n, s] : sizes) {
    SCOPED_TRACE("n=" + std::to_string(n) + " s=" + std::to_string(s));
    const std::vector<double> x = scaled_input(n, 31 + n);
    expect_json_near(json(integrate(x, s)), run_eval(tool, "ode", "primal", input(x, s)), 1e-12);
    if (n > 12) continue;
    const json gradient = run_eval(tool, "ode", "gradient", input(x, s));
    expect_json_near(json(five_point_gradient(x, s, 1e-3)), gradient, 1e-8);
  }
}

// For n ≤ 4 the scheme is exact: the values and the gradient of the last one are known.
TEST(GradbenchOde, SmallSystemsAreIntegratedExactly) {
  Tool tool = eval_tool();
  for (int n : {1, 4}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const std::vector<double> x = scaled_input(n, 7 + n);
    std::vector<double> exact(n);
    double product = 1.0, factorial = 1.0;
    for (int i = 0; i < n; ++i) {
      product *= x[i];
      factorial *= i + 1;
      exact[i] = product * std::pow(2.0, i + 1) / factorial;
    }
    std::vector<double> gradient(n);
    for (int i = 0; i < n; ++i) gradient[i] = exact[n - 1] / x[i];
    for (int s : {1, 4}) {
      expect_json_near(json(exact), run_eval(tool, "ode", "primal", input(x, s)), 1e-12);
      expect_json_near(json(gradient), run_eval(tool, "ode", "gradient", input(x, s)), 1e-12);
    }
  }
}

// The second route: forward mode. jvp(last, x) along a direction v gives ⟨∇y_{n-1}, v⟩ (the
// reference interpreter), which must agree with the reverse-mode gradient.
TEST(GradbenchOde, GradientMatchesForwardMode) {
  std::ifstream file(std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench/ode.cot");
  std::stringstream source;
  source << file.rdbuf();
  source << R"(
def directional(x: f64[n], s: i64, v: f64[n]) -> f64 {
  let (_, tangent) = jvp(last, x)(x, s, v)
  tangent
}
)";
  auto module = cotangent::Module::from_string(source.str(), "ode_jvp.cot");
  ASSERT_TRUE(module.ok()) << module.message();
  auto tensor = [](const std::vector<double>& v) {
    cotangent::Value t =
        cotangent::Value::zeros(cotangent::DType::F64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.f64_mut().begin());
    return t;
  };
  const int n = 20, s = 7;
  const std::vector<double> x = scaled_input(n, 3);
  const cotangent::Value steps = cotangent::Value::i64(s);
  auto gradient = module.value().evaluate("gradient", {tensor(x), steps});
  ASSERT_TRUE(gradient.ok()) << gradient.message();
  const auto g = gradient.value().f64_data();
  Uniform u(5);
  for (int trial = 0; trial < 3; ++trial) {
    const std::vector<double> v = u.vector(n);
    auto tangent = module.value().evaluate("directional", {tensor(x), steps, tensor(v)});
    ASSERT_TRUE(tangent.ok()) << tangent.message();
    double inner = 0;
    for (int i = 0; i < n; ++i) inner += g[i] * v[i];
    EXPECT_LE(rho(inner, tangent.value().as_f64()), 1e-12) << "direction " << trial;
  }
}

TEST(GradbenchOde, MalformedInputIsAFailureThatSaysWhere) {
  Tool tool = eval_tool();
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "ode"}});
  const json r = tool.respond({{"id", 1},
                               {"kind", "evaluate"},
                               {"module", "ode"},
                               {"function", "gradient"},
                               {"input", {{"x", {1.0, 2.0}}, {"s", 1.5}}}});
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find("input.s: expected an integer"),
            std::string::npos)
      << r.dump();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench::testing
