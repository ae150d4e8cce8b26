// Common subexpressions across sibling regions (pass "region-cse"): a per-point value that a
// gen or reduce R computes at the top of its body, and that a later region over the same
// ranges computes again, is materialized once and read by both.
//      let a = sum r. { let d = sum i. X[r, i] * w[i]; (d - y[r]) ^ 2 }
//      let g = for j. { let e = sum i. X[j, i] * w[i]; e * c }
//  ==> let H = for r. sum i. X[r, i] * w[i]
//      let a = sum r. { let d = H[r]; (d - y[r]) ^ 2 }
//      let g = for j. { let e = H[j]; e * c }
// Reverse mode recomputes a row's primal value in every region of the gradient that needs it
// (design.md §7.9); plain CSE cannot share them, since sibling regions do not dominate each
// other.
//
// R is a gen or reduce statement of some block B, and v a costly statement (static_cost.h) at
// the top level of R's body, with one non-tuple result, that depends on an index variable of R
// and whose other dependencies inside R's body are cost-free (so H costs per point exactly what
// v cost R, and R nothing more). A later region R2 is any gen or reduce statement nested
// anywhere in a statement of B after R; the index variables in scope at its body are its own and
// those of the gens and reduces around it on the path from B (through bodies, if branches and
// guards). R's index variables are mapped injectively onto those, with equal extents, using at
// least one of R2's own (so R2 is the deepest region the mapping names):
//      let S = for i, j. sum d. Q[i, d] * K[j, d]
//      let g = for i2. if p then { sum j2. exp(sum d. Q[i2, d] * K[j2, d]) } else 0.0
// maps (i, j) to (i2, j2) and the branch reads S[i2, j2]. A copy of v and the cost-free
// statements it reads, with R's index variables mapped, is put at the top of R2's body and CSE
// runs: when something in R2 merges into the copy, v is materialized as H = for I. { slice; v }
// placed just before R, and v (in R) and the copy (in R2) become reads of H. Otherwise nothing
// changes.
//
// H runs where R ran, over R's ranges, and each point computes what R computed there
// unconditionally, so the op count never grows and no error is added: the copy in R2 only
// reads (free, and in range: R already evaluated the same reads at the same points, and R2's
// index variables range over the same extents, so a copy in a branch or guard is safe too). A sum
// over a range that may be empty is a strong zero there; its reads keep that under a guard
// [extent >= 1]. v is never a guard (a strong zero) or a sum whose terms may be strong zeros.
// The pass repeats until nothing is shared, so chains of costly values are materialized one
// statement at a time (each new H makes the next statement's dependencies cost-free).
//
// A plain loop v whose trip count does not vary with R's points is shared with the *saving*
// loops that compute the same states in later regions (a gradient's gathers run the loop of a
// sum's body again to save its states for their reverse pass): H is its trajectory, for each
// point the states at the start of every iteration and then the final one,
//      let Tn = max(count, 0)
//      let H = for I. { slice; let (y, T, ps) = loop ... saving
//                       for k: Tn + 1. if k < T then ps[k] else y }
// R reads H[I, Tn]; each saving copy becomes `T = max(count, 0)`, its stack `for k: T. H[J, k]`
// (or its element reads H[J, e] directly) and its final state H[J, Tn]. The loop runs once per
// point instead of once per region.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

// What a run of the pass did: how many candidates it tried, how many distinct ones, how many
// of the tries passed the value-number test and probed (each copies and rescans the function),
// and how many it shared.
struct RegionCseStats {
  size_t tried = 0;
  size_t distinct = 0;
  size_t probed = 0;
  size_t shared = 0;
};

// A candidate that fails is not tried again after each later share: only when the search runs
// dry are the failures older than the last share tried once more (a share may have made them
// shareable). When that retry shares nothing, tried <= 2 * distinct + shared; each retry that
// shares costs one more try of every older failure.
PassResult share_across_regions(const ir::Program& program, const ir::Function& f);
PassResult share_across_regions(const ir::Program& program, const ir::Function& f,
                                RegionCseStats& stats);
// No value of a region's body that a later sibling region computes again at the same points.
std::optional<std::string> region_cse_postcondition(const ir::Program& program,
                                                    const ir::Function& f);

}  // namespace cot::opt
