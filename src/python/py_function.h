// The Python package's Function: a cotangent::Function called on NumPy arrays and Python
// numbers. Native code is compiled once per combination of argument shapes and kept in a cache
// shared by the function's copies (with_options); a call binds its arguments, looks the shapes
// up, and runs the compiled code on the arrays' own memory with the GIL released.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "cotangent/cotangent.h"
#include "python/leaves.h"

namespace cotangent::python {

struct CallOptions {
  Backend backend = Backend::Native;
  int threads = 0;  // native code: threads for parallel loops (0: all cores)
  int64_t max_while_iterations = 100'000'000;
  std::string cache_dir;  // empty: the default native cache
};

struct ShapeKeyHash {
  size_t operator()(const std::vector<int64_t>& key) const noexcept;
};

class PyFunction;

// What a function's copies (with_options) share: compiled code per combination of argument
// shapes (and thread count), and the derived functions built from it, so that
// `cotangent.grad(f)(x)` in a loop differentiates and compiles once, as jax.jit caches.
struct CompileCache {
  struct Entry {
    CompiledFunction compiled;
    std::vector<TensorRef> results;  // the result leaves' dtypes and shapes
    std::vector<bool> results_need_memory;
  };
  std::mutex mutex;
  std::unordered_map<std::vector<int64_t>, std::shared_ptr<const Entry>, ShapeKeyHash> entries;
  std::map<std::string, std::shared_ptr<const PyFunction>> derived;  // by "kind(wrt, ...)"
};

// Calls in a process forked from one that ran parallel code run on one thread: GNU OpenMP's
// threads do not survive fork(), and a child entering a parallel region would wait for them
// forever. Set by the package's os.register_at_fork hook (python/cotangent/__init__.py).
void mark_forked_child();

class PyFunction {
 public:
  PyFunction(Function fn, CallOptions options);

  // f(*args, out=None, **kwargs): arguments by position or by parameter name.
  pybind11::object call(const pybind11::args& args, const pybind11::kwargs& kwargs) const;
  // The operation counts of a call (the interpreter; CostReport) as a dict.
  pybind11::dict cost(const pybind11::args& args, const pybind11::kwargs& kwargs) const;
  PyFunction derivative(DerivativeKind kind, const std::vector<std::string>& wrt) const;
  PyFunction with_options(const CallOptions& options) const;
  std::string source() const;
  // How many shape combinations have native code in memory.
  size_t compiled_count() const;

  const Function& function() const { return fn_; }
  const CallOptions& options() const { return options_; }
  std::string signature() const;

 private:
  PyFunction(Function fn, CallOptions options, std::shared_ptr<CompileCache> cache);
  // The arguments bound to parameters (positional, then keywords); `out` receives the
  // keyword out= unless a parameter is named out.
  std::vector<pybind11::handle> bind(const pybind11::args& args, const pybind11::kwargs& kwargs,
                                     pybind11::handle* out) const;
  // The arguments bound to parameters, as leaves.
  ArgumentLeaves collect(const std::vector<pybind11::handle>& bound) const;
  // The thread count of calls: the options', or 1 in a forked child.
  int threads() const;
  // The compiled code for the leaves' shapes (appends the thread count to their key).
  std::shared_ptr<const CompileCache::Entry> compiled_for(ArgumentLeaves& leaves) const;

  Function fn_;
  CallOptions options_;
  std::shared_ptr<CompileCache> cache_;
  std::vector<std::string> what_;  // per parameter: "parameter `w` of `loss`"
  std::vector<ValueKind> kinds_;   // per parameter: the structure of its values
  size_t leaf_count_ = 0;
  bool has_out_param_ = false;
};

}  // namespace cotangent::python
