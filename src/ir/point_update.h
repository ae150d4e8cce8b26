// Point updates of a tensor (docs/design.md §10, "In-place point updates of loop state"): a
// generator `for I. body` that equals the tensor s, element for element, except on a few
// slices pinned by equalities of its index variables to values computed outside it
// (`for i. if i == k then NEW else s[i]`, the Iverson form `[i == k] * NEW + [i != k] * s[i]`,
// a column `for r, c. if c == j then ... else L[r, c]`). The native backend then stores those
// slices into s's buffer instead of building a new tensor. This is an analysis only: the Core
// IR, the interpreter, AD and op counts do not see it.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "index/affine.h"
#include "ir/ir.h"

namespace cot::ir {

// Index variable `ivar` (a position in the generator's ivars) equals `value`, an affine
// expression of variables bound outside the generator.
struct Pin {
  size_t ivar = 0;
  Affine value;
  bool operator==(const Pin& o) const { return ivar == o.ivar && value == o.value; }
};

struct PointUpdate {
  // The slices that may change: the points where one pin holds (distinct pins, in the order the
  // body first tests them). Everywhere else the generator's element is s's.
  std::vector<Pin> boxes;
  // Elsewhere the element is s[I] + 0.0 (a sum with a strong zero: the Iverson form), which is
  // s[I] but for a -0.0, which becomes +0.0 (the mask is s[I]'s); false: exactly s[I].
  bool adds_zero = false;
  // The affine expressions the body evaluates at points outside the boxes, whose overflow the
  // caller must rule out (the interpreter would fail there): each `e` of a tested `e == 0` or
  // `e >= 0`.
  std::vector<Affine> evaluated;
};

// Whether `gen` (the statement binding a GenOp) is a point update of the tensor variable `s`:
// its extents are s's shape, its body yields a scalar, and at every point where no pin holds it
// evaluates, without failing and without reading anything but s at that point (and tensors at
// exactly the point, whose shape is the extents), to s's element there (or that plus a strong
// zero). The body is evaluated abstractly with every pin false: values are a strong zero,
// s[I], s[I] + a strong zero, false or true (of a pin), or unknown; `if` takes the branch its
// condition decides, a guard whose predicate a pin falsifies is a strong zero, `[a < i || i <
// a]` is true off the pin i == a. nullopt when not.
std::optional<PointUpdate> point_update(const Function& f, const Stmt& gen, VarId s);

}  // namespace cot::ir
