// Replacing uses of variables, in place, everywhere in a block: the one rewriting primitive the
// optimizer's passes share (a pass that finds `y` equal to `x` replaces every use of `y` by `x`
// and drops y's statement).
#pragma once

#include <functional>
#include <unordered_map>

#include "ir/ir.h"

namespace cot::opt {

using Substitution = std::unordered_map<ir::VarId, ir::Atom>;

// Replaces every use of a variable in `map` inside `block` (nested regions included): operand
// atoms, results, loop initial values and counts, if conditions, computed indices, and the
// variables of affine indices and predicates. In an affine position the replacement must be a
// variable (renamed) or an i64 literal (folded into the constant term); in a predicate a
// boolean atom may become a bool literal (folded to true or false). Anything else in those
// positions, or a fold that overflows, is a std::logic_error (a compiler bug). Replacements
// are applied once (not transitively): resolve chains before calling.
void substitute_uses(ir::Block& block, const Substitution& map);
// The same for one statement (its operands and nested regions), and for a block's results
// only (its statements left as they are).
void substitute_uses(ir::Stmt& stmt, const Substitution& map);
void substitute_results(ir::Block& block, const Substitution& map);

// Replaces each operand atom the operation itself reads (not those of nested regions, not the
// variables of affine indices and predicates) by f(atom): primitive and call arguments, tuple
// elements, the projected tuple, an if condition, the read tensor and computed indices, a loop's
// initial state and trip count.
void map_direct_operands(ir::Op& op, const std::function<ir::Atom(const ir::Atom&)>& f);

// The same for one predicate (folding True/False where an atom became a literal).
Pred substitute_pred(const Pred& p, const Substitution& map);

}  // namespace cot::opt
