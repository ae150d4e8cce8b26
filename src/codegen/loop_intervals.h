// Interval analysis of i64 loop-IR expressions (docs/design.md §10): what a pass that knows the
// ranges of some locals (a loop's index over one piece of its range, locals declared from it)
// can fold. Used by split_windows to simplify each piece of a split loop.
#pragma once

#include <cstdint>
#include <map>
#include <optional>

#include "codegen/loop_ir.h"

namespace cot::codegen {

// [lo, hi], both included.
struct Range {
  int64_t lo = 0, hi = 0;
};

class LoopIntervals {
 public:
  void set(LocalId l, Range r) { ranges_[l] = r; }
  void forget(LocalId l) { ranges_.erase(l); }

  // The values an i64 expression may take, from literals, the locals' ranges, + - * negation,
  // max and min; nullopt when unknown or when a bound overflows.
  std::optional<Range> of(const ExprP& e) const;
  // `e` with what the ranges decide folded: a local of one value (a literal), max and min of i64
  // values whose ranges do not overlap (the larger one, the smaller one), i64 comparisons with one
  // value (a literal), and the logic and selects over those literals.
  ExprP fold(const ExprP& e) const;
  // Whether prim(args) on i64 (+, -, * or negation) cannot overflow.
  bool fits(Prim p, const std::vector<ExprP>& args) const;

 private:
  std::map<LocalId, Range> ranges_;
};

}  // namespace cot::codegen
