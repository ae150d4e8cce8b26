#include "index/int_matrix.h"

#include <utility>

namespace cot {

std::optional<int64_t> checked_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checked_sub(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_sub_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checked_mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

std::optional<int64_t> checked_gcd(int64_t a, int64_t b) {
  // Work on magnitudes as uint64 so that |INT64_MIN| is representable.
  uint64_t x = a < 0 ? uint64_t{0} - static_cast<uint64_t>(a) : static_cast<uint64_t>(a);
  uint64_t y = b < 0 ? uint64_t{0} - static_cast<uint64_t>(b) : static_cast<uint64_t>(b);
  while (y != 0) {
    uint64_t t = x % y;
    x = y;
    y = t;
  }
  if (x > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
  return static_cast<int64_t>(x);
}

std::optional<int64_t> checked_lcm(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  auto g = checked_gcd(a, b);
  if (!g) return std::nullopt;
  auto q = exact_div(a, *g);
  if (!q) return std::nullopt;
  auto r = checked_mul(*q, b);
  if (!r) return std::nullopt;
  if (*r < 0) return checked_sub(0, *r);
  return r;
}

std::optional<int64_t> exact_div(int64_t a, int64_t b) {
  if (b == 0) return std::nullopt;
  if (b == -1) return checked_sub(0, a);  // INT64_MIN / -1 would trap
  if (a % b != 0) return std::nullopt;
  return a / b;
}

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && a < 0) ? q - 1 : q;
}

IntMatrix IntMatrix::identity(int n) {
  IntMatrix m(n, n);
  for (int i = 0; i < n; ++i) m.at(i, i) = 1;
  return m;
}

std::optional<IntMatrix> IntMatrix::multiply(const IntMatrix& a, const IntMatrix& b) {
  if (a.cols_ != b.rows_) return std::nullopt;
  IntMatrix r(a.rows_, b.cols_);
  for (int i = 0; i < a.rows_; ++i) {
    for (int j = 0; j < b.cols_; ++j) {
      int64_t sum = 0;
      for (int k = 0; k < a.cols_; ++k) {
        int64_t p;
        if (__builtin_mul_overflow(a.at(i, k), b.at(k, j), &p) ||
            __builtin_add_overflow(sum, p, &sum)) {
          return std::nullopt;
        }
      }
      r.at(i, j) = sum;
    }
  }
  return r;
}

std::optional<int64_t> IntMatrix::determinant() const {
  if (rows_ != cols_) return std::nullopt;
  const int n = rows_;
  if (n == 0) return 1;
  IntMatrix m = *this;
  int64_t sign = 1, prev = 1;
  for (int k = 0; k < n - 1; ++k) {
    if (m.at(k, k) == 0) {
      int p = k + 1;
      while (p < n && m.at(p, k) == 0) ++p;
      if (p == n) return 0;
      for (int c = 0; c < n; ++c) std::swap(m.at(k, c), m.at(p, c));
      sign = -sign;
    }
    for (int i = k + 1; i < n; ++i) {
      for (int j = k + 1; j < n; ++j) {
        // Bareiss: (m_kk m_ij - m_ik m_kj) / prev is exact.
        int64_t x, y, d;
        if (__builtin_mul_overflow(m.at(k, k), m.at(i, j), &x) ||
            __builtin_mul_overflow(m.at(i, k), m.at(k, j), &y) ||
            __builtin_sub_overflow(x, y, &d)) {
          return std::nullopt;
        }
        auto q = exact_div(d, prev);
        if (!q) return std::nullopt;
        m.at(i, j) = *q;
      }
      m.at(i, k) = 0;
    }
    prev = m.at(k, k);
  }
  return checked_mul(sign, m.at(n - 1, n - 1));
}

}  // namespace cot
