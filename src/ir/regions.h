// The nested regions (blocks) of a statement, in a fixed order.
#pragma once

#include <type_traits>
#include <variant>
#include <vector>

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

// The index variables and the body of a gen or reduce statement; nullptr for other statements.
inline const std::vector<IndexVar>* index_vars_of(const Stmt& s) {
  if (const auto* g = s.as<GenOp>()) return &g->ivars;
  if (const auto* r = s.as<ReduceOp>()) return &r->ivars;
  return nullptr;
}
inline Block* index_body_of(Stmt& s) {
  if (auto* g = s.as<GenOp>()) return &g->body;
  if (auto* r = s.as<ReduceOp>()) return &r->body;
  return nullptr;
}
inline const Block* index_body_of(const Stmt& s) {
  return index_body_of(const_cast<Stmt&>(s));
}

}  // namespace cot::ir
