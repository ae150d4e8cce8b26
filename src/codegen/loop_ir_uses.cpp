#include "codegen/loop_ir_uses.h"

#include <memory>
#include <utility>
#include <variant>
#include <vector>

namespace cot::codegen {

ExprP substitute(const ExprP& e, const std::map<LocalId, ExprP>& with) {
  if (!e) return e;
  if (e->kind == Expr::Kind::Local) {
    auto it = with.find(e->local);
    return it == with.end() ? e : it->second;
  }
  bool changed = false;
  std::vector<ExprP> args;
  for (const ExprP& a : e->args) {
    args.push_back(substitute(a, with));
    changed = changed || args.back() != a;
  }
  if (!changed) return e;
  auto copy = std::make_shared<Expr>(*e);
  copy->args = std::move(args);
  return copy;
}

// The scalar locals and pointers `b` reads.
std::set<LocalId> reads_of(const Body& b) {
  std::set<LocalId> out;
  each_stmt(b, [&](const Stmt& s) {
    for_each_expr(s, [&](const ExprP& e) {
      each_expr_node(e, [&](const Expr& x) {
        if (x.kind == Expr::Kind::Local || x.kind == Expr::Kind::Load) out.insert(x.local);
      });
    });
    if (const auto* c = std::get_if<Copy>(&s.op)) out.insert(c->src);
    if (const auto* v = std::get_if<View>(&s.op)) out.insert(v->base);
  });
  return out;
}

// The pointers `b` writes through or allocates.
std::set<LocalId> written_buffers(const Body& b) {
  std::set<LocalId> out;
  each_stmt(b, [&](const Stmt& s) {
    if (const auto* st = std::get_if<Store>(&s.op)) out.insert(st->pointer);
    if (const auto* c = std::get_if<Copy>(&s.op)) out.insert(c->dst);
    if (const auto* f = std::get_if<Fill>(&s.op)) out.insert(f->dst);
    if (const auto* m = std::get_if<Combine>(&s.op)) out.insert(m->dst);
    if (const auto* a = std::get_if<Alloc>(&s.op)) out.insert(a->pointer);
    if (const auto* v = std::get_if<View>(&s.op)) out.insert(v->pointer);
  });
  return out;
}

}  // namespace cot::codegen
