// GradBench's llsq through the tool: `primal` against a direct C++ sum (ρ ≤ 1e-12); `gradient`
// against its closed form −Σ_i r_i t_i^j (ρ ≤ 1e-12), against central differences of the C++
// objective, and against forward mode (`jvp` of the objective along directions, ρ ≤ 1e-12).
//
// The objective is a quadratic in x, so central differences have no truncation error, only
// rounding: about ε|y|/h. With |y| ≤ 100 at these sizes, h = 1e-3 and ε ≈ 1e-16 that is below
// 1e-10, so ρ ≤ 1e-8 holds.
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

// The sample point t_i and the sign at it, as the eval defines them (sign(0) = 0).
double point(int i, int n) {
  return -1.0 + i * 2.0 / (n - 1);
}
double sign(double t) {
  return (t > 0) - (t < 0);
}

// s_i − Σ_j x_j t_i^j for every point.
std::vector<double> residuals(const std::vector<double>& x, int n) {
  std::vector<double> r(n);
  for (int i = 0; i < n; ++i) {
    const double t = point(i, n);
    r[i] = sign(t);
    for (size_t j = 0; j < x.size(); ++j) r[i] -= x[j] * std::pow(t, static_cast<double>(j));
  }
  return r;
}

double objective(const std::vector<double>& x, int n) {
  double y = 0;
  for (double r : residuals(x, n)) y += r * r;
  return y / 2;
}

std::vector<double> closed_form_gradient(const std::vector<double>& x, int n) {
  const std::vector<double> r = residuals(x, n);
  std::vector<double> g(x.size(), 0.0);
  for (int i = 0; i < n; ++i) {
    for (size_t j = 0; j < x.size(); ++j) {
      g[j] -= r[i] * std::pow(point(i, n), static_cast<double>(j));
    }
  }
  return g;
}

json input(const std::vector<double>& x, int n) {
  return {{"x", x}, {"n", n}, {"min_runs", 1}, {"min_seconds", 0}};
}

TEST(GradbenchLlsq, PrimalAndGradientMatchReferences) {
  Tool tool = eval_tool();
  Uniform u(17);
  // n odd puts a point at t = 0, where the sign is 0; n = 2 has only the ends; n = 0 no points;
  // m = 128, n = 1024 is one of GradBench's workloads.
  const std::vector<std::pair<int, int>> sizes{{5, 16}, {4, 7}, {3, 2}, {2, 0}, {128, 1024}};
  for (auto [m, n] : sizes) {
    SCOPED_TRACE("m=" + std::to_string(m) + " n=" + std::to_string(n));
    const std::vector<double> x = u.vector(m);
    expect_json_near(objective(x, n), run_eval(tool, "llsq", "primal", input(x, n)), 1e-12);
    const json gradient = run_eval(tool, "llsq", "gradient", input(x, n));
    expect_json_near(json(closed_form_gradient(x, n)), gradient, 1e-12);
    if (m <= 5) {
      auto f = [n](const std::vector<double>& v) { return objective(v, n); };
      expect_json_near(json(central_differences(f, x, 1e-3)), gradient, 1e-8);
    }
  }
}

// The second route: forward mode. jvp(primal, x) along a direction v gives ⟨∇y, v⟩ (the
// reference interpreter), which must agree with the reverse-mode gradient.
TEST(GradbenchLlsq, GradientMatchesForwardMode) {
  std::ifstream file(std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench/llsq.cot");
  std::stringstream source;
  source << file.rdbuf();
  source << R"(
def directional(x: f64[m], n: i64, v: f64[m]) -> f64 {
  let (_, tangent) = jvp(primal, x)(x, n, v)
  tangent
}
)";
  auto module = cotangent::Module::from_string(source.str(), "llsq_jvp.cot");
  ASSERT_TRUE(module.ok()) << module.message();
  Uniform u(23);
  const int m = 6, n = 33;
  auto tensor = [](const std::vector<double>& v) {
    cotangent::Value t =
        cotangent::Value::zeros(cotangent::DType::F64, {static_cast<int64_t>(v.size())});
    std::copy(v.begin(), v.end(), t.f64_mut().begin());
    return t;
  };
  const std::vector<double> x = u.vector(m);
  auto gradient = module.value().evaluate("gradient", {tensor(x), cotangent::Value::i64(n)});
  ASSERT_TRUE(gradient.ok()) << gradient.message();
  const auto g = gradient.value().f64_data();
  for (int trial = 0; trial < 3; ++trial) {
    const std::vector<double> v = u.vector(m);
    auto tangent =
        module.value().evaluate("directional", {tensor(x), cotangent::Value::i64(n), tensor(v)});
    ASSERT_TRUE(tangent.ok()) << tangent.message();
    double inner = 0;
    for (int j = 0; j < m; ++j) inner += g[j] * v[j];
    EXPECT_LE(rho(inner, tangent.value().as_f64()), 1e-12) << "direction " << trial;
  }
}

TEST(GradbenchLlsq, MalformedInputIsAFailureThatSaysWhere) {
  Tool tool = eval_tool();
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "llsq"}});
  auto error_for_n = [&](int64_t n) {
    const json r = tool.respond({{"id", 1},
                                 {"kind", "evaluate"},
                                 {"module", "llsq"},
                                 {"function", "primal"},
                                 {"input", {{"x", {1.0, 2.0}}, {"n", n}}}});
    EXPECT_FALSE(r.at("success").get<bool>()) << r.dump();
    return r.value("error", std::string());
  };
  EXPECT_NE(error_for_n(-3).find("input.n: expected a count from 0 to 268435456 (the tensor "
                                 "limit), found -3"),
            std::string::npos);
  // n is the length of the program's loop: 2^62 ran for ever (issue 25).
  EXPECT_NE(error_for_n(int64_t{1} << 62).find("input.n: expected a count from 0 to 268435456"),
            std::string::npos);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench::testing
