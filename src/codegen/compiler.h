// Compiling generated C++ with the system compiler and loading it: the shared object is cached
// on disk under a key that hashes the source, the flags and the compiler's version, so a second
// run (or a second process) loads instead of compiling. Compiles write to a unique temporary name
// and rename into place, which is atomic: processes compiling the same source at once all
// succeed and load a complete file.
#pragma once

#include <memory>
#include <string>
#include <variant>
#include <vector>

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
// $COTANGENT_CACHE_DIR, else $XDG_CACHE_HOME/cotangent, else $HOME/.cache/cotangent.
std::string default_cache_dir();

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

// Compiles `source` (or finds it in the cache) and loads it; an error says what failed.
std::variant<CompileResult, std::string> compile_and_load(const std::string& source,
                                                          const CompilerOptions& options);

// The hash that names a cache entry (hex).
std::string cache_key(const std::string& source, const std::string& compiler,
                      const std::vector<std::string>& flags, const std::string& version);

}  // namespace cot::codegen
