#include "index/eliminate_sums.h"

#include <algorithm>
#include <map>

#include "index/fourier_motzkin.h"
#include "index/int_matrix.h"
#include "index/integer_solve.h"
#include "index/smith_normal_form.h"

namespace cot {
namespace {

// A rational affine value numerator / divisor (divisor >= 1).
struct Rational {
  Affine num;
  int64_t div = 1;
};

// Replaces w in r by value (a rational): r = (a·w + rest)/d with w = N/e becomes
// (a·N + e·rest)/(d·e), then reduced by the common content. Exact as a rational identity.
std::optional<Rational> substitute(const Rational& r, int32_t w, const Rational& value) {
  int64_t a = r.num.coeff(w);
  if (a == 0) return r;
  auto rest = r.num.substitute(w, Affine());
  if (!rest) return std::nullopt;
  auto an = Affine::scale(value.num, a), er = Affine::scale(*rest, value.div);
  auto div = checked_mul(r.div, value.div);
  if (!an || !er || !div) return std::nullopt;
  auto num = Affine::add(*an, *er);
  if (!num) return std::nullopt;
  int64_t g = *div;
  for (const auto& [v, c] : num->terms()) g = *checked_gcd(g, c);  // g <= div: fits
  g = *checked_gcd(g, num->constant_term());
  if (g <= 1) return Rational{*num, *div};
  Affine reduced = Affine::constant(num->constant_term() / g);
  for (const auto& [v, c] : num->terms()) reduced = *Affine::add(reduced, Affine::var(v, c / g));
  return Rational{reduced, *div / g};
}

// Rank of the columns `cols` of the coefficient matrix of `eqs`.
std::optional<int> column_rank(const std::vector<Affine>& eqs, const std::vector<int32_t>& cols) {
  IntMatrix m(static_cast<int>(eqs.size()), static_cast<int>(cols.size()));
  for (size_t r = 0; r < eqs.size(); ++r) {
    for (size_t c = 0; c < cols.size(); ++c) m.at(int(r), int(c)) = eqs[r].coeff(cols[c]);
  }
  auto snf = smith_normal_form(m);
  if (!snf) return std::nullopt;
  return snf->rank;
}

}  // namespace

std::optional<SumElimination> eliminate_sums(const std::vector<SummedVar>& vars,
                                             const std::vector<Affine>& eqs) {
  const int p = static_cast<int>(vars.size());
  SumElimination out;
  auto empty = [] {
    SumElimination e;
    e.empty = true;
    return e;
  };
  std::vector<bool> solved(p, false);
  std::map<int32_t, Rational> value;  // summed var -> value
  std::vector<Affine> rest = eqs;

  // Stage 1: Gaussian elimination on unit coefficients, which solves without division. The
  // latest variable with a unit coefficient goes first (inner sums before outer ones).
  for (;;) {
    int best_eq = -1, best_pos = -1;
    for (int q = p - 1; q >= 0 && best_eq < 0; --q) {
      if (solved[q]) continue;
      for (size_t e = 0; e < rest.size(); ++e) {
        int64_t c = rest[e].coeff(vars[q].var);
        if (c == 1 || c == -1) {
          best_eq = static_cast<int>(e);
          best_pos = q;
          break;
        }
      }
    }
    if (best_eq < 0) break;
    const int32_t v = vars[best_pos].var;
    const Affine e = rest[best_eq];
    const int64_t c = e.coeff(v);
    // e = c·v + r == 0  =>  v = -r/c = c·(c·v - e), as c = ±1.
    auto diff = Affine::sub(Affine::var(v, c), e);
    if (!diff) return std::nullopt;
    auto val = Affine::scale(*diff, c);
    if (!val) return std::nullopt;
    rest.erase(rest.begin() + best_eq);
    for (auto& other : rest) {
      auto s = other.substitute(v, *val);
      if (!s) return std::nullopt;
      other = *s;
    }
    for (auto& [w, r] : value) {
      auto s = substitute(r, v, Rational{*val, 1});
      if (!s) return std::nullopt;
      r = *s;
    }
    value[v] = Rational{*val, 1};
    solved[best_pos] = true;
  }

  // Equalities left: those without unsolved summed variables are guards; the others have only
  // non-unit coefficients and go to the Smith normal form.
  std::vector<Affine> zero, hard;
  for (const auto& e : rest) {
    bool summed = false;
    for (int q = 0; q < p; ++q) summed = summed || (!solved[q] && e.mentions(vars[q].var));
    (summed ? hard : zero).push_back(e);
  }

  // Stage 2: pick a maximal independent set P of the remaining summed variables (latest first),
  // keep the others, and solve B·s_P = -(rest of the equalities) exactly over the integers.
  if (!hard.empty()) {
    std::vector<int32_t> pivots;  // in descending position order while choosing
    for (int q = p - 1; q >= 0; --q) {
      if (solved[q]) continue;
      bool mentioned = false;
      for (const auto& e : hard) mentioned = mentioned || e.mentions(vars[q].var);
      if (!mentioned) continue;
      std::vector<int32_t> trial = pivots;
      trial.push_back(vars[q].var);
      auto rank = column_rank(hard, trial);
      if (!rank) return std::nullopt;
      if (*rank == static_cast<int>(trial.size())) pivots = trial;
    }
    std::reverse(pivots.begin(), pivots.end());
    IntMatrix B(static_cast<int>(hard.size()), static_cast<int>(pivots.size()));
    std::vector<Affine> rhs;
    for (size_t r = 0; r < hard.size(); ++r) {
      Affine others = hard[r];
      for (size_t k = 0; k < pivots.size(); ++k) {
        B.at(int(r), int(k)) = hard[r].coeff(pivots[k]);
        others = *others.substitute(pivots[k], Affine());  // dropping a term cannot overflow
      }
      auto neg = Affine::scale(others, -1);
      if (!neg) return std::nullopt;
      rhs.push_back(*neg);
    }
    auto snf = smith_normal_form(B);
    if (!snf) return std::nullopt;
    auto sol = integer_solutions(*snf, rhs);
    if (!sol) return std::nullopt;
    if (sol->empty) return empty();
    // B has full column rank, so there is no kernel: every pivot is pinned.
    for (const auto& z : sol->zero) zero.push_back(z);
    out.divisible = sol->divisible;
    for (size_t k = 0; k < pivots.size(); ++k) {
      Rational r{sol->particular[k], sol->divisor[k]};
      for (auto& [w, wr] : value) {
        auto s = substitute(wr, pivots[k], r);
        if (!s) return std::nullopt;
        wr = *s;
      }
      value[pivots[k]] = r;
      for (int q = 0; q < p; ++q) {
        if (vars[q].var == pivots[k]) solved[q] = true;
      }
    }
  }

  for (int q = 0; q < p; ++q) {
    if (solved[q]) {
      const Rational& r = value.at(vars[q].var);
      out.solved.push_back(SolvedVar{vars[q].var, r.num, r.div});
    } else {
      out.kept.push_back(vars[q].var);
    }
  }

  auto add_condition = [&](Pred c) {
    if (std::find(out.conditions.begin(), out.conditions.end(), c) == out.conditions.end()) {
      out.conditions.push_back(std::move(c));
    }
  };
  for (const auto& e : zero) {
    auto c = normalize_zero(e);
    if (!c) return std::nullopt;
    if (c->false_) return empty();
    if (!c->true_) add_condition(Pred::eq0(c->expr));
  }
  // Ranges 0 <= v and v <= extent - 1 of each solved v, with every solved value substituted;
  // a rational r >= 0 is its numerator >= 0 (the divisor is positive).
  auto in_terms_of_kept = [&](const Affine& e) -> std::optional<Rational> {
    Rational r{e, 1};
    for (const auto& [w, wr] : value) {
      auto s = substitute(r, w, wr);
      if (!s) return std::nullopt;
      r = *s;
    }
    return r;
  };
  for (int q = 0; q < p; ++q) {
    if (!solved[q]) continue;
    const int32_t v = vars[q].var;
    auto upper = Affine::sub(vars[q].extent, Affine::var(v));
    if (!upper) return std::nullopt;
    upper = Affine::sub(*upper, Affine::constant(1));
    if (!upper) return std::nullopt;
    for (const Affine& e : {Affine::var(v), *upper}) {
      auto r = in_terms_of_kept(e);
      if (!r) return std::nullopt;
      Pred c = Pred::ge0(fm::tighten(r->num));
      if (c.kind == Pred::Kind::False) return empty();
      if (c.kind != Pred::Kind::True) add_condition(std::move(c));
    }
  }
  return out;
}

Pred simplify_conjunction(const std::vector<Pred>& conj, const std::vector<SummedVar>& ranges) {
  // Flatten nested conjunctions.
  std::vector<Pred> flat, work(conj.rbegin(), conj.rend());
  while (!work.empty()) {
    Pred p = std::move(work.back());
    work.pop_back();
    if (p.kind == Pred::Kind::And) {
      for (auto it = p.kids.rbegin(); it != p.kids.rend(); ++it) work.push_back(*it);
    } else if (p.kind == Pred::Kind::False) {
      return Pred::falsity();
    } else if (p.kind != Pred::Kind::True && std::find(flat.begin(), flat.end(), p) == flat.end()) {
      flat.push_back(std::move(p));
    }
  }
  // Context: the ranges, then each affine constraint as one or two `>= 0` rows.
  std::vector<Affine> range_rows;
  for (const auto& r : ranges) {
    range_rows.push_back(Affine::var(r.var));
    auto up = Affine::sub(r.extent, Affine::var(r.var));
    if (up) up = Affine::sub(*up, Affine::constant(1));
    if (up) range_rows.push_back(*up);  // on overflow, just a weaker context
  }
  auto rows_of = [](const Pred& p) {
    std::vector<Affine> rows;
    if (p.kind == Pred::Kind::Ge0 || p.kind == Pred::Kind::Eq0) rows.push_back(p.expr);
    if (p.kind == Pred::Kind::Eq0) {
      if (auto neg = Affine::scale(p.expr, -1)) rows.push_back(*neg);
    }
    return rows;
  };
  std::vector<bool> dropped(flat.size(), false);
  auto context = [&](size_t skip) {
    std::vector<Affine> rows = range_rows;
    for (size_t k = 0; k < flat.size(); ++k) {
      if (k == skip || dropped[k]) continue;
      for (auto& r : rows_of(flat[k])) rows.push_back(std::move(r));
    }
    return rows;
  };
  if (!fm::feasible(context(flat.size()))) return Pred::falsity();
  for (size_t k = 0; k < flat.size(); ++k) {
    const Pred& p = flat[k];
    if (p.kind != Pred::Kind::Ge0 && p.kind != Pred::Kind::Eq0) continue;
    std::vector<Affine> ctx = context(k);
    std::vector<Affine> need = rows_of(p);
    if (p.kind == Pred::Kind::Eq0 && need.size() < 2) continue;  // negation overflowed
    bool implied = true;
    for (const auto& n : need) implied = implied && fm::implies(ctx, n);
    dropped[k] = implied;
  }
  std::vector<Pred> kept;
  for (size_t k = 0; k < flat.size(); ++k) {
    if (!dropped[k]) kept.push_back(flat[k]);
  }
  return Pred::conj(std::move(kept));
}

}  // namespace cot
