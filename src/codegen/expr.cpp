#include "codegen/expr.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace cot::codegen {

namespace {

ExprP make(Expr e) {
  return std::make_shared<const Expr>(std::move(e));
}

}  // namespace

ExprP lit_i64(int64_t v) {
  Expr e;
  e.type = Scalar::I64;
  e.lit = ir::Literal{Scalar::I64, 0, v, false};
  return make(std::move(e));
}

ExprP lit_real(double v, Scalar t) {
  Expr e;
  e.type = t;
  e.lit = ir::Literal{t, v, 0, false};
  return make(std::move(e));
}

ExprP lit_bool(bool b) {
  Expr e;
  e.type = Scalar::Bool;
  e.lit = ir::Literal{Scalar::Bool, 0, 0, b};
  return make(std::move(e));
}

ExprP lit_of(const ir::Literal& l) {
  switch (l.type) {
    case Scalar::I64:
      return lit_i64(l.integer);
    case Scalar::Bool:
      return lit_bool(l.boolean);
    default:
      return lit_real(
          l.type == Scalar::F32 ? static_cast<double>(static_cast<float>(l.real)) : l.real, l.type);
  }
}

ExprP local(const LoopFunction& fn, LocalId id) {
  Expr e;
  e.kind = Expr::Kind::Local;
  e.type = fn.locals.at(static_cast<size_t>(id)).type;
  if (fn.locals[static_cast<size_t>(id)].is_mask) e.type = Scalar::I64;
  e.local = id;
  return make(std::move(e));
}

ExprP load(Scalar type, LocalId pointer, ExprP index) {
  Expr e;
  e.kind = Expr::Kind::Load;
  e.type = type;
  e.local = pointer;
  e.args = {std::move(index)};
  return make(std::move(e));
}

std::optional<int64_t> as_i64(const ExprP& e) {
  if (e && e->kind == Expr::Kind::Lit && e->type == Scalar::I64) return e->lit.integer;
  return std::nullopt;
}

std::optional<bool> as_bool(const ExprP& e) {
  if (e && e->kind == Expr::Kind::Lit && e->type == Scalar::Bool) return e->lit.boolean;
  return std::nullopt;
}

namespace {

// Literal i64 comparisons, min and max fold (sizes and trip counts are mostly literals).
std::optional<ExprP> fold(Prim p, const std::vector<ExprP>& args) {
  if (args.size() != 2) return std::nullopt;
  auto a = as_i64(args[0]), b = as_i64(args[1]);
  if (!a || !b) return std::nullopt;
  switch (p) {
    case Prim::Lt:
      return lit_bool(*a < *b);
    case Prim::Le:
      return lit_bool(*a <= *b);
    case Prim::Gt:
      return lit_bool(*a > *b);
    case Prim::Ge:
      return lit_bool(*a >= *b);
    case Prim::Eq:
      return lit_bool(*a == *b);
    case Prim::Ne:
      return lit_bool(*a != *b);
    case Prim::Max:
      return lit_i64(std::max(*a, *b));
    case Prim::Min:
      return lit_i64(std::min(*a, *b));
    default:
      return std::nullopt;
  }
}

}  // namespace

ExprP prim(Prim p, std::vector<ExprP> args) {
  if (auto f = fold(p, args)) return *f;
  std::vector<Scalar> types;
  types.reserve(args.size());
  for (const ExprP& a : args) types.push_back(a->type);
  std::optional<Scalar> t = prim_result_type(p, types, nullptr);
  Expr e;
  e.kind = Expr::Kind::Prim;
  e.type = t.value_or(Scalar::F64);
  e.prim = p;
  e.args = std::move(args);
  return make(std::move(e));
}

ExprP mask_is(ExprP mask, int64_t value) {
  if (!mask) return lit_bool(value == 0);
  if (auto m = as_i64(mask)) return lit_bool(*m == value);
  Expr e;
  e.kind = Expr::Kind::MaskIs;
  e.type = Scalar::Bool;
  e.lit = ir::Literal{Scalar::I64, 0, value, false};
  e.args = {std::move(mask)};
  return make(std::move(e));
}

ExprP add_i64(ExprP a, ExprP b) {
  auto x = as_i64(a), y = as_i64(b);
  int64_t r = 0;
  if (x && y && !__builtin_add_overflow(*x, *y, &r)) return lit_i64(r);
  if (x && *x == 0) return b;
  if (y && *y == 0) return a;
  return prim(Prim::Add, {std::move(a), std::move(b)});
}

ExprP sub_i64(ExprP a, ExprP b) {
  auto x = as_i64(a), y = as_i64(b);
  int64_t r = 0;
  if (x && y && !__builtin_sub_overflow(*x, *y, &r)) return lit_i64(r);
  if (y && *y == 0) return a;
  return prim(Prim::Sub, {std::move(a), std::move(b)});
}

ExprP mul_i64(ExprP a, ExprP b) {
  auto x = as_i64(a), y = as_i64(b);
  int64_t r = 0;
  if (x && y && !__builtin_mul_overflow(*x, *y, &r)) return lit_i64(r);
  if ((x && *x == 0) || (y && *y == 0)) return lit_i64(0);
  if (x && *x == 1) return b;
  if (y && *y == 1) return a;
  return prim(Prim::Mul, {std::move(a), std::move(b)});
}

ExprP and_(ExprP a, ExprP b) {
  auto x = as_bool(a), y = as_bool(b);
  if (x) return *x ? b : lit_bool(false);
  if (y) return *y ? a : lit_bool(false);
  return prim(Prim::And, {std::move(a), std::move(b)});
}

ExprP or_(ExprP a, ExprP b) {
  auto x = as_bool(a), y = as_bool(b);
  if (x) return *x ? lit_bool(true) : b;
  if (y) return *y ? lit_bool(true) : a;
  return prim(Prim::Or, {std::move(a), std::move(b)});
}

ExprP not_(ExprP a) {
  if (auto x = as_bool(a)) return lit_bool(!*x);
  return prim(Prim::Not, {std::move(a)});
}

ExprP select(ExprP c, ExprP a, ExprP b) {
  if (auto x = as_bool(c)) return *x ? a : b;
  return prim(Prim::Select, {std::move(c), std::move(a), std::move(b)});
}

ExprP with_operands(const ExprP& e, std::vector<ExprP> args) {
  if (e->kind == Expr::Kind::Prim) {
    switch (e->prim) {
      case Prim::And:
        return and_(args[0], args[1]);
      case Prim::Or:
        return or_(args[0], args[1]);
      case Prim::Not:
        return not_(args[0]);
      case Prim::Select:
        if (auto c = as_bool(args[0])) return *c ? args[1] : args[2];
        break;
      default:
        break;
    }
  }
  Expr copy = *e;
  copy.args = std::move(args);
  return std::make_shared<const Expr>(std::move(copy));
}

}  // namespace cot::codegen
