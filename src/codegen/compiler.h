// Compiling generated C++ with the system compiler and loading it: the shared object is cached
// on disk under a key that hashes the source, the flags, the compiler's identity (its version
// and what its flags resolve to on this host, -march=native included) and the environment
// variables that change what it compiles. The cache's trust model (docs/design.md §10, the
// compile cache): code is loaded only from a directory and objects the user owns and nobody
// else can write (cache_dir.h); an object is published by an atomic rename after it is
// complete, a damaged one is rebuilt, and temporaries of killed compiles are swept.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "codegen/cache_dir.h"
#include "codegen/compile_error.h"

namespace cot::codegen {

struct CompilerOptions {
  std::string compiler;            // empty: $COTANGENT_CXX, else $CXX, else "c++"
  std::vector<std::string> flags;  // empty: default_flags()
  std::string cache_dir;           // empty: default_cache_dir()
};

// -std=c++20 -O3 -march=native -mno-avx512f -fopenmp -ffp-contract=off -fPIC -shared
// (docs/design.md says why: contraction off so compiled code rounds as the interpreter does;
// AVX-512 off for a GCC 12 vectorizer bug).
std::vector<std::string> default_flags();

// The environment variables the compiler reads that change the object it builds (include and
// library search paths, the compiler's own search paths and option overrides).
const std::vector<std::string>& compiler_environment_variables();

// A loaded shared object, closed when the last owner lets go.
class SharedObject {
 public:
  SharedObject(void* handle, std::string path) : handle_(handle), path_(std::move(path)) {}
  ~SharedObject();
  SharedObject(const SharedObject&) = delete;
  SharedObject& operator=(const SharedObject&) = delete;
  void* symbol(const std::string& name) const;
  const std::string& path() const { return path_; }

 private:
  void* handle_;
  std::string path_;
};

struct CompileResult {
  std::shared_ptr<SharedObject> object;
  double seconds = 0;  // compiling (0 on a cache hit) and loading
  bool cache_hit = false;
  std::string key;
};

// The system compiler with its flags and cache. Its identity is asked of the compiler once,
// on first use, and kept: hold one Compiler to compile many sources. Safe to share between
// threads.
class Compiler {
 public:
  explicit Compiler(CompilerOptions options = {});

  // Compiles `source` (or finds it in the cache) and loads it.
  std::variant<CompileResult, CompileError> compile_and_load(const std::string& source) const;
  // The object the cache holds under `key` (a CompileResult's), loaded; nullopt when it is
  // absent or may not be loaded.
  std::optional<CompileResult> load_cached(const std::string& key) const;
  // The hash that names `text` with this compiler (its path, identity and flags), as objects
  // are named by their source.
  std::string key_of(const std::string& text) const;
  // A file of the cache besides objects (manifest.h): its text, nullopt when absent or when it
  // may not be trusted (cache_dir.h's checks); written by an atomic rename.
  std::optional<std::string> read_entry(const std::string& name) const;
  void write_entry(const std::string& name, const std::string& text) const;

  // What names the compiler's output besides the source and the flags: the compiler's
  // `-###` report for these flags (its version, and -march=native resolved to this host's
  // CPU and features), else its --version, and the values of
  // compiler_environment_variables().
  const std::string& identity() const;

  const std::string& compiler() const { return compiler_; }
  const std::vector<std::string>& flags() const { return flags_; }

 private:
  std::string compiler_;
  std::vector<std::string> flags_;
  std::string cache_dir_;
  mutable std::mutex mutex_;
  mutable std::optional<std::string> identity_;
};

// Compiler(options).compile_and_load(source): asks the compiler its identity each call.
std::variant<CompileResult, CompileError> compile_and_load(const std::string& source,
                                                           const CompilerOptions& options);

// The hash that names a cache entry (hex).
std::string cache_key(const std::string& source, const std::string& compiler,
                      const std::vector<std::string>& flags, const std::string& identity);

}  // namespace cot::codegen
