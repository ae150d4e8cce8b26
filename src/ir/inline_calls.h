// Inlining: a function with every call replaced by the callee's body, transitively. AD works on
// call-free bodies, so it differentiates one function at a time without interprocedural rules.
#pragma once

#include <string>

#include "ir/ir.h"

namespace cot::ir {

// The function `name` of `program` with every call (to user, prelude or derived functions,
// transitively) replaced by the callee's body. Callees must have bodies (a derived function
// whose body is empty is a std::logic_error). Callee size variables are bound by SizeOp
// statements with the caller's size expressions, found by matching the callee's parameter
// types (SizeVar::param/path/dim) against the argument types at the call site; every size
// expression in the copied body is substituted accordingly. The result verifies (ir::verify).
//
// The inlined function keeps name, span, params, size_vars (plus any dynamic ones created for
// saving loops), result type and derivation of the original, with a fresh variable table.
// Inlined statements keep the callee's spans, so runtime errors point into the callee source;
// the SizeOp statements that bind a callee's size variables carry the call's span. A callee
// whose size variable is not read as a value gets no SizeOp for it. Throws std::logic_error
// when `name` or a callee is not in the program, or the calls are recursive.
// With `keep_unbuilt`, a call of a derived function whose body is not built yet stays a call
// (the optimizer inlines the primal before AD builds the derivatives it calls).
ir::Function inline_calls(const ir::Program& program, const std::string& name,
                          bool keep_unbuilt = false);

}  // namespace cot::ir
