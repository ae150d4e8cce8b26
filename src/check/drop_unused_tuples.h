// The checker builds tuples eagerly (for destructuring, loop states, `if` results) and often
// only their elements are used. This removes tuple constructions, projections and size reads
// that nothing uses, so printed IR reads like the source. These operations cannot fail, so
// dropping them never hides an error.
#pragma once

#include "ir/ir.h"

namespace cot::check {

void drop_unused_tuples(ir::Function& f);

}  // namespace cot::check
