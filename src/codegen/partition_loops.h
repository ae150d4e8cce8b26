// Loop partitioning (as Halide's partition_loops): an innermost loop of literal bounds whose
// body tests its index against constants near the ends (a stencil's `if i == 0 then 1 else
// y[i - 1]`, a shifted read's guard `[j + 1 < n]`, the index check of a read at i - 1) runs as
// a short prologue, a steady state in which each such test has one value, and a short
// epilogue. In every piece the tests that cannot change there fold to literals, and branches
// on them to the branch taken, so the steady state is straight-line code the C++ compiler
// vectorizes. Pieces run in the loop's order, so what fails first is unchanged.
#pragma once

#include "codegen/loop_ir.h"

namespace cot::codegen {

LoopFunction partition_loops(LoopFunction fn);

}  // namespace cot::codegen
