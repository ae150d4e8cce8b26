#include "opt/scatter.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/clone.h"
#include "ir/free_vars.h"
#include "ir/regions.h"
#include "ir/scope.h"
#include "ir/strong_zero_flow.h"
#include "opt/dynamic_sizes.h"
#include "opt/static_cost.h"

namespace cot::opt {
namespace {

using ir::Atom;
using ir::Block;
using ir::Stmt;
using ir::VarId;

Type i64_type() {
  return Type::scalar(Scalar::I64);
}
Type bool_type() {
  return Type::scalar(Scalar::Bool);
}

bool extent_may_fail(const SizeExpr& e) {
  return e.poisoned() || !e.as_linear();
}

bool may_fail_here(const ir::Function& f, const Stmt& s, ir::Scope& scope);

bool block_may_fail_here(const ir::Function& f, const Block& b, ir::Scope& scope) {
  for (const auto& s : b.stmts) {
    if (may_fail_here(f, s, scope)) return true;
  }
  return false;
}

// Whether the statement can fail where `scope` stands: opt::may_fail, except that reads, also
// those nested in generators, sums, guards and ifs, are asked of the facts that hold where they
// are (a read proved in range cannot fail).
bool may_fail_here(const ir::Function& f, const Stmt& s, ir::Scope& scope) {
  if (const auto* r = s.as<ir::IndexOp>()) return !read_in_range(f, *r, scope.facts());
  const std::vector<ir::IndexVar>* ivars = nullptr;
  if (const auto* g = s.as<ir::GenOp>()) {
    ivars = &g->ivars;
  } else if (const auto* red = s.as<ir::ReduceOp>()) {
    ivars = &red->ivars;
    // Integer sums overflow; integer max/min of an empty range has no value.
    for (VarId v : s.results) {
      if (!f.type_of(v).is_real_valued()) return true;
    }
  } else if (s.as<ir::GuardOp>() == nullptr && s.as<ir::IfOp>() == nullptr) {
    return may_fail(f, s);
  }
  if (ivars != nullptr) {
    for (const auto& iv : *ivars) {
      if (extent_may_fail(iv.extent)) return true;
    }
  }
  bool fails = false;
  ir::for_each_region_scoped(
      scope, s, [&](const Block& b) { fails = fails || block_may_fail_here(f, b, scope); });
  return fails;
}

void flatten_conj(const Pred& p, std::vector<Pred>& out) {
  if (p.kind == Pred::Kind::And) {
    for (const auto& k : p.kids) flatten_conj(k, out);
    return;
  }
  out.push_back(p);
}

bool pred_reads_any(const Pred& p, const std::unordered_set<VarId>& vars) {
  std::vector<int32_t> vs;
  p.collect_vars(vs);
  return std::any_of(vs.begin(), vs.end(), [&](int32_t v) { return vars.count(v) != 0; });
}

// Every variable bound in `b`, nested regions included: results, index variables, loop states
// and counters.
void collect_bound(const Block& b, std::unordered_set<VarId>& out) {
  ir::for_each_stmt(b, [&](const Stmt& s) {
    out.insert(s.results.begin(), s.results.end());
    const std::vector<ir::IndexVar>* ivars = ir::index_vars_of(s);
    if (const auto* a = s.as<ir::AccumOp>()) ivars = &a->ivars;
    if (ivars != nullptr) {
      for (const auto& iv : *ivars) out.insert(iv.var);
    }
    if (const auto* l = s.as<ir::LoopOp>()) {
      out.insert(l->state.begin(), l->state.end());
      if (l->iter >= 0) out.insert(l->iter);
    }
  });
}

// Where the rewrite applies, found in a generator X = for G. body.
struct Plan {
  // body.stmts[path[0]] is a guard whose body's stmts[path[1]] ..., the last the sum.
  std::vector<size_t> path;
  size_t pinned = 0;  // the index of j in G
  VarId eq = -1;      // c = (j == e), bound at the top of the sum's body
  Atom key;           // e as the sum's body computes it
  // Top-level statements of the sum's body, in order: those computing the key, and the others
  // the term needs (the equality excepted).
  std::vector<size_t> chain, rest;
  // Statements of X's body before the sum (level = depth along the path, index) that the term
  // reads, in order.
  std::vector<std::pair<size_t, size_t>> pre;
  std::vector<Pred> wrap;  // the predicates of the guards along the path
  // -n for each extent n of the summed variables not proved >= 1 (`-n >= 0`: |I| is 0).
  std::vector<Affine> maybe_empty;
};

// Finds the first sum of a generator's body (at its top, or in guards at its top whose
// predicates read nothing the generator binds) that the pass rewrites.
class Planner {
 public:
  Planner(const ir::Function& f, const ir::GenOp& gen) : f_(f), gen_(gen) {
    for (const auto& iv : gen.ivars) xbound_.insert(iv.var);
    collect_bound(gen.body, xbound_);
    std::vector<std::string> dynamic;
    ir::for_each_stmt(gen.body, [&](const Stmt& s) {
      for (VarId v : s.results) def_of_[v] = &s;
      append_dynamic_sizes_bound_by(f, s, dynamic);
    });
    binds_dynamic_ = !dynamic.empty();
  }

