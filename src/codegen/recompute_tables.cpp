#include "codegen/recompute_tables.h"

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <variant>
#include <vector>

#include "codegen/expr.h"
#include "codegen/linear_form.h"
#include "codegen/loop_ir_walk.h"
#include "codegen/memory_plan.h"

namespace cot::codegen {

namespace {

// The linear form of an offset, each local a variable of its own.
std::optional<LinearForm> linear(const ExprP& e) {
  return linear_form(e, [](LocalId l) { return LinearForm{{{l, 1}}, 0}; });
}

// Every pointer a statement (not its nested bodies) names, and whether it writes through it.
template <class F>
void pointers_of(const Stmt& s, F&& f) {
  std::function<void(const ExprP&)> loads = [&](const ExprP& e) {
    if (!e) return;
    if (e->kind == Expr::Kind::Load || e->kind == Expr::Kind::Local) f(e->local, false);
    for (const ExprP& a : e->args) loads(a);
  };
  for_each_expr(s, loads);
  if (const auto* st = std::get_if<Store>(&s.op)) {
    f(st->pointer, true);
  } else if (const auto* v = std::get_if<View>(&s.op)) {
    f(v->base, false);
  } else if (const auto* c = std::get_if<Copy>(&s.op)) {
    f(c->dst, true);
    f(c->src, false);
  } else if (const auto* m = std::get_if<Combine>(&s.op)) {
    f(m->dst, true);
    f(m->src, false);
  } else if (const auto* l = std::get_if<Fill>(&s.op)) {
    f(l->dst, true);
  } else if (const auto* w = std::get_if<Swap>(&s.op)) {
    f(w->a, true);
    f(w->b, true);
  } else if (const auto* g = std::get_if<StackGrow>(&s.op)) {
    f(g->pointer, true);
  }
}

template <class F>
void each_body(Body& b, F&& f) {
  f(b);
  for (Stmt& s : b) for_each_body(s, [&](Body& inner) { each_body(inner, f); });
}

// What the whole function does with its pointers: how often each is named, and which buffer
// each may point into (views share their base's; swapped state buffers share each other's).
struct PointerFacts {
  std::map<LocalId, int> uses;
  std::map<LocalId, LocalId> base;  // a view's base
  std::set<LocalId> swapped;

