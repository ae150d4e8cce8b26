#include "opt/iverson.h"

#include <algorithm>
#include <cstddef>
#include <functional>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "index/eliminate_sums.h"
#include "index/fourier_motzkin.h"
#include "ir/clone.h"
#include "ir/scope.h"
#include "ir/uses.h"
#include "opt/dynamic_sizes.h"
#include "opt/static_cost.h"
#include "opt/substitute.h"

namespace cot::opt {

using Facts = std::vector<Affine>;

namespace {

void flatten_conj(const Pred& p, std::vector<Pred>& out) {
  if (p.kind == Pred::Kind::And) {
    for (const auto& k : p.kids) flatten_conj(k, out);
    return;
  }
  out.push_back(p);
}

bool is_affine_kind(const Pred& p) {
  return p.kind == Pred::Kind::Ge0 || p.kind == Pred::Kind::Eq0;
}

void push_affine(const Pred& p, Facts& out) {
  if (p.kind == Pred::Kind::Ge0) {
    out.push_back(p.expr);
  } else if (p.kind == Pred::Kind::Eq0) {
    out.push_back(p.expr);
    if (auto n = Affine::scale(p.expr, -1)) out.push_back(*n);
  }
}

bool implied(const Facts& facts, const Pred& c) {
  if (c.kind == Pred::Kind::Ge0) return fm::implies(facts, c.expr);
  if (c.kind == Pred::Kind::Eq0) {
    auto n = Affine::scale(c.expr, -1);
    return n && fm::implies(facts, c.expr) && fm::implies(facts, *n);
  }
  return false;
}

}  // namespace

Pred tighten_pred(const Pred& p, const Facts& facts) {
  std::vector<Pred> kids;
  flatten_conj(p, kids);
  std::vector<Pred> ks;
  for (auto& k : kids) {
    if (k.kind == Pred::Kind::False) return Pred::falsity();
    if (k.kind == Pred::Kind::True) continue;
    if (k.kind == Pred::Kind::Ge0) {
      Pred t = Pred::ge0(fm::tighten(k.expr));
      if (t.kind == Pred::Kind::False) return Pred::falsity();
      if (t.kind == Pred::Kind::True) continue;
      ks.push_back(std::move(t));
      continue;
    }
    if (k.kind == Pred::Kind::Eq0 && k.expr.is_constant()) {
      if (k.expr.constant_term() != 0) return Pred::falsity();
      continue;
    }
    ks.push_back(std::move(k));
  }
  // Whether the predicate can hold where the facts do: only the facts connected to it matter.
  Facts mine;
  for (const auto& k : ks) push_affine(k, mine);
  Facts all = fm::connected_to(facts, mine);
  all.insert(all.end(), mine.begin(), mine.end());
  if (!fm::feasible(all)) return Pred::falsity();
  std::vector<bool> alive(ks.size(), true);
  for (size_t k = 0; k < ks.size(); ++k) {
    if (!is_affine_kind(ks[k])) continue;
    Facts others = facts;
    for (size_t j = 0; j < ks.size(); ++j) {
      if (j != k && alive[j]) push_affine(ks[j], others);
    }
    if (implied(others, ks[k])) alive[k] = false;
  }
  std::vector<Pred> out;
  for (size_t k = 0; k < ks.size(); ++k) {
    if (alive[k]) out.push_back(ks[k]);
  }
  return Pred::conj(std::move(out));
}

namespace {

ir::Atom zero_atom(ir::Function& f, ir::Block& b, const Type& t) {
  if (t.is_tuple) {
    std::vector<ir::Atom> elems;
    for (const auto& e : t.elems) elems.push_back(zero_atom(f, b, e));
    ir::VarId v = f.new_var("z", t);
    b.stmts.push_back(ir::Stmt{{v}, ir::TupleOp{std::move(elems)}, {}});
    return ir::Atom::of(v);
  }
  ir::Atom lit = t.elem == Scalar::I64    ? ir::Atom::i64(0)
                 : t.elem == Scalar::Bool ? ir::Atom::boolean(false)
                                          : ir::Atom::real(0.0, t.elem);
  if (t.is_scalar()) return lit;
  ir::GenOp g;
  for (const auto& d : t.shape) {
    ir::VarId iv = f.new_var("i", Type::scalar(Scalar::I64));
    g.ivars.push_back(ir::IndexVar{iv, d});
  }
  g.body.results.push_back(lit);
  ir::VarId v = f.new_var("z", t);
  b.stmts.push_back(ir::Stmt{{v}, std::move(g), {}});
  return ir::Atom::of(v);
}

}  // namespace

ir::Block zeros_block(ir::Function& f, const std::vector<Type>& types) {
  ir::Block b;
  for (const auto& t : types) b.results.push_back(zero_atom(f, b, t));
  return b;
}

bool is_trivial_block(const ir::Block& b) {
  for (const auto& s : b.stmts) {
    if (s.as<ir::TupleOp>()) continue;
    const auto* g = s.as<ir::GenOp>();
    if (g == nullptr || !g->body.stmts.empty()) return false;
    for (const auto& r : g->body.results) {
      if (r.is_var) return false;
    }
  }
  return true;
}

namespace {

std::vector<Type> result_types(const ir::Function& f, const ir::Block& b) {
  std::vector<Type> ts;
  for (const auto& a : b.results) ts.push_back(ir::atom_type(f, a));
  return ts;
}

// Variables bound at the top level of a block.
std::unordered_set<ir::VarId> bound_top(const ir::Block& b) {
  std::unordered_set<ir::VarId> out;
  for (const auto& s : b.stmts) out.insert(s.results.begin(), s.results.end());
  return out;
}

bool pred_reads_any(const Pred& p, const std::unordered_set<ir::VarId>& vars) {
  std::vector<int32_t> vs;
  p.collect_vars(vs);
  for (int32_t v : vs) {
    if (vars.count(v)) return true;
  }
  return false;
}

// The inner guard of a mergeable pair: the outer body's last statement is a guard whose
// results are exactly the body's results, and its predicate reads nothing the body binds.
const ir::GuardOp* mergeable_inner(const ir::Block& body) {
  if (body.stmts.empty()) return nullptr;
  const ir::Stmt& last = body.stmts.back();
  const auto* g = last.as<ir::GuardOp>();
  if (g == nullptr || last.results.size() != body.results.size()) return nullptr;
  for (size_t k = 0; k < last.results.size(); ++k) {
    if (!body.results[k].is_var || body.results[k].var != last.results[k]) return nullptr;
  }
  if (pred_reads_any(g->pred, bound_top(body))) return nullptr;
  return g;
}

// How `sum I. { S; [p] * e }` loses the summed variables that equalities of p fix.
struct SumPlan {
  bool empty = false;              // the sum is a strong zero
  std::vector<SolvedVar> solved;   // divisor 1
  std::vector<ir::IndexVar> kept;  // still summed
  std::vector<Pred> conditions;    // the new guard's conjunction (before tightening)
};

std::optional<SumPlan> plan_sum(const ir::Function& f, const ir::ReduceOp& r) {
  if (r.kind != ir::ReduceKind::Sum || r.body.results.size() != 1 || r.body.stmts.empty())
    return std::nullopt;
  const ir::Stmt& last = r.body.stmts.back();
  const auto* g = last.as<ir::GuardOp>();
  if (g == nullptr || last.results.size() != 1 || !r.body.results[0].is_var ||
      r.body.results[0].var != last.results[0])
    return std::nullopt;
  if (pred_reads_any(g->pred, bound_top(r.body))) return std::nullopt;
  std::unordered_set<ir::VarId> summed_ids;
  std::vector<SummedVar> summed;
  for (const auto& iv : r.ivars) {
    auto ext = size_affine(f, iv.extent);
    if (!ext) return std::nullopt;
    summed.push_back(SummedVar{iv.var, *ext});
    summed_ids.insert(iv.var);
  }
  std::vector<Pred> kids;
  flatten_conj(g->pred, kids);
  std::vector<Affine> eqs;
  std::vector<Pred> rest;
  bool any_unit = false;
  for (const auto& k : kids) {
    bool mentions = false;
    if (k.kind == Pred::Kind::Eq0) {
      for (const auto& [v, c] : k.expr.terms()) {
        if (summed_ids.count(v)) {
          mentions = true;
          if (c == 1 || c == -1) any_unit = true;
        }
      }
    }
    if (mentions) {
      eqs.push_back(k.expr);
    } else {
      rest.push_back(k);
    }
  }
  if (eqs.empty() || !any_unit) return std::nullopt;
  auto elim = eliminate_sums(summed, eqs);
  if (!elim) return std::nullopt;
  SumPlan plan;
  if (elim->empty) {
    plan.empty = true;
    return plan;
  }
  if (elim->solved.empty() || !elim->divisible.empty()) return std::nullopt;
  for (const auto& sv : elim->solved) {
    if (sv.divisor != 1) return std::nullopt;
  }
  plan.solved = elim->solved;
  for (const auto& iv : r.ivars) {
    bool is_solved = false;
    for (const auto& sv : elim->solved) is_solved = is_solved || sv.var == iv.var;
    if (!is_solved) plan.kept.push_back(iv);
  }
  plan.conditions = elim->conditions;
  for (const auto& p : rest) {
    Pred q = p;
    for (const auto& sv : plan.solved) {
      auto s = q.substitute(sv.var, sv.numerator);
      if (!s) return std::nullopt;
      q = std::move(*s);
    }
    plan.conditions.push_back(std::move(q));
  }
  return plan;
}

// An i64 variable with the value of `a`, computed by statements appended to `out`.
ir::Atom emit_affine(ir::Function& f, ir::Block& out, const Affine& a, Span span) {
  const Type i64 = Type::scalar(Scalar::I64);
  auto emit = [&](Prim p, ir::Atom x, ir::Atom y) {
    ir::VarId v = f.new_var("k", i64);
    out.stmts.push_back(ir::Stmt{{v}, ir::PrimOp{p, {x, y}}, span});
    return ir::Atom::of(v);
  };
  ir::Atom acc = ir::Atom::i64(a.constant_term());
  bool first = a.constant_term() == 0;
  for (const auto& [v, c] : a.terms()) {
    if (first && c == -1) {
      ir::VarId n = f.new_var("k", i64);
      out.stmts.push_back(ir::Stmt{{n}, ir::PrimOp{Prim::Neg, {ir::Atom::of(v)}}, span});
      acc = ir::Atom::of(n);
      first = false;
      continue;
    }
    if (!first && (c == -1 || c == 1)) {
      acc = emit(c == 1 ? Prim::Add : Prim::Sub, acc, ir::Atom::of(v));
      continue;
    }
    ir::Atom term = c == 1 ? ir::Atom::of(v) : emit(Prim::Mul, ir::Atom::i64(c), ir::Atom::of(v));
    acc = first ? term : emit(Prim::Add, acc, term);
    first = false;
  }
  return acc;
}

bool uses_var(const ir::Block& b, ir::VarId v) {
  bool found = false;
  ir::for_each_use(b, [&](ir::VarId u) { found = found || u == v; });
  return found;
}

// Every integer point of `facts` that satisfies p satisfies q: each conjunct of q is a
// conjunct of p, or is affine and implied by the facts and p's affine conjuncts.
bool pred_implies(const Facts& facts, const Pred& p, const Pred& q) {
  std::vector<Pred> kp, kq;
  flatten_conj(p, kp);
  flatten_conj(q, kq);
  Facts mine;
  for (const auto& k : kp) {
    if (k.kind == Pred::Kind::False) return true;
    push_affine(k, mine);
  }
  Facts all = fm::connected_to(facts, mine);
  all.insert(all.end(), mine.begin(), mine.end());
  if (!fm::feasible(all)) return true;  // p never holds here
  all = facts;  // the implications below ask about q's conjuncts, with every fact
  all.insert(all.end(), mine.begin(), mine.end());
  for (const auto& c : kq) {
    if (c.kind == Pred::Kind::True) continue;
    bool ok = false;
    for (const auto& k : kp) ok = ok || k == c;
    if (!ok && is_affine_kind(c)) ok = implied(all, c);
    if (!ok) return false;
  }
  return true;
}

bool preds_equivalent(const Facts& facts, const Pred& p, const Pred& q) {
  return p == q || (pred_implies(facts, p, q) && pred_implies(facts, q, p));
}

// A product of guards in a block: b.stmts[mul] is `t = g1 * g2` (real, scalar) where g1 and g2
// are the single results of the guards b.stmts[guard[0]] and b.stmts[guard[1]] (in the order of
// the factors), each read only by this multiplication, with predicates equivalent under the
// facts.
struct GuardProduct {
  size_t mul = 0;
  size_t guard[2] = {0, 0};
};

std::optional<GuardProduct> find_guard_product(const ir::Function& f, const ir::Block& b,
                                               const Facts& facts) {
  std::unordered_map<ir::VarId, size_t> guard_of;  // single guard result -> its statement
  std::optional<std::unordered_map<ir::VarId, int>> uses;
  for (size_t k = 0; k < b.stmts.size(); ++k) {
    const ir::Stmt& s = b.stmts[k];
    if (s.as<ir::GuardOp>() != nullptr) {
      if (s.results.size() == 1) guard_of[s.results[0]] = k;
      continue;
    }
    const auto* m = s.as<ir::PrimOp>();
    if (m == nullptr || m->prim != Prim::Mul || m->args.size() != 2 || s.results.size() != 1)
      continue;
    const Type& t = f.type_of(s.results[0]);
    if (!t.is_scalar() || !is_real(t.elem)) continue;
    const ir::Atom& a = m->args[0];
    const ir::Atom& c = m->args[1];
    if (!a.is_var || !c.is_var || a.var == c.var) continue;
    auto ia = guard_of.find(a.var), ic = guard_of.find(c.var);
    if (ia == guard_of.end() || ic == guard_of.end()) continue;
    if (!uses) {
      uses.emplace();
      ir::for_each_use(b, [&](ir::VarId v) { ++(*uses)[v]; });
    }
    if ((*uses)[a.var] != 1 || (*uses)[c.var] != 1) continue;
    const auto& ga = *b.stmts[ia->second].as<ir::GuardOp>();
    const auto& gc = *b.stmts[ic->second].as<ir::GuardOp>();
    if (!preds_equivalent(facts, ga.pred, gc.pred)) continue;
    GuardProduct out;
    out.mul = k;
    out.guard[0] = ia->second;
    out.guard[1] = ic->second;
    return out;
  }
  return std::nullopt;
}

class Rewriter {
 public:
  explicit Rewriter(ir::Function& f) : f_(f), scope_(f) {}

