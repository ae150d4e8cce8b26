// The free variables of a block or statement: what it reads and does not bind itself. They
// decide whether a region needs derivative code at all (symbolic zeros: an inactive region
// gets none; ad/activity.h) and what a loop step reads (opt/loop_batch.cpp), so they live in
// the IR, below both (docs/design.md §1).
#pragma once

#include <unordered_set>

#include "ir/ir.h"

namespace cot::ir {

using VarSet = std::unordered_set<VarId>;

// Variables read in `block` (nested regions included) that it does not bind.
VarSet free_vars(const Block& block);
// Variables read by statement `s` (its operands and the free variables of its regions).
VarSet stmt_reads(const Stmt& s);
// Whether `s` reads any variable of `set`.
bool reads_any(const Stmt& s, const VarSet& set);

}  // namespace cot::ir
