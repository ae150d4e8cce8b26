#include "codegen/partition_loops.h"

#include <algorithm>
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

namespace cot::codegen {

namespace {

// A prologue or epilogue runs at most kMaxEdge iterations; loops of fewer than kMinTrips are
// left alone (the C++ compiler unrolls them, and copies of their bodies would not pay).
constexpr int64_t kMaxEdge = 8;
constexpr int64_t kMinTrips = 32;

// a * index + c, for the index of the loop being partitioned.
struct Linear {
  int64_t a = 0, c = 0;
};

bool is_comparison(Prim p) {
  return p == Prim::Lt || p == Prim::Le || p == Prim::Gt || p == Prim::Ge || p == Prim::Eq ||
         p == Prim::Ne;
}

// `d op 0` for d = a * index + c: a test of the loop's index.
struct Test {
  Prim op = Prim::Lt;
  Linear d;

  bool at(int64_t i) const {
    const __int128 v = static_cast<__int128>(d.a) * i + d.c;
    switch (op) {
      case Prim::Lt:
        return v < 0;
      case Prim::Le:
        return v <= 0;
      case Prim::Gt:
        return v > 0;
      case Prim::Ge:
        return v >= 0;
      case Prim::Eq:
        return v == 0;
      default:
        return v != 0;
    }
  }
  // The index where an equality holds, if it holds at one.
  std::optional<int64_t> root() const {
    if (d.a == 0 || static_cast<__int128>(d.c) % d.a != 0) return std::nullopt;
    const __int128 r = -static_cast<__int128>(d.c) / d.a;
    if (r < INT64_MIN || r > INT64_MAX) return std::nullopt;
    return static_cast<int64_t>(r);
  }
  // Where the value changes in (lo, hi): the first index with a value other than the one before.
  void switches(int64_t lo, int64_t hi, std::vector<int64_t>& out) const {
    if (op == Prim::Eq || op == Prim::Ne) {
      if (auto r = root()) {
        if (*r > lo && *r < hi) out.push_back(*r);
        if (*r >= lo && *r < hi - 1) out.push_back(*r + 1);
      }
      return;
    }
    const bool first = at(lo);
    if (at(hi - 1) == first) return;  // linear, so monotone: one value throughout
    int64_t same = lo, other = hi - 1;
    while (other - same > 1) {
      const int64_t mid = same + (other - same) / 2;
      (at(mid) == first ? same : other) = mid;
    }
    out.push_back(other);
  }
  // Its value on [lo, hi) (lo < hi), if it has one.
  std::optional<bool> on(int64_t lo, int64_t hi) const {
    if (op == Prim::Eq || op == Prim::Ne) {
      auto r = root();
      if (r && *r >= lo && *r < hi && hi - lo > 1) return std::nullopt;
      return at(lo);
    }
    if (at(lo) != at(hi - 1)) return std::nullopt;
    return at(lo);
  }
};

bool innermost(const Body& body) {
  for (const Stmt& s : body) {
    if (std::holds_alternative<For>(s.op) || std::holds_alternative<Forever>(s.op)) return false;
    if (const auto* i = std::get_if<If>(&s.op);
        i != nullptr && (!innermost(i->then_body) || !innermost(i->else_body))) {
      return false;
    }
  }
  return true;
}

// What the body of the loop over `index` knows of its locals: the i64 locals that are linear in
// the index (declared once, never assigned), and the locals it assigns.
class LoopFacts {
 public:
  LoopFacts(const LoopFunction& fn, LocalId index, const Body& body) : index_(index) {
    count(body);
    learn(fn, body);
  }

  std::optional<Linear> linear(const ExprP& e) const { return of_index(form(e)); }
  std::optional<Test> test(const ExprP& e) const {
    if (!e || e->kind != Expr::Kind::Prim || !is_comparison(e->prim) || e->args.size() != 2) {
      return std::nullopt;
    }
    auto x = form(e->args[0]), y = form(e->args[1]);
    if (!x || !y) return std::nullopt;
    auto d = of_index(add_forms(std::move(*x), *y, -1));
    if (!d) return std::nullopt;
    return Test{e->prim, *d};
  }
  // A bool local whose value, once known to be a literal, stands for every read of it.
  bool single_valued(LocalId l) const {
    auto it = declared_.find(l);
    return it != declared_.end() && it->second == 1 && !assigned_.contains(l);
  }

