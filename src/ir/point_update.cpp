// Point updates of a tensor: see point_update.h.
#include "ir/point_update.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "ir/binders.h"

namespace cot::ir {
namespace {

// What a value is at a point where no pin holds.
enum class PointKind : uint8_t {
  Unknown,     // some value, computed without failing
  False,       // a bool that is false there (a pin's equality)
  True,        // a bool that is true there (its negation)
  StrongZero,  // a strong zero (+0.0)
  State,       // s at the point, mask included
  StatePlus0,  // s at the point plus a strong zero: -0.0 becomes +0.0, the mask is s's
};

PointKind merge_kinds(PointKind a, PointKind b) {
  return a == b ? a : PointKind::Unknown;
}

class PointUpdateEval {
 public:
  PointUpdateEval(const Function& f, const GenOp& gen, VarId s) : f_(f), gen_(gen), s_(s) {
    for (size_t d = 0; d < gen.ivars.size(); ++d) ivar_pos_[gen.ivars[d].var] = d;
    for (const Stmt& st : gen.body.stmts) for_each_binder(st, [&](VarId v) { inner_.insert(v); });
  }

  std::optional<PointUpdate> run() {
    if (!block(gen_.body)) return std::nullopt;
    if (gen_.body.results.size() != 1) return std::nullopt;
    const PointKind r = kind_of(gen_.body.results[0]);
    if (r != PointKind::State && r != PointKind::StatePlus0) return std::nullopt;
    out_.adds_zero = r == PointKind::StatePlus0;
    return std::move(out_);
  }

 private:
  PointKind kind_of(const Atom& a) const {
    if (!a.is_var) return PointKind::Unknown;
    auto it = kinds_.find(a.var);
    return it == kinds_.end() ? PointKind::Unknown : it->second;
  }

  // e == 0 as a pin: e = ±i + rest, i an index variable of the generator, rest of variables
  // bound outside it. The pin is i = ∓rest.
  std::optional<Pin> pin_of(const Affine& e) const {
    std::optional<size_t> at;
    int64_t coeff = 0;
    for (const auto& [v, c] : e.terms()) {
      auto p = ivar_pos_.find(v);
      if (p != ivar_pos_.end()) {
        if (at || (c != 1 && c != -1)) return std::nullopt;
        at = p->second;
        coeff = c;
      } else if (inner_.count(v) != 0) {
        return std::nullopt;
      }
    }
    if (!at) return std::nullopt;
    const VarId iv = gen_.ivars[*at].var;
    auto rest = Affine::sub(e, Affine::var(iv, coeff));
    if (!rest) return std::nullopt;
    auto value = coeff == 1 ? Affine::scale(*rest, -1) : rest;
    if (!value) return std::nullopt;
    return Pin{*at, *value};
  }

  // Whether e uses a variable bound inside the generator (the caller could not bound it).
  bool mentions_inner(const Affine& e) const {
    for (const auto& [v, c] : e.terms()) {
      if (inner_.count(v) != 0) return true;
    }
    return false;
  }

  void add_pin(const Pin& p) {
    if (std::find(out_.boxes.begin(), out_.boxes.end(), p) == out_.boxes.end()) {
      out_.boxes.push_back(p);
    }
  }

  // The truth of a predicate off the pins, as Pred::eval evaluates it (short-circuit).
  std::optional<PointKind> pred(const Pred& p) {
    switch (p.kind) {
      case Pred::Kind::True:
        return PointKind::True;
      case Pred::Kind::False:
        return PointKind::False;
      case Pred::Kind::Atom: {
        const PointKind k = kind_of(Atom::of(p.atom));
        if (k == PointKind::True || k == PointKind::False) {
          return (k == PointKind::True) != p.negated ? PointKind::True : PointKind::False;
        }
        return PointKind::Unknown;
      }
      case Pred::Kind::Eq0: {
        if (mentions_inner(p.expr)) return std::nullopt;
        out_.evaluated.push_back(p.expr);
        if (auto pin = pin_of(p.expr)) {
          add_pin(*pin);
          return PointKind::False;
        }
        return PointKind::Unknown;
      }
      case Pred::Kind::Ge0:
        if (mentions_inner(p.expr)) return std::nullopt;
        out_.evaluated.push_back(p.expr);
        return PointKind::Unknown;
      case Pred::Kind::And:
      case Pred::Kind::Or: {
        const bool is_and = p.kind == Pred::Kind::And;
        // `d - 1 >= 0 || -d - 1 >= 0` is d != 0: true off the pin d == 0.
        if (!is_and && p.kids.size() == 2 && p.kids[0].kind == Pred::Kind::Ge0 &&
            p.kids[1].kind == Pred::Kind::Ge0) {
          auto sum = Affine::add(p.kids[0].expr, p.kids[1].expr);
          auto d = Affine::add(p.kids[0].expr, Affine::constant(1));
          if (sum && d && *sum == Affine::constant(-2)) {
            if (auto pin = pin_of(*d)) {
              out_.evaluated.push_back(p.kids[0].expr);
              out_.evaluated.push_back(p.kids[1].expr);
              add_pin(*pin);
              return PointKind::True;
            }
          }
        }
        const PointKind decides = is_and ? PointKind::False : PointKind::True;
        bool all = true;
        for (const Pred& k : p.kids) {
          auto r = pred(k);
          if (!r) return std::nullopt;
          if (*r == decides) return decides;
          all = all && *r != PointKind::Unknown;
        }
        return all ? (is_and ? PointKind::True : PointKind::False) : PointKind::Unknown;
      }
    }
    return std::nullopt;
  }

