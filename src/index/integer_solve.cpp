#include "index/integer_solve.h"

namespace cot {
namespace {

// gcd of the variable coefficients (0 for a constant).
std::optional<int64_t> coeff_gcd(const Affine& e) {
  int64_t g = 0;
  for (const auto& [v, c] : e.terms()) {
    auto n = checked_gcd(g, c);
    if (!n) return std::nullopt;
    g = *n;
  }
  return g;
}

// e / g for a g dividing every coefficient and the constant.
std::optional<Affine> divide_exact(const Affine& e, int64_t g) {
  auto k = exact_div(e.constant_term(), g);
  if (!k) return std::nullopt;
  Affine r = Affine::constant(*k);
  for (const auto& [v, c] : e.terms()) {
    auto q = exact_div(c, g);
    if (!q) return std::nullopt;
    auto s = Affine::add(r, Affine::var(v, *q));  // distinct variables: no overflow
    if (!s) return std::nullopt;
    r = *s;
  }
  return r;
}

// Σ_k row[k] · y[k].
std::optional<Affine> combine(const std::vector<int64_t>& row, const std::vector<Affine>& y) {
  Affine sum;
  for (size_t k = 0; k < y.size(); ++k) {
    if (row[k] == 0) continue;
    auto t = Affine::scale(y[k], row[k]);
    if (!t) return std::nullopt;
    auto s = Affine::add(sum, *t);
    if (!s) return std::nullopt;
    sum = *s;
  }
  return sum;
}

}  // namespace

std::optional<NormalizedCondition> normalize_zero(const Affine& e) {
  NormalizedCondition out;
  if (e.is_constant()) {
    (e.constant_term() == 0 ? out.true_ : out.false_) = true;
    return out;
  }
  auto g = coeff_gcd(e);
  if (!g) return std::nullopt;
  if (e.constant_term() % *g != 0) {  // g >= 1 here
    out.false_ = true;
    return out;
  }
  int64_t sign_g = e.terms().front().second < 0 ? -*g : *g;  // |g| <= 2^63 - 1
  auto d = divide_exact(e, sign_g);
  if (!d) return std::nullopt;
  out.expr = *d;
  return out;
}

std::optional<NormalizedCondition> normalize_divisible(const Affine& e, int64_t m) {
  NormalizedCondition out;
  if (m <= 0) return std::nullopt;
  auto cg = coeff_gcd(e);
  if (!cg) return std::nullopt;
  auto g = checked_gcd(*cg, m);
  if (!g) return std::nullopt;
  if (e.constant_term() % *g != 0) {
    out.false_ = true;
    return out;
  }
  if (*g == m) {  // every coefficient is a multiple of m and so is the constant
    out.true_ = true;
    return out;
  }
  auto d = divide_exact(e, *g);
  if (!d) return std::nullopt;
  out.expr = *d;
  out.modulus = m / *g;
  return out;
}

std::optional<IntegerSolutionSet> integer_solutions(const SmithNormalForm& snf,
                                                    const std::vector<Affine>& y) {
  const int m = snf.U.rows(), n = snf.V.rows(), rank = snf.rank;
  if (static_cast<int>(y.size()) != m) return std::nullopt;
  IntegerSolutionSet out;
  // y' = U·y.
  std::vector<Affine> yp(m);
  for (int r = 0; r < m; ++r) {
    std::vector<int64_t> row(m);
    for (int k = 0; k < m; ++k) row[k] = snf.U.at(r, k);
    auto e = combine(row, y);
    if (!e) return std::nullopt;
    yp[r] = *e;
  }
  auto fail = [&] {
    IntegerSolutionSet none;
    none.empty = true;
    return none;
  };
  for (int r = rank; r < m; ++r) {
    auto c = normalize_zero(yp[r]);
    if (!c) return std::nullopt;
    if (c->false_) return fail();
    if (!c->true_) out.zero.push_back(c->expr);
  }
  for (int r = 0; r < rank; ++r) {
    if (snf.diag(r) == 1) continue;
    auto c = normalize_divisible(yp[r], snf.diag(r));
    if (!c) return std::nullopt;
    if (c->false_) return fail();
    if (!c->true_) out.divisible.emplace_back(c->expr, c->modulus);
  }
  // x = V·x' with x'_r = y'_r / d_r: over the common denominator L = d_{rank-1} (every d_r
  // divides it), x_k = Σ_r V(k,r)·(L/d_r)·y'_r / L, then reduced by the common content.
  const int64_t L = rank > 0 ? snf.diag(rank - 1) : 1;
  std::vector<Affine> scaled(rank);
  for (int r = 0; r < rank; ++r) {
    auto f = exact_div(L, snf.diag(r));
    if (!f) return std::nullopt;
    auto s = Affine::scale(yp[r], *f);
    if (!s) return std::nullopt;
    scaled[r] = *s;
  }
  for (int k = 0; k < n; ++k) {
    std::vector<int64_t> row(rank);
    for (int r = 0; r < rank; ++r) row[r] = snf.V.at(k, r);
    auto num = combine(row, scaled);
    if (!num) return std::nullopt;
    auto g = coeff_gcd(*num);
    if (!g) return std::nullopt;
    auto g2 = checked_gcd(*g, num->constant_term());
    if (!g2) return std::nullopt;
    auto g3 = checked_gcd(*g2, L);
    if (!g3) return std::nullopt;
    auto reduced = divide_exact(*num, *g3);  // g3 >= 1 since L >= 1
    if (!reduced) return std::nullopt;
    out.particular.push_back(*reduced);
    out.divisor.push_back(L / *g3);
  }
  for (int c = rank; c < n; ++c) {
    std::vector<int64_t> col(n);
    for (int k = 0; k < n; ++k) col[k] = snf.V.at(k, c);
    out.kernel.push_back(std::move(col));
  }
  return out;
}

}  // namespace cot
