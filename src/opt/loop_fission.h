// Loop fission with materialization ([Bernstein20] rules 5.6/5.7), run by let-lifting (let_lift.h)
// after flattening. For reverse-mode code that recomputes a primal
// value inside the gather of every adjoint element:
//      for j. sum r. { let a = sum i. X[r, i] * w[i]; a * X[r, j] }
//  ==> let H = [k >= 1] * for r. sum i. X[r, i] * w[i]
//      for j. sum r. { let a = H[r]; a * X[r, j] }
// R is a gen, reduce or accum statement, or a counted loop (not a while loop), and Q1 ... Qn
// (n >= 0; n >= 1 for a loop, whose own body is licm's) a path of gen/reduce/guard statements
// and branches of ifs on a condition bound outside R below it, each directly in the previous body
// (not in a loop or an accum body, nor an if on a condition that varies in R: hoisting out of
// those would evaluate skipped work). A chain in a counted loop must not depend on the loop's
// state or counter (every iteration computes it again with the same values); H is computed
// under [count >= 1]. A branch is a guard on its condition (or its negation). A guard on the
// path is passed only when its predicate is a conjunction of affine constraints (and of atoms
// bound outside R):
// H then covers exactly the points at which the original evaluated the chain at least once, the
// ranges and guard predicates of the path projected by Fourier-Motzkin onto H's index variables
// (exact over the integers, as every variable eliminated has the coefficient +-1); a guard on
// that projection stays inside H (over H's index variables) or around it (over the rest), so the
// op count never grows: for j. sum i. [i <= j <= i + 2] * (row value of i) reads H[i], with H
// computed once per i. A statement of Qn's body
// (R's when n = 0) is invariant when it depends only on what is bound outside R, the index
// variables of R and Q1..Qn, invariant statements of the same body and cost-free invariant
// statements of the bodies above it on the path; and it must not depend on at least one index
// variable of R whose extent is not the constant 1 (that is the repetition removed), unless it
// is a row of a contraction: a generator (not the body's result) that a region nested in the
// body reads again per point (a gen or reduce whose index variables the read does not use, or
// a loop), as xc in sum r. sum c. Q[r, c] * xc[c]. Such a row becomes a table over the path's
// index variables too ([Bernstein20] 5.6/5.7 in full) and its element reads xc[c] read H[I, c]:
// reverse mode's gathers then read its elements instead of recomputing the row per point,
// and fusion, seeing each element read per point of that region, leaves the table. Among the
// invariant statements (single result, not a tuple, not a loop, binding and naming no dynamic
// size of R; dead ones ignored), users before definitions:
//  - a costly one (static_cost.h, is_cost_free) that something left in the body needs, or two
//    chains need, is a root: it becomes a read H[I] of a new generator placed just before R,
//    over the path's index variables I that its chain depends on (their extents), whose body
//    is a fresh copy of the chain (everything inside R the root reads, transitively);
//  - a costly one that one chain needs moves into that chain;
//  - a cost-free one (reads, index arithmetic) is copied into every chain that needs it and
//    stays while the body needs it.
// H is computed only where the original computed the chain: when R's or the path's ranges that
// H does not range over may be empty, it sits under a guard [extent >= 1 && ...] (facts before
// R may prove them). So the op count never grows: each point of H costs what one evaluation of
// the chain did, and the chain ran at least once per point. A root is not chosen (and the
// statements it needs stay) when:
//  - it depends on no index variable of the path (loop-invariant code motion hoists it);
//  - it may be a strong zero, whose additions the cost model does not charge: a guard or a
//    projection. A sum is one only when its range is empty (its terms cannot be): the read keeps
//    it one, [extent >= 1] * H[I], unless the facts prove the range is not empty;
//  - it is a generator read once, in bounds, in the same body: fusion copies its body to the
//    read, which computes one element per point instead of all of them; the chain left is
//    hoisted in a later round;
//  - an extent a guard needs is not affine.
// Flattening runs first (a chain of `sum i. sum j. e` that depends on i only is one of
// `sum i, j. e` that does not depend on j), then fission, again until fission changes nothing.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"

namespace cot::opt {

// f after one sweep of fission; nullopt when nothing was hoisted.
std::optional<ir::Function> loop_fission(const ir::Program& program, const ir::Function& f);
// The first chain loop_fission would hoist, described; nullopt when there is none.
std::optional<std::string> loop_fission_candidate(const ir::Program& program,
                                                  const ir::Function& f);

}  // namespace cot::opt
