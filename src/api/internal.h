// Shared by the API's implementation files: what a module, a function and a compiled function
// hold, errors from diagnostics, and the checks and derivations Module and Function share.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "ad/derive.h"
#include "base/diagnostic.h"
#include "base/source.h"
#include "codegen/native.h"
#include "cotangent/cotangent.h"
#include "interp/interpreter.h"
#include "ir/ir.h"

namespace cotangent {

// A module's program as far as it is prepared (optimized and differentiated), with the
// functions that cannot run and the error each reports: a function the AD stage or the
// optimizer failed to build, and every function that needs one (design.md §2). Never changed
// once handed out, so a Function or a derived copy may keep it.
struct Prepared {
  std::shared_ptr<const cot::ir::Program> program;
  std::map<std::string, Error> broken;
};

struct Module::Impl {
  Impl(std::shared_ptr<cot::SourceManager> sources, std::string file, cot::ir::Program checked,
       LoadOptions options);
  // The program with `roots` and every function they need optimized and differentiated, each
  // only once per module (the first caller's thread does the work; docs/design.md §15).
  Prepared prepare(const std::vector<std::string>& roots) const;
  // The same for every user function (what `check` reports on).
  Prepared prepare_all() const;
  // The program as prepared so far, for what needs no preparation (names, signatures).
  Prepared snapshot() const;

  std::shared_ptr<cot::SourceManager> sources;
  std::string file;     // the user's file, for errors of derived functions
  LoadOptions options;  // opt_level resolved

 private:
  mutable std::mutex mutex_;
  mutable Prepared current_;                // under mutex_
  mutable std::set<std::string> prepared_;  // under mutex_
};

struct CompiledFunction::Impl {
  cot::codegen::NativeFunction native;
  cot::codegen::NativeOptions options;
  std::shared_ptr<cot::SourceManager> sources;  // for the positions of run-time errors
};

// A diagnostic as an API error, with its position and rendered text.
Error to_error(const cot::SourceManager& sm, const cot::Diagnostic& d);

// An error without a source position: "error: message" and the help.
Error plain_error(std::string message, std::string help = {});
// The structure of values of type `t`.
ValueKind kind_of(const cot::Type& t);
// The name, parameters and result of `f`, as the API describes them.
FunctionInfo info_of(const cot::ir::Function& f);
// "no function named ..." with the functions the module defines.
Error no_function(const cot::ir::Program& p, const std::string& name);
// The error of `fn` when it cannot run (one of `broken`), else nullopt.
std::optional<Error> broken_error(const std::map<std::string, Error>& broken,
                                  const std::string& fn);
// Arguments built through the API that cannot be read (Value::well_formed fails).
std::optional<Error> check_arguments(const cot::ir::Function& f, const std::vector<Value>& args);
cot::interp::Options interp_options(const EvalOptions& o);
// The native backend's options for compiling with `o` in a module loaded with `load` (its
// --dump-after of a loop-IR pass).
cot::codegen::NativeOptions native_options(const CompileOptions& o, const LoadOptions& load);
// Runs `fn` of `p` on the backend the options name (the interpreter when counting).
std::variant<Value, cot::Diagnostic> execute(const cot::ir::Program& p, const std::string& fn,
                                             const std::vector<Value>& args,
                                             const EvalOptions& options, const LoadOptions& load,
                                             cot::interp::CostCounts* counts);
cot::ast::DerivKind to_deriv_kind(DerivativeKind k);
// What the AD stage could not do for the derived function `fn`, as an error of the module
// (`file`).
Error derive_error(const std::string& file, const std::string& fn,
                   const cot::ad::DeriveError& failed);
// Runs the optimizer on the functions `select` accepts; a function it fails on is left as it
// was and recorded in `broken`.
void optimize(cot::ir::Program& program, const LoadOptions& options,
              const std::function<bool(const cot::ir::Function&)>& select,
              std::map<std::string, Error>& broken);
// `roots` and every function they need: the functions they call and, for a derived function,
// its base, transitively.
std::set<std::string> needed_functions(const cot::ir::Program& program,
                                       const std::vector<std::string>& roots);
// `broken` closed under use: a function that calls a broken one, or differentiates one, is
// broken too, with the error of the one it needs.
void spread_breakage(const cot::ir::Program& program, std::map<std::string, Error>& broken);

// The library reports errors as values; what can still escape from the standard library is
// an allocation failure (a program asking for more memory than the machine has).
template <class T, class F>
Result<T> guarded(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    Error e;
    e.message = "out of memory";
    e.help = "the program or its inputs need more memory than is available";
    e.rendered = "error: " + e.message + "\n  help: " + e.help + "\n";
    return e;
  }
}

// A copy of a module's program with the derived function `kind(fn, wrt...)` built.
struct Derived {
  cot::ir::Program program;
  std::string name;      // the derived function's: "grad(f, w)"
  std::vector<int> wrt;  // active parameter indices of fn
  std::vector<std::string> wrt_names;
  std::map<std::string, Error> broken;  // the functions of `program` that cannot run
};

// Checks `kind(fn, wrt...)` as the checker checks a derivative operator (with its wording;
// errors point at fn's definition, or at the parameter), then, when `build`, builds it in a
// copy of `program` (the module's, or a copy holding derived functions already, whose broken
// functions are `known_broken`), and optimizes what it built.
Result<Derived> derive(const Module::Impl& impl, const cot::ir::Program& program,
                       const std::map<std::string, Error>& known_broken, const std::string& fn,
                       DerivativeKind kind, const std::vector<std::string>& wrt, bool build);
// The same on the module's program, for `fn` one of its functions (not a derived one).
Result<Derived> derive(const Module::Impl& impl, const std::string& fn, DerivativeKind kind,
                       const std::vector<std::string>& wrt, bool build = true);

}  // namespace cotangent
