// Tensor reads, and the static analysis of integer expressions: affine forms (for index
// expressions and predicates, which the sparsity-aware passes reason about) and size
// expressions (for extents). The analysis reads bindings only; it never emits or reports.
#include "check/function_checker.h"

namespace cot::check {
namespace {

const ast::Call* size_call(const ast::Expr& e) {
  const auto* c = e.as<ast::Call>();
  if (c && !c->callee.deriv && c->callee.name == "size" && c->args.size() == 2) return c;
  return nullptr;
}

}  // namespace

ir::VarId FunctionChecker::size_var_id(const std::string& name) const {
  for (const auto& sv : fn_.size_vars) {
    if (sv.name == name) return sv.var;
  }
  return -1;
}

std::optional<Affine> FunctionChecker::size_to_affine(const SizeExpr& s) const {
  auto lin = s.as_linear();
  if (!lin) return std::nullopt;
  std::optional<Affine> out = Affine::constant(lin->constant);
  for (const auto& [name, coeff] : lin->terms) {
    ir::VarId v = size_var_id(name);
    if (v < 0 || !out) return std::nullopt;
    out = Affine::add(*out, Affine::var(v, coeff));
  }
  return out;
}

std::optional<SizeExpr> FunctionChecker::try_size(const ast::Expr& e) const {
  if (const auto* lit = e.as<ast::IntLit>()) {
    if (lit->value < 0) return std::nullopt;
    return SizeExpr::constant(lit->value);
  }
  if (const auto* n = e.as<ast::Name>()) {
    const Binding* b = lookup(n->name);
    if (b && b->val.ok && b->val.size) return b->val.size;
    return std::nullopt;
  }
  if (const auto* u = e.as<ast::Unary>(); u && u->op == ast::UnOp::Neg) {
    auto a = try_size(*u->operand);
    if (!a) return std::nullopt;
    return -*a;
  }
  if (const auto* bin = e.as<ast::Binary>()) {
    auto a = try_size(*bin->lhs);
    auto b = try_size(*bin->rhs);
    if (!a || !b) return std::nullopt;
    std::optional<SizeExpr> out;
    switch (bin->op) {
      case ast::BinOp::Add:
        out = *a + *b;
        break;
      case ast::BinOp::Sub:
        out = *a - *b;
        break;
      case ast::BinOp::Mul:
        out = *a * *b;
        break;
      case ast::BinOp::Div:
        out = SizeExpr::divide(*a, *b);
        break;
      default:
        return std::nullopt;
    }
    if (!out || out->poisoned()) return std::nullopt;
    return out;
  }
  if (const auto* c = size_call(e)) {
    const auto* x = c->args[0]->as<ast::Name>();
    const auto* k = c->args[1]->as<ast::IntLit>();
    if (!x || !k) return std::nullopt;
    const Binding* b = lookup(x->name);
    if (!b || !b->val.ok || b->val.type.is_tuple || k->value < 0 ||
        static_cast<size_t>(k->value) >= b->val.type.rank()) {
      return std::nullopt;
    }
    return b->val.type.shape[static_cast<size_t>(k->value)];
  }
  return std::nullopt;
}

std::optional<Affine> FunctionChecker::try_affine(const ast::Expr& e) const {
  if (const auto* lit = e.as<ast::IntLit>()) return Affine::constant(lit->value);
  if (const auto* n = e.as<ast::Name>()) {
    const Binding* b = lookup(n->name);
    if (b && b->val.ok && b->val.affine && b->val.type.is_scalar() &&
        b->val.type.elem == Scalar::I64) {
      return b->val.affine;
    }
    return std::nullopt;
  }
  if (const auto* u = e.as<ast::Unary>(); u && u->op == ast::UnOp::Neg) {
    auto a = try_affine(*u->operand);
    if (!a) return std::nullopt;
    return Affine::scale(*a, -1);
  }
  if (const auto* bin = e.as<ast::Binary>()) {
    if (bin->op != ast::BinOp::Add && bin->op != ast::BinOp::Sub && bin->op != ast::BinOp::Mul) {
      return std::nullopt;
    }
    auto a = try_affine(*bin->lhs);
    if (!a) return std::nullopt;
    auto b = try_affine(*bin->rhs);
    if (!b) return std::nullopt;
    switch (bin->op) {
      case ast::BinOp::Add:
        return Affine::add(*a, *b);
      case ast::BinOp::Sub:
        return Affine::sub(*a, *b);
      default:
        if (a->is_constant()) return Affine::scale(*b, a->constant_term());
        if (b->is_constant()) return Affine::scale(*a, b->constant_term());
        return std::nullopt;
    }
  }
  if (size_call(e)) {
    auto s = try_size(e);
    if (s) return size_to_affine(*s);
  }
  return std::nullopt;
}

std::optional<Pred> FunctionChecker::try_pred(const ast::Expr& e) const {
  if (const auto* lit = e.as<ast::BoolLit>()) return lit->value ? Pred::truth() : Pred::falsity();
  if (const auto* n = e.as<ast::Name>()) {
    const Binding* b = lookup(n->name);
    if (b && b->val.ok && b->val.type.is_scalar() && b->val.type.elem == Scalar::Bool) {
      if (!b->val.atom.is_var) return b->val.atom.lit.boolean ? Pred::truth() : Pred::falsity();
      return Pred::atom_of(b->val.atom.var);
    }
    return std::nullopt;
  }
  if (const auto* u = e.as<ast::Unary>(); u && u->op == ast::UnOp::Not) {
    auto p = try_pred(*u->operand);
    if (!p) return std::nullopt;
    return p->negate();
  }
  if (const auto* bin = e.as<ast::Binary>()) {
    if (bin->op == ast::BinOp::And || bin->op == ast::BinOp::Or) {
      auto a = try_pred(*bin->lhs);
      if (!a) return std::nullopt;
      auto b = try_pred(*bin->rhs);
      if (!b) return std::nullopt;
      return bin->op == ast::BinOp::And ? Pred::conj({*a, *b}) : Pred::disj({*a, *b});
    }
    const char* op = nullptr;
    switch (bin->op) {
      case ast::BinOp::Lt:
        op = "<";
        break;
      case ast::BinOp::Le:
        op = "<=";
        break;
      case ast::BinOp::Gt:
        op = ">";
        break;
      case ast::BinOp::Ge:
        op = ">=";
        break;
      case ast::BinOp::Eq:
        op = "==";
        break;
      case ast::BinOp::Ne:
        op = "!=";
        break;
      default:
        return std::nullopt;
    }
    auto a = try_affine(*bin->lhs);
    if (!a) return std::nullopt;
    auto b = try_affine(*bin->rhs);
    if (!b) return std::nullopt;
    return Pred::compare(*a, op, *b);
  }
  return std::nullopt;
}

Val FunctionChecker::index(const ast::Index& ix, Span span) {
  Val base = expr(*ix.base);
  std::vector<ir::IndexExpr> idx;
  bool ok = base.ok;
  if (base.ok && (base.type.is_tuple || base.type.rank() < ix.indices.size())) {
    if (base.type.is_tuple) {
      diags_.error(ix.base->span, "a tuple cannot be indexed",
                   "destructure it with `let (a, b) = ...`");
    } else if (base.type.is_scalar()) {
      diags_.error(span, "a scalar (" + base.type.to_string() + ") cannot be indexed");
    } else {
      diags_.error(span, "too many indices: " + base.type.to_string() + " has rank " +
                             std::to_string(base.type.rank()) + " but is indexed with " +
                             std::to_string(ix.indices.size()));
    }
    ok = false;
  }
  std::string base_name = "this tensor";
  if (const auto* n = ix.base->as<ast::Name>()) base_name = n->name;
  for (size_t d = 0; d < ix.indices.size(); ++d) {
    const ast::Expr& ie = *ix.indices[d];
    // A whole index `x[.., i, ..]` tells the extent of i.
    if (const auto* n = ie.as<ast::Name>(); n && ok) {
      const Binding* b = lookup(n->name);
      if (b && b->kind == Binding::Kind::IndexVar && b->binder >= 0) {
        binders_[static_cast<size_t>(b->binder)].uses.emplace_back(
            base.type.shape[d], ie.span,
            base_name + "[" + n->name + "] in dimension " + std::to_string(d));
      }
    }
    if (auto a = try_affine(ie)) {
      idx.push_back(ir::IndexExpr{true, *a, {}});
      continue;
    }
    Val v = expr(ie);
    if (!v.ok) {
      ok = false;
      continue;
    }
    if (v.weak && !v.atom.is_var && v.atom.lit.type == Scalar::I64) {
      idx.push_back(ir::IndexExpr{true, Affine::constant(v.atom.lit.integer), {}});
      continue;
    }
    if (!v.type.is_scalar() || v.type.elem != Scalar::I64) {
      diags_.error(ie.span, "an index must be an integer (i64), found " + v.type.to_string(),
                   is_real(v.type.elem) && v.type.is_scalar() ? "convert it with `i64(...)`" : "");
      ok = false;
      continue;
    }
    if (v.affine) {
      idx.push_back(ir::IndexExpr{true, *v.affine, {}});
    } else {
      idx.push_back(ir::IndexExpr{false, {}, v.atom});
    }
  }
  if (!ok) return Val::error(span);
  std::vector<SizeExpr> rest(base.type.shape.begin() + static_cast<long>(idx.size()),
                             base.type.shape.end());
  Type t = Type::tensor(base.type.elem, std::move(rest));
  return var_val(emit(ir::IndexOp{base.atom, std::move(idx)}, t, span), span);
}

}  // namespace cot::check
