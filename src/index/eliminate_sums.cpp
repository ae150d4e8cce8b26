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

// The summed variables solved so far and their values, over free, kept and not yet solved
// summed variables.
struct Solving {
  const std::vector<SummedVar>& vars;
  std::vector<bool> solved;           // per position in vars
  std::map<int32_t, Rational> value;  // summed var -> value
};

// How a stage of the elimination ended: the sum is empty (0), or an i64 overflowed.
enum class Outcome { Done, Empty, Overflow };

// Records the value r of summed variable v, substituted into the values found before it.
bool record_value(Solving& st, int32_t v, const Rational& r) {
  for (auto& [w, wr] : st.value) {
    auto s = substitute(wr, v, r);
    if (!s) return false;
    wr = *s;
  }
  st.value[v] = r;
  return true;
}

// Stage 1: Gaussian elimination on unit coefficients, which solves without division. The
// latest variable with a unit coefficient goes first (inner sums before outer ones). `rest`
// keeps the equalities not used; false on overflow.
bool solve_unit_coefficients(Solving& st, std::vector<Affine>& rest) {
  const int p = static_cast<int>(st.vars.size());
  for (;;) {
    int best_eq = -1, best_pos = -1;
    for (int q = p - 1; q >= 0 && best_eq < 0; --q) {
      if (st.solved[q]) continue;
      for (size_t e = 0; e < rest.size(); ++e) {
        int64_t c = rest[e].coeff(st.vars[q].var);
        if (c == 1 || c == -1) {
          best_eq = static_cast<int>(e);
          best_pos = q;
          break;
        }
      }
    }
    if (best_eq < 0) return true;
    const int32_t v = st.vars[best_pos].var;
    const Affine e = rest[best_eq];
    const int64_t c = e.coeff(v);
    // e = c·v + r == 0  =>  v = -r/c = c·(c·v - e), as c = ±1.
    auto diff = Affine::sub(Affine::var(v, c), e);
    if (!diff) return false;
    auto val = Affine::scale(*diff, c);
    if (!val) return false;
    rest.erase(rest.begin() + best_eq);
    for (auto& other : rest) {
      auto s = other.substitute(v, *val);
      if (!s) return false;
      other = *s;
    }
    if (!record_value(st, v, Rational{*val, 1})) return false;
    st.solved[best_pos] = true;
  }
}

// A maximal independent set of the summed variables not yet solved that the equalities `hard`
// mention (latest first), in their order; nullopt on overflow.
std::optional<std::vector<int32_t>> independent_variables(const Solving& st,
                                                          const std::vector<Affine>& hard) {
  std::vector<int32_t> pivots;  // in descending position order while choosing
  for (int q = static_cast<int>(st.vars.size()) - 1; q >= 0; --q) {
    if (st.solved[q]) continue;
    bool mentioned = false;
    for (const auto& e : hard) mentioned = mentioned || e.mentions(st.vars[q].var);
    if (!mentioned) continue;
    std::vector<int32_t> trial = pivots;
    trial.push_back(st.vars[q].var);
    auto rank = column_rank(hard, trial);
    if (!rank) return std::nullopt;
    if (*rank == static_cast<int>(trial.size())) pivots = trial;
  }
  std::reverse(pivots.begin(), pivots.end());
  return pivots;
}

