// GradBench's `hello`: square and double of a bare number (the protocol's smoke test).
#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {

Eval hello_eval() {
  Eval e;
  e.name = "hello";
  e.functions = {{"square", "square"}, {"double", "double"}};
  e.arguments =
      [](const std::string&,
         const nlohmann::json& input) -> cotangent::Result<std::vector<cotangent::Value>> {
    if (!input.is_number()) {
      return input_error("input", "expected a number",
                         "send a bare JSON number, as GradBench's hello eval does");
    }
    return std::vector<cotangent::Value>{cotangent::Value::f64(input.get<double>())};
  };
  e.output = [](const std::string&, const std::vector<cotangent::Value>&,
                const cotangent::Value& v) -> nlohmann::json { return v.as_f64(); };
  return e;
}

}  // namespace cot::gradbench
