#include "interp/size_checks.h"

#include <algorithm>
#include <vector>

#include "interp/tensor_ops.h"

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
    const size_t outer = std::min<size_t>(1, r);
    if (!element_count(shape.subspan(outer))) {
      return "the element shape " + shape_of(shape.subspan(outer)) + " of a generator is too large";
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
