// Walking the loop IR: the expressions a statement holds and the bodies nested in it, for the
// passes that rewrite or inspect every expression (partition_loops, recompute_tables). `S` is
// Stmt or const Stmt; `f` gets each ExprP (or Body) by reference of the same constness.
#pragma once

#include <type_traits>
#include <variant>

#include "codegen/loop_ir.h"

namespace cot::codegen {

// Every expression of the statement itself, not those of its nested bodies (some may be null:
// a declaration without a value).
template <class S, class F>
void for_each_expr(S& s, F&& f) {
  std::visit(
      [&](auto& op) {
        using T = std::decay_t<decltype(op)>;
        if constexpr (std::is_same_v<T, Declare> || std::is_same_v<T, Assign>) {
          f(op.value);
        } else if constexpr (std::is_same_v<T, Store>) {
          f(op.index);
          f(op.value);
        } else if constexpr (std::is_same_v<T, CheckedInt>) {
          for (auto& a : op.args) f(a);
        } else if constexpr (std::is_same_v<T, For>) {
          f(op.begin);
          f(op.end);
        } else if constexpr (std::is_same_v<T, If>) {
          f(op.cond);
        } else if constexpr (std::is_same_v<T, Fail>) {
          for (auto& a : op.values) f(a);
        } else if constexpr (std::is_same_v<T, Alloc> || std::is_same_v<T, StackGrow>) {
          f(op.count);
        } else if constexpr (std::is_same_v<T, View>) {
          f(op.offset);
        } else if constexpr (std::is_same_v<T, Copy> || std::is_same_v<T, Combine>) {
          f(op.dst_offset);
          f(op.src_offset);
          f(op.count);
        } else if constexpr (std::is_same_v<T, Fill>) {
          f(op.offset);
          f(op.count);
          f(op.value);
        }
      },
      s.op);
}

// The bodies nested directly in the statement (a loop's, an if's two branches).
template <class S, class F>
void for_each_body(S& s, F&& f) {
  if (auto* i = std::get_if<If>(&s.op)) {
    f(i->then_body);
    f(i->else_body);
  } else if (auto* l = std::get_if<For>(&s.op)) {
    f(l->body);
  } else if (auto* w = std::get_if<Forever>(&s.op)) {
    f(w->body);
  }
}

}  // namespace cot::codegen
