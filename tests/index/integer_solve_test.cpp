#include "index/integer_solve.h"

#include <gtest/gtest.h>

#include <random>

namespace cot {
namespace COTANGENT_TEST_UNIT {

// Variables of y: 10 = j, 11 = a, 12 = b.
const int32_t kJ = 10, kA = 11, kB = 12;

IntMatrix Mat(int rows, int cols, std::vector<int64_t> v) {
  IntMatrix m(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) m.at(r, c) = v[size_t(r) * cols + c];
  }
  return m;
}

IntegerSolutionSet Solve(const IntMatrix& a, const std::vector<Affine>& y) {
  auto snf = smith_normal_form(a);
  EXPECT_TRUE(snf.has_value());
  auto s = integer_solutions(*snf, y);
  EXPECT_TRUE(s.has_value());
  return *s;
}

TEST(IndexSolverIntegerSolve, EvenTarget) {
  // 2x = j: x = j / 2 when j is even.
  auto s = Solve(Mat(1, 1, {2}), {Affine::var(kJ)});
  EXPECT_FALSE(s.empty);
  EXPECT_TRUE(s.zero.empty());
  ASSERT_EQ(s.divisible.size(), 1u);
  EXPECT_EQ(s.divisible[0].first, Affine::var(kJ));
  EXPECT_EQ(s.divisible[0].second, 2);
  ASSERT_EQ(s.particular.size(), 1u);
  EXPECT_EQ(s.particular[0], Affine::var(kJ));
  EXPECT_EQ(s.divisor[0], 2);
  EXPECT_TRUE(s.kernel.empty());
}

TEST(IndexSolverIntegerSolve, ParityMakesItEmpty) {
  // 2x = 2j + 1 never holds.
  auto y = Affine::add(Affine::var(kJ, 2), Affine::constant(1)).value();
  auto s = Solve(Mat(1, 1, {2}), {y});
  EXPECT_TRUE(s.empty);
  // 4x = 2j + 2: j + 1 must be even.
  y = Affine::add(Affine::var(kJ, 2), Affine::constant(2)).value();
  s = Solve(Mat(1, 1, {4}), {y});
  EXPECT_FALSE(s.empty);
  ASSERT_EQ(s.divisible.size(), 1u);
  EXPECT_EQ(s.divisible[0].first, Affine::add(Affine::var(kJ), Affine::constant(1)).value());
  EXPECT_EQ(s.divisible[0].second, 2);
}

TEST(IndexSolverIntegerSolve, DiagonalReadGivesCokernelEquality) {
  // x[i, i]: (1, 1)^T x = (a, b) needs a == b.
  auto s = Solve(Mat(2, 1, {1, 1}), {Affine::var(kA), Affine::var(kB)});
  EXPECT_FALSE(s.empty);
  ASSERT_EQ(s.zero.size(), 1u);
  EXPECT_EQ(s.zero[0], Affine::sub(Affine::var(kA), Affine::var(kB)).value());  // sign: a first
  EXPECT_TRUE(s.divisible.empty());
  ASSERT_EQ(s.particular.size(), 1u);
  EXPECT_EQ(s.divisor[0], 1);
  EXPECT_TRUE(s.particular[0] == Affine::var(kA) || s.particular[0] == Affine::var(kB));
}

TEST(IndexSolverIntegerSolve, KernelOfASum) {
  // x[i + k] = j: one particular solution and one kernel direction (1, -1) up to sign.
  auto s = Solve(Mat(1, 2, {1, 1}), {Affine::var(kJ)});
  ASSERT_EQ(s.kernel.size(), 1u);
  EXPECT_EQ(s.kernel[0][0] + s.kernel[0][1], 0);
  EXPECT_EQ(std::abs(s.kernel[0][0]), 1);
  auto sum = Affine::add(s.particular[0], s.particular[1]).value();
  EXPECT_EQ(sum, Affine::var(kJ));
}

// Evaluates particular / divisor at constant y; nullopt when not integral.
std::optional<std::vector<int64_t>> Particular(const IntegerSolutionSet& s) {
  std::vector<int64_t> x;
  for (size_t k = 0; k < s.particular.size(); ++k) {
    int64_t num = s.particular[k].constant_term();
    if (num % s.divisor[k] != 0) return std::nullopt;
    x.push_back(num / s.divisor[k]);
  }
  return x;
}

TEST(IndexSolverIntegerSolve, RandomSystemsMatchBruteForce) {
  std::mt19937 rng(77);
  std::uniform_int_distribution<int> dim(1, 3), entry(-3, 3), target(-6, 6);
  int solvable = 0, unsolvable = 0;
  for (int iter = 0; iter < 600; ++iter) {
    int m = dim(rng), n = dim(rng);
    IntMatrix a(m, n);
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < n; ++c) a.at(r, c) = entry(rng);
    }
    std::vector<Affine> y;
    std::vector<int64_t> yv;
    for (int r = 0; r < m; ++r) {
      yv.push_back(target(rng));
      y.push_back(Affine::constant(yv.back()));
    }
    IntegerSolutionSet s = Solve(a, y);
    // With constant y every condition is decided: nothing symbolic may remain.
    EXPECT_TRUE(s.zero.empty());
    EXPECT_TRUE(s.divisible.empty());
    // Brute force over a box.
    std::vector<std::vector<int64_t>> found;
    std::vector<int64_t> x(n, -4);
    for (;;) {
      bool ok = true;
      for (int r = 0; r < m && ok; ++r) {
        int64_t v = 0;
        for (int c = 0; c < n; ++c) v += a.at(r, c) * x[c];
        ok = v == yv[r];
      }
      if (ok) found.push_back(x);
      int c = 0;
      while (c < n && ++x[c] > 4) x[c++] = -4;
      if (c == n) break;
    }
    if (s.empty) {
      ++unsolvable;
      EXPECT_TRUE(found.empty()) << "iteration " << iter;
      continue;
    }
    ++solvable;
    auto x0 = Particular(s);
    ASSERT_TRUE(x0.has_value()) << "iteration " << iter;
    for (int r = 0; r < m; ++r) {
      int64_t v = 0, kv = 0;
      for (int c = 0; c < n; ++c) v += a.at(r, c) * (*x0)[c];
      EXPECT_EQ(v, yv[r]) << "iteration " << iter;
      for (const auto& k : s.kernel) {
        kv = 0;
        for (int c = 0; c < n; ++c) kv += a.at(r, c) * k[c];
        EXPECT_EQ(kv, 0);
      }
    }
    // Every brute-force solution is x0 + K·z for an integer z: K·z = x - x0 is solvable.
    IntMatrix km(n, static_cast<int>(s.kernel.size()));
    for (size_t c = 0; c < s.kernel.size(); ++c) {
      for (int k = 0; k < n; ++k) km.at(k, int(c)) = s.kernel[c][k];
    }
    for (const auto& sol : found) {
      std::vector<Affine> diff;
      for (int k = 0; k < n; ++k) diff.push_back(Affine::constant(sol[k] - (*x0)[k]));
      IntegerSolutionSet z = Solve(km, diff);
      EXPECT_FALSE(z.empty) << "iteration " << iter;
      EXPECT_TRUE(Particular(z).has_value());
    }
    if (HasFailure()) FAIL() << "iteration " << iter;
  }
  // The generator exercises both outcomes.
  EXPECT_GT(solvable, 100);
  EXPECT_GT(unsolvable, 100);
}

