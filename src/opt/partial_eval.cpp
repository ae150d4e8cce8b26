#include "opt/partial_eval.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "index/fourier_motzkin.h"
#include "ir/clone.h"
#include "ir/scope.h"
#include "ir/size_affine.h"
#include "ir/uses.h"
#include "opt/dynamic_sizes.h"
#include "opt/iverson.h"
#include "opt/static_cost.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

using Facts = std::vector<Affine>;

// A generator whose body is a literal: (for I. c).
struct ConstGen {
  ir::Literal value;
  std::vector<SizeExpr> extents;
};

bool is_zero_literal(const ir::Atom& a) {
  if (a.is_var) return false;
  if (is_real(a.lit.type)) return a.lit.real == 0.0;
  return a.lit.type == Scalar::I64 && a.lit.integer == 0;
}

class PartialEvaluator {
 public:
  PartialEvaluator(ir::Function& f, bool check_only) : f_(f), scope_(f), check_only_(check_only) {}

  bool run() {
    uses_ = ir::use_counts(f_);
    block(f_.body);
    if (!check_only_ && !subst_.empty()) substitute_uses(f_.body, subst_);
    return changed_;
  }
  const std::string& found() const { return found_; }

 private:
  bool fire(const char* what) {
    changed_ = true;
    if (found_.empty()) found_ = what;
    return !check_only_;
  }
  ir::Atom resolve(const ir::Atom& a) const {
    if (a.is_var) {
      auto it = subst_.find(a.var);
      if (it != subst_.end()) return it->second;
    }
    return a;
  }
  void replace(ir::VarId v, const ir::Atom& by) { subst_[v] = resolve(by); }
  bool used(ir::VarId v) const {
    return static_cast<size_t>(v) < uses_.size() && uses_[static_cast<size_t>(v)] > 0;
  }

  void resolve_operands(ir::Stmt& s) {
    if (check_only_) return;
    map_direct_operands(s.op, [&](const ir::Atom& a) { return resolve(a); });
  }

  void block(ir::Block& b) {
    // The facts of this block's scope (the vector stays as it is across the nested walks:
    // Scope::pop restores it).
    const Facts& facts = scope_.facts().constraints();
    std::vector<ir::Stmt> out;
    out.reserve(b.stmts.size());
    for (auto& s : b.stmts) {
      resolve_operands(s);
      ir::for_each_region_scoped(scope_, s, [&](ir::Block& r) { block(r); });
      stmt(std::move(s), facts, out);
    }
    b.stmts = std::move(out);
    if (!check_only_) {
      for (auto& a : b.results) a = resolve(a);
    }
  }

  void stmt(ir::Stmt s, const Facts& facts, std::vector<ir::Stmt>& out) {
    if (auto* l = s.as<ir::LoopOp>()) {
      if (loop(s, *l, out)) return;
    } else if (auto* i = s.as<ir::IfOp>()) {
      if_same(s, *i);
    } else if (auto* g = s.as<ir::GenOp>()) {
      if (identity_gen(s, *g)) return;
      if (g->body.stmts.empty() && g->body.results.size() == 1 && !g->body.results[0].is_var) {
        ConstGen c{g->body.results[0].lit, {}};
        for (const auto& iv : g->ivars) c.extents.push_back(iv.extent);
        const_gens_[s.results[0]] = std::move(c);
      }
    } else if (auto* x = s.as<ir::IndexOp>()) {
      if (const_read(s, *x, facts)) return;
    } else if (auto* r = s.as<ir::ReduceOp>()) {
      if (r->kind == ir::ReduceKind::Sum && r->body.results.size() == 1 &&
          is_zero_literal(r->body.results[0])) {
        if (fire("a sum of literal zeros is left")) {
          // Zeros, ordinary ones (its terms are not strong zeros, nor is it).
          std::vector<Type> types{f_.type_of(s.results[0])};
          ir::Block zeros = zeros_block(f_, types);
          for (auto& st : zeros.stmts) out.push_back(std::move(st));
          replace(s.results[0], zeros.results[0]);
          return;
        }
      }
      if (invariant_sum(s, *r, facts, out)) return;
      if (one_hot_sum(s, *r, out)) return;
    }
    out.push_back(std::move(s));
  }

