// Lowering: mark predicates (MarkPred), where a generator's strong zeros are known from an affine
// predicate of its indices, so reads evaluate it instead of loading marks.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"
#include "index/fourier_motzkin.h"
#include "ir/regions.h"
#include "ir/uses.h"

namespace cot::codegen::lowering {

void Lowerer::find_mark_preds() {
  const std::vector<int> uses = ir::use_counts(f_);
  std::map<ir::VarId, int> full_reads;
  std::function<void(const ir::Block&)> walk = [&](const ir::Block& b) {
    for (const ir::Stmt& st : b.stmts) {
      if (const auto* ix = st.as<ir::IndexOp>(); ix != nullptr && ix->tensor.is_var) {
        const Type& t = f_.type_of(ix->tensor.var);
        bool affine = ix->indices.size() == t.rank() && !ix->indices.empty();
        for (const ir::IndexExpr& e : ix->indices) affine = affine && e.is_affine;
        if (affine) ++full_reads[ix->tensor.var];
      }
      ir::for_each_region(st, [&](const ir::Block& r) { walk(r); });
    }
  };
  walk(f_.body);
  std::function<void(const ir::Block&)> gens = [&](const ir::Block& b) {
    for (const ir::Stmt& st : b.stmts) {
      ir::for_each_region(st, [&](const ir::Block& r) { gens(r); });
      const auto* g = st.as<ir::GenOp>();
      if (g == nullptr || st.results.size() != 1 || g->body.results.size() != 1) continue;
      const ir::VarId v = st.results[0];
      // Scalar bodies only: the predicate covers every index of the tensor.
      if (!flow_.may_have_elems(v) || !is_real(f_.type_of(v).elem) ||
          f_.type_of(v).rank() != g->ivars.size()) {
        continue;
      }
      if (static_cast<size_t>(v) >= uses.size() || uses[static_cast<size_t>(v)] == 0 ||
          full_reads[v] != uses[static_cast<size_t>(v)]) {
        continue;
      }
      std::map<ir::VarId, const ir::Stmt*> defs;
      std::function<void(const ir::Block&)> collect = [&](const ir::Block& r) {
        for (const ir::Stmt& x : r.stmts) {
          for (ir::VarId d : x.results) defs[d] = &x;
          // Binders of nested regions: bound inside, never in a mark predicate.
          if (const auto* ivs = ir::index_vars_of(x)) {
            for (const ir::IndexVar& iv : *ivs) defs[iv.var] = &x;
          }
          if (const auto* a = x.as<ir::AccumOp>()) {
            for (const ir::IndexVar& iv : a->ivars) defs[iv.var] = &x;
          }
          if (const auto* l = x.as<ir::LoopOp>()) {
            for (ir::VarId v : l->state) defs[v] = &x;
            if (l->iter >= 0) defs[l->iter] = &x;
          }
          ir::for_each_region(x, [&](const ir::Block& k) { collect(k); });
        }
      };
      collect(g->body);
      for (const ir::IndexVar& iv : g->ivars) defs[iv.var] = nullptr;  // bound here, fine
      // The ranges of its index variables, for the questions empty_sum_pred asks.
      zeros_.gen_ranges.clear();
      bool known = true;
      for (const ir::IndexVar& iv : g->ivars) {
        std::optional<int64_t> e = known_extent(iv.extent);
        if (!e) {
          known = false;
          break;
        }
        zeros_.gen_ranges.push_back(Affine::var(iv.var));
        if (auto hi = Affine::add(Affine::constant(*e - 1), Affine::var(iv.var, -1))) {
          zeros_.gen_ranges.push_back(*hi);
        }
      }
      if (!known) zeros_.gen_ranges.clear();
      MarkPred mp;
      for (const ir::IndexVar& iv : g->ivars) mp.ivars.push_back(iv.var);
      std::optional<Pred> p = strong_pred(g->body.results[0], defs, 0);
      if (p && usable(*p, defs)) {
        mp.strong = std::move(*p);
        zeros_.mark_preds[v] = std::move(mp);
      }
    }
  };
  gens(f_.body);
}

bool Lowerer::usable(ir::VarId v, const std::map<ir::VarId, const ir::Stmt*>& defs) {
  auto it = defs.find(v);
  return it == defs.end() || it->second == nullptr;
}

bool Lowerer::usable(const Pred& p, const std::map<ir::VarId, const ir::Stmt*>& defs) {
  std::vector<int32_t> vars;
  p.collect_vars(vars);
  return std::all_of(vars.begin(), vars.end(), [&](int32_t v) { return usable(v, defs); });
}

std::optional<Affine> Lowerer::affine_atom(const ir::Atom& a,
                                           const std::map<ir::VarId, const ir::Stmt*>& defs,
                                           int depth) {
  if (!a.is_var) {
    if (a.lit.type != Scalar::I64) return std::nullopt;
    return Affine::constant(a.lit.integer);
  }
  if (usable(a.var, defs)) return Affine::var(a.var);
  const ir::Stmt* st = defs.at(a.var);
  const auto* op = st->as<ir::PrimOp>();
  if (op == nullptr || depth > 8 || st->results.size() != 1) return std::nullopt;
  auto arg = [&](size_t k) -> std::optional<Affine> {
    if (k >= op->args.size()) return std::nullopt;
    return affine_atom(op->args[k], defs, depth + 1);
  };
  switch (op->prim) {
    case Prim::Add:
    case Prim::Sub: {
      auto x = arg(0), y = arg(1);
      if (!x || !y) return std::nullopt;
      return op->prim == Prim::Add ? Affine::add(*x, *y) : Affine::sub(*x, *y);
    }
    case Prim::Neg: {
      auto x = arg(0);
      if (!x) return std::nullopt;
      return Affine::scale(*x, -1);
    }
    case Prim::Mul: {
      auto x = arg(0), y = arg(1);
      if (!x || !y) return std::nullopt;
      if (x->is_constant()) return Affine::scale(*y, x->constant_term());
      if (y->is_constant()) return Affine::scale(*x, y->constant_term());
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

std::optional<Pred> Lowerer::cond_pred(const ir::Atom& c,
                                       const std::map<ir::VarId, const ir::Stmt*>& defs) const {
  if (!c.is_var) return c.lit.boolean ? Pred::truth() : Pred::falsity();
  auto it = defs.find(c.var);
  if (it == defs.end()) return Pred::atom_of(c.var);
  if (it->second == nullptr) return std::nullopt;
  const auto* op = it->second->as<ir::PrimOp>();
  if (op == nullptr || op->args.size() != 2) return std::nullopt;
  // A comparison, spelled as the primitive table spells it ("<", "==", ...).
  if (prim_info(op->prim).type_rule != TypeRule::Compare) return std::nullopt;
  const std::string rel(prim_info(op->prim).symbol);
  for (const ir::Atom& x : op->args) {  // of integers (== and != also compare bools)
    if (x.is_var ? f_.type_of(x.var).elem != Scalar::I64 : x.lit.type != Scalar::I64) {
      return std::nullopt;
    }
  }
  auto a = affine_atom(op->args[0], defs), b = affine_atom(op->args[1], defs);
  if (!a || !b) return std::nullopt;
  return Pred::compare(*a, rel, *b);
}

std::optional<Pred> Lowerer::strong_pred(const ir::Atom& r,
                                         const std::map<ir::VarId, const ir::Stmt*>& defs,
                                         int depth) const {
  if (!r.is_var || !flow_.may_be_whole(r.var)) return Pred::falsity();
  if (depth > 16) return std::nullopt;
  auto it = defs.find(r.var);
  if (it == defs.end() || it->second == nullptr) return std::nullopt;  // from outside: data
  const ir::Stmt& st = *it->second;
  const size_t k = static_cast<size_t>(std::find(st.results.begin(), st.results.end(), r.var) -
                                       st.results.begin());
  if (const auto* g = st.as<ir::GuardOp>()) {
    if (!usable(g->pred, defs) || k >= g->body.results.size()) return std::nullopt;
    auto inner = strong_pred(g->body.results[k], defs, depth + 1);
    auto fails = g->pred.negate();
    if (!inner || !fails) return std::nullopt;
    return Pred::disj({*fails, *inner});
  }
  if (const auto* i = st.as<ir::IfOp>()) {
    if (k >= i->then_branch.results.size() || k >= i->else_branch.results.size()) {
      return std::nullopt;
    }
    auto c = cond_pred(i->cond, defs);
    auto t = strong_pred(i->then_branch.results[k], defs, depth + 1);
    auto e = strong_pred(i->else_branch.results[k], defs, depth + 1);
    if (!c || !t || !e) return std::nullopt;
    auto not_c = c->negate();
    if (!not_c) return std::nullopt;
    return Pred::disj({Pred::conj({*c, *t}), Pred::conj({*not_c, *e})});
  }
  if (const auto* p = st.as<ir::PrimOp>()) {
    auto arg = [&](size_t j) -> std::optional<Pred> {
      if (j >= p->args.size()) return std::nullopt;
      return strong_pred(p->args[j], defs, depth + 1);
    };
    switch (p->prim) {
      case Prim::Mul: {
        auto a = arg(0), b = arg(1);
        if (!a || !b) return std::nullopt;
        return Pred::disj({*a, *b});
      }
      case Prim::Div:
      case Prim::Neg:
        return arg(0);
      case Prim::Add:
      case Prim::Sub: {
        // A strong zero when both are strong zeros or literal zeros (and one is strong).
        if (p->args.size() != 2) return std::nullopt;
        auto zero_lit = [&](size_t j) {
          const ir::Atom& a = p->args[j];
          return !a.is_var && is_real(a.lit.type) && a.lit.real == 0.0;
        };
        if (zero_lit(0)) return arg(1);
        if (zero_lit(1)) return arg(0);
        auto a = arg(0), b = arg(1);
        if (!a || !b) return std::nullopt;
        return Pred::conj({*a, *b});
      }
      default:
        return std::nullopt;
    }
  }
  if (const auto* red = st.as<ir::ReduceOp>()) return empty_sum_pred(*red, defs, depth);
  if (const auto* ix = st.as<ir::IndexOp>()) {
    // A read of a generator with a mark predicate: the predicate at its indices.
    if (!ix->tensor.is_var) return std::nullopt;
    auto m = zeros_.mark_preds.find(ix->tensor.var);
    if (m == zeros_.mark_preds.end()) return std::nullopt;
    for (const ir::IndexExpr& e : ix->indices) {
      if (!e.is_affine) return std::nullopt;
    }
    return at_indices(m->second, ix->indices);
  }
  return std::nullopt;
}

std::optional<int64_t> Lowerer::known_extent(const SizeExpr& extent) const {
  return extent.eval([&](const std::string& n) -> std::optional<int64_t> {
    auto it = ints_.sizes.find(n);
    return it == ints_.sizes.end() ? std::nullopt : as_i64(it->second);
  });
}

std::optional<Pred> Lowerer::empty_sum_pred(const ir::ReduceOp& red,
                                            const std::map<ir::VarId, const ir::Stmt*>& defs,
                                            int depth) const {
  if (red.kind != ir::ReduceKind::Sum) return std::nullopt;
  const Pred* guard = single_guard(red.body, 0);
  if (guard == nullptr) return std::nullopt;
  const auto* g = red.body.stmts[0].as<ir::GuardOp>();
  if (g->body.results.size() != 1) return std::nullopt;
  // Where a term under the guard is a strong zero itself; it must never be.
  std::optional<Pred> inner = strong_pred(g->body.results[0], defs, depth + 1);
  if (!inner) return std::nullopt;
  std::vector<Affine> cs;
  std::vector<Pred> atoms;
  if (!split_conjunction(*guard, cs, atoms) || !atoms.empty()) return std::nullopt;
  std::vector<ir::VarId> summed;
  for (const ir::IndexVar& iv : red.ivars) {
    std::optional<int64_t> e = known_extent(iv.extent);
    if (!e) return std::nullopt;
    // Over an empty range the sum is 0 but an ordinary one (docs/language.md §5.6).
    if (*e <= 0) return Pred::falsity();
    cs.push_back(Affine::var(iv.var));
    auto hi = Affine::add(Affine::constant(*e - 1), Affine::var(iv.var, -1));
    if (!hi) return std::nullopt;
    cs.push_back(*hi);
    summed.push_back(iv.var);
  }
  if (inner->kind != Pred::Kind::False) {
    std::vector<Affine> where = cs;
    where.insert(where.end(), zeros_.gen_ranges.begin(), zeros_.gen_ranges.end());
    if (zeros_.gen_ranges.empty() || !infeasible(*inner, where)) return std::nullopt;
  }
  for (ir::VarId v : summed) {
    for (const Affine& c : cs) {
      const int64_t k = c.coeff(v);
      if (k != 0 && k != 1 && k != -1) return std::nullopt;
    }
    cs = fm::eliminate(cs, v);
  }
  std::vector<Pred> live;
  for (const Affine& c : cs) {
    for (const auto& [v, k] : c.terms()) {
      if (!usable(v, defs)) return std::nullopt;
    }
    live.push_back(Pred::ge0(c));
  }
  return Pred::conj(std::move(live)).negate();
}

std::optional<Pred> Lowerer::at_indices(const MarkPred& mp, const std::vector<ir::IndexExpr>& idx) {
  if (idx.size() != mp.ivars.size()) return std::nullopt;
  std::optional<Pred> p = mp.strong;
  for (size_t d = 0; d < mp.ivars.size() && p; ++d) p = p->substitute(mp.ivars[d], idx[d].affine);
  return p;
}

bool Lowerer::never_holds(const Pred& p) const {
  std::vector<Affine> known = scope_.facts;
  std::vector<int32_t> vars;
  p.collect_vars(vars);
  std::sort(vars.begin(), vars.end());
  vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
  // What the loops around it say of its variables (index variables' ranges).
  for (int32_t v : vars) {
    if (v < 0 || static_cast<size_t>(v) >= env_.vals.size() || !env_.vals[static_cast<size_t>(v)] ||
        env_.vals[static_cast<size_t>(v)]->kind != Val::Kind::Scalar) {
      continue;
    }
    const std::optional<Interval> r = range(env_.vals[static_cast<size_t>(v)]->scalar);
    if (!r) continue;
    if (auto lo = Affine::add(Affine::var(v), Affine::constant(-r->first))) known.push_back(*lo);
    if (auto hi = Affine::add(Affine::constant(r->second), Affine::var(v, -1))) {
      known.push_back(*hi);
    }
  }
  return infeasible(p, known);
}

bool Lowerer::infeasible(const Pred& p, const std::vector<Affine>& known) {
  std::vector<std::vector<Affine>> clauses{{}};
  std::function<bool(const Pred&, std::vector<std::vector<Affine>>&)> dnf =
      [&](const Pred& q, std::vector<std::vector<Affine>>& cs) -> bool {
    switch (q.kind) {
      case Pred::Kind::True:
        return true;
      case Pred::Kind::False:
        cs.clear();
        return true;
      case Pred::Kind::Ge0:
        for (auto& c : cs) c.push_back(q.expr);
        return true;
      case Pred::Kind::Eq0: {
        auto neg = Affine::scale(q.expr, -1);
        if (!neg) return false;
        for (auto& c : cs) {
          c.push_back(q.expr);
          c.push_back(*neg);
        }
        return true;
      }
      case Pred::Kind::Atom:
        return true;  // unknown: the clause stays as feasible as without it
      case Pred::Kind::And:
        for (const Pred& k : q.kids) {
          if (!dnf(k, cs)) return false;
        }
        return true;
      case Pred::Kind::Or: {
        std::vector<std::vector<Affine>> out;
        for (const Pred& k : q.kids) {
          std::vector<std::vector<Affine>> part = cs;
          if (!dnf(k, part)) return false;
          out.insert(out.end(), part.begin(), part.end());
          if (out.size() > 64) return false;
        }
        cs = std::move(out);
        return true;
      }
    }
    return false;
  };
  if (!dnf(p, clauses)) return false;
  for (std::vector<Affine>& c : clauses) {
    c.insert(c.end(), known.begin(), known.end());
    if (fm::feasible(c)) return false;
  }
  return true;
}

}  // namespace cot::codegen::lowering
