#include "ir/printer.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string_view>

#include "base/token.h"
#include "ir/uses.h"

namespace cot::ir {
namespace {

// Words a variable may not be printed as: the lexer's reserved words (keywords and type
// names), the wildcard `_`, and `accum`, which is an ordinary name but starts the accum form
// when a shape and binders follow; avoiding it keeps printed code unambiguous. Function names
// (built-in, derivative operators, the program's own) live in a separate namespace: a name in
// call position is always a function, so parameters keep their names even when they coincide
// with one (`def f(exp: f64) -> f64 { exp(exp) }`).
constexpr std::string_view kNotVariableNames[] = {"accum", "_"};

bool is_unprintable_name(std::string_view s) {
  if (is_reserved_word(s)) return true;
  for (auto w : kNotVariableNames) {
    if (w == s) return true;
  }
  return false;
}

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  auto digit = [](char c) { return c >= '0' && c <= '9'; };
  if (!alpha(s[0])) return false;
  for (char c : s) {
    if (!alpha(c) && !digit(c)) return false;
  }
  return true;
}

// A legal identifier close to a name hint: generated names ("", "%3", "_") become t<id>.
std::string legal_base(const std::string& hint, VarId v) {
  if (hint.empty() || hint[0] == '%' || hint == "_") return "t" + std::to_string(v);
  if (is_identifier(hint)) return hint;
  std::string s;
  for (char c : hint) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    s += ok ? c : '_';
  }
  if (s[0] >= '0' && s[0] <= '9') s = "t" + s;
  return s;
}

void collect_size_names(const Type& t, std::set<std::string>& out) {
  for (const auto& e : t.elems) collect_size_names(e, out);
  for (const auto& d : t.shape) {
    for (auto& v : d.vars()) out.insert(std::move(v));
  }
}

// Unique printable names for the variables of one function. Size variables keep their own
// names (types spell them); then parameters, in order, so that a function's parameter names do
// not depend on its body (derivative operators name them from other functions); then the
// rest by id.
class Names {
 public:
  Names(const Program& /*program*/, const Function& f, bool params_only = false) {
    std::set<std::string> sizes;
    for (VarId p : f.params) {
      if (valid(f, p)) collect_size_names(f.type_of(p), sizes);
    }
    collect_size_names(f.result_type, sizes);
    for (const auto& sv : f.size_vars) sizes.insert(sv.name);
    used_.insert(sizes.begin(), sizes.end());

    of_.assign(f.vars.size(), "");
    for (const auto& sv : f.size_vars) {
      if (valid(f, sv.var)) of_[static_cast<size_t>(sv.var)] = sv.name;
    }
    for (VarId p : f.params) assign(f, p);
    if (params_only) return;
    for (VarId v = 0; static_cast<size_t>(v) < f.vars.size(); ++v) assign(f, v);
  }

  std::string operator()(VarId v) const {
    if (v >= 0 && static_cast<size_t>(v) < of_.size() && !of_[static_cast<size_t>(v)].empty()) {
      return of_[static_cast<size_t>(v)];
    }
    return "%bad" + std::to_string(v);  // only in messages about broken IR
  }
  const std::vector<std::string>& all() const { return of_; }

  // A name used by nothing else (binders the printer introduces itself).
  std::string fresh(const std::string& hint) {
    std::string s = hint;
    for (int k = 1; taken(s); ++k) s = hint + "_" + std::to_string(k);
    used_.insert(s);
    return s;
  }

 private:
  static bool valid(const Function& f, VarId v) {
    return v >= 0 && static_cast<size_t>(v) < f.vars.size();
  }
  void assign(const Function& f, VarId v) {
    if (!valid(f, v) || !of_[static_cast<size_t>(v)].empty()) return;
    std::string base = legal_base(f.vars[static_cast<size_t>(v)].name, v);
    std::string s = base;
    if (taken(s)) s = base + "_" + std::to_string(v);
    for (int k = 1; taken(s); ++k) {
      s = base + "_" + std::to_string(v) + "_" + std::to_string(k);
    }
    used_.insert(s);
    of_[static_cast<size_t>(v)] = s;
  }

  bool taken(const std::string& s) const { return is_unprintable_name(s) || used_.count(s); }

  std::set<std::string> used_;
  std::vector<std::string> of_;
};

