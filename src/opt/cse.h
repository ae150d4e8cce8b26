// Common-subexpression elimination (pass "cse"; the hash-consing of [Bernstein20]'s Tensor SSA,
// §5.4: the identity of a value is the syntax of its right-hand side).
//
// Two statements with the same operation on the same operands, the first dominating the second
// (earlier in the same block, or earlier in an enclosing block), compute the same values: every
// use of the second's results is replaced by the first's, and the second is dropped. Operations
// compare by opt::alpha_equal: statements with regions are equal up to renaming of the
// variables they bind (`sum i. x[i]` and `sum k. x[k]`), the operands of commutative
// primitives compare in either order, literals by type and bits; calls are pure and merge too.
// Saving loops are never merged (each binds its own dynamic size), though their bodies are
// cleaned. Statements of sibling regions never merge (neither dominates the other).
//
// Every operation is pure, and the dominating copy has run whenever the dropped one would have,
// so values, errors and strong zeros are kept and the interpreter's op count can only drop.
// Candidates are found through alpha_hash, so a block of n statements costs O(n) comparisons
// in the absence of hash collisions. Regions are cleaned before their statement is compared,
// so two loops whose bodies differ only by a redundancy become equal.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult eliminate_common_subexpressions(const ir::Program& program, const ir::Function& f);
// The same, rewriting f in place (a caller that tries many rewrites of a large function and
// keeps few saves the copy).
PassResult eliminate_common_subexpressions(const ir::Program& program, ir::Function&& f);
// No statement is alpha-equal to one that dominates it.
std::optional<std::string> cse_postcondition(const ir::Program& program, const ir::Function& f);

}  // namespace cot::opt
