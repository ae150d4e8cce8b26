// Merging branches on one condition (pass "if-merge"). Reverse mode emits several `if c`
// statements in one block, one per primal `if` and one per adjoint contribution, each
// branch recomputing what another branch on c computed (logsumexp's sum of exps). Putting
// them under one `if c` lets CSE share that work.
//  - Two `if c` statements S1, S2 of one block, on the same condition variable c, become one
//    `if c` at S2's place whose branches are S1's branch, then the statements D between them
//    that depend (transitively) on S1's results, then S2's branch; it binds S1's results, D's
//    and S2's. D is copied into both branches (S1's results replaced by the branch's values);
//    the statements between that do not depend on S1 stay before the merged if.
//        let a = if c then {A} else {B}; let d = a + 1.0; let e = if c then {C} else {E}
//    ==> let (a, d, e) = if c then {A; d1 = a1 + 1.0; C} else {B; d2 = a2 + 1.0; E}
//  - A real primitive whose operands are all results of one if (or literals), one of them a
//    literal in some branch, moves into both branches, where simplify folds it:
//        let (a, b) = if c then {(A, 0.0)} else {(0.0, B)}; let r = a + b
//    ==> let (a, b, r) = if c then {(A, 0.0, A + 0.0)} else {(0.0, B, 0.0 + B)}
//    (reverse mode's contributions of the two branches of a primal if to one element).
//  - Inside a branch of `if c`, c is the branch's literal, and the result of an earlier `if c`
//    (dominating the branch) is that branch's value when it is a literal or a variable bound
//    outside it; ifs and selects whose condition became a literal fold to the taken operand.
//
// Only one branch of the merged if runs and it evaluates exactly the statements S1's and S2's
// taken branches and D evaluated, once each, so values are exact and the op count never grows.
// D is copied only when it is small (at most 200 statements, nested ones included) and holds no
// saving loop (its dynamic size cannot be bound twice). The order of evaluation changes only
// for statements that cannot fail, so the same error is reported first.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult merge_ifs(const ir::Program& program, const ir::Function& f);
// No two ifs on one condition in a block that could merge; no operation to move into an if;
// no use of c inside a branch of `if c`.
std::optional<std::string> if_merge_postcondition(const ir::Program& program,
                                                  const ir::Function& f);

}  // namespace cot::opt
