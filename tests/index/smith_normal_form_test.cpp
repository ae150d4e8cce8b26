#include "index/smith_normal_form.h"

#include <gtest/gtest.h>

#include <climits>
#include <random>

namespace cot {
namespace COTANGENT_TEST_UNIT {

IntMatrix Mat(int rows, int cols, std::vector<int64_t> v) {
  IntMatrix m(rows, cols);
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) m.at(r, c) = v[size_t(r) * cols + c];
  }
  return m;
}

// Rank over the rationals by elimination in long double (entries are tiny in these tests).
int RationalRank(const IntMatrix& a) {
  std::vector<std::vector<long double>> m(a.rows(), std::vector<long double>(a.cols()));
  for (int r = 0; r < a.rows(); ++r) {
    for (int c = 0; c < a.cols(); ++c) m[r][c] = a.at(r, c);
  }
  int rank = 0;
  for (int c = 0; c < a.cols() && rank < a.rows(); ++c) {
    int p = -1;
    for (int r = rank; r < a.rows(); ++r) {
      if (std::abs(m[r][c]) > 1e-9L) p = r;
    }
    if (p < 0) continue;
    std::swap(m[p], m[rank]);
    for (int r = 0; r < a.rows(); ++r) {
      if (r == rank) continue;
      long double f = m[r][c] / m[rank][c];
      for (int k = 0; k < a.cols(); ++k) m[r][k] -= f * m[rank][k];
    }
    ++rank;
  }
  return rank;
}

// Checks every property the Smith normal form promises.
void ExpectValid(const IntMatrix& a, const SmithNormalForm& f) {
  ASSERT_EQ(f.U.rows(), a.rows());
  ASSERT_EQ(f.U.cols(), a.rows());
  ASSERT_EQ(f.V.rows(), a.cols());
  ASSERT_EQ(f.V.cols(), a.cols());
  auto ua = IntMatrix::multiply(f.U, a);
  ASSERT_TRUE(ua.has_value());
  auto uav = IntMatrix::multiply(*ua, f.V);
  ASSERT_TRUE(uav.has_value());
  EXPECT_EQ(*uav, f.S);
  auto du = f.U.determinant(), dv = f.V.determinant();
  ASSERT_TRUE(du.has_value());
  ASSERT_TRUE(dv.has_value());
  EXPECT_TRUE(*du == 1 || *du == -1) << *du;
  EXPECT_TRUE(*dv == 1 || *dv == -1) << *dv;
  EXPECT_EQ(f.rank, RationalRank(a));
  for (int r = 0; r < f.S.rows(); ++r) {
    for (int c = 0; c < f.S.cols(); ++c) {
      if (r != c || r >= f.rank) {
        EXPECT_EQ(f.S.at(r, c), 0) << r << "," << c;
      }
    }
  }
  for (int r = 0; r < f.rank; ++r) {
    EXPECT_GT(f.diag(r), 0);
    if (r + 1 < f.rank) {
      EXPECT_EQ(f.diag(r + 1) % f.diag(r), 0);
    }
  }
}

TEST(SmithNormalForm, KnownDiagonals) {
  // gcd of entries 2, determinant -8: diag(2, 4).
  IntMatrix a = Mat(2, 2, {2, 4, 6, 8});
  auto f = smith_normal_form(a);
  ASSERT_TRUE(f.has_value());
  ExpectValid(a, *f);
  EXPECT_EQ(f->rank, 2);
  EXPECT_EQ(f->diag(0), 2);
  EXPECT_EQ(f->diag(1), 4);

  // diag(2, 3) is not a Smith form: it becomes diag(1, 6).
  IntMatrix b = Mat(2, 2, {2, 0, 0, 3});
  f = smith_normal_form(b);
  ASSERT_TRUE(f.has_value());
  ExpectValid(b, *f);
  EXPECT_EQ(f->diag(0), 1);
  EXPECT_EQ(f->diag(1), 6);

  // x[2i] and x[i, i]
  IntMatrix c = Mat(1, 1, {-2});
  f = smith_normal_form(c);
  ASSERT_TRUE(f.has_value());
  ExpectValid(c, *f);
  EXPECT_EQ(f->diag(0), 2);
  IntMatrix d = Mat(2, 1, {1, 1});
  f = smith_normal_form(d);
  ASSERT_TRUE(f.has_value());
  ExpectValid(d, *f);
  EXPECT_EQ(f->rank, 1);
  EXPECT_EQ(f->diag(0), 1);
  // The cokernel row of U annihilates A: (u10 + u11) == 0.
  EXPECT_EQ(f->U.at(1, 0) + f->U.at(1, 1), 0);
  EXPECT_NE(f->U.at(1, 0), 0);

  // x[4i + j]: rank 1 with a kernel column (c0, c1) with 4 c0 + c1 == 0.
  IntMatrix e = Mat(1, 2, {4, 1});
  f = smith_normal_form(e);
  ASSERT_TRUE(f.has_value());
  ExpectValid(e, *f);
  EXPECT_EQ(f->rank, 1);
  EXPECT_EQ(4 * f->V.at(0, 1) + f->V.at(1, 1), 0);
}

