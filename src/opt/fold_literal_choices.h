// Choices whose condition is a literal, taken: an `if` on `true` or `false` becomes the
// statements of its taken branch, and (when asked) a `select` on a literal becomes the chosen
// operand. Used by if-merge, which knows a condition's value inside a branch on it, and by
// unswitching, which copies a loop once per value of a condition.
#pragma once

#include "ir/ir.h"
#include "opt/substitute.h"

namespace cot::opt {

enum class FoldSelects { No, Yes };

// Folds the literal choices of `b`, nested regions included; `renamed` receives the results of
// the folded statements mapped to what they yield (the caller substitutes them).
void fold_literal_choices(ir::Block& b, Substitution& renamed, FoldSelects selects);

}  // namespace cot::opt
