// GradBench's lse through the tool: the value against a direct C++ log-sum-exp (ρ ≤ 1e-12),
// the gradient against the softmax computed directly and against central differences.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "eval_harness.h"

namespace cot::gradbench::testing {
namespace COTANGENT_TEST_UNIT {

using nlohmann::json;

double lse(const std::vector<double>& x) {
  double mx = x[0];
  for (double v : x) mx = std::max(mx, v);
  double s = 0;
  for (double v : x) s += std::exp(v - mx);
  return mx + std::log(s);
}

TEST(GradbenchLse, PrimalAndGradientMatchReferences) {
  Tool tool = eval_tool();
  Uniform u(7);
  for (size_t n : {1, 2, 5, 2500}) {
    std::vector<double> x = u.vector(n);
    if (n == 5) x[3] = 800.0;  // exp(800) overflows unless the maximum is subtracted
    const json input = {{"x", x}, {"min_runs", 1}, {"min_seconds", 0}};
    const json primal = run_eval(tool, "lse", "primal", input);
    expect_json_near(lse(x), primal, 1e-12);
    const json gradient = run_eval(tool, "lse", "gradient", input);
    const double l = lse(x);
    std::vector<double> softmax;
    for (double v : x) softmax.push_back(std::exp(v - l));
    expect_json_near(json(softmax), gradient, 1e-12);
    if (n <= 5) expect_json_near(json(central_differences(lse, x)), gradient, 1e-8);
  }
}

TEST(GradbenchLse, MalformedInputIsAFailureThatSaysWhere) {
  Tool tool = eval_tool();
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "lse"}});
  const json r = tool.respond({{"id", 1},
                               {"kind", "evaluate"},
                               {"module", "lse"},
                               {"function", "gradient"},
                               {"input", {{"x", {1.0, "two", 3.0}}}}});
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find("input.x[1]: expected a number, found a string"),
            std::string::npos)
      << r.dump();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench::testing