TEST(SmithNormalForm, DegenerateShapes) {
  for (auto [r, c] : {std::pair{0, 0}, {0, 3}, {2, 0}, {2, 3}}) {
    IntMatrix z(r, c);
    auto f = smith_normal_form(z);
    ASSERT_TRUE(f.has_value());
    EXPECT_EQ(f->rank, 0);
    EXPECT_EQ(f->U, IntMatrix::identity(r));
    EXPECT_EQ(f->V, IntMatrix::identity(c));
    ExpectValid(z, *f);
  }
}

TEST(SmithNormalForm, RandomMatricesSatisfyTheDefinition) {
  std::mt19937 rng(20240611);
  std::uniform_int_distribution<int> dim(1, 5), entry(-6, 6), sparse(0, 3);
  for (int iter = 0; iter < 2000; ++iter) {
    int m = dim(rng), n = dim(rng);
    IntMatrix a(m, n);
    for (int r = 0; r < m; ++r) {
      for (int c = 0; c < n; ++c) a.at(r, c) = sparse(rng) == 0 ? 0 : entry(rng);
    }
    // Occasionally force dependent rows (x[i, i]-like index maps).
    if (m >= 2 && iter % 5 == 0) {
      for (int c = 0; c < n; ++c) a.at(m - 1, c) = 2 * a.at(0, c);
    }
    auto f = smith_normal_form(a);
    ASSERT_TRUE(f.has_value()) << "iteration " << iter;
    ExpectValid(a, *f);
    if (HasFailure()) FAIL() << "iteration " << iter;
  }
}

TEST(SmithNormalForm, OverflowIsReportedNotWrapped) {
  // Huge entries: either an overflow report, or a result that is still exactly right.
  IntMatrix a = Mat(2, 2, {INT64_MAX, INT64_MAX - 1, INT64_MAX - 2, 3});
  auto f = smith_normal_form(a);
  if (f) {
    auto ua = IntMatrix::multiply(f->U, a);
    ASSERT_TRUE(ua.has_value());
    auto uav = IntMatrix::multiply(*ua, f->V);
    ASSERT_TRUE(uav.has_value());
    EXPECT_EQ(*uav, f->S);
  }
  IntMatrix b = Mat(1, 1, {INT64_MIN});
  EXPECT_FALSE(smith_normal_form(b).has_value());  // |INT64_MIN| is not an int64
}

TEST(SmithNormalForm, DeterminantAndMultiply) {
  EXPECT_EQ(Mat(3, 3, {2, 0, 1, 1, 3, 2, 1, 1, 1}).determinant(), 2 * 1 + 1 * (1 - 3));
  EXPECT_EQ(Mat(2, 2, {0, 1, 1, 0}).determinant(), -1);
  EXPECT_EQ(Mat(2, 2, {1, 2, 2, 4}).determinant(), 0);
  EXPECT_EQ(IntMatrix(0, 0).determinant(), 1);
  auto p = IntMatrix::multiply(Mat(1, 2, {1, 2}), Mat(2, 1, {3, 4}));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->at(0, 0), 11);
  EXPECT_FALSE(IntMatrix::multiply(Mat(1, 1, {INT64_MAX}), Mat(1, 1, {2})).has_value());
  EXPECT_FALSE(IntMatrix::multiply(Mat(1, 2, {1, 2}), Mat(1, 2, {1, 2})).has_value());
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
