#include "codegen/split_windows.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <variant>
#include <vector>

#include "codegen/expr.h"
#include "codegen/linear_form.h"
#include "codegen/loop_intervals.h"
#include "codegen/loop_ir_walk.h"

namespace cot::codegen {

namespace {

// More cut points than this is not a window's borders: the loop stays whole.
constexpr size_t kMaxCuts = 4;
// A window of at most this many points (bounds a constant apart) runs as a counted loop.
constexpr int64_t kMaxCounted = 16;

// What holds for a local throughout the function: declared once and never assigned, an i64
// value (not a pointer or mask), so its declared value stands for every read of it.
class Locals {
 public:
  explicit Locals(const LoopFunction& fn) : fn_(fn) { count(fn.body); }

  bool single_valued(LocalId l) const {
    const Local& info = fn_.locals.at(static_cast<size_t>(l));
    auto it = declared_.find(l);
    return info.type == Scalar::I64 && !info.is_pointer && !info.is_mask && it != declared_.end() &&
           it->second == 1 && !assigned_.contains(l);
  }

  // No declaration of `body` names a local declared elsewhere in the function, so the body
  // can join its enclosing block without one declaration meeting another.
  bool declares_unique_locals(const Body& body) const {
    return std::ranges::all_of(body, [this](const Stmt& s) {
      LocalId l{};
      if (const auto* d = std::get_if<Declare>(&s.op))
        l = d->local;
      else if (const auto* c = std::get_if<CheckedInt>(&s.op))
        l = c->local;
      else
        return true;
      auto it = declared_.find(l);
      return it != declared_.end() && it->second == 1;
    });
  }

 private:
  void count(const Body& body) {
    for (const Stmt& s : body) {
      if (const auto* d = std::get_if<Declare>(&s.op)) ++declared_[d->local];
      if (const auto* c = std::get_if<CheckedInt>(&s.op)) ++declared_[c->local];
      if (const auto* f = std::get_if<For>(&s.op)) ++declared_[f->var];
      if (const auto* a = std::get_if<Assign>(&s.op)) assigned_.insert(a->local);
      for_each_body(s, [&](const Body& b) { count(b); });
    }
  }

  const LoopFunction& fn_;
  std::map<LocalId, int> declared_;
  std::set<LocalId> assigned_;
};

// Linear forms of the single-valued locals declared so far, for bounds a constant apart.
class Forms {
 public:
  std::optional<LinearForm> of(const ExprP& e) const {
    return linear_form(e, [this](LocalId l) -> std::optional<LinearForm> {
      auto it = forms_.find(l);
      if (it != forms_.end()) return it->second;
      return LinearForm{{{l, 1}}, 0};
    });
  }
  void learn(LocalId l, const ExprP& value) {
    if (auto f = of(value)) forms_[l] = *f;
  }
  // b - a when it is a constant.
  std::optional<int64_t> difference(const ExprP& a, const ExprP& b) const {
    auto x = of(a), y = of(b);
    if (!x || !y) return std::nullopt;
    auto d = add_forms(*y, *x, -1);
    if (!d || !d->coef.empty()) return std::nullopt;
    return d->c;
  }

 private:
  std::map<LocalId, LinearForm> forms_;
};

// Where, in (begin, end), the max and min in the bounds of the loops inside loop `f` change
// side: each `max(x, y)` or `min(x, y)` with x - y = a * index + c (a != 0) picks the other
// operand from the first index where x - y >= 0 changes value. When a bound moves with the
// index, also where the i64 comparisons of the index alone in the body change value.
class Cuts {
 public:
  Cuts(const Locals& locals, const For& f, int64_t begin, int64_t end)
      : locals_(locals), index_(f.var), begin_(begin), end_(end) {
    scan(f.body);
    // The inner loops' bounds move with the index (a window or a triangle): the tests of the
    // index alone (the flag of the points a tightened bound skips, `r + 1 < d`) cut too, so a
    // piece where the bound is the inner loop's whole range runs a literal count.
    if (moves_) points_.insert(tested_.begin(), tested_.end());
  }
  const std::set<int64_t>& points() const { return points_; }

