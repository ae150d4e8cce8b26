// Inlining (pass "inline"): every call of a function with a body is replaced by the callee's
// body, transitively, so the passes after it see one region tree and can fuse across what were
// function boundaries. Calls of derived functions not built yet stay calls.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult inline_functions(const ir::Program& program, const ir::Function& f);
// No call of a function that has a body remains.
std::optional<std::string> no_inlinable_calls(const ir::Program& program, const ir::Function& f);

}  // namespace cot::opt
