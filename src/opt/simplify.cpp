#include "opt/simplify.h"

#include <cmath>
#include <limits>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "ir/regions.h"
#include "opt/dynamic_sizes.h"
#include "opt/iverson.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

struct Operand {
  Scalar type = Scalar::F64;
  double real = 0;
  float f32 = 0;
  int64_t i = 0;
  bool b = false;
};

// The value of `p` on literal operands, as the interpreter computes it (interp/eval_prim.cpp);
// nullopt when it fails (the run-time error stays).
std::optional<ir::Literal> fold(Prim p, const std::vector<ir::Atom>& args) {
  const PrimInfo& info = prim_info(p);
  const size_t n = args.size();
  if (n > 3 || static_cast<int>(n) != info.arity) return std::nullopt;
  Operand a[3];
  Scalar types[3] = {};
  for (size_t k = 0; k < n; ++k) {
    if (args[k].is_var) return std::nullopt;
    const ir::Literal& l = args[k].lit;
    Operand& o = a[k];
    o.type = l.type;
    if (l.type == Scalar::F32) {
      if (!(std::fabs(l.real) <= std::numeric_limits<float>::max()) && !std::isinf(l.real))
        return std::nullopt;
      o.f32 = static_cast<float>(l.real);
      o.real = o.f32;
    } else {
      o.real = l.real;
    }
    o.i = l.integer;
    o.b = l.boolean;
    types[k] = l.type;
  }
  std::string why;
  std::optional<Scalar> rt = prim_result_type(p, std::span<const Scalar>(types, n), &why);
  if (!rt) return std::nullopt;
  ir::Literal out;
  out.type = *rt;
  auto real_out = [&](double x) -> std::optional<ir::Literal> {
    out.real = x;
    return out;
  };
  switch (info.type_rule) {
    case TypeRule::Compare:
      if (is_real(a[0].type)) {
        out.boolean = eval_prim_compare_f64(p, a[0].real, a[1].real);
      } else if (a[0].type == Scalar::I64) {
        out.boolean = eval_prim_compare_i64(p, a[0].i, a[1].i);
      } else {
        out.boolean = eval_prim_compare_i64(p, a[0].b ? 1 : 0, a[1].b ? 1 : 0);
      }
      return out;
    case TypeRule::Logic: {
      bool bs[3] = {a[0].b, a[1].b, a[2].b};
      out.boolean = eval_prim_logic(p, std::span<const bool>(bs, n));
      return out;
    }
    case TypeRule::Select:
      return args[a[0].b ? 1 : 2].lit;
    case TypeRule::ConvertF64:
      return real_out(a[0].type == Scalar::I64    ? static_cast<double>(a[0].i)
                      : a[0].type == Scalar::Bool ? (a[0].b ? 1.0 : 0.0)
                                                  : a[0].real);
    case TypeRule::ConvertF32: {
      if (a[0].type == Scalar::F64 && !(std::fabs(a[0].real) <= std::numeric_limits<float>::max()))
        return std::nullopt;
      const float x = a[0].type == Scalar::I64    ? static_cast<float>(a[0].i)
                      : a[0].type == Scalar::Bool ? (a[0].b ? 1.0f : 0.0f)
                      : a[0].type == Scalar::F32  ? a[0].f32
                                                  : static_cast<float>(a[0].real);
      return real_out(static_cast<double>(x));
    }
    case TypeRule::ConvertI64:
      if (is_real(a[0].type)) {
        auto i = convert_real_to_i64(a[0].real, &why);
        if (!i) return std::nullopt;
        out.integer = *i;
      } else {
        out.integer = a[0].type == Scalar::Bool ? (a[0].b ? 1 : 0) : a[0].i;
      }
      return out;
    case TypeRule::SameAny:
      return args[0].lit;
    case TypeRule::SameNumeric:
    case TypeRule::SameReal:
    case TypeRule::IntOnly:
      switch (*rt) {
        case Scalar::F64: {
          if (info.eval_f64 == nullptr) return std::nullopt;
          double xs[3] = {a[0].real, a[1].real, a[2].real};
          return real_out(info.eval_f64(xs));
        }
        case Scalar::F32: {
          if (info.eval_f32 == nullptr) return std::nullopt;
          float xs[3] = {a[0].f32, a[1].f32, a[2].f32};
          return real_out(static_cast<double>(info.eval_f32(xs)));
        }
        case Scalar::I64: {
          int64_t xs[3] = {a[0].i, a[1].i, a[2].i};
          auto r = eval_prim_i64(p, std::span<const int64_t>(xs, n), &why);
          if (!r) return std::nullopt;
          out.integer = *r;
          return out;
        }
        case Scalar::Bool:
          return std::nullopt;
      }
  }
  return std::nullopt;
}

