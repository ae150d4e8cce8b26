// Predicates over loop-IR bodies that decide how a loop may run. may_fail: running the body can
// fail (reach a numbered site and return from the function): the lowering keeps such bodies out
// of its reassociated lanes, and the emitter runs a parallel loop whose body cannot fail
// without tracking the earliest failing iteration. has_loop_or_buffer: the body runs an inner
// loop or allocates a buffer, so its iterations cannot run side by side in vector lanes (a
// buffer from an arena is shared by the iterations).
#pragma once

#include "codegen/loop_ir.h"

namespace cot::codegen {

bool may_fail(const Body& b);
bool has_loop_or_buffer(const Body& b);

}  // namespace cot::codegen
