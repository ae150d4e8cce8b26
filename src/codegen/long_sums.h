// Long sums in vector lanes (docs/design.md §10): the innermost loops of a real scalar sum that
// run long (may_fail.h's runs_long: kLongLoop iterations or more, or a count known only at run
// time) may add their terms in vector lanes, one partial sum per lane added up at the end
// (`omp simd reduction`, For::sum_into), where a vectorized body (exp from libmvec, say) pays.
// The lowering marks the outermost loop of each sum's points whose terms are never masked
// (For::sum_of); this pass picks, inside such a nest, the loops whose body is flat (no inner
// loop, no buffer: lanes run iterations at once) and cannot fail (so the first failure stays
// the interpreter's), and that are not parallel. The sum's other loops, and shorter sums, keep
// the interpreter's order and rounding to the bit. Regrouping a sum's terms is what
// docs/language.md §7 allows; the pattern is fixed by the compiled object, so results do not depend
// on the number of threads.
#pragma once

#include "codegen/loop_ir.h"

namespace cot::codegen {

LoopFunction mark_long_sums(LoopFunction fn);

}  // namespace cot::codegen