  std::optional<Plan> find(const ir::Scope& outer) {
    if (binds_dynamic_) return std::nullopt;
    outer_ = &outer;
    ir::Scope scope = outer;
    ir::RegionFrame fr;
    fr.kind = ir::RegionFrame::Kind::Index;
    fr.ivars = gen_.ivars;
    scope.push(fr);
    std::vector<size_t> path;
    std::vector<Pred> wrap;
    return walk(gen_.body, scope, path, wrap);
  }

 private:
  struct Level {
    const Block* block;
    ir::Scope scope;
  };

  std::optional<Plan> walk(const Block& b, ir::Scope& scope, std::vector<size_t>& path,
                           std::vector<Pred>& wrap) {
    levels_.push_back(Level{&b, scope});
    for (size_t k = 0; k < b.stmts.size(); ++k) {
      const Stmt& s = b.stmts[k];
      path.push_back(k);
      std::optional<Plan> found;
      if (const auto* r = s.as<ir::ReduceOp>(); r != nullptr && r->kind == ir::ReduceKind::Sum) {
        found = try_sum(s, *r, scope, path, wrap);
      } else if (const auto* g = s.as<ir::GuardOp>();
                 g != nullptr && !pred_reads_any(g->pred, xbound_)) {
        ir::RegionFrame fr;
        fr.kind = ir::RegionFrame::Kind::Guard;
        fr.pred = g->pred;
        scope.push(fr);
        wrap.push_back(g->pred);
        found = walk(g->body, scope, path, wrap);
        wrap.pop_back();
        scope.pop();
      }
      if (found) {
        levels_.pop_back();
        return found;
      }
      path.pop_back();
    }
    levels_.pop_back();
    return std::nullopt;
  }

