// Sum elimination for the AD transposer: a read `x[A·i + b]` inside `for i. ...` transposes to
// the gather `for j. sum i. [A·i + b == j] * c(i)`, and the summed variables that the equalities
// pin are replaced by their values. What remains is a guard (ranges of the eliminated variables,
// leftover equalities, lattice conditions) and sums over the directions the equalities leave
// free. Each remaining point of the sum corresponds to exactly one point of the original one.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "index/affine.h"
#include "index/predicate.h"

namespace cot {

// One summation variable with its range [0, extent); extent is an Affine over size variables
// (the AD pass passes the size variable's i64 var id for a bare size `n`, or constants).
struct SummedVar {
  int32_t var;
  Affine extent;
};

// The value of an eliminated variable: numerator / divisor (divisor >= 1; when it is > 1 the
// numerator is divisible exactly whenever the `divisible` conditions hold).
struct SolvedVar {
  int32_t var;
  Affine numerator;
  int64_t divisor = 1;
};

struct SumElimination {
  // The sum is 0 whatever the free variables are: the equalities have no integer solution, or
  // a range is provably empty. The other fields are then empty.
  bool empty = false;
  // In the original order of the summed variables; numerators mention only free variables and
  // kept variables.
  std::vector<SolvedVar> solved;
  // Summed variables still summed (over their original ranges), in their original order.
  std::vector<int32_t> kept;
  // Conjunction to guard the result with: leftover equalities (Eq0) over kept/free variables,
  // then the ranges 0 <= solved < extent as Ge0 constraints on the numerators. Constant-true
  // conditions and duplicates are dropped; redundancy between them is not removed (see
  // simplify_conjunction).
  std::vector<Pred> conditions;
  // (expr, m) with m > 1: expr ≡ 0 (mod m), over kept/free variables.
  std::vector<std::pair<Affine, int64_t>> divisible;
};

// Rewrites `sum vars. [eqs (all == 0)] * body` so that as many summed variables as possible are
// replaced by their values (as many as the rank of the equalities in the summed variables).
// Prefers unit coefficients (no division, no lattice condition) and, among those, later
// variables in `vars` (inner sums); the rest is solved with a Smith normal form. Other variables
// in eqs (targets j, size variables, outer index variables) are free. Extents may mention free
// variables and solved summed variables (their values are substituted in the range
// conditions). nullopt on overflow.
std::optional<SumElimination> eliminate_sums(const std::vector<SummedVar>& vars,
                                             const std::vector<Affine>& eqs);

// Simplifies a conjunction of affine constraints under the given variable ranges
// (0 <= var < extent): drops constraints implied by the ranges and the others
// (Fourier–Motzkin), returns Pred::falsity() when provably infeasible. Nested conjunctions are
// flattened; non-affine parts (Atom, Or) are kept as they are and not used for reasoning.
Pred simplify_conjunction(const std::vector<Pred>& conj, const std::vector<SummedVar>& ranges);

}  // namespace cot
