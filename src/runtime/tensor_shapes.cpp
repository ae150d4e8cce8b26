#include "runtime/tensor_shapes.h"

namespace cot::interp {

using cotangent::DType;

DType dtype_of(Scalar s) {
  switch (s) {
    case Scalar::F64:
      return DType::F64;
    case Scalar::F32:
      return DType::F32;
    case Scalar::I64:
      return DType::I64;
    case Scalar::Bool:
      return DType::Bool;
  }
  return DType::F64;
}

Scalar scalar_of(DType t) {
  switch (t) {
    case DType::F64:
      return Scalar::F64;
    case DType::F32:
      return Scalar::F32;
    case DType::I64:
      return Scalar::I64;
    case DType::Bool:
      return Scalar::Bool;
  }
  return Scalar::F64;
}

std::string shape_string(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d > 0) s += ", ";
    s += std::to_string(shape[d]);
  }
  return s + "]";
}

std::string type_string(Scalar elem, const std::vector<int64_t>& shape) {
  return std::string(to_string(elem)) + (shape.empty() ? "" : shape_string(shape));
}

std::optional<int64_t> element_count(std::span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

}  // namespace cot::interp
