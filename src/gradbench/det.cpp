// GradBench's `det`: `primal` (the determinant by expansion by minors) and `gradient` (with
// respect to the matrix, row-major, ell * ell values). The input is {A[ell * ell] row-major, ell};
// the program takes A as an ell x ell matrix.
#include <algorithm>
#include <string>

#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {

Eval det_eval() {
  Eval e;
  e.name = "det";
  e.functions = {{"primal", "primal"}, {"gradient", "gradient"}};
  e.arguments =
      [](const std::string&,
         const nlohmann::json& input) -> cotangent::Result<std::vector<cotangent::Value>> {
    auto flat = real_tensor(input, "A", 1);
    if (!flat) return flat.errors();
    auto ell = integer(input, "ell");
    if (!ell) return ell.errors();
    const int64_t size = ell.value();
    // ell * ell must not overflow before it is compared with A's length.
    if (size < 0 || size > 3037000499) return input_error("input.ell", "expected a size >= 0");
    if (flat.value().numel() != size * size) {
      return input_error("input.A",
                         "expected ell * ell = " + std::to_string(size * size) +
                             " elements, found " + std::to_string(flat.value().numel()),
                         "A is the matrix in row-major order");
    }
    cotangent::Value A = cotangent::Value::zeros(cotangent::DType::F64, {size, size});
    std::ranges::copy(flat.value().f64_data(), A.f64_mut().begin());
    return std::vector<cotangent::Value>{A};
  };
  e.output = [](const std::string& function, const std::vector<cotangent::Value>&,
                const cotangent::Value& result) {
    return function == "gradient" ? flat_json(result) : to_json(result);
  };
  return e;
}

}  // namespace cot::gradbench
