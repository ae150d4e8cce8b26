// Calls: built-in functions (docs/language.md §6), functions of the module and the prelude, and
// derivative operators (§8), each of which names a new derived function.
#include <algorithm>
#include <cmath>

#include "check/function_checker.h"

namespace cot::check {
namespace {

bool is_conversion(const std::string& n) {
  return n == "f64" || n == "f32" || n == "i64";
}

Scalar conversion_target(const std::string& n) {
  return n == "f64" ? Scalar::F64 : n == "f32" ? Scalar::F32 : Scalar::I64;
}

std::string signature_text(const Signature& s) {
  std::string t = s.name + "(";
  for (size_t i = 0; i < s.param_names.size(); ++i) {
    if (i) t += ", ";
    t += s.param_names[i] + ": " + s.param_types[i].to_string();
  }
  return t + ") -> " + s.result.to_string();
}

}  // namespace

Val FunctionChecker::call(const ast::Call& c, Span span) {
  if (c.callee.deriv) {
    auto name = resolve_callee(c.callee);
    std::vector<Val> args;
    for (const auto& a : c.args) args.push_back(expr(*a));
    if (!name) return Val::error(span);
    return user_call(*name, args, span, c.callee.span);
  }
  const std::string& n = c.callee.name;
  if (ast::deriv_kind_from_name(n) && !ctx_.find(n)) {
    // `grad(f, w)` alone: the arguments name a function and parameters, not values.
    std::string text = n + "(";
    for (size_t k = 0; k < c.args.size(); ++k) {
      const auto* a = c.args[k]->as<ast::Name>();
      text += (k ? ", " : "") + (a ? a->name : std::string("..."));
    }
    text += ")";
    diags_.error(span, "`" + text + "` is a function, not a value",
                 "call it with arguments, as in `" + text + "(...)`");
    return Val::error(span);
  }
  if (!ctx_.find(n)) {
    bool handled = false;
    Val v = builtin_call(c, span, &handled);
    if (handled) return v;
    std::vector<Val> args;
    for (const auto& a : c.args) args.push_back(expr(*a));
    if (ctx_.broken.count(n)) return Val::error(span);
    std::string help;
    std::string best;
    size_t best_d = n.size() <= 2 ? 2 : 3;  // suggest up to 1 (short names) or 2 edits away
    auto consider = [&](const std::string& cand) {
      const size_t d = edit_distance(n, cand);
      if (d < best_d) {
        best_d = d;
        best = cand;
      }
    };
    for (const auto& [cand, sig] : ctx_.signatures) {
      if (!sig.derivation) consider(cand);
    }
    // Built-ins too: `exq(x)` is more likely `exp(x)` than the prelude's `eye(x)`.
    for (const char* b : {"size", "f64", "f32", "i64"}) consider(b);
    for (int k = 0; k < static_cast<int>(Prim::kCount); ++k) {
      const PrimInfo& info = prim_info(static_cast<Prim>(k));
      if (info.spelling == Spelling::Function && info.name != "select" && prim_by_name(info.name)) {
        consider(std::string(info.name));
      }
    }
    if (!best.empty()) help = "did you mean `" + best + "`?";
    if (lookup(n)) help = "`" + n + "` is a value, not a function";
    diags_.error(c.callee.span, "unknown function `" + n + "`", help);
    return Val::error(span);
  }
  std::vector<Val> args;
  for (const auto& a : c.args) args.push_back(expr(*a));
  return user_call(n, args, span, c.callee.span);
}

Val FunctionChecker::builtin_call(const ast::Call& c, Span span, bool* handled) {
  const std::string& n = c.callee.name;
  auto arity = [&](size_t k) {
    if (c.args.size() == k) return true;
    diags_.error(span, "`" + n + "` takes " + std::to_string(k) + " argument" +
                           (k == 1 ? "" : "s") + ", but " + std::to_string(c.args.size()) +
                           (c.args.size() == 1 ? " was" : " were") + " given");
    return false;
  };
  *handled = true;
  if (n == "size") {
    if (!arity(2)) return Val::error(span);
    Val x = expr(*c.args[0]);
    const auto* k = c.args[1]->as<ast::IntLit>();
    if (!x.ok) return x;
    if (!k) {
      diags_.error(c.args[1]->span, "the dimension of `size` must be an integer literal",
                   "write `size(x, 0)` for the first dimension");
      return Val::error(span);
    }
    if (x.type.is_tuple || k->value < 0 || static_cast<size_t>(k->value) >= x.type.rank()) {
      const auto* xn = c.args[0]->as<ast::Name>();
      const std::string xs = xn ? xn->name : "x";
      diags_.error(c.args[1]->span, "`size(" + xs + ", " + std::to_string(k->value) +
                                        ")` needs a tensor with more than " +
                                        std::to_string(k->value) + " dimensions; " + xs +
                                        " has type " + x.type.to_string());
      return Val::error(span);
    }
    SizeExpr s = x.type.shape[static_cast<size_t>(k->value)];
    Val out;
    if (auto cst = s.as_constant()) {
      out = literal_int(*cst, span);
      out.weak = false;
    } else {
      out = var_val(emit(ir::SizeOp{s}, Type::scalar(Scalar::I64), span), span);
      out.affine = size_to_affine(s);
    }
    out.size = s;
    return out;
  }
  if (is_conversion(n)) {
    if (!arity(1)) return Val::error(span);
    Val x = expr(*c.args[0]);
    if (!x.ok) return x;
    const Scalar to = conversion_target(n);
    if (!x.atom.is_var && x.type.is_scalar()) {  // fold conversions of literals
      const auto& lit = x.atom.lit;
      if (to == Scalar::I64) {
        // A conversion's result has its type: `i64(5) + 0.5` is an error, like `i + 0.5`.
        if (lit.type == Scalar::I64 || lit.type == Scalar::Bool) {
          Val out =
              literal_int(lit.type == Scalar::I64 ? lit.integer : (lit.boolean ? 1 : 0), span);
          out.weak = false;
          return out;
        }
        double t = std::trunc(lit.real);
        if (std::isfinite(t) && t >= -9.2e18 && t <= 9.2e18) {
          Val out = literal_int(static_cast<int64_t>(t), span);
          out.weak = false;
          return out;
        }
      } else {
        double r = lit.type == Scalar::I64    ? static_cast<double>(lit.integer)
                   : lit.type == Scalar::Bool ? (lit.boolean ? 1.0 : 0.0)
                                              : lit.real;
        Val out = convert_literal(literal_real(r, span), to);
        out.weak = false;
        return out;
      }
    }
    const Prim p = to == Scalar::F64 ? Prim::ToF64 : to == Scalar::F32 ? Prim::ToF32 : Prim::ToI64;
    return elementwise({x}, span, "`" + n + "`",
                       [&](const std::vector<Val>& xs) { return prim(p, xs, span); });
  }
  auto p = n == "select" ? std::nullopt : prim_by_name(n);
  if (!p) {
    *handled = false;
    return Val::error(span);
  }
  const PrimInfo& info = prim_info(*p);
  if (!arity(static_cast<size_t>(info.arity))) return Val::error(span);
  std::vector<Val> args;
  bool ok = true;
  for (const auto& a : c.args) {
    args.push_back(expr(*a));
    ok = ok && args.back().ok;
  }
  if (!ok) return Val::error(span);
  for (auto& a : args) {
    if (a.type.is_tuple) {
      diags_.error(a.span, "`" + n + "` cannot be applied to a tuple");
      return Val::error(span);
    }
    // exp(1) means exp(1.0).
    if (info.type_rule == TypeRule::SameReal && a.weak && a.type.elem == Scalar::I64) {
      a = convert_literal(a, Scalar::F64);
    }
    if (info.type_rule == TypeRule::SameReal && !is_real(a.type.elem)) {
      diags_.error(a.span,
                   "`" + n + "` needs a real (f64 or f32) argument, found " + a.type.to_string(),
                   a.type.elem == Scalar::I64 ? "convert it with `f64(...)`" : "");
      return Val::error(span);
    }
  }
  if (args.size() == 2 && !unify_scalar_types(args[0], args[1], span, "`" + n + "`")) {
    return Val::error(span);
  }
  return elementwise(args, span, "`" + n + "`",
                     [&](const std::vector<Val>& xs) { return prim(*p, xs, span); });
}

Val FunctionChecker::user_call(const std::string& callee, const std::vector<Val>& in_args,
                               Span span, Span callee_span) {
  for (const auto& a : in_args) {
    if (!a.ok) return Val::error(span);
  }
  if (ctx_.broken.count(callee)) return Val::error(span);
  const Signature* sig = ctx_.find(callee);
  if (!sig) return Val::error(span);
  if (in_args.size() != sig->param_types.size()) {
    diags_.error(span,
                 "`" + callee + "` takes " + std::to_string(sig->param_types.size()) + " argument" +
                     (sig->param_types.size() == 1 ? "" : "s") + ", but " +
                     std::to_string(in_args.size()) + (in_args.size() == 1 ? " was" : " were") +
                     " given",
                 "its signature is " + signature_text(*sig));
    return Val::error(span);
  }
  std::vector<Val> args = in_args;
  std::vector<Type> types;
  for (size_t i = 0; i < args.size(); ++i) {
    const Type& want = sig->param_types[i];
    if (args[i].weak && want.is_scalar()) {
      Val c = coerce(args[i], want, args[i].span, "argument " + std::to_string(i + 1));
      if (!c.ok) return c;
      args[i] = c;
    }
    types.push_back(args[i].type);
  }
  std::string why;
  int bad = -1;
  auto result = instantiate(*sig, types, &why, &bad);
  if (!result) {
    diags_.error(args[static_cast<size_t>(bad)].span,
                 "argument " + std::to_string(bad + 1) + " (`" +
                     sig->param_names[static_cast<size_t>(bad)] + "`) of `" + callee + "`: " + why,
                 "its signature is " + signature_text(*sig));
    return Val::error(span);
  }
  ctx_.calls[fn_.name].emplace(callee, callee_span);
  std::vector<ir::Atom> atoms;
  for (const auto& a : args) atoms.push_back(a.atom);
  return var_val(emit(ir::CallOp{callee, std::move(atoms)}, *result, span), span);
}

std::optional<std::string> FunctionChecker::resolve_callee(const ast::FnRef& ref) {
  if (!ref.deriv) {
    if (ctx_.broken.count(ref.name)) return std::nullopt;
    if (!ctx_.find(ref.name)) {
      diags_.error(ref.span, "unknown function `" + ref.name + "`",
                   prim_by_name(ref.name) || is_conversion(ref.name)
                       ? "built-in functions cannot be passed to derivative operators; wrap it "
                         "in a `def`"
                       : "");
      return std::nullopt;
    }
    return ref.name;
  }
  // Each jvp level doubles the parameters and result of what it differentiates; eight levels
  // are far beyond any use (a Hessian-vector product is two) and keep signatures small.
  constexpr int kMaxDerivativeNesting = 8;
  int depth = 0;
  for (const ast::FnRef* r = &ref; r && r->deriv; r = r->inner.get()) ++depth;
  if (depth > kMaxDerivativeNesting) {
    diags_.error(ref.span, "derivative operators nest " + std::to_string(depth) +
                               " deep here; at most " + std::to_string(kMaxDerivativeNesting) +
                               " are supported");
    return std::nullopt;
  }
  auto base_name = resolve_callee(*ref.inner);
  if (!base_name) return std::nullopt;
  const Signature base = *ctx_.find(*base_name);
  const char* op = ast::to_string(*ref.deriv);
  std::vector<int> wrt;
  auto params_list = [&] {
    std::string s;
    for (size_t i = 0; i < base.param_names.size(); ++i) {
      s += (i ? ", " : "") + base.param_names[i] + ": " + base.param_types[i].to_string();
    }
    return s;
  };
  if (ref.wrt.empty()) {
    for (size_t i = 0; i < base.param_types.size(); ++i) {
      if (base.param_types[i].is_real_valued()) wrt.push_back(static_cast<int>(i));
    }
    if (wrt.empty()) {
      diags_.error(ref.span, "`" + base.name + "` has no real parameter to differentiate",
                   "its parameters are " + params_list());
      return std::nullopt;
    }
  }
  bool ok = true;
  for (const auto& [w, wspan] : ref.wrt) {
    auto it = std::find(base.param_names.begin(), base.param_names.end(), w);
    if (it == base.param_names.end()) {
      diags_.error(wspan, "`" + base.name + "` has no parameter named `" + w + "`",
                   "its parameters are " + params_list());
      ok = false;
      continue;
    }
    int k = static_cast<int>(it - base.param_names.begin());
    if (!base.param_types[static_cast<size_t>(k)].is_real_valued()) {
      diags_.error(wspan,
                   "parameter `" + w + "` of `" + base.name + "` has type " +
                       base.param_types[static_cast<size_t>(k)].to_string() +
                       " and cannot be differentiated",
                   "only parameters of real type (f64, f32, tensors and tuples of them) are "
                   "active");
      ok = false;
      continue;
    }
    if (std::find(wrt.begin(), wrt.end(), k) != wrt.end()) {
      diags_.error(wspan, "parameter `" + w + "` is named twice");
      ok = false;
      continue;
    }
    wrt.push_back(k);
  }
  if (!ok) return std::nullopt;
  std::string why;
  auto sig = derived_signature(*ref.deriv, base, wrt, &why);
  if (!sig) {
    diags_.error(ref.span, std::string("cannot apply `") + op + "` here: " + why);
    return std::nullopt;
  }
  const std::string name = sig->name;
  if (!ctx_.find(name)) {
    ctx_.signatures.emplace(name, std::move(*sig));
    ctx_.derived_order.push_back(name);
  }
  ctx_.calls[name].emplace(*base_name, ref.span);
  return name;
}

}  // namespace cot::check