 private:
  void scan(const Body& body) {
    for (const Stmt& s : body) {
      if (const auto* d = std::get_if<Declare>(&s.op);
          d && d->value && locals_.single_valued(d->local)) {
        values_[d->local] = d->value;
        forms_.learn(d->local, d->value);
      }
      if (const auto* l = std::get_if<For>(&s.op)) {
        bound(l->begin);
        bound(l->end);
        for (const ExprP& e : {l->begin, l->end}) {
          auto f = forms_.of(e);
          moves_ = moves_ || (f && f->coef.contains(index_));
        }
      }
      for_each_expr(s, [&](const ExprP& e) { tests(e); });
      for_each_body(s, [&](const Body& b) { scan(b); });
    }
  }
  void bound(const ExprP& e) {
    if (!e) return;
    if (e->kind == Expr::Kind::Local) {
      auto it = values_.find(e->local);
      if (it != values_.end()) bound(it->second);
      return;
    }
    if (e->kind == Expr::Kind::Prim && (e->prim == Prim::Max || e->prim == Prim::Min) &&
        e->type == Scalar::I64 && e->args.size() == 2) {
      cut(e->args[0], e->args[1]);
    }
    for (const ExprP& a : e->args) bound(a);
  }
  // i64 comparisons x op y with x - y linear in the index alone.
  void tests(const ExprP& e) {
    if (!e) return;
    if (e->kind == Expr::Kind::Prim && e->args.size() == 2 && e->args[0]->type == Scalar::I64) {
      // x < y is not (x - y >= 0); x <= y is not (x - y - 1 >= 0); x > y is x - y - 1 >= 0.
      switch (e->prim) {
        case Prim::Lt:
        case Prim::Ge:
          cut(e->args[0], e->args[1], 0, &tested_);
          break;
        case Prim::Le:
        case Prim::Gt:
          cut(e->args[0], e->args[1], -1, &tested_);
          break;
        default:
          break;
      }
    }
    for (const ExprP& a : e->args) tests(a);
  }
  // The first index in (begin, end) where x - y + shift >= 0 changes value, into `out`.
  void cut(const ExprP& x, const ExprP& y, int64_t shift = 0, std::set<int64_t>* out = nullptr) {
    auto fx = forms_.of(x), fy = forms_.of(y);
    if (!fx || !fy) return;
    auto d = add_forms(*fx, *fy, -1);
    if (!d || d->coef.size() != 1 || !d->coef.contains(index_)) return;
    const __int128 a = d->coef.at(index_), c = __int128{d->c} + shift;
    // a > 0: a i + c >= 0 from i = ceil(-c / a); a < 0: up to floor(c / -a), so from one past.
    auto floor_div = [](__int128 n, __int128 k) {
      return n / k - ((n % k != 0) && ((n < 0) != (k < 0)));
    };
    const __int128 p = a > 0 ? -floor_div(c, a) : floor_div(c, -a) + 1;
    if (p > begin_ && p < end_) (out ? *out : points_).insert(static_cast<int64_t>(p));
  }

  const Locals& locals_;
  LocalId index_;
  int64_t begin_, end_;
  std::map<LocalId, ExprP> values_;
  Forms forms_;
  std::set<int64_t> points_;
  std::set<int64_t> tested_;  // where tests of the index change value
  bool moves_ = false;        // an inner loop's bound depends on the index
};

// Rewrites a body: splits the generator loops with window bounds, and inside a piece (`fold`)
// simplifies everything under the ranges known there.
class Splitter {
 public:
  Splitter(LoopFunction& fn, const Locals& locals) : fn_(fn), locals_(locals) {}

  Body body(const Body& b, LoopIntervals env, Forms forms, bool fold) {
    Body out;
    out.reserve(b.size());
    for (const Stmt& s : b) stmt(s, env, forms, fold, out);
    return out;
  }

