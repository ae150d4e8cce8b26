// One-hot gathers become scatter-adds (pass "scatter"). A generator whose body sums over points,
// each term zero unless the generator's index equals an index computed from the point,
//
//   X = for j: K, L. { pre; s = sum I. { S; c = j == e; r }; post }
//
// where r is a strong zero whenever c is false, costs |K|·|L|·|I| evaluations of the term: a
// gather. It becomes a scatter-add over the points, |I|·|L| evaluations (kmeans' gradient,
// bench/natural/kmeans.cot `dir`):
//
//   A   = accum[K, L] I, L'. { e; ok = 0 <= e && e < K;
//                              v = [ok] * { pre, S, r with j := e, c := true }; (e, L', v) }
//   hit = accum[K] I. { e; ok; (e, [ok] * 1.0) }               (only when s's mask is read)
//   X   = for j, L. { pre; s = [hit[j] > 0.0 || |I| <= 0] * A[j, L]; post }
//
// (the accum's keys in the generator's order: `for l, j` gives `accum[L, K] I, L'. (L', e, v)`).
// Forms of r that fire (docs/design.md §8.1): (F1) r bound by a guard whose predicate has the
// atom c as a conjunct, other conjuncts free to read I, L and S; (F3) r computed from such a
// guard (`[c] * 1.0`) by x * z, z * x, z / x, -z and z ± z' (z, z' such values or literal zeros:
// docs/language.md §5.6's mask propagation), so r is a strong zero where c is false. j's side of
// the equality is j itself or a guard's result that is j wherever the sum runs (licm's
// `if n >= 1 then j else 0`). Declined: if/select forms with an ordinary zero, several pinned
// variables, j's side other than j (j + 1, 2 * j), keys that read L or anything the generator's
// body binds outside the sum, tensor-valued and integer sums, pinned extents that are a literal
// below 4, generators that bind dynamic sizes.
//
// What keeps values and errors as they were:
//   range     every contribution is masked by ok: the sum ignores a key out of [0, K), an accum
//             would fail on it (kmeans' argmin is K where distances are NaN);
//   failures  nothing the rewrite moves or drops can fail: every statement of the sum's body and
//             every statement of `pre` that the term reads cannot fail where it stood (reads
//             proved in range by Fourier–Motzkin under the ranges of j, L and I), so the
//             reordering (point-major instead of j-major) changes no first error;
//   zeros     a cell no point reaches is an ordinary 0 in an accum but a strong zero in the sum
//             (a sum of strong zeros, |I| >= 1): `hit` restores the mask where
//             ir::StrongZeroFlow says it may be seen (a real count: the language's accum
//             sums reals, and costs |I| additions at most); reached cells get the marks of
//             their contributions in both (docs/language.md §12.6);
//   order     a cell adds its live terms in increasing row-major I in both, from +0.0, with the
//             same operations on the same operands: the values are bit-identical;
//   cost      the cloned `pre` statements are cost-free and do not repeat; the pass fires unless
//             the pinned extent is a literal below 4.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult scatter_sums(const ir::Program& program, const ir::Function& f);
// No generator is left whose body sums a one-hot term of its index that the pass would turn
// into a scatter-add.
std::optional<std::string> scatter_postcondition(const ir::Program& program, const ir::Function& f);

}  // namespace cot::opt
