// Partial evaluation (pass "partial-eval"): the rules of [HuotShaikhha] §5 that apply to Core IR,
// with loops evaluated where their trip count is a literal. O1–O19 are the optimizations of its
// Fig. 12, in the figure's order; X1–X9 are rules its derivations of the introduction's
// gradients use without listing them (App. A.6).
//
// Implemented here:
//   loops   (§5.1's partial evaluation step; reduce unrolled, Prop. A.3) a non-saving for-loop
//           with a literal trip count <= 0 is its initial state; with trip count 1 it is its
//           body, once, with the state := init and the counter := 0; a for-loop whose body
//           yields its state unchanged is its initial state; a state variable that every
//           iteration yields unchanged is its initial value after any non-saving loop (the
//           loop's result is replaced by init)
//   O16     if c then a else a -> a: an if result that both branches yield as the same atom,
//           bound outside the branches, is that atom
//   O7, X1  map (x. x) A -> A: `for I. A[I]` over A's whole shape is A
//   X2, X4  reads of constant generators: (for I. c)[a] -> c when every index is affine and
//           provably in range (0 <= a < extent, by Fourier–Motzkin under the enclosing ranges
//           and guards), so no range error is removed
//   O10, X6 reduce + 0 ZerosLike -> 0: a sum whose body yields a literal zero is a strong zero
//           (a False guard; adding it is free, so the cost only drops)
//
// Elsewhere or not applicable:
//   O13 (π of a tuple literal), O17/O18 (if true/false) and X5 (0 ⊕ e) are in "simplify";
//   O1 (β to lets) is the inline pass; O2 and X9 (dead lets) are dead-code elimination; O12
//   (map fusion) is fusion; O3/O4/O14/O15/X8 (copy lets, let normalization) do not arise in ANF:
//   atoms are already variables or literals and blocks are flat; O5 and O8 (0 * e -> 0) are not
//   IEEE-exact for an ordinary 0.0 (only strong zeros absorb, in "simplify"); O9 needs a product
//   reduction, which the IR does not have; O11 and X3 (shift1, scans) have no counterpart; O19
//   duplicates work, which the cost model forbids.
//
// Saving loops (LoopOp::saves_states) are left exactly as they are.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult partially_evaluate(const ir::Program& program, const ir::Function& f);
// None of the rules above applies anywhere.
std::optional<std::string> partial_eval_postcondition(const ir::Program& program,
                                                      const ir::Function& f);

}  // namespace cot::opt