  // The equality atoms c (bool variables bound at the top of the sum's body by `==`) such that
  // v is a strong zero wherever c is false (docs/language.md §5.6): a guard with c among its
  // conjuncts, and what products, quotients, negations and sums of such values make.
  const std::vector<VarId>& zero_unless(VarId v) {
    auto memo = zeros_.find(v);
    if (memo != zeros_.end()) return memo->second;
    std::vector<VarId>& out = zeros_[v];  // empty while computing: SSA has no cycles
    auto it = top_.find(v);
    if (it == top_.end()) return out;
    const Stmt& s = body_->stmts[it->second];
    std::vector<VarId> res;
    if (const auto* g = s.as<ir::GuardOp>()) {
      std::vector<Pred> kids;
      flatten_conj(g->pred, kids);
      for (const auto& k : kids) {
        if (k.kind == Pred::Kind::Atom && !k.negated) res.push_back(k.atom);
      }
    } else if (const auto* p = s.as<ir::PrimOp>()) {
      const Type& t = f_.type_of(s.results[0]);
      if (s.results.size() == 1 && t.is_scalar() && is_real(t.elem)) {
        auto of = [&](const Atom& a) {
          return a.is_var ? zero_unless(a.var) : std::vector<VarId>{};
        };
        auto lit0 = [](const Atom& a) {
          return !a.is_var && is_real(a.lit.type) && a.lit.real == 0;
        };
        switch (p->prim) {
          case Prim::Mul: {
            res = of(p->args[0]);
            for (VarId c : of(p->args[1])) res.push_back(c);
            break;
          }
          case Prim::Div:
          case Prim::Neg:
            res = of(p->args[0]);
            break;
          case Prim::Add:
          case Prim::Sub: {
            if (lit0(p->args[0])) {
              res = of(p->args[1]);
            } else if (lit0(p->args[1])) {
              res = of(p->args[0]);
            } else {
              std::vector<VarId> a = of(p->args[0]);
              const std::vector<VarId> b = of(p->args[1]);
              for (VarId c : a) {
                if (std::find(b.begin(), b.end(), c) != b.end()) res.push_back(c);
              }
            }
            break;
          }
          default:
            break;
        }
      }
    }
    std::sort(res.begin(), res.end());
    res.erase(std::unique(res.begin(), res.end()), res.end());
    zeros_[v] = std::move(res);
    return zeros_[v];
  }

  // Whether `a`, read where `facts` hold, is exactly the variable j: j itself, or the result of
  // a guard that cannot fail, whose affine predicate the facts prove and whose body yields j
  // (licm's `[n >= 1] * j`).
  bool is_exactly(const Atom& a, VarId j, const ir::IndexFacts& facts, int depth) const {
    if (!a.is_var) return false;
    if (a.var == j) return true;
    if (depth > 8) return false;
    auto it = def_of_.find(a.var);
    if (it == def_of_.end()) return false;
    const Stmt& s = *it->second;
    const auto* g = s.as<ir::GuardOp>();
    if (g == nullptr || s.results.size() != 1 || may_fail(f_, s)) return false;
    std::vector<Affine> affine;
    std::vector<Pred> atoms;
    if (!split_conjunction(g->pred, affine, atoms) || !atoms.empty()) return false;
    for (const auto& c : affine) {
      if (!facts.proves(c)) return false;
    }
    return is_exactly(g->body.results[0], j, facts, depth + 1);
  }

  std::optional<Plan> try_sum(const Stmt& s, const ir::ReduceOp& r, const ir::Scope& scope,
                              const std::vector<size_t>& path, const std::vector<Pred>& wrap) {
    if (s.results.size() != 1 || r.body.results.size() != 1 || !r.body.results[0].is_var)
      return std::nullopt;
    const Type& st = f_.type_of(s.results[0]);
    if (!st.is_scalar() || !is_real(st.elem)) return std::nullopt;  // real sums only
    body_ = &r.body;
    top_.clear();
    zeros_.clear();
    for (size_t k = 0; k < r.body.stmts.size(); ++k) {
      for (VarId v : r.body.stmts[k].results) top_[v] = k;
    }
    const VarId res = r.body.results[0].var;
    const std::vector<VarId> cands = zero_unless(res);
    if (cands.empty()) return std::nullopt;
    ir::Scope inner = scope;
    ir::RegionFrame fr;
    fr.kind = ir::RegionFrame::Kind::Index;
    fr.ivars = r.ivars;
    inner.push(fr);
    const ir::IndexFacts& facts = inner.facts();
    std::unordered_set<VarId> summed;
    for (const auto& iv : r.ivars) summed.insert(iv.var);
    for (VarId c : cands) {
      auto ct = top_.find(c);
      if (ct == top_.end()) continue;
      const Stmt& es = r.body.stmts[ct->second];
      const auto* eq = es.as<ir::PrimOp>();
      if (eq == nullptr || eq->prim != Prim::Eq || eq->args.size() != 2 || es.results.size() != 1)
        continue;
      if (ir::atom_type(f_, eq->args[0]) != i64_type() ||
          ir::atom_type(f_, eq->args[1]) != i64_type())
        continue;
      for (size_t p = 0; p < gen_.ivars.size(); ++p) {
        for (int side = 0; side < 2; ++side) {
          if (!is_exactly(eq->args[side], gen_.ivars[p].var, facts, 0)) continue;
          Plan plan;
          plan.path = path;
          plan.pinned = p;
          plan.eq = c;
          plan.key = eq->args[1 - side];
          plan.wrap = wrap;
          if (complete(plan, r, ct->second, summed, scope, inner)) return plan;
        }
      }
    }
    return std::nullopt;
  }

