// The linearity checker ([Radul23] §4.4, design.md §7.5): verifies that code computing tangents is
// linear in its tangent inputs, the property transposition relies on. A tangent may be added,
// subtracted, negated, scaled by a non-tangent, converted between f32 and f64, selected by a
// non-tangent condition, indexed, summed and carried through regions and loops; it may never
// be multiplied by another tangent, fed to a non-linear primitive, used as an index, a guard
// predicate, an `if` or loop condition, a trip count, or reduced by `max`/`min`.
#pragma once

#include <string>
#include <vector>

#include "ad/activity.h"
#include "ir/ir.h"

namespace cot::ad {

// The violations in `block` of function f, whose tangent inputs are `tangent` (printed
// statements with what is wrong); empty when the block is linear in them.
std::vector<std::string> linearity_violations(const ir::Program& program, const ir::Function& f,
                                              const ir::Block& block, VarSet tangent);

}  // namespace cot::ad