// Stage 2: the equalities `hard` (only non-unit coefficients left) solved for an independent
// set P of the remaining summed variables, keeping the others: B·s_P = -(rest of the
// equalities), exactly over the integers (Smith normal form). Equalities the solution leaves go
// to `zero`, its lattice conditions to `divisible`.
Outcome solve_by_smith_normal_form(Solving& st, const std::vector<Affine>& hard,
                                   std::vector<Affine>& zero,
                                   std::vector<std::pair<Affine, int64_t>>& divisible) {
  auto pivots = independent_variables(st, hard);
  if (!pivots) return Outcome::Overflow;
  IntMatrix B(static_cast<int>(hard.size()), static_cast<int>(pivots->size()));
  std::vector<Affine> rhs;
  for (size_t r = 0; r < hard.size(); ++r) {
    Affine others = hard[r];
    for (size_t k = 0; k < pivots->size(); ++k) {
      B.at(int(r), int(k)) = hard[r].coeff((*pivots)[k]);
      others = *others.substitute((*pivots)[k], Affine());  // dropping a term cannot overflow
    }
    auto neg = Affine::scale(others, -1);
    if (!neg) return Outcome::Overflow;
    rhs.push_back(*neg);
  }
  auto snf = smith_normal_form(B);
  if (!snf) return Outcome::Overflow;
  auto sol = integer_solutions(*snf, rhs);
  if (!sol) return Outcome::Overflow;
  if (sol->empty) return Outcome::Empty;
  // B has full column rank, so there is no kernel: every pivot is pinned.
  for (const auto& z : sol->zero) zero.push_back(z);
  divisible = sol->divisible;
  for (size_t k = 0; k < pivots->size(); ++k) {
    if (!record_value(st, (*pivots)[k], Rational{sol->particular[k], sol->divisor[k]})) {
      return Outcome::Overflow;
    }
    for (size_t q = 0; q < st.vars.size(); ++q) {
      if (st.vars[q].var == (*pivots)[k]) st.solved[q] = true;
    }
  }
  return Outcome::Done;
}

// The guard's conditions: the equalities `zero` left over, then the ranges 0 <= v and
// v <= extent - 1 of each solved v, with every solved value substituted (a rational r >= 0 is
// its numerator >= 0: the divisor is positive). Constant-true ones and duplicates are dropped.
Outcome add_conditions(const Solving& st, const std::vector<Affine>& zero,
                       std::vector<Pred>& conditions) {
  auto add_condition = [&](Pred c) {
    if (std::find(conditions.begin(), conditions.end(), c) == conditions.end()) {
      conditions.push_back(std::move(c));
    }
  };
  for (const auto& e : zero) {
    auto c = normalize_zero(e);
    if (!c) return Outcome::Overflow;
    if (c->false_) return Outcome::Empty;
    if (!c->true_) add_condition(Pred::eq0(c->expr));
  }
  auto in_terms_of_kept = [&](const Affine& e) -> std::optional<Rational> {
    Rational r{e, 1};
    for (const auto& [w, wr] : st.value) {
      auto s = substitute(r, w, wr);
      if (!s) return std::nullopt;
      r = *s;
    }
    return r;
  };
  for (size_t q = 0; q < st.vars.size(); ++q) {
    if (!st.solved[q]) continue;
    const int32_t v = st.vars[q].var;
    auto upper = Affine::sub(st.vars[q].extent, Affine::var(v));
    if (!upper) return Outcome::Overflow;
    upper = Affine::sub(*upper, Affine::constant(1));
    if (!upper) return Outcome::Overflow;
    for (const Affine& e : {Affine::var(v), *upper}) {
      auto r = in_terms_of_kept(e);
      if (!r) return Outcome::Overflow;
      Pred c = Pred::ge0(fm::tighten(r->num));
      if (c.kind == Pred::Kind::False) return Outcome::Empty;
      if (c.kind != Pred::Kind::True) add_condition(std::move(c));
    }
  }
  return Outcome::Done;
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
  Solving st{vars, std::vector<bool>(p, false), {}};
  std::vector<Affine> rest = eqs;
  if (!solve_unit_coefficients(st, rest)) return std::nullopt;

  // Equalities left: those without unsolved summed variables are guards; the others have only
  // non-unit coefficients and go to the Smith normal form.
  std::vector<Affine> zero, hard;
  for (const auto& e : rest) {
    bool summed = false;
    for (int q = 0; q < p; ++q) summed = summed || (!st.solved[q] && e.mentions(vars[q].var));
    (summed ? hard : zero).push_back(e);
  }
  if (!hard.empty()) {
    const Outcome solved = solve_by_smith_normal_form(st, hard, zero, out.divisible);
    if (solved == Outcome::Overflow) return std::nullopt;
    if (solved == Outcome::Empty) return empty();
  }

  for (int q = 0; q < p; ++q) {
    if (st.solved[q]) {
      const Rational& r = st.value.at(vars[q].var);
      out.solved.push_back(SolvedVar{vars[q].var, r.num, r.div});
    } else {
      out.kept.push_back(vars[q].var);
    }
  }
  const Outcome guarded = add_conditions(st, zero, out.conditions);
  if (guarded == Outcome::Overflow) return std::nullopt;
  if (guarded == Outcome::Empty) return empty();
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