  // The key's statements, the term's, the statements of X's body the term reads, and the
  // checks that they may move (nothing fails, nothing costly is copied); false to decline.
  bool complete(Plan& plan, const ir::ReduceOp& r, size_t eq_index,
                const std::unordered_set<VarId>& summed, const ir::Scope& scope, ir::Scope& inner) {
    const ir::IndexVar& pinned = gen_.ivars[plan.pinned];
    // The cost rule: a literal pinned extent below 4 gains too little.
    if (auto c = pinned.extent.as_constant(); c && *c < 4) return false;
    // The scatter-adds take the generator's extents as their shape: each must be proved not to
    // fail and not negative, or X's own error (its message, its position) would change. And
    // they compute the key at every point of I where X, at K = 0 or |L| = 0, computed nothing:
    // they run under [K >= 1 && |L| >= 1] where the facts do not prove it (a review found an
    // empty generator's scatter failing on a key X never computed).
    const ir::IndexFacts& at_x = outer_->facts();  // where X stands, outside its ranges
    for (const auto& iv : gen_.ivars) {
      if (extent_may_fail(iv.extent)) return false;
      auto e = size_affine(f_, iv.extent);
      if (!e || !at_x.proves(*e)) return false;
      auto e1 = Affine::add(*e, Affine::constant(-1));
      if (!e1) return false;
      if (!at_x.proves(*e1)) plan.wrap.push_back(Pred::ge0(*e1));
    }
    bool ok = true;
    // The key: computed at the top of the sum's body from the summed variables and what is
    // bound outside X (never from j, L or X's body).
    std::vector<bool> in_chain(r.body.stmts.size(), false);
    std::function<void(VarId)> need_key = [&](VarId v) {
      if (!ok) return;
      if (auto it = top_.find(v); it != top_.end()) {
        if (in_chain[it->second]) return;
        in_chain[it->second] = true;
        for (VarId u : ir::stmt_reads(r.body.stmts[it->second])) need_key(u);
        return;
      }
      if (summed.count(v) != 0) return;
      if (xbound_.count(v) != 0) ok = false;
    };
    if (plan.key.is_var) need_key(plan.key.var);
    if (!ok || in_chain[eq_index]) return false;
    // The statements of X's body before the sum, by variable.
    std::unordered_map<VarId, std::pair<size_t, size_t>> pre_def;
    for (size_t d = 0; d < levels_.size(); ++d) {
      const Block& b = *levels_[d].block;
      for (size_t k = 0; k < plan.path[d]; ++k) {
        for (VarId v : b.stmts[k].results) pre_def[v] = {d, k};
      }
    }
    std::unordered_set<VarId> gvars;
    for (const auto& iv : gen_.ivars) gvars.insert(iv.var);
    std::vector<std::pair<size_t, size_t>> pre;
    std::function<void(VarId)> need_pre = [&](VarId v) {
      if (!ok || gvars.count(v) != 0) return;
      auto it = pre_def.find(v);
      if (it == pre_def.end()) {
        if (xbound_.count(v) != 0) ok = false;
        return;
      }
      if (std::find(pre.begin(), pre.end(), it->second) != pre.end()) return;
      const auto [d, k] = it->second;
      const Stmt& ps = levels_[d].block->stmts[k];
      // Copied into the scatter per point: it must cost nothing, repeat nothing, and not fail
      // where it stood (then not at j = e either).
      if (repeats(ps) || !is_cost_free(f_, ps) || may_fail_here(f_, ps, levels_[d].scope)) {
        ok = false;
        return;
      }
      pre.push_back(it->second);
      for (VarId u : ir::stmt_reads(ps)) need_pre(u);
    };
    // The term: the live statements of the sum's body but the key's and the equality.
    std::vector<bool> live(r.body.stmts.size(), false);
    std::function<void(VarId)> need = [&](VarId v) {
      if (!ok) return;
      if (auto it = top_.find(v); it != top_.end()) {
        const size_t k = it->second;
        if (k == eq_index || in_chain[k] || live[k]) return;
        live[k] = true;
        for (VarId u : ir::stmt_reads(r.body.stmts[k])) need(u);
        return;
      }
      if (summed.count(v) != 0 || gvars.count(v) != 0) return;
      if (xbound_.count(v) != 0) need_pre(v);
    };
    need(r.body.results[0].var);
    if (!ok) return false;
    // Nothing of the sum's body may fail where it stood: the rewrite drops its evaluations at
    // j != e and reorders the others.
    for (const auto& st : r.body.stmts) {
      if (may_fail_here(f_, st, inner)) return false;
    }
    // |I| <= 0, for the cells the sum leaves an ordinary 0.
    for (const auto& iv : r.ivars) {
      if (extent_may_fail(iv.extent)) return false;
      auto e = size_affine(f_, iv.extent);
      if (!e) return false;
      auto e1 = Affine::add(*e, Affine::constant(-1));
      if (!e1) return false;
      if (scope.facts().proves(*e1)) continue;
      auto none = Affine::scale(*e, -1);  // -n >= 0: the range is empty
      if (!none) return false;
      plan.maybe_empty.push_back(*none);
    }
    for (size_t k = 0; k < r.body.stmts.size(); ++k) {
      if (in_chain[k]) plan.chain.push_back(k);
      if (live[k]) plan.rest.push_back(k);
    }
    std::sort(pre.begin(), pre.end());
    plan.pre = std::move(pre);
    return true;
  }

