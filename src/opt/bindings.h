// What a statement binds and what it reads from outside itself: the questions code motion asks
// before moving a statement (loop fission, region-cse, loop normalization).
#pragma once

#include <unordered_set>
#include <vector>

#include "ir/ir.h"

namespace cot::opt {

// Every variable the statement binds: its results and, in its regions, results, index
// variables, loop states and counters.
void collect_bound(const ir::Stmt& s, std::unordered_set<ir::VarId>& out);
void collect_bound(const ir::Block& b, std::unordered_set<ir::VarId>& out);
// The variables the statement reads that it does not bind itself.
std::vector<ir::VarId> free_uses(const ir::Stmt& s);

}  // namespace cot::opt
