// Checks a whole module: signatures first (so functions may call functions defined anywhere),
// then bodies, then derived functions and the absence of recursion.
#include <algorithm>
#include <set>

#include "check/checker.h"
#include "check/drop_unused_tuples.h"
#include "check/function_checker.h"
#include "check/program_context.h"
#include "ir/verifier.h"

namespace cot {
namespace {

bool is_reserved_function_name(const std::string& n) {
  static const char* const kReserved[] = {
      "size",           "f64", "f32", "i64",      "bool",    "grad",
      "value_and_grad", "jvp", "vjp", "jacobian", "hessian", "select"};
  for (const char* r : kReserved) {
    if (n == r) return true;
  }
  return prim_by_name(n).has_value();
}

// Builds the IR function shell (parameters, size variables) for a signature.
ir::Function make_shell(const check::Signature& sig, const std::vector<ir::SizeVar>& size_vars) {
  ir::Function f;
  f.name = sig.name;
  f.span = sig.span;
  f.from_prelude = sig.from_prelude;
  f.derivation = sig.derivation;
  f.result_type = sig.result;
  for (size_t i = 0; i < sig.param_types.size(); ++i) {
    f.params.push_back(f.new_var(sig.param_names[i], sig.param_types[i]));
    f.param_spans.push_back(sig.param_spans[i]);
  }
  f.size_vars = size_vars;
  for (auto& sv : f.size_vars) sv.var = f.new_var(sv.name, Type::scalar(Scalar::I64));
  return f;
}

// Reports each cycle of the call graph once, at a call inside it. Iterative, so that a long
// chain of definitions cannot exhaust the stack.
void report_recursion(const check::ProgramContext& ctx, const std::vector<std::string>& order,
                      DiagnosticSink& diags) {
  enum class Mark { None, Active, Done };
  std::map<std::string, Mark> mark;
  std::set<std::string> reported;
  static const std::map<std::string, Span> kNoCalls;
  auto callees = [&](const std::string& f) -> const std::map<std::string, Span>& {
    auto it = ctx.calls.find(f);
    return it == ctx.calls.end() ? kNoCalls : it->second;
  };
  struct Frame {
    std::string fn;
    std::map<std::string, Span>::const_iterator next, end;
  };
  for (const auto& root : order) {
    if (mark[root] != Mark::None) continue;
    std::vector<Frame> stack;
    auto enter = [&](const std::string& f) {
      mark[f] = Mark::Active;
      const auto& cs = callees(f);
      stack.push_back(Frame{f, cs.begin(), cs.end()});
    };
    enter(root);
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next == top.end) {
        mark[top.fn] = Mark::Done;
        stack.pop_back();
        continue;
      }
      const auto& [g, span] = *top.next++;
      if (mark[g] == Mark::None) {
        enter(g);
      } else if (mark[g] == Mark::Active && reported.insert(g).second) {
        std::vector<std::string> cycle;
        for (const auto& fr : stack) {
          if (!cycle.empty() || fr.fn == g) cycle.push_back(fr.fn);
        }
        cycle.push_back(g);
        // A long cycle is shown by its ends.
        if (cycle.size() > 8) {
          cycle.erase(cycle.begin() + 4, cycle.end() - 3);
          cycle.insert(cycle.begin() + 4, "...");
        }
        std::string chain;
        for (const auto& c : cycle) {
          chain += chain.empty() ? "`" + c + "`"
                   : c == "..."  ? ", ..."
                                 : ", which calls `" + c + "`";
        }
        diags.error(span, "recursion is not allowed: " + chain,
                    "functions cannot call themselves, directly or indirectly; use `loop` for "
                    "iteration");
      }
    }
  }
}

}  // namespace

std::optional<ir::Program> check_program(std::shared_ptr<SourceManager> sources,
                                         const ast::Module* prelude, const ast::Module& user,
                                         DiagnosticSink& diags) {
  check::ProgramContext ctx;
  // Definitions in order: the prelude's (unless shadowed), then the user's.
  std::vector<const ast::FnDef*> defs;
  std::set<std::string> user_names;
  std::map<std::string, const ast::FnDef*> first_def;
  for (const auto& d : user.defs) {
    if (is_reserved_function_name(d.name)) {
      diags.error(d.name_span, "cannot define a function named `" + d.name + "`",
                  "`" + d.name + "` is a built-in; choose another name");
      continue;
    }
    if (auto it = first_def.find(d.name); it != first_def.end()) {
      Diagnostic diag{d.name_span,
                      "function `" + d.name + "` is defined twice",
                      "rename one of the definitions",
                      {}};
      diag.notes.emplace_back(it->second->name_span, "first defined here");
      diags.add(std::move(diag));
      continue;
    }
    first_def.emplace(d.name, &d);
    user_names.insert(d.name);
  }
  if (prelude) {
    for (const auto& d : prelude->defs) {
      if (!user_names.count(d.name)) defs.push_back(&d);
    }
  }
  const size_t n_prelude = defs.size();
  for (const auto& d : user.defs) {
    auto it = first_def.find(d.name);
    if (it != first_def.end() && it->second == &d) defs.push_back(&d);
  }

  // Signatures.
  std::map<std::string, std::vector<ir::SizeVar>> size_vars;
  for (size_t k = 0; k < defs.size(); ++k) {
    const ast::FnDef& d = *defs[k];
    check::Signature sig;
    sig.name = d.name;
    sig.span = d.name_span;
    sig.from_prelude = k < n_prelude;
    bool ok = true;
    for (const auto& p : d.params) {
      auto t = check::type_from_ast(p.type, diags);
      sig.param_names.push_back(p.name);
      sig.param_types.push_back(t ? *t : Type::scalar(Scalar::F64));
      sig.param_spans.push_back(p.span);
      ok = ok && t.has_value();
    }
    auto rt = check::type_from_ast(d.ret, diags);
    if (rt) sig.result = *rt;
    ok = ok && rt.has_value();
    if (ok) {
      auto svs = check::bind_size_vars(sig, diags);
      if (svs) size_vars[d.name] = *svs;
      ok = svs.has_value();
    }
    if (!ok) ctx.broken.insert(d.name);
    ctx.signatures.emplace(d.name, std::move(sig));
  }

  // Bodies.
  ir::Program program;
  program.sources = std::move(sources);
  for (const ast::FnDef* d : defs) {
    if (ctx.broken.count(d->name)) continue;
    const check::Signature& sig = ctx.signatures.at(d->name);
    ir::Function f = make_shell(sig, size_vars.at(d->name));
    f.span = d->span;
    check::FunctionChecker(ctx, f, diags).check(*d);
    check::drop_unused_tuples(f);
    program.functions.push_back(std::move(f));
  }

  // Derived functions: signatures now, bodies from the AD stage.
  for (const auto& name : ctx.derived_order) {
    const check::Signature& sig = ctx.signatures.at(name);
    DiagnosticSink ignore;  // derived parameter types repeat the base's, which were checked
    auto svs = check::bind_size_vars(sig, ignore);
    program.functions.push_back(make_shell(sig, svs ? *svs : std::vector<ir::SizeVar>{}));
  }

  std::vector<std::string> order;
  for (const ast::FnDef* d : defs) order.push_back(d->name);
  report_recursion(ctx, order, diags);

  if (diags.has_errors()) return std::nullopt;
  for (const auto& e : ir::verify(program)) {
    diags.error(Span{}, "internal compiler error in `" + e.function + "`: " + e.message,
                "please report this with the program that caused it");
  }
  if (diags.has_errors()) return std::nullopt;
  return program;
}

}  // namespace cot
