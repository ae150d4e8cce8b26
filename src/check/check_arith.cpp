// Types of arithmetic, comparisons and logic; literal adaptation; elementwise lifting of
// scalar operations to tensors (desugared into generators, so Core IR primitives stay scalar).
#include <cmath>

#include "check/function_checker.h"

namespace cot::check {
namespace {

bool is_int_literal(const Val& v) {
  return v.weak && !v.atom.is_var && v.atom.lit.type == Scalar::I64;
}
bool is_real_literal(const Val& v) {
  return v.weak && !v.atom.is_var && is_real(v.atom.lit.type);
}

std::string op_text(ast::BinOp op) {
  return std::string("`") + ast::to_string(op) + "`";
}

Prim prim_of(ast::BinOp op, Scalar t) {
  switch (op) {
    case ast::BinOp::Add:
      return Prim::Add;
    case ast::BinOp::Sub:
      return Prim::Sub;
    case ast::BinOp::Mul:
      return Prim::Mul;
    case ast::BinOp::Div:
      return t == Scalar::I64 ? Prim::ExactDiv : Prim::Div;
    case ast::BinOp::FloorDiv:
      return Prim::FloorDiv;
    case ast::BinOp::Mod:
      return Prim::Mod;
    case ast::BinOp::Lt:
      return Prim::Lt;
    case ast::BinOp::Le:
      return Prim::Le;
    case ast::BinOp::Gt:
      return Prim::Gt;
    case ast::BinOp::Ge:
      return Prim::Ge;
    case ast::BinOp::Eq:
      return Prim::Eq;
    case ast::BinOp::Ne:
      return Prim::Ne;
    case ast::BinOp::And:
      return Prim::And;
    case ast::BinOp::Or:
      return Prim::Or;
    case ast::BinOp::Pow:
      return Prim::Pow;
  }
  return Prim::Add;
}

// Whether a factor of a product is an Iverson bracket, looking through `*` and unary `-`.
bool has_iverson_factor(const ast::Expr& e) {
  if (e.as<ast::Iverson>()) return true;
  if (const auto* b = e.as<ast::Binary>(); b && b->op == ast::BinOp::Mul) {
    return has_iverson_factor(*b->lhs) || has_iverson_factor(*b->rhs);
  }
  if (const auto* u = e.as<ast::Unary>(); u && u->op == ast::UnOp::Neg) {
    return has_iverson_factor(*u->operand);
  }
  return false;
}

// An integer literal exponent, as in `x ^ 2` or `x ^ -1`.
std::optional<int64_t> literal_exponent(const ast::Expr& e) {
  if (const auto* lit = e.as<ast::IntLit>()) return lit->value;
  if (const auto* u = e.as<ast::Unary>(); u && u->op == ast::UnOp::Neg) {
    if (const auto* lit = u->operand->as<ast::IntLit>()) return -lit->value;
  }
  return std::nullopt;
}

}  // namespace

Val FunctionChecker::convert_literal(const Val& v, Scalar to) {
  Val out = v;
  out.type = Type::scalar(to);
  out.atom = is_real(to) ? ir::Atom::real(v.atom.lit.type == Scalar::I64
                                              ? static_cast<double>(v.atom.lit.integer)
                                              : v.atom.lit.real,
                                          to)
                         : v.atom;
  if (to == Scalar::F32) out.atom.lit.real = static_cast<float>(out.atom.lit.real);
  if (is_real(to)) {
    out.affine.reset();
    out.size.reset();
  }
  return out;
}

Val FunctionChecker::coerce(const Val& v, const Type& want, Span span, const std::string& what) {
  if (!v.ok) return v;
  if (v.weak && want.is_scalar()) {
    if (is_int_literal(v) && is_numeric(want.elem)) return convert_literal(v, want.elem);
    if (is_real_literal(v) && is_real(want.elem)) return convert_literal(v, want.elem);
  }
  if (v.type != want) {
    std::string help;
    if (v.weak && want.is_scalar() && want.elem == Scalar::I64 && is_real_literal(v)) {
      help = "write an integer";
    } else if (!v.type.is_tuple && !want.is_tuple && v.type.elem != want.elem &&
               v.type.shape == want.shape && want.elem != Scalar::Bool &&
               v.type.elem != Scalar::Bool) {
      help = std::string("convert it with `") + to_string(want.elem) + "(...)`";
    }
    diags_.error(
        span,
        what + " has type " + v.type.to_string() + ", but " + want.to_string() + " is expected",
        help);
    return Val::error(span);
  }
  Val out = v;
  out.weak = false;
  return out;
}

bool FunctionChecker::unify_scalar_types(Val& a, Val& b, Span span, const std::string& op) {
  Scalar ta = a.type.elem, tb = b.type.elem;
  if (ta == tb) return true;
  auto adapt = [&](Val& weak, Scalar to) {
    if (!weak.weak) return false;
    if (is_int_literal(weak) && is_numeric(to)) {
      weak = convert_literal(weak, to);
      return true;
    }
    if (is_real_literal(weak) && is_real(to)) {
      weak = convert_literal(weak, to);
      return true;
    }
    return false;
  };
  if (a.weak && b.weak) {
    // 1 + 0.5: the integer literal becomes real.
    if (is_int_literal(a) && is_real(tb)) return adapt(a, tb);
    if (is_int_literal(b) && is_real(ta)) return adapt(b, ta);
  }
  if (!b.weak && adapt(a, tb)) return true;
  if (!a.weak && adapt(b, ta)) return true;
  std::string help;
  if ((ta == Scalar::I64 && is_real(tb)) || (tb == Scalar::I64 && is_real(ta))) {
    help = std::string("convert the integer with `") + to_string(is_real(ta) ? ta : tb) + "(...)`";
  } else if (is_real(ta) && is_real(tb)) {
    help = "convert one side with `f64(...)` or `f32(...)`";
  }
  diags_.error(
      span,
      "mismatched types " + std::string(to_string(ta)) + " and " + to_string(tb) + " for " + op,
      help);
  return false;
}

Val FunctionChecker::prim(Prim p, const std::vector<Val>& args, Span span) {
  std::vector<Scalar> ts;
  std::vector<ir::Atom> atoms;
  for (const auto& a : args) {
    ts.push_back(a.type.elem);
    atoms.push_back(a.atom);
  }
  std::string why;
  auto rt = prim_result_type(p, ts, &why);
  if (!rt) {
    diags_.error(span, why);
    return Val::error(span);
  }
  return var_val(emit(ir::PrimOp{p, std::move(atoms)}, Type::scalar(*rt), span), span);
}

Val FunctionChecker::elementwise(const std::vector<Val>& args, Span span, const std::string& what,
                                 const std::function<Val(const std::vector<Val>&)>& scalar_op) {
  const Val* shaped = nullptr;
  for (const auto& a : args) {
    if (!a.ok) return Val::error(span);
    if (a.type.is_tuple) {
      diags_.error(a.span, what + " cannot be applied to a tuple (" + a.type.to_string() + ")");
      return Val::error(span);
    }
    if (a.type.is_tensor()) {
      if (shaped && shaped->type.shape != a.type.shape) {
        diags_.error(span,
                     "the shapes of the operands of " + what + " do not match: " +
                         shaped->type.to_string() + " and " + a.type.to_string(),
                     "elementwise operations need tensors of one shape, or a scalar");
        return Val::error(span);
      }
      if (!shaped) shaped = &a;
    }
  }
  if (!shaped) return scalar_op(args);
  const std::vector<SizeExpr> shape = shaped->type.shape;
  std::vector<ir::IndexVar> ivars;
  static const char* kNames[] = {"i", "j", "k", "l", "m", "o"};
  for (size_t d = 0; d < shape.size(); ++d) {
    ivars.push_back(
        ir::IndexVar{fn_.new_var(d < 6 ? kNames[d] : "k", Type::scalar(Scalar::I64)), shape[d]});
  }
  Val elem_result;
  ir::Block body = in_block([&] {
    std::vector<Val> elems;
    for (const auto& a : args) {
      if (!a.type.is_tensor()) {
        elems.push_back(a);
        continue;
      }
      std::vector<ir::IndexExpr> idx;
      for (const auto& iv : ivars) idx.push_back(ir::IndexExpr{true, Affine::var(iv.var), {}});
      ir::VarId e = emit(ir::IndexOp{a.atom, std::move(idx)}, Type::scalar(a.type.elem), span);
      elems.push_back(var_val(e, span));
    }
    elem_result = scalar_op(elems);
    if (elem_result.ok) blocks_.back()->results = {elem_result.atom};
  });
  if (!elem_result.ok) return Val::error(span);
  Type t = Type::tensor(elem_result.type.elem, shape);
  return var_val(emit(ir::GenOp{std::move(ivars), std::move(body)}, t, span), span);
}

Val FunctionChecker::unary(const ast::Unary& u, Span span) {
  Val a = expr(*u.operand);
  if (!a.ok) return a;
  if (u.op == ast::UnOp::Not) {
    if (a.type.is_tuple || a.type.elem != Scalar::Bool) {
      diags_.error(span, "`!` needs a bool, found " + a.type.to_string());
      return Val::error(span);
    }
    if (!a.atom.is_var) {
      Val out = a;
      out.atom = ir::Atom::boolean(!a.atom.lit.boolean);
      return out;
    }
    return elementwise({a}, span, "`!`",
                       [&](const std::vector<Val>& xs) { return prim(Prim::Not, xs, span); });
  }
  // Negation; literals fold so that `-1` stays a literal.
  if (!a.atom.is_var && a.atom.lit.type == Scalar::I64 && a.atom.lit.integer != INT64_MIN) {
    Val out = literal_int(-a.atom.lit.integer, span);
    out.weak = a.weak;  // -i64(5) stays an i64
    return out;
  }
  if (!a.atom.is_var && is_real(a.atom.lit.type)) {
    Val out = a;
    out.atom.lit.real = -a.atom.lit.real;
    out.span = span;
    return out;
  }
  if (a.type.is_tuple || a.type.elem == Scalar::Bool) {
    diags_.error(span, "`-` needs a number, found " + a.type.to_string());
    return Val::error(span);
  }
  Val out = elementwise({a}, span, "`-`",
                        [&](const std::vector<Val>& xs) { return prim(Prim::Neg, xs, span); });
  if (out.ok && a.affine) {
    out.affine = Affine::scale(*a.affine, -1);
    if (a.size) out.size = -*a.size;
  }
  return out;
}

Val FunctionChecker::binary(const ast::Binary& b, Span span) {
  switch (b.op) {
    case ast::BinOp::And:
    case ast::BinOp::Or:
      return logic(b, span);
    case ast::BinOp::Pow:
      return power(b, span);
    case ast::BinOp::Mul:
      // `[c] * e`, `e * [c]`, chains `a * [c] * x` and negated brackets `-[c] * x` guard.
      if (has_iverson_factor(*b.lhs) || has_iverson_factor(*b.rhs)) return iverson_product(b, span);
      break;
    default:
      break;
  }
  Val a = expr(*b.lhs);
  Val c = expr(*b.rhs);
  if (!a.ok || !c.ok) return Val::error(span);
  switch (b.op) {
    case ast::BinOp::Eq:
    case ast::BinOp::Ne:
    case ast::BinOp::Lt:
    case ast::BinOp::Le:
    case ast::BinOp::Gt:
    case ast::BinOp::Ge:
      return compare(b.op, a, c, span, b.op_span);
    default:
      return arith(b.op, a, c, span, b.op_span);
  }
}

Val FunctionChecker::arith(ast::BinOp op, Val a, Val b, Span span, Span op_span) {
  if (!a.ok || !b.ok) return Val::error(span);
  for (const Val* v : {&a, &b}) {
    if (v->type.is_tuple || v->type.elem == Scalar::Bool) {
      diags_.error(v->span, op_text(op) + " needs numbers, found " + v->type.to_string());
      return Val::error(span);
    }
  }
  if (!unify_scalar_types(a, b, op_span, op_text(op))) return Val::error(span);
  if (a.type.is_scalar() && b.type.is_scalar()) return scalar_arith(op, a, b, span, op_span);
  return elementwise({a, b}, span, op_text(op), [&](const std::vector<Val>& xs) {
    return scalar_arith(op, xs[0], xs[1], span, op_span);
  });
}

Val FunctionChecker::scalar_arith(ast::BinOp op, Val a, Val b, Span span, Span op_span) {
  const Scalar t = a.type.elem;
  if ((op == ast::BinOp::FloorDiv || op == ast::BinOp::Mod) && t != Scalar::I64) {
    diags_.error(op_span, op_text(op) + " is defined on integers (i64), not on " + to_string(t),
                 op == ast::BinOp::FloorDiv ? "use `/` for real division" : "");
    return Val::error(span);
  }
  const Prim p = prim_of(op, t);
  // Fold operations on two literals, so `2 * 3` and `1.0 / 0.0` stay literals. An integer
  // operation that fails (`1 // 0`) is not folded: it may sit in a branch that never runs,
  // and fails at run time if it does.
  if (!a.atom.is_var && !b.atom.is_var) {
    if (t == Scalar::I64) {
      std::string why;
      int64_t xs[2] = {a.atom.lit.integer, b.atom.lit.integer};
      if (auto r = eval_prim_i64(p, xs, &why)) {
        Val out = literal_int(*r, span);
        out.weak = a.weak && b.weak;
        return out;
      }
    } else if (is_real(t) && prim_info(p).eval_f64) {
      double xs[2] = {a.atom.lit.real, b.atom.lit.real};
      Val out = literal_real(prim_info(p).eval_f64(xs), span);
      out = convert_literal(out, t);
      out.weak = a.weak && b.weak;
      return out;
    }
  }
  Val out = prim(p, {a, b}, span);
  if (!out.ok || t != Scalar::I64) return out;
  // Static facts about integers: affine forms for indices, size expressions for extents.
  if (a.affine && b.affine) {
    if (op == ast::BinOp::Add) out.affine = Affine::add(*a.affine, *b.affine);
    if (op == ast::BinOp::Sub) out.affine = Affine::sub(*a.affine, *b.affine);
    if (op == ast::BinOp::Mul && a.affine->is_constant()) {
      out.affine = Affine::scale(*b.affine, a.affine->constant_term());
    } else if (op == ast::BinOp::Mul && b.affine->is_constant()) {
      out.affine = Affine::scale(*a.affine, b.affine->constant_term());
    }
  }
  if (a.size && b.size) {
    if (op == ast::BinOp::Add) out.size = *a.size + *b.size;
    if (op == ast::BinOp::Sub) out.size = *a.size - *b.size;
    if (op == ast::BinOp::Mul) out.size = *a.size * *b.size;
    if (op == ast::BinOp::Div) out.size = SizeExpr::divide(*a.size, *b.size);
    if (out.size && out.size->poisoned()) out.size.reset();
  }
  return out;
}

Val FunctionChecker::compare(ast::BinOp op, Val a, Val b, Span span, Span op_span) {
  if (a.type.is_tuple || b.type.is_tuple) {
    diags_.error(span, op_text(op) + " cannot compare tuples");
    return Val::error(span);
  }
  const bool eq = op == ast::BinOp::Eq || op == ast::BinOp::Ne;
  if ((a.type.elem == Scalar::Bool) != (b.type.elem == Scalar::Bool) ||
      (a.type.elem == Scalar::Bool && !eq)) {
    diags_.error(op_span, op_text(op) + " cannot compare " + a.type.to_string() + " and " +
                              b.type.to_string());
    return Val::error(span);
  }
  if (!unify_scalar_types(a, b, op_span, op_text(op))) return Val::error(span);
  const Prim p = prim_of(op, a.type.elem);
  return elementwise({a, b}, span, op_text(op),
                     [&](const std::vector<Val>& xs) { return prim(p, xs, span); });
}

Val FunctionChecker::logic(const ast::Binary& b, Span span) {
  Val a = bool_scalar(*b.lhs, "an operand of " + op_text(b.op));
  if (!a.ok) {
    expr(*b.rhs);  // still report errors on the other side
    return Val::error(span);
  }
  // Short-circuit: the right operand is evaluated only when it decides the result, so that
  // `i < n && x[i] > 0.0` never reads out of range.
  Val c;
  ir::Block rhs = in_block([&] {
    c = bool_scalar(*b.rhs, "an operand of " + op_text(b.op));
    if (c.ok) blocks_.back()->results = {c.atom};
  });
  if (!c.ok) return Val::error(span);
  const bool is_and = b.op == ast::BinOp::And;
  if (rhs.stmts.empty()) {
    if (!a.atom.is_var) {  // a literal on the left decides statically
      if (a.atom.lit.boolean == is_and) return c;
      return a;
    }
    return prim(is_and ? Prim::And : Prim::Or, {a, c}, span);
  }
  ir::Block constant;
  constant.results = {ir::Atom::boolean(!is_and)};
  ir::IfOp op{a.atom, {}, {}};
  if (is_and) {
    op.then_branch = std::move(rhs);
    op.else_branch = std::move(constant);
  } else {
    op.then_branch = std::move(constant);
    op.else_branch = std::move(rhs);
  }
  return var_val(emit(std::move(op), Type::scalar(Scalar::Bool), span), span);
}

Val FunctionChecker::power(const ast::Binary& b, Span span) {
  Val base = expr(*b.lhs);
  if (auto k = literal_exponent(*b.rhs)) {
    if (!base.ok) return base;
    if (base.type.is_tuple || base.type.elem == Scalar::Bool) {
      diags_.error(b.lhs->span, "`^` needs a number, found " + base.type.to_string());
      return Val::error(span);
    }
    if (*k < 0 && base.type.elem == Scalar::I64 && !base.weak) {
      diags_.error(b.rhs->span, "a negative power of an integer is not an integer",
                   "convert the base with `f64(...)`");
      return Val::error(span);
    }
    if (base.weak && *k < 0) base = convert_literal(base, Scalar::F64);
    return elementwise({base}, span, "`^`",
                       [&](const std::vector<Val>& xs) { return int_power(xs[0], *k, span); });
  }
  Val e = expr(*b.rhs);
  if (!base.ok || !e.ok) return Val::error(span);
  if (!e.type.is_tuple && e.type.elem == Scalar::I64 && !e.weak) {
    diags_.error(b.rhs->span, "the exponent of `^` must be real or an integer literal",
                 "convert it with `f64(...)`");
    return Val::error(span);
  }
  if (base.weak && is_int_literal(base)) base = convert_literal(base, Scalar::F64);
  if (!base.type.is_tuple && base.type.elem == Scalar::I64) {
    diags_.error(b.lhs->span, "a real power of an integer is not defined",
                 "convert the base with `f64(...)`");
    return Val::error(span);
  }
  if (!unify_scalar_types(base, e, b.op_span, "`^`")) return Val::error(span);
  return elementwise({base, e}, span, "`^`",
                     [&](const std::vector<Val>& xs) { return prim(Prim::Pow, xs, span); });
}

Val FunctionChecker::int_power(const Val& base, int64_t k, Span span) {
  const Scalar t = base.type.elem;
  if (k == 0 || (!base.atom.is_var && is_real(t))) {
    // Folded to a literal of the base's type, adaptable only if the base was.
    Val out = k == 0 && t == Scalar::I64
                  ? literal_int(1, span)
                  : convert_literal(
                        literal_real(k == 0 ? 1.0 : std::pow(base.atom.lit.real, static_cast<double>(k)),
                                     span),
                        t);
    out.weak = base.weak;
    return out;
  }
  const uint64_t n = k < 0 ? static_cast<uint64_t>(-(k + 1)) + 1 : static_cast<uint64_t>(k);
  // Square-and-multiply: x^n in about log2(n) multiplications.
  Val result;
  bool have = false;
  Val sq = base;
  for (uint64_t e = n; e > 0; e >>= 1) {
    if (e & 1) {
      result = have ? scalar_arith(ast::BinOp::Mul, result, sq, span, span) : sq;
      have = true;
      if (!result.ok) return result;
    }
    if (e > 1) {
      sq = scalar_arith(ast::BinOp::Mul, sq, sq, span, span);
      if (!sq.ok) return sq;
    }
  }
  if (k > 0) return result;
  Val one = convert_literal(literal_real(1.0, span), t);
  return scalar_arith(ast::BinOp::Div, one, result, span, span);
}

}  // namespace cot::check
