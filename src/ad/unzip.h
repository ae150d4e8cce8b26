// Unzip (linearize, papers/004): the jvp's statements split into a primal part, which computes
// values and the residuals the derivative needs, and a linear part, which maps tangents to the
// output tangent. Statements that compute tangents go to the linear part; the rest are primal.
// A loop whose state carries tangents (a combined loop from jvp) is split into a saving primal
// loop, which stacks its states per iteration, and a linear loop over the same iterations that
// reads the stacks; the transposer runs that loop backwards.
#pragma once

#include <vector>

#include "ad/activity.h"
#include "ir/builder.h"
#include "ir/ir.h"

namespace cot::ad {

// What is saved and what is recomputed (architecture.md §3). The default: region bodies
// (gen, sum, guard, if, accum) are recomputed in the linear part from the values they read,
// never materialized as residual tensors; loops save their state at every iteration.
struct UnzipPolicy {
  enum class LoopStates {
    SaveEveryIteration,  // O(T) memory, no recomputation
  };
  LoopStates loop_states = LoopStates::SaveEveryIteration;
};

// Splits the combined loop `s` (state variables marked in `tangent_state` are tangents):
// emits the saving primal loop at the builder's position (binding the primal results of `s`)
// and returns the linear loop (binding the tangent results of `s`), not yet emitted.
// `tangent` holds the tangent variables in scope.
ir::Stmt split_loop(ir::Builder& b, const ir::Stmt& s, const std::vector<bool>& tangent_state,
                    const VarSet& tangent, const UnzipPolicy& policy);

}  // namespace cot::ad
