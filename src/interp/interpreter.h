// The reference interpreter: the semantics of docs/language.md §5-§7 on Core IR, checked (indices,
// shapes, integer overflow) and deterministic. It also counts operations under the cost model of
// docs/language.md §10 ([Bernstein20] §4.3): each real add/subtract, multiply/divide/negate and
// elementwise function call costs 1; index arithmetic, comparisons and data movement are free; work
// masked by a false guard costs nothing; a sum of t live terms costs t - 1 additions.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "base/diagnostic.h"
#include "cotangent/value.h"
#include "ir/ir.h"

namespace cot::interp {

struct CostCounts {
  int64_t add = 0;   // real additions and subtractions
  int64_t mul = 0;   // real multiplications, divisions, negations
  int64_t call = 0;  // elementwise function applications (exp, max, pow, ...)
  int64_t total() const { return add + mul + call; }
};

struct Options {
  // Largest tensor (in elements) the interpreter will allocate; larger is an error, not a crash.
  // 2^28 f64 elements are 2 GiB.
  int64_t max_tensor_elements = int64_t{1} << 28;
  // Upper bound on the iterations of one while-loop (0: unbounded).
  int64_t max_while_iterations = 0;
};

// Evaluates function `fn` of `program` on `args` (one value per parameter, in order).
// Argument types and shapes are checked against the parameters; size variables must agree.
// Errors carry the span of the construct that failed. Fills `cost` when it is not null.
std::variant<cotangent::Value, Diagnostic> evaluate(const ir::Program& program,
                                                    const std::string& fn,
                                                    const std::vector<cotangent::Value>& args,
                                                    CostCounts* cost = nullptr,
                                                    const Options& options = {});

// Checks `args` against the parameters of `fn` as evaluate() does before running it (types,
// shapes, agreement of size variables) and returns the values of its size variables (one per
// Function::size_vars entry; 0 for dynamic ones), or the error evaluate() would report. The
// native backend specializes code to these values.
std::variant<std::vector<int64_t>, Diagnostic> bind_sizes(
    const ir::Program& program, const std::string& fn, const std::vector<cotangent::Value>& args);

}  // namespace cot::interp
