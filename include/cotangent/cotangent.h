// The Cotangent C++ API: load a module of the language from a string or a file, look a
// function up, evaluate it on tensor values, count its operations, print its Core IR,
// differentiate it (gradients, and the derived functions of docs/language.md §8 as source).
// Errors are values (Result) that carry source locations; nothing here throws or exits (running
// out of memory is reported as an error too). Result::value() on an error is a programming
// error: check ok() first.
//
//   auto m = cotangent::Module::from_file("model.cot");
//   if (!m.ok()) { std::cerr << m.message(); return 1; }
//   auto r = m.value().evaluate("loss", {w, X, y});
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cotangent/error.h"
#include "cotangent/io.h"
#include "cotangent/value.h"

namespace cotangent {

struct ParamInfo {
  std::string name;
  std::string type;  // as written: "f64[n, m]"
  ValueKind kind;    // structure for reading values of this parameter
};

struct FunctionInfo {
  std::string name;
  std::vector<ParamInfo> params;
  std::string result_type;
  ValueKind result;  // the structure of the result
  bool from_prelude = false;
};

// Operation counts under the cost model (docs/language.md §10): real additions and subtractions,
// multiplications, divisions and negations, and elementwise function calls each cost 1; index
// arithmetic and data movement are free; work masked by a false Iverson bracket costs 0.
struct CostReport {
  int64_t ops = 0;  // add + mul + call
  int64_t add = 0;
  int64_t mul = 0;
  int64_t call = 0;
};

// Where a function runs: the reference interpreter, or native code (the function specialized to
// the shapes of the call, compiled with the system C++ compiler, cached on disk under
// $XDG_CACHE_HOME/cotangent; docs/design.md, "The native backend").
enum class Backend { Interpreter, Native };

struct EvalOptions {
  // Stop a while-loop after this many iterations with an error (0: no limit). The default turns
  // a loop whose condition never fails into an error after a few seconds rather than a hang.
  int64_t max_while_iterations = 100'000'000;
  Backend backend = Backend::Interpreter;
  // Native code: threads for parallel loops (0: all cores).
  int threads = 0;
};

// How a module is compiled when it loads.
struct LoadOptions {
  // The optimizer's level (docs/design.md, "The optimizer"): 0 runs the program as the checker
  // and AD build it (the reference semantics), 1 runs local clean-ups, 2 the whole pipeline.
  // The primal is optimized before it is differentiated and every derivative after. -1 means
  // the default: 2, or the value of the environment variable COTANGENT_OPT when it is set (the
  // test suite runs once per level that way).
  int opt_level = -1;
  // When `dump` is set, it is called after every run of the optimizer pass named `dump_after`
  // ("all": after every pass) with the pass, the function and its text as source; when
  // `dump_after` names a loop-IR pass of the native backend (or is "all"), after that pass with
  // the function's loop IR, each time a function is compiled natively.
  std::string dump_after;
  std::function<void(const std::string& pass, const std::string& function, const std::string& text)>
      dump;
};

// The names of the optimizer's passes, in pipeline order (for --dump-after).
std::vector<std::string> optimizer_pass_names();
// The names of the native backend's loop-IR passes, in order (for --dump-after).
std::vector<std::string> loop_pass_names();

// The derivative operators of docs/language.md §8.
enum class DerivativeKind { Grad, ValueAndGrad, Jvp, Vjp, Jacobian, Hessian };

// Tensors the caller owns, seen without a copy: row-major elements (bool as one byte each); a
// scalar is a tensor of shape {}.
struct TensorRef {
  DType dtype = DType::F64;
  std::vector<int64_t> shape;
  const void* data = nullptr;
};
struct MutableTensorRef {
  DType dtype = DType::F64;
  std::vector<int64_t> shape;
  void* data = nullptr;
};

// What to compile: `fn`, or the derived function `derivative(fn, wrt...)` (wrt empty: every real
// parameter), specialized to the shapes of `example_args` (arguments of the compiled function:
// a jvp's or vjp's take the tangents or cotangents after fn's arguments).
struct CompileRequest {
  std::string fn;
  std::optional<DerivativeKind> derivative;
  std::vector<std::string> wrt;
  std::vector<Value> example_args;
};

struct CompileOptions {
  int threads = 0;                             // threads for parallel loops (0: all cores)
  int64_t max_while_iterations = 100'000'000;  // as EvalOptions
  std::string cache_dir;  // empty: $COTANGENT_CACHE_DIR, $XDG_CACHE_HOME/cotangent, ~/.cache/...
};

// Native code for one function at fixed shapes: compile once, call many times.
class CompiledFunction {
 public:
  // Checks that `args` have the shapes compiled for, runs, and returns the result.
  Result<Value> call(const std::vector<Value>& args) const;
  // Runs on the caller's memory without copying: one view per leaf of the arguments and of the
  // result (tuples depth first), of the dtypes and shapes of input_leaves() / result_leaves().
  // Returns true, or the error the program raised (or a mismatch of the views).
  Result<bool> call(const std::vector<TensorRef>& args,
                    const std::vector<MutableTensorRef>& results) const;
  // The fast path for bindings that check the leaves themselves (the Python package): one
  // pointer per leaf of input_leaves() and result_leaves(), in order, each of the dtype and
  // shape given there (memory the caller owns, outputs written in place); nothing is checked
  // and nothing is allocated unless the program fails. `threads` (0: all cores) and
  // `max_while_iterations` (0: no limit) override the compiled options when >= 0.
  Result<bool> call_unchecked(const void* const* inputs, void* const* outputs, int threads = -1,
                              int64_t max_while_iterations = -1) const;
  // The dtype and shape of every leaf of the arguments and of the result (data null).
  std::vector<TensorRef> input_leaves() const;
  std::vector<TensorRef> result_leaves() const;
  // Per result leaf: whether the code writes it. False for a shape with more elements than a
  // tensor may hold: the code fails with its error before it would write it, so the caller
  // need not (and should not try to) allocate it.
  std::vector<bool> result_leaves_need_memory() const;
  // A result of the compiled shapes, all zeros: memory to run into with the view form of
  // call(). Each tensor's storage is fresh, so the caller may write it, through raw_mut() of
  // any copy of the leaf (copies share storage). A rank-0 leaf is stored inside its Value
  // instead: run into a copy of it and put the copies back together (Value::tuple).
  Value zero_result() const;
  double compile_seconds() const;  // compiling (0 from the cache) and loading
  bool cache_hit() const;
  // Found in the cache by its request (the module's text, the function or derivative, the
  // arguments' shapes) without optimizing, differentiating or generating code again.
  bool found_by_request() const;
  // The generated C++ (the whole translation unit); empty when it was found by request and the
  // cache no longer holds the source.
  const std::string& source() const;