  bool run() {
    changed_ = false;
    block(f_.body);
    return changed_;
  }

 private:
  void block(ir::Block& b) {
    // The facts of this block's scope (the vector stays as it is across the nested walks:
    // Scope::pop restores it).
    const Facts& facts = scope_.facts().constraints();
    std::vector<ir::Stmt> out;
    out.reserve(b.stmts.size());
    Substitution subst;
    for (auto& s : b.stmts) {
      ir::for_each_region_scoped(scope_, s, [&](ir::Block& r) { block(r); });
      local(std::move(s), facts, out, subst);
    }
    b.stmts = std::move(out);
    if (!subst.empty()) substitute_uses(b, subst);
    // After the substitutions, so that the use counts are those of the block as it stands.
    while (auto prod = find_guard_product(f_, b, facts)) {
      changed_ = true;
      multiply_guards(b, *prod);
    }
  }

  // t = ([p] * { S1; e1 }) * ([q] * { S2; e2 })  ->  t = [p] * { S1; S2; e1 * e2 }, where the
  // multiplication stood (the bodies in the order the guards stood in).
  void multiply_guards(ir::Block& b, const GuardProduct& prod) {
    ir::Stmt& ms = b.stmts[prod.mul];
    const ir::VarId t = ms.results[0];
    const Span span = ms.span;
    auto& g0 = *b.stmts[prod.guard[0]].as<ir::GuardOp>();
    auto& g1 = *b.stmts[prod.guard[1]].as<ir::GuardOp>();
    ir::GuardOp merged;
    merged.pred = g0.pred;
    auto& first = prod.guard[0] < prod.guard[1] ? g0 : g1;
    auto& second = prod.guard[0] < prod.guard[1] ? g1 : g0;
    for (auto& st : first.body.stmts) merged.body.stmts.push_back(std::move(st));
    for (auto& st : second.body.stmts) merged.body.stmts.push_back(std::move(st));
    const ir::VarId m = f_.new_var(f_.vars[static_cast<size_t>(t)].name, f_.type_of(t));
    merged.body.stmts.push_back(
        ir::Stmt{{m}, ir::PrimOp{Prim::Mul, {g0.body.results[0], g1.body.results[0]}}, span});
    merged.body.results.push_back(ir::Atom::of(m));
    ms = ir::Stmt{{t}, std::move(merged), span};
    const size_t hi = std::max(prod.guard[0], prod.guard[1]);
    const size_t lo = std::min(prod.guard[0], prod.guard[1]);
    b.stmts.erase(b.stmts.begin() + static_cast<std::ptrdiff_t>(hi));
    b.stmts.erase(b.stmts.begin() + static_cast<std::ptrdiff_t>(lo));
  }