  const ir::Function& f_;
  const ir::GenOp& gen_;
  const ir::Scope* outer_ = nullptr;  // the scope at X (find's)
  std::unordered_set<VarId> xbound_;  // G and everything X's body binds
  std::unordered_map<VarId, const Stmt*> def_of_;
  bool binds_dynamic_ = false;
  std::vector<Level> levels_;
  // The sum being looked at.
  const Block* body_ = nullptr;
  std::unordered_map<VarId, size_t> top_;
  std::unordered_map<VarId, std::vector<VarId>> zeros_;
};

// Rewrites one planned sum of the generator statement `x`; the scatter-adds go to `out` (just
// before x).
class Apply {
 public:
  Apply(ir::Function& f, const ir::StrongZeroFlow& flow) : f_(f), flow_(flow) {}

  void run(Stmt& x, const Plan& plan, std::vector<Stmt>& out) {
    auto& gen = *x.as<ir::GenOp>();
    std::vector<Block*> blocks{&gen.body};
    for (size_t d = 0; d + 1 < plan.path.size(); ++d) {
      blocks.push_back(&blocks.back()->stmts[plan.path[d]].as<ir::GuardOp>()->body);
    }
    Stmt& sum_stmt = blocks.back()->stmts[plan.path.back()];
    const auto& sum = *sum_stmt.as<ir::ReduceOp>();
    const VarId s = sum_stmt.results[0];
    const Type st = f_.type_of(s);
    const Span span = sum_stmt.span;
    const ir::IndexVar pinned = gen.ivars[plan.pinned];
    std::vector<SizeExpr> shape;
    for (const auto& iv : gen.ivars) shape.push_back(iv.extent);

    // A = accum[G] I, L. { key; ok; v = [ok] * { pre; term }; (keys, v) }
    ir::CloneMap map;
    ir::AccumOp acc;
    acc.shape = shape;
    for (const auto& iv : sum.ivars) acc.ivars.push_back(fresh_index(iv, map));
    std::vector<Atom> keys(gen.ivars.size());
    for (size_t k = 0; k < gen.ivars.size(); ++k) {
      if (k == plan.pinned) continue;
      acc.ivars.push_back(fresh_index(gen.ivars[k], map));
      keys[k] = Atom::of(acc.ivars.back().var);
    }
    const Atom e = key_and_range(sum, plan, pinned, map, acc.body, span);
    const VarId ok = acc.body.stmts.back().results[0];
    keys[plan.pinned] = e;
    map.atoms[pinned.var] = e;
    map.atoms[plan.eq] = Atom::boolean(true);
    Block term_src;
    for (const auto& [d, k] : plan.pre) term_src.stmts.push_back(block_at(gen, plan, d)->stmts[k]);
    for (size_t k : plan.rest) term_src.stmts.push_back(sum.body.stmts[k]);
    term_src.results = sum.body.results;
    Block term = ir::clone_block(f_, term_src, f_, map);
    const VarId v = f_.new_var(f_.vars[static_cast<size_t>(s)].name, st);
    acc.body.stmts.push_back(Stmt{{v}, ir::GuardOp{Pred::atom_of(ok), std::move(term)}, span});
    acc.body.results = keys;
    acc.body.results.push_back(Atom::of(v));
    const VarId a =
        emit(out, "scattered", Type::tensor(st.elem, shape), std::move(acc), plan, span);

    // The read that replaces the sum: A[G], under [hit[j] > 0.0 || |I| <= 0] when the sum's
    // strong zeros may be seen (a cell no point reaches).
    ir::IndexOp read;
    read.tensor = Atom::of(a);
    for (const auto& iv : gen.ivars)
      read.indices.push_back(ir::IndexExpr{true, Affine::var(iv.var), {}});
    std::vector<Stmt> repl;
    const bool need_hit = s >= static_cast<VarId>(flow_.read.size()) || flow_.may_be_read(s);
    if (!need_hit) {
      repl.push_back(Stmt{{s}, std::move(read), span});
    } else {
      ir::CloneMap hmap;
      ir::AccumOp hit;
      hit.shape = {pinned.extent};
      for (const auto& iv : sum.ivars) hit.ivars.push_back(fresh_index(iv, hmap));
      const Atom he = key_and_range(sum, plan, pinned, hmap, hit.body, span);
      const VarId hok = hit.body.stmts.back().results[0];
      // Real, not i64: the language's accum sums reals (docs/language.md §12.6), and the
      // printed program must load. A count, exact in f64, positive where a point reached.
      const Type f64 = Type::scalar(Scalar::F64);
      const VarId one = f_.new_var("reached", f64);
      Block ones;
      ones.results.push_back(Atom::real(1.0));
      hit.body.stmts.push_back(Stmt{{one}, ir::GuardOp{Pred::atom_of(hok), std::move(ones)}, span});
      hit.body.results = {he, Atom::of(one)};
      const VarId h =
          emit(out, "hit", Type::tensor(Scalar::F64, {pinned.extent}), std::move(hit), plan, span);
      const VarId hj = f_.new_var("hits", f64);
      ir::IndexOp hr;
      hr.tensor = Atom::of(h);
      hr.indices.push_back(ir::IndexExpr{true, Affine::var(pinned.var), {}});
      repl.push_back(Stmt{{hj}, std::move(hr), span});
      const VarId reached = f_.new_var("reached", bool_type());
      repl.push_back(Stmt{{reached}, ir::PrimOp{Prim::Gt, {Atom::of(hj), Atom::real(0.0)}}, span});
      std::vector<Pred> any{Pred::atom_of(reached)};
      for (const auto& none : plan.maybe_empty) any.push_back(Pred::ge0(none));
      const VarId cell = f_.new_var(f_.vars[static_cast<size_t>(s)].name, st);
      Block body;
      body.stmts.push_back(Stmt{{cell}, std::move(read), span});
      body.results.push_back(Atom::of(cell));
      repl.push_back(Stmt{{s}, ir::GuardOp{Pred::disj(std::move(any)), std::move(body)}, span});
    }
    Block& b = *blocks.back();
    const auto at = b.stmts.begin() + static_cast<std::ptrdiff_t>(plan.path.back());
    b.stmts.erase(at);
    b.stmts.insert(b.stmts.begin() + static_cast<std::ptrdiff_t>(plan.path.back()),
                   std::make_move_iterator(repl.begin()), std::make_move_iterator(repl.end()));
  }

