// Which values depend on a given set of variables ("active" in forward mode, "tangent" in the
// linear part): a conservative dependency analysis over Core IR, with a fixed point for loop
// states.
#pragma once

#include <vector>

#include "ir/free_vars.h"
#include "ir/ir.h"

namespace cot::ad {

// The free variables (ir/free_vars.h), by the names the differentiator has always used.
using ir::free_vars;
using ir::reads_any;
using ir::stmt_reads;
using ir::VarSet;

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