  static ir::Atom resolve(const Substitution& subst, ir::Atom a) {
    if (a.is_var) {
      auto it = subst.find(a.var);
      if (it != subst.end()) return it->second;
    }
    return a;
  }

  // Makes `s` a strong zero: a False guard with a trivial body binding its results.
  ir::Stmt strong_zero(const ir::Stmt& s) {
    std::vector<Type> types;
    for (ir::VarId v : s.results) types.push_back(f_.type_of(v));
    return ir::Stmt{s.results, ir::GuardOp{Pred::falsity(), zeros_block(f_, types)}, s.span};
  }

  void local(ir::Stmt s, const Facts& facts, std::vector<ir::Stmt>& out, Substitution& subst) {
    if (s.as<ir::GuardOp>() != nullptr) {
      guard(std::move(s), facts, out, subst);
      return;
    }
    if (auto* r = s.as<ir::ReduceOp>()) {
      if (r->kind == ir::ReduceKind::Sum) {
        if (empty_range(r->ivars) || yields_strong_zero(r->body)) {
          changed_ = true;
          ir::Stmt z = strong_zero(s);
          out.push_back(std::move(z));
          return;
        }
        if (auto plan = plan_sum(f_, *r)) {
          changed_ = true;
          if (plan->empty) {
            out.push_back(strong_zero(s));
            return;
          }
          ir::Stmt n = eliminate(std::move(s), *plan);
          if (n.as<ir::GuardOp>()) {
            guard(std::move(n), facts, out, subst);
          } else {
            out.push_back(std::move(n));
          }
          return;
        }
      }
      out.push_back(std::move(s));
      return;
    }
    if (auto* g = s.as<ir::GenOp>()) {
      if (empty_range(g->ivars) && !is_trivial_block(g->body)) {
        changed_ = true;
        g->body = zeros_block(f_, result_types(f_, g->body));
      }
    } else if (auto* a = s.as<ir::AccumOp>()) {
      if (empty_range(a->ivars) && !is_trivial_block(a->body)) {
        changed_ = true;
        a->body = zeros_block(f_, result_types(f_, a->body));
      }
    }
    out.push_back(std::move(s));
  }

