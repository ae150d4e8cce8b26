// Loop normalization (pass "loop-normalize"): the rules of [Shaikhha22] Fig. 8f for `ifold`
// ((f).k is the figure's k-th rule), on Core IR's LoopOp (state, counter, trip count):
//  - (f).3, per state component: a component whose next value is itself (`s_k` yields `s_k`)
//    or its own initial value never changes. It leaves the state: its uses in the body and the
//    condition read the initial value, a free variable of the loop, and so does the loop's
//    result. For while loops too. (A loop all of whose state is invariant disappears.)
//  - (f).1: a for-loop whose trip count is a constant <= 0 (an i64 literal or a constant size)
//    is its initial state.
//  - (f).2, only for a constant trip count of 1: the loop is its body, once, with the state
//    bound to the initial values and the counter to 0. Peeling more iterations (or unrolling
//    static loops) would repeat the body's code without saving an operation under the cost
//    model, so it is left out.
//  - (f).4, the one-hot loop: a for-loop whose body computes `c = (t == e0)` (either order) with
//    e0 loop-invariant and yields, for each state component, either the component itself or a
//    result of `if c then ... else ...` whose else-branch yields that component, changes its
//    state in iteration e0 only. It becomes
//        if 0 <= e0 && e0 < count then { the body once, state := init, t := e0, with the `if c`
//                                        replaced by its then-branch }
//        else init
//    The range test replaces the paper's side condition 0 <= e0 < n (integer comparisons are
//    free), so no range analysis is needed and the rewrite is exact; the one iteration kept is
//    one the original ran, with the same state, so no new error can appear.
//  - (g) (Fig. 8g), fission followed by tuple elimination, is dead-code elimination of loop
//    state in our IR (dce.h): a component no used result depends on is dropped there.
// Saving loops (LoopOp::saves_states) are left exactly as they are, since their stacks and
// iteration count are read by the reverse pass; loops nested in their bodies are normalized.
// Every rule keeps or lowers the interpreter's op count.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult normalize_loops(const ir::Program& program, const ir::Function& f);
// No loop that does not save has an invariant state component (one whose body yields itself or
// its initial value), and no for-loop that does not save has a constant trip count <= 1.
std::optional<std::string> loop_normalize_postcondition(const ir::Program& program,
                                                        const ir::Function& f);

}  // namespace cot::opt
