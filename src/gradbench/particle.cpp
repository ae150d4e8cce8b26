// GradBench's `particle`: rr, rf, fr and ff, the argmin w of a charged particle's miss distance
// by gradient descent through an Euler-integrated trajectory, in the four combinations of
// outer and inner AD modes. The input is {w} (the starting w); the output the final w.
#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {

Eval particle_eval() {
  Eval e;
  e.name = "particle";
  e.functions = {{"rr", "rr"}, {"rf", "rf"}, {"fr", "fr"}, {"ff", "ff"}};
  e.arguments =
      [](const std::string&,
         const nlohmann::json& input) -> cotangent::Result<std::vector<cotangent::Value>> {
    auto w = real(input, "w");
    if (!w) return w.errors();
    return std::vector<cotangent::Value>{cotangent::Value::f64(w.value())};
  };
  return e;
}

}  // namespace cot::gradbench