 private:
  static const Block* block_at(const ir::GenOp& gen, const Plan& plan, size_t depth) {
    const Block* b = &gen.body;
    for (size_t d = 0; d < depth; ++d) b = &b->stmts[plan.path[d]].as<ir::GuardOp>()->body;
    return b;
  }

  ir::IndexVar fresh_index(const ir::IndexVar& iv, ir::CloneMap& map) {
    const VarId n = f_.new_var(f_.vars[static_cast<size_t>(iv.var)].name, i64_type());
    map.atoms[iv.var] = Atom::of(n);
    return ir::IndexVar{n, iv.extent};
  }

  // Appends the key's statements and ok = e >= 0 && e < K to `body`; returns e.
  Atom key_and_range(const ir::ReduceOp& sum, const Plan& plan, const ir::IndexVar& pinned,
                     ir::CloneMap& map, Block& body, Span span) {
    Block chain_src;
    for (size_t k : plan.chain) chain_src.stmts.push_back(sum.body.stmts[k]);
    Block chain = ir::clone_block(f_, chain_src, f_, map);
    for (auto& st : chain.stmts) body.stmts.push_back(std::move(st));
    Atom e = plan.key;
    if (e.is_var) {
      auto it = map.atoms.find(e.var);
      if (it != map.atoms.end()) e = it->second;
    }
    const VarId k = f_.new_var("extent", i64_type());
    body.stmts.push_back(Stmt{{k}, ir::SizeOp{pinned.extent}, span});
    const VarId lo = f_.new_var("in_range", bool_type());
    body.stmts.push_back(Stmt{{lo}, ir::PrimOp{Prim::Ge, {e, Atom::i64(0)}}, span});
    const VarId hi = f_.new_var("in_range", bool_type());
    body.stmts.push_back(Stmt{{hi}, ir::PrimOp{Prim::Lt, {e, Atom::of(k)}}, span});
    const VarId ok = f_.new_var("in_range", bool_type());
    body.stmts.push_back(Stmt{{ok}, ir::PrimOp{Prim::And, {Atom::of(lo), Atom::of(hi)}}, span});
    return e;
  }

