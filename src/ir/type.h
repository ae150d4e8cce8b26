// Types of Core IR values: rank-k tensors (rank 0 is a scalar) of f64, f32, i64 or bool, with
// symbolic shapes; and tuples of types.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/size_expr.h"
#include "prims/scalar.h"

namespace cot {

struct Type {
  bool is_tuple = false;
  Scalar elem = Scalar::F64;    // tensors
  std::vector<SizeExpr> shape;  // tensors; empty for a scalar
  std::vector<Type> elems;      // tuples

  static Type scalar(Scalar s) { return Type{false, s, {}, {}}; }
  static Type tensor(Scalar s, std::vector<SizeExpr> shape) {
    return Type{false, s, std::move(shape), {}};
  }
  static Type tuple(std::vector<Type> elems) {
    return Type{true, Scalar::F64, {}, std::move(elems)};
  }

  bool is_scalar() const { return !is_tuple && shape.empty(); }
  bool is_tensor() const { return !is_tuple && !shape.empty(); }
  size_t rank() const { return shape.size(); }
  // Every leaf is f64 or f32: the types that have tangents.
  bool is_real_valued() const;
  bool operator==(const Type& o) const;
  bool operator!=(const Type& o) const { return !(*this == o); }
  // Source spelling: "f64", "f64[n, m]", "(f64, i64[k])".
  std::string to_string() const;
  // The type with size variables replaced (a callee's shapes at a call site).
  Type substitute(const std::map<std::string, SizeExpr>& by) const;
};

}  // namespace cot
