// Dead-code elimination (pass "dce"; [Shaikhha22] Fig. 8a's dead let, `let x = e0 in e1 ~> e1`
// when x is not free in e1). Every operation is pure, so a statement none of whose results is used
// is removed, in every block, nested regions included, to a fixed point (a use by a dead statement
// does not count). Removing a statement that could have failed at run time removes dead work,
// which is allowed. Also:
//  - an unused result of a multi-result guard or if is dropped from the statement and from the
//    results of its bodies (whose statements then die in turn);
//  - a component of a (non-saving) loop's state that is dead is dropped from the state, the
//    initial values, the results and the body's results. A component is live when its final
//    value is used, when the while-condition reads it, or when the next value of a live
//    component is computed from it (a backward slice of the body). This is [Shaikhha22]'s
//    fission rule (Fig. 8g) followed by its tuple rule (Fig. 8e): the dropped components are the
//    loop the paper's rewrite would discard;
//  - a saving loop keeps its shape (its stacks are indexed by the reverse pass); it is removed
//    only when none of its results (nor its dynamic size) is used, with its size variable.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult eliminate_dead_code(const ir::Program& program, const ir::Function& f);
// No statement has all its results unused (a statement with no result counts as unused).
std::optional<std::string> dce_postcondition(const ir::Program& program, const ir::Function& f);

}  // namespace cot::opt
