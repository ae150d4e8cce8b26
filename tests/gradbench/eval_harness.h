// What every eval's test needs: the tool run as GradBench runs it (define, then evaluate one of
// the eval's functions on a JSON input) and GradBench's comparison of JSON outputs with the
// project's measure ρ(x, y) = |x − y| / max(1, |x| + |y|).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gradbench/tool.h"

namespace cot::gradbench::testing {

inline double rho(double x, double y) {
  return std::abs(x - y) / std::max(1.0, std::abs(x) + std::abs(y));
}

// The tool on the programs of examples/gradbench, single-threaded as GradBench's comparisons.
inline Tool eval_tool() {
  ToolOptions o;
  o.dir = std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench";
  return Tool(o);
}

// The tool's response to the evaluate message `id` of `function` on `input`.
inline nlohmann::json evaluate_message(Tool& tool, int id, const std::string& module,
                                       const std::string& function, const nlohmann::json& input) {
  return tool.respond({{"id", id},
                       {"kind", "evaluate"},
                       {"module", module},
                       {"function", function},
                       {"input", input}});
}

// The runs of an evaluate write into one result (the tool allocates it while preparing): the
// output of three runs must be that of one, whatever the code leaves in its destination.
inline void expect_runs_repeat(Tool& tool, const std::string& module, const std::string& function,
                               const nlohmann::json& input, const nlohmann::json& once) {
  if (!input.is_object() || !once.value("success", false)) return;
  nlohmann::json thrice_input = input;
  thrice_input["min_runs"] = 3;
  thrice_input["min_seconds"] = 0;
  const nlohmann::json thrice = evaluate_message(tool, 2, module, function, thrice_input);
  ASSERT_TRUE(thrice.value("success", false)) << thrice.dump().substr(0, 2000);
  EXPECT_EQ(thrice.at("timings").size(), 4u);  // prepare, then three runs
  EXPECT_EQ(thrice.at("output"), once.at("output")) << module << "." << function << ": three runs";
}

// Defines `module` and evaluates `function` on `input` once; the output, or null after a test
// failure that shows the response.
inline nlohmann::json run_eval(Tool& tool, const std::string& module, const std::string& function,
                               const nlohmann::json& input) {
  const nlohmann::json defined = tool.respond({{"id", 0}, {"kind", "define"}, {"module", module}});
  EXPECT_TRUE(defined.value("success", false)) << defined.dump();
  const nlohmann::json r = evaluate_message(tool, 1, module, function, input);
  EXPECT_TRUE(r.value("success", false)) << r.dump().substr(0, 2000);
  EXPECT_EQ(r.value("id", -1), 1);
  expect_runs_repeat(tool, module, function, input, r);
  return r.value("output", nlohmann::json(nullptr));
}

// A test suite sharing one tool with `kModule` defined once: loading an eval's program derives
// and optimizes its derivatives, the slow part of these tests (run_eval defines it per call).
template <const char* kModule>
class DefinedEval : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    tool_ = std::make_unique<Tool>(eval_tool());
    const nlohmann::json defined =
        tool_->respond({{"id", 0}, {"kind", "define"}, {"module", kModule}});
    ASSERT_TRUE(defined.value("success", false)) << defined.dump();
  }
  static void TearDownTestSuite() { tool_.reset(); }

  // The tool's response to evaluating `function` on `input`.
  static nlohmann::json respond(const std::string& function, const nlohmann::json& input) {
    return evaluate_message(*tool_, 1, kModule, function, input);
  }
  // The output, or null after a test failure that shows the response.
  static nlohmann::json evaluate(const std::string& function, const nlohmann::json& input) {
    const nlohmann::json r = respond(function, input);
    EXPECT_TRUE(r.value("success", false)) << r.dump().substr(0, 2000);
    expect_runs_repeat(*tool_, kModule, function, input, r);
    return r.value("output", nlohmann::json(nullptr));
  }

  static inline std::unique_ptr<Tool> tool_;
};

// GradBench's compare_json_objects with the bound `tol`: the same structure (ints and reals
// interchangeable), every real within ρ ≤ tol. Failures name the path.
inline void expect_json_near(const nlohmann::json& expected, const nlohmann::json& actual,
                             double tol, const std::string& path = "output") {
  if (expected.is_number() && actual.is_number()) {
    const double x = expected.get<double>();
    const double y = actual.get<double>();
    EXPECT_LE(rho(x, y), tol) << path << ": expected " << x << ", got " << y;
    return;
  }
  ASSERT_EQ(expected.type_name(), std::string(actual.type_name())) << path;
  if (expected.is_array()) {
    ASSERT_EQ(expected.size(), actual.size()) << path;
    for (size_t i = 0; i < expected.size(); ++i) {
      expect_json_near(expected[i], actual[i], tol, path + "[" + std::to_string(i) + "]");
    }
  } else if (expected.is_object()) {
    ASSERT_EQ(expected.size(), actual.size()) << path;
    for (const auto& [k, v] : expected.items()) {
      ASSERT_TRUE(actual.contains(k)) << path << " lacks " << k;
      expect_json_near(v, actual.at(k), tol, path + "." + k);
    }
  } else {
    EXPECT_EQ(expected, actual) << path;
  }
}

// A deterministic uniform [0, 1) stream (the tests' inputs; not GradBench's numpy streams).
class Uniform {
 public:
  explicit Uniform(uint64_t seed) : s_(seed * 0x9E3779B97F4A7C15ULL + 1) {}
  double operator()() {
    s_ ^= s_ << 13;
    s_ ^= s_ >> 7;
    s_ ^= s_ << 17;
    return static_cast<double>(s_ >> 11) * 0x1.0p-53;
  }
  std::vector<double> vector(size_t n) {
    std::vector<double> v(n);
    for (double& x : v) x = (*this)();
    return v;
  }

 private:
  uint64_t s_;
};

// Central differences of a scalar function of a vector, at step h, in the real type T of the
// vector (long double where rounding at double precision would exceed the tolerance).
template <class T = double, class F>
std::vector<double> central_differences(F&& f, std::vector<T> x, T h = T(1e-6)) {
  std::vector<double> g(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const T xi = x[i];
    x[i] = xi + h;
    const T up = f(x);
    x[i] = xi - h;
    const T down = f(x);
    x[i] = xi;
    g[i] = static_cast<double>((up - down) / (2 * h));
  }
  return g;
}

}  // namespace cot::gradbench::testing