  static bool empty_range(const std::vector<ir::IndexVar>& ivars) {
    for (const auto& iv : ivars) {
      auto c = iv.extent.as_constant();
      if (c && *c <= 0) return true;
    }
    return false;
  }

  // The body's single result is bound by a False guard at its top level.
  static bool yields_strong_zero(const ir::Block& b) {
    if (b.results.size() != 1 || !b.results[0].is_var) return false;
    for (const auto& s : b.stmts) {
      const auto* g = s.as<ir::GuardOp>();
      if (g == nullptr || g->pred.kind != Pred::Kind::False) continue;
      for (ir::VarId v : s.results) {
        if (v == b.results[0].var) return true;
      }
    }
    return false;
  }

  void guard(ir::Stmt s, const Facts& facts, std::vector<ir::Stmt>& out, Substitution& subst) {
    auto* g = s.as<ir::GuardOp>();
    while (true) {
      Pred p = tighten_pred(g->pred, facts);
      if (p != g->pred) {
        changed_ = true;
        g->pred = std::move(p);
      }
      if (g->pred.kind == Pred::Kind::False) {
        if (!is_trivial_block(g->body)) {
          changed_ = true;
          g->body = zeros_block(f_, result_types(f_, g->body));
        }
        out.push_back(std::move(s));
        return;
      }
      if (g->pred.kind == Pred::Kind::True) {
        changed_ = true;
        for (auto& st : g->body.stmts) out.push_back(std::move(st));
        for (size_t k = 0; k < s.results.size(); ++k) {
          subst[s.results[k]] = resolve(subst, g->body.results[k]);
        }
        return;
      }
      const ir::GuardOp* inner = mergeable_inner(g->body);
      if (inner == nullptr) break;
      changed_ = true;
      ir::Stmt in = std::move(g->body.stmts.back());
      g->body.stmts.pop_back();
      auto* ig = in.as<ir::GuardOp>();
      g->pred = Pred::conj({g->pred, ig->pred});
      for (auto& st : ig->body.stmts) g->body.stmts.push_back(std::move(st));
      g->body.results = std::move(ig->body.results);
    }
    out.push_back(std::move(s));
  }

