// Where a guarded statement inside a nest of regions runs at least once, as a predicate over the
// variables outside (some of) the nest: the ranges of the regions' index variables and the
// affine conjuncts of the guards on the way, with the index variables projected away by
// Fourier-Motzkin. Loop fission (loop_fission.h) guards a materialized chain with it, and
// loop-invariant code motion (licm.h) a statement hoisted out of a guard.
//
// The projection is exact over the integers because every variable eliminated must have the
// coefficient +-1 in every constraint it occurs in (a lower bound L <= v and an upper bound
// v <= U of integer expressions leave an integer v exactly when L <= U); it fails otherwise.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "index/affine.h"
#include "index/predicate.h"
#include "ir/ir.h"
#include "opt/static_cost.h"

namespace cot::opt {

// `0 <= v < extent` as two constraints; false when the extent is not affine.
bool add_range_constraints(const ir::Function& f, ir::VarId v, const SizeExpr& extent,
                           std::vector<Affine>& constraints);

// The constraints that remain after projecting `eliminated` away, minus those `known` (and the
// others left) prove: `inner` those that mention a variable `kept` says to keep, `outer` the
// rest. nullopt when the projection is not exact, the constraints are never satisfied, or a
// constraint left mentions a variable `bound_inside` says may not stay.
struct ProjectedGuard {
  std::vector<Pred> outer, inner;
};
std::optional<ProjectedGuard> project_constraints(
    std::vector<Affine> constraints, const std::vector<ir::VarId>& eliminated,
    const IndexFacts& known, const std::function<bool(ir::VarId)>& kept,
    const std::function<bool(ir::VarId)>& bound_inside);

}  // namespace cot::opt