  bool block(const Block& b) {
    for (const Stmt& st : b.stmts) {
      if (!stmt(st)) return false;
    }
    return true;
  }

  // Runs `b` and returns its results' kinds (nullopt: it may fail or is not understood).
  std::optional<std::vector<PointKind>> region(const Block& b) {
    if (!block(b)) return std::nullopt;
    std::vector<PointKind> r;
    for (const Atom& a : b.results) r.push_back(kind_of(a));
    return r;
  }

  void bind_all(const Stmt& st, const std::vector<PointKind>& ks) {
    for (size_t k = 0; k < st.results.size() && k < ks.size(); ++k) kinds_[st.results[k]] = ks[k];
  }

  // A read that cannot fail: s at the point (the state's element), or a tensor whose shape is
  // the extents read at exactly the point.
  std::optional<PointKind> read(const IndexOp& op) {
    if (!op.tensor.is_var || op.indices.size() != gen_.ivars.size()) return std::nullopt;
    const Type& t = f_.type_of(op.tensor.var);
    if (t.shape.size() != gen_.ivars.size()) return std::nullopt;
    for (size_t d = 0; d < gen_.ivars.size(); ++d) {
      const IndexExpr& ix = op.indices[d];
      if (!ix.is_affine || ix.affine != Affine::var(gen_.ivars[d].var)) return std::nullopt;
      if (!(t.shape[d] == gen_.ivars[d].extent)) return std::nullopt;
    }
    if (inner_.count(op.tensor.var) != 0) return std::nullopt;
    return op.tensor.var == s_ ? PointKind::State : PointKind::Unknown;
  }

  std::optional<PointKind> prim(const Stmt& st, const PrimOp& op) {
    const Type& rt = f_.type_of(st.results[0]);
    auto k = [&](size_t i) { return kind_of(op.args.at(i)); };
    auto is = [&](size_t i, PointKind want) { return k(i) == want; };
    auto either = [&](PointKind a, PointKind b) {
      return (is(0, a) && is(1, b)) || (is(0, b) && is(1, a));
    };
    if (op.prim == Prim::Eq && op.args.size() == 2 &&
        atom_type(f_, op.args[0]).elem == Scalar::I64) {
      for (size_t i = 0; i < 2; ++i) {
        const Atom& a = op.args[i];
        const Atom& b = op.args[1 - i];
        if (!a.is_var || ivar_pos_.count(a.var) == 0) continue;
        if (!b.is_var) {
          add_pin(Pin{ivar_pos_[a.var], Affine::constant(b.lit.integer)});
          return PointKind::False;
        }
        if (ivar_pos_.count(b.var) == 0 && inner_.count(b.var) == 0) {
          add_pin(Pin{ivar_pos_[a.var], Affine::var(b.var)});
          return PointKind::False;
        }
      }
      return PointKind::Unknown;
    }
    switch (op.prim) {
      case Prim::Not:
        if (is(0, PointKind::False)) return PointKind::True;
        if (is(0, PointKind::True)) return PointKind::False;
        return PointKind::Unknown;
      case Prim::And:
        if (is(0, PointKind::False) || is(1, PointKind::False)) return PointKind::False;
        return is(0, PointKind::True) && is(1, PointKind::True) ? PointKind::True
                                                                : PointKind::Unknown;
      case Prim::Or:
        if (is(0, PointKind::True) || is(1, PointKind::True)) return PointKind::True;
        return is(0, PointKind::False) && is(1, PointKind::False) ? PointKind::False
                                                                  : PointKind::Unknown;
      case Prim::Select:
        if (is(0, PointKind::True)) return k(1);
        if (is(0, PointKind::False)) return k(2);
        return PointKind::Unknown;
      case Prim::ToI64:
        return std::nullopt;  // may fail
      default:
        break;
    }
    // Integer arithmetic may overflow; comparisons, logic and real arithmetic cannot fail.
    if (rt.elem == Scalar::I64 && op.prim != Prim::Max && op.prim != Prim::Min) {
      return std::nullopt;
    }
    if (!is_real(rt.elem)) return PointKind::Unknown;
    switch (op.prim) {
      case Prim::Add:
        if (is(0, PointKind::StrongZero) && is(1, PointKind::StrongZero)) {
          return PointKind::StrongZero;
        }
        if (either(PointKind::StrongZero, PointKind::State) ||
            either(PointKind::StrongZero, PointKind::StatePlus0)) {
          return PointKind::StatePlus0;
        }
        return PointKind::Unknown;
      case Prim::Sub:
        // x - (+0.0) is x, -0.0 included; the mask is x's.
        if (is(1, PointKind::StrongZero) &&
            (is(0, PointKind::StrongZero) || is(0, PointKind::State) ||
             is(0, PointKind::StatePlus0))) {
          return k(0);
        }
        return PointKind::Unknown;
      case Prim::Mul:
        return is(0, PointKind::StrongZero) || is(1, PointKind::StrongZero) ? PointKind::StrongZero
                                                                            : PointKind::Unknown;
      case Prim::Div:
      case Prim::Neg:
        return is(0, PointKind::StrongZero) ? PointKind::StrongZero : PointKind::Unknown;
      default:
        return PointKind::Unknown;
    }
  }