  // sum I. { S; [p] * { B } }  ->  [conditions] * { S; B }[solved := values], under the sum of
  // the kept variables when there are any.
  ir::Stmt eliminate(ir::Stmt s, const SumPlan& plan) {
    auto& r = *s.as<ir::ReduceOp>();
    ir::Stmt last = std::move(r.body.stmts.back());
    r.body.stmts.pop_back();
    auto& g = *last.as<ir::GuardOp>();
    ir::Block merged;
    merged.stmts = std::move(r.body.stmts);
    for (auto& st : g.body.stmts) merged.stmts.push_back(std::move(st));
    merged.results = std::move(g.body.results);

    ir::CloneMap map;
    ir::Block prefix;
    std::vector<ir::VarId> computed;
    for (const auto& sv : plan.solved) {
      map.affine[sv.var] = sv.numerator;
      const Affine& a = sv.numerator;
      if (a.is_constant()) {
        map.atoms[sv.var] = ir::Atom::i64(a.constant_term());
      } else if (a.constant_term() == 0 && a.terms().size() == 1 && a.terms()[0].second == 1) {
        map.atoms[sv.var] = ir::Atom::of(a.terms()[0].first);
      } else {
        ir::Atom v = emit_affine(f_, prefix, a, last.span);
        map.atoms[sv.var] = v;
        if (v.is_var) computed.push_back(v.var);
      }
    }
    ir::Block cloned = ir::clone_block(f_, merged, f_, map);
    bool needed = false;
    for (ir::VarId v : computed) needed = needed || uses_var(cloned, v);
    ir::Block body;
    if (needed) body.stmts = std::move(prefix.stmts);
    for (auto& st : cloned.stmts) body.stmts.push_back(std::move(st));
    body.results = std::move(cloned.results);

    ir::IndexFacts inner = scope_.facts();
    for (const auto& iv : plan.kept) inner.add_range(f_, iv.var, iv.extent);
    Pred pred = tighten_pred(Pred::conj(plan.conditions), inner.constraints());
    if (plan.kept.empty()) {
      return ir::Stmt{s.results, ir::GuardOp{std::move(pred), std::move(body)}, last.span};
    }
    const ir::VarId gv =
        f_.new_var(f_.vars[static_cast<size_t>(last.results[0])].name, f_.type_of(s.results[0]));
    ir::ReduceOp nr;
    nr.kind = ir::ReduceKind::Sum;
    nr.ivars = plan.kept;
    nr.body.stmts.push_back(
        ir::Stmt{{gv}, ir::GuardOp{std::move(pred), std::move(body)}, last.span});
    nr.body.results.push_back(ir::Atom::of(gv));
    return ir::Stmt{s.results, std::move(nr), s.span};
  }

