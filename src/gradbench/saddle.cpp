// GradBench's `saddle`: rr, rf, fr and ff, the saddle point of (x1² + x2²) − (y1² + y2²) as a
// gradient-descent argmin over x of an inner gradient-descent max over y, in the four
// combinations of outer and inner AD modes. The input is {start[2]}; the output [x1, x2, y1, y2]
// (the program's 4-tuple, which to_json writes as that array).
#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {

Eval saddle_eval() {
  Eval e;
  e.name = "saddle";
  e.functions = {{"rr", "rr"}, {"rf", "rf"}, {"fr", "fr"}, {"ff", "ff"}};
  e.arguments =
      [](const std::string&,
         const nlohmann::json& input) -> cotangent::Result<std::vector<cotangent::Value>> {
    auto start = real_tensor(input, "start", 1);
    if (!start) return start.errors();
    if (start.value().shape()[0] != 2) {
      return input_error("input.start", "expected a point of 2 numbers, found " +
                                            std::to_string(start.value().shape()[0]));
    }
    return std::vector<cotangent::Value>{start.value()};
  };
  return e;
}

}  // namespace cot::gradbench
