#include "codegen/linear_form.h"

#include <utility>

namespace cot::codegen {

std::optional<LinearForm> add_forms(LinearForm a, const LinearForm& b, int64_t sign) {
  for (const auto& [v, k] : b.coef) {
    int64_t t = 0;
    if (__builtin_mul_overflow(k, sign, &t) || __builtin_add_overflow(a.coef[v], t, &a.coef[v])) {
      return std::nullopt;
    }
  }
  int64_t t = 0;
  if (__builtin_mul_overflow(b.c, sign, &t) || __builtin_add_overflow(a.c, t, &a.c)) {
    return std::nullopt;
  }
  std::erase_if(a.coef, [](const auto& kv) { return kv.second == 0; });
  return a;
}

std::optional<LinearForm> linear_form(Prim p, const std::vector<ExprP>& args,
                                      const LocalForm& of_local) {
  if (p == Prim::Neg && args.size() == 1) {
    auto x = linear_form(args[0], of_local);
    return x ? add_forms(LinearForm{}, *x, -1) : std::nullopt;
  }
  if (args.size() != 2) return std::nullopt;
  auto x = linear_form(args[0], of_local), y = linear_form(args[1], of_local);
  if (!x || !y) return std::nullopt;
  switch (p) {
    case Prim::Add:
      return add_forms(std::move(*x), *y, 1);
    case Prim::Sub:
      return add_forms(std::move(*x), *y, -1);
    case Prim::Mul:
      if (x->coef.empty()) return add_forms(LinearForm{}, *y, x->c);
      if (y->coef.empty()) return add_forms(LinearForm{}, *x, y->c);
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

std::optional<LinearForm> linear_form(const ExprP& e, const LocalForm& of_local) {
  if (!e || e->type != Scalar::I64) return std::nullopt;
  switch (e->kind) {
    case Expr::Kind::Lit:
      return LinearForm{{}, e->lit.integer};
    case Expr::Kind::Local:
      return of_local(e->local);
    case Expr::Kind::Prim:
      return linear_form(e->prim, e->args, of_local);
    default:
      return std::nullopt;
  }
}

}  // namespace cot::codegen
