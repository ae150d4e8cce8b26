// The checks on the size of a tensor a program builds, in the interpreter's words. One
// implementation for both backends: the interpreter allocates through them (Machine::alloc,
// run_gen, run_accum), the native backend's lowering checks shapes it knows with them, and its
// host words a run-time size failure with them (docs/design.md §9, §10), so a shape that cannot
// be built gets the same message, at the same statement, from either backend.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace cot::interp {

// What builds the tensor, which decides the checks before the element count's.
enum class SizeRule : uint8_t {
  Tensor,  // any tensor: no dimension negative, the count fits in int64, at most `limit`
  // A generator's: first each level's element shape must have a count. `for i, j. e` is `for
  // i. for j. e`, so the element shapes are what follows the first index (the outer
  // generator's) and what follows each later one, each checked only where the extents outside
  // it are all positive (nested, an extent of 0 never runs the inner generator): fusing nested
  // generators into one keeps the check, its outcome and its words (docs/design.md §9).
  Generator,
  Accum,  // an accum's: first its cells (the first `index_rank` dims) and element shape
};

// Why a tensor of `shape` cannot be built when a tensor holds at most `limit` elements, or
// nullopt when it can. Counts are products taken left to right, as element_count() takes them:
// a product that overflows before a later 0 dimension is an overflow.
std::optional<std::string> size_error(SizeRule rule, std::span<const int64_t> shape,
                                      size_t index_rank, int64_t limit);

}  // namespace cot::interp
