// Small dense int64 matrices for the index solver (index maps are a handful of rows and
// columns), plus the overflow-checked scalar helpers the solver shares. Every operation that
// can overflow reports it (nullopt) instead of wrapping: a wrong index solution would be a
// silently wrong derivative.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace cot {

// Overflow-checked scalar arithmetic; nullopt on overflow.
std::optional<int64_t> checked_add(int64_t a, int64_t b);
std::optional<int64_t> checked_sub(int64_t a, int64_t b);
std::optional<int64_t> checked_mul(int64_t a, int64_t b);
// Nonnegative gcd; gcd(0, 0) = 0. nullopt only when the result is 2^63.
std::optional<int64_t> checked_gcd(int64_t a, int64_t b);
// Nonnegative lcm; lcm(0, x) = 0.
std::optional<int64_t> checked_lcm(int64_t a, int64_t b);
// Exact quotient a / b when b divides a (b != 0); nullopt when it does not or on overflow.
std::optional<int64_t> exact_div(int64_t a, int64_t b);
// Floor of a / b for b > 0 (never overflows).
int64_t floor_div(int64_t a, int64_t b);

class IntMatrix {
 public:
  IntMatrix() = default;
  IntMatrix(int rows, int cols) : rows_(rows), cols_(cols), data_(size_t(rows) * cols, 0) {}
  static IntMatrix identity(int n);

  int rows() const { return rows_; }
  int cols() const { return cols_; }
  int64_t& at(int r, int c) { return data_[size_t(r) * cols_ + c]; }
  int64_t at(int r, int c) const { return data_[size_t(r) * cols_ + c]; }

  // a·b; nullopt on overflow (a.cols() must equal b.rows()).
  static std::optional<IntMatrix> multiply(const IntMatrix& a, const IntMatrix& b);
  // Determinant of a square matrix (fraction-free Bareiss elimination, so intermediate values
  // stay integers); nullopt on overflow. The empty matrix has determinant 1.
  std::optional<int64_t> determinant() const;

  bool operator==(const IntMatrix& o) const {
    return rows_ == o.rows_ && cols_ == o.cols_ && data_ == o.data_;
  }
  bool operator!=(const IntMatrix& o) const { return !(*this == o); }

 private:
  int rows_ = 0;
  int cols_ = 0;
  std::vector<int64_t> data_;
};

}  // namespace cot
