// Window splits (index-set splitting, docs/design.md §10): a generator's loop whose inner loops
// run a window that the borders clip (`for j in [max(0, i - 4), min(508, i + 1))`, the
// image-gradient of a convolution) runs as one loop per piece of its range between the points
// where such a bound changes side (and, when an inner loop's bound moves with the index, where a
// test of the index alone changes value), and each piece is simplified knowing its index's range:
// the max and min fold, a window of constant width runs as a counted loop the C++ compiler unrolls,
// and checks and tests the range decides are dropped or folded. Pieces run in the loop's order.
#pragma once

#include "codegen/loop_ir.h"

namespace cot::codegen {

LoopFunction split_windows(LoopFunction fn);

}  // namespace cot::codegen