// Digits and decimal exponent of the shortest decimal that reads back as `x` (as a double, or
// as a float when `as_float`): x = 0.D1 D2 ... * 10^(exp + 1).
void shortest_digits(double x, bool as_float, std::string& digits, int& exp) {
  char buf[64];
  for (int p = 1; p <= 17; ++p) {
    std::snprintf(buf, sizeof buf, "%.*e", p - 1, x);
    double back = std::strtod(buf, nullptr);
    if (as_float ? static_cast<float>(back) == static_cast<float>(x) : back == x) break;
  }
  // buf is "[-]d[.ddd]e(+|-)XX".
  digits.clear();
  const char* c = buf;
  if (*c == '-') ++c;
  for (; *c != 'e'; ++c) {
    if (*c != '.') digits += *c;
  }
  exp = std::atoi(c + 1);
}

// A finite real as a real literal: positional for moderate exponents, else scientific (as
// Python's repr does), always with a point or an exponent so it lexes as a real.
std::string real_text(double x, bool as_float) {
  std::string d;
  int e;
  shortest_digits(x, as_float, d, e);
  std::string s = std::signbit(x) ? "-" : "";
  const int n = static_cast<int>(d.size());
  if (e >= -4 && e < 16) {
    if (e < 0) return s + "0." + std::string(static_cast<size_t>(-e - 1), '0') + d;
    std::string whole = e + 1 >= n ? d + std::string(static_cast<size_t>(e + 1 - n), '0')
                                   : d.substr(0, static_cast<size_t>(e + 1));
    std::string frac = e + 1 >= n ? "0" : d.substr(static_cast<size_t>(e + 1));
    return s + whole + "." + frac;
  }
  s += d.substr(0, 1);
  if (n > 1) s += "." + d.substr(1);
  char ebuf[16];
  std::snprintf(ebuf, sizeof ebuf, "e%s%02d", e < 0 ? "-" : "", e < 0 ? -e : e);
  return s + ebuf;
}

// A real value as an expression, without the outer parentheses a negative one needs.
std::string real_expr(double x, bool as_float) {
  if (std::isnan(x)) return "0.0 / 0.0";
  if (std::isinf(x)) return x > 0 ? "1.0 / 0.0" : "-1.0 / 0.0";
  return real_text(x, as_float);
}

std::string literal_text(const Literal& l) {
  switch (l.type) {
    case Scalar::F64: {
      std::string s = real_expr(l.real, false);
      bool atomic = !std::isnan(l.real) && !std::isinf(l.real) && !std::signbit(l.real);
      return atomic ? s : "(" + s + ")";
    }
    case Scalar::F32:
      return "f32(" + real_expr(l.real, true) + ")";
    case Scalar::I64:
      if (l.integer == INT64_MIN) return "(-9223372036854775807 - 1)";
      return l.integer < 0 ? "(" + std::to_string(l.integer) + ")" : std::to_string(l.integer);
    case Scalar::Bool:
      return l.boolean ? "true" : "false";
  }
  return "?";
}

const char* deriv_spelling(ast::DerivKind k) {
  switch (k) {
    case ast::DerivKind::Grad:
      return "grad";
    case ast::DerivKind::ValueAndGrad:
      return "value_and_grad";
    case ast::DerivKind::Jvp:
      return "jvp";
    case ast::DerivKind::Vjp:
      return "vjp";
    case ast::DerivKind::Jacobian:
      return "jacobian";
    case ast::DerivKind::Hessian:
      return "hessian";
  }
  return "?";
}

// The name a derivative operator uses for parameter `index` of function `name`: the printed
// parameter name when the function has parameters; for a derived function without them, the
// parameters its derivation gives (the base's, then tangents or a cotangent).
std::string param_name(const Program& program, const std::string& name, int index, int depth) {
  const Function* g = program.find(name);
  if (g == nullptr || index < 0 || depth > 64) return "p" + std::to_string(index);
  if (!g->params.empty()) {
    if (static_cast<size_t>(index) >= g->params.size()) return "p" + std::to_string(index);
    return Names(program, *g, /*params_only=*/true)(g->params[static_cast<size_t>(index)]);
  }
  if (!g->derivation) return "p" + std::to_string(index);
  const Function* base = program.find(g->derivation->base);
  int base_arity = base != nullptr ? static_cast<int>(base->params.size()) : -1;
  if (base_arity < 0 || index < base_arity) {
    return param_name(program, g->derivation->base, index, depth + 1);
  }
  return "d" + std::to_string(index - base_arity);
}