bool is_lit_num(const ir::Atom& a, double v) {
  if (a.is_var) return false;
  if (is_real(a.lit.type)) return a.lit.real == v;
  if (a.lit.type == Scalar::I64) return static_cast<double>(a.lit.integer) == v;
  return false;
}
bool is_lit_bool(const ir::Atom& a, bool v) {
  return !a.is_var && a.lit.type == Scalar::Bool && a.lit.boolean == v;
}

class Simplifier {
 public:
  Simplifier(ir::Function& f, bool check_only) : f_(f), check_only_(check_only) {}

  // One walk; returns whether anything changed (in check mode, whether a rule applies).
  bool run() {
    block(f_.body);
    if (!check_only_ && !subst_.empty()) substitute_uses(f_.body, subst_);
    return changed_;
  }
  const std::string& found() const { return found_; }

 private:
  ir::Atom resolve(const ir::Atom& a) const {
    if (a.is_var) {
      auto it = subst_.find(a.var);
      if (it != subst_.end()) return it->second;
    }
    return a;
  }
  bool is_zero(const ir::Atom& a) const { return a.is_var && zeros_.count(a.var) > 0; }
  // A strong zero that stays one through products: not a sum (over a range that may be empty,
  // an ordinary 0 as a factor), but a False guard, or a guard or projection of one.
  bool is_strong(const ir::Atom& a) const { return a.is_var && strong_.count(a.var) > 0; }

  // Records that a rule applies; in check mode, the first one is reported.
  bool fire(const char* what) {
    changed_ = true;
    if (found_.empty()) found_ = what;
    return !check_only_;
  }
  void replace(ir::VarId v, ir::Atom by) {
    by = resolve(by);
    subst_[v] = by;
    if (is_zero(by)) zeros_.insert(v);
    if (is_strong(by)) strong_.insert(v);
  }

  void resolve_operands(ir::Stmt& s) {
    if (check_only_) return;
    map_direct_operands(s.op, [&](const ir::Atom& a) { return resolve(a); });
  }

  void nested(ir::Stmt& s) {
    // A literal condition: only the taken branch is kept (and simplified below).
    if (const auto* i = s.as<ir::IfOp>(); i != nullptr && !i->cond.is_var) return;
    ir::for_each_region(s, [&](ir::Block& r) { block(r); });
  }

  void block(ir::Block& b) {
    std::vector<ir::Stmt> out;
    out.reserve(b.stmts.size());
    for (auto& s : b.stmts) {
      resolve_operands(s);
      nested(s);
      stmt(std::move(s), out);
    }
    b.stmts = std::move(out);
    if (!check_only_) {
      for (auto& a : b.results) a = resolve(a);
    }
  }

