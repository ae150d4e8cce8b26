// Predicates over loop-IR bodies that decide how a loop may run. may_fail: running the body can
// fail (reach a numbered site and return from the function): the lowering keeps such bodies out
// of its reassociated lanes, and the emitter runs a parallel loop whose body cannot fail
// without tracking the earliest failing iteration. has_loop_or_buffer: the body runs an inner
// loop or allocates a buffer, so its iterations cannot run side by side in vector lanes (a
// buffer from an arena is shared by the iterations). runs_long: the loop runs kLongLoop
// iterations or more (or a count known only at run time), where vector lanes pay and where
// reassociating a sum or calling a vector math function is allowed to change the last bits.
#pragma once

#include "codegen/loop_ir.h"

namespace cot::codegen {

bool may_fail(const Body& b);
bool has_loop_or_buffer(const Body& b);

constexpr int64_t kLongLoop = 256;
bool runs_long(const For& f);

}  // namespace cot::codegen
