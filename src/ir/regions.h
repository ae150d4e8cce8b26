// The nested regions (blocks) of a statement, in a fixed order.
#pragma once

#include <type_traits>
#include <variant>

#include "ir/ir.h"

namespace cot::ir {

// Calls fn(block) for every region of a statement (a while-loop's condition before its body,
// an if's then-branch before its else-branch). Works on const and non-const statements.
template <class StmtT, class Fn>
void for_each_region(StmtT& s, Fn&& fn) {
  std::visit(
      [&](auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, GenOp> || std::is_same_v<T, ReduceOp> ||
                      std::is_same_v<T, GuardOp> || std::is_same_v<T, AccumOp>) {
          fn(o.body);
        } else if constexpr (std::is_same_v<T, LoopOp>) {
          if (o.is_while) fn(o.cond);
          fn(o.body);
        } else if constexpr (std::is_same_v<T, IfOp>) {
          fn(o.then_branch);
          fn(o.else_branch);
        }
      },
      s.op);
}

}  // namespace cot::ir
