// Residuals of a loop's backward pass (UnzipPolicy::save_costly_values): which values of a
// combined loop body (from jvp) the saving primal loop should stack per iteration so that the
// linear loop reads them instead of computing them again. Only costly elementwise functions
// (cost kind Call: exp, log, tanh, sigmoid, ...) are worth a store and a load per element; the
// rest of the primal work is recomputed (design.md §7.3).
#pragma once

#include <vector>

#include "ad/activity.h"
#include "ir/ir.h"

namespace cot::ad {

// Makes each costly per-element value that a tangent gen of `body` (top level) computes from
// primal values alone a primal gen of its own, placed before the tangent gen, which reads it:
//      let dy = for q. { let a = h[q] * w[q]; let s = sigmoid(a); s * (1.0 - s) * dh[q] }
//  ==> let S = for q. { let a = h[q] * w[q]; sigmoid(a) }
//      let dy = for q. { let s = S[q]; s * (1.0 - s) * dh[q] }
// The primal is optimized before AD, so its costly values sit inside fused gens, and the tangent
// gens jvp makes compute them again; as gens of their own they can be saved. Only gens no larger
// than one of `primal_states` (see costly_residuals) are split. `tangent` holds the tangent
// variables in scope at the top of `body`; it grows by the body's (activity is monotone, so the
// caller's set takes them instead of a copy per loop).
ir::Block expose_costly_values(ir::Function& f, const ir::Block& body, VarSet& tangent,
                               const std::vector<Type>& primal_states);

// The top-level statements of the combined loop body `body` that are worth saving: primal
// statements with one result that apply a costly function (a gen or a scalar primitive), that the
// linear part needs (read by a tangent statement, or by a primal statement it needs that is not
// saved itself), and that are no larger than a primal state (a real scalar, or a real tensor
// whose extents, sizes of parameters, are among one state's extents: residuals never grow the
// memory a loop saves by more than a constant factor). Indices into body.stmts, in order.
// `tangent` grows by the body's tangent variables.
std::vector<size_t> costly_residuals(const ir::Function& f, const ir::Block& body, VarSet& tangent,
                                     const std::vector<Type>& primal_states);

}  // namespace cot::ad