  // sum I. e with e not reading I -> [|I| >= 1] * (|I| * e): the body runs once ([Shaikhha22]'s
  // factoring, Fig. 8b: e * 1 + ... + e * 1 ~> e * (1 + ... + 1)). The guard keeps the empty sum a
  // strong zero (0, where 0 * e is NaN for an infinite e) and its body unevaluated.
  bool invariant_sum(ir::Stmt& s, ir::ReduceOp& r, const Facts& facts, std::vector<ir::Stmt>& out) {
    if (r.kind != ir::ReduceKind::Sum || r.body.results.size() != 1 || s.results.size() != 1) {
      return false;
    }
    const Type t = f_.type_of(s.results[0]);  // a copy: new_var below grows the table
    if (!t.is_scalar() || !is_real(t.elem)) return false;
    std::unordered_set<ir::VarId> summed;
    for (const auto& iv : r.ivars) summed.insert(iv.var);
    bool reads = false;
    ir::for_each_use(r.body, [&](ir::VarId v) { reads = reads || summed.count(v) != 0; });
    for (const auto& st : r.body.stmts) {
      const auto* l = st.as<ir::LoopOp>();
      reads = reads || (l != nullptr && l->saves_states);
    }
    if (reads || !fire("a sum whose body does not read its index variables is left")) return false;
    // count = the product of the extents; whether some extent may be 0 (not proved >= 1).
    bool may_be_empty = false;
    ir::Atom count = ir::Atom::i64(1);
    bool two_or_more = false;  // proved: count >= 2
    for (const auto& iv : r.ivars) {
      auto ext = size_affine(f_, iv.extent);
      ir::VarId e = -1;
      if (ext && ext->constant_term() == 0 && ext->terms().size() == 1 &&
          ext->terms()[0].second == 1) {
        e = ext->terms()[0].first;  // a bare size variable
      } else {
        e = f_.new_var("extent", Type::scalar(Scalar::I64));
        out.push_back(ir::Stmt{{e}, ir::SizeOp{iv.extent}, s.span});
      }
      if (!ext) ext = Affine::var(e);
      auto ext1 = Affine::add(*ext, Affine::constant(-1));
      auto ext2 = Affine::add(*ext, Affine::constant(-2));
      may_be_empty = may_be_empty || !ext1 || !fm::implies(facts, *ext1);
      two_or_more = two_or_more || (ext2 && fm::implies(facts, *ext2));
      if (count.is_var || count.lit.integer != 1) {
        const ir::VarId c = f_.new_var("count", Type::scalar(Scalar::I64));
        out.push_back(ir::Stmt{{c}, ir::PrimOp{Prim::Mul, {count, ir::Atom::of(e)}}, s.span});
        count = ir::Atom::of(c);
      } else {
        count = ir::Atom::of(e);
      }
    }
    ir::Block body = std::move(r.body);
    // The multiplication goes inside the guards that yield the term: a guard that fails
    // yields a strong zero, which the sum added for free and a product would not.
    ir::Block* inner = &body;
    for (;;) {
      if (inner->stmts.empty() || !inner->results[0].is_var) break;
      ir::Stmt& last = inner->stmts.back();
      auto* g = last.as<ir::GuardOp>();
      if (g == nullptr || last.results.size() != 1 || last.results[0] != inner->results[0].var) {
        break;
      }
      inner = &g->body;
    }
    const ir::Atom term = inner->results[0];
    auto emit = [&](ir::Block& b, const char* name, const Type& type, ir::Op op) {
      const ir::VarId v = f_.new_var(name, type);
      b.stmts.push_back(ir::Stmt{{v}, std::move(op), s.span});
      return ir::Atom::of(v);
    };
    const Prim to_real = t.elem == Scalar::F32 ? Prim::ToF32 : Prim::ToF64;
    auto scale = [&](ir::Block& b) {
      const ir::Atom real_count = emit(b, "count", t, ir::PrimOp{to_real, {count}});
      return emit(b, "scaled", t, ir::PrimOp{Prim::Mul, {real_count, term}});
    };
    if (!term.is_var && term.lit.real == 1.0) {
      inner->results[0] = emit(*inner, "count", t, ir::PrimOp{to_real, {count}});  // of ones
    } else if (two_or_more) {
      inner->results[0] = scale(*inner);
    } else {
      // A sum of one term costs nothing: multiplying it by 1 would cost more than the sum.
      const ir::Atom several = emit(*inner, "several", Type::scalar(Scalar::Bool),
                                    ir::PrimOp{Prim::Ge, {count, ir::Atom::i64(2)}});
      ir::IfOp choice;
      choice.cond = several;
      choice.then_branch.results.push_back(scale(choice.then_branch));
      choice.else_branch.results.push_back(term);
      inner->results[0] = emit(*inner, "scaled", t, std::move(choice));
    }
    if (!may_be_empty) {
      for (auto& st : body.stmts) out.push_back(std::move(st));
      replace(s.results[0], body.results[0]);
      return true;
    }
    // Over an empty range the sum is an ordinary 0 (a factor that is not a strong zero): an
    // if on the count, not a guard.
    const ir::VarId runs = f_.new_var("nonempty", Type::scalar(Scalar::Bool));
    out.push_back(ir::Stmt{{runs}, ir::PrimOp{Prim::Ge, {count, ir::Atom::i64(1)}}, s.span});
    ir::IfOp when;
    when.cond = ir::Atom::of(runs);
    when.then_branch = std::move(body);
    when.else_branch.results.push_back(ir::Atom::real(0.0, t.elem));
    out.push_back(ir::Stmt{s.results, std::move(when), s.span});
    return true;
  }