// `f`, or the derivative operator that makes a derived function: `jvp(grad(f, w), w)`.
std::string fn_ref(const Program& program, const std::string& name, int depth = 0) {
  const Function* g = program.find(name);
  if (g == nullptr || !g->derivation || depth > 64) return name;
  const Derivation& d = *g->derivation;
  std::string s = deriv_spelling(d.kind);
  s += "(" + fn_ref(program, d.base, depth + 1);
  for (int w : d.wrt) s += ", " + param_name(program, d.base, w, depth + 1);
  return s + ")";
}

std::string pad(int level) {
  return std::string(static_cast<size_t>(2 * level), ' ');
}

class FunctionPrinter {
 public:
  FunctionPrinter(const Program& program, const Function& f)
      : program_(program), f_(f), names_(program, f) {}

  // The function as a `def` named `name`.
  std::string function(const std::string& name) {
    std::string s = "def " + name + "(";
    for (size_t i = 0; i < f_.params.size(); ++i) {
      if (i > 0) s += ", ";
      VarId p = f_.params[i];
      auto t = type(p);
      s += names_(p) + ": " + (t ? t->to_string() : "?");
    }
    s += ") -> " + f_.result_type.to_string() + " {\n";
    lines(f_.body, 1, s);
    return s + "}\n";
  }

  // A statement at nesting level `level`, without the leading indentation or a newline.
  std::string stmt(const Stmt& s, int level) {
    if (const auto* p = s.as<ProjOp>()) {
      // No projection syntax: destructure with wildcards.
      auto t = type_of(p->tuple);
      size_t n = t && t->is_tuple ? t->elems.size() : static_cast<size_t>(p->index) + 1;
      std::string pat = "(";
      for (size_t i = 0; i < n; ++i) {
        if (i > 0) pat += ", ";
        pat += static_cast<int>(i) == p->index ? pattern(s.results) : "_";
      }
      return "let " + pat + ") = " + atom(p->tuple);
    }
    return "let " + pattern(s.results) + " = " + rhs(s, level);
  }

 private:
  std::optional<Type> type(VarId v) const {
    if (v < 0 || static_cast<size_t>(v) >= f_.vars.size()) return std::nullopt;
    return f_.type_of(v);
  }
  std::optional<Type> type_of(const Atom& a) const {
    return a.is_var ? type(a.var) : std::optional<Type>(Type::scalar(a.lit.type));
  }

  std::string atom(const Atom& a) const { return a.is_var ? names_(a.var) : literal_text(a.lit); }
  std::string list(const std::vector<Atom>& as) const {
    std::string s;
    for (size_t i = 0; i < as.size(); ++i) s += (i > 0 ? ", " : "") + atom(as[i]);
    return s;
  }
  // One atom as itself, several as a tuple.
  std::string value(const std::vector<Atom>& as) const {
    return as.size() == 1 ? atom(as[0]) : "(" + list(as) + ")";
  }
  std::string pattern(const std::vector<VarId>& vs) const {
    if (vs.empty()) return "_";
    if (vs.size() == 1) return names_(vs[0]);
    std::string s = "(";
    for (size_t i = 0; i < vs.size(); ++i) s += (i > 0 ? ", " : "") + names_(vs[i]);
    return s + ")";
  }
  std::string affine(const Affine& a) const {
    return a.to_string([this](int32_t v) { return names_(v); });
  }
  std::string pred(const Pred& p) const {
    return p.to_string([this](int32_t v) { return names_(v); });
  }

  // The statements of a block, then its result, one per line at `level`.
  void lines(const Block& b, int level, std::string& out) {
    for (const auto& s : b.stmts) out += pad(level) + stmt(s, level) + "\n";
    out += pad(level) + value(b.results) + "\n";
  }
  // A block expression opened at nesting level `level`: `{ r }`, or its lines one level deeper.
  std::string braced(const Block& b, int level) {
    if (b.stmts.empty()) return "{ " + value(b.results) + " }";
    std::string s = "{\n";
    lines(b, level + 1, s);
    return s + pad(level) + "}";
  }
  // The body of a binder form or guard: the bare result when there are no statements.
  std::string body(const Block& b, int level) {
    return b.stmts.empty() ? value(b.results) : braced(b, level);
  }
  std::string binders(const std::vector<IndexVar>& ivars) const {
    std::string s;
    for (size_t i = 0; i < ivars.size(); ++i) {
      s += (i > 0 ? ", " : "") + names_(ivars[i].var) + ": " + ivars[i].extent.to_string();
    }
    return s;
  }

