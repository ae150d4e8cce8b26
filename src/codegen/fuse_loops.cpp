#include "codegen/fuse_loops.h"

#include <cstddef>
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
#include "codegen/may_fail.h"
#include "codegen/partition_loops.h"

namespace cot::codegen {

namespace {

// Which buffer a pointer may point into: a view's base's, and for the state buffers a loop
// swaps, either of the pair's (they trade places every step), so both count as one.
class Buffers {
 public:
  explicit Buffers(const LoopFunction& fn) { learn(fn.body); }

  // `join` links roots only, so the chain ends.
  LocalId of(LocalId p) const {
    for (auto it = parent_.find(p); it != parent_.end(); it = parent_.find(p)) p = it->second;
    return p;
  }

 private:
  void learn(const Body& b) {
    for (const Stmt& s : b) {
      if (const auto* v = std::get_if<View>(&s.op)) join(v->pointer, v->base);
      if (const auto* w = std::get_if<Swap>(&s.op)) join(w->a, w->b);
      for_each_body(s, [&](const Body& inner) { learn(inner); });
    }
  }
  void join(LocalId a, LocalId b) {
    a = of(a);
    b = of(b);
    if (a != b) parent_[a] = b;
  }
  std::map<LocalId, LocalId> parent_;
};

struct Read {
  LocalId pointer;
  ExprP index;  // null: any element (a copy's source, a pointer named as a value)
};
struct Write {
  LocalId pointer;
  ExprP index;  // null: a range of elements (a copy, fill or combine)
  ExprP value;
  std::optional<size_t> top;  // the statement of the loop's body it is, if it is one
};

// What a loop's body does, as far as fusing it with a sibling needs to know.
struct Effects {
  std::vector<Read> reads;
  std::vector<Write> writes;
  std::set<LocalId> declared, named;
  std::map<LocalId, size_t> last_assigned;  // the last statement of the body assigning it
  bool flat = true;  // no loop, buffer, view, swap, stack or break: plain element work

  Effects(const LoopFunction& fn, const Body& body) : fn_(fn) {
    for (size_t k = 0; k < body.size(); ++k) stmt(body[k], k, true);
  }

 private:
  void expr(const ExprP& e) {
    if (!e) return;
    if (e->kind == Expr::Kind::Local) {
      named.insert(e->local);
      if (fn_.locals.at(static_cast<size_t>(e->local)).is_pointer) reads.push_back({e->local, {}});
    } else if (e->kind == Expr::Kind::Load) {
      named.insert(e->local);
      reads.push_back({e->local, e->args.at(0)});
    }
    for (const ExprP& a : e->args) expr(a);
  }
  void stmt(const Stmt& s, size_t k, bool top) {
    for_each_expr(s, [&](const ExprP& e) { expr(e); });
    std::visit(
        [&](const auto& op) {
          using T = std::decay_t<decltype(op)>;
          if constexpr (std::is_same_v<T, Declare> || std::is_same_v<T, CheckedInt>) {
            declared.insert(op.local);
          } else if constexpr (std::is_same_v<T, Assign>) {
            named.insert(op.local);
            last_assigned[op.local] = k;
          } else if constexpr (std::is_same_v<T, Store>) {
            named.insert(op.pointer);
            writes.push_back(
                {op.pointer, op.index, op.value, top ? std::optional(k) : std::nullopt});
          } else if constexpr (std::is_same_v<T, If>) {
            for (const Stmt& t : op.then_body) stmt(t, k, false);
            for (const Stmt& t : op.else_body) stmt(t, k, false);
          } else if constexpr (std::is_same_v<T, Copy>) {
            writes.push_back({op.dst, {}, {}, {}});
            reads.push_back({op.src, {}});
          } else if constexpr (std::is_same_v<T, Fill>) {
            writes.push_back({op.dst, {}, {}, {}});
          } else if constexpr (std::is_same_v<T, Combine>) {
            writes.push_back({op.dst, {}, {}, {}});
            reads.push_back({op.dst, {}});
            reads.push_back({op.src, {}});
          } else if constexpr (std::is_same_v<T, Fail>) {
            // Its values are expressions, walked above.
          } else {
            flat = false;
          }
        },
        s.op);
  }