  struct Impl;
  explicit CompiledFunction(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

// A function of a module (Module::get), or a derived function built from one by a derivative
// operator (derivative(); docs/language.md §8): checked, differentiated and optimized once, then
// evaluated, counted, printed, compiled and differentiated again as often as wanted. Copies
// share it; it keeps what it needs of its module alive. Safe to use from several threads.
class Function {
 public:
  // The name as the language spells it: "loss", or "jvp(grad(loss, w), w)".
  const std::string& name() const;
  // Its parameters (a derived function's as docs/language.md §8 gives them: a jvp's tangents are
  // named t_NAME, a vjp's cotangent ct) and result type.
  const FunctionInfo& info() const;
  bool is_derived() const;

  // The derived function `kind(this, wrt...)` (wrt empty: every real parameter), built now.
  // Errors: as Module::print_derivative reports them.
  Result<Function> derivative(DerivativeKind kind, const std::vector<std::string>& wrt = {}) const;
  // The active parameters `derivative(kind, wrt)` would have; differentiates nothing.
  Result<std::vector<std::string>> derivative_parameters(
      DerivativeKind kind, const std::vector<std::string>& wrt = {}) const;

  Result<Value> evaluate(const std::vector<Value>& args, const EvalOptions& options = {}) const;
  // Evaluates with the interpreter and counts operations (the cost model of CostReport).
  Result<CostReport> cost(const std::vector<Value>& args, const EvalOptions& options = {}) const;
  // The function as source, with what it needs (Module::print, Module::print_derivative).
  Result<std::string> print() const;

  // Native code for the dtypes and shapes of `arg_leaves`, one per leaf of the arguments
  // (tuples depth first); their data is not read. Errors: a leaf of the wrong dtype or rank,
  // sizes that disagree (with the interpreter's messages), a leaf count that does not match.
  Result<CompiledFunction> compile(const std::vector<TensorRef>& arg_leaves,
                                   const CompileOptions& options = {}) const;

  struct Impl;
  explicit Function(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

 private:
  std::shared_ptr<const Impl> impl_;
};

struct NamedValue {
  std::string name;
  Value value;
};

// A function's value and its gradient with respect to the active parameters.
struct ValueAndGrad {
  Value value;
  std::vector<NamedValue> grad;  // one per active parameter, in the order asked for
};

class Module {
 public:
  // Parses and checks `source` (named `name` in messages) together with the prelude. A function
  // is optimized and differentiated when first used (run, printed, compiled, differentiated or
  // got), with what it needs, once per module; the module may be used from several threads.
  static Result<Module> from_string(std::string_view source, std::string name = "<string>",
                                    const LoadOptions& options = {});
  static Result<Module> from_file(const std::string& path, const LoadOptions& options = {});
  // The optimization level the module was compiled at (LoadOptions::opt_level, resolved).
  int opt_level() const;

  // The functions a user defined (and, when asked, the prelude's), in definition order.
  std::vector<std::string> function_names(bool include_prelude = false) const;
  Result<FunctionInfo> function(const std::string& name) const;
  // A function of the module (user or prelude) as a Function. Errors: no such function, or one
  // that cannot run (broken_functions()).
  Result<Function> get(const std::string& name) const;
  // The errors of the user's functions that cannot run: a derived function the compiler failed
  // to build (a limitation of AD, or an internal error), and every function that needs one, one
  // error per function in definition order. The module's other functions run as usual; these
  // report their error when called, printed or compiled. Prepares every function to find out.
  std::vector<Error> broken_functions() const;

  // Evaluates `fn` with the reference interpreter.
  Result<Value> evaluate(const std::string& fn, const std::vector<Value>& args,
                         const EvalOptions& options = {}) const;
  // Evaluates and counts operations.
  Result<CostReport> cost(const std::string& fn, const std::vector<Value>& args,
                          const EvalOptions& options = {}) const;
  // The Core IR of `fn`, printed as source in the language, then the functions of the module
  // it calls, then the derived functions it calls, each as a `def` named from its operator
  // (`grad(f, w)` prints as `def grad_f_w`) after a comment `# grad(f, w), as the compiler
  // builds it`. The text is a program that computes the same values.
  Result<std::string> print(const std::string& fn) const;
  // The derived function `kind(fn, wrt...)` as the compiler builds it, printed as print()
  // prints derived functions, followed by what it needs (functions it calls, in operator
  // form, and their bases). `wrt` names the active parameters; empty means every parameter of
  // real type (docs/language.md §8). Errors: no such function or parameter, a parameter that is not
  // real, a result the operator does not accept.
  Result<std::string> print_derivative(const std::string& fn, DerivativeKind kind,
                                       const std::vector<std::string>& wrt = {}) const;
  // The active parameters of `kind(fn, wrt...)` (all real ones when `wrt` is empty), or the
  // errors print_derivative and value_and_grad would report for it; differentiates nothing.
  Result<std::vector<std::string>> derivative_parameters(
      const std::string& fn, DerivativeKind kind, const std::vector<std::string>& wrt = {}) const;
  // Evaluates the derived function `kind(fn, wrt...)` on `args`, the arguments of `fn`, and
  // counts its operations as the compiler runs it (after the optimizer). Kinds whose derived
  // function takes more than fn's arguments (jvp, vjp) are an error: cost a function that
  // calls them instead.
  Result<CostReport> derivative_cost(const std::string& fn, DerivativeKind kind,
                                     const std::vector<Value>& args,
                                     const std::vector<std::string>& wrt = {},
                                     const EvalOptions& options = {}) const;
  // Evaluates `fn` and its gradient with respect to the parameters named in `wrt` (empty:
  // every parameter of real type). `fn` must return a real scalar.
  Result<ValueAndGrad> value_and_grad(const std::string& fn, const std::vector<Value>& args,
                                      const std::vector<std::string>& wrt = {},
                                      const EvalOptions& options = {}) const;

  // Compiles the requested functions to native code, in one run of the system compiler (or
  // from the cache). Errors: those of the functions and derivative operators named, and of the
  // example arguments, as evaluate() and value_and_grad() report them.
  Result<std::vector<CompiledFunction>> compile(const std::vector<CompileRequest>& requests,
                                                const CompileOptions& options = {}) const;

  // Ahead of time: `fn` (or `derivative(fn, wrt...)`) for any sizes, as C++ source that needs
  // nothing from Cotangent: a header declaring the C function `c_name` (its comment documents
  // the ABI: sizes, argument and result pointers, threads, an error code and message) and its
  // implementation.
  struct GeneratedSource {
    std::string header, source;
  };
  Result<GeneratedSource> generate_cpp(const std::string& fn,
                                       std::optional<DerivativeKind> derivative,
                                       const std::vector<std::string>& wrt,
                                       const std::string& c_name) const;

  struct Impl;

 private:
  explicit Module(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  static Result<Module> load(std::string_view source, std::string name, const LoadOptions& options);
  Result<Value> run(const std::string& fn, const std::vector<Value>& args,
                    const EvalOptions& options, CostReport* report) const;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace cotangent
