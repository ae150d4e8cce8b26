// Which values depend on a given set of variables ("active" in forward mode, "tangent" in the
// linear part): a conservative dependency analysis over Core IR, with a fixed point for loop
// states. Also the free variables of a region, which decide whether a region needs derivative
// code at all (symbolic zeros: an inactive region gets none).
#pragma once

#include <unordered_set>
#include <vector>

#include "ir/ir.h"

namespace cot::ad {

using VarSet = std::unordered_set<ir::VarId>;

// Variables read in `block` (nested regions included) that it does not bind.
VarSet free_vars(const ir::Block& block);
// Variables read by statement `s` (its operands and the free variables of its regions).
VarSet stmt_reads(const ir::Stmt& s);
// Whether `s` reads any variable of `set`.
bool reads_any(const ir::Stmt& s, const VarSet& set);

// Adds to `set` every variable of `block` (nested regions included) that depends on a variable
// already in `set` and has a type with a real leaf (integers and booleans carry no derivative).
// Returns, per result of the block, whether it depends on the set.
std::vector<bool> propagate(const ir::Function& f, const ir::Block& block, VarSet& set);
// The same for one statement: marks its dependent results (and inner variables).
void propagate_stmt(const ir::Function& f, const ir::Stmt& s, VarSet& set);
// For a loop: which state variables depend on the set (fixed point over iterations).
std::vector<bool> loop_state_activity(const ir::Function& f, const ir::LoopOp& l, VarSet& set);

// Marks the results of loop statement `s` (and, for a saving loop, the stacks) whose states
// `active` (from loop_state_activity) says carry tangents.
void mark_loop_results(const ir::Stmt& s, const std::vector<bool>& active, VarSet& set);

// Whether the type has a real leaf (so values of it have tangents).
bool has_tangent(const Type& t);

}  // namespace cot::ad
