// What is known about the integer variables in scope at a point of the Core IR: index-variable
// ranges, size variables >= 0, the affine conjuncts of enclosing guards and the ranges of loop
// counters. Passes prove reads in range and guards true with it, by Fourier-Motzkin
// (docs/design.md §4, "Walking the IR").
#pragma once

#include <utility>
#include <vector>

#include "index/affine.h"
#include "index/predicate.h"
#include "ir/ir.h"
#include "ir/regions.h"

namespace cot::ir {

class IndexFacts {
 public:
  void add(const Affine& ge0) { constraints_.push_back(ge0); }
  // 0 <= v < extent (only v >= 0 when the extent is not affine).
  void add_range(const Function& f, VarId v, const SizeExpr& extent);
  // The affine conjuncts of a predicate that holds (disjunctions and atoms are skipped; a false
  // one adds -1 >= 0, under which everything is proved: the region never runs).
  void add_pred(const Pred& p);
  // Every size variable's i64 variable is >= 0.
  void add_sizes(const Function& f);
  // The facts of a region's frame: its index ranges, its guard, its loop counter's range.
  void add_frame(const Function& f, const RegionFrame& frame);
  // true only when `c >= 0` follows from the facts.
  bool proves(const Affine& c) const;
  // true only when 0 <= a < extent follows from the facts.
  bool proves_in_range(const Function& f, const Affine& a, const SizeExpr& extent) const;
  // The constraints, each `c >= 0`, for the Fourier-Motzkin queries a pass makes itself.
  const std::vector<Affine>& constraints() const { return constraints_; }

  // How many facts there are; truncate(mark) forgets those added since (Scope::pop).
  std::pair<size_t, size_t> mark() const { return {constraints_.size(), ranges_.size()}; }
  void truncate(std::pair<size_t, size_t> m) {
    constraints_.resize(m.first);
    ranges_.resize(m.second);
  }

 private:
  std::vector<Affine> constraints_;
  std::vector<std::pair<VarId, SizeExpr>> ranges_;
};

// The facts that hold inside the innermost of `frames` (size variables, then each frame's).
IndexFacts facts_of(const Function& f, const std::vector<RegionFrame>& frames);

}  // namespace cot::ir
