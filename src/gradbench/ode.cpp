// GradBench's `ode`: `primal` (the solution at t = 2 of y_0' = x_0, y_i' = x_i y_{i-1} by s
// Runge-Kutta steps, n values) and `gradient` (of its last value with respect to x, n values).
// The input is {x[n], s}.
#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {

Eval ode_eval() {
  Eval e;
  e.name = "ode";
  e.functions = {{"primal", "primal"}, {"gradient", "gradient"}};
  e.arguments =
      [](const std::string&,
         const nlohmann::json& input) -> cotangent::Result<std::vector<cotangent::Value>> {
    auto x = real_tensor(input, "x", 1);
    if (!x) return x.errors();
    auto s = bounded_count(input, "s");
    if (!s) return s.errors();
    return std::vector<cotangent::Value>{x.value(), cotangent::Value::i64(s.value())};
  };
  return e;
}

}  // namespace cot::gradbench
