// Why compiling or loading native code failed, and whose problem it is: the user's setting (a
// cache directory that cannot be trusted or written, a compiler that cannot be run) is a plain
// error that says what to do; a compiler that rejects the generated code, or an object it
// built that does not load, is an internal error (docs/design.md §10, the compile cache).
#pragma once

#include <string>

namespace cot::codegen {

struct CompileError {
  enum class Kind {
    cache,      // the cache directory: not trusted, not writable, full
    toolchain,  // the C++ compiler cannot be run
    internal,   // the compiler rejected the generated code, or its object did not load
  };
  Kind kind = Kind::internal;
  std::string message;
  std::string help;  // empty when there is nothing useful to suggest
};

}  // namespace cot::codegen
