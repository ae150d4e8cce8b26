#include "index/affine.h"

#include <gtest/gtest.h>

#include <climits>

namespace cot {
namespace COTANGENT_TEST_UNIT {

std::string Name(int32_t v) {
  static const char* names[] = {"i", "j", "k", "n"};
  return v >= 0 && v < 4 ? names[v] : "v" + std::to_string(v);
}

Affine Add(const Affine& a, const Affine& b) {
  return Affine::add(a, b).value();
}
Affine Sub(const Affine& a, const Affine& b) {
  return Affine::sub(a, b).value();
}

TEST(Affine, TermsSortedWithoutZeros) {
  Affine e = Add(Add(Affine::var(3, 2), Affine::var(0, -1)), Affine::var(1, 4));
  using T = std::vector<std::pair<int32_t, int64_t>>;
  EXPECT_EQ(e.terms(), (T{{0, -1}, {1, 4}, {3, 2}}));
  Affine z = Sub(e, Affine::var(1, 4));
  EXPECT_EQ(z.terms(), (T{{0, -1}, {3, 2}}));
  EXPECT_EQ(z.coeff(1), 0);
  EXPECT_EQ(z.coeff(3), 2);
  EXPECT_FALSE(z.mentions(1));
  EXPECT_TRUE(z.mentions(0));
  EXPECT_TRUE(Affine::var(2, 0).is_constant());
  EXPECT_EQ(Sub(e, e), Affine());
}

TEST(Affine, Arithmetic) {
  Affine i = Affine::var(0), j = Affine::var(1);
  Affine e = Add(Add(Affine::scale(i, 2).value(), j), Affine::constant(-1));
  EXPECT_EQ(e.constant_term(), -1);
  EXPECT_EQ(e.coeff(0), 2);
  EXPECT_EQ(Affine::scale(e, -3).value(),
            Add(Add(Affine::var(0, -6), Affine::var(1, -3)), Affine::constant(3)));
  EXPECT_EQ(Affine::scale(e, 0).value(), Affine());
  EXPECT_EQ(e.eval([](int32_t v) { return v == 0 ? 5 : 7; }), 2 * 5 + 7 - 1);
}

TEST(Affine, OverflowIsReported) {
  Affine big = Affine::constant(INT64_MAX);
  EXPECT_FALSE(Affine::add(big, Affine::constant(1)).has_value());
  EXPECT_FALSE(Affine::sub(Affine::constant(INT64_MIN), Affine::constant(1)).has_value());
  EXPECT_FALSE(Affine::add(Affine::var(0, INT64_MAX), Affine::var(0, 1)).has_value());
  EXPECT_FALSE(Affine::sub(Affine::var(0, INT64_MIN), Affine::var(0, 1)).has_value());
  EXPECT_FALSE(Affine::sub(Affine(), Affine::var(0, INT64_MIN)).has_value());
  EXPECT_FALSE(Affine::scale(Affine::var(0, INT64_MAX / 2 + 1), 2).has_value());
  EXPECT_FALSE(Affine::scale(Affine::constant(INT64_MIN), -1).has_value());
  // Subtraction that fits is exact even when negating the subtrahend would not.
  EXPECT_EQ(Affine::sub(Affine::var(0, -1), Affine::var(0, INT64_MIN)).value(),
            Affine::var(0, INT64_MAX));
  Affine e = Affine::var(0, INT64_MAX);
  EXPECT_FALSE(e.eval([](int32_t) { return 2; }).has_value());
  Affine s = Add(Affine::var(0), Affine::constant(INT64_MAX));
  EXPECT_FALSE(s.eval([](int32_t) { return 1; }).has_value());
  EXPECT_EQ(s.eval([](int32_t) { return -1; }), INT64_MAX - 1);
}

TEST(Affine, Substitute) {
  // 2i + j - 1 with i := k + 3  ->  2k + j + 5
  Affine e = Add(Add(Affine::var(0, 2), Affine::var(1)), Affine::constant(-1));
  Affine by = Add(Affine::var(2), Affine::constant(3));
  EXPECT_EQ(e.substitute(0, by).value(),
            Add(Add(Affine::var(2, 2), Affine::var(1)), Affine::constant(5)));
  // i := i + 1 keeps i; j := -j cancels nothing
  EXPECT_EQ(e.substitute(3, by).value(), e);
  Affine self = Add(Affine::var(0), Affine::constant(1));
  EXPECT_EQ(e.substitute(0, self).value(),
            Add(Add(Affine::var(0, 2), Affine::var(1)), Affine::constant(1)));
  // i := j - ... cancellation drops the term
  Affine cancel = Affine::var(1, 1);
  EXPECT_EQ(Affine::var(0).substitute(0, Sub(Affine(), cancel)).value(), Affine::var(1, -1));
  EXPECT_FALSE(Affine::var(0, INT64_MAX).substitute(0, Affine::var(1, 2)).has_value());
}

TEST(Affine, Rename) {
  Affine e = Add(Add(Affine::var(0, 2), Affine::var(1)), Affine::constant(4));
  Affine r = e.rename([](int32_t v) { return v == 0 ? 5 : v; });
  EXPECT_EQ(r, Add(Add(Affine::var(5, 2), Affine::var(1)), Affine::constant(4)));
  EXPECT_EQ(r.terms().front().first, 1);  // re-sorted
  // Merging two variables adds their coefficients and drops a zero.
  Affine m = Sub(Affine::var(0), Affine::var(1)).rename([](int32_t) { return 2; });
  EXPECT_EQ(m, Affine());
}

TEST(Affine, ToString) {
  EXPECT_EQ(Add(Add(Affine::var(0, 2), Affine::var(1)), Affine::constant(-1)).to_string(Name),
            "2 * i + j - 1");
  EXPECT_EQ(Affine().to_string(Name), "0");
  EXPECT_EQ(Affine::constant(-3).to_string(Name), "-3");
  EXPECT_EQ(Affine::var(0, -1).to_string(Name), "-i");
  EXPECT_EQ(Add(Affine::var(0, -2), Affine::var(3, -1)).to_string(Name), "-2 * i - n");
  EXPECT_EQ(Add(Affine::var(3), Affine::constant(7)).to_string(Name), "n + 7");
}

// Printed affines appear in printed source (indices), and |INT64_MIN| is not an integer
// literal: a term INT64_MIN * v is written as two, `- 9223372036854775807 * v - v`.
TEST(Affine, ToStringOfInt64MinIsSource) {
  EXPECT_EQ(Affine::constant(INT64_MIN).to_string(Name), "-9223372036854775807 - 1");
  EXPECT_EQ(Affine::constant(INT64_MAX).to_string(Name), "9223372036854775807");
  EXPECT_EQ(Add(Affine::var(0), Affine::constant(INT64_MIN)).to_string(Name),
            "i - 9223372036854775807 - 1");
  EXPECT_EQ(Affine::var(0, INT64_MIN).to_string(Name), "-9223372036854775807 * i - i");
  EXPECT_EQ(Add(Affine::var(0), Affine::var(1, INT64_MIN)).to_string(Name),
            "i - 9223372036854775807 * j - j");
  EXPECT_EQ(Add(Affine::var(0, INT64_MIN), Affine::constant(INT64_MIN)).to_string(Name),
            "-9223372036854775807 * i - i - 9223372036854775807 - 1");
  EXPECT_EQ(Affine::var(0, -INT64_MAX).to_string(Name), "-9223372036854775807 * i");
  // The spellings mean the same values: rebuild them from literals that do lex.
  const Affine max_i = Affine::var(0, INT64_MAX);
  EXPECT_EQ(Sub(Sub(Affine(), max_i), Affine::var(0)), Affine::var(0, INT64_MIN));
  EXPECT_EQ(Sub(Sub(Affine(), Affine::constant(INT64_MAX)), Affine::constant(1)),
            Affine::constant(INT64_MIN));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