TEST(IndexSolverIntegerSolve, NormalizedConditions) {
  // -4j + 2a + 6 == 0  <=>  2j - a - 3 == 0
  auto e =
      Affine::add(Affine::add(Affine::var(kJ, -4), Affine::var(kA, 2)).value(), Affine::constant(6))
          .value();
  auto z = normalize_zero(e);
  ASSERT_TRUE(z.has_value());
  EXPECT_FALSE(z->false_);
  EXPECT_EQ(z->expr, Affine::add(Affine::add(Affine::var(kJ, 2), Affine::var(kA, -1)).value(),
                                 Affine::constant(-3))
                         .value());
  // -4j + 6 == 0 has no integer solution.
  EXPECT_TRUE(
      normalize_zero(Affine::add(Affine::var(kJ, -4), Affine::constant(6)).value())->false_);
  auto f = normalize_zero(Affine::add(Affine::var(kJ, 4), Affine::constant(2)).value());
  EXPECT_TRUE(f->false_);
  auto d = normalize_divisible(Affine::add(Affine::var(kJ, 6), Affine::constant(3)).value(), 9);
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->expr, Affine::add(Affine::var(kJ, 2), Affine::constant(1)).value());
  EXPECT_EQ(d->modulus, 3);
  EXPECT_TRUE(normalize_divisible(Affine::var(kJ, 6), 3)->true_);
  EXPECT_TRUE(
      normalize_divisible(Affine::add(Affine::var(kJ, 6), Affine::constant(1)).value(), 3)->false_);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
