// Batching a loop over the points of a region (pass "loop-batch"): a counted loop at the top of
// a gen or reduce body, whose trip count is the same at every point, runs once, with a state
// per point (JAX's vmap of a scan; the loop interchange of vectorizing compilers):
//      sum i. { let a = x[i]; loop p = 0.0 for t < m { p * a + c[t] } }
//  ==> let P = loop P = (for i. 0.0) for t < m {
//                let ct = c[t]
//                for i. { let a = x[i]; P[i] * a + ct } }
//      sum i. P[i]
// The op count does not change. What it is for is the gradient: reverse mode then runs one
// backward sweep of one loop that computes every tangent's cotangent at once, where a loop per
// point is transposed once per region that needs it (the gather of x, the sum of c's
// contributions, each running the loop again); and a read `c[t]` at the counter, now at the
// top of the loop body, transposes to a scatter of each step's cotangent (transpose.h) instead
// of a dense cotangent of c carried per point.
//
// R is a gen or reduce statement; L the first loop at the top of R's body that is a counted
// loop with one state (a scalar or a tensor) whose trip count is bound outside R. The
// statements of R's body before L that L reads (transitively) are its prelude: those its body
// reads are copied into every step, so they must be cost-free; those only its initial state
// reads run once per point, in the initial state's generator. Statements at the top of L's
// body that read neither R's index variables, nor the prelude, nor the state move out of the
// per-point generator (read once per step). L's body and prelude must not fail (every read
// provably in range, no integer arithmetic that may overflow, no calls, no nested loops) and
// hold no guard, and L's initial state is not a strong zero: the batched loop runs the points'
// steps in another order and keeps the state in a tensor, which holds no masks
// (docs/language.md §5.6), so an error or a strong zero could otherwise show differently.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult batch_loops(const ir::Program& program, const ir::Function& f);
// No loop left that the pass would batch.
std::optional<std::string> loop_batch_postcondition(const ir::Program& program,
                                                    const ir::Function& f);

}  // namespace cot::opt
