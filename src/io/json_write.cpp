// Writing values as JSON text. Hand-written rather than through nlohmann::json so that reals
// keep 17 significant digits (f32 values as their exact double), which round-trips exactly.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "cotangent/io.h"
#include "io/located_error.h"

namespace cotangent {
namespace {

void append_real(double x, int digits, std::string& out) {
  if (std::isnan(x)) {
    out += "\"nan\"";
  } else if (std::isinf(x)) {
    out += x > 0 ? "\"inf\"" : "\"-inf\"";
  } else if (x == 0 && std::signbit(x)) {
    out += "-0.0";  // "-0" would read back as the integer 0
  } else {
    // Same text as printf's %.17g / %.9g, but independent of the C locale.
    char buf[40];
    auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, digits);
    out.append(buf, r.ptr);
  }
}

void append_element(const Value& v, size_t k, std::string& out) {
  switch (v.dtype()) {
    case DType::F64:
      append_real(v.f64_data()[k], 17, out);
      break;
    case DType::F32:
      // The f32 value itself, exactly, as a double with 17 digits: 0.1f is 0.10000000149011612.
      append_real(static_cast<double>(v.f32_data()[k]), 17, out);
      break;
    case DType::I64:
      out += std::to_string(v.i64_data()[k]);
      break;
    case DType::Bool:
      out += v.bool_data()[k] ? "true" : "false";
      break;
  }
}

// Appends the sub-tensor at dimension `dim` whose first element is `flat`; recursion depth is
// the rank.
void append_tensor(const Value& v, size_t dim, size_t& flat, std::string& out) {
  const std::vector<int64_t>& shape = v.shape();
  if (dim == shape.size()) {
    append_element(v, flat++, out);
    return;
  }
  out += '[';
  for (int64_t i = 0; i < shape[dim]; ++i) {
    if (i > 0) out += ", ";
    append_tensor(v, dim + 1, flat, out);
  }
  out += ']';
}

void append_value(const Value& v, std::string& out) {
  if (v.is_tuple()) {
    out += '[';
    for (size_t i = 0; i < v.elems().size(); ++i) {
      if (i > 0) out += ", ";
      append_value(v.elems()[i], out);
    }
    out += ']';
    return;
  }
  size_t flat = 0;
  append_tensor(v, 0, flat, out);
}

// The arrays the text of an empty tensor holds: one per index of the dimensions before the
// first 0 (the outer array, d0 arrays inside it, d0 * d1 inside those, ...), capped just past
// `limit`. A tensor with elements holds at most rank arrays per element, so only an empty one
// can ask for text out of proportion to its data.
int64_t empty_tensor_arrays(const std::vector<int64_t>& shape, int64_t limit) {
  int64_t arrays = 0;
  int64_t at_depth = 1;  // arrays at the current depth
  for (int64_t d : shape) {
    arrays += at_depth;
    if (arrays > limit || d == 0) break;
    if (at_depth > limit / d) return limit + 1;
    at_depth *= d;
  }
  return std::min(arrays, limit + 1);
}

// The first tensor (tuples depth first) whose text would be too long, or nullptr.
const Value* oversized(const Value& v) {
  if (v.is_tuple()) {
    for (const Value& e : v.elems()) {
      if (const Value* o = oversized(e)) return o;
    }
    return nullptr;
  }
  bool empty = false;
  for (int64_t d : v.shape()) empty = empty || d == 0;
  if (!empty) return nullptr;
  return empty_tensor_arrays(v.shape(), kMaxJsonEmptyArrays) > kMaxJsonEmptyArrays ? &v : nullptr;
}

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

}  // namespace

std::string value_to_json(const Value& v) {
  if (!v.well_formed()) return "null";         // a shape with no storage has no elements to write
  if (oversized(v) != nullptr) return "null";  // value_to_json_checked says why
  std::string out;
  append_value(v, out);
  return out;
}

Result<std::string> value_to_json_checked(const Value& v) {
  if (!v.well_formed()) {
    return io::file_error({}, "the value is not well formed: its shape has no storage");
  }
  if (const Value* big = oversized(v)) {
    return io::file_error({},
                          "an empty tensor of shape " + shape_text(big->shape()) +
                              " is too large to write as JSON: its text would hold more than " +
                              std::to_string(kMaxJsonEmptyArrays) + " empty arrays",
                          "write the result as .npy (--output OUT.npy), which stores the shape "
                          "alone");
  }
  std::string out;
  append_value(v, out);
  return out;
}

}  // namespace cotangent
