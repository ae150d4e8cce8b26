// The compile cache's second level (docs/design.md §10, "Compiled functions by request"): a
// compiled function found by what was asked for (the module's text, the function or
// derivative, the arguments' shapes) instead of by its generated source, so that a warm call
// skips optimizing, differentiating, lowering and emitting as well as the C++ compiler. A
// manifest next to the shared object describes what the host needs of each function (its
// leaves, the result's tuple structure, the sites of its run-time errors); it is trusted as the
// object is (cache_dir.h: the user's file in the user's directory, published by rename).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/native.h"

namespace cot::codegen {

// The compiled functions `request` (a caller's description of everything that decides the
// code, e.g. Module::compile's) named when they were remembered, loaded from the cache; nullopt
// when they are not there (or cannot be loaded: the caller compiles them again). The key also
// holds this library's build, the C++ compiler's identity and flags and the options that
// change the code.
std::optional<std::vector<NativeFunction>> find_compiled(const std::string& request,
                                                         const NativeOptions& options);

// Records `fns` (compile_native's result for `request`) so that find_compiled finds them. A
// failure to write leaves the cache as it was: the next call compiles again.
void remember_compiled(const std::string& request, const std::vector<NativeFunction>& fns,
                       const NativeOptions& options);

}  // namespace cot::codegen
