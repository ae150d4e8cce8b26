#include "index/eliminate_sums.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>
#include <random>
#include <set>

namespace cot {
namespace COTANGENT_TEST_UNIT {

// Variables: summed i = 0, j = 1, k = 2; free a = 3, b = 4, c = 5, sizes n = 6, m = 7,
// target t = 8 (called j in design.md §7.4 when it is free).
const int32_t kI = 0, kJ = 1, kK = 2, kA = 3, kB = 4, kC = 5, kN = 6, kM = 7, kT = 8;

Affine V(int32_t v, int64_t c = 1) {
  return Affine::var(v, c);
}
Affine K(int64_t c) {
  return Affine::constant(c);
}
Affine operator+(const Affine& x, const Affine& y) {
  return Affine::add(x, y).value();
}
Affine operator-(const Affine& x, const Affine& y) {
  return Affine::sub(x, y).value();
}

bool HasCondition(const SumElimination& e, const Pred& p) {
  return std::find(e.conditions.begin(), e.conditions.end(), p) != e.conditions.end();
}

SumElimination Eliminate(const std::vector<SummedVar>& vars, const std::vector<Affine>& eqs) {
  auto r = eliminate_sums(vars, eqs);
  EXPECT_TRUE(r.has_value());
  return r.value_or(SumElimination{});
}

TEST(EliminationSums, ShiftedRead) {
  // sum i < n. [i + 1 == t]  ->  i = t - 1, 0 <= t - 1 <= n - 1
  auto e = Eliminate({{kI, V(kN)}}, {V(kI) + K(1) - V(kT)});
  EXPECT_FALSE(e.empty);
  ASSERT_EQ(e.solved.size(), 1u);
  EXPECT_EQ(e.solved[0].var, kI);
  EXPECT_EQ(e.solved[0].numerator, V(kT) - K(1));
  EXPECT_EQ(e.solved[0].divisor, 1);
  EXPECT_TRUE(e.kept.empty());
  EXPECT_TRUE(e.divisible.empty());
  EXPECT_EQ(e.conditions.size(), 2u);
  EXPECT_TRUE(HasCondition(e, Pred::ge0(V(kT) - K(1))));
  EXPECT_TRUE(HasCondition(e, Pred::ge0(V(kN) - V(kT))));
}

TEST(EliminationSums, StridedRead) {
  // sum i < n. [2i == t]  ->  i = t / 2 with t even, 0 <= t <= 2n - 2
  auto e = Eliminate({{kI, V(kN)}}, {V(kI, 2) - V(kT)});
  EXPECT_FALSE(e.empty);
  ASSERT_EQ(e.solved.size(), 1u);
  EXPECT_EQ(e.solved[0].numerator, V(kT));
  EXPECT_EQ(e.solved[0].divisor, 2);
  ASSERT_EQ(e.divisible.size(), 1u);
  EXPECT_EQ(e.divisible[0].first, V(kT));
  EXPECT_EQ(e.divisible[0].second, 2);
  EXPECT_TRUE(HasCondition(e, Pred::ge0(V(kT))));
  EXPECT_TRUE(HasCondition(e, Pred::ge0(V(kN, 2) - K(2) - V(kT))));
  EXPECT_EQ(e.conditions.size(), 2u);
}

TEST(EliminationSums, DiagonalRead) {
  // A[i, i] adjoint: sum i < n. [i == a && i == b]  ->  i = a (or b), a - b == 0
  auto e = Eliminate({{kI, V(kN)}}, {V(kI) - V(kA), V(kI) - V(kB)});
  EXPECT_FALSE(e.empty);
  ASSERT_EQ(e.solved.size(), 1u);
  EXPECT_TRUE(e.solved[0].numerator == V(kA) || e.solved[0].numerator == V(kB));
  EXPECT_TRUE(HasCondition(e, Pred::eq0(V(kA) - V(kB))) ||
              HasCondition(e, Pred::eq0(V(kB) - V(kA))));
  EXPECT_EQ(e.conditions.size(), 3u);  // the equality and the two range constraints
  EXPECT_TRUE(e.kept.empty());
}

TEST(EliminationSums, TwoPinnedVariables) {
  // sum i < n, k < m. [i == a && k == c]
  auto e = Eliminate({{kI, V(kN)}, {kK, V(kM)}}, {V(kI) - V(kA), V(kK) - V(kC)});
  ASSERT_EQ(e.solved.size(), 2u);
  EXPECT_EQ(e.solved[0].var, kI);
  EXPECT_EQ(e.solved[0].numerator, V(kA));
  EXPECT_EQ(e.solved[1].var, kK);
  EXPECT_EQ(e.solved[1].numerator, V(kC));
  EXPECT_TRUE(e.kept.empty());
  EXPECT_TRUE(HasCondition(e, Pred::ge0(V(kA))));
  EXPECT_TRUE(HasCondition(e, Pred::ge0(V(kN) - K(1) - V(kA))));
  EXPECT_TRUE(HasCondition(e, Pred::ge0(V(kC))));
  EXPECT_TRUE(HasCondition(e, Pred::ge0(V(kM) - K(1) - V(kC))));
}

TEST(EliminationSums, UnconstrainedVariableIsKept) {
  // sum i, j, k. [i == a && k == c]: j stays summed.
  auto e = Eliminate({{kI, V(kN)}, {kJ, V(kN)}, {kK, V(kN)}}, {V(kI) - V(kA), V(kK) - V(kC)});
  ASSERT_EQ(e.solved.size(), 2u);
  EXPECT_EQ(e.solved[0].var, kI);
  EXPECT_EQ(e.solved[1].var, kK);
  EXPECT_EQ(e.kept, std::vector<int32_t>{kJ});
}

TEST(EliminationSums, ContradictionIsEmpty) {
  // sum i. [i == t && i == t + 1]
  auto e = Eliminate({{kI, V(kN)}}, {V(kI) - V(kT), V(kI) - V(kT) - K(1)});
  EXPECT_TRUE(e.empty);
  // sum i. [2i == 2t + 1]: parity
  e = Eliminate({{kI, V(kN)}}, {V(kI, 2) - V(kT, 2) - K(1)});
  EXPECT_TRUE(e.empty);
  // A constant empty range: sum i < 0. [i == t]
  e = Eliminate({{kI, K(0)}}, {V(kI) - V(kT)});
  EXPECT_FALSE(e.empty);  // 0 <= t <= -1 is not constant-false as such ...
  EXPECT_TRUE(HasCondition(e, Pred::ge0(V(kT))));
  EXPECT_TRUE(HasCondition(e, Pred::ge0(K(-1) - V(kT))));
  // ... but simplification sees it.
  EXPECT_EQ(simplify_conjunction(e.conditions, {}).kind, Pred::Kind::False);
}

TEST(EliminationSums, InnerSumPreferred) {
  // sum i < n, k < m. [i + k == t]  ->  k = t - i, i kept, 0 <= t - i <= m - 1
  auto e = Eliminate({{kI, V(kN)}, {kK, V(kM)}}, {V(kI) + V(kK) - V(kT)});
  ASSERT_EQ(e.solved.size(), 1u);
  EXPECT_EQ(e.solved[0].var, kK);
  EXPECT_EQ(e.solved[0].numerator, V(kT) - V(kI));
  EXPECT_EQ(e.kept, std::vector<int32_t>{kI});
  EXPECT_TRUE(HasCondition(e, Pred::ge0(V(kT) - V(kI))));
  EXPECT_TRUE(HasCondition(e, Pred::ge0(V(kM) - K(1) - V(kT) + V(kI))));
  EXPECT_EQ(e.conditions.size(), 2u);
}

TEST(EliminationSums, UnitCoefficientPreferredOverLaterVariable) {
  // sum i, k. [i + 2k == t]: solving i avoids a division.
  auto e = Eliminate({{kI, V(kN)}, {kK, V(kN)}}, {V(kI) + V(kK, 2) - V(kT)});
  ASSERT_EQ(e.solved.size(), 1u);
  EXPECT_EQ(e.solved[0].var, kI);
  EXPECT_EQ(e.solved[0].numerator, V(kT) - V(kK, 2));
  EXPECT_EQ(e.solved[0].divisor, 1);
  EXPECT_TRUE(e.divisible.empty());
  EXPECT_EQ(e.kept, std::vector<int32_t>{kK});
}

TEST(EliminationSums, NonUnitSystemNeedsLatticeCondition) {
  // sum i, k. [2i + 3k == t]: k = (t - 2i) / 3, t - 2i ≡ 0 (mod 3), i kept.
  auto e = Eliminate({{kI, V(kN)}, {kK, V(kN)}}, {V(kI, 2) + V(kK, 3) - V(kT)});
  ASSERT_EQ(e.solved.size(), 1u);
  EXPECT_EQ(e.solved[0].var, kK);
  EXPECT_EQ(e.solved[0].divisor, 3);
  EXPECT_EQ(e.kept, std::vector<int32_t>{kI});
  ASSERT_EQ(e.divisible.size(), 1u);
  EXPECT_EQ(e.divisible[0].second, 3);
  // Check the values pointwise: t = 7, i = 2 gives k = 1.
  auto at = [](int32_t v) -> int64_t { return v == kT ? 7 : v == kI ? 2 : 0; };
  EXPECT_EQ(e.solved[0].numerator.eval(at).value(), 3);
  EXPECT_EQ(e.divisible[0].first.eval(at).value() % 3, 0);
}

TEST(EliminationSums, SimplifyConjunctionDropsImpliedConstraints) {
  // Under 0 <= i < n: i >= 0 is implied, i - n <= 5 too, t - i >= 0 is not.
  std::vector<SummedVar> ranges = {{kI, V(kN)}};
  std::vector<Pred> conj = {Pred::ge0(V(kI)), Pred::ge0(V(kN) + K(5) - V(kI)),
                            Pred::ge0(V(kT) - V(kI)), Pred::atom_of(20)};
  Pred s = simplify_conjunction(conj, ranges);
  EXPECT_EQ(s, Pred::conj({Pred::ge0(V(kT) - V(kI)), Pred::atom_of(20)}));
  // Duplicates: one copy stays.
  s = simplify_conjunction({Pred::ge0(V(kT)), Pred::ge0(V(kT))}, {});
  EXPECT_EQ(s, Pred::ge0(V(kT)));
  // t - 1 >= 0 implies t >= 0.
  s = simplify_conjunction({Pred::ge0(V(kT)), Pred::ge0(V(kT) - K(1))}, {});
  EXPECT_EQ(s, Pred::ge0(V(kT) - K(1)));
  // Infeasible: t >= n and t < 0 with 0 <= i < n (so n >= 1).
  s = simplify_conjunction({Pred::ge0(V(kT) - V(kN)), Pred::ge0(K(-1) - V(kT))}, ranges);
  EXPECT_EQ(s.kind, Pred::Kind::False);
  // Equalities are used and kept: t == i implies 0 <= t.
  s = simplify_conjunction({Pred::eq0(V(kT) - V(kI)), Pred::ge0(V(kT))}, ranges);
  EXPECT_EQ(s, Pred::eq0(V(kT) - V(kI)));
  // Nested And is flattened, Or kept as is.
  Pred orp = Pred::disj({Pred::atom_of(20), Pred::atom_of(21)});
  s = simplify_conjunction({Pred::conj({Pred::ge0(V(kI)), orp})}, ranges);
  EXPECT_EQ(s, orp);
}

// Brute force: random systems over small ranges. The points of the original sum and the points
// the elimination parametrises (kept variables over their ranges, guarded by the conditions,
// solved variables computed) must be the same, each exactly once.
TEST(EliminationSums, RandomSystemsParametriseTheSameDomain) {
  std::mt19937 rng(31337);
  std::uniform_int_distribution<int> nsum(1, 3), neq(1, 3), coef(-3, 3), fcoef(-2, 2), cst(-3, 3),
      pick(0, 5);
  const int32_t kF0 = 10, kF1 = 11, kSize = 12;
  int with_divisor = 0, with_kept = 0, with_zero = 0, empties = 0, nonempty_points = 0;
  for (int iter = 0; iter < 400; ++iter) {
    const int p = nsum(rng), m = neq(rng);
    std::vector<SummedVar> vars;
    std::vector<int64_t> const_extent(p, -1);  // -1: the extent is the size variable
    for (int q = 0; q < p; ++q) {
      int r = pick(rng);
      if (r < 2) {
        vars.push_back({q, V(kSize)});
      } else {
        const_extent[q] = r - 2;  // 0..3
        vars.push_back({q, K(const_extent[q])});
      }
    }
    std::vector<Affine> eqs;
    for (int e = 0; e < m; ++e) {
      Affine eq = K(cst(rng));
      for (int q = 0; q < p; ++q) eq = eq + V(q, pick(rng) < 2 ? 0 : coef(rng));
      eq = eq + V(kF0, fcoef(rng)) + V(kF1, pick(rng) < 3 ? 0 : fcoef(rng));
      eqs.push_back(eq);
    }
    auto res = eliminate_sums(vars, eqs);
    ASSERT_TRUE(res.has_value());
    const SumElimination& e = *res;
    if (e.empty) ++empties;
    if (!e.kept.empty()) ++with_kept;
    for (const auto& s : e.solved) with_divisor += s.divisor > 1;
    for (const auto& c : e.conditions) with_zero += c.kind == Pred::Kind::Eq0;
    // Kept and solved partition the summed variables.
    if (!e.empty) {
      ASSERT_EQ(e.kept.size() + e.solved.size(), size_t(p));
      for (const auto& s : e.solved) {
        for (const auto& s2 : e.solved) EXPECT_FALSE(s.numerator.mentions(s2.var));
      }
    }
    for (int64_t f0 = -3; f0 <= 4; ++f0) {
      for (int64_t f1 = -2; f1 <= 2; ++f1) {
        for (int64_t n = 0; n <= 3; ++n) {
          std::map<int32_t, int64_t> env = {{kF0, f0}, {kF1, f1}, {kSize, n}};
          auto extent = [&](int q) { return const_extent[q] < 0 ? n : const_extent[q]; };
          auto value = [&](int32_t v) { return env.at(v); };
          // Original domain.
          std::vector<std::vector<int64_t>> brute;
          std::vector<int64_t> s(p, 0);
          bool any = true;
          for (int q = 0; q < p; ++q) any = any && extent(q) > 0;
          while (any) {
            for (int q = 0; q < p; ++q) env[q] = s[q];
            bool ok = true;
            for (const auto& eq : eqs) ok = ok && eq.eval(value).value() == 0;
            if (ok) brute.push_back(s);
            int q = 0;
            while (q < p && ++s[q] >= extent(q)) s[q++] = 0;
            if (q == p) break;
          }
          for (int q = 0; q < p; ++q) env.erase(q);
          // Parametrised domain.
          std::vector<std::vector<int64_t>> param;
          if (!e.empty) {
            std::vector<int64_t> kv(e.kept.size(), 0);
            bool any_kept = true;
            for (size_t k = 0; k < e.kept.size(); ++k) any_kept = any_kept && extent(e.kept[k]) > 0;
            while (any_kept) {
              for (size_t k = 0; k < e.kept.size(); ++k) env[e.kept[k]] = kv[k];
              bool ok = true;
              for (const auto& c : e.conditions) {
                ok = ok && c.eval(value, [](int32_t) { return false; }).value();
              }
              for (const auto& [d, mod] : e.divisible) ok = ok && d.eval(value).value() % mod == 0;
              if (ok) {
                std::vector<int64_t> point(p);
                for (size_t k = 0; k < e.kept.size(); ++k) point[e.kept[k]] = kv[k];
                for (const auto& sv : e.solved) {
                  int64_t num = sv.numerator.eval(value).value();
                  EXPECT_EQ(num % sv.divisor, 0) << "iteration " << iter;
                  point[sv.var] = num / sv.divisor;
                }
                param.push_back(point);
              }
              size_t k = 0;
              while (k < e.kept.size() && ++kv[k] >= extent(e.kept[k])) kv[k++] = 0;
              if (k == e.kept.size()) break;
            }
            for (int32_t k : e.kept) env.erase(k);
          }
          std::sort(brute.begin(), brute.end());
          std::sort(param.begin(), param.end());
          EXPECT_EQ(param, brute) << "iteration " << iter << " f0 " << f0 << " f1 " << f1 << " n "
                                  << n;
          nonempty_points += !brute.empty();
        }
      }
      if (HasFailure()) FAIL() << "iteration " << iter;
    }
  }
  // The generator reaches every interesting shape.
  EXPECT_GT(with_divisor, 10);
  EXPECT_GT(with_kept, 50);
  EXPECT_GT(with_zero, 20);
  EXPECT_GT(empties, 10);
  EXPECT_GT(nonempty_points, 1000);
}

TEST(EliminationSums, OverflowIsReported) {
  // i = MAX·t from the first equality makes the second 2·MAX·t + ..., which does not fit.
  auto r = eliminate_sums({{kI, V(kN)}}, {V(kI) - V(kT, INT64_MAX), V(kI) + V(kT, INT64_MAX)});
  EXPECT_FALSE(r.has_value());
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
