// What the checker knows about an expression it has lowered: where the value is (an atom of
// Core IR), its type, and static facts later stages need (its affine form for index
// expressions, its size expression for extents).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/source.h"
#include "index/affine.h"
#include "ir/ir.h"
#include "ir/size_expr.h"
#include "ir/type.h"

namespace cot::check {

struct Val {
  ir::Atom atom;
  Type type;
  Span span;
  // An unannotated literal (`2`, `0.5`) that takes the type of the other operand.
  bool weak = false;
  // i64 values that are affine in index, size and loop-iteration variables.
  std::optional<Affine> affine;
  // i64 values that are size expressions (usable as extents).
  std::optional<SizeExpr> size;
  // Tuples whose elements are known, so destructuring needs no projection.
  std::vector<Val> elems;
  // False when an error was already reported for this expression; consumers stay silent.
  bool ok = true;

  static Val error(Span s) {
    Val v;
    v.ok = false;
    v.span = s;
    return v;
  }
};

// A name in scope.
struct Binding {
  enum class Kind { Value, IndexVar, SizeVar };
  Kind kind = Kind::Value;
  Val val;
  Span span;        // where it was bound
  int binder = -1;  // IndexVar: the binder record used for extent inference
};

}  // namespace cot::check