  // sum i: E. { S; c = i == a; if c then {B} else {0.0} } -> if 0 <= a < E then {S; B}[i := a]
  // else 0.0: one term is not zero (reverse mode's contribution to one element of a vector
  // that a loop updates with `if i == t`). The other terms are plain zeros, so the sum is an
  // ordinary 0 where a is out of range; the statements S run once, at i = a, instead of at every
  // i (dropping their evaluations elsewhere, whose values nothing used).
  bool one_hot_sum(ir::Stmt& s, ir::ReduceOp& r, std::vector<ir::Stmt>& out) {
    if (r.kind != ir::ReduceKind::Sum || r.ivars.size() != 1 || r.body.results.size() != 1 ||
        s.results.size() != 1 || r.body.stmts.size() < 2) {
      return false;
    }
    const Type t = f_.type_of(s.results[0]);  // a copy: new_var below grows the table
    if (!t.is_scalar() || !is_real(t.elem)) return false;
    const ir::VarId i = r.ivars[0].var;
    const ir::Stmt& last = r.body.stmts.back();
    const auto* choice = last.as<ir::IfOp>();
    if (choice == nullptr || last.results.size() != 1 || !r.body.results[0].is_var ||
        r.body.results[0].var != last.results[0] || !choice->cond.is_var) {
      return false;
    }
    const ir::Block& other = choice->else_branch;
    if (!other.stmts.empty() || other.results.size() != 1 || !is_zero_literal(other.results[0])) {
      return false;
    }
    // The condition: i == a (either order), a not depending on i, bound in the body by the
    // statement just before the if.
    const ir::Stmt& cs = r.body.stmts[r.body.stmts.size() - 2];
    const auto* eq = cs.as<ir::PrimOp>();
    if (eq == nullptr || eq->prim != Prim::Eq || cs.results.size() != 1 ||
        cs.results[0] != choice->cond.var) {
      return false;
    }
    ir::Atom a;
    if (eq->args[0].is_var && eq->args[0].var == i) {
      a = eq->args[1];
    } else if (eq->args[1].is_var && eq->args[1].var == i) {
      a = eq->args[0];
    } else {
      return false;
    }
    if ((a.is_var && a.var == i) || (!a.is_var && a.lit.type != Scalar::I64)) return false;
    if (a.is_var) {
      std::unordered_set<ir::VarId> bound;
      for (const auto& st : r.body.stmts) bound.insert(st.results.begin(), st.results.end());
      if (bound.count(a.var) != 0 || f_.type_of(a.var) != Type::scalar(Scalar::I64)) return false;
    }
    // The condition is read only by the if.
    bool other_use = false;
    for (size_t k = 0; k + 2 < r.body.stmts.size(); ++k) {
      for (ir::VarId v : stmt_uses(r.body.stmts[k])) other_use = other_use || v == cs.results[0];
    }
    ir::for_each_use(choice->then_branch,
                     [&](ir::VarId v) { other_use = other_use || v == cs.results[0]; });
    if (other_use || !fire("a sum of a one-hot if is left")) return false;
    // ok = a >= 0 && a < E
    const ir::VarId extent = f_.new_var("extent", Type::scalar(Scalar::I64));
    out.push_back(ir::Stmt{{extent}, ir::SizeOp{r.ivars[0].extent}, s.span});
    const ir::VarId lo = f_.new_var("in_range", Type::scalar(Scalar::Bool));
    out.push_back(ir::Stmt{{lo}, ir::PrimOp{Prim::Ge, {a, ir::Atom::i64(0)}}, s.span});
    const ir::VarId hi = f_.new_var("in_range", Type::scalar(Scalar::Bool));
    out.push_back(ir::Stmt{{hi}, ir::PrimOp{Prim::Lt, {a, ir::Atom::of(extent)}}, s.span});
    const ir::VarId ok = f_.new_var("in_range", Type::scalar(Scalar::Bool));
    out.push_back(
        ir::Stmt{{ok}, ir::PrimOp{Prim::And, {ir::Atom::of(lo), ir::Atom::of(hi)}}, s.span});
    // The term at i = a: S and B with i replaced.
    ir::Block term;
    for (size_t k = 0; k + 2 < r.body.stmts.size(); ++k) term.stmts.push_back(r.body.stmts[k]);
    for (const auto& st : choice->then_branch.stmts) term.stmts.push_back(st);
    term.results = choice->then_branch.results;
    ir::CloneMap map;
    map.atoms[i] = a;
    map.affine[i] = a.is_var ? Affine::var(a.var) : Affine::constant(a.lit.integer);
    ir::IfOp pick;
    pick.cond = ir::Atom::of(ok);
    pick.then_branch = ir::clone_block(f_, term, f_, map);
    pick.else_branch.results.push_back(ir::Atom::real(0.0, t.elem));
    out.push_back(ir::Stmt{s.results, std::move(pick), s.span});
    return true;
  }

