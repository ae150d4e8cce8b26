// Let-lifting (pass "let-lift"; [Bernstein20] §5.1, rules 5.1–5.10, with the generator
// absorption 5.27 of §5.4), in the A-normal form of Core IR.
//
// What the rules become in ANF: Core IR binds every intermediate value with a let at block
// level, so a let can no longer sit inside an operand: 5.1–5.5, 5.8 and 5.10 (a let under +, *,
// a call, a tuple, a projection, an index, or on the right of another let) hold by construction
// and have nothing left to do. What remains is the lets of nested regions:
//  - 5.6/5.7 (a let under a gen or sum becomes a gen over the index: loop fission) are applied
//    where they remove work (loop_fission.h); a statement that depends on none of the index
//    variables of its region is left to loop-invariant code motion (another pass), which needs no
//    tensor;
//  - 5.9 (a let under a guard) is the identity too: a guard body is a block whose lets are
//    already at its top, and splitting it into one guard per let would only repeat the guard.
//    What it does enable, lifting a region out through a guard, is done below;
//  - flattening nested binders, which is what the normal form asks for:
//      for I. for J. e            ==>  for I, J. e          (5.27: a gen whose body only builds
//                                                            and yields an inner gen)
//      for I. [p] * for J. e      ==>  for I, J. [p] * e    (5.27 with 5.23; p cannot mention J)
//      sum I. sum J. e            ==>  sum I, J. e          (scalar real sums)
//      sum I. [p] * sum J. e      ==>  sum I, J. [p] * e    (the sum and its guard as one unit,
//                                                            as rule 4.30 costs them)
//    A sum flattens only when it is a scalar real (f64, f32) sum of a scalar sum: its cost is
//    the joint sum's (t live terms cost t − 1 additions either way, an inner sum with no live
//    term being a strong zero, src/interp/eval_regions.cpp); the values differ only by the
//    order of the additions. Integer sums stay (a different association could overflow where
//    the original did not), as do max/min reductions and sums of tensors. Only when the inner
//    binder is the sole statement of the outer body (and of the guard's body) does it flatten, so
//    no statement is moved into a deeper loop and no work is repeated.
// Regions are flattened bottom-up, so `for i. for j. for k. e` becomes `for i, j, k. e`.

#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult let_lift(const ir::Program& program, const ir::Function& f);
// No gen whose body (directly or under a sole guard) only yields an inner gen; no scalar real
// sum whose body (directly or under a sole guard) only yields an inner scalar sum; no chain
// left that fission would hoist.
std::optional<std::string> let_lift_postcondition(const ir::Program& program,
                                                  const ir::Function& f);

}  // namespace cot::opt
