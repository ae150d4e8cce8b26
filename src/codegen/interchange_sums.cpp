#include "codegen/interchange_sums.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "codegen/expr.h"
#include "codegen/linear_form.h"
#include "codegen/loop_ir_uses.h"
#include "codegen/loop_ir_walk.h"
#include "codegen/may_fail.h"

namespace cot::codegen {

namespace {

constexpr int64_t kMaxBlock = 4096;  // 32 KB of f64: the accumulators stay in L1
constexpr int64_t kMinTerms = 8;
constexpr int64_t kLanes = 4;  // f64 lanes of an AVX2 vector

// `rest` without the declarations nothing after them reads (the sum's mask when nothing
// after the sum reads it): the lowering declares every sum's mask.
Body without_dead_declarations(Body rest) {
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t k = 0; k < rest.size(); ++k) {
      const auto* d = std::get_if<Declare>(&rest[k].op);
      if (d == nullptr) continue;
      Body others = rest;
      others.erase(others.begin() + static_cast<ptrdiff_t>(k));
      if (reads_of(others).count(d->local) == 0) {
        rest = std::move(others);
        changed = true;
        break;
      }
    }
  }
  return rest;
}

// `b` with the carried locals in their blocks, at element `at`; assignments to `dead` locals
// dropped.
void expand(Body& b, const std::map<LocalId, LocalId>& block, const std::set<LocalId>& dead,
            const ExprP& at, const LoopFunction& fn) {
  std::map<LocalId, ExprP> with;
  for (const auto& [c, p] : block) with[c] = load(fn.locals[static_cast<size_t>(c)].type, p, at);
  Body out;
  for (Stmt& s : b) {
    if (const auto* a = std::get_if<Assign>(&s.op); a != nullptr && dead.count(a->local) != 0) {
      continue;
    }
    for_each_expr(s, [&](ExprP& e) { e = substitute(e, with); });
    for_each_body(s, [&](Body& inner) { expand(inner, block, dead, at, fn); });
    if (const auto* a = std::get_if<Assign>(&s.op)) {
      if (auto it = block.find(a->local); it != block.end()) {
        out.push_back(Stmt{Store{it->second, at, a->value}});
        continue;
      }
    }
    out.push_back(std::move(s));
  }
  b = std::move(out);
}

// A loop bound as `a * m + c` (a = ±1, m a local) or `c`.
struct Bound {
  LocalId var = -1;
  int64_t a = 0, c = 0;
};

std::optional<Bound> bound_of(const ExprP& e, const std::map<LocalId, ExprP>& defs) {
  ExprP x = e;
  for (int k = 0; k < 4; ++k) x = substitute(x, defs);
  auto f = linear_form(x, [](LocalId l) { return LinearForm{{{l, 1}}, 0}; });
  if (!f || f->coef.size() > 1) return std::nullopt;
  Bound b{-1, 0, f->c};
  if (!f->coef.empty()) {
    b.var = f->coef.begin()->first;
    b.a = f->coef.begin()->second;
    if (b.a != 1 && b.a != -1) return std::nullopt;
  }
  return b;
}

// A bound `P ? E : 0` (E a literal) whose P reads only indices of the block: a guard of the
// generator's points the lowering folded into the sum's bound.
std::optional<std::pair<ExprP, int64_t>> block_guard(const ExprP& e,
                                                     const std::map<LocalId, ExprP>& defs,
                                                     const std::set<LocalId>& block_vars) {
  ExprP x = e;
  for (int k = 0; k < 4; ++k) x = substitute(x, defs);
  if (x->kind != Expr::Kind::Prim || x->prim != Prim::Select || x->args.size() != 3) {
    return std::nullopt;
  }
  const auto full = as_i64(x->args[1]), none = as_i64(x->args[2]);
  if (!full || none != int64_t{0}) return std::nullopt;
  bool block_only = true;
  each_expr_node(x->args[0], [&](const Expr& y) {
    block_only = block_only && y.kind != Expr::Kind::Load &&
                 (y.kind != Expr::Kind::Local || block_vars.count(y.local) != 0);
  });
  if (!block_only) return std::nullopt;
  return std::pair{x->args[0], *full};
}

