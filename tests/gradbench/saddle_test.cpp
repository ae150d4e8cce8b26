// GradBench's saddle through the tool: rr, rf, fr and ff from (1, 1) against the published
// point (each coordinate within 1e-10 relative), and from other starts against nested descents
// on a C++ reference of f (ρ ≤ 1e-8). The program's two derivatives are checked on their own,
// at the reference semantics (--opt 0, interpreter): the inner one, the gradient in y of −f in
// both modes, and the outer one, the gradient in x of max_y f (through the inner descent) in
// all four mode pairs, each against central differences of the C++ reference (ρ ≤ 1e-8).
//
// f is quadratic, so its central differences have no truncation error, and the inner descent's
// y does not depend on x: the differences of the outer objective are those of x1² + x2² plus
// the rounding of f's value (about 1e-16) over h = 1e-6, below 1e-9.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cotangent/cotangent.h"
#include "eval_harness.h"

namespace cot::gradbench::testing {
namespace COTANGENT_TEST_UNIT {

using nlohmann::json;
using Point = std::array<double, 2>;

// Every coordinate of the saddle point GradBench's eval expects from (1, 1).
constexpr double kPublished = 8.246324826140356e-06;

double f(const Point& x, const Point& y) {
  return (x[0] * x[0] + x[1] * x[1]) - (y[0] * y[0] + y[1] * y[1]);
}

// The gradient of `loss` at p by central differences.
Point central_gradient(const std::function<double(const Point&)>& loss, Point p, double h = 1e-6) {
  Point g;
  for (int k = 0; k < 2; ++k) {
    Point up = p, down = p;
    up[k] += h;
    down[k] -= h;
    g[k] = (loss(up) - loss(down)) / (2 * h);
  }
  return g;
}

// GradBench's gradient descent (step 1e-5, doubled after 10 improving steps, halved on a step
// that does not improve; stops at a gradient or step of norm at most 1e-5), with gradients by
// central differences.
Point descend(const std::function<double(const Point&)>& loss, Point p) {
  double fp = loss(p), eta = 1e-5;
  Point g = central_gradient(loss, p);
  int i = 0;
  for (int iterations = 0; iterations < 1000000; ++iterations) {
    if (std::hypot(g[0], g[1]) <= 1e-5) return p;
    if (i == 10) {
      eta *= 2;
      i = 0;
      continue;
    }
    const Point q = {p[0] - eta * g[0], p[1] - eta * g[1]};
    if (std::hypot(p[0] - q[0], p[1] - q[1]) <= 1e-5) return p;
    const double fq = loss(q);
    if (fq < fp) {
      p = q;
      fp = fq;
      g = central_gradient(loss, p);
      ++i;
    } else {
      eta /= 2;
      i = 0;
    }
  }
  return {NAN, NAN};
}

Point argmax_y(const Point& x, const Point& start) {
  return descend([&](const Point& y) { return -f(x, y); }, start);
}

double max_f(const Point& x, const Point& start) {
  return f(x, argmax_y(x, start));
}

// The reference saddle point (x1, x2, y1, y2) from `start`.
std::vector<double> reference_saddle(const Point& start) {
  const Point x = descend([&](const Point& p) { return max_f(p, start); }, start);
  const Point y = argmax_y(x, start);
  return {x[0], x[1], y[0], y[1]};
}

const std::vector<std::string> kModes = {"rr", "rf", "fr", "ff"};

// The saddle point of each mode pair from `start`, the module defined already (defining it
// again would load it again, which takes seconds).
std::vector<std::vector<double>> tool_saddles(Tool& tool, const Point& start) {
  std::vector<std::vector<double>> out;
  for (const std::string& mode : kModes) {
    const json r =
        tool.respond({{"id", 1},
                      {"kind", "evaluate"},
                      {"module", "saddle"},
                      {"function", mode},
                      {"input", {{"start", start}, {"min_runs", 1}, {"min_seconds", 0}}}});
    EXPECT_TRUE(r.value("success", false)) << mode << ": " << r.dump();
    const json output = r.value("output", json::array());
    EXPECT_TRUE(output.is_array() && output.size() == 4) << mode << ": " << output.dump();
    out.push_back(output.size() == 4 ? output.get<std::vector<double>>()
                                     : std::vector<double>(4, NAN));
  }
  return out;
}

TEST(GradbenchSaddle, EveryModeReachesThePublishedPointAndMatchesAReference) {
  Tool tool = eval_tool();
  const json defined = tool.respond({{"id", 0}, {"kind", "define"}, {"module", "saddle"}});
  ASSERT_TRUE(defined.value("success", false)) << defined.dump();
  const std::vector<std::vector<double>> published = tool_saddles(tool, {1.0, 1.0});
  for (size_t k = 0; k < kModes.size(); ++k) {
    for (size_t c = 0; c < 4; ++c) {
      EXPECT_LE(std::abs(published[k][c] - kPublished), 1e-10 * kPublished)
          << kModes[k] << "[" << c << "]: " << published[k][c];
    }
  }
  for (Point start : {Point{0.5, -1.5}, Point{-2.0, 0.25}}) {
    const std::vector<double> expected = reference_saddle(start);
    const std::vector<std::vector<double>> got = tool_saddles(tool, start);
    for (size_t k = 0; k < kModes.size(); ++k) {
      for (size_t c = 0; c < 4; ++c) {
        EXPECT_LE(rho(expected[c], got[k][c]), 1e-8)
            << kModes[k] << "[" << c << "] from (" << start[0] << ", " << start[1] << ")";
      }
    }
  }
  // A start that is not a point of R² is a failure that says where.
  const json r = tool.respond({{"id", 2},
                               {"kind", "evaluate"},
                               {"module", "saddle"},
                               {"function", "rr"},
                               {"input", {{"start", {1.0, 1.0, 1.0}}}}});
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find("input.start: expected a point of 2 numbers"),
            std::string::npos)
      << r.dump();
}

// The eval's program at the reference semantics (no optimizer), run by the interpreter.
cotangent::Module reference_module() {
  cotangent::LoadOptions options;
  options.opt_level = 0;
  auto m = cotangent::Module::from_file(
      std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench/saddle.cot", options);
  EXPECT_TRUE(m.ok()) << m.message();
  return std::move(m.value());
}

std::vector<cotangent::Value> reals(std::initializer_list<double> xs) {
  std::vector<cotangent::Value> v;
  for (double x : xs) v.push_back(cotangent::Value::f64(x));
  return v;
}

TEST(GradbenchSaddle, InnerSlopeMatchesCentralDifferences) {
  const cotangent::Module m = reference_module();
  for (auto [x, y] : {std::pair{Point{1.0, 1.0}, Point{1.0, 1.0}},
                      std::pair{Point{0.3, -0.7}, Point{-1.25, 2.0}}}) {
    const Point fd = central_gradient([&](const Point& q) { return -f(x, q); }, y);
    for (bool reverse : {true, false}) {
      std::vector<cotangent::Value> args = reals({x[0], x[1], y[0], y[1]});
      args.push_back(cotangent::Value::boolean(reverse));
      auto r = m.evaluate("inner_slope", args);
      ASSERT_TRUE(r.ok()) << r.message();
      for (int k = 0; k < 2; ++k) {
        EXPECT_LE(rho(fd[k], r.value().elems().at(k).as_f64()), 1e-8)
            << (reverse ? "reverse" : "forward") << ", component " << k;
      }
    }
  }
}

TEST(GradbenchSaddle, OuterSlopeMatchesCentralDifferences) {
  const cotangent::Module m = reference_module();
  const Point start = {1.0, 1.0};
  for (Point x : {Point{1.0, 1.0}, Point{0.3, -0.7}}) {
    const Point fd = central_gradient([&](const Point& p) { return max_f(p, start); }, x);
    for (bool outer_reverse : {true, false}) {
      for (bool inner_reverse : {true, false}) {
        std::vector<cotangent::Value> args = reals({x[0], x[1], start[0], start[1]});
        args.push_back(cotangent::Value::boolean(outer_reverse));
        args.push_back(cotangent::Value::boolean(inner_reverse));
        auto r = m.evaluate("outer_slope", args);
        ASSERT_TRUE(r.ok()) << r.message();
        for (int k = 0; k < 2; ++k) {
          EXPECT_LE(rho(fd[k], r.value().elems().at(k).as_f64()), 1e-8)
              << "outer " << (outer_reverse ? "reverse" : "forward") << ", inner "
              << (inner_reverse ? "reverse" : "forward") << ", component " << k;
        }
      }
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench::testing
