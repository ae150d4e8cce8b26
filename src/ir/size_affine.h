// A size expression of a function as an affine expression over the i64 variables that hold
// its size variables (SizeVar::var), for the index solvers (Fourier–Motzkin, the sum
// eliminator) that reason about ranges `0 <= i < extent`.
#pragma once

#include <optional>

#include "index/affine.h"
#include "ir/ir.h"

namespace cot::ir {

// nullopt when the expression is not linear in bare size variables, or is poisoned.
std::optional<Affine> size_affine(const Function& f, const SizeExpr& e);

}  // namespace cot::ir
