// Private to loop fission's files (src/opt/loop_fission*.cpp; what the pass does is in
// loop_fission.h): the path below a region that fission walks, and the plan for its last level.
//   loop_fission.cpp       the walk down the paths below each region, and the rewrite that
//                          moves a plan's chains before the region
//   loop_fission_plan.cpp  which statements of a path's last level move, grouped under the
//                          roots that are materialized
#pragma once

#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "index/affine.h"
#include "index/predicate.h"
#include "ir/ir.h"
#include "opt/static_cost.h"

namespace cot::opt::loop_fission_detail {

// One level of the path R, Q1, ..., Qn: a body and the index variables of the statement whose
// body it is (R's for level 0); `q` is the index in the body of the statement opening the next
// level.
struct Level {
  ir::Block* body = nullptr;
  std::vector<ir::IndexVar> ivars;
  size_t q = 0;
  std::optional<Pred> guard;  // a guard's body: its predicate (no index variables)
};

// What R binds and what holds outside it.
struct RegionCtx {
  std::unordered_set<ir::VarId> bound;  // everything bound inside R
  std::vector<std::string> dynamic;     // dynamic sizes bound inside R
  std::vector<ir::VarId> repeating;     // R's index variables whose extent is not 1
  // R is a counted loop: count - 1 (>= 0 exactly when it runs).
  std::optional<Affine> count_minus_one;
  IndexFacts outside;              // facts before R
  std::vector<ScopeFrame> frames;  // frames inside R's body
};

// The plan for the last level of a path.
struct FissionPlan {
  std::vector<size_t> roots;  // statements whose values are materialized, in order
  std::vector<bool> moves;    // statements that leave the body (members and copies)
  std::vector<bool> live;     // dead ones that read what moves are dropped with it
  std::vector<std::vector<ir::IndexVar>> hivars;  // per root: the index variables of H
  std::vector<Pred> guard;                        // per root: when H is computed
  std::vector<Pred> inner_guard;                  // per root: which points of H are computed
  std::vector<std::optional<Pred>> read_guard;    // per root: a strong zero kept at the read
  // per root: extents of R that are not affine (a quotient, a product of sizes), which H's
  // guard tests as computed values, `let e = size(extent); let c = e >= 1`, placed before H
  std::vector<std::vector<SizeExpr>> computed_nonempty;
  bool any() const { return !roots.empty(); }
};

// The plan for the last level of `path` below the region `ctx` describes.
FissionPlan plan_fission(const ir::Function& f, const RegionCtx& ctx,
                         const std::vector<Level>& path);

}  // namespace cot::opt::loop_fission_detail
