// GradBench's `llsq`: `primal` (the least-squares objective of a polynomial fit to sign(t) at n
// points of [-1, 1]) and `gradient` (with respect to the coefficients). The input is {x[m], n}.
#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {

Eval llsq_eval() {
  Eval e;
  e.name = "llsq";
  e.functions = {{"primal", "primal"}, {"gradient", "gradient"}};
  e.arguments =
      [](const std::string&,
         const nlohmann::json& input) -> cotangent::Result<std::vector<cotangent::Value>> {
    auto x = real_tensor(input, "x", 1);
    if (!x) return x.errors();
    auto n = bounded_count(input, "n");
    if (!n) return n.errors();
    return std::vector<cotangent::Value>{x.value(), cotangent::Value::i64(n.value())};
  };
  return e;
}

}  // namespace cot::gradbench