 private:
  // The index itself, or a local linear in it.
  std::optional<LinearForm> local_form(LocalId l) const {
    if (l == index_) return LinearForm{{{index_, 1}}, 0};
    auto it = linear_.find(l);
    if (it == linear_.end()) return std::nullopt;
    LinearForm f{{}, it->second.c};
    if (it->second.a != 0) f.coef[index_] = it->second.a;
    return f;
  }
  std::optional<LinearForm> form(const ExprP& e) const {
    return linear_form(e, [this](LocalId l) { return local_form(l); });
  }
  // a * index + c, when the form names nothing else.
  std::optional<Linear> of_index(const std::optional<LinearForm>& f) const {
    if (!f) return std::nullopt;
    auto it = f->coef.find(index_);
    if (f->coef.size() > (it == f->coef.end() ? 0u : 1u)) return std::nullopt;
    return Linear{it == f->coef.end() ? 0 : it->second, f->c};
  }
  void count(const Body& body) {
    for (const Stmt& s : body) {
      if (const auto* d = std::get_if<Declare>(&s.op)) ++declared_[d->local];
      if (const auto* c = std::get_if<CheckedInt>(&s.op)) ++declared_[c->local];
      if (const auto* a = std::get_if<Assign>(&s.op)) assigned_.insert(a->local);
      for_each_body(s, [&](const Body& b) { count(b); });
    }
  }
  // In statement order, so a local's value may use those declared before it.
  void learn(const LoopFunction& fn, const Body& body) {
    for (const Stmt& s : body) {
      std::optional<Linear> value;
      LocalId l = -1;
      if (const auto* d = std::get_if<Declare>(&s.op)) {
        l = d->local;
        value = linear(d->value);
      } else if (const auto* c = std::get_if<CheckedInt>(&s.op)) {
        l = c->local;
        value =
            of_index(linear_form(c->prim, c->args, [this](LocalId v) { return local_form(v); }));
      }
      const Local* info = l >= 0 ? &fn.locals.at(static_cast<size_t>(l)) : nullptr;
      if (value && info->type == Scalar::I64 && !info->is_mask && !info->is_pointer &&
          single_valued(l)) {
        linear_[l] = *value;
      }
      for_each_body(s, [&](const Body& b) { learn(fn, b); });
    }
  }

  LocalId index_;
  std::map<LocalId, int> declared_;
  std::set<LocalId> assigned_;
  std::map<LocalId, Linear> linear_;
};

void tests_in(const ExprP& e, const LoopFacts& facts, std::vector<Test>& out) {
  if (!e) return;
  if (auto t = facts.test(e)) {
    out.push_back(*t);
    return;
  }
  for (const ExprP& a : e->args) tests_in(a, facts, out);
}

void tests_in(const Body& body, const LoopFacts& facts, std::vector<Test>& out) {
  for (const Stmt& s : body) {
    for_each_expr(s, [&](const ExprP& e) { tests_in(e, facts, out); });
    for_each_body(s, [&](const Body& b) { tests_in(b, facts, out); });
  }
}

// The loop's body for the indices [lo, hi): each test with one value there becomes that
// literal, and a branch on a literal keeps only the branch taken.
class Specializer {
 public:
  Specializer(const LoopFunction& fn, const LoopFacts& facts, int64_t lo, int64_t hi)
      : fn_(fn), facts_(facts), lo_(lo), hi_(hi) {}

  Body body(const Body& b) {
    Body out;
    out.reserve(b.size());
    for (const Stmt& s : b) out.push_back(stmt(s));
    return out;
  }