// What the rewrite needs of a generator's loops whose innermost body is a sum.
struct Nest {
  std::vector<For*> chain;  // the generator's loops, outermost first
  size_t first = 0;         // chain[first...] is the block
  int64_t block = 1;
  std::vector<int64_t> begins, extents;  // of the generator's loops: the block's layout
  // The ranges the loops run: the layout's, but a piece of a window split runs part of its
  // index's range (the pieces share one block).
  std::vector<int64_t> lows, highs;
  std::vector<For*> levels;       // the sum's loops, outermost first
  Body term;                      // the innermost level's body
  std::vector<Bound> lo, hi;      // per level
  std::map<LocalId, ExprP> init;  // carried locals: their start
  std::set<LocalId> dead;         // carried flags nothing after the sum reads
  LocalId acc = -1;
  Body rest;
  bool dependent = false;  // a level's bound mentions an index of the block
  // A guard over the block's indices alone, which the lowering folded into a bound (`P ? E :
  // 0`): the terms of the points that fail it are skipped (strong zeros, in the flags).
  std::vector<ExprP> guards;
  Body prologue;  // per element, before the terms: the flags of the points a bound skips
  bool lanes = false;
};

bool mentions(const std::set<LocalId>& vars, LocalId v) {
  return vars.count(v) != 0;
}

// The least or greatest value of a bound over the range of its generator loop.
int64_t extreme(const Nest& n, const Bound& b, bool high) {
  if (b.var < 0) return b.c;
  size_t k = 0;
  while (n.chain[k]->var != b.var) ++k;
  const int64_t first = b.a * n.lows[k] + b.c, last = b.a * (n.highs[k] - 1) + b.c;
  return high ? std::max(first, last) : std::min(first, last);
}

// The loads of `term` and the coefficient of `v` in each index (nullopt: not linear).
std::vector<std::optional<int64_t>> strides_along(const Body& term, LocalId v) {
  std::map<LocalId, LinearForm> defs;
  auto of_local = [&](LocalId l) -> std::optional<LinearForm> {
    auto it = defs.find(l);
    if (it != defs.end()) return it->second;
    return LinearForm{{{l, 1}}, 0};
  };
  std::vector<std::optional<int64_t>> out;
  each_stmt(term, [&](const Stmt& s) {
    for_each_expr(s, [&](const ExprP& e) {
      each_expr_node(e, [&](const Expr& x) {
        if (x.kind != Expr::Kind::Load) return;
        auto f = linear_form(x.args.at(0), of_local);
        if (!f) {
          out.push_back(std::nullopt);
          return;
        }
        auto it = f->coef.find(v);
        out.push_back(it == f->coef.end() ? 0 : it->second);
      });
    });
    if (const auto* d = std::get_if<Declare>(&s.op); d != nullptr && d->value) {
      if (auto f = linear_form(d->value, of_local)) defs[d->local] = *f;
    }
  });
  return out;
}

// Lanes: a block too short to fill a vector, terms reading consecutive elements along the
// sum's last index and never masked.
bool fits_lanes(const Nest& n, bool sum_masked) {
  bool masked = sum_masked;
  each_stmt(n.term, [&](const Stmt& s) { masked = masked || std::holds_alternative<If>(s.op); });
  const For& last = *n.levels.back();
  const auto last_extent = as_i64(last.end);
  if (!n.dependent && n.guards.empty() && !masked && n.extents.back() < 2 * kLanes &&
      as_i64(last.begin) == 0 && last_extent && *last_extent >= 4 * kLanes) {
    bool along = false, strided = false;
    for (auto s : strides_along(n.term, last.var)) {
      along = along || s == 1;
      strided = strided || (s && std::abs(*s) > 1);
    }
    return along && !strided;
  }
  return false;
}

// A piece of a window split: chain[level] runs part of [begin, end).
struct Layout {
  size_t level = 0;
  int64_t begin = 0, end = 0;
};

