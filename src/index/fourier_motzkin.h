// Fourier–Motzkin elimination over conjunctions of affine constraints `e >= 0` on integer
// variables: projecting a variable away, reading its bounds, and the two questions the index
// solver asks — "can this guard ever hold?" and "is this guard already implied?".
//
// Every answer is sound for integer variables and conservative otherwise: elimination returns
// constraints implied by the input (exactly the rational projection, tightened by dividing each
// constraint by the gcd of its coefficients, unless the system grows past kMaxConstraints or a
// combination overflows, in which case some consequences are dropped); `feasible` says false
// only with a proof, `implies` says true only with a proof.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "index/affine.h"

namespace cot::fm {

// Beyond this many constraints an elimination keeps only the constraints without the variable.
inline constexpr size_t kMaxConstraints = 256;

// Integer normal form of `e >= 0`: with g the gcd of the coefficients, (e - c)/g + floor(c/g)
// >= 0, which has the same integer solutions. A constant constraint is returned as is.
Affine tighten(const Affine& e);

// Constraints without `var` implied by `constraints` (each `e >= 0`). A constant constraint
// that is false means the input is infeasible (the result then is {-1}).
std::vector<Affine> eliminate(const std::vector<Affine>& constraints, int32_t var);

// Bounds of `var` read from the constraints mentioning it: a lower bound (L, d) means d·var >= L,
// i.e. var >= ceil(L / d); an upper bound (H, d) means d·var <= H, i.e. var <= floor(H / d).
// d >= 1, L and H do not mention var. nullopt on overflow (never a partial list of bounds).
struct VarBounds {
  std::vector<std::pair<Affine, int64_t>> lower, upper;
};
std::optional<VarBounds> bounds_of(const std::vector<Affine>& constraints, int32_t var);

// false only when the constraints provably have no integer solution.
bool feasible(const std::vector<Affine>& constraints);

// The constraints connected to `seeds` through shared variables, transitively. A question
// about the seeds needs no other constraint: the rest constrain other variables, and a system
// whose parts share no variable is infeasible only where a part is (facts infeasible on their
// own are dead code's, and dropping them only loses that proof). The facts of a deeply nested
// statement mention every enclosing index; eliminating all of them for every question made the
// optimization of a large Hessian take hours (docs/design.md §8.1).
std::vector<Affine> connected_to(const std::vector<Affine>& constraints,
                                 const std::vector<Affine>& seeds);

// true only when every integer solution of `constraints` satisfies `c >= 0` (shown by the
// infeasibility of the constraints connected to c ∧ -c - 1 >= 0).
bool implies(const std::vector<Affine>& constraints, const Affine& c);

}  // namespace cot::fm
