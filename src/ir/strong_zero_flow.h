// Where a function's strong zeros (docs/language.md §5.6) can be: an over-approximation, by a
// fixpoint over the statements (a loop's state may become one in a later iteration). The
// native backend keeps masks only where this says one can arise (codegen/lower.cpp); the
// interpreter keeps them dynamically and needs no analysis.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.h"

namespace cot::ir {

struct StrongZeroFlow {
  // Indexed by VarId. `whole`: the value itself may be a strong zero (a scalar, or a tensor a
  // false guard zeroed). `elems`: a tensor some of whose elements may be strong zeros (built by
  // a generator, a sum, an accum or a loop from values that may be).
  std::vector<uint8_t> whole, elems;
  // Indexed by VarId: the mask may change a value the function computes. A strong zero and
  // an ordinary 0 differ only as a factor of a product with something infinite or NaN, as a
  // dividend over 0 or NaN, and in what a mask flows into (sums, ifs, guards, loops, tuples,
  // reads of what it is stored in); elsewhere (the function's result, exp, a comparison, z * z)
  // it is not seen. For a tensor: the mask of some element it holds may be seen. A tensor
  // whose masks nobody sees needs no marks.
  std::vector<uint8_t> read;

  bool may_be_whole(VarId v) const { return at(whole, v); }
  bool may_have_elems(VarId v) const { return at(elems, v); }
  bool may_be_read(VarId v) const { return at(read, v); }  // its mask may be seen
  // An element read from v may be a strong zero.
  bool element_may_be(VarId v) const { return may_be_whole(v) || may_have_elems(v); }

 private:
  static bool at(const std::vector<uint8_t>& xs, VarId v) {
    return v >= 0 && static_cast<size_t>(v) < xs.size() && xs[static_cast<size_t>(v)] != 0;
  }
};

// With `results_seen`, the function's results count as read: a caller that inlines the
// function may see their masks (docs/language.md §5.6: a call keeps its result's strong zeros),
// as only the native entry point's caller does not.
StrongZeroFlow strong_zero_flow(const Function& f, bool results_seen = false);

}  // namespace cot::ir
