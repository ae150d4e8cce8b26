// Algebraic simplification with symbolic zeros (pass "simplify").
//
//   folding     a primitive whose operands are all literals becomes its value, computed exactly
//               as the interpreter computes it (prims/prim.h; reals on f32 in f32). Left alone:
//               i64 overflow and division by zero (the run-time error stays) and conversions
//               that fail (i64 of NaN). Real results may be infinite or NaN, as in the
//               interpreter (1.0 / 0.0 is inf, never an error)
//   identities  x + 0, 0 + x, x - 0, x * 1, 1 * x, x / 1 -> x;  0 - x -> -x;  -(-x) -> x (reals);
//               x // 1, exact x / 1 -> x, 0 * x, x * 0 -> 0 (i64: exact, never overflows);
//               f64(x: f64) -> x (same for f32, i64);
//               select(true, a, b) -> a, select(false, a, b) -> b;
//               b && true -> b, b && false -> false, b || false -> b, b || true -> true, !!b -> b
//   zeros       a strong zero z (a result of a False guard, of a guard or sum whose body yields
//               one, or a projection of one) absorbs: z + x, x + z, x - z -> x; -z -> z; and
//               z * x, x * z, z / x -> z (reals) when z is not a sum, whose range may be empty
//               (a product with a strong zero is one whatever x, docs/language.md §5.6; an empty
//               sum is an ordinary 0 as a factor).
//   pairs       (a, b).k -> the element, for a tuple built in the function ([Bernstein20] 5.11)
//   if          if true then A else B -> A inlined (B for false)
//
// Uses of a removed statement's result are replaced with substitute_uses, so affine indices
// and predicates fold literals too.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult simplify_algebra(const ir::Program& program, const ir::Function& f);
// No rule above applies anywhere: no primitive whose operands are all literals and that folds
// without error, no identity, zero, projection or literal-if pattern.
std::optional<std::string> simplify_postcondition(const ir::Program& program,
                                                  const ir::Function& f);

}  // namespace cot::opt
