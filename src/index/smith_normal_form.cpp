#include "index/smith_normal_form.h"

#include <algorithm>
#include <utility>

namespace cot {
namespace {

// Extended Euclid: g = gcd(a, b) > 0 and s, t with s·a + t·b = g (a != 0). The coefficients
// stay within |b|/g and |a|/g, so only INT64_MIN inputs can overflow, which are refused.
struct Bezout {
  int64_t g, s, t;
};
std::optional<Bezout> ext_gcd(int64_t a, int64_t b) {
  if (a == INT64_MIN || b == INT64_MIN || a == 0) return std::nullopt;
  int64_t r0 = a < 0 ? -a : a, r1 = b < 0 ? -b : b;
  int64_t s0 = 1, s1 = 0, t0 = 0, t1 = 1;
  while (r1 != 0) {
    int64_t q = r0 / r1;
    auto r2 = checked_sub(r0, q * r1);  // q·r1 <= r0, no overflow
    auto qs = checked_mul(q, s1), qt = checked_mul(q, t1);
    if (!r2 || !qs || !qt) return std::nullopt;
    auto s2 = checked_sub(s0, *qs), t2 = checked_sub(t0, *qt);
    if (!s2 || !t2) return std::nullopt;
    r0 = r1, r1 = *r2, s0 = s1, s1 = *s2, t0 = t1, t1 = *t2;
  }
  return Bezout{r0, a < 0 ? -s0 : s0, b < 0 ? -t0 : t0};
}

// Rows r1, r2 of m become (a·row1 + b·row2, c·row1 + d·row2). With ad - bc = ±1 the operation
// is unimodular. false on overflow.
bool mix_rows(IntMatrix& m, int r1, int r2, int64_t a, int64_t b, int64_t c, int64_t d) {
  for (int k = 0; k < m.cols(); ++k) {
    int64_t x = m.at(r1, k), y = m.at(r2, k), p, q, u, v;
    if (__builtin_mul_overflow(a, x, &p) || __builtin_mul_overflow(b, y, &q) ||
        __builtin_add_overflow(p, q, &u) || __builtin_mul_overflow(c, x, &p) ||
        __builtin_mul_overflow(d, y, &q) || __builtin_add_overflow(p, q, &v)) {
      return false;
    }
    m.at(r1, k) = u;
    m.at(r2, k) = v;
  }
  return true;
}

bool mix_cols(IntMatrix& m, int c1, int c2, int64_t a, int64_t b, int64_t c, int64_t d) {
  for (int k = 0; k < m.rows(); ++k) {
    int64_t x = m.at(k, c1), y = m.at(k, c2), p, q, u, v;
    if (__builtin_mul_overflow(a, x, &p) || __builtin_mul_overflow(b, y, &q) ||
        __builtin_add_overflow(p, q, &u) || __builtin_mul_overflow(c, x, &p) ||
        __builtin_mul_overflow(d, y, &q) || __builtin_add_overflow(p, q, &v)) {
      return false;
    }
    m.at(k, c1) = u;
    m.at(k, c2) = v;
  }
  return true;
}

// Zeroes entry `x` against pivot `p` in a row (or column) pair: a plain elimination when p
// divides x, otherwise a gcd step that also makes the pivot gcd(p, x), strictly smaller.
// Returns the 2×2 operation (a, b, c, d) to apply to (pivot line, other line).
struct Op {
  int64_t a, b, c, d;
};
std::optional<Op> clearing_op(int64_t p, int64_t x) {
  if (auto q = exact_div(x, p)) {
    auto nq = checked_sub(0, *q);
    if (!nq) return std::nullopt;
    return Op{1, 0, *nq, 1};
  }
  auto e = ext_gcd(p, x);
  if (!e) return std::nullopt;
  // [[s, t], [-x/g, p/g]] has determinant (s·p + t·x)/g = 1.
  auto xg = exact_div(x, e->g), pg = exact_div(p, e->g);
  if (!xg || !pg) return std::nullopt;
  auto nxg = checked_sub(0, *xg);
  if (!nxg) return std::nullopt;
  return Op{e->s, e->t, *nxg, *pg};
}

bool negate_row(IntMatrix& m, int r) {
  for (int k = 0; k < m.cols(); ++k) {
    if (m.at(r, k) == INT64_MIN) return false;
    m.at(r, k) = -m.at(r, k);
  }
  return true;
}

bool divides(int64_t p, int64_t x) {
  return exact_div(x, p).has_value();
}

}  // namespace

std::optional<SmithNormalForm> smith_normal_form(const IntMatrix& A) {
  const int m = A.rows(), n = A.cols();
  SmithNormalForm f{IntMatrix::identity(m), A, IntMatrix::identity(n), 0};
  IntMatrix &U = f.U, &S = f.S, &V = f.V;
  int t = 0;
  for (; t < std::min(m, n); ++t) {
    // Pivot: the smallest nonzero magnitude, which keeps the gcd loops short.
    int pi = -1, pj = -1;
    uint64_t best = 0;
    for (int i = t; i < m; ++i) {
      for (int j = t; j < n; ++j) {
        int64_t v = S.at(i, j);
        if (v == 0) continue;
        uint64_t mag = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
        if (pi < 0 || mag < best) pi = i, pj = j, best = mag;
      }
    }
    if (pi < 0) break;  // the rest is zero: t is the rank
    if (pi != t && (!mix_rows(S, t, pi, 0, 1, 1, 0) || !mix_rows(U, t, pi, 0, 1, 1, 0))) {
      return std::nullopt;
    }
    if (pj != t && (!mix_cols(S, t, pj, 0, 1, 1, 0) || !mix_cols(V, t, pj, 0, 1, 1, 0))) {
      return std::nullopt;
    }
    // Each round either finishes or strictly lowers |pivot| (every gcd step does, and the
    // divisibility fix-up below forces one), so the loop terminates.
    for (;;) {
      for (int i = t + 1; i < m; ++i) {
        if (S.at(i, t) == 0) continue;
        auto op = clearing_op(S.at(t, t), S.at(i, t));
        if (!op || !mix_rows(S, t, i, op->a, op->b, op->c, op->d) ||
            !mix_rows(U, t, i, op->a, op->b, op->c, op->d)) {
          return std::nullopt;
        }
      }
      for (int j = t + 1; j < n; ++j) {
        if (S.at(t, j) == 0) continue;
        auto op = clearing_op(S.at(t, t), S.at(t, j));
        if (!op || !mix_cols(S, t, j, op->a, op->b, op->c, op->d) ||
            !mix_cols(V, t, j, op->a, op->b, op->c, op->d)) {
          return std::nullopt;
        }
      }
      // Column steps can refill the pivot column; go round again until both are clear.
      bool clear = true;
      for (int i = t + 1; i < m; ++i) clear = clear && S.at(i, t) == 0;
      if (!clear) continue;
      // The pivot must divide everything left, so that d_t | d_{t+1}: otherwise add the
      // offending row to the pivot row, and the next column step lowers the pivot to a gcd.
      int bad = -1;
      for (int i = t + 1; i < m && bad < 0; ++i) {
        for (int j = t + 1; j < n; ++j) {
          if (!divides(S.at(t, t), S.at(i, j))) {
            bad = i;
            break;
          }
        }
      }
      if (bad < 0) break;
      if (!mix_rows(S, t, bad, 1, 1, 0, 1) || !mix_rows(U, t, bad, 1, 1, 0, 1)) {
        return std::nullopt;
      }
    }
    if (S.at(t, t) < 0 && (!negate_row(S, t) || !negate_row(U, t))) return std::nullopt;
  }
  f.rank = t;
  return f;
}

}  // namespace cot
