#include "index/fourier_motzkin.h"

#include <algorithm>
#include <map>

#include "index/int_matrix.h"

namespace cot::fm {
namespace {

using Terms = std::vector<std::pair<int32_t, int64_t>>;

Affine build(const Terms& terms, int64_t constant) {
  Affine r = Affine::constant(constant);
  for (const auto& [v, c] : terms) r = *Affine::add(r, Affine::var(v, c));  // distinct vars
  return r;
}

// A deduplicated set of tightened constraints: for each linear part only the smallest
// constant (the strongest constraint) is kept. Constant constraints are decided on entry.
class System {
 public:
  void add(const Affine& e) {
    Affine t = tighten(e);
    if (t.is_constant()) {
      if (t.constant_term() < 0) infeasible_ = true;
      return;
    }
    auto [it, fresh] = rows_.emplace(t.terms(), t.constant_term());
    if (!fresh && t.constant_term() < it->second) it->second = t.constant_term();
  }
  bool infeasible() const { return infeasible_; }
  size_t size() const { return rows_.size(); }
  std::vector<Affine> constraints() const {
    if (infeasible_) return {Affine::constant(-1)};
    std::vector<Affine> out;
    out.reserve(rows_.size());
    for (const auto& [terms, c] : rows_) out.push_back(build(terms, c));
    return out;
  }

 private:
  std::map<Terms, int64_t> rows_;
  bool infeasible_ = false;
};

// b·P + a·Q for the lower bound a·x + P >= 0 and the upper bound -b·x + Q >= 0 (a, b > 0):
// x drops out. nullopt on overflow (the caller then drops this consequence).
std::optional<Affine> combine(const Affine& lo, const Affine& hi, int32_t x) {
  int64_t a = lo.coeff(x), b = -hi.coeff(x);
  auto g = checked_gcd(a, b);
  if (!g) return std::nullopt;
  auto p = lo.substitute(x, Affine()), q = hi.substitute(x, Affine());
  if (!p || !q) return std::nullopt;
  auto sp = Affine::scale(*p, b / *g), sq = Affine::scale(*q, a / *g);
  if (!sp || !sq) return std::nullopt;
  return Affine::add(*sp, *sq);
}

struct Split {
  std::vector<Affine> lower, upper, rest;
};
Split split(const std::vector<Affine>& cs, int32_t var) {
  Split s;
  for (const auto& c : cs) {
    int64_t k = c.coeff(var);
    (k > 0 ? s.lower : k < 0 ? s.upper : s.rest).push_back(c);
  }
  return s;
}

}  // namespace

Affine tighten(const Affine& e) {
  int64_t g = 0;
  for (const auto& [v, c] : e.terms()) {
    auto n = checked_gcd(g, c);
    if (!n) return e;  // 2^63: leave it alone
    g = *n;
  }
  if (g <= 1) return e;
  Terms terms;
  for (const auto& [v, c] : e.terms()) terms.emplace_back(v, c / g);
  return build(terms, floor_div(e.constant_term(), g));
}

std::vector<Affine> eliminate(const std::vector<Affine>& constraints, int32_t var) {
  System in;
  for (const auto& c : constraints) in.add(c);
  if (in.infeasible()) return in.constraints();
  Split s = split(in.constraints(), var);
  System out;
  for (const auto& c : s.rest) out.add(c);
  // Past the limit, keep only the constraints without var: still implied by the input.
  if (s.lower.size() * s.upper.size() + s.rest.size() <= kMaxConstraints) {
    for (const auto& lo : s.lower) {
      for (const auto& hi : s.upper) {
        if (auto c = combine(lo, hi, var)) out.add(*c);
      }
    }
  }
  return out.constraints();
}

std::optional<VarBounds> bounds_of(const std::vector<Affine>& constraints, int32_t var) {
  VarBounds b;
  for (const auto& c : constraints) {
    int64_t k = c.coeff(var);
    if (k == 0) continue;
    auto rest = c.substitute(var, Affine());  // removing a term cannot overflow
    if (!rest) return std::nullopt;
    if (k > 0) {
      // k·var + R >= 0  <=>  k·var >= -R
      auto neg = Affine::scale(*rest, -1);
      if (!neg) return std::nullopt;
      b.lower.emplace_back(*neg, k);
    } else {
      // -|k|·var + R >= 0  <=>  |k|·var <= R
      if (k == INT64_MIN) return std::nullopt;
      b.upper.emplace_back(*rest, -k);
    }
  }
  return b;
}

bool feasible(const std::vector<Affine>& constraints) {
  std::vector<Affine> cs = constraints;
  for (;;) {
    System sys;
    for (const auto& c : cs) sys.add(c);
    if (sys.infeasible()) return false;
    cs = sys.constraints();
    // Eliminate the variable that creates the fewest new constraints.
    std::map<int32_t, std::pair<size_t, size_t>> counts;
    for (const auto& c : cs) {
      for (const auto& [v, k] : c.terms()) ++(k > 0 ? counts[v].first : counts[v].second);
    }
    if (counts.empty()) return true;
    int32_t best = counts.begin()->first;
    long best_growth = 0;
    bool first = true;
    for (const auto& [v, pn] : counts) {
      long growth = long(pn.first * pn.second) - long(pn.first + pn.second);
      if (first || growth < best_growth) best = v, best_growth = growth, first = false;
    }
    cs = eliminate(cs, best);
  }
}

std::vector<Affine> connected_to(const std::vector<Affine>& constraints,
                                 const std::vector<Affine>& seeds) {
  std::vector<int32_t> vars;
  for (const auto& c : seeds) {
    for (const auto& [v, k] : c.terms()) vars.push_back(v);
  }
  auto mentions = [&](const Affine& a) {
    for (const auto& [v, k] : a.terms()) {
      if (std::find(vars.begin(), vars.end(), v) != vars.end()) return true;
    }
    return false;
  };
  std::vector<bool> taken(constraints.size(), false);
  std::vector<Affine> out;
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t i = 0; i < constraints.size(); ++i) {
      if (taken[i] || !mentions(constraints[i])) continue;
      taken[i] = true;
      grew = true;
      out.push_back(constraints[i]);
      for (const auto& [v, k] : constraints[i].terms()) {
        if (std::find(vars.begin(), vars.end(), v) == vars.end()) vars.push_back(v);
      }
    }
  }
  return out;
}

bool implies(const std::vector<Affine>& constraints, const Affine& c) {
  auto neg = Affine::scale(c, -1);
  if (!neg) return false;
  auto negation = Affine::sub(*neg, Affine::constant(1));
  if (!negation) return false;
  std::vector<Affine> cs = connected_to(constraints, {c});
  cs.push_back(*negation);
  return !feasible(cs);
}

}  // namespace cot::fm
