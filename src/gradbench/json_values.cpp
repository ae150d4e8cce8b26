#include "gradbench/json_values.h"

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "codegen/native.h"
#include "runtime/size_checks.h"

namespace cot::gradbench {
namespace {

using nlohmann::json;

std::string type_of(const json& j) {
  if (j.is_array()) return "an array";
  if (j.is_object()) return "an object";
  if (j.is_string()) return "a string";
  if (j.is_boolean()) return "a boolean";
  if (j.is_null()) return "null";
  return "a number";
}

// The shape of nested arrays, read along the first elements; checked in full by `fill`.
cotangent::Result<std::vector<int64_t>> shape_of(const json& j, const std::string& where,
                                                 int rank) {
  std::vector<int64_t> shape;
  const json* cur = &j;
  std::string at = where;
  for (int d = 0; d < rank; ++d) {
    if (!cur->is_array()) {
      return input_error(at, "expected an array (of rank " + std::to_string(rank - d) +
                                 "), found " + type_of(*cur));
    }
    shape.push_back(static_cast<int64_t>(cur->size()));
    if (cur->empty()) {
      // An empty dimension: the remaining dimensions are unknown, and hence 0.
      shape.resize(static_cast<size_t>(rank), 0);
      break;
    }
    cur = &(*cur)[0];
    at += "[0]";
  }
  if (auto e = check_tensor_size(where, shape)) return *e;
  return shape;
}

// `at` is the place of `j` (extended in place while descending: inputs have millions of
// elements, and a fresh path per element would cost more than the reading).
template <class T, class Leaf>
std::optional<cotangent::Error> fill(const json& j, const std::vector<int64_t>& shape, size_t d,
                                     std::string& at, T*& out, Leaf&& leaf) {
  if (d == shape.size()) return leaf(j, at, out++);
  if (!j.is_array()) return input_error(at, "expected an array, found " + type_of(j));
  if (static_cast<int64_t>(j.size()) != shape[d]) {
    return input_error(
        at, "expected " + std::to_string(shape[d]) + " elements, found " + std::to_string(j.size()),
        "every row of a tensor must have the same length");
  }
  const size_t length = at.size();
  for (size_t i = 0; i < j.size(); ++i) {
    at += '[';
    at += std::to_string(i);
    at += ']';
    if (auto e = fill(j[i], shape, d + 1, at, out, leaf)) return e;
    at.resize(length);
  }
  return std::nullopt;
}

std::optional<cotangent::Error> real_leaf(const json& j, const std::string& at, double* out) {
  if (!j.is_number()) return input_error(at, "expected a number, found " + type_of(j));
  *out = j.get<double>();
  return std::nullopt;
}

std::optional<cotangent::Error> int_leaf(const json& j, const std::string& at, int64_t* out) {
  if (j.is_number_integer()) {
    if (j.is_number_unsigned() &&
        j.get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return input_error(at, "the integer is out of the i64 range");
    }
    *out = j.get<int64_t>();
    return std::nullopt;
  }
  if (j.is_number_float()) {
    const double x = j.get<double>();
    // 2^63 is the first double above the i64 range.
    if (std::trunc(x) == x && std::abs(x) < 9223372036854775808.0) {
      *out = static_cast<int64_t>(x);
      return std::nullopt;
    }
    return input_error(at, "expected an integer, found " + j.dump());
  }
  return input_error(at, "expected an integer, found " + type_of(j));
}

}  // namespace

cotangent::Error input_error(const std::string& where, const std::string& what,
                             const std::string& help) {
  return cotangent::Error{"", 0, 0, where + ": " + what, help, ""};
}

int64_t max_tensor_elements() {
  return cot::codegen::NativeOptions{}.max_tensor_elements;
}

std::optional<cotangent::Error> check_tensor_size(const std::string& where,
                                                  const std::vector<int64_t>& shape) {
  // The interpreter's check and words, as the compiled code reports a size it cannot build.
  auto why =
      cot::interp::size_error(cot::interp::SizeRule::Tensor, shape, 0, max_tensor_elements());
  if (!why) return std::nullopt;
  return input_error(where, *why, "the sizes in the input are too large for this tool");
}

cotangent::Result<const json*> field(const json& input, const std::string& name) {
  if (!input.is_object()) {
    return input_error("input", "expected an object, found " + type_of(input),
                       "the eval's input is an object with one entry per argument");
  }
  auto it = input.find(name);
  if (it == input.end()) return input_error("input", "the field `" + name + "` is missing");
  return &*it;
}

namespace {

// A tensor of `dtype` (whose elements are T, read by `leaf`) from the field `name`.
template <class T, class Leaf>
cotangent::Result<cotangent::Value> tensor(const json& input, const std::string& name, int rank,
                                           cotangent::DType dtype, Leaf&& leaf) {
  auto j = field(input, name);
  if (!j) return j.errors();
  std::string where = "input." + name;
  auto shape = shape_of(*j.value(), where, rank);
  if (!shape) return shape.errors();
  cotangent::Value v = cotangent::Value::zeros(dtype, shape.value());
  T* out = static_cast<T*>(v.raw_mut());
  if (auto e = fill(*j.value(), shape.value(), 0, where, out, leaf)) return *e;
  return v;
}

}  // namespace

cotangent::Result<cotangent::Value> real_tensor(const json& input, const std::string& name,
                                                int rank) {
  return tensor<double>(input, name, rank, cotangent::DType::F64, real_leaf);
}

cotangent::Result<cotangent::Value> int_tensor(const json& input, const std::string& name,
                                               int rank) {
  return tensor<int64_t>(input, name, rank, cotangent::DType::I64, int_leaf);
}

cotangent::Result<double> real(const json& input, const std::string& name) {
  auto j = field(input, name);
  if (!j) return j.errors();
  double x = 0;
  if (auto e = real_leaf(*j.value(), "input." + name, &x)) return *e;
  return x;
}

cotangent::Result<int64_t> integer(const json& input, const std::string& name) {
  auto j = field(input, name);
  if (!j) return j.errors();
  int64_t k = 0;
  if (auto e = int_leaf(*j.value(), "input." + name, &k)) return *e;
  return k;
}

cotangent::Result<int64_t> bounded_count(const json& input, const std::string& name) {
  auto k = integer(input, name);
  if (!k) return k.errors();
  if (k.value() < 0 || k.value() > max_tensor_elements()) {
    return input_error("input." + name,
                       "expected a count from 0 to " + std::to_string(max_tensor_elements()) +
                           " (the tensor limit), found " + std::to_string(k.value()));
  }
  return k.value();
}

json flat_json(const cotangent::Value& v) {
  json out = json::array();
  for (int64_t k = 0; k < v.numel(); ++k) out.push_back(v.element_as_f64(k));
  return out;
}

namespace {

json nested(const cotangent::Value& v, size_t d, int64_t& k) {
  if (d == v.shape().size()) return v.element_as_f64(k++);
  json out = json::array();
  for (int64_t i = 0; i < v.shape()[d]; ++i) out.push_back(nested(v, d + 1, k));
  return out;
}

}  // namespace

namespace {

// Outputs are a few levels deep (tensors of the eval's rank in objects of the eval's keys).
void find_non_finite(const json& j, std::string& at, NonFinite& found) {
  if (j.is_number_float()) {
    const double x = j.get<double>();
    if (!std::isfinite(x) && found.count++ == 0) {
      found.where = at;
      found.value = x;
    }
    return;
  }
  const size_t length = at.size();
  if (j.is_array()) {
    for (size_t i = 0; i < j.size(); ++i) {
      at += '[';
      at += std::to_string(i);
      at += ']';
      find_non_finite(j[i], at, found);
      at.resize(length);
    }
  } else if (j.is_object()) {
    for (const auto& [key, value] : j.items()) {
      at += '.';
      at += key;
      find_non_finite(value, at, found);
      at.resize(length);
    }
  }
}

}  // namespace

std::optional<NonFinite> find_non_finite(const json& output) {
  NonFinite found;
  std::string at = "output";
  find_non_finite(output, at, found);
  if (found.count == 0) return std::nullopt;
  return found;
}

json to_json(const cotangent::Value& v) {
  if (v.is_tuple()) {
    json out = json::array();
    for (const cotangent::Value& e : v.elems()) out.push_back(to_json(e));
    return out;
  }
  int64_t k = 0;
  return nested(v, 0, k);
}

}  // namespace cot::gradbench
