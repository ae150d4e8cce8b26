// Dynamic size variables (SizeVar::param == -1, the iteration counts of saving loops) are bound
// by statements of the body. A pass that removes such a statement (a dead saving loop, a false
// guard's body) or copies it (clone_block gives a copy a fresh dynamic size) leaves size
// variables that nothing binds; this drops them. The pipeline runs it after every pass, and
// passes that remove or copy code call it last so they verify on their own.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "ir/ir.h"

namespace cot::opt {

// Returns whether it dropped any.
bool prune_dynamic_sizes(ir::Function& f);

// Whether v is the variable of a dynamic size variable of f. Types name such a size, not the
// variable, so a pass must not replace the statement that binds it by another atom.
bool is_dynamic_size(const ir::Function& f, ir::VarId v);

// The names of the dynamic sizes that a statement binds (its results that are size variables).
// A statement that mentions one cannot move before the statement.
void append_dynamic_sizes_bound_by(const ir::Function& f, const ir::Stmt& s,
                                   std::vector<std::string>& names);

// The dynamic sizes computed by ordinary statements (not the count of a saving loop, which
// binds it together with the stacks whose types name it): the count of the linear loop of a
// reverse-over-reverse split. Nothing may remove their statements while their names are used,
// so dead-code elimination keeps them.
std::unordered_set<ir::VarId> computed_dynamic_sizes(const ir::Function& f);

}  // namespace cot::opt
