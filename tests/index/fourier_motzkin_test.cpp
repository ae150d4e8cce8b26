#include "index/fourier_motzkin.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <random>

namespace cot::fm {
namespace COTANGENT_TEST_UNIT {

// Variables: 0 = x, 1 = y, 2 = z, 3 = n.
Affine Lin(std::vector<int64_t> coeffs, int64_t c) {
  Affine e = Affine::constant(c);
  for (size_t v = 0; v < coeffs.size(); ++v) {
    e = Affine::add(e, Affine::var(static_cast<int32_t>(v), coeffs[v])).value();
  }
  return e;
}

bool Holds(const std::vector<Affine>& cs, const std::vector<int64_t>& point) {
  for (const auto& c : cs) {
    if (c.eval([&](int32_t v) { return point[v]; }).value() < 0) return false;
  }
  return true;
}

TEST(FourierMotzkin, TightenDividesByGcd) {
  // 2x - 3 >= 0  <=>  x - 2 >= 0 over integers.
  EXPECT_EQ(tighten(Lin({2}, -3)), Lin({1}, -2));
  EXPECT_EQ(tighten(Lin({-4, 6}, 5)), Lin({-2, 3}, 2));
  EXPECT_EQ(tighten(Lin({1, 1}, -7)), Lin({1, 1}, -7));
  EXPECT_EQ(tighten(Affine::constant(-3)), Affine::constant(-3));
}

TEST(FourierMotzkin, EliminateProjects) {
  // 0 <= x <= n - 1 and y = x + 1 (two inequalities): eliminating x gives 1 <= y <= n.
  std::vector<Affine> cs = {Lin({1}, 0), Lin({-1, 0, 0, 1}, -1), Lin({-1, 1}, -1), Lin({1, -1}, 1)};
  auto out = eliminate(cs, 0);
  for (const auto& c : out) EXPECT_FALSE(c.mentions(0));
  auto has = [&](const Affine& e) { return std::find(out.begin(), out.end(), e) != out.end(); };
  EXPECT_TRUE(has(Lin({0, 1}, -1)));        // y >= 1
  EXPECT_TRUE(has(Lin({0, -1, 0, 1}, 0)));  // n - y >= 0
  EXPECT_TRUE(has(Lin({0, 0, 0, 1}, -1)));  // n >= 1 (0 <= x <= n - 1)
  // Integer tightening: 2x >= 1 and 2x <= 1 has a rational point only.
  EXPECT_EQ(eliminate({Lin({2}, -1), Lin({-2}, 1)}, 0), std::vector<Affine>{Affine::constant(-1)});
}

TEST(FourierMotzkin, BoundsOf) {
  // 3x - y >= 0 (3x >= y), -2x + n >= 0 (2x <= n), y >= 0 (no x).
  auto b = bounds_of({Lin({3, -1}, 0), Lin({-2, 0, 0, 1}, 0), Lin({0, 1}, 0)}, 0);
  ASSERT_TRUE(b.has_value());
  ASSERT_EQ(b->lower.size(), 1u);
  ASSERT_EQ(b->upper.size(), 1u);
  EXPECT_EQ(b->lower[0].first, Lin({0, 1}, 0));
  EXPECT_EQ(b->lower[0].second, 3);
  EXPECT_EQ(b->upper[0].first, Lin({0, 0, 0, 1}, 0));
  EXPECT_EQ(b->upper[0].second, 2);
}

TEST(FourierMotzkin, FeasibleAndImplies) {
  // 0 <= x < n, 0 <= y < n, x + y >= 2n - 1 is infeasible (max is 2n - 2).
  std::vector<Affine> box = {Lin({1}, 0), Lin({-1, 0, 0, 1}, -1), Lin({0, 1}, 0),
                             Lin({0, -1, 0, 1}, -1)};
  auto cs = box;
  cs.push_back(Lin({1, 1, 0, -2}, 1));
  EXPECT_FALSE(feasible(cs));
  cs.back() = Lin({1, 1, 0, -2}, 2);  // x + y >= 2n - 2: feasible at x = y = n - 1
  EXPECT_TRUE(feasible(cs));
  EXPECT_TRUE(implies(box, Lin({0, 0, 0, 1}, -1)));     // n >= 1
  EXPECT_TRUE(implies(box, Lin({-1, -1, 0, 2}, -2)));   // x + y <= 2n - 2
  EXPECT_FALSE(implies(box, Lin({-1, -1, 0, 2}, -3)));  // x + y <= 2n - 3 fails at the corner
  EXPECT_FALSE(implies(box, Lin({0, 0, 0, 1}, -2)));    // n >= 2 is not implied
  // Integer-only infeasibility found by tightening: 1 <= 2x <= 1.
  EXPECT_FALSE(feasible({Lin({2}, -1), Lin({-2}, 1)}));
  // Overflowing negation: no claim.
  EXPECT_FALSE(implies(box, Affine::var(0, INT64_MIN)));
  EXPECT_TRUE(feasible({}));
  EXPECT_FALSE(feasible({Affine::constant(-1)}));
}

TEST(FourierMotzkin, GrowthIsBounded) {
  // 20 lower and 20 upper bounds on x over distinct variables: 400 combinations exceed the
  // limit, so eliminating x keeps only what does not mention x (a sound relaxation).
  std::vector<Affine> cs;
  for (int32_t k = 1; k <= 20; ++k) {
    cs.push_back(Affine::sub(Affine::var(0), Affine::var(k)).value());       // x >= y_k
    cs.push_back(Affine::sub(Affine::var(20 + k), Affine::var(0)).value());  // x <= w_k
  }
  cs.push_back(Affine::add(Affine::var(1), Affine::constant(-5)).value());  // y_1 >= 5
  auto out = eliminate(cs, 0);
  EXPECT_EQ(out, std::vector<Affine>{Affine::add(Affine::var(1), Affine::constant(-5)).value()});
  // Below the limit the projection is complete: 3 x 3 bounds give 9 constraints.
  std::vector<Affine> small;
  for (int32_t k = 1; k <= 3; ++k) {
    small.push_back(Affine::sub(Affine::var(0), Affine::var(k)).value());
    small.push_back(Affine::sub(Affine::var(20 + k), Affine::var(0)).value());
  }
  EXPECT_EQ(eliminate(small, 0).size(), 9u);
}

TEST(FourierMotzkin, RandomSystemsAgreeWithEnumeration) {
  std::mt19937 rng(4242);
  std::uniform_int_distribution<int> coef(-3, 3), cst(-6, 6), count(1, 5), box(1, 4);
  int proved_infeasible = 0, proved_implied = 0;
  for (int iter = 0; iter < 1500; ++iter) {
    const int nv = 3;
    std::vector<Affine> cs;
    // A box -B <= v <= B makes enumeration exhaustive.
    int64_t B = box(rng);
    for (int v = 0; v < nv; ++v) {
      cs.push_back(Affine::add(Affine::var(v), Affine::constant(B)).value());
      cs.push_back(Affine::add(Affine::var(v, -1), Affine::constant(B)).value());
    }
    int k = count(rng);
    for (int i = 0; i < k; ++i) cs.push_back(Lin({coef(rng), coef(rng), coef(rng)}, cst(rng)));
    Affine query = Lin({coef(rng), coef(rng), coef(rng)}, cst(rng));
    std::vector<std::vector<int64_t>> points;
    for (int64_t x = -B; x <= B; ++x) {
      for (int64_t y = -B; y <= B; ++y) {
        for (int64_t z = -B; z <= B; ++z) {
          if (Holds(cs, {x, y, z})) points.push_back({x, y, z});
        }
      }
    }
    bool f = feasible(cs);
    if (!points.empty()) {
      EXPECT_TRUE(f) << "iteration " << iter;
    }
    if (!f) ++proved_infeasible;
    bool imp = implies(cs, query);
    if (imp) {
      ++proved_implied;
      for (const auto& p : points) EXPECT_TRUE(Holds({query}, p)) << "iteration " << iter;
    }
    // Projection soundness: every point satisfies the eliminated system.
    auto proj = eliminate(cs, 1);
    for (const auto& c : proj) EXPECT_FALSE(c.mentions(1));
    for (const auto& p : points) EXPECT_TRUE(Holds(proj, p)) << "iteration " << iter;
    // Bounds soundness.
    auto b = bounds_of(cs, 2);
    ASSERT_TRUE(b.has_value());
    for (const auto& p : points) {
      auto at = [&](int32_t v) { return p[v]; };
      for (const auto& [l, d] : b->lower) EXPECT_GE(d * p[2], l.eval(at).value());
      for (const auto& [h, d] : b->upper) EXPECT_LE(d * p[2], h.eval(at).value());
    }
    if (HasFailure()) FAIL() << "iteration " << iter;
  }
  // FM is complete enough to prove these often on small systems.
  EXPECT_GT(proved_infeasible, 100);
  EXPECT_GT(proved_implied, 100);
}

// A question about x needs only the constraints connected to x: x <= y <= n chain together,
// z's bounds do not. implies() answers from that part alone, so facts about many unrelated
// index variables (a deeply nested statement's) cost nothing; an unrelated contradiction
// (facts of dead code) no longer proves everything, which is only a lost proof.
TEST(FourierMotzkin, QuestionsUseOnlyConnectedConstraints) {
  const std::vector<Affine> facts = {Lin({-1, 1}, 0),        // y - x >= 0
                                     Lin({0, -1, 0, 1}, 0),  // n - y >= 0
                                     Lin({0, 0, 1}, 0),      // z >= 0
                                     Lin({0, 0, -1}, 5)};    // 5 - z >= 0
  const auto part = connected_to(facts, {Lin({1}, 0)});
  ASSERT_EQ(part.size(), 2u);
  EXPECT_EQ(part[0], facts[0]);
  EXPECT_EQ(part[1], facts[1]);
  EXPECT_TRUE(connected_to(facts, {Affine::constant(1)}).empty());
  // n - x >= 0 follows from the chain.
  EXPECT_TRUE(implies(facts, Lin({-1, 0, 0, 1}, 0)));
  EXPECT_FALSE(implies(facts, Lin({1, 0, 0, -1}, -1)));  // x - n - 1 >= 0 does not
  // With z contradictory (z >= 6 and z <= 5) the facts are dead code's; nothing about x follows.
  std::vector<Affine> dead = facts;
  dead.push_back(Lin({0, 0, 1}, -6));
  EXPECT_FALSE(implies(dead, Lin({1, 0, 0, -1}, -1)));
  // Sixty unrelated chains beside the question: the part has two constraints, and the answer
  // is the same.
  std::vector<Affine> many = facts;
  for (int32_t v = 10; v < 130; v += 2) {
    many.push_back(*Affine::sub(Affine::var(v + 1), Affine::var(v)));
    many.push_back(*Affine::sub(Affine::var(v), Affine::var(v + 3)));
  }
  EXPECT_EQ(connected_to(many, {Lin({1}, 0)}).size(), 2u);
  EXPECT_TRUE(implies(many, Lin({-1, 0, 0, 1}, 0)));
}

TEST(FourierMotzkin, RationalProjectionIsExactInOneDimension) {
  // With one variable eliminated from a system in two variables, the rest decides exactly
  // whether a rational x exists; check with the integer y values whose x range is nonempty
  // over the integers (a subset of the rational ones).
  std::mt19937 rng(99);
  std::uniform_int_distribution<int> coef(-3, 3), cst(-8, 8);
  for (int iter = 0; iter < 500; ++iter) {
    std::vector<Affine> cs = {Lin({1, 0}, 10), Lin({-1, 0}, 10)};  // -10 <= x <= 10
    for (int i = 0; i < 4; ++i) cs.push_back(Lin({coef(rng), coef(rng)}, cst(rng)));
    auto proj = eliminate(cs, 0);
    for (int64_t y = -6; y <= 6; ++y) {
      bool integer_x = false;
      for (int64_t x = -10; x <= 10; ++x) integer_x = integer_x || Holds(cs, {x, y});
      // Rational x exists iff max lower <= min upper: check with exact fractions.
      bool rational_x = true;
      long double lo = -10, hi = 10;
      for (const auto& c : cs) {
        int64_t a = c.coeff(0);
        long double r = c.coeff(1) * y + c.constant_term();
        if (a > 0) lo = std::max(lo, -r / a);
        if (a < 0) hi = std::min(hi, r / -a);
        if (a == 0 && r < 0) rational_x = false;
      }
      rational_x = rational_x && lo <= hi + 1e-12L;
      bool proj_holds = true;
      for (const auto& c : proj)
        proj_holds = proj_holds && c.eval([&](int32_t) { return y; }).value() >= 0;
      if (integer_x) {
        EXPECT_TRUE(proj_holds);
      }
      // Tightening may cut rational-only points, never more than that.
      if (!rational_x) {
        EXPECT_FALSE(proj_holds) << "iteration " << iter << " y " << y;
      }
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::fm