 private:
  void stmt(const Stmt& s, LoopIntervals& env, Forms& forms, bool fold, Body& out) {
    Stmt t = s;
    if (fold) for_each_expr(t, [&](ExprP& e) { e = env.fold(e); });
    if (auto* f = std::get_if<For>(&t.op)) {
      loop(std::move(*f), env, forms, fold, out);
      return;
    }
    if (fold) {
      if (auto* c = std::get_if<CheckedInt>(&t.op); c && env.fits(c->prim, c->args)) {
        // The range proves it cannot overflow: a plain declaration.
        t.op = Declare{c->local, prim(c->prim, c->args)};
      }
      if (auto* a = std::get_if<Assign>(&t.op);
          a && a->value->kind == Expr::Kind::Local && a->value->local == a->local) {
        return;  // `flag = flag || false`, folded
      }
      if (auto* i = std::get_if<If>(&t.op); i && as_bool(i->cond)) {
        // Only the branch taken: spliced into the enclosing block, or in a block of its own
        // when one of its declarations could meet another of the same local there.
        Body taken = body(*as_bool(i->cond) ? i->then_body : i->else_body, env, forms, fold);
        if (locals_.declares_unique_locals(taken)) {
          for (Stmt& s : taken) out.push_back(std::move(s));
        } else if (!taken.empty()) {
          out.push_back(Stmt{If{lit_bool(true), std::move(taken), {}}});
        }
        return;
      }
    }
    if (auto* d = std::get_if<Declare>(&t.op); d && d->value && locals_.single_valued(d->local)) {
      if (auto r = env.of(d->value)) env.set(d->local, *r);
      forms.learn(d->local, d->value);
      // Its reads fold to the literal (they are all in this piece, after it).
      if (fold && as_i64(d->value)) return;
    }
    for_each_body(t, [&](Body& b) { b = body(b, env, forms, fold); });
    out.push_back(std::move(t));
  }

  void loop(For f, LoopIntervals& env, Forms& forms, bool fold, Body& out) {
    auto begin = as_i64(f.begin), end = as_i64(f.end);
    if (begin && end && *begin >= *end && fold) return;  // no iteration
    if (begin && end && f.independent) {
      const Cuts cuts(locals_, f, *begin, *end);
      if (!cuts.points().empty() && cuts.points().size() <= kMaxCuts) {
        std::vector<int64_t> at{*begin};
        at.insert(at.end(), cuts.points().begin(), cuts.points().end());
        at.push_back(*end);
        for (size_t k = 0; k + 1 < at.size(); ++k) {
          For piece = f;
          piece.begin = lit_i64(at[k]);
          piece.end = lit_i64(at[k + 1]);
          LoopIntervals inside = env;
          inside.set(f.var, Range{at[k], at[k + 1] - 1});
          piece.body = body(f.body, std::move(inside), forms, true);
          out.push_back(Stmt{std::move(piece)});
        }
        return;
      }
    }
    LoopIntervals inside = env;
    auto lo = env.of(f.begin), hi = env.of(f.end);
    if (lo && hi && lo->lo < hi->hi) {
      inside.set(f.var, Range{lo->lo, hi->hi - 1});
    } else {
      inside.forget(f.var);
    }
    const std::optional<int64_t> width = forms.difference(f.begin, f.end);
    if (fold && !begin && width && *width > 0 && *width <= kMaxCounted) {
      // A window of constant width: for t < width { i = begin + t; ... }, which the compiler
      // unrolls (empty when clipped to no point).
      const LocalId t = fn_.new_local("t", Scalar::I64);
      inside.set(t, Range{0, *width - 1});
      int64_t last = 0;
      if (lo && !__builtin_add_overflow(lo->hi, *width - 1, &last)) {
        inside.set(f.var, Range{lo->lo, last});
      } else {
        inside.forget(f.var);
      }
      const ExprP at = add_i64(f.begin, local(fn_, t));
      Body b{Stmt{Declare{f.var, at}}};
      Forms within = forms;
      within.learn(f.var, at);
      for (Stmt& s : body(f.body, inside, within, fold)) b.push_back(std::move(s));
      f.var = t;
      f.begin = lit_i64(0);
      f.end = lit_i64(*width);
      f.body = std::move(b);
      out.push_back(Stmt{std::move(f)});
      return;
    }
    f.body = body(f.body, std::move(inside), forms, fold);
    out.push_back(Stmt{std::move(f)});
  }

  LoopFunction& fn_;
  const Locals& locals_;
};

}  // namespace

LoopFunction split_windows(LoopFunction fn) {
  const Locals locals(fn);
  Splitter splitter(fn, locals);
  Body b = splitter.body(fn.body, LoopIntervals{}, Forms{}, false);
  fn.body = std::move(b);
  return fn;
}

}  // namespace cot::codegen
