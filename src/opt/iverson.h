// Iverson-bracket simplification (pass "iverson"; [Bernstein20] rule 5.24, under its cost model,
// §4.3). Guards are rewritten under what is known where they stand:
// the ranges 0 <= i < extent of the enclosing index variables (gen, reduce, accum), the
// counters of enclosing for-loops, and the affine constraints of the enclosing guards.
//
//   merge      [p] * { S; [q] * e }  ->  [p && q] * { S; e }   (the outer body yields exactly
//              the inner guard's results and q reads nothing S binds)            (5.24)
//   tighten    constraints of a predicate implied by the facts and the other constraints are
//              dropped (Fourier–Motzkin), `e >= 0` is divided by the gcd of its coefficients,
//              and a predicate that is infeasible under the facts becomes False
//   True       [true] * { S; e }  ->  S; e   (the body is inlined where the guard stood)
//   False      [false] * { ... } keeps binding strong zeros but its body becomes trivial
//              (literal zeros, or generators of them for tensors)
//   sum/eq     sum I. { S; [p && k == a && rest] * e }  ->  [0 <= a < n_k && rest] * {S; e}[k := a]
//              for every summed k that an equality of p fixes with a unit coefficient (the
//              general elimination is eliminate_sums; solutions that need a division are left);
//              the reduce keeps the summed variables that are not solved
//   empty      a sum over an empty constant range, or of a strong zero, is a strong zero (a
//              False guard); gen and accum over an empty constant range get a trivial body
//   product    t = g1 * g2 with g1 = [p] * { S1; e1 } and g2 = [q] * { S2; e2 } bound in t's block,
//              each read only by t, t real, and p and q equivalent under the facts (each implies
//              the other, Fourier–Motzkin)  ->  t = [p] * { S1; S2; e1 * e2 }, where t stood.
//              Where p is false both factors are strong zeros and so is t (the value 0 either
//              way, one multiplication less); where it holds the same work runs. Guards with
//              different predicates are left: 0.0 * NaN is NaN, so neither side may be dropped.
//              After fusion, sum l. ([i == l] * x[i]) * ([l == i] * y[l]) becomes one guard
//              that sum/eq then eliminates (the trace of diag(x) * diag(y) in O(n))
//
// max/min reductions are left as they are. Every rewrite keeps values, strong zeros and the
// interpreter's cost model: the eliminated sum has at most one live term, which costs nothing
// to add, and work moved under a guard only runs where it ran before.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "index/affine.h"
#include "index/predicate.h"
#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult simplify_brackets(const ir::Program& program, const ir::Function& f);
// No guard with a constant predicate except False-guards with trivial bodies, no directly nested
// mergeable guards, no sum whose guard fixes a summed variable by a unit-coefficient equality,
// no sum over an empty constant range, no mergeable product of two guards (under the facts of
// its block).
std::optional<std::string> iverson_postcondition(const ir::Program& program, const ir::Function& f);

// --- helpers shared with the other passes of this family (partial_eval) --------------------

// `p` simplified under `facts` (each `e >= 0`): implied affine conjuncts dropped, False when
// infeasible; atoms and disjunctions kept as they are.
Pred tighten_pred(const Pred& p, const std::vector<Affine>& facts);
// A block that yields zeros of the given types without doing any work: literals for scalars,
// generators of a literal for tensors, tuples of those.
ir::Block zeros_block(ir::Function& f, const std::vector<Type>& types);
// Whether a block does no work: only generators yielding a literal and tuples.
bool is_trivial_block(const ir::Block& b);

}  // namespace cot::opt
