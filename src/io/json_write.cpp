// Writing values as JSON text. Hand-written rather than through nlohmann::json so that reals
// keep 17 significant digits (f32 values as their exact double), which round-trips exactly.
#include <charconv>
#include <cmath>
#include <string>

#include "cotangent/io.h"

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

}  // namespace

std::string value_to_json(const Value& v) {
  if (!v.well_formed()) return "null";  // a shape with no storage has no elements to write
  std::string out;
  append_value(v, out);
  return out;
}

}  // namespace cotangent