  // Loops; true when the statement is gone.
  bool loop(ir::Stmt& s, ir::LoopOp& l, std::vector<ir::Stmt>& out) {
    if (l.saves_states) return false;
    const size_t n = l.state.size();
    if (!l.is_while && !l.count.is_var && l.count.lit.type == Scalar::I64) {
      const int64_t count = l.count.lit.integer;
      if (count <= 0) {
        if (!fire("a for-loop with a trip count <= 0 is left")) return false;
        for (size_t k = 0; k < n; ++k) replace(s.results[k], l.init[k]);
        return true;
      }
      if (count == 1) {
        if (!fire("a for-loop with a trip count of 1 is left")) return false;
        ir::CloneMap map;
        for (size_t k = 0; k < n; ++k) map.atoms[l.state[k]] = l.init[k];
        if (l.iter >= 0) map.atoms[l.iter] = ir::Atom::i64(0);
        ir::Block once = ir::clone_block(f_, l.body, f_, map);
        for (auto& st : once.stmts) out.push_back(std::move(st));
        for (size_t k = 0; k < n; ++k) replace(s.results[k], once.results[k]);
        return true;
      }
    }
    bool all_same = true;
    for (size_t k = 0; k < n; ++k) {
      const ir::Atom& y = l.body.results[k];
      const bool same = y.is_var && y.var == l.state[k];
      all_same = all_same && same;
      if (same && used(s.results[k]) && !(l.init[k].is_var && l.init[k].var == s.results[k])) {
        if (fire("a loop result that no iteration changes is used")) {
          replace(s.results[k], l.init[k]);
        }
      }
    }
    if (all_same && !l.is_while) {
      if (!fire("a for-loop whose body yields its state unchanged is left")) return false;
      for (size_t k = 0; k < n; ++k) replace(s.results[k], l.init[k]);
      return true;
    }
    return false;
  }

