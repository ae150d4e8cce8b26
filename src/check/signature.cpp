#include "check/signature.h"

#include <algorithm>
#include <set>

#include "ir/ir.h"

namespace cot::check {
namespace {

Scalar scalar_of(ast::ScalarKind k) {
  switch (k) {
    case ast::ScalarKind::F64:
      return Scalar::F64;
    case ast::ScalarKind::F32:
      return Scalar::F32;
    case ast::ScalarKind::I64:
      return Scalar::I64;
    case ast::ScalarKind::Bool:
      return Scalar::Bool;
  }
  return Scalar::F64;
}

const char* kDimHelp =
    "a dimension is a size expression: integer literals, size variables, `+`, `-`, `*` and `/`";

std::optional<SizeExpr> dim_from_ast(const ast::Expr& e, DiagnosticSink& diags) {
  if (const auto* lit = e.as<ast::IntLit>()) {
    if (lit->value < 0) {
      diags.error(e.span, "a dimension cannot be negative", kDimHelp);
      return std::nullopt;
    }
    return SizeExpr::constant(lit->value);
  }
  if (const auto* name = e.as<ast::Name>()) return SizeExpr::var(name->name);
  if (const auto* un = e.as<ast::Unary>()) {
    if (un->op == ast::UnOp::Neg) {
      auto inner = dim_from_ast(*un->operand, diags);
      if (!inner) return std::nullopt;
      return -*inner;
    }
  }
  if (const auto* bin = e.as<ast::Binary>()) {
    auto l = dim_from_ast(*bin->lhs, diags);
    auto r = dim_from_ast(*bin->rhs, diags);
    if (!l || !r) return std::nullopt;
    std::optional<SizeExpr> out;
    switch (bin->op) {
      case ast::BinOp::Add:
        out = *l + *r;
        break;
      case ast::BinOp::Sub:
        out = *l - *r;
        break;
      case ast::BinOp::Mul:
        out = *l * *r;
        break;
      case ast::BinOp::Div:
        out = SizeExpr::divide(*l, *r);
        if (!out) {
          diags.error(e.span, "division by zero in a dimension");
          return std::nullopt;
        }
        if (auto a = l->as_constant(), b = r->as_constant(); a && b && *a % *b != 0) {
          diags.error(e.span,
                      "`/` in a dimension must divide exactly: " + std::to_string(*a) + " / " +
                          std::to_string(*b) + " does not",
                      kDimHelp);
          return std::nullopt;
        }
        break;
      default:
        diags.error(bin->op_span,
                    std::string("`") + ast::to_string(bin->op) + "` cannot appear in a dimension",
                    kDimHelp);
        return std::nullopt;
    }
    if (out->poisoned()) {
      diags.error(e.span, "integer overflow in a dimension");
      return std::nullopt;
    }
    return out;
  }
  diags.error(e.span, "this cannot appear in a dimension", kDimHelp);
  return std::nullopt;
}

// Visits every tensor type inside `t` with its tuple path.
template <class F>
void for_each_tensor(const Type& t, std::vector<int>& path, F&& f) {
  if (t.is_tuple) {
    for (size_t i = 0; i < t.elems.size(); ++i) {
      path.push_back(static_cast<int>(i));
      for_each_tensor(t.elems[i], path, f);
      path.pop_back();
    }
    return;
  }
  f(t, path);
}

// Binds size variables of `want` from `have` (first whole-dimension occurrences).
bool match_structure(const Type& want, const Type& have, std::map<std::string, SizeExpr>& bind,
                     std::string* why) {
  if (want.is_tuple != have.is_tuple || (want.is_tuple && want.elems.size() != have.elems.size())) {
    *why = "expected " + want.to_string() + ", found " + have.to_string();
    return false;
  }
  if (want.is_tuple) {
    for (size_t i = 0; i < want.elems.size(); ++i) {
      if (!match_structure(want.elems[i], have.elems[i], bind, why)) return false;
    }
    return true;
  }
  if (want.elem != have.elem || want.rank() != have.rank()) {
    *why = "expected " + want.to_string() + ", found " + have.to_string();
    return false;
  }
  for (size_t d = 0; d < want.rank(); ++d) {
    if (auto v = want.shape[d].as_var(); v && !bind.count(*v)) bind.emplace(*v, have.shape[d]);
  }
  return true;
}

// Size variables of `want` in the dimensions where `want`, instantiated, differs from `have`
// (which has the same structure and ranks).
void mismatched_vars(const Type& want, const Type& have,
                     const std::map<std::string, SizeExpr>& bind, std::set<std::string>& out) {
  if (want.is_tuple) {
    for (size_t i = 0; i < want.elems.size(); ++i) {
      mismatched_vars(want.elems[i], have.elems[i], bind, out);
    }
    return;
  }
  for (size_t d = 0; d < want.rank(); ++d) {
    if (want.shape[d].substitute(bind) == have.shape[d]) continue;
    for (const auto& v : want.shape[d].vars()) out.insert(v);
  }
}

// Whether `v` is a whole dimension of `t` (where a call binds it).
bool binds_var(const Type& t, const std::string& v) {
  if (t.is_tuple) {
    for (const auto& e : t.elems) {
      if (binds_var(e, v)) return true;
    }
    return false;
  }
  for (const auto& d : t.shape) {
    if (d.as_var() == v) return true;
  }
  return false;
}

const char* deriv_word(ast::DerivKind k) {
  return ast::to_string(k);
}

}  // namespace

std::optional<Type> type_from_ast(const ast::TypeAst& t, DiagnosticSink& diags) {
  if (t.is_tuple) {
    std::vector<Type> elems;
    bool ok = true;
    for (const auto& e : t.elems) {
      auto et = type_from_ast(e, diags);
      if (et)
        elems.push_back(*et);
      else
        ok = false;
    }
    if (!ok) return std::nullopt;
    return Type::tuple(std::move(elems));
  }
  std::vector<SizeExpr> shape;
  bool ok = true;
  for (const auto& d : t.dims) {
    auto s = dim_from_ast(*d, diags);
    if (s && s->as_constant() && *s->as_constant() < 0) {
      diags.error(d->span, "a dimension cannot be negative (" + s->to_string() + ")", kDimHelp);
      s.reset();
    }
    if (s)
      shape.push_back(*s);
    else
      ok = false;
  }
  if (!ok) return std::nullopt;
  return Type::tensor(scalar_of(t.elem), std::move(shape));
}

std::optional<std::vector<ir::SizeVar>> bind_size_vars(const Signature& sig,
                                                       DiagnosticSink& diags) {
  std::vector<ir::SizeVar> out;
  std::set<std::string> bound, mentioned;
  for (size_t p = 0; p < sig.param_types.size(); ++p) {
    std::vector<int> path;
    for_each_tensor(sig.param_types[p], path, [&](const Type& t, const std::vector<int>& at) {
      for (size_t d = 0; d < t.rank(); ++d) {
        for (const auto& v : t.shape[d].vars()) mentioned.insert(v);
        auto v = t.shape[d].as_var();
        if (v && bound.insert(*v).second) {
          out.push_back(ir::SizeVar{*v, -1, static_cast<int>(p), at, static_cast<int>(d)});
        }
      }
    });
  }
  bool ok = true;
  for (const auto& v : mentioned) {
    if (!bound.count(v)) {
      Span where = sig.span;
      bool found = false;
      for (size_t p = 0; p < sig.param_types.size() && !found; ++p) {
        std::vector<int> at;
        for_each_tensor(sig.param_types[p], at, [&](const Type& t, const std::vector<int>&) {
          for (const auto& d : t.shape) {
            const auto vs = d.vars();
            found = found || std::find(vs.begin(), vs.end(), v) != vs.end();
          }
        });
        if (found) where = sig.param_spans[p];
      }
      diags.error(where, "size variable " + v + " cannot be determined from the arguments",
                  "give some parameter a dimension that is exactly `" + v + "`");
      ok = false;
    }
  }
  // The result type may only use size variables of the parameters.
  std::vector<int> path;
  std::set<std::string> reported;
  for_each_tensor(sig.result, path, [&](const Type& t, const std::vector<int>&) {
    for (const auto& d : t.shape) {
      for (const auto& v : d.vars()) {
        if (!bound.count(v) && !mentioned.count(v) && reported.insert(v).second) {
          const bool is_param =
              std::find(sig.param_names.begin(), sig.param_names.end(), v) != sig.param_names.end();
          diags.error(sig.span,
                      "the result type of " + sig.name + " uses size variable " + v +
                          ", which no parameter type has",
                      is_param
                          ? "`" + v +
                                "` is a parameter, and sizes come from tensor shapes, "
                                "not from values: pass a tensor whose shape has the size, as in "
                                "`x: f64[" +
                                v + "]`"
                          : "a result dimension must be a size expression of the parameters' "
                            "sizes");
          ok = false;
        }
      }
    }
  });
  if (!ok) return std::nullopt;
  return out;
}

std::optional<Type> instantiate(const Signature& sig, const std::vector<Type>& args,
                                std::string* why, int* bad_arg) {
  std::map<std::string, SizeExpr> bind;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!match_structure(sig.param_types[i], args[i], bind, why)) {
      *bad_arg = static_cast<int>(i);
      return std::nullopt;
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    Type want = sig.param_types[i].substitute(bind);
    if (want != args[i]) {
      *bad_arg = static_cast<int>(i);
      *why = "expected " + want.to_string() + ", found " + args[i].to_string();
      // Name each size variable behind a mismatch and the argument that fixed it.
      std::set<std::string> vars;
      mismatched_vars(sig.param_types[i], args[i], bind, vars);
      for (const auto& v : vars) {
        size_t from = 0;
        while (from < args.size() && !binds_var(sig.param_types[from], v)) ++from;
        auto it = bind.find(v);
        if (from == args.size() || it == bind.end()) continue;
        // "the caller's" keeps this readable when both sides use the same names.
        *why += "; in `" + sig.name + "`, size variable " + v + " is the caller's " +
                it->second.to_string() + ", from argument " + std::to_string(from + 1) + " (`" +
                sig.param_names[from] + "`: " + args[from].to_string() + ")";
      }
      return std::nullopt;
    }
  }
  return sig.result.substitute(bind);
}

