#include "ir/size_expr.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace cot {
namespace COTANGENT_TEST_UNIT {

SizeExpr V(const char* name) {
  return SizeExpr::var(name);
}
SizeExpr C(int64_t c) {
  return SizeExpr::constant(c);
}
SizeExpr Div(const SizeExpr& a, const SizeExpr& b) {
  auto q = SizeExpr::divide(a, b);
  EXPECT_TRUE(q.has_value());
  return q.value_or(SizeExpr());
}

// Evaluates with the given bindings; returns nullopt and the reason on failure.
std::optional<int64_t> Eval(const SizeExpr& e, std::map<std::string, int64_t> env,
                            std::string* why = nullptr) {
  return e.eval(
      [&](const std::string& v) -> std::optional<int64_t> {
        auto it = env.find(v);
        if (it == env.end()) return std::nullopt;
        return it->second;
      },
      why);
}

TEST(SizeExpr, NormalFormMakesEqualSizesEqual) {
  SizeExpr n = V("n"), k = V("k"), m = V("m");
  EXPECT_EQ(n - k + C(1), C(1) + n - k);
  EXPECT_EQ(C(2) * (n + C(1)), C(2) * n + C(2));
  EXPECT_EQ(n * m, m * n);
  EXPECT_EQ((n + m) * (n - m), n * n - m * m);
  EXPECT_EQ(n - n, SizeExpr());
  EXPECT_EQ(-(-n), n);
  EXPECT_NE(n + C(1), n);
  EXPECT_EQ(SizeExpr(), C(0));
}

TEST(SizeExpr, ToStringIsCanonicalSource) {
  SizeExpr n = V("n"), k = V("k"), m = V("m");
  EXPECT_EQ((n - k + C(1)).to_string(), "n - k + 1");
  EXPECT_EQ((C(1) + n - k).to_string(), "n - k + 1");
  EXPECT_EQ((C(2) * n).to_string(), "2 * n");
  // Factors are printed in sorted order, whatever order they were written in.
  EXPECT_EQ((n * m + C(3)).to_string(), "m * n + 3");
  EXPECT_EQ((-n).to_string(), "-n");
  EXPECT_EQ((C(0) - C(3) * n).to_string(), "-3 * n");
  EXPECT_EQ(SizeExpr().to_string(), "0");
  EXPECT_EQ(C(-4).to_string(), "-4");
  EXPECT_EQ((n * n).to_string(), "n * n");
  EXPECT_EQ((k + n).to_string(), "k + n");
  EXPECT_EQ((n - C(1)).to_string(), "n - 1");
  // A leading minus only when every term is negative: a positive constant goes first when no
  // monomial is positive (`-n + 5` is not a size the grammar used to accept).
  EXPECT_EQ((C(5) - n).to_string(), "5 - n");
  EXPECT_EQ((C(5) - n - k).to_string(), "5 - k - n");
  EXPECT_EQ((C(3) - C(2) * n).to_string(), "3 - 2 * n");
  EXPECT_EQ((C(0) - n - C(5)).to_string(), "-n - 5");
  EXPECT_EQ((C(0) - C(2) * n - k).to_string(), "-k - 2 * n");
  EXPECT_EQ((m - C(2) * n + C(3)).to_string(), "m - 2 * n + 3");
  EXPECT_EQ((C(1) - n * m).to_string(), "1 - m * n");
}

// |INT64_MIN| is not an integer literal; such a term is split in two, which reads back as the
// same value (`-9223372036854775807 - 1`).
TEST(SizeExpr, ToStringOfInt64MinIsSource) {
  SizeExpr n = V("n"), k = V("k");
  EXPECT_EQ(C(INT64_MIN).to_string(), "-9223372036854775807 - 1");
  EXPECT_EQ(C(INT64_MAX).to_string(), "9223372036854775807");
  EXPECT_EQ((n + C(INT64_MIN)).to_string(), "n - 9223372036854775807 - 1");
  EXPECT_EQ((C(INT64_MIN) * n).to_string(), "-9223372036854775807 * n - n");
  EXPECT_EQ((k + C(INT64_MIN) * n).to_string(), "k - 9223372036854775807 * n - n");
  EXPECT_EQ((C(INT64_MIN) * n + C(1)).to_string(), "1 - 9223372036854775807 * n - n");
  EXPECT_EQ((C(INT64_MAX) - n).to_string(), "9223372036854775807 - n");
  // The spellings mean the same sizes: rebuild them with the operations the checker uses.
  EXPECT_EQ(-C(INT64_MAX) - C(1), C(INT64_MIN));
  EXPECT_EQ(-C(INT64_MAX) * n - n, C(INT64_MIN) * n);
  EXPECT_EQ(k - C(INT64_MAX) * n - n, k + C(INT64_MIN) * n);
}

TEST(SizeExpr, Accessors) {
  EXPECT_EQ(C(7).as_constant(), 7);
  EXPECT_EQ(SizeExpr().as_constant(), 0);
  EXPECT_TRUE(C(7).is_constant());
  EXPECT_FALSE(V("n").is_constant());
  EXPECT_EQ(V("n").as_constant(), std::nullopt);
  EXPECT_EQ(V("n").as_var(), "n");
  EXPECT_EQ((C(2) * V("n")).as_var(), std::nullopt);
  EXPECT_EQ((V("n") + C(1)).as_var(), std::nullopt);
  EXPECT_EQ(C(3).as_var(), std::nullopt);
}

TEST(SizeExpr, DivideByConstantDividingEveryCoefficient) {
  SizeExpr n = V("n");
  EXPECT_EQ(Div(C(2) * n + C(4), C(2)), n + C(2));
  EXPECT_EQ(Div(C(12), C(4)), C(3));
  EXPECT_EQ(Div(C(6) * n, C(-3)), C(-2) * n);
  EXPECT_EQ(Div(SizeExpr(), V("k")), SizeExpr());
}

TEST(SizeExpr, DivideByAFactorOfTheNumerator) {
  SizeExpr n = V("n"), m = V("m"), k = V("k");
  EXPECT_EQ(Div(n * m, m), n);
  EXPECT_EQ(Div(n + k, n + k), C(1));
  EXPECT_EQ(Div(C(3) * n * m + C(6) * m, C(3) * m), n + C(2));
  // Polynomial divisors too: (n^2 - 1) / (n - 1) = n + 1.
  EXPECT_EQ(Div(n * n - C(1), n - C(1)), n + C(1));
  EXPECT_EQ(Div(n * n + C(2) * n * k + k * k, n + k), n + k);
}

TEST(SizeExpr, DivideByZeroIsRejected) {
  EXPECT_FALSE(SizeExpr::divide(V("n"), C(0)).has_value());
  EXPECT_FALSE(SizeExpr::divide(V("n"), V("k") - V("k")).has_value());
}

TEST(SizeExpr, OpaqueQuotientIsCheckedAtEvaluation) {
  SizeExpr n = V("n");
  SizeExpr q = Div(n + C(1), C(2));
  EXPECT_EQ(q.to_string(), "(n + 1) / 2");
  EXPECT_FALSE(q.is_constant());
  EXPECT_EQ(Eval(q, {{"n", 7}}), 4);
  std::string why;
  EXPECT_EQ(Eval(q, {{"n", 4}}, &why), std::nullopt);
  EXPECT_EQ(why, "size expression (n + 1) / 2 does not divide exactly: n + 1 = 5");
}

TEST(SizeExpr, OpaqueQuotientNormalForm) {
  SizeExpr n = V("n"), k = V("k"), m = V("m");
  // Common content and signs are normalized away, so equal quotients compare equal.
  EXPECT_EQ(Div(C(4) * n + C(6), C(4)), Div(C(2) * n + C(3), C(2)));
  EXPECT_EQ(Div(C(4) * n + C(6), C(4)).to_string(), "(2 * n + 3) / 2");
  EXPECT_EQ(Div(C(0) - n - C(1), C(2)), -Div(n + C(1), C(2)));
  EXPECT_EQ(Div(n + C(1), C(-2)), -Div(n + C(1), C(2)));
  EXPECT_EQ(Div(C(0) - n - C(1), C(2)).to_string(), "-(n + 1) / 2");
  EXPECT_EQ((C(3) - Div(n + C(1), C(2))).to_string(), "3 - (n + 1) / 2");
  EXPECT_EQ(Div(n, k).to_string(), "n / k");
  EXPECT_EQ(Div(C(6), n).to_string(), "6 / n");
  EXPECT_EQ(Div(n, k * m).to_string(), "n / (k * m)");
  // A quotient among other factors is parenthesized so that it reads back the same.
  SizeExpr q = Div(n + C(1), C(2));
  EXPECT_EQ((C(2) * q).to_string(), "2 * ((n + 1) / 2)");
  EXPECT_EQ((m * q).to_string(), "m * ((n + 1) / 2)");
  EXPECT_EQ((n - q).to_string(), "n - (n + 1) / 2");
  EXPECT_EQ(q + q, C(2) * q);
  // Dividing a quotient again nests it.
  EXPECT_EQ(Div(q, C(3)).to_string(), "((n + 1) / 2) / 3");
  EXPECT_EQ(Eval(Div(q, C(3)), {{"n", 11}}), 2);
}

TEST(SizeExpr, QuotientEvaluationErrors) {
  SizeExpr q = Div(V("n"), V("k"));
  std::string why;
  EXPECT_EQ(Eval(q, {{"n", 6}, {"k", 3}}), 2);
  EXPECT_EQ(Eval(q, {{"n", 6}, {"k", 4}}, &why), std::nullopt);
  EXPECT_EQ(why, "size expression n / k does not divide exactly: n = 6, k = 4");
  EXPECT_EQ(Eval(q, {{"n", 6}, {"k", 0}}, &why), std::nullopt);
  EXPECT_EQ(why, "size expression n / k divides by zero: n = 6, k = 0");
  EXPECT_EQ(Eval(q, {{"n", -6}, {"k", 3}}), -2);
}

TEST(SizeExpr, VarsIncludeQuotients) {
  SizeExpr e = Div(V("n") + C(1), V("k")) + V("m");
  EXPECT_EQ(e.vars(), (std::vector<std::string>{"k", "m", "n"}));
  EXPECT_EQ(C(3).vars(), std::vector<std::string>{});
  // A quotient that cancels out is forgotten.
  SizeExpr q = Div(V("n") + C(1), V("k"));
  EXPECT_EQ((q + V("m") - q).vars(), std::vector<std::string>{"m"});
}

TEST(SizeExpr, Evaluation) {
  SizeExpr n = V("n"), k = V("k");
  EXPECT_EQ(Eval(n - k + C(1), {{"n", 10}, {"k", 3}}), 8);
  EXPECT_EQ(Eval(C(2) * n * n, {{"n", 5}}), 50);
  std::string why;
  EXPECT_EQ(Eval(n + k, {{"n", 1}}, &why), std::nullopt);
  EXPECT_EQ(why, "size variable `k` has no value");
  EXPECT_EQ(Eval(n * n, {{"n", int64_t{1} << 32}}, &why), std::nullopt);
  EXPECT_EQ(why, "integer overflow evaluating size expression n * n");
  EXPECT_EQ(Eval(n + C(1), {{"n", INT64_MAX}}, &why), std::nullopt);
  EXPECT_NE(why.find("overflow"), std::string::npos);
}

TEST(SizeExpr, CoefficientOverflowPoisons) {
  SizeExpr big = C(INT64_MAX);
  EXPECT_FALSE(big.poisoned());
  SizeExpr over = big + C(1);
  EXPECT_TRUE(over.poisoned());
  EXPECT_EQ(over.as_constant(), std::nullopt);
  std::string why;
  EXPECT_EQ(Eval(over, {}, &why), std::nullopt);
  EXPECT_NE(why.find("overflow"), std::string::npos);
  EXPECT_TRUE((V("n") * big * C(2)).poisoned());
  EXPECT_TRUE((-C(INT64_MIN)).poisoned());
  EXPECT_TRUE((C(0) - C(INT64_MIN)).poisoned());
  EXPECT_FALSE((C(-1) - C(INT64_MIN)).poisoned());
  EXPECT_EQ((C(-1) - C(INT64_MIN)).as_constant(), INT64_MAX);
  // Poison spreads through later arithmetic and is part of equality.
  EXPECT_TRUE((over * V("n") + V("k")).poisoned());
  EXPECT_NE(over, big);
  auto q = SizeExpr::divide(over, C(2));
  ASSERT_TRUE(q.has_value());
  EXPECT_TRUE(q->poisoned());
}

// Random small polynomials: arithmetic agrees with evaluation, and dividing a product by one
// factor always recovers the other (exact division decides divisibility by a polynomial).
TEST(SizeExpr, RandomPolynomialsDivideExactly) {
  std::mt19937 rng(12345);
  const char* names[] = {"k", "m", "n"};
  auto random_poly = [&](int terms) {
    SizeExpr p;
    for (int t = 0; t < terms; ++t) {
      SizeExpr mono = C(static_cast<int64_t>(rng() % 7) - 3);
      for (int d = static_cast<int>(rng() % 3); d > 0; --d) mono = mono * V(names[rng() % 3]);
      p = p + mono;
    }
    return p;
  };
  std::map<std::string, int64_t> env = {{"k", 3}, {"m", -2}, {"n", 5}};
  for (int trial = 0; trial < 300; ++trial) {
    SizeExpr a = random_poly(1 + static_cast<int>(rng() % 4));
    SizeExpr b = random_poly(1 + static_cast<int>(rng() % 3));
    if (b == SizeExpr()) continue;
    auto va = Eval(a, env), vb = Eval(b, env);
    ASSERT_TRUE(va && vb);
    EXPECT_EQ(Eval(a + b, env), *va + *vb);
    EXPECT_EQ(Eval(a - b, env), *va - *vb);
    EXPECT_EQ(Eval(a * b, env), *va * *vb);
    EXPECT_EQ(Div(a * b, b), a) << "(" << (a * b).to_string() << ") / (" << b.to_string() << ")";
    EXPECT_EQ(a * b, b * a);
    EXPECT_EQ((a + b) - b, a);
  }
}

TEST(SizeExpr, OrderingIsStrictWeak) {
  SizeExpr a = V("n"), b = V("n") + C(1);
  EXPECT_TRUE(a < b || b < a);
  EXPECT_FALSE(a < a);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
