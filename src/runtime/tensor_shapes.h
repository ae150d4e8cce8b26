// Dtypes and shapes of run-time tensors, in the words both backends' messages use: the
// interpreter's, which the native backend shares (docs/design.md §9, §10). They keep the
// namespace interp, where they were first written, so that every user's spelling is unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cotangent/value.h"
#include "prims/scalar.h"

namespace cot::interp {

cotangent::DType dtype_of(Scalar s);
Scalar scalar_of(cotangent::DType t);

// "[3, 4]" ("[]" for a scalar).
std::string shape_string(const std::vector<int64_t>& shape);
// "f64[3, 4]" ("f64" for a scalar), as Value::type_string spells it.
std::string type_string(Scalar elem, const std::vector<int64_t>& shape);
// Product of the dimensions; nullopt when one is negative or the product overflows.
std::optional<int64_t> element_count(std::span<const int64_t> shape);

}  // namespace cot::interp