std::string derived_name(ast::DerivKind kind, const Signature& base, const std::vector<int>& wrt) {
  std::string s = std::string(deriv_word(kind)) + "(" + base.name;
  for (int w : wrt) s += ", " + base.param_names[static_cast<size_t>(w)];
  return s + ")";
}

std::optional<Signature> derived_signature(ast::DerivKind kind, const Signature& base,
                                           const std::vector<int>& wrt, std::string* why) {
  Signature s;
  s.name = derived_name(kind, base, wrt);
  s.span = base.span;
  s.param_names = base.param_names;
  s.param_types = base.param_types;
  s.param_spans = base.param_spans;
  s.derivation = ir::Derivation{kind, base.name, wrt};
  auto active_types = [&] {
    std::vector<Type> ts;
    for (int w : wrt) ts.push_back(base.param_types[static_cast<size_t>(w)]);
    return ts;
  };
  auto one_or_tuple = [](std::vector<Type> ts) {
    return ts.size() == 1 ? ts[0] : Type::tuple(std::move(ts));
  };
  const Type& r = base.result;
  const bool scalar_real = r.is_scalar() && is_real(r.elem);
  switch (kind) {
    case ast::DerivKind::Grad:
    case ast::DerivKind::ValueAndGrad:
      if (!scalar_real) {
        *why = std::string(deriv_word(kind)) + " needs a function that returns a real scalar; " +
               base.name + " returns " + r.to_string();
        return std::nullopt;
      }
      s.result = kind == ast::DerivKind::Grad ? one_or_tuple(active_types())
                                              : Type::tuple({r, one_or_tuple(active_types())});
      return s;
    case ast::DerivKind::Jvp:
      if (!r.is_real_valued()) {
        *why =
            "jvp needs a function with a real result; " + base.name + " returns " + r.to_string();
        return std::nullopt;
      }
      for (int w : wrt) {
        s.param_names.push_back(
            ir::unique_name(s.param_names, "t_" + base.param_names[static_cast<size_t>(w)]));
        s.param_types.push_back(base.param_types[static_cast<size_t>(w)]);
        s.param_spans.push_back(base.param_spans[static_cast<size_t>(w)]);
      }
      s.result = Type::tuple({r, r});
      return s;
    case ast::DerivKind::Vjp:
      if (!r.is_real_valued()) {
        *why =
            "vjp needs a function with a real result; " + base.name + " returns " + r.to_string();
        return std::nullopt;
      }
      s.param_names.push_back(ir::unique_name(s.param_names, "ct"));
      s.param_types.push_back(r);
      s.param_spans.push_back(base.span);
      s.result = one_or_tuple(active_types());
      return s;
    case ast::DerivKind::Jacobian:
    case ast::DerivKind::Hessian: {
      if (wrt.size() != 1) {
        *why = std::string(deriv_word(kind)) +
               " differentiates with respect to exactly one parameter; name it, as in `" +
               deriv_word(kind) + "(" + base.name + ", " + base.param_names[0] + ")`";
        return std::nullopt;
      }
      const Type& a = base.param_types[static_cast<size_t>(wrt[0])];
      if (a.is_tuple) {
        *why = std::string(deriv_word(kind)) + " needs a tensor parameter, not a tuple";
        return std::nullopt;
      }
      if (kind == ast::DerivKind::Hessian && !scalar_real) {
        *why = "hessian needs a function that returns a real scalar; " + base.name + " returns " +
               r.to_string();
        return std::nullopt;
      }
      if (kind == ast::DerivKind::Jacobian && (r.is_tuple || !is_real(r.elem))) {
        *why = "jacobian needs a function that returns a real tensor; " + base.name + " returns " +
               r.to_string();
        return std::nullopt;
      }
      std::vector<SizeExpr> shape = kind == ast::DerivKind::Hessian ? a.shape : r.shape;
      shape.insert(shape.end(), a.shape.begin(), a.shape.end());
      s.result = Type::tensor(r.elem, std::move(shape));
      return s;
    }
  }
  return std::nullopt;
}

}  // namespace cot::check
