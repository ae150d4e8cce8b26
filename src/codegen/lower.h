// Lowering (design.md §10): a call-free Core IR function, specialized to the concrete sizes
// of one call, to the loop IR in destination-passing style ([Shaikhha22] §5.3): every statement
// that builds a tensor writes into a destination its consumer provides (a generator's slot in
// its parent, a loop's next state, the caller's result buffer) or into a fresh buffer; reads of
// slices are views, never copies. Index checks are emitted only where interval reasoning over
// the concrete extents cannot prove them, and report what the interpreter reports.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "codegen/loop_ir.h"
#include "ir/ir.h"

namespace cot::codegen {

struct LowerInput {
  const ir::Function* fn = nullptr;  // without calls (ir::inline_calls)
  // One per fn->size_vars: the value of each parameter-bound size (dynamic ones are ignored).
  std::vector<int64_t> size_values;
  std::string name;  // the generated function's C name
  int64_t max_tensor_elements = int64_t{1} << 28;
  // Ahead of time: the parameter-bound sizes are not known yet. The function's first input is
  // then an array of them (one i64 per size variable bound by a parameter, in order), and
  // every shape is computed at run time (`size_values` is ignored).
  bool runtime_sizes = false;
};

// The loop function, or why the function cannot be lowered (an internal limitation).
std::variant<LoopFunction, std::string> lower(const LowerInput& in);

}  // namespace cot::codegen