  // Binds the scatter-add before X, under the guards on the path to the sum (they read nothing
  // X binds).
  VarId emit(std::vector<Stmt>& out, const char* name, const Type& t, ir::AccumOp acc,
             const Plan& plan, Span span) {
    const VarId v = f_.new_var(name, t);
    if (plan.wrap.empty()) {
      out.push_back(Stmt{{v}, std::move(acc), span});
      return v;
    }
    const VarId inner = f_.new_var(name, t);
    Block body;
    body.stmts.push_back(Stmt{{inner}, std::move(acc), span});
    body.results.push_back(Atom::of(inner));
    out.push_back(Stmt{{v}, ir::GuardOp{Pred::conj(plan.wrap), std::move(body)}, span});
    return v;
  }

  ir::Function& f_;
  const ir::StrongZeroFlow& flow_;
};

// Whether a generator's body might hold a candidate: a sum (at its top or in guards there)
// whose body compares with `==` at its top. Cheap; the planner decides.
bool may_hold_candidate(const Block& b) {
  for (const auto& s : b.stmts) {
    if (const auto* r = s.as<ir::ReduceOp>(); r != nullptr && r->kind == ir::ReduceKind::Sum) {
      for (const auto& t : r->body.stmts) {
        const auto* p = t.as<ir::PrimOp>();
        if (p != nullptr && p->prim == Prim::Eq) return true;
      }
    } else if (const auto* g = s.as<ir::GuardOp>()) {
      if (may_hold_candidate(g->body)) return true;
    }
  }
  return false;
}

// Whether some generator of `b` (nested regions included) holds a sum the pass rewrites.
bool find_candidate(const ir::Function& f, const Block& b, ir::Scope& scope) {
  for (const auto& s : b.stmts) {
    if (const auto* g = s.as<ir::GenOp>(); g != nullptr && may_hold_candidate(g->body)) {
      if (Planner(f, *g).find(scope)) return true;
    }
    bool found = false;
    ir::for_each_region_scoped(
        scope, s, [&](const Block& r) { found = found || find_candidate(f, r, scope); });
    if (found) return true;
  }
  return false;
}

// Rewrites the first sum the planner finds (in the order of the walk) and stops looking.
class Walker {
 public:
  Walker(ir::Function& f, const ir::StrongZeroFlow& flow) : f_(f), scope_(f), flow_(flow) {}

