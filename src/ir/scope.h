// The regions enclosing a point of a walk over the Core IR, outermost first, and the index
// facts that hold there. ir::Rewriter and ir::Visitor keep one up to date (ir/rewriter.h); the
// facts are computed when first asked for and extended, not recomputed, as the walk goes deeper
// (docs/design.md §4, "Walking the IR").
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "ir/index_facts.h"
#include "ir/ir.h"
#include "ir/regions.h"

namespace cot::ir {

class Scope {
 public:
  // The function body's frame is the outermost.
  explicit Scope(const Function& f) : f_(&f), frames_(1) {}

  void push(const RegionFrame& frame) { frames_.push_back(frame); }
  void pop() {
    frames_.pop_back();
    while (!marks_.empty() && marks_.size() > frames_.size()) {
      facts_.truncate(marks_.back());
      marks_.pop_back();
    }
  }

  // Outermost first; the first is the function body's.
  const std::vector<RegionFrame>& frames() const { return frames_; }
  size_t depth() const { return frames_.size(); }
  const RegionFrame& innermost() const { return frames_.back(); }

  // The facts that hold here: size variables >= 0, then every enclosing frame's
  // (IndexFacts::add_frame), the same as ir::facts_of(f, frames()).
  const IndexFacts& facts() const {
    if (marks_.empty()) facts_.add_sizes(*f_);
    while (marks_.size() < frames_.size()) {
      marks_.push_back(facts_.mark());
      facts_.add_frame(*f_, frames_[marks_.size() - 1]);
    }
    return facts_;
  }

 private:
  const Function* f_;
  std::vector<RegionFrame> frames_;
  // marks_[k]: the facts' size before frame k's were added; facts_ holds the facts of the
  // first marks_.size() frames.
  mutable std::vector<std::pair<size_t, size_t>> marks_;
  mutable IndexFacts facts_;
};

// Calls fn(block) for every region of `s`, in the order of for_each_region_in, with the
// region's frame pushed on `scope`: the recursion of a walk that keeps its own Scope.
template <class StmtT, class Fn>
void for_each_region_scoped(Scope& scope, StmtT& s, Fn&& fn) {
  for_each_region_in(s, [&](const RegionFrame& frame, auto& b) {
    scope.push(frame);
    fn(b);
    scope.pop();
  });
}

}  // namespace cot::ir
