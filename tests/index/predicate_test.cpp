#include "index/predicate.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <map>

namespace cot {
namespace COTANGENT_TEST_UNIT {

// Variables: 0 = i, 1 = j, 2 = n; atoms: 10 = b, 11 = c.
std::string Name(int32_t v) {
  switch (v) {
    case 0:
      return "i";
    case 1:
      return "j";
    case 2:
      return "n";
    case 10:
      return "b";
    case 11:
      return "c";
  }
  return "v" + std::to_string(v);
}

Affine I() {
  return Affine::var(0);
}
Affine J() {
  return Affine::var(1);
}
Affine N() {
  return Affine::var(2);
}
Affine K(int64_t c) {
  return Affine::constant(c);
}
Affine Plus(const Affine& a, const Affine& b) {
  return Affine::add(a, b).value();
}
Affine Minus(const Affine& a, const Affine& b) {
  return Affine::sub(a, b).value();
}
Pred Cmp(const Affine& a, const char* op, const Affine& b) {
  return Pred::compare(a, op, b).value();
}

std::string Str(const Pred& p) {
  return p.to_string(Name);
}

std::optional<bool> Eval(const Pred& p, std::map<int32_t, int64_t> ints,
                         std::map<int32_t, bool> bools = {}) {
  return p.eval([&](int32_t v) { return ints.at(v); }, [&](int32_t v) { return bools.at(v); });
}

TEST(Pred, CompareNormalizesToGe0AndEq0) {
  // i < n  ->  n - i - 1 >= 0
  EXPECT_EQ(Cmp(I(), "<", N()), Pred::ge0(Minus(Minus(N(), I()), K(1))));
  EXPECT_EQ(Cmp(I(), "<=", N()), Pred::ge0(Minus(N(), I())));
  EXPECT_EQ(Cmp(I(), ">", N()), Pred::ge0(Minus(Minus(I(), N()), K(1))));
  EXPECT_EQ(Cmp(I(), ">=", N()), Pred::ge0(Minus(I(), N())));
  EXPECT_EQ(Cmp(I(), "==", J()), Pred::eq0(Minus(I(), J())));
  Pred ne = Cmp(I(), "!=", J());
  ASSERT_EQ(ne.kind, Pred::Kind::Or);
  EXPECT_EQ(ne, Pred::disj({Pred::ge0(Minus(Minus(I(), J()), K(1))),
                            Pred::ge0(Minus(Minus(J(), I()), K(1)))}));
  EXPECT_FALSE(Pred::compare(I(), "<>", J()).has_value());
  EXPECT_FALSE(Pred::compare(K(INT64_MIN), "<", K(0)).has_value());
  EXPECT_FALSE(Pred::compare(K(INT64_MAX), "!=", K(-1)).has_value());
}

TEST(Pred, ConstantsFold) {
  EXPECT_EQ(Pred::ge0(K(0)).kind, Pred::Kind::True);
  EXPECT_EQ(Pred::ge0(K(-1)).kind, Pred::Kind::False);
  EXPECT_EQ(Pred::eq0(K(0)).kind, Pred::Kind::True);
  EXPECT_EQ(Pred::eq0(K(3)).kind, Pred::Kind::False);
  EXPECT_EQ(Cmp(K(2), "<", K(3)).kind, Pred::Kind::True);
  EXPECT_EQ(Cmp(K(2), "!=", K(2)).kind, Pred::Kind::False);
  EXPECT_EQ(Cmp(K(2), "!=", K(3)).kind, Pred::Kind::True);
  // i - i is constant.
  EXPECT_EQ(Cmp(I(), "<", I()).kind, Pred::Kind::False);
}

TEST(Pred, ConjDisjFlattenAndFold) {
  Pred a = Cmp(I(), "<", N()), b = Cmp(J(), "<", N()), c = Pred::atom_of(10);
  Pred x = Pred::conj({a, Pred::truth(), Pred::conj({b, c})});
  ASSERT_EQ(x.kind, Pred::Kind::And);
  EXPECT_EQ(x.kids, (std::vector<Pred>{a, b, c}));
  EXPECT_EQ(Pred::conj({a, Pred::falsity(), b}).kind, Pred::Kind::False);
  EXPECT_EQ(Pred::conj({}).kind, Pred::Kind::True);
  EXPECT_EQ(Pred::conj({a}), a);
  EXPECT_EQ(Pred::conj({Pred::truth(), a}), a);
  Pred y = Pred::disj({Pred::disj({a, b}), Pred::falsity(), c});
  ASSERT_EQ(y.kind, Pred::Kind::Or);
  EXPECT_EQ(y.kids, (std::vector<Pred>{a, b, c}));
  EXPECT_EQ(Pred::disj({a, Pred::truth()}).kind, Pred::Kind::True);
  EXPECT_EQ(Pred::disj({}).kind, Pred::Kind::False);
  // An Or inside an And stays nested.
  Pred z = Pred::conj({y, a});
  ASSERT_EQ(z.kind, Pred::Kind::And);
  EXPECT_EQ(z.kids[0], y);
}

TEST(Pred, Negate) {
  // not(i < n): not(n - i - 1 >= 0) -> i - n >= 0, i.e. i >= n.
  EXPECT_EQ(Cmp(I(), "<", N()).negate().value(), Cmp(I(), ">=", N()));
  EXPECT_EQ(Cmp(I(), "==", J()).negate().value(), Cmp(I(), "!=", J()));
  EXPECT_EQ(Pred::atom_of(10).negate().value(), Pred::atom_of(10, true));
  EXPECT_EQ(Pred::atom_of(10, true).negate().value(), Pred::atom_of(10));
  EXPECT_EQ(Pred::truth().negate()->kind, Pred::Kind::False);
  EXPECT_EQ(Pred::falsity().negate()->kind, Pred::Kind::True);
  Pred a = Cmp(I(), "<", N()), b = Pred::atom_of(11);
  EXPECT_EQ(Pred::conj({a, b}).negate().value(), Pred::disj({*a.negate(), *b.negate()}));
  EXPECT_EQ(Pred::disj({a, b}).negate().value(), Pred::conj({*a.negate(), *b.negate()}));
  EXPECT_FALSE(Pred::ge0(Affine::var(0, INT64_MIN)).negate().has_value());
}

TEST(Pred, NegationIsComplementOnAGrid) {
  std::vector<Pred> ps = {
      Cmp(I(), "<", N()), Cmp(I(), "==", Plus(J(), K(1))), Cmp(I(), "!=", J()),
      Pred::conj({Cmp(I(), ">=", K(1)), Cmp(J(), "<=", N()), Pred::atom_of(10)}),
      Pred::disj({Cmp(Plus(I(), J()), ">", N()), Pred::atom_of(10, true)})};
  for (const Pred& p : ps) {
    Pred q = p.negate().value();
    for (int i = -2; i <= 3; ++i) {
      for (int j = -2; j <= 3; ++j) {
        for (bool b : {false, true}) {
          auto v = Eval(p, {{0, i}, {1, j}, {2, 2}}, {{10, b}});
          auto w = Eval(q, {{0, i}, {1, j}, {2, 2}}, {{10, b}});
          ASSERT_TRUE(v && w);
          EXPECT_NE(*v, *w) << Str(p) << " at i=" << i << " j=" << j;
        }
      }
    }
  }
}

TEST(Pred, Eval) {
  Pred p = Pred::conj({Cmp(I(), "<", N()), Pred::atom_of(10)});
  EXPECT_EQ(Eval(p, {{0, 1}, {2, 3}}, {{10, true}}), true);
  EXPECT_EQ(Eval(p, {{0, 3}, {2, 3}}, {{10, true}}), false);
  EXPECT_EQ(Eval(p, {{0, 1}, {2, 3}}, {{10, false}}), false);
  EXPECT_EQ(Eval(Pred::atom_of(10, true), {}, {{10, false}}), true);
  Pred ovf = Pred::ge0(Affine::var(0, 2));
  EXPECT_FALSE(Eval(ovf, {{0, INT64_MAX}}).has_value());
}

TEST(Pred, CollectVarsAndRename) {
  Pred p = Pred::conj({Cmp(I(), "<", N()), Pred::disj({Cmp(J(), "==", I()), Pred::atom_of(10)})});
  std::vector<int32_t> vs;
  p.collect_vars(vs);
  std::sort(vs.begin(), vs.end());
  EXPECT_EQ(vs, (std::vector<int32_t>{0, 1, 2, 10}));
  Pred r = p.rename([](int32_t v) { return v == 0 ? 7 : v == 10 ? 11 : v; });
  std::vector<int32_t> rs;
  r.collect_vars(rs);
  std::sort(rs.begin(), rs.end());
  EXPECT_EQ(rs, (std::vector<int32_t>{1, 2, 7, 11}));
  EXPECT_EQ(r.kids[0], Cmp(Affine::var(7), "<", N()));
}

TEST(Pred, ToStringReadsAsSource) {
  EXPECT_EQ(Str(Cmp(I(), "<", N())), "i < n");
  EXPECT_EQ(Str(Cmp(Plus(I(), K(1)), "<", N())), "i + 1 < n");
  EXPECT_EQ(Str(Cmp(I(), "<=", N())), "i <= n");
  EXPECT_EQ(Str(Cmp(J(), "<=", Plus(I(), K(1)))), "j <= i + 1");
  EXPECT_EQ(Str(Cmp(I(), ">=", K(1))), "i >= 1");
  EXPECT_EQ(Str(Cmp(I(), ">", K(0))), "i >= 1");
  EXPECT_EQ(Str(Cmp(I(), ">=", K(-2))), "i >= -2");
  EXPECT_EQ(Str(Cmp(I(), "<=", K(5))), "i <= 5");
  EXPECT_EQ(Str(Cmp(I(), "<", K(0))), "i <= -1");
  EXPECT_EQ(Str(Cmp(I(), "==", J())), "i == j");
  EXPECT_EQ(Str(Cmp(J(), "==", Plus(Affine::var(0, 2), K(1)))), "j == 2 * i + 1");
  EXPECT_EQ(Str(Cmp(I(), "==", K(3))), "i == 3");
  EXPECT_EQ(Str(Cmp(Plus(I(), K(2)), "==", J())), "i + 2 == j");
  EXPECT_EQ(Str(Cmp(I(), "!=", J())), "j < i || i < j");
  EXPECT_EQ(Str(Pred::atom_of(10)), "b");
  EXPECT_EQ(Str(Pred::atom_of(10, true)), "!b");
  EXPECT_EQ(Str(Pred::truth()), "true");
  EXPECT_EQ(Str(Pred::falsity()), "false");
  EXPECT_EQ(
      Str(Pred::conj({Cmp(I(), "<", N()), Pred::disj({Pred::atom_of(10), Pred::atom_of(11)})})),
      "i < n && (b || c)");
  EXPECT_EQ(
      Str(Pred::disj({Pred::conj({Pred::atom_of(10), Pred::atom_of(11)}), Cmp(I(), "==", J())})),
      "b && c || i == j");
  // Constraints built by hand print literally.
  Pred raw;
  raw.kind = Pred::Kind::Ge0;
  raw.expr = K(-1);
  EXPECT_EQ(Str(raw), "-1 >= 0");
}

// A constraint whose constant or a coefficient is INT64_MIN prints as `e >= 0` with the term
// split in two (`- 9223372036854775807 - 1`): `-9223372036854775808` is not a literal.
TEST(Pred, ToStringOfInt64MinIsSource) {
  EXPECT_EQ(Str(Pred::ge0(Plus(I(), K(INT64_MIN)))), "i - 9223372036854775807 - 1 >= 0");
  EXPECT_EQ(Str(Pred::eq0(Plus(I(), K(INT64_MIN)))), "i - 9223372036854775807 - 1 == 0");
  EXPECT_EQ(Str(Pred::ge0(Affine::var(0, INT64_MIN))), "-9223372036854775807 * i - i >= 0");
  EXPECT_EQ(Str(Pred::ge0(Plus(N(), Affine::var(0, INT64_MIN)))),
            "-9223372036854775807 * i - i + n >= 0");
  EXPECT_EQ(Str(Cmp(I(), "<=", K(INT64_MIN))), "-i - 9223372036854775807 - 1 >= 0");
  // Constants one step away from INT64_MIN still print as comparisons.
  EXPECT_EQ(Str(Cmp(I(), ">=", K(INT64_MIN + 1))), "i >= -9223372036854775807");
  EXPECT_EQ(Str(Cmp(I(), "<=", K(INT64_MIN + 1))), "i <= -9223372036854775807");
  EXPECT_EQ(Str(Cmp(I(), "<=", K(INT64_MAX))), "i <= 9223372036854775807");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