  bool stmt(const Stmt& st) {
    if (const auto* p = st.as<PrimOp>()) {
      auto r = prim(st, *p);
      if (!r) return false;
      kinds_[st.results[0]] = *r;
      return true;
    }
    if (const auto* ix = st.as<IndexOp>()) {
      auto r = read(*ix);
      if (!r) return false;
      kinds_[st.results[0]] = *r;
      return true;
    }
    if (const auto* g = st.as<GuardOp>()) {
      auto holds = pred(g->pred);
      if (!holds) return false;
      std::vector<PointKind> zeros;
      for (VarId v : st.results) {
        const Type& t = f_.type_of(v);
        zeros.push_back(t.is_scalar() && is_real(t.elem) ? PointKind::StrongZero
                                                         : PointKind::Unknown);
      }
      if (*holds == PointKind::False) {
        bind_all(st, zeros);
        return true;
      }
      auto body = region(g->body);
      if (!body) return false;
      if (*holds == PointKind::Unknown) {
        for (size_t k = 0; k < body->size() && k < zeros.size(); ++k) {
          (*body)[k] = merge_kinds((*body)[k], zeros[k]);
        }
      }
      bind_all(st, *body);
      return true;
    }
    if (const auto* i = st.as<IfOp>()) {
      const PointKind c = kind_of(i->cond);
      if (c == PointKind::True || c == PointKind::False) {
        auto r = region(c == PointKind::True ? i->then_branch : i->else_branch);
        if (!r) return false;
        bind_all(st, *r);
        return true;
      }
      auto a = region(i->then_branch);
      if (!a) return false;
      auto b = region(i->else_branch);
      if (!b) return false;
      for (size_t k = 0; k < a->size() && k < b->size(); ++k)
        (*a)[k] = merge_kinds((*a)[k], (*b)[k]);
      bind_all(st, *a);
      return true;
    }
    // Nested regions, calls, loops, sizes, tuples: not followed (they may fail or cost).
    return false;
  }

  const Function& f_;
  const GenOp& gen_;
  const VarId s_;
  std::map<VarId, size_t> ivar_pos_;
  std::set<VarId> inner_;
  std::map<VarId, PointKind> kinds_;
  PointUpdate out_;
};

}  // namespace

std::optional<PointUpdate> point_update(const Function& f, const Stmt& gen, VarId s) {
  const auto* op = gen.as<GenOp>();
  if (op == nullptr || gen.results.size() != 1) return std::nullopt;
  const Type& st = f.type_of(s);
  const Type& rt = f.type_of(gen.results[0]);
  if (!st.is_tensor() || st.elem != rt.elem || st.shape.size() != op->ivars.size() ||
      !(rt.shape == st.shape)) {
    return std::nullopt;
  }
  for (size_t d = 0; d < op->ivars.size(); ++d) {
    if (!(op->ivars[d].extent == st.shape[d])) return std::nullopt;
  }
  PointUpdateEval eval(f, *op, s);
  auto r = eval.run();
  if (r && r->adds_zero && !is_real(st.elem)) return std::nullopt;
  return r;
}

}  // namespace cot::ir
