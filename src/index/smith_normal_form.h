// Smith normal form of an integer matrix: the change of basis that decouples A·x = y into
// independent scalar equations d_r·x'_r = y'_r, which is how the index solver finds integer
// solutions, kernels (remaining sums) and cokernels (equality guards) of index maps.
#pragma once

#include <optional>

#include "index/int_matrix.h"

namespace cot {

// U·A·V = S for an m×n matrix A, with U (m×m) and V (n×n) unimodular (integer inverses) and
// S diagonal: S(r,r) = d_r > 0 for r < rank, every other entry 0, and d_r divides d_{r+1}.
struct SmithNormalForm {
  IntMatrix U, S, V;
  int rank = 0;
  int64_t diag(int r) const { return S.at(r, r); }
};

// nullopt when an intermediate value overflows int64.
std::optional<SmithNormalForm> smith_normal_form(const IntMatrix& A);

}  // namespace cot