  // Explicit zeros of a type, as the else-branch of a guard that is not real-valued.
  std::string zeros(const Type& t) {
    if (t.is_tuple) {
      std::string s = "(";
      for (size_t i = 0; i < t.elems.size(); ++i) {
        std::string z = zeros(t.elems[i]);
        // A binder form inside a tuple would extend over the following elements.
        if (t.elems[i].is_tensor()) z = "(" + z + ")";
        s += (i > 0 ? ", " : "") + z;
      }
      return s + ")";
    }
    std::string zero = t.elem == Scalar::Bool  ? "false"
                       : t.elem == Scalar::I64 ? "0"
                       : t.elem == Scalar::F32 ? "f32(0.0)"
                                               : "0.0";
    if (t.shape.empty()) return zero;
    std::string s = "for ";
    for (size_t i = 0; i < t.shape.size(); ++i) {
      s += (i > 0 ? ", " : "") + names_.fresh("z") + ": " + t.shape[i].to_string();
    }
    return s + ". " + zero;
  }

  std::string prim(const PrimOp& p) const {
    const PrimInfo& info = prim_info(p.prim);
    const auto& a = p.args;
    if (p.prim == Prim::Select && a.size() == 3) {
      return "if " + atom(a[0]) + " then " + atom(a[1]) + " else " + atom(a[2]);
    }
    if (info.spelling == Spelling::Infix && a.size() == 2) {
      return atom(a[0]) + " " + std::string(info.symbol) + " " + atom(a[1]);
    }
    if (info.spelling == Spelling::Prefix && a.size() == 1) {
      return std::string(info.symbol) + atom(a[0]);
    }
    return std::string(info.symbol) + "(" + list(a) + ")";
  }

  std::string rhs(const Stmt& s, int level) {
    if (const auto* p = s.as<PrimOp>()) return prim(*p);
    if (const auto* x = s.as<IndexOp>()) {
      if (x->indices.empty()) return atom(x->tensor);
      std::string r = atom(x->tensor) + "[";
      for (size_t i = 0; i < x->indices.size(); ++i) {
        const IndexExpr& e = x->indices[i];
        r += (i > 0 ? ", " : "") + (e.is_affine ? affine(e.affine) : atom(e.computed));
      }
      return r + "]";
    }
    if (const auto* g = s.as<GenOp>()) {
      // Over no index variables a generator is its body.
      if (g->ivars.empty()) return braced(g->body, level);
      return "for " + binders(g->ivars) + ". " + body(g->body, level);
    }
    if (const auto* r = s.as<ReduceOp>()) {
      if (r->ivars.empty()) return braced(r->body, level);
      return std::string(ast::to_string(r->kind)) + " " + binders(r->ivars) + ". " +
             body(r->body, level);
    }
    if (const auto* g = s.as<GuardOp>()) return guard(s, *g, level);
    if (const auto* l = s.as<LoopOp>()) {
      std::string r = "loop " + pattern(l->state) + " = " + value(l->init);
      if (l->is_while) {
        r += " while " + body(l->cond, level);
      } else {
        r += " for " + names_(l->iter) + " < " + atom(l->count);
      }
      // A saving loop binds (final state..., T, stacks...), see LoopOp and docs/language.md §12.11.
      if (l->saves_states) r += " saving";
      return r + " " + braced(l->body, level);
    }
    if (const auto* i = s.as<IfOp>()) {
      return "if " + atom(i->cond) + " then " + braced(i->then_branch, level) + " else " +
             braced(i->else_branch, level);
    }
    if (const auto* a = s.as<AccumOp>()) {
      std::string r = "accum[";
      for (size_t i = 0; i < a->shape.size(); ++i) {
        r += (i > 0 ? ", " : "") + a->shape[i].to_string();
      }
      // Over no index variables (one contribution) a binder of extent 1 keeps the syntax.
      std::string bs = a->ivars.empty() ? names_.fresh("z") + ": 1" : binders(a->ivars);
      return r + "] " + bs + ". " + body(a->body, level);
    }
    if (const auto* t = s.as<TupleOp>()) return "(" + list(t->elems) + ")";
    if (const auto* z = s.as<SizeOp>()) return z->size.to_string();
    if (const auto* c = s.as<CallOp>()) {
      return fn_ref(program_, c->callee) + "(" + list(c->args) + ")";
    }
    return "?";
  }

