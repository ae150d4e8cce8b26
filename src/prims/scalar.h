// The scalar types of the language: the element types of tensors, and what the primitives act
// on. They belong to the primitive table's layer, below the Core IR's types (ir/type.h), so
// that the table does not depend on the IR that uses it (docs/design.md §1).
#pragma once

namespace cot {

enum class Scalar { F64, F32, I64, Bool };

const char* to_string(Scalar s);
inline bool is_real(Scalar s) {
  return s == Scalar::F64 || s == Scalar::F32;
}
inline bool is_numeric(Scalar s) {
  return s != Scalar::Bool;
}

}  // namespace cot