  void stmt(ir::Stmt s, std::vector<ir::Stmt>& out) {
    if (auto* p = s.as<ir::PrimOp>()) {
      if (prim(s, *p)) return;
      if (p->prim == Prim::Neg || p->prim == Prim::Not) defs_[s.results[0]] = *p;
    } else if (auto* z = s.as<ir::SizeOp>()) {
      // A constant size (a jacobian's choice of mode at fixed shapes) is a literal, so the
      // comparisons it feeds fold and the untaken mode is dropped.
      if (auto c = z->size.as_constant(); c && !is_dynamic_size(f_, s.results[0])) {
        if (fire("a constant size is left as a statement")) {
          replace(s.results[0], ir::Atom::i64(*c));
          return;
        }
      }
    } else if (auto* t = s.as<ir::TupleOp>()) {
      tuples_[s.results[0]] = t->elems;
    } else if (auto* pr = s.as<ir::ProjOp>()) {
      if (pr->tuple.is_var) {
        auto it = tuples_.find(pr->tuple.var);
        if (it != tuples_.end() && pr->index >= 0 &&
            static_cast<size_t>(pr->index) < it->second.size()) {
          if (fire("a projection of a tuple built in the function is left")) {
            replace(s.results[0], it->second[static_cast<size_t>(pr->index)]);
            return;
          }
        }
        if (is_zero(pr->tuple)) zeros_.insert(s.results[0]);
        if (is_strong(pr->tuple)) strong_.insert(s.results[0]);
      }
    } else if (auto* i = s.as<ir::IfOp>()) {
      if (!i->cond.is_var && i->cond.lit.type == Scalar::Bool) {
        if (fire("an if with a literal condition is left")) {
          ir::Block& taken = i->cond.lit.boolean ? i->then_branch : i->else_branch;
          block(taken);
          for (auto& st : taken.stmts) out.push_back(std::move(st));
          for (size_t k = 0; k < s.results.size(); ++k) replace(s.results[k], taken.results[k]);
          return;
        }
      }
    } else if (auto* g = s.as<ir::GuardOp>()) {
      for (size_t k = 0; k < s.results.size(); ++k) {
        if (g->pred.kind == Pred::Kind::False || is_zero(g->body.results[k]))
          zeros_.insert(s.results[k]);
        if (g->pred.kind == Pred::Kind::False || is_strong(g->body.results[k]))
          strong_.insert(s.results[k]);
      }
    } else if (auto* r = s.as<ir::ReduceOp>()) {
      if (r->kind == ir::ReduceKind::Sum && is_zero(r->body.results[0]))
        zeros_.insert(s.results[0]);
    }
    out.push_back(std::move(s));
  }

