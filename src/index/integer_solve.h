// All integer solutions x of A·x = y, where y is a vector of affine expressions over other
// variables (targets, sizes, outer indices), read off the Smith normal form U·A·V = S:
// with x = V·x' the system becomes d_r·x'_r = (U·y)_r, so
//   - rows r >= rank need (U·y)_r == 0 (the cokernel: equality guards),
//   - rows r < rank need d_r | (U·y)_r (lattice conditions) and pin x'_r = (U·y)_r / d_r,
//   - columns r >= rank leave x'_r free (the kernel: what remains summed).
// V is unimodular, so x' ↔ x is a bijection of integer vectors and the parametrisation below
// lists every solution exactly once.
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "index/affine.h"
#include "index/smith_normal_form.h"

namespace cot {

struct IntegerSolutionSet {
  // Some condition is false whatever the variables of y are (e.g. 2x = 2j + 1): no solution.
  // The other fields are then empty.
  bool empty = false;
  // Solvability conditions on y's variables (normalized: divided by their content, constant
  // ones folded away): each `zero` expression must be == 0, each (e, m) of `divisible` (m > 1)
  // must satisfy e ≡ 0 (mod m).
  std::vector<Affine> zero;
  std::vector<std::pair<Affine, int64_t>> divisible;
  // When the conditions hold, the solutions are exactly
  //   x_k = particular[k] / divisor[k] + Σ_c z_c · kernel[c][k]   for z ∈ Z^kernel.size(),
  // each solution once. divisor[k] >= 1 and the division is exact under the conditions.
  std::vector<Affine> particular;
  std::vector<int64_t> divisor;
  std::vector<std::vector<int64_t>> kernel;  // each of length A.cols()
};

// `snf` is the Smith normal form of A (m×n) and y has m entries. nullopt on overflow.
std::optional<IntegerSolutionSet> integer_solutions(const SmithNormalForm& snf,
                                                    const std::vector<Affine>& y);

// Normal forms of single conditions, shared with the sum eliminator. Each returns nullopt on
// overflow; `false_` in the result means the condition can never hold, `true_` that it always
// holds, otherwise `expr` (and `modulus`) is the normalized condition.
struct NormalizedCondition {
  bool true_ = false;
  bool false_ = false;
  Affine expr;
  int64_t modulus = 0;
};
// e == 0 over integers: divided by the gcd of its coefficients (false if that does not divide
// the constant), sign chosen so the first coefficient is positive.
std::optional<NormalizedCondition> normalize_zero(const Affine& e);
// e ≡ 0 (mod m), m >= 1: with g = gcd(coefficients, m), false if g does not divide the constant,
// otherwise (e / g, m / g); true when the modulus becomes 1.
std::optional<NormalizedCondition> normalize_divisible(const Affine& e, int64_t m);

}  // namespace cot