  explicit PointerFacts(LoopFunction& fn) {
    for (const Port& p : fn.inputs) ++uses[p.pointer];
    for (const Port& p : fn.outputs) ++uses[p.pointer];
    each_body(fn.body, [&](Body& b) {
      for (const Stmt& s : b) {
        pointers_of(s, [&](LocalId p, bool) { ++uses[p]; });
        if (const auto* v = std::get_if<View>(&s.op)) base[v->pointer] = v->base;
        if (const auto* w = std::get_if<Swap>(&s.op)) {
          swapped.insert(w->a);
          swapped.insert(w->b);
        }
      }
    });
  }
  LocalId root(LocalId p) const {
    for (int guard = 0; guard < 1000; ++guard) {
      auto it = base.find(p);
      if (it == base.end()) return p;
      p = it->second;
    }
    return p;
  }
};

// A perfect nest of loops over [0, E_k) whose innermost body declares scalars and stores one
// value into `table` at the row-major offset of its loop variables.
struct Producer {
  LocalId table = -1;
  std::vector<LocalId> vars;
  std::vector<int64_t> extents, strides;
  ExprP value;  // declarations substituted
  std::set<LocalId> reads;
};

// The expression with the locals of `defs` replaced by their values; null when it holds
// anything but literals, locals, loads and real additions, subtractions and multiplications
// (i64 arithmetic in indices too), or more than `ops` of those real operations.
ExprP inline_defs(const ExprP& e, const std::map<LocalId, ExprP>& defs, int& ops) {
  if (!e) return nullptr;
  switch (e->kind) {
    case Expr::Kind::Lit:
      return e;
    case Expr::Kind::Local: {
      auto it = defs.find(e->local);
      return it == defs.end() ? e : it->second;
    }
    case Expr::Kind::Load:
    case Expr::Kind::Prim:
      break;
    default:
      return nullptr;
  }
  if (e->kind == Expr::Kind::Prim) {
    const bool real = e->type == Scalar::F64 || e->type == Scalar::F32;
    const bool arith = e->prim == Prim::Add || e->prim == Prim::Sub || e->prim == Prim::Mul ||
                       e->prim == Prim::Neg;
    if (!arith || (!real && e->type != Scalar::I64)) return nullptr;
    if (real && ++ops > kMaxTableOps) return nullptr;
  }
  Expr copy = *e;
  for (ExprP& a : copy.args) {
    a = inline_defs(a, defs, ops);
    if (!a) return nullptr;
  }
  return std::make_shared<const Expr>(std::move(copy));
}

std::optional<Producer> as_producer(const LoopFunction& fn, const Stmt& s) {
  Producer p;
  const Body* body = nullptr;
  for (const Stmt* at = &s;;) {
    const auto* f = std::get_if<For>(&at->op);
    if (f == nullptr) break;
    auto b = as_i64(f->begin), e = as_i64(f->end);
    if (!b || !e || *b != 0 || *e <= 0) return std::nullopt;
    p.vars.push_back(f->var);
    p.extents.push_back(*e);
    body = &f->body;
    if (f->body.size() != 1) break;
    at = &f->body[0];
  }
  if (body == nullptr || body->empty()) return std::nullopt;
  std::map<LocalId, ExprP> defs;
  int ops = 0;
  for (size_t k = 0; k + 1 < body->size(); ++k) {
    const auto* d = std::get_if<Declare>(&(*body)[k].op);
    if (d == nullptr || !d->value || fn.locals.at(static_cast<size_t>(d->local)).is_pointer ||
        fn.locals[static_cast<size_t>(d->local)].is_mask) {
      return std::nullopt;
    }
    ExprP v = inline_defs(d->value, defs, ops);
    if (!v) return std::nullopt;
    defs[d->local] = v;
  }
  const auto* st = std::get_if<Store>(&body->back().op);
  if (st == nullptr) return std::nullopt;
  p.table = st->pointer;
  p.value = inline_defs(st->value, defs, ops);
  if (!p.value) return std::nullopt;
  // The offset: sum v_k S_k, S row-major (strides distinct, so a read's offset splits one way).
  p.strides.assign(p.extents.size(), 1);
  int64_t bytes = 0;
  for (size_t k = p.extents.size(); k-- > 1;) {
    if (__builtin_mul_overflow(p.strides[k], p.extents[k], &p.strides[k - 1])) return std::nullopt;
  }
  const Local& table = fn.locals.at(static_cast<size_t>(p.table));
  if (p.value->type != table.type) return std::nullopt;  // a read would skip a conversion
  if (__builtin_mul_overflow(p.strides[0], p.extents[0], &bytes) ||
      __builtin_mul_overflow(bytes, element_bytes(table.type), &bytes) || bytes < kMinTableBytes) {
    return std::nullopt;
  }
  ExprP index = inline_defs(st->index, defs, ops);
  auto offset = linear(index);
  if (!offset || offset->c != 0 || offset->coef.size() != p.vars.size()) return std::nullopt;
  for (size_t k = 0; k < p.vars.size(); ++k) {
    auto it = offset->coef.find(p.vars[k]);
    if (it == offset->coef.end() || it->second != p.strides[k]) return std::nullopt;
    if (p.extents[k] == 1) return std::nullopt;  // equal strides
  }
  std::function<void(const ExprP&)> reads = [&](const ExprP& e) {
    if (e->kind == Expr::Kind::Load) p.reads.insert(e->local);
    if (e->kind == Expr::Kind::Local &&
        std::find(p.vars.begin(), p.vars.end(), e->local) == p.vars.end() &&
        fn.locals.at(static_cast<size_t>(e->local)).is_pointer) {
      p.reads.insert(e->local);
    }
    for (const ExprP& a : e->args) reads(a);
  };
  reads(p.value);
  if (p.reads.contains(p.table)) return std::nullopt;
  return p;
}

// The scalar locals an expression reads.
void scalars_of(const LoopFunction& fn, const ExprP& e, std::set<LocalId>& out) {
  if (e->kind == Expr::Kind::Local && !fn.locals.at(static_cast<size_t>(e->local)).is_pointer) {
    out.insert(e->local);
  }
  for (const ExprP& a : e->args) scalars_of(fn, a, out);
}

// Whether a statement of `b` (nested bodies included) assigns one of `locals`.
bool assigns(const Body& b, const std::set<LocalId>& locals) {
  bool hit = false;
  for (const Stmt& s : b) {
    const auto* a = std::get_if<Assign>(&s.op);
    hit = hit || (a != nullptr && locals.contains(a->local));
    for_each_body(s, [&](const Body& inner) { hit = hit || assigns(inner, locals); });
  }
  return hit;
}

// Rewrites the reads of the producer's table in the consumer into its element's value.
class Recompute {
 public:
  Recompute(const LoopFunction& fn, const Producer& p) : fn_(fn), p_(p) {}

  // false when some read's offset does not split into in-range indices of the nest.
  bool body(Body& b) {
    for (Stmt& s : b) {
      if (!stmt(s)) return false;
    }
    return true;
  }
  int replaced() const { return replaced_; }

 private:
  bool stmt(Stmt& s) {
    bool ok = true;
    for_each_expr(s, [&](ExprP& e) { ok = ok && expr(e); });
    auto* f = std::get_if<For>(&s.op);
    const auto b = f != nullptr ? as_i64(f->begin) : std::nullopt;
    const auto e = f != nullptr ? as_i64(f->end) : std::nullopt;
    if (b && e && *b < *e) ranges_[f->var] = {*b, *e - 1};
    for_each_body(s, [&](Body& inner) { ok = ok && body(inner); });
    if (f != nullptr) ranges_.erase(f->var);
    return ok;
  }