  // Applies the primitive rules; true when the statement is gone (its result replaced).
  bool prim(ir::Stmt& s, ir::PrimOp& p) {
    const ir::VarId r = s.results[0];
    const Type& rt = f_.type_of(r);
    if (rt.is_tuple || !rt.is_scalar()) return false;
    if (is_dynamic_size(f_, r)) return false;  // types name it: its statement stays
    const auto& a = p.args;
    bool all_lit = true;
    for (const auto& x : a) all_lit = all_lit && !x.is_var;
    if (all_lit) {
      if (auto v = fold(p.prim, a)) {
        if (fire("a primitive on literals is left unfolded")) {
          replace(r, ir::Atom{false, -1, *v});
          return true;
        }
        return false;
      }
    }
    auto gone = [&](const char* what, const ir::Atom& by) {
      if (!fire(what)) return false;
      replace(r, by);
      return true;
    };
    const Scalar elem = rt.elem;
    switch (p.prim) {
      case Prim::Add:
        if (is_lit_num(a[1], 0) || is_zero(a[1])) return gone("x + 0 is left", a[0]);
        if (is_lit_num(a[0], 0) || is_zero(a[0])) return gone("0 + x is left", a[1]);
        break;
      case Prim::Sub:
        if (is_lit_num(a[1], 0) || is_zero(a[1])) return gone("x - 0 is left", a[0]);
        if (is_lit_num(a[0], 0)) {
          if (!fire("0 - x is left")) return false;
          p = ir::PrimOp{Prim::Neg, {a[1]}};
          defs_[r] = p;
          changed_ = true;
          return false;
        }
        break;
      case Prim::Mul:
        // A product with a strong zero is one (mask propagation, docs/language.md §5.6).
        if (is_real(elem) && is_strong(a[0])) return gone("a strong zero times x is left", a[0]);
        if (is_real(elem) && is_strong(a[1])) return gone("x times a strong zero is left", a[1]);
        if (is_lit_num(a[1], 1)) return gone("x * 1 is left", a[0]);
        if (is_lit_num(a[0], 1)) return gone("1 * x is left", a[1]);
        // Exact on i64: 0 * x is 0 and cannot overflow (licm's `0 * k + j` of a reverse-mode
        // index, which scatter reads as j). x's statement may then be dead and go, with an
        // error only it would raise: optimization may remove those (docs/language.md §9).
        if (elem == Scalar::I64 && (is_lit_num(a[0], 0) || is_lit_num(a[1], 0)))
          return gone("0 * x is left (i64)", ir::Atom::i64(0));
        break;
      case Prim::Div:
        if (is_real(elem) && is_strong(a[0])) return gone("a strong zero divided is left", a[0]);
        if (is_lit_num(a[1], 1)) return gone("x / 1 is left", a[0]);
        break;
      case Prim::FloorDiv:
      case Prim::ExactDiv:
        if (is_lit_num(a[1], 1)) return gone("x / 1 is left", a[0]);
        break;
      case Prim::Neg:
        if (is_zero(a[0])) return gone("the negation of a strong zero is left", a[0]);
        if (is_real(elem) && a[0].is_var) {
          auto it = defs_.find(a[0].var);
          if (it != defs_.end() && it->second.prim == Prim::Neg)
            return gone("-(-x) is left", it->second.args[0]);
        }
        break;
      case Prim::Not:
        if (a[0].is_var) {
          auto it = defs_.find(a[0].var);
          if (it != defs_.end() && it->second.prim == Prim::Not)
            return gone("!!b is left", it->second.args[0]);
        }
        break;
      case Prim::And:
        if (is_lit_bool(a[1], true)) return gone("b && true is left", a[0]);
        if (is_lit_bool(a[0], true)) return gone("true && b is left", a[1]);
        if (is_lit_bool(a[1], false) || is_lit_bool(a[0], false))
          return gone("b && false is left", ir::Atom::boolean(false));
        break;
      case Prim::Or:
        if (is_lit_bool(a[1], false)) return gone("b || false is left", a[0]);
        if (is_lit_bool(a[0], false)) return gone("false || b is left", a[1]);
        if (is_lit_bool(a[1], true) || is_lit_bool(a[0], true))
          return gone("b || true is left", ir::Atom::boolean(true));
        break;
      case Prim::Select:
        if (!a[0].is_var && a[0].lit.type == Scalar::Bool)
          return gone("a select with a literal condition is left", a[a[0].lit.boolean ? 1 : 2]);
        break;
      case Prim::ToF64:
      case Prim::ToF32:
      case Prim::ToI64:
        if (ir::atom_type(f_, a[0]) == rt)
          return gone("a conversion to the same type is left", a[0]);
        break;
      default:
        break;
    }
    return false;
  }

  ir::Function& f_;
  bool check_only_;
  bool changed_ = false;
  std::string found_;
  Substitution subst_;
  std::unordered_set<ir::VarId> zeros_;
  std::unordered_set<ir::VarId> strong_;  // ⊆ zeros_
  std::unordered_map<ir::VarId, ir::PrimOp> defs_;
  std::unordered_map<ir::VarId, std::vector<ir::Atom>> tuples_;
};

}  // namespace

PassResult simplify_algebra(const ir::Program&, const ir::Function& f) {
  ir::Function g = f;
  bool changed = false;
  for (int round = 0; round < 8; ++round) {
    Simplifier s(g, false);
    if (!s.run()) break;
    changed = true;
  }
  changed = prune_dynamic_sizes(g) || changed;
  return {std::move(g), changed};
}

std::optional<std::string> simplify_postcondition(const ir::Program&, const ir::Function& f) {
  ir::Function g = f;
  Simplifier s(g, true);
  if (s.run()) return s.found();
  return std::nullopt;
}

}  // namespace cot::opt
