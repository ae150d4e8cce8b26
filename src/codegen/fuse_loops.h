// Fusing sibling loops on the loop IR (horizontal fusion, as Futhark fuses sibling maps): two
// long loops (which run in vector lanes) of one body over the same range, each the points of a
// generator, with only allocations between them, run as one loop when the second reads what
// the first writes only at the element the first writes in the same iteration. The Core IR's fusion
// already computes a generator's element where it is read when that duplicates no work; what it
// leaves are tables read more than once (a reverse pass's adjoints, a Runge-Kutta stage), each
// filled and then read again by loops of its own. Fused, a stage's buffers are read while still in
// registers or L1 (the second loop's loads of the first's elements become the stored values),
// and a chain of element-wise loops costs one pass over its inputs instead of one per loop.
//
// Values are unchanged: the fused body does the first body's work and then the second's, per
// iteration, and the second reads only elements the first wrote in that iteration, while
// neither writes a buffer the other reads otherwise. Failures are too: a pair is fused only
// when the fused loop, once partitioned (partition_loops), cannot fail at all, so that no
// check can report first in another order; for the same reason the fused loop keeps its
// vector lanes (emit_cpp runs a long flat loop that cannot fail in lanes).
#pragma once

#include "codegen/loop_ir.h"

namespace cot::codegen {

LoopFunction fuse_loops(LoopFunction fn);

}  // namespace cot::codegen
