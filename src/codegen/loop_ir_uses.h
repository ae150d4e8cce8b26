// What loop-IR code uses and writes, and substitution of locals: the questions a schedule pass
// asks of a loop body before it moves it (interchange_sums.h).
#pragma once

#include <map>
#include <set>

#include "codegen/loop_ir.h"
#include "codegen/loop_ir_walk.h"

namespace cot::codegen {

// `e` with the locals of `with` replaced by their expressions.
ExprP substitute(const ExprP& e, const std::map<LocalId, ExprP>& with);

// Every node of `e` (none when e is null), parents first.
template <class F>
void each_expr_node(const ExprP& e, F&& f) {
  if (!e) return;
  f(*e);
  for (const ExprP& a : e->args) each_expr_node(a, f);
}

// Every statement of `b` and of the bodies nested in it.
template <class F>
void each_stmt(const Body& b, F&& f) {
  for (const Stmt& s : b) {
    f(s);
    for_each_body(s, [&](const Body& inner) { each_stmt(inner, f); });
  }
}

// The scalar locals and pointers `b` reads.
std::set<LocalId> reads_of(const Body& b);

// The pointers `b` writes through or allocates.
std::set<LocalId> written_buffers(const Body& b);

}  // namespace cot::codegen