  bool expr(ExprP& e) {
    if (!e) return true;
    if (e->kind == Expr::Kind::Load && e->local == p_.table) {
      ExprP v = element(e->args[0]);
      if (!v) return false;
      e = v;
      ++replaced_;
      return true;
    }
    Expr copy = *e;
    bool changed = false;
    for (ExprP& a : copy.args) {
      ExprP before = a;
      if (!expr(a)) return false;
      changed = changed || a != before;
    }
    if (changed) e = std::make_shared<const Expr>(std::move(copy));
    return true;
  }

  // The element at `offset`: the offset as sum u_k S_k with 0 <= u_k < E_k (by the ranges of
  // the loops around the read), the value with the nest's variables replaced by the u_k.
  ExprP element(const ExprP& offset) {
    auto l = linear(offset);
    if (!l || l->c != 0) return nullptr;
    const size_t n = p_.vars.size();
    std::vector<ExprP> u(n, lit_i64(0));
    std::vector<int64_t> lo(n, 0), hi(n, 0);
    for (const auto& [v, a] : l->coef) {
      auto r = ranges_.find(v);
      if (r == ranges_.end()) return nullptr;
      size_t k = 0;
      while (k < n && p_.strides[k] != a) ++k;
      if (k == n) return nullptr;
      u[k] = add_i64(u[k], local(fn_, v));
      lo[k] += r->second.first;
      hi[k] += r->second.second;
    }
    for (size_t k = 0; k < n; ++k) {
      if (lo[k] < 0 || hi[k] >= p_.extents[k]) return nullptr;
    }
    std::map<LocalId, ExprP> at;
    for (size_t k = 0; k < n; ++k) at[p_.vars[k]] = u[k];
    int ops = 0;
    return inline_defs(p_.value, at, ops);
  }

  const LoopFunction& fn_;
  const Producer& p_;
  std::map<LocalId, std::pair<int64_t, int64_t>> ranges_;
  int replaced_ = 0;
};

// Whether the statements of `b` write through a pointer into a buffer of `roots`.
bool writes_into(const Body& b, const std::set<LocalId>& roots, const PointerFacts& facts) {
  bool hit = false;
  for (const Stmt& s : b) {
    pointers_of(
        s, [&](LocalId p, bool write) { hit = hit || (write && roots.contains(facts.root(p))); });
    for_each_body(s, [&](const Body& inner) { hit = hit || writes_into(inner, roots, facts); });
  }
  return hit;
}

// Whether a statement (nested bodies included) names the pointer.
bool mentions(const Stmt& s, LocalId pointer) {
  bool hit = false;
  pointers_of(s, [&](LocalId q, bool) { hit = hit || q == pointer; });
  for_each_body(s, [&](const Body& inner) {
    for (const Stmt& t : inner) hit = hit || mentions(t, pointer);
  });
  return hit;
}

// Tries the producer at b[at]; true when it was removed.
bool try_recompute(LoopFunction& fn, Body& b, size_t at) {
  auto p = as_producer(fn, b[at]);
  if (!p) return false;
  const PointerFacts facts(fn);
  if (facts.swapped.contains(p->table) || facts.base.contains(p->table)) return false;
  std::set<LocalId> roots;
  for (LocalId r : p->reads) {
    if (facts.swapped.contains(facts.root(r))) return false;
    roots.insert(facts.root(r));
  }
  // The readers: the statements after it up to the last that names the table.
  size_t last = at;
  for (size_t k = at + 1; k < b.size(); ++k) {
    if (mentions(b[k], p->table)) last = k;
  }
  if (last == at) return false;
  Body readers(b.begin() + static_cast<ptrdiff_t>(at) + 1,
               b.begin() + static_cast<ptrdiff_t>(last) + 1);
  std::set<LocalId> scalars;
  scalars_of(fn, p->value, scalars);
  if (writes_into(readers, roots, facts) || assigns(readers, scalars)) return false;
  Recompute rewrite(fn, *p);
  if (!rewrite.body(readers)) return false;
  // Every use of the table but the producer's store was one of the reads replaced.
  if (facts.uses.at(p->table) != rewrite.replaced() + 1) return false;
  std::move(readers.begin(), readers.end(), b.begin() + static_cast<ptrdiff_t>(at) + 1);
  b.erase(b.begin() + static_cast<ptrdiff_t>(at));
  std::erase_if(b, [&](const Stmt& s) {
    const auto* a = std::get_if<Alloc>(&s.op);
    return a != nullptr && a->pointer == p->table;
  });
  return true;
}

void recompute_in(LoopFunction& fn, Body& b) {
  for (size_t k = 0; k < b.size();) {
    if (try_recompute(fn, b, k)) {
      k = k > 0 ? k - 1 : 0;  // the table's allocation may have gone from before k
      continue;
    }
    for_each_body(b[k], [&](Body& inner) { recompute_in(fn, inner); });
    ++k;
  }
}

}  // namespace

LoopFunction recompute_tables(LoopFunction fn) {
  recompute_in(fn, fn.body);
  return fn;
}

}  // namespace cot::codegen
