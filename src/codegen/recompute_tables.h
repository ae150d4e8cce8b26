// Recomputing large cheap tables (run on the loop IR after lowering, where sizes are literals):
// a buffer of at least kMinTableBytes that one loop nest fills, element (i1, ..., ik) at the
// row-major offset, from loads and at most kMaxTableOps real additions, subtractions,
// multiplications and negations (counted in the element's expression, declarations expanded),
// and that only the statements after it read, is not stored: each read computes its element
// where it is.
// The Core IR's fusion keeps such a producer when its reader reads an element more than once
// (the GMM gradient's [k, d, n] table of 2 w_ji (Q_j x_i)_r, read once per column of the
// triangle it sums into), because the copy costs operations; the table costs memory traffic,
// which the cost model does not see and which here costs more than a few operations per read.
// The reads it replaces are in range (they read the table) and the loads it copies read the
// elements the producer read, from buffers nothing writes in between, so values and failures
// are unchanged.
#pragma once

#include <cstdint>

#include "codegen/loop_ir.h"

namespace cot::codegen {

inline constexpr int64_t kMinTableBytes = int64_t{1} << 20;
inline constexpr int kMaxTableOps = 4;

LoopFunction recompute_tables(LoopFunction fn);

}  // namespace cot::codegen
