// The variables Core IR statements bind: results, and inside regions the index variables of
// generators, reductions and scatter-adds and the states and counters of loops. The questions
// code motion and activity analysis ask before moving or differentiating a statement.
#pragma once

#include <functional>

#include "ir/ir.h"

namespace cot::ir {

// Calls `bind` for every variable `op` binds for its regions: index variables, a loop's states
// and counter (not the statement's results, nor what its regions bind).
void for_each_direct_binder(const Op& op, const std::function<void(VarId)>& bind);
// Calls `bind` for every variable the statement binds: its results and, in its regions (nested
// ones included), their statements' results, index variables, loop states and counters.
void for_each_binder(const Stmt& s, const std::function<void(VarId)>& bind);
void for_each_binder(const Block& b, const std::function<void(VarId)>& bind);

}  // namespace cot::ir
