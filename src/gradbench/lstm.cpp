// GradBench's `lstm` (ADBench's LSTM with diagonal weights): `objective` (the loss) and
// `jacobian` (its gradient with respect to main_params and extra_params, each flattened row by
// row, concatenated). The input is {main_params[2l][4b], extra_params[3][b], state[2l][b],
// sequence[c][b]}. The program takes main_params as [l, 2, 4, b] (layer; weights, biases;
// gate; unit) and state as [l, 2, b] (layer; hidden, cell): the same numbers in the same
// order, regrouped so that the layer count is a size of the program.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {
namespace {

using cotangent::DType;
using cotangent::Result;
using cotangent::Value;
using nlohmann::json;

// `v` (row-major) with the shape `shape`, which has as many elements.
Value regrouped(const Value& v, std::vector<int64_t> shape) {
  Value r = Value::zeros(DType::F64, std::move(shape));
  std::ranges::copy(v.f64_data(), r.f64_mut().begin());
  return r;
}

// The field `name`, a [2l][width] array, as [l, 2, groups, width / groups].
Result<Value> layer_pairs(const json& input, const std::string& name, int64_t groups) {
  auto v = real_tensor(input, name, 2);
  if (!v) return v.errors();
  const int64_t rows = v.value().shape()[0], cols = v.value().shape()[1];
  if (rows % 2 != 0) {
    return input_error("input." + name, "expected an even number of rows (2 per layer), found " +
                                            std::to_string(rows));
  }
  if (cols % groups != 0) {
    return input_error("input." + name, "expected rows of a multiple of " + std::to_string(groups) +
                                            " numbers, found " + std::to_string(cols));
  }
  std::vector<int64_t> shape{rows / 2, 2};
  if (groups > 1) shape.push_back(groups);
  shape.push_back(cols / groups);
  return regrouped(v.value(), std::move(shape));
}

Result<std::vector<Value>> arguments(const json& input) {
  auto main_params = layer_pairs(input, "main_params", 4);
  if (!main_params) return main_params.errors();
  auto extra_params = real_tensor(input, "extra_params", 2);
  if (!extra_params) return extra_params.errors();
  auto state = layer_pairs(input, "state", 1);
  if (!state) return state.errors();
  auto sequence = real_tensor(input, "sequence", 2);
  if (!sequence) return sequence.errors();
  return std::vector<Value>{main_params.value(), extra_params.value(), state.value(),
                            sequence.value()};
}

}  // namespace

Eval lstm_eval() {
  Eval e;
  e.name = "lstm";
  e.functions = {{"objective", "objective"}, {"jacobian", "gradient"}};
  e.arguments = [](const std::string&, const json& input) { return arguments(input); };
  e.output = [](const std::string& function, const std::vector<Value>&,
                const Value& result) -> json {
    if (function != "jacobian") return to_json(result);
    json flat = json::array();
    for (const Value& part : result.elems()) {
      for (double x : part.f64_data()) flat.push_back(x);
    }
    return flat;
  };
  return e;
}

}  // namespace cot::gradbench