  bool run() {
    block(f_.body);
    return done_;
  }

 private:
  void block(Block& b) {
    std::vector<Stmt> out;
    out.reserve(b.stmts.size());
    for (auto& s : b.stmts) {
      if (!done_) {
        if (const auto* g = s.as<ir::GenOp>(); g != nullptr && may_hold_candidate(g->body)) {
          if (auto plan = Planner(f_, *g).find(scope_)) {
            Apply(f_, flow_).run(s, *plan, out);
            done_ = true;
          }
        }
      }
      if (!done_) ir::for_each_region_scoped(scope_, s, [&](Block& r) { block(r); });
      out.push_back(std::move(s));
    }
    b.stmts = std::move(out);
  }

  ir::Function& f_;
  ir::Scope scope_;
  const ir::StrongZeroFlow& flow_;
  bool done_ = false;
};

}  // namespace

PassResult scatter_sums(const ir::Program&, const ir::Function& f) {
  // One rewrite per round, each with the strong-zero flow of the function as it then stands
  // (the flow is computed only when there is something to rewrite).
  std::optional<ir::Function> g;
  for (int round = 0; round < 64; ++round) {
    const ir::Function& cur = g ? *g : f;
    ir::Scope scope(cur);
    if (!find_candidate(cur, cur.body, scope)) break;
    // The function's results count as seen: a caller inlines this function after optimizing
    // it, and may see the strong zeros of what it returns (a review found segment means built
    // from a helper's sums giving NaN for empty segments).
    const ir::StrongZeroFlow flow = ir::strong_zero_flow(cur, /*results_seen=*/true);
    if (!g) g = f;
    Walker(*g, flow).run();
  }
  if (!g) return {f, false};
  return {std::move(*g), true};
}

std::optional<std::string> scatter_postcondition(const ir::Program&, const ir::Function& f) {
  ir::Scope scope(f);
  if (find_candidate(f, f.body, scope)) {
    return "a generator sums a one-hot term of its index (a gather the pass would scatter)";
  }
  return std::nullopt;
}

}  // namespace cot::opt
