// The eval's JSON input as argument values, and results as the eval's output JSON. Reading
// checks what the eval promises (a field exists, arrays are rectangular, elements are numbers)
// and names the offending place, as in `input.x[3][1]`, so a malformed input is a clear
// `success: false`, never a wrong number.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace cot::gradbench {

// An error about the eval's input at `where` (for example "input.x[3]").
cotangent::Error input_error(const std::string& where, const std::string& what,
                             const std::string& help = {});

// The largest tensor, in elements, that the tool builds from an input: the limit the compiled
// code enforces on its own tensors (codegen::NativeOptions), so an input the code would refuse
// is refused before its memory is allocated.
int64_t max_tensor_elements();

// An error at `where` unless a tensor of `shape` can be allocated: no negative dimension, an
// element count that fits int64 and is within max_tensor_elements(). The message names the
// shape as the compiled code's does ("a tensor of shape [p, 2] has ... elements, more than the
// limit of ...").
std::optional<cotangent::Error> check_tensor_size(const std::string& where,
                                                  const std::vector<int64_t>& shape);

// The field `name` of the input object (an error when the input is not an object or lacks it).
cotangent::Result<const nlohmann::json*> field(const nlohmann::json& input,
                                               const std::string& name);

// A real tensor of rank `rank` >= 1 from nested arrays (a rank-0 "tensor" is a number).
cotangent::Result<cotangent::Value> real_tensor(const nlohmann::json& input,
                                                const std::string& name, int rank);
// An i64 tensor (index data) of rank `rank` >= 1.
cotangent::Result<cotangent::Value> int_tensor(const nlohmann::json& input, const std::string& name,
                                               int rank);
cotangent::Result<double> real(const nlohmann::json& input, const std::string& name);
// An integer field; reals with an integral value are accepted, as Python's json writes them.
cotangent::Result<int64_t> integer(const nlohmann::json& input, const std::string& name);
// An integer field that counts something (points, steps), from 0 (GradBench's references read
// a size_t) to max_tensor_elements(): a program's loop runs that many times, and a count no
// tensor could have (2^62) would keep the tool busy for ever.
cotangent::Result<int64_t> bounded_count(const nlohmann::json& input, const std::string& name);

// A value as JSON: reals as numbers, tensors as nested arrays, tuples as arrays.
nlohmann::json to_json(const cotangent::Value& v);
// A tensor's elements as one flat array (row-major).
nlohmann::json flat_json(const cotangent::Value& v);

// The non-finite numbers (NaN, ±inf) in an output: JSON has no number for them (nlohmann
// writes null) and GradBench's protocol no other representation, so the tool reports them
// instead of sending the output (docs/design.md §14).
struct NonFinite {
  std::string where;  // the first one's place, as in "output.vals[3]"
  double value = 0;   // and its value
  int64_t count = 0;  // how many there are in all
};
std::optional<NonFinite> find_non_finite(const nlohmann::json& output);

}  // namespace cot::gradbench