  ir::Function& f_;
  ir::Scope scope_;
  bool changed_ = false;
};

}  // namespace

PassResult simplify_brackets(const ir::Program&, const ir::Function& f) {
  ir::Function g = f;
  Rewriter rw(g);
  bool changed = false;
  for (int round = 0; round < 16; ++round) {
    if (!rw.run()) break;
    changed = true;
  }
  changed = prune_dynamic_sizes(g) || changed;
  return {std::move(g), changed};
}

namespace {

std::optional<std::string> check_block(const ir::Function& f, const ir::Block& b,
                                       ir::Scope& scope) {
  const Facts& facts = scope.facts().constraints();
  for (const auto& s : b.stmts) {
    std::optional<std::string> broken;
    if (const auto* g = s.as<ir::GuardOp>()) {
      if (g->pred.kind == Pred::Kind::True) {
        broken = "a guard with the predicate true is left";
      } else if (g->pred.kind == Pred::Kind::False && !is_trivial_block(g->body)) {
        broken = "a false guard keeps a body that does work";
      } else if (mergeable_inner(g->body) != nullptr) {
        broken = "directly nested guards are left unmerged";
      }
    } else if (const auto* r = s.as<ir::ReduceOp>();
               r != nullptr && r->kind == ir::ReduceKind::Sum) {
      for (const auto& iv : r->ivars) {
        auto c = iv.extent.as_constant();
        if (c && *c <= 0) broken = "a sum over an empty range is left";
      }
      if (!broken && plan_sum(f, *r)) {
        broken = "a sum whose guard fixes a summed variable by an equality is left";
      }
    }
    if (broken) return broken;
    std::optional<std::string> inner;
    ir::for_each_region_scoped(scope, s, [&](const ir::Block& r) {
      if (!inner) inner = check_block(f, r, scope);
    });
    if (inner) return inner;
  }
  if (find_guard_product(f, b, facts)) {
    return "a product of two guards with equivalent predicates is left";
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> iverson_postcondition(const ir::Program&, const ir::Function& f) {
  ir::Scope scope(f);
  return check_block(f, f.body, scope);
}

}  // namespace cot::opt