  // `[p] * body` is a strong zero only for reals; other results take an `if` with zeros.
  std::string guard(const Stmt& s, const GuardOp& g, int level) {
    bool real = true;
    std::vector<Type> types;
    for (VarId v : s.results) {
      auto t = type(v);
      real = real && t && t->is_real_valued();
      types.push_back(t ? *t : Type::scalar(Scalar::F64));
    }
    if (real) return "[" + pred(g.pred) + "] * " + body(g.body, level);
    std::string z = types.size() == 1 ? zeros(types[0]) : zeros(Type::tuple(types));
    return "if " + pred(g.pred) + " then " + body(g.body, level) + " else " + z;
  }

  const Program& program_;
  const Function& f_;
  Names names_;
};

}  // namespace

std::string print_function(const Program& program, const Function& f) {
  return FunctionPrinter(program, f).function(f.name);
}

std::string operator_spelling(const Program& program, const std::string& name) {
  return fn_ref(program, name);
}

std::string derived_identifier(const Program& program, const std::string& name,
                               const std::set<std::string>& taken) {
  // Runs of punctuation and spaces become one `_`: "jvp(grad(f, w), w)" -> "jvp_grad_f_w_w".
  std::string base;
  for (char c : fn_ref(program, name)) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (ok) {
      base += c;
    } else if (!base.empty() && base.back() != '_') {
      base += '_';
    }
  }
  while (!base.empty() && base.back() == '_') base.pop_back();
  if (base.empty() || (base[0] >= '0' && base[0] <= '9')) base = "d_" + base;
  auto clash = [&](const std::string& s) {
    return taken.count(s) > 0 || program.find(s) != nullptr || is_reserved_word(s);
  };
  std::string s = base;
  for (int k = 2; clash(s); ++k) s = base + "_" + std::to_string(k);
  return s;
}

std::string print_derived_function(const Program& program, const Function& f,
                                   const std::string& def_name) {
  return "# " + fn_ref(program, f.name) + ", as the compiler builds it\n" +
         FunctionPrinter(program, f).function(def_name);
}

std::string print_with_dependencies(const Program& program,
                                    const std::vector<const Function*>& roots) {
  // Walks the calls of the roots, the user functions and the derived functions reached.
  std::vector<const Function*> users, derived, queue;
  std::set<std::string> seen;
  for (const Function* r : roots) {
    if (r != nullptr && seen.insert(r->name).second) queue.push_back(r);
  }
  auto want = [&](const Function* g) {
    if (g == nullptr || !seen.insert(g->name).second) return;
    queue.push_back(g);
    if (g->derivation) {
      derived.push_back(g);
    } else if (!g->from_prelude) {
      users.push_back(g);
    }
  };
  auto called = [&](const std::string& name) {
    const Function* g = program.find(name);
    if (g == nullptr) return;
    // A built derived function prints as a def; the operator that names it needs its base,
    // and the base of that base, down to a function defined in the source.
    if (g->derivation && !(g->body.stmts.empty() && g->body.results.empty())) want(g);
    int depth = 0;
    while (g != nullptr && g->derivation && ++depth < 64) g = program.find(g->derivation->base);
    if (g != nullptr && !g->from_prelude) want(g);
  };
  for (size_t k = 0; k < queue.size(); ++k) {
    // Prelude functions are always available and are not printed: their calls need nothing.
    if (queue[k]->from_prelude) continue;
    for_each_call(queue[k]->body, called);
  }

  // Derived functions print under names made from their operators, unique in the program.
  std::set<std::string> taken;
  auto print_one = [&](const Function& g) {
    if (!g.derivation) return print_function(program, g);
    std::string id = derived_identifier(program, g.name, taken);
    taken.insert(id);
    return print_derived_function(program, g, id);
  };
  std::string text;
  auto add = [&](const Function& g) { text += (text.empty() ? "" : "\n") + print_one(g); };
  for (const Function* r : roots) {
    if (r != nullptr) add(*r);
  }
  for (const Function* g : users) add(*g);
  for (const Function* g : derived) add(*g);
  return text;
}

std::string print_program(const Program& program) {
  std::string s;
  for (const auto& f : program.functions) {
    if (f.from_prelude || (f.body.stmts.empty() && f.body.results.empty())) continue;
    if (!s.empty()) s += "\n";
    s += print_function(program, f);
  }
  return s;
}

std::string print_stmt(const Program& program, const Function& f, const Stmt& s) {
  return FunctionPrinter(program, f).stmt(s, 0);
}

std::vector<std::string> printed_names(const Program& program, const Function& f) {
  return Names(program, f).all();
}

}  // namespace cot::ir
