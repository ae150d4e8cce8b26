// Loop-invariant code motion (pass "licm"): a statement of a gen, reduce or accum body, or of a
// counted loop's body, that depends neither on the region's index variables (or the loop's
// state and counter) nor on statements of the region that do moves out, just before the region.
// While loops, guard bodies and if branches are left alone.
//
// A region may run zero times, and then the original computes nothing: a hoisted statement that
// costs work or can fail (reads not provably in range, integer arithmetic, conversions to i64,
// calls, ...) moves out unguarded only when the region's extents (trip count) are constants
// >= 1. Otherwise such
// statements move into one guard [extent >= 1 && ...] over the size variables (the trip count),
// or stay when an extent is not affine. Statements that are free and cannot fail (comparisons,
// logic, select, real conversions, tuples) move out as they are. Loops never move.
//
// A guard directly in such a body, whose predicate is a conjunction of affine constraints (over
// the region's index variables or counter and what is bound outside) and of atoms bound outside,
// is run through too: the statements of its body that do not vary in the region and that the
// guard still needs move before the region (when one of them is costly work that repeats: a
// region; scalar work under a guard stays), into a guard on where the
// original guard's body runs at least once, the region's ranges and the predicate with the index
// variables projected away (guard_projection.h):
//      for i. [i >= 1] * (x[i] * sum j. y[j])  ==>  let s = [n >= 2] * sum j. y[j]
//                                                    for i. [i >= 1] * (x[i] * s)
// They run once when the original ran them at least once, so the count never grows and nothing
// fails that did not.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult hoist_invariants(const ir::Program& program, const ir::Function& f);
// No statement remains that the pass would hoist.
std::optional<std::string> licm_postcondition(const ir::Program& program, const ir::Function& f);

}  // namespace cot::opt