std::optional<Nest> analyze(std::vector<For*> chain, const LoopFunction& fn,
                            std::optional<Layout> layout = std::nullopt) {
  Nest n;
  n.chain = std::move(chain);
  for (For* f : n.chain) {
    n.lows.push_back(*as_i64(f->begin));
    n.highs.push_back(*as_i64(f->end));
  }
  n.begins = n.lows;
  for (size_t k = 0; k < n.chain.size(); ++k) n.extents.push_back(n.highs[k] - n.lows[k]);
  if (layout) {
    n.begins[layout->level] = layout->begin;
    n.extents[layout->level] = layout->end - layout->begin;
  }
  Body& body = n.chain.back()->body;
  size_t at = 0;
  while (at < body.size() && !std::holds_alternative<For>(body[at].op)) ++at;
  if (at == body.size()) return std::nullopt;
  For& sum = std::get<For>(body[at].op);
  if (sum.sum_of < 0 || sum.parallel || sum.independent) return std::nullopt;
  n.acc = sum.sum_of;
  // The sum's loops: each level's body is the next level after declarations of its bounds,
  // or the term (flat).
  std::map<LocalId, ExprP> defs;
  std::set<LocalId> assigned;
  For* level = &sum;
  for (;;) {
    n.levels.push_back(level);
    Body& b = level->body;
    if (b.empty() || !std::holds_alternative<For>(b.back().op)) break;
    for (size_t k = 0; k + 1 < b.size(); ++k) {
      const auto* d = std::get_if<Declare>(&b[k].op);
      if (d == nullptr || fn.locals[static_cast<size_t>(d->local)].type != Scalar::I64) {
        return std::nullopt;
      }
      defs[d->local] = d->value;
    }
    level = &std::get<For>(b.back().op);
    if (level->parallel || level->independent) return std::nullopt;
  }
  n.term = n.levels.back()->body;
  if (has_loop_or_buffer(n.term) || may_fail(Body{body[at]})) return std::nullopt;
  std::set<LocalId> declared_in_term;
  bool stores = false;
  each_stmt(n.term, [&](const Stmt& s) {
    if (const auto* a = std::get_if<Assign>(&s.op)) assigned.insert(a->local);
    if (const auto* d = std::get_if<Declare>(&s.op)) declared_in_term.insert(d->local);
    stores = stores || (!std::holds_alternative<Declare>(s.op) &&
                        !std::holds_alternative<Assign>(s.op) && !std::holds_alternative<If>(s.op));
  });
  if (stores) return std::nullopt;
  // Before the sum: the declarations of its accumulator and flags, of its bounds, and the flags
  // of the points a tightened bound skips.
  Body pre_assigns;
  for (size_t k = 0; k < at; ++k) {
    if (const auto* a = std::get_if<Assign>(&body[k].op)) assigned.insert(a->local);
  }
  for (size_t k = 0; k < at; ++k) {
    if (const auto* d = std::get_if<Declare>(&body[k].op)) {
      if (assigned.count(d->local) != 0) {
        if (!d->value || d->value->kind != Expr::Kind::Lit) return std::nullopt;
        n.init[d->local] = d->value;
      } else if (fn.locals[static_cast<size_t>(d->local)].type == Scalar::I64) {
        defs[d->local] = d->value;
      } else if (d->value && d->value->kind == Expr::Kind::Lit) {
        n.init[d->local] = d->value;  // a flag the sum's terms never set
      } else {
        return std::nullopt;  // the sum is not the generator's first statement
      }
    } else if (const auto* a = std::get_if<Assign>(&body[k].op)) {
      pre_assigns.push_back(body[k]);
      if (n.init.count(a->local) == 0) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (n.init.count(n.acc) == 0) return std::nullopt;
  for (LocalId l : assigned) {
    if (n.init.count(l) == 0 && declared_in_term.count(l) == 0) return std::nullopt;
  }
  const std::set<LocalId> term_reads = reads_of(n.term);
  for (const auto& [l, e] : defs) {
    if (term_reads.count(l) != 0) return std::nullopt;
  }
  // After the sum: the rest of the generator's body, per element.
  n.rest =
      without_dead_declarations(Body(body.begin() + static_cast<ptrdiff_t>(at) + 1, body.end()));
  if (has_loop_or_buffer(n.rest)) return std::nullopt;
  const std::set<LocalId> rest_reads = reads_of(n.rest);
  for (const auto& [l, e] : n.init) {
    if (l != n.acc && rest_reads.count(l) == 0) n.dead.insert(l);
  }
  for (const Stmt& s : pre_assigns) {
    const Assign& a = std::get<Assign>(s.op);
    ExprP v = a.value;
    for (int k = 0; k < 4; ++k) v = substitute(v, defs);
    if (n.dead.count(a.local) == 0) n.prologue.push_back(Stmt{Assign{a.local, v}});
  }
  for (LocalId p : written_buffers(n.rest)) {
    if (term_reads.count(p) != 0) return std::nullopt;
    // Strong-zero marks of the generator's elements keep the plain order (docs/design.md §10).
    if (fn.locals[static_cast<size_t>(p)].type == Scalar::Bool) return std::nullopt;
  }
  // The block: the longest suffix of the generator's loops whose accumulators stay in L1.
  n.first = n.chain.size();
  while (n.first > 0 && n.block * n.extents[n.first - 1] <= kMaxBlock) {
    n.block *= n.extents[--n.first];
  }
  // A block of one point sums in the plain order already (a window split's last row).
  if (n.first == n.chain.size() || n.block < 2) return std::nullopt;
  std::set<LocalId> block_vars;
  for (size_t k = n.first; k < n.chain.size(); ++k) block_vars.insert(n.chain[k]->var);
  // Bounds: literals, or (a triangle) one index of the block.
  int64_t terms = 1;
  for (For* l : n.levels) {
    auto lo = bound_of(l->begin, defs), hi = bound_of(l->end, defs);
    std::optional<std::pair<ExprP, int64_t>> g;
    if (!hi) g = block_guard(l->end, defs, block_vars);
    if (g && lo) {
      n.guards.push_back(g->first);
      hi = Bound{-1, 0, g->second};
    }
    if (!lo || !hi) return std::nullopt;
    for (const Bound* b : {&*lo, &*hi}) {
      if (b->var >= 0 && !mentions(block_vars, b->var)) return std::nullopt;
      n.dependent = n.dependent || b->var >= 0;
    }
    n.lo.push_back(*lo);
    n.hi.push_back(*hi);
    terms *= std::max<int64_t>(0, extreme(n, *hi, true) - extreme(n, *lo, false));
  }
  if (terms < kMinTerms) return std::nullopt;
  // A triangle's skipped points are strong zeros of their sums: only when nothing reads them.
  const bool epilogue = n.rest.size() != 1 || !std::holds_alternative<Store>(n.rest[0].op) ||
                        n.dead.size() + 1 != n.init.size();
  if (n.dependent && epilogue) return std::nullopt;
  // No read may stride along the block's innermost index.
  for (auto s : strides_along(n.term, n.chain.back()->var)) {
    if (s && std::abs(*s) > 1) return std::nullopt;
  }
  n.lanes = fits_lanes(n, sum.sum_masked);
  return n;
}

// Loops over the block's points around `body`; `bounds` tightens the loop of a variable.
Body block_loops(const Nest& n, Body body,
                 const std::map<LocalId, std::pair<ExprP, ExprP>>& bounds) {
  for (size_t k = n.chain.size(); k-- > n.first;) {
    const LocalId v = n.chain[k]->var;
    ExprP lo = lit_i64(n.lows[k]), hi = lit_i64(n.highs[k]);
    if (auto it = bounds.find(v); it != bounds.end()) {
      lo = it->second.first;
      hi = it->second.second;
    }
    body = Body{Stmt{For{v, lo, hi, std::move(body)}}};
  }
  return body;
}

// The block's element number of the current point (row-major).
ExprP element(const Nest& n, const LoopFunction& fn) {
  ExprP e = lit_i64(0);
  int64_t stride = 1;
  for (size_t k = n.chain.size(); k-- > n.first;) {
    e = add_i64(mul_i64(sub_i64(local(fn, n.chain[k]->var), lit_i64(n.begins[k])), lit_i64(stride)),
                e);
    stride *= n.extents[k];
  }
  return e;
}

// The least and greatest value of a linear form of the block's indices over their ranges.
std::pair<int64_t, int64_t> form_range(const Nest& n, const LinearForm& f) {
  int64_t lo = f.c, hi = f.c;
  for (const auto& [v, a] : f.coef) {
    size_t k = 0;
    while (n.chain[k]->var != v) ++k;
    const int64_t x = a * n.lows[k], y = a * (n.highs[k] - 1);
    lo += std::min(x, y);
    hi += std::max(x, y);
  }
  return {lo, hi};
}

ExprP form_expr(const LinearForm& f, const LoopFunction& fn) {
  ExprP e = lit_i64(f.c);
  for (const auto& [v, a] : f.coef) e = add_i64(mul_i64(local(fn, v), lit_i64(a)), e);
  return e;
}

// A guard's conjuncts `a m + rest >= 0` (m the innermost index of the block it mentions, a =
// ±1, rest over indices outside m's loop) as bounds of m's loop, as the lowering tightened the
// block's loops; false when a conjunct is not of that form.
bool guard_bounds(const Nest& n, const ExprP& guard, const LoopFunction& fn,
                  std::map<LocalId, std::pair<ExprP, ExprP>>& bounds) {
  std::vector<ExprP> conj{guard};
  for (size_t k = 0; k < conj.size();) {
    if (conj[k]->kind == Expr::Kind::Prim && conj[k]->prim == Prim::And) {
      std::vector<ExprP> args = conj[k]->args;
      conj.erase(conj.begin() + static_cast<ptrdiff_t>(k));
      conj.insert(conj.end(), args.begin(), args.end());
    } else {
      ++k;
    }
  }
  auto as_var = [](LocalId l) { return std::optional<LinearForm>(LinearForm{{{l, 1}}, 0}); };
  std::map<LocalId, std::pair<ExprP, ExprP>> out = bounds;
  for (const ExprP& c : conj) {
    if (c->kind != Expr::Kind::Prim || c->prim != Prim::Ge || c->args.size() != 2) return false;
    auto x = linear_form(c->args[0], as_var), y = linear_form(c->args[1], as_var);
    if (!x || !y) return false;
    auto f = add_forms(*x, *y, -1);
    if (!f) return false;
    size_t inner = 0;
    bool any = false;
    for (size_t k = n.first; k < n.chain.size(); ++k) {
      if (f->coef.count(n.chain[k]->var) != 0) {
        inner = k;
        any = true;
      }
    }
    if (!any) return false;
    const LocalId m = n.chain[inner]->var;
    const int64_t a = f->coef.at(m);
    if (a != 1 && a != -1) return false;
    f->coef.erase(m);
    for (const auto& [v, b] : f->coef) {
      size_t k = 0;
      while (k < n.chain.size() && n.chain[k]->var != v) ++k;
      if (k >= inner) return false;  // not bound outside m's loop
    }
    auto& [lo, hi] =
        out.try_emplace(m, lit_i64(n.lows[inner]), lit_i64(n.highs[inner])).first->second;
    if (a == 1) {  // m >= -rest
      LinearForm neg = *f;
      for (auto& [v, b] : neg.coef) b = -b;
      neg.c = -neg.c;
      const auto [least, most] = form_range(n, neg);
      if (most <= n.lows[inner]) continue;
      ExprP e = form_expr(neg, fn);
      lo = least >= n.lows[inner] ? e : prim(Prim::Max, {lo, e});
    } else {  // m < rest + 1
      LinearForm lim = *f;
      lim.c += 1;
      const auto [least, most] = form_range(n, lim);
      if (least >= n.highs[inner]) continue;
      ExprP e = form_expr(lim, fn);
      hi = most <= n.highs[inner] ? e : prim(Prim::Min, {hi, e});
    }
  }
  bounds = std::move(out);
  return true;
}

// The loops over the block's points inside the sum's loops; a triangle's bounds move from the
// sum's loop to the block's.
Body terms_in_order(const Nest& n, const std::map<LocalId, LocalId>& blocks, LoopFunction& fn) {
  std::map<LocalId, std::pair<ExprP, ExprP>> bounds;
  std::vector<ExprP> unbounded;  // guards kept as an if
  for (const ExprP& g : n.guards) {
    if (!guard_bounds(n, g, fn, bounds)) unbounded.push_back(g);
  }
  for (size_t k = 0; k < n.levels.size(); ++k) {
    const ExprP j = local(fn, n.levels[k]->var);
    for (const auto& [b, is_lo] : {std::pair{n.lo[k], true}, std::pair{n.hi[k], false}}) {
      if (b.var < 0) continue;
      size_t at = 0;
      while (n.chain[at]->var != b.var) ++at;
      auto& [mlo, mhi] =
          bounds.try_emplace(b.var, lit_i64(n.lows[at]), lit_i64(n.highs[at])).first->second;
      // j >= a m + c and j < a m + c, solved for m: m < or >= s j + d. The min or max is
      // left out where the limit never cuts (j's range is that of the interchanged loop).
      const int64_t jmin = extreme(n, n.lo[k], false), jmax = extreme(n, n.hi[k], true) - 1;
      const bool upper = is_lo == (b.a == 1);
      const int64_t d = b.a == 1 ? 1 - b.c : b.c;  // s = a
      const ExprP limit = b.a == 1 ? add_i64(j, lit_i64(d)) : sub_i64(lit_i64(d), j);
      const int64_t least = b.a == 1 ? jmin + d : d - jmax;
      const int64_t greatest = b.a == 1 ? jmax + d : d - jmin;
      if (upper) {
        const auto at_most = as_i64(mhi);
        if (at_most && greatest <= *at_most) {
          mhi = limit;
        } else if (!(at_most && least >= *at_most)) {
          mhi = prim(Prim::Min, {mhi, limit});
        }
      } else {
        const auto at_least = as_i64(mlo);
        if (at_least && least >= *at_least) {
          mlo = limit;
        } else if (!(at_least && greatest <= *at_least)) {
          mlo = prim(Prim::Max, {mlo, limit});
        }
      }
    }
  }
  Body term = n.term;
  expand(term, blocks, n.dead, element(n, fn), fn);
  if (!unbounded.empty()) {
    ExprP all = unbounded.front();
    for (size_t k = 1; k < unbounded.size(); ++k) all = and_(all, unbounded[k]);
    term = Body{Stmt{If{all, std::move(term), {}}}};
  }
  Body inner = block_loops(n, std::move(term), bounds);
  for (size_t k = n.levels.size(); k-- > 0;) {
    const For& l = *n.levels[k];
    inner = Body{Stmt{For{l.var, lit_i64(extreme(n, n.lo[k], false)),
                          lit_i64(extreme(n, n.hi[k], true)), std::move(inner)}}};
  }
  return inner;
}

// With lanes: the sum's last loop in groups of kLanes, lane l adding the terms with
// j = start + l into accumulator kLanes * m + l.
Body terms_in_lanes(const Nest& n, const std::map<LocalId, LocalId>& blocks, LoopFunction& fn) {
  const For& last = *n.levels.back();
  const int64_t extent = *as_i64(last.end);
  const int64_t groups = extent / kLanes, rest = extent % kLanes;
  Body out;
  auto group = [&](const ExprP& start, int64_t count) {
    const LocalId l = fn.new_local("lane", Scalar::I64);
    Body lane{Stmt{Declare{last.var, add_i64(start, local(fn, l))}}};
    Body term = n.term;
    expand(term, blocks, n.dead, add_i64(mul_i64(element(n, fn), lit_i64(kLanes)), local(fn, l)),
           fn);
    for (Stmt& s : term) lane.push_back(std::move(s));
    For f{l, lit_i64(0), lit_i64(count), std::move(lane)};
    f.simd = true;
    return block_loops(n, Body{Stmt{std::move(f)}}, {});
  };
  if (groups > 0) {
    const LocalId g = fn.new_local("group", Scalar::I64);
    out.push_back(Stmt{For{g, lit_i64(0), lit_i64(groups),
                           group(mul_i64(local(fn, g), lit_i64(kLanes)), kLanes)}});
  }
  if (rest > 0) {
    for (Stmt& s : group(lit_i64(groups * kLanes), rest)) out.push_back(std::move(s));
  }
  for (size_t k = n.levels.size() - 1; k-- > 0;) {
    out = Body{Stmt{For{n.levels[k]->var, lit_i64(n.lo[k].c), lit_i64(n.hi[k].c), std::move(out)}}};
  }
  return out;
}

// Where the sums go when all the body does after the sum is store it: the first element of a
// row of the block's size (a linear form of the outer loops' indices).
std::optional<LinearForm> row_of_sums(const Nest& n) {
  const auto* st = n.rest.size() == 1 ? std::get_if<Store>(&n.rest[0].op) : nullptr;
  if (st == nullptr || st->value->kind != Expr::Kind::Local || st->value->local != n.acc) {
    return std::nullopt;
  }
  auto f = linear_form(st->index, [](LocalId l) { return LinearForm{{{l, 1}}, 0}; });
  int64_t stride = 1;
  for (size_t k = n.chain.size(); f && k-- > n.first;) {
    auto it = f->coef.find(n.chain[k]->var);
    if (it == f->coef.end() || it->second != stride) return std::nullopt;
    f->coef.erase(it);
    f->c += stride * n.begins[k];  // the first element's
    stride *= n.extents[k];
  }
  return f;
}

// The rewritten block: accumulators, the terms (of each piece of a window split), then the
// rest of the body per element. Pieces share the block, so each stores only its row.
Body interchanged(const std::vector<Nest>& pieces, LoopFunction& fn) {
  const Nest& n = pieces.front();
  Body out;
  std::map<LocalId, LocalId> blocks;
  const int64_t width = n.lanes ? kLanes : 1;
  const Scalar elem = fn.locals[static_cast<size_t>(n.acc)].type;
  auto start_block = [&](LocalId c, const std::string& name) {
    const LocalId p = fn.new_local(name, fn.locals[static_cast<size_t>(c)].type, true);
    const int64_t count = c == n.acc ? n.block * width : n.block;
    out.push_back(Stmt{Alloc{.pointer = p, .count = lit_i64(count), .on_stack = true}});
    out.push_back(Stmt{Fill{p, lit_i64(0), lit_i64(count), n.init.at(c)}});
    blocks[c] = p;
  };
  start_block(n.acc, "acc");
  for (const auto& [c, e] : n.init) {
    if (c == n.acc || n.dead.count(c) != 0) continue;
    const std::string& name = fn.locals[static_cast<size_t>(c)].name;
    const bool live = name.size() >= 5 && name.compare(name.size() - 5, 5, "_live") == 0;
    start_block(c, live ? "acc_live" : "acc_strong");
  }
  if (!n.prologue.empty()) {  // the flags of the skipped points, per element
    Body prologue = n.prologue;
    expand(prologue, blocks, n.dead, element(n, fn), fn);
    for (Stmt& s : block_loops(n, std::move(prologue), {})) out.push_back(std::move(s));
  }
  for (const Nest& piece : pieces) {
    std::map<LocalId, LocalId> own = blocks;
    if (&piece != &n) own = {{piece.acc, blocks.at(n.acc)}};
    for (Stmt& s : piece.lanes ? terms_in_lanes(piece, own, fn) : terms_in_order(piece, own, fn)) {
      out.push_back(std::move(s));
    }
  }
  LocalId sums = blocks.at(n.acc);
  if (n.lanes) {  // each sum's lanes added up, in order
    sums = fn.new_local("acc_sum", elem, true);
    out.push_back(Stmt{Alloc{.pointer = sums, .count = lit_i64(n.block), .on_stack = true}});
    const LocalId k = fn.new_local("k", Scalar::I64);
    const ExprP at = mul_i64(local(fn, k), lit_i64(kLanes));
    ExprP total = load(elem, blocks.at(n.acc), at);
    for (int64_t l = 1; l < kLanes; ++l) {
      total = prim(Prim::Add, {total, load(elem, blocks.at(n.acc), add_i64(at, lit_i64(l)))});
    }
    out.push_back(
        Stmt{For{k, lit_i64(0), lit_i64(n.block), Body{Stmt{Store{sums, local(fn, k), total}}}}});
  }
  // The sums stored as a row when that is all the body does.
  if (std::optional<LinearForm> row = row_of_sums(n)) {
    ExprP base = lit_i64(row->c);
    for (const auto& [l, a] : row->coef) base = add_i64(base, mul_i64(local(fn, l), lit_i64(a)));
    const LocalId dst = std::get<Store>(n.rest[0].op).pointer;
    out.push_back(Stmt{Copy{dst, base, sums, lit_i64(0), lit_i64(n.block)}});
    return out;
  }
  Body each;
  const ExprP m = element(n, fn);
  for (const auto& [c, p] : blocks) {
    each.push_back(
        Stmt{Declare{c, load(fn.locals[static_cast<size_t>(c)].type, c == n.acc ? sums : p, m)}});
  }
  for (const Stmt& s : n.rest) each.push_back(s);
  for (Stmt& s : block_loops(n, std::move(each), {})) out.push_back(std::move(s));
  return out;
}

// The loops of a generator, perfectly nested from `f` down.
std::vector<For*> generator_loops(For* f) {
  std::vector<For*> chain{f};
  while (chain.back()->body.size() == 1) {
    auto* g = std::get_if<For>(&chain.back()->body[0].op);
    if (g == nullptr || !(g->parallel || g->independent)) break;
    chain.push_back(g);
  }
  return chain;
}

// A loop over a literal range: a generator's, or a piece of it (window splits).
bool literal_loop(const For& f) {
  return as_i64(f.begin) && *as_i64(f.begin) >= 0 && as_i64(f.end) &&
         *as_i64(f.end) > *as_i64(f.begin);
}

// How many statements of `b` from `k` on are the pieces of one generator loop that window
// splits cut (sibling loops over consecutive literal ranges of one index).
size_t count_pieces(Body& b, size_t k) {
  size_t p = 0;
  const For* prev = nullptr;
  for (; k + p < b.size(); ++p) {
    const auto* f = std::get_if<For>(&b[k + p].op);
    if (f == nullptr || !(f->parallel || f->independent) || !literal_loop(*f) ||
        (prev != nullptr && (f->var != prev->var || *as_i64(f->begin) != *as_i64(prev->end)))) {
      break;
    }
    prev = f;
  }
  return p;
}

// The pieces of a window split, b[k, k + count), inside the generator loops `outer`,
// interchanged together into one block: each piece needs the block's layout, no lanes, and the
// sums only stored, into one row.
std::optional<std::vector<Nest>> split_pieces(const std::vector<For*>& outer, Body& b, size_t k,
                                              size_t count, const LoopFunction& fn) {
  if (count < 2) return std::nullopt;
  const Layout layout{outer.size(), *as_i64(std::get<For>(b[k].op).begin),
                      *as_i64(std::get<For>(b[k + count - 1].op).end)};
  std::vector<Nest> pieces;
  std::optional<LinearForm> first_row;
  for (size_t p = 0; p < count; ++p) {
    std::vector<For*> chain = outer;
    for (For* f : generator_loops(&std::get<For>(b[k + p].op))) {
      if (!literal_loop(*f)) return std::nullopt;
      chain.push_back(f);
    }
    std::optional<Nest> n = analyze(chain, fn, layout);
    if (!n || n->lanes || n->first > layout.level) return std::nullopt;
    if (!pieces.empty() &&
        (n->first != pieces.front().first || n->chain.size() != pieces.front().chain.size())) {
      return std::nullopt;
    }
    std::optional<LinearForm> row = row_of_sums(*n);
    if (!row || (first_row && (row->coef != first_row->coef || row->c != first_row->c))) {
      return std::nullopt;
    }
    first_row = row;
    pieces.push_back(std::move(*n));
  }
  return pieces;
}

// The generator's loops around the block, as they were.
Body around(const Nest& n, Body inner) {
  for (size_t k = n.first; k-- > 0;) {
    For f = *n.chain[k];
    f.body = std::move(inner);
    inner = Body{Stmt{std::move(f)}};
  }
  return inner;
}

// Replaces b[k, k + count) by `r`; the index of r's last statement.
size_t replace(Body& b, size_t k, size_t count, Body r) {
  b.erase(b.begin() + static_cast<ptrdiff_t>(k), b.begin() + static_cast<ptrdiff_t>(k + count));
  b.insert(b.begin() + static_cast<ptrdiff_t>(k), r.begin(), r.end());
  return k + r.size() - 1;
}

// Which generators a run interchanges: whole ones (before window splits, which would cut a
// generator whose sums can run as one block into pieces of several), or the pieces that window
// splits cut (after them: a generator with max or min bounds qualifies only once split).
enum class Generators { kWhole, kSplitPieces };

void rewrite(Body& b, LoopFunction& fn, Generators which) {
  for (size_t k = 0; k < b.size(); ++k) {
    auto* f = std::get_if<For>(&b[k].op);
    if (f == nullptr || !(f->parallel || f->independent)) {
      for_each_body(b[k], [&](Body& inner) { rewrite(inner, fn, which); });
      continue;
    }
    // The pieces of a generator's outermost loop that window splits cut.
    const size_t count = which == Generators::kSplitPieces ? count_pieces(b, k) : 0;
    if (auto pieces = split_pieces({}, b, k, count, fn)) {
      k = replace(b, k, count, around(pieces->front(), interchanged(*pieces, fn)));
      continue;
    }
    // A generator's loops: perfectly nested, all of literal extent (the innermost may be cut
    // in pieces).
    std::vector<For*> chain = generator_loops(f);
    const bool literal =
        std::all_of(chain.begin(), chain.end(), [](For* g) { return literal_loop(*g); });
    if (literal) {
      std::optional<std::vector<Nest>> pieces;
      std::optional<Nest> n;
      if (which == Generators::kWhole) n = analyze(chain, fn);
      if (n) {
        pieces.emplace();
        pieces->push_back(std::move(*n));
      } else if (which == Generators::kSplitPieces) {
        Body& inner = chain.back()->body;
        pieces = split_pieces(chain, inner, 0,
                              count_pieces(inner, 0) == inner.size() ? inner.size() : 0, fn);
      }
      if (pieces) {
        k = replace(b, k, 1, around(pieces->front(), interchanged(*pieces, fn)));
        continue;
      }
    }
    rewrite(chain.back()->body, fn, which);
  }
}

}  // namespace

LoopFunction interchange_sums(LoopFunction fn) {
  rewrite(fn.body, fn, Generators::kWhole);
  return fn;
}

LoopFunction interchange_split_sums(LoopFunction fn) {
  rewrite(fn.body, fn, Generators::kSplitPieces);
  return fn;
}

}  // namespace cot::codegen
