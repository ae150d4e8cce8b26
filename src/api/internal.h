// Shared by the API's implementation files: what a module, a function and a compiled function
// hold, errors from diagnostics, and the checks and derivations Module and Function share.
#pragma once

#include <map>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/diagnostic.h"
#include "base/source.h"
#include "codegen/native.h"
#include "cotangent/cotangent.h"
#include "interp/interpreter.h"
#include "ir/ir.h"

namespace cotangent {

struct Module::Impl {
  std::shared_ptr<cot::SourceManager> sources;
  cot::ir::Program program;
  LoadOptions options;  // opt_level resolved
  // The functions that cannot run, with the error each reports: a function the AD stage or the
  // optimizer failed to build, and every function that needs one (design.md §2). The others
  // load and run as usual.
  std::map<std::string, Error> broken;
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
