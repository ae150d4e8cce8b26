// The memory plan (design.md §10): every buffer of a size known at compile time gets an
// offset in one arena, allocated once per call, and two buffers share bytes when their live
// ranges do not overlap. A buffer is live from its Alloc to the last use of any pointer that
// may point into it (views, and the swapped current/next buffers of a loop's state), and a use
// inside a loop that the Alloc is outside of keeps it live to the loop's end. Buffers of a
// parallel loop's body are planned in that loop's per-thread arena.
#pragma once

#include "codegen/loop_ir.h"

namespace cot::codegen {

// Fills Alloc::arena_offset / Alloc::arena, For::thread_arena_bytes / For::arena and
// LoopFunction::arena_bytes. Buffers whose count is not a literal stay on the heap.
void plan_memory(LoopFunction& fn);

inline constexpr int64_t kArenaAlignment = 64;
int64_t element_bytes(Scalar t);

}  // namespace cot::codegen
