// Tangents at compile time (JAX's symbolic zeros): a value's tangent is known to be zero (and
// has no code at all), is held by an atom, or, for a tuple built in the code, is a tuple of
// element tangents. Zeros become values only where a value is required (a region's result, a
// loop state, the derived function's result).
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/builder.h"
#include "ir/ir.h"

namespace cot::ad {

struct Tangent {
  enum class Kind { Zero, Value, Tuple };
  Kind kind = Kind::Zero;
  ir::Atom atom;               // Value
  std::vector<Tangent> elems;  // Tuple

  static Tangent zero() { return {}; }
  static Tangent value(ir::Atom a) { return Tangent{Kind::Value, a, {}}; }
  bool is_zero() const;
};

using TangentMap = std::unordered_map<ir::VarId, Tangent>;

// A zero value of type t (tensors of zeros; integer and boolean leaves are 0 and false).
// Types are taken by value: they often come from the function's variable table, which
// building new statements may reallocate.
ir::Atom zeros(ir::Builder& b, Type t);
// Strong zeros of type t (docs/language.md §5.6): real leaves computed under a false guard, so that
// 0 times an infinite or NaN partial stays 0. Other leaves are ordinary zeros.
ir::Atom strong_zeros(ir::Builder& b, Type t);
// The tangent as a value of type t, the primal type (zeros where it is symbolically zero;
// strong zeros when `strong`).
ir::Atom materialize(ir::Builder& b, const Tangent& tan, Type t, bool strong = false);
// `for i1, ..., ik. body(i1..ik)` over a shape (index variables named after `hint`).
ir::VarId gen_over(ir::Builder& b, const std::vector<SizeExpr>& shape, const std::string& hint,
                   const std::function<ir::Atom(const std::vector<ir::VarId>&)>& body);
// The affine indices `[v1, ..., vk]`.
std::vector<ir::IndexExpr> index_at(const std::vector<ir::VarId>& vars);
// The sum of two values of one type (elementwise for tensors, per element for tuples).
ir::Atom add_values(ir::Builder& b, ir::Atom x, ir::Atom y);

}  // namespace cot::ad