 private:
  ExprP expr(const ExprP& e) {
    if (!e) return e;
    if (e->kind == Expr::Kind::Local) {
      auto it = known_.find(e->local);
      return it == known_.end() ? e : it->second;
    }
    if (auto t = facts_.test(e)) {
      if (auto v = t->on(lo_, hi_)) return lit_bool(*v);
    }
    std::vector<ExprP> args;
    args.reserve(e->args.size());
    bool changed = false;
    for (const ExprP& a : e->args) {
      args.push_back(expr(a));
      changed = changed || args.back() != a;
    }
    return changed ? with_operands(e, std::move(args)) : e;
  }

  Stmt stmt(const Stmt& s) {
    Stmt out = s;
    for_each_expr(out, [&](ExprP& e) { e = expr(e); });
    if (auto* d = std::get_if<Declare>(&out.op)) {
      const Local& info = fn_.locals.at(static_cast<size_t>(d->local));
      if (info.type == Scalar::Bool && !info.is_mask && !info.is_pointer && as_bool(d->value) &&
          facts_.single_valued(d->local)) {
        known_[d->local] = d->value;
      }
    }
    if (auto* i = std::get_if<If>(&out.op); i != nullptr && as_bool(i->cond)) {
      // Only the branch taken, in its own block still (its declarations keep their scope).
      if (!*as_bool(i->cond)) i->then_body = std::move(i->else_body);
      i->else_body.clear();
      i->cond = lit_bool(true);
    }
    for_each_body(out, [&](Body& b) { b = body(b); });
    return out;
  }

  const LoopFunction& fn_;
  const LoopFacts& facts_;
  int64_t lo_, hi_;
  std::map<LocalId, ExprP> known_;  // bool locals declared to a literal
};

// The loop as the pieces it runs as (itself when nothing in its body tests its index).
void partition(const LoopFunction& fn, const For& f, Body& out) {
  const auto begin = as_i64(f.begin), end = as_i64(f.end);
  int64_t trips = 0;
  if (!begin || !end || __builtin_sub_overflow(*end, *begin, &trips) || trips < kMinTrips) {
    out.push_back(Stmt{f});
    return;
  }
  const LoopFacts facts(fn, f.var, f.body);
  std::vector<Test> tests;
  tests_in(f.body, facts, tests);
  if (tests.empty()) {
    out.push_back(Stmt{f});
    return;
  }
  // The steady state [lo, hi): past every change of a test near the start, before every change
  // near the end. (trips > 2 kMaxEdge, so no change is near both.)
  int64_t lo = *begin, hi = *end;
  std::vector<int64_t> changes;
  for (const Test& t : tests) t.switches(*begin, *end, changes);
  for (int64_t p : changes) {
    if (p - *begin <= kMaxEdge) lo = std::max(lo, p);
    if (*end - p <= kMaxEdge) hi = std::min(hi, p);
  }
  for (const auto& [from, to] : {std::pair{*begin, lo}, std::pair{lo, hi}, std::pair{hi, *end}}) {
    if (from >= to) continue;
    For piece = f;
    piece.begin = lit_i64(from);
    piece.end = lit_i64(to);
    piece.body = Specializer(fn, facts, from, to).body(f.body);
    out.push_back(Stmt{std::move(piece)});
  }
}

Body partition_body(const LoopFunction& fn, const Body& body) {
  Body out;
  out.reserve(body.size());
  for (const Stmt& s : body) {
    if (const auto* f = std::get_if<For>(&s.op)) {
      if (innermost(f->body)) {
        partition(fn, *f, out);
        continue;
      }
      For g = *f;
      g.body = partition_body(fn, f->body);
      out.push_back(Stmt{std::move(g)});
      continue;
    }
    Stmt t = s;
    if (auto* i = std::get_if<If>(&t.op)) {
      i->then_body = partition_body(fn, i->then_body);
      i->else_body = partition_body(fn, i->else_body);
    } else if (auto* l = std::get_if<Forever>(&t.op)) {
      l->body = partition_body(fn, l->body);
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace

LoopFunction partition_loops(LoopFunction fn) {
  fn.body = partition_body(fn, fn.body);
  return fn;
}

}  // namespace cot::codegen