  const LoopFunction& fn_;
};

// A loop whose iterations are a generator's points, run in lanes.
bool long_point_loop(const For& f) {
  // Short loops run one point at a time, and out-of-order execution overlaps their
  // iterations: a body made longer by fusion overlaps less (the LSTM's gates, 14 points each
  // with a sigmoid or tanh, ran 1.15-1.35 times slower fused). Long ones run in lanes.
  return (f.parallel || f.independent) && !f.simd && f.sum_into < 0 && runs_long(f);
}

// A body of plain element work that assigns only its own locals.
bool element_work(const Effects& e) {
  if (!e.flat) return false;
  for (const auto& [l, k] : e.last_assigned) {
    if (!e.declared.contains(l)) return false;
  }
  return true;
}

bool same_expr(const ExprP& a, const ExprP& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind || a->type != b->type || a->args.size() != b->args.size()) {
    return false;
  }
  switch (a->kind) {
    case Expr::Kind::Lit:
      if (!(a->lit == b->lit)) return false;
      break;
    case Expr::Kind::Local:
    case Expr::Kind::Load:
      if (a->local != b->local) return false;
      break;
    case Expr::Kind::Prim:
      if (a->prim != b->prim) return false;
      break;
    case Expr::Kind::MaskIs:
      if (!(a->lit == b->lit)) return false;
      break;
  }
  for (size_t k = 0; k < a->args.size(); ++k) {
    if (!same_expr(a->args[k], b->args[k])) return false;
  }
  return true;
}

// The expression with every subexpression `f` replaces (bottom up) replaced.
ExprP rewrite(const ExprP& e, const std::function<ExprP(const ExprP&)>& f) {
  if (!e) return e;
  std::vector<ExprP> args;
  bool changed = false;
  for (const ExprP& a : e->args) {
    args.push_back(rewrite(a, f));
    changed = changed || args.back() != a;
  }
  ExprP out = e;
  if (changed) {
    auto copy = std::make_shared<Expr>(*e);
    copy->args = std::move(args);
    out = std::move(copy);
  }
  if (ExprP r = f(out)) return r;
  return out;
}

void rewrite_body(Body& b, const std::function<ExprP(const ExprP&)>& f) {
  for (Stmt& s : b) {
    for_each_expr(s, [&](ExprP& e) { e = rewrite(e, f); });
    for_each_body(s, [&](Body& inner) { rewrite_body(inner, f); });
  }
}

class Fuser {
 public:
  explicit Fuser(LoopFunction& fn) : fn_(fn), buffers_(fn) {}

  void body(Body& b) {
    for (Stmt& s : b) for_each_body(s, [&](Body& inner) { body(inner); });
    for (size_t k = 0; k < b.size(); ++k) {
      while (auto* first = std::get_if<For>(&b[k].op)) {
        size_t next = k + 1;
        while (next < b.size() && movable(b[next])) ++next;
        if (next == b.size() || !std::holds_alternative<For>(b[next].op)) break;
        std::optional<For> fused = fuse(*first, std::get<For>(b[next].op));
        if (!fused) break;
        // The allocations between go first, then the fused loop in the first's place.
        b[k].op = std::move(*fused);
        b.erase(b.begin() + static_cast<ptrdiff_t>(next));
        std::rotate(b.begin() + static_cast<ptrdiff_t>(k),
                    b.begin() + static_cast<ptrdiff_t>(k) + 1,
                    b.begin() + static_cast<ptrdiff_t>(next));
        k = next - 1;
      }
    }
  }

 private:
  // A statement between two loops that may move before the first: an allocation from an arena
  // or the stack (it cannot fail, and the first loop cannot name what it declares).
  static bool movable(const Stmt& s) {
    const auto* a = std::get_if<Alloc>(&s.op);
    return a != nullptr && as_i64(a->count).has_value();
  }

