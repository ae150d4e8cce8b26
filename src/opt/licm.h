// Loop-invariant code motion (pass "licm"): a statement of a gen, reduce or accum body, or of a
// counted loop's body, that depends neither on the region's index variables (or the loop's
// state and counter) nor on statements of the region that do moves out, just before the region.
// While loops, guard bodies and if branches are left alone.
//
// A region may run zero times, and then the original computes nothing: a hoisted statement that
// costs work or can fail (reads, integer arithmetic, conversions to i64, calls, ...) moves out
// unguarded only when the region's extents (trip count) are constants >= 1. Otherwise such
// statements move into one guard [extent >= 1 && ...] over the size variables (the trip count),
// or stay when an extent is not affine. Statements that are free and cannot fail (comparisons,
// logic, select, real conversions, tuples) move out as they are. Loops never move.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"

namespace cot::opt {

ir::Function hoist_invariants(const ir::Program& program, const ir::Function& f);
// No statement remains that the pass would hoist.
std::optional<std::string> licm_postcondition(const ir::Program& program, const ir::Function& f);

}  // namespace cot::opt
