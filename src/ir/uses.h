// Variable uses in Core IR: every variable an operation reads, including those inside affine
// index expressions and predicates and in nested regions. The basis of liveness and
// dead-code questions.
#pragma once

#include <functional>
#include <vector>

#include "ir/ir.h"

namespace cot::ir {

// Calls `use` for every variable read by `op` itself (not by statements nested in its regions).
void for_each_direct_use(const Op& op, const std::function<void(VarId)>& use);
// Calls `size` for every size expression `op` itself evaluates: extents, scatter-add shapes,
// size reads (not those of statements nested in its regions).
void for_each_direct_size(const Op& op, const std::function<void(const SizeExpr&)>& size);
// Calls `use` for every variable read anywhere in `block`, nested regions included.
void for_each_use(const Block& block, const std::function<void(VarId)>& use);
// Calls `use` for every variable read by `s`, nested regions included.
void for_each_use(const Stmt& s, const std::function<void(VarId)>& use);
// Calls `callee` with the name of every function called anywhere in `block`.
void for_each_call(const Block& block, const std::function<void(const std::string&)>& callee);
// Use counts per variable of `f` (indexed by VarId).
std::vector<int> use_counts(const Function& f);

}  // namespace cot::ir
