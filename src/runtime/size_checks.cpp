#include "runtime/size_checks.h"

#include <algorithm>
#include <vector>

#include "runtime/tensor_shapes.h"

namespace cot::interp {

namespace {

std::string shape_of(std::span<const int64_t> shape) {
  return shape_string(std::vector<int64_t>(shape.begin(), shape.end()));
}

}  // namespace

std::optional<std::string> size_error(SizeRule rule, std::span<const int64_t> shape,
                                      size_t index_rank, int64_t limit) {
  const size_t r = std::min(index_rank, shape.size());
  const auto inner = element_count(shape.subspan(r));
  if (rule == SizeRule::Generator) {
    // Each level of `for i1. for i2. ... e` has an element shape: what follows its index. A
    // product with a 0 before the overflow does not overflow, so every level is checked, the
    // outermost first (as nested generators check them). Level k runs only where the levels
    // outside it have points: nested, an extent of 0 never runs the generators inside it.
    for (size_t k = std::min<size_t>(1, r); k <= r; ++k) {
      if (k >= 2 && shape[k - 2] <= 0) break;
      if (!element_count(shape.subspan(k))) {
        return "the element shape " + shape_of(shape.subspan(k)) + " of a generator is too large";
      }
    }
  }
  if (rule == SizeRule::Accum && (!inner || !element_count(shape.first(r)))) {
    return "cannot allocate a tensor of shape " + shape_of(shape);
  }
  const auto n = element_count(shape);
  if (!n) {
    const bool negative = std::any_of(shape.begin(), shape.end(), [](int64_t d) { return d < 0; });
    return "cannot allocate a tensor of shape " + shape_of(shape) +
           (negative ? ": a dimension is negative" : ": its element count overflows");
  }
  if (*n > limit) {
    return "a tensor of shape " + shape_of(shape) + " has " + std::to_string(*n) +
           " elements, more than the limit of " + std::to_string(limit);
  }
  return std::nullopt;
}

}  // namespace cot::interp
