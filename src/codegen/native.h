// The native backend's host side: specialize a function of a program to the sizes of a call,
// lower it, emit C++, compile (or load from the cache), and call it on values, reporting
// failures with the interpreter's words and source spans.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "base/diagnostic.h"
#include "base/source.h"
#include "codegen/compiler.h"
#include "codegen/emit_standalone.h"
#include "codegen/loop_ir.h"
#include "codegen/loop_passes.h"
#include "cotangent/value.h"
#include "ir/ir.h"

struct cot_ctx;

namespace cot::codegen {

struct NativeOptions {
  int threads = 0;                   // 0: all cores
  int64_t max_while_iterations = 0;  // 0: unbounded
  int64_t max_tensor_elements = int64_t{1} << 28;
  CompilerOptions compiler;
  LoopDump loop_dump;  // --dump-after of a loop-IR pass
};

// The C entry point of a compiled function (emit_cpp.h).
using EntryPoint = int (*)(const void* const* inputs, void* const* outputs, cot_ctx* ctx);

// One leaf of the arguments or the result: its element type and shape.
struct Leaf {
  Scalar type = Scalar::F64;
  std::vector<int64_t> shape;
  // A result leaf the code needs memory for. False for a shape that cannot be built (too many
  // elements): the code fails, with the interpreter's message, before it would write it.
  bool needs_memory = true;
};

// A function compiled for the sizes of one call.
class NativeFunction {
 public:
  // Checks the arguments' types and shapes against the specialization (as the interpreter
  // checks a call), runs the code, and builds the result.
  std::variant<cotangent::Value, Diagnostic> call(const std::vector<cotangent::Value>& args,
                                                  const NativeOptions& options) const;
  // Runs the code on raw leaves (no checks, no copies): one pointer per input and output leaf.
  // Returns 0 or an error code; error() words it.
  int call_raw(const void* const* inputs, void* const* outputs, const NativeOptions& options,
               std::vector<int64_t>* error_values, int* error_site) const;
  // The same with the two run-time options given apart (no NativeOptions to copy per call).
  int call_raw(const void* const* inputs, void* const* outputs, int threads,
               int64_t max_while_iterations, std::vector<int64_t>* error_values,
               int* error_site) const;
  Diagnostic error(int site, const std::vector<int64_t>& values) const;
  // A result of the compiled shapes, all zeros: memory for call_raw's outputs (a leaf that
  // does not need memory gets none: Value::without_storage).
  cotangent::Value zero_result() const;

  const std::vector<Leaf>& inputs() const { return inputs_; }
  const std::vector<Leaf>& outputs() const { return outputs_; }
  const std::vector<int64_t>& sizes() const { return sizes_; }
  double compile_seconds() const { return compile_seconds_; }
  bool cache_hit() const { return cache_hit_; }
  bool found_by_request() const { return found_by_request_; }  // manifest.h
  const std::string& source() const { return source_; }

 private:
  friend std::variant<std::vector<NativeFunction>, Diagnostic> compile_native(
      const std::vector<struct NativeRequest>& requests, const NativeOptions& options);
  friend struct ManifestAccess;  // manifest.cpp: writes and reads the fields below
  std::shared_ptr<SharedObject> object_;
  std::string object_key_;  // the compile cache's name of object_
  std::string entry_name_;  // entry_'s symbol
  EntryPoint entry_ = nullptr;
  std::string fn_name_;
  std::vector<Site> sites_;
  std::vector<Leaf> inputs_, outputs_;
  Type result_type_;
  std::vector<int64_t> sizes_;
  double compile_seconds_ = 0;
  bool cache_hit_ = false;
  bool found_by_request_ = false;
  // Parallel loops run on `team_` threads (creatable_team of `team_requested_`, probed when the
  // function is compiled); a call that asks for another number probes again.
  bool parallel_ = false;
  int team_requested_ = 0;
  int team_ = 1;
  std::string source_;
};

// A function to compile: `name` of `program`, specialized to the values of its size variables
// (as interp::bind_sizes gives them).
struct NativeRequest {
  const ir::Program* program = nullptr;
  std::string name;
  std::vector<int64_t> sizes;
};

// Compiles the requested functions in one translation unit (one compiler run).
std::variant<std::vector<NativeFunction>, Diagnostic> compile_native(
    const std::vector<NativeRequest>& requests, const NativeOptions& options);

// Ahead of time: `fn` of `program` for any sizes, as a standalone .h/.cpp pair whose C function
// is `c_name` (emit_standalone.h); messages locate their sites through `sources`.
std::variant<StandaloneSource, Diagnostic> standalone_source(const ir::Program& program,
                                                             const std::string& fn,
                                                             const std::string& c_name,
                                                             const SourceManager& sources,
                                                             const LoopDump& dump = {});

}  // namespace cot::codegen
