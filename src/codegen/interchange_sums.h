// Interchanged sums (docs/design.md §10, `interchange-sums`): a generator whose points each add
// up a real scalar sum (`for o, m. sum j. e`, lowered as `for o { for m { acc = 0; for j sum_of
// acc { acc += e }; out[o, m] = acc } }`) runs as `for o { for j { for m { acc[m] += e } } }`
// when its reads do not stride along the generator's innermost index: the inner loop then runs
// along rows with no chain of dependent additions, and each output still adds its terms in the
// interpreter's order. The block m is the longest suffix of the generator's loops whose
// accumulators stay in L1 (at most 4096); they live in an array on the stack. A sum too short
// along m to fill a vector whose terms read along its last index keeps four partial sums per
// output (lanes, reassociated as docs/language.md §7 allows). Loops of the sum bounded by an
// index of the block (a triangle) bound the loops over m instead. Two passes: `interchange-sums`
// on whole generators runs before `split-windows` (which would cut a generator that runs as one
// block into pieces that each run as a smaller one), `interchange-split-sums` after it, where
// the pieces a window split cut a generator into share one block. Only sums whose terms cannot
// fail: the first failure stays the interpreter's. The lowering marks each real scalar sum's loop
// (For::sum_of, sum_masked); the conditions, read off the loop IR, are listed in docs/design.md
// §10.
#pragma once

#include "codegen/loop_ir.h"

namespace cot::codegen {

LoopFunction interchange_sums(LoopFunction fn);
LoopFunction interchange_split_sums(LoopFunction fn);

}  // namespace cot::codegen