  std::optional<LinearForm> form(const ExprP& e, LocalId var, LocalId as) const {
    return linear_form(e, [&](LocalId l) { return LinearForm{{{l == var ? as : l, 1}}, 0}; });
  }

  std::optional<For> fuse(const For& a, const For& b) const {
    if (!long_point_loop(a) || !long_point_loop(b) || a.parallel != b.parallel ||
        a.independent != b.independent || !same_expr(a.begin, b.begin) ||
        !same_expr(a.end, b.end)) {
      return std::nullopt;
    }
    const Effects ea(fn_, a.body), eb(fn_, b.body);
    if (!element_work(ea) || !element_work(eb)) return std::nullopt;
    // One scope: the second body names nothing the first declares.
    for (LocalId l : ea.declared) {
      if (eb.named.contains(l) || eb.declared.contains(l) || l == b.var) return std::nullopt;
    }
    std::set<LocalId> wrote_a, wrote_b, read_a;
    for (const Write& w : ea.writes) wrote_a.insert(buffers_.of(w.pointer));
    for (const Write& w : eb.writes) wrote_b.insert(buffers_.of(w.pointer));
    for (const Read& r : ea.reads) read_a.insert(buffers_.of(r.pointer));
    for (LocalId x : wrote_b) {
      if (wrote_a.contains(x) || read_a.contains(x)) return std::nullopt;
    }
    // The second reads the first's buffers only at the element the first writes in the same
    // iteration: one store, at an index that moves with the loop's variable. Such a load reads
    // the stored value instead when it is still at hand: a literal, or a local the first body
    // no longer assigns after the store.
    std::map<LocalId, ExprP> stored_value;
    for (const Read& r : eb.reads) {
      const LocalId buf = buffers_.of(r.pointer);
      if (!wrote_a.contains(buf)) continue;
      const Write* only = nullptr;
      for (const Write& w : ea.writes) {
        if (buffers_.of(w.pointer) != buf) continue;
        if (only != nullptr) return std::nullopt;
        only = &w;
      }
      if (!only->index || !r.index || only->pointer != r.pointer) return std::nullopt;
      auto stored = form(only->index, a.var, a.var), read = form(r.index, b.var, a.var);
      if (!stored || !read || stored->c != read->c || stored->coef != read->coef ||
          !stored->coef.contains(a.var)) {
        return std::nullopt;
      }
      const ExprP& v = only->value;
      bool at_hand = only->top && v->kind == Expr::Kind::Lit;
      if (only->top && v->kind == Expr::Kind::Local) {
        auto it = ea.last_assigned.find(v->local);
        at_hand = it == ea.last_assigned.end() || it->second < *only->top;
      }
      if (at_hand) stored_value[r.pointer] = v;
    }
    For out = a;
    Body second = b.body;
    ExprP var = local(fn_, a.var);
    rewrite_body(second, [&](const ExprP& e) -> ExprP {
      if (e->kind == Expr::Kind::Local && e->local == b.var) return var;
      if (e->kind == Expr::Kind::Load) {
        auto it = stored_value.find(e->local);
        if (it != stored_value.end() && it->second->type == e->type) return it->second;
      }
      return nullptr;
    });
    out.body.insert(out.body.end(), std::make_move_iterator(second.begin()),
                    std::make_move_iterator(second.end()));
    if (may_fail(out.body) && !cannot_fail_once_partitioned(out)) return std::nullopt;
    return out;
  }

  // Whether partitioning folds away every check the loop's body holds (a stencil's index check
  // at i - 1 behind its `i == 0` branch): then it cannot fail, and no order of checks matters.
  bool cannot_fail_once_partitioned(const For& f) const {
    LoopFunction trial;
    trial.locals = fn_.locals;
    trial.body.push_back(Stmt{f});
    trial = partition_loops(std::move(trial));
    return !may_fail(trial.body);
  }

  LoopFunction& fn_;
  Buffers buffers_;
};

}  // namespace

LoopFunction fuse_loops(LoopFunction fn) {
  Fuser fuser(fn);
  fuser.body(fn.body);
  return fn;
}

}  // namespace cot::codegen