  // if c then a else a: results that both branches yield as the same outer atom.
  void if_same(const ir::Stmt& s, const ir::IfOp& op) {
    std::unordered_set<ir::VarId> local;
    for (const auto* b : {&op.then_branch, &op.else_branch}) {
      for (const auto& st : b->stmts) local.insert(st.results.begin(), st.results.end());
    }
    for (size_t k = 0; k < s.results.size(); ++k) {
      const ir::Atom& a = op.then_branch.results[k];
      if (!(a == op.else_branch.results[k]) || (a.is_var && local.count(a.var))) continue;
      if (!used(s.results[k])) continue;
      if (fire("an if result that both branches yield alike is used")) replace(s.results[k], a);
    }
  }

  // for I. A[I] over A's whole shape -> A.
  bool identity_gen(const ir::Stmt& s, const ir::GenOp& g) {
    if (g.body.stmts.size() != 1 || g.body.results.size() != 1) return false;
    const ir::Stmt& rd = g.body.stmts[0];
    const auto* x = rd.as<ir::IndexOp>();
    if (x == nullptr || !x->tensor.is_var || !g.body.results[0].is_var ||
        g.body.results[0].var != rd.results[0] || x->indices.size() != g.ivars.size())
      return false;
    for (size_t k = 0; k < g.ivars.size(); ++k) {
      const auto& ix = x->indices[k];
      if (!ix.is_affine || ix.affine != Affine::var(g.ivars[k].var)) return false;
      if (x->tensor.var == g.ivars[k].var) return false;
    }
    if (f_.type_of(x->tensor.var) != f_.type_of(s.results[0])) return false;
    if (!fire("a generator that copies a tensor is left")) return false;
    replace(s.results[0], x->tensor);
    return true;
  }

  // (for I. c)[a] -> c when the read is provably in range.
  bool const_read(const ir::Stmt& s, const ir::IndexOp& x, const Facts& facts) {
    if (!x.tensor.is_var) return false;
    auto it = const_gens_.find(x.tensor.var);
    if (it == const_gens_.end() || x.indices.size() != it->second.extents.size()) return false;
    for (size_t k = 0; k < x.indices.size(); ++k) {
      const auto& ix = x.indices[k];
      if (!ix.is_affine) return false;
      auto ext = size_affine(f_, it->second.extents[k]);
      if (!ext) return false;
      auto hi = Affine::sub(*ext, ix.affine);
      if (hi) hi = Affine::add(*hi, Affine::constant(-1));
      if (!hi || !fm::implies(facts, ix.affine) || !fm::implies(facts, *hi)) return false;
    }
    if (!fire("a read of a constant generator is left")) return false;
    replace(s.results[0], ir::Atom{false, -1, it->second.value});
    return true;
  }

  ir::Function& f_;
  ir::Scope scope_;
  bool check_only_;
  bool changed_ = false;
  std::string found_;
  Substitution subst_;
  std::vector<int> uses_;
  std::unordered_map<ir::VarId, ConstGen> const_gens_;
};

}  // namespace

PassResult partially_evaluate(const ir::Program&, const ir::Function& f) {
  ir::Function g = f;
  bool changed = false;
  for (int round = 0; round < 8; ++round) {
    PartialEvaluator pe(g, false);
    if (!pe.run()) break;
    changed = true;
  }
  changed = prune_dynamic_sizes(g) || changed;
  return {std::move(g), changed};
}

std::optional<std::string> partial_eval_postcondition(const ir::Program&, const ir::Function& f) {
  ir::Function g = f;
  PartialEvaluator pe(g, true);
  if (pe.run()) return pe.found();
  return std::nullopt;
}

}  // namespace cot::opt
