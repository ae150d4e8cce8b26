// The Cotangent C++ API: load a module of the language from a string or a file, look a
// function up, evaluate it on tensor values, count its operations, print its Core IR.
// Errors are values (Result) that carry source locations; nothing here throws or exits (running
// out of memory is reported as an error too). Result::value() on an error is a programming
// error: check ok() first.
//
//   auto m = cotangent::Module::from_file("model.cot");
//   if (!m.ok()) { std::cerr << m.message(); return 1; }
//   auto r = m.value().evaluate("loss", {w, X, y});
#pragma once

#include <cstdint>
#include <memory>
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
  bool from_prelude = false;
};

// Operation counts under the cost model of papers/000: real additions and subtractions,
// multiplications, divisions and negations, and elementwise function calls each cost 1; index
// arithmetic and data movement are free; work masked by a false Iverson bracket costs 0.
struct CostReport {
  int64_t ops = 0;  // add + mul + call
  int64_t add = 0;
  int64_t mul = 0;
  int64_t call = 0;
};

struct EvalOptions {
  // Stop a while-loop after this many iterations with an error (0: no limit). The default turns
  // a loop whose condition never fails into an error after a few seconds rather than a hang.
  int64_t max_while_iterations = 100'000'000;
};

class Module {
 public:
  // Parses and checks `source` (named `name` in messages) together with the prelude.
  static Result<Module> from_string(std::string_view source, std::string name = "<string>");
  static Result<Module> from_file(const std::string& path);

  // The functions a user defined (and, when asked, the prelude's), in definition order.
  std::vector<std::string> function_names(bool include_prelude = false) const;
  Result<FunctionInfo> function(const std::string& name) const;

  // Evaluates `fn` with the reference interpreter.
  Result<Value> evaluate(const std::string& fn, const std::vector<Value>& args,
                         const EvalOptions& options = {}) const;
  // Evaluates and counts operations.
  Result<CostReport> cost(const std::string& fn, const std::vector<Value>& args,
                          const EvalOptions& options = {}) const;
  // The Core IR of `fn`, printed as source in the language.
  Result<std::string> print(const std::string& fn) const;

  struct Impl;

 private:
  explicit Module(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  static Result<Module> load(std::string_view source, std::string name);
  Result<Value> run(const std::string& fn, const std::vector<Value>& args,
                    const EvalOptions& options, CostReport* report) const;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace cotangent
