// Unzip ([Radul23] §6, design.md §7.3): the jvp's statements split into a primal part, which
// computes values and the residuals the derivative needs, and a linear part, which maps tangents to
// the output tangent. Statements that compute tangents go to the linear part; the rest are primal.
// A loop whose state carries tangents (a combined loop from jvp) is split into a saving primal
// loop, which stacks its states per iteration, and a linear loop over the same iterations that
// reads the stacks; the transposer runs that loop backwards.
#pragma once

#include <vector>

#include "ad/activity.h"
#include "ir/builder.h"
#include "ir/ir.h"

namespace cot::ad {

// What is saved and what is recomputed (design.md §7.3, §7.9). The default: region bodies
// (gen, sum, guard, if, accum) are recomputed in the linear part from the values they read,
// never materialized as residual tensors; loops save their state at every iteration, and the
// costly values of their bodies (save_costly_values).
struct UnzipPolicy {
  enum class LoopStates {
    SaveEveryIteration,  // O(T) memory, no recomputation
    // Checkpoints: the loop runs as segments of K iterations; the states at segment starts are
    // saved, and each segment's states are recomputed from its checkpoint when the backward
    // pass reaches it. O(T / K + K) memory for one more run of the loop.
    Checkpoint,
  };
  LoopStates loop_states = LoopStates::SaveEveryIteration;
  // K for Checkpoint; 0: K = isqrt(T) + 1 for a for-loop (T known when it starts), 64 for a
  // while-loop.
  int64_t checkpoint_every = 0;
  // Values that a loop body computes with a costly elementwise function (exp, tanh, sigmoid...:
  // cost kind Call) at its top level and that the linear part reads are saved per iteration
  // beside the states, rather than computed again by the backward pass, when each is no larger
  // than a state (a scalar, or a tensor whose extents are among one state's). Residuals of the
  // backward pass, as JAX's scan saves them; the saved value is read where it was recomputed.
  bool save_costly_values = true;
};

// Under the Checkpoint policy, rewrites each loop of `block` (top level) whose state carries
// tangents into an equivalent loop over segments of K iterations whose body is the inner loop
// over one segment. Unzip then saves states per segment and recomputes within segments.
ir::Block checkpoint_loops(ir::Builder& b, ir::Block block, const VarSet& tangent,
                           const UnzipPolicy& policy);

// Splits the combined loop `s` (state variables marked in `tangent_state` are tangents):
// emits the saving primal loop at the builder's position (binding the primal results of `s`)
// and returns the linear statements (binding the tangent results of `s`), not yet emitted:
// the linear loop, then, when `s` itself saves its states, copies of its tangent stacks.
// `tangent` holds the tangent variables in scope; it grows by those of the loop's body. Under
// policy.save_costly_values the primal loop also stacks the body's costly values the linear loop
// reads (ad/residuals.h), as extra states, and the linear loop reads them from there.
std::vector<ir::Stmt> split_loop(ir::Builder& b, const ir::Stmt& s,
                                 const std::vector<bool>& tangent_state, VarSet& tangent,
                                 const UnzipPolicy& policy);

}  // namespace cot::ad
