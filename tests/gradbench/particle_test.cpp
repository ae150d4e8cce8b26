// GradBench's particle through the tool: rr, rf, fr and ff from w = 0 against the published
// final w (ρ ≤ 1e-10), and from other starts against a descent on a C++ reference of the
// trajectory (ρ ≤ 1e-8). The program's two derivatives are checked on their own, at the
// reference semantics (--opt 0, interpreter): the inner one, the force −∇ₓp in both modes,
// against central differences of a C++ potential (ρ ≤ 1e-8), and the outer one, d miss / dw in
// all four mode pairs, against central differences of the C++ trajectory (ρ ≤ 1e-7).
//
// Tolerances of the central differences (h = 1e-6): the potential is smooth and of order 0.1
// near the path, so truncation (h² p''' / 6) and rounding (ε p / h) are both below 1e-10. The
// miss distance goes through about 350 Euler steps whose rounding (about 1e-14 relative)
// divided by h is about 1e-8, its truncation h² miss''' / 6 below 1e-9; h stays far below the
// distance in w at which the number of steps changes, at the points tested.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "cotangent/cotangent.h"
#include "eval_harness.h"

namespace cot::gradbench::testing {
namespace COTANGENT_TEST_UNIT {

using nlohmann::json;

// The final w that GradBench's particle eval expects from w = 0.
constexpr double kPublishedW = 0.2071918746486116;

// The potential of the fixed unit charges at (10, 10 - w) and (10, 0).
double potential(double x0, double x1, double w) {
  return 1 / std::sqrt((x0 - 10) * (x0 - 10) + (x1 - (10 - w)) * (x1 - (10 - w))) +
         1 / std::sqrt((x0 - 10) * (x0 - 10) + x1 * x1);
}

// x0(t_f)² of the path from (0, 8) with velocity (0.75, 0): Euler steps of 0.1 under the
// Coulomb force Σ (x − c) / |x − c|³ while the next step stays above the x-axis, then the
// linear interpolation to the axis.
double miss(double w) {
  const double dt = 0.1;
  const double cx[2] = {10, 10}, cy[2] = {10 - w, 0};
  double x0 = 0, x1 = 8, v0 = 0.75, v1 = 0;
  for (int steps = 0; x1 + dt * v1 > 0; ++steps) {
    if (steps > 100000) return NAN;  // the particle never comes down
    double a0 = 0, a1 = 0;
    for (int c = 0; c < 2; ++c) {
      const double d0 = x0 - cx[c], d1 = x1 - cy[c];
      const double r = std::sqrt(d0 * d0 + d1 * d1);
      a0 += d0 / (r * r * r);
      a1 += d1 / (r * r * r);
    }
    x0 += dt * v0;
    x1 += dt * v1;
    v0 += dt * a0;
    v1 += dt * a1;
  }
  const double t_f = -x1 / v1;
  const double x = x0 + t_f * v0;
  return x * x;
}

double central_difference(const std::function<double(double)>& f, double x, double h = 1e-6) {
  return (f(x + h) - f(x - h)) / (2 * h);
}

// GradBench's gradient descent (step 1e-5, doubled after 10 improving steps, halved on a step
// that does not improve; stops at a gradient or step of at most 1e-5), with the derivative of
// the objective by central differences.
double descend(const std::function<double(double)>& f, double w) {
  double fw = f(w), gw = central_difference(f, w), eta = 1e-5;
  int i = 0;
  for (int iterations = 0; iterations < 100000; ++iterations) {
    if (std::abs(gw) <= 1e-5) return w;
    if (i == 10) {
      eta *= 2;
      i = 0;
      continue;
    }
    const double w1 = w - eta * gw;
    if (std::abs(w - w1) <= 1e-5) return w;
    const double fw1 = f(w1);
    if (fw1 < fw) {
      w = w1;
      fw = fw1;
      gw = central_difference(f, w);
      ++i;
    } else {
      eta /= 2;
      i = 0;
    }
  }
  return NAN;
}

const std::vector<std::string> kModes = {"rr", "rf", "fr", "ff"};

// The tool with the module defined (defining it again would load it again).
Tool particle_tool() {
  Tool tool = eval_tool();
  const json defined = tool.respond({{"id", 0}, {"kind", "define"}, {"module", "particle"}});
  EXPECT_TRUE(defined.value("success", false)) << defined.dump();
  return tool;
}

// The final w of each mode pair from `w0`.
std::vector<double> tool_descents(Tool& tool, double w0) {
  std::vector<double> out;
  for (const std::string& mode : kModes) {
    const json r = tool.respond({{"id", 1},
                                 {"kind", "evaluate"},
                                 {"module", "particle"},
                                 {"function", mode},
                                 {"input", {{"w", w0}, {"min_runs", 1}, {"min_seconds", 0}}}});
    EXPECT_TRUE(r.value("success", false)) << mode << ": " << r.dump();
    out.push_back(r.value("output", json(NAN)).get<double>());
  }
  return out;
}

TEST(GradbenchParticle, EveryModeReachesThePublishedWAndMatchesAReferenceDescent) {
  Tool tool = particle_tool();
  const std::vector<double> published = tool_descents(tool, 0.0);
  for (size_t k = 0; k < kModes.size(); ++k) {
    EXPECT_LE(rho(kPublishedW, published[k]), 1e-10) << kModes[k] << ": " << published[k];
  }
  for (double w0 : {-0.1, 0.3}) {
    const double expected = descend(miss, w0);
    ASSERT_TRUE(std::isfinite(expected)) << "w0 = " << w0;
    const std::vector<double> w = tool_descents(tool, w0);
    for (size_t k = 0; k < kModes.size(); ++k) {
      EXPECT_LE(rho(expected, w[k]), 1e-8) << kModes[k] << " from w0 = " << w0;
    }
  }
  // An input that is not a number is a failure that says where.
  const json r = tool.respond({{"id", 2},
                               {"kind", "evaluate"},
                               {"module", "particle"},
                               {"function", "rr"},
                               {"input", {{"w", "zero"}}}});
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find("input.w"), std::string::npos) << r.dump();
}

// The eval's program at the reference semantics (no optimizer), run by the interpreter.
cotangent::Module reference_module() {
  cotangent::LoadOptions options;
  options.opt_level = 0;
  auto m = cotangent::Module::from_file(
      std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench/particle.cot", options);
  EXPECT_TRUE(m.ok()) << m.message();
  return std::move(m.value());
}

TEST(GradbenchParticle, ForceMatchesCentralDifferencesOfThePotential) {
  const cotangent::Module m = reference_module();
  using cotangent::Value;
  for (auto [x0, x1, w] : {std::tuple{0.0, 8.0, 0.0}, std::tuple{3.5, 6.25, 0.2},
                           std::tuple{9.0, 1.5, -0.1}, std::tuple{12.0, 0.3, 0.5}}) {
    const double fd0 = -central_difference([&](double t) { return potential(t, x1, w); }, x0);
    const double fd1 = -central_difference([&](double t) { return potential(x0, t, w); }, x1);
    for (bool reverse : {true, false}) {
      auto r = m.evaluate("force",
                          {Value::f64(x0), Value::f64(x1), Value::f64(w), Value::boolean(reverse)});
      ASSERT_TRUE(r.ok()) << r.message();
      const std::string where = (reverse ? "reverse at (" : "forward at (") + std::to_string(x0) +
                                ", " + std::to_string(x1) + ")";
      EXPECT_LE(rho(fd0, r.value().elems().at(0).as_f64()), 1e-8) << where;
      EXPECT_LE(rho(fd1, r.value().elems().at(1).as_f64()), 1e-8) << where;
    }
  }
}

TEST(GradbenchParticle, SlopeMatchesCentralDifferencesOfTheTrajectory) {
  const cotangent::Module m = reference_module();
  using cotangent::Value;
  for (double w : {-0.1, 0.0, kPublishedW, 0.3}) {
    const double fd = central_difference(miss, w);
    for (bool outer_reverse : {true, false}) {
      for (bool inner_reverse : {true, false}) {
        auto r = m.evaluate(
            "slope", {Value::f64(w), Value::boolean(outer_reverse), Value::boolean(inner_reverse)});
        ASSERT_TRUE(r.ok()) << r.message();
        EXPECT_LE(rho(fd, r.value().as_f64()), 1e-7)
            << "w = " << w << ", outer " << (outer_reverse ? "reverse" : "forward") << ", inner "
            << (inner_reverse ? "reverse" : "forward");
      }
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench::testing
