// Loop unswitching (pass "unswitch"): a gen, reduce, accum or counted-loop statement R whose
// body branches on a condition p bound outside R becomes a branch on p of two copies of R, each
// with p replaced by its value and the ifs on p folded to their taken branch:
//      for j. { pre; if p then A else B }
//  ==> if p then (for j. { pre; A }) else (for j. { pre; B })
// Reverse mode makes this shape: the adjoint of an `if` inside a gather branches per element on
// a primal condition computed once per row (logsumexp's `mx` is infinite), and the taken branch
// recomputes the row's primal (a sum of exps) for every element. An if branch is a region code
// motion does not leave (it may be skipped work); once the branch is the whole body of a copy
// of R, licm and loop fission hoist the work out of that copy.
//
// Only one copy runs, and it computes exactly what R computed (the ifs on p in it were free
// and took the same branch), so the op count never grows; p is a variable already evaluated, so
// branching on it before R costs nothing and cannot fail, even when R runs zero times.
// R is unswitched only when it pays: some branch of an `if p` in R (reached from R's body
// through gen/reduce/accum bodies and the branches of ifs on conditions that do not vary in R,
// not through guards or loops) has a costly statement that depends on nothing that varies in R,
// i.e. work that a hoisting pass can move out of the copy. The outermost such R is chosen, so
// the work leaves as many regions as possible; the copies are unswitched again on the other
// conditions that pay. R never holds a saving loop (its dynamic size cannot be bound twice), and
// is not copied when it has more than three conditions that pay or a body of more than 2000
// statements (each split doubles the code).
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult unswitch_loops(const ir::Program& program, const ir::Function& f);
// No region that unswitching would split is left.
std::optional<std::string> unswitch_postcondition(const ir::Program& program,
                                                  const ir::Function& f);

}  // namespace cot::opt
