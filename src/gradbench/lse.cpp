// GradBench's `lse`: `primal` and `gradient` of log-sum-exp; the input is {x[n]}.
#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {

Eval lse_eval() {
  Eval e;
  e.name = "lse";
  e.functions = {{"primal", "primal"}, {"gradient", "gradient"}};
  e.arguments =
      [](const std::string&,
         const nlohmann::json& input) -> cotangent::Result<std::vector<cotangent::Value>> {
    auto x = real_tensor(input, "x", 1);
    if (!x) return x.errors();
    return std::vector<cotangent::Value>{x.value()};
  };
  return e;
}

}  // namespace cot::gradbench
