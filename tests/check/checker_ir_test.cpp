// The Core IR the checker produces for the constructs later passes rely on, through
// cotangent::Module::print (which prints Core IR as source in the language): affine indices
// stay affine, Iverson brackets become guards (one guard per product, merged when nested,
// computed conditions evaluated under the affine part), `&&` short-circuits. Each golden is
// backed by an evaluation that shows the lowering means what the source says, and the printed
// text is checked to parse, check and compute the same values again.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "check/check_test_util.h"
#include "cotangent/cotangent.h"

namespace COTANGENT_TEST_UNIT {

using cot::check_test::Eval;
using cot::check_test::kTol;
using cot::check_test::rho;
using cot::check_test::vec;

using cotangent::DType;
using cotangent::Module;
using cotangent::Value;

// The Core IR as the checker builds it (--opt=0: these tests are about the checker).
std::string Print(const std::string& src, const std::string& fn) {
  cotangent::LoadOptions unoptimized;
  unoptimized.opt_level = 0;
  auto m = Module::from_string(src, "test.cot", unoptimized);
  if (!m.ok()) {
    ADD_FAILURE() << "unexpected errors:\n" << m.message();
    return "";
  }
  auto p = m.value().print(fn);
  if (!p.ok()) {
    ADD_FAILURE() << "print failed:\n" << p.message();
    return "";
  }
  return p.value();
}

std::vector<double> elems(const Value& v) {
  auto d = v.f64_data();
  return std::vector<double>(d.begin(), d.end());
}
void ExpectNear(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_LE(rho(got[k], want[k]), kTol) << "element " << k << ": " << got[k] << " vs " << want[k];
  }
}

TEST(CheckerIr, AffineIndexStaysAffine) {
  // No separate integer statement computes i + 1: the read carries the affine form.
  const std::string src = "def shift(x: f64[n]) -> f64[n - 1] { for i: n - 1. x[i + 1] }";
  EXPECT_EQ(Print(src, "shift"),
            "def shift(x: f64[n]) -> f64[n - 1] {\n"
            "  let t4 = for i: n - 1. {\n"
            "    let t3 = x[i + 1]\n"
            "    t3\n"
            "  }\n"
            "  t4\n"
            "}\n");
  ExpectNear(elems(Eval(src, "shift", {vec({1, 2, 3})})), {2, 3});
}

TEST(CheckerIr, AffineIndexWithSizeVariablesIsNormalized) {
  // n - 1 - i and 2 * i - i are affine too: no integer arithmetic is emitted.
  const std::string src = "def f(x: f64[n]) -> f64 { sum i: n. x[n - 1 - i] * x[2 * i - i] }";
  EXPECT_EQ(Print(src, "f"),
            "def f(x: f64[n]) -> f64 {\n"
            "  let t6 = sum i: n. {\n"
            "    let t3 = x[n - i - 1]\n"
            "    let t4 = x[i]\n"
            "    let t5 = t3 * t4\n"
            "    t5\n"
            "  }\n"
            "  t6\n"
            "}\n");
  EXPECT_EQ(Eval(src, "f", {vec({1, 2, 3})}).as_f64(), 3.0 + 4.0 + 3.0);
}

TEST(CheckerIr, ComputedIndexIsAnAtom) {
  const std::string src = "def gather(x: f64[n], idx: i64[m]) -> f64[m] { for o. x[idx[o]] }";
  EXPECT_EQ(Print(src, "gather"),
            "def gather(x: f64[n], idx: i64[m]) -> f64[m] {\n"
            "  let t7 = for o: m. {\n"
            "    let t5 = idx[o]\n"
            "    let t6 = x[t5]\n"
            "    t6\n"
            "  }\n"
            "  t7\n"
            "}\n");
}

TEST(CheckerIr, ComputedConditionIsEvaluatedUnderTheAffineGuard) {
  // [i < n && x[i] > 0.0]: the affine conjunct guards the read in the computed one, so the
  // extra position i = n reads nothing.
  const std::string src =
      "def pos_exp(x: f64[n]) -> f64[n + 1] { for i: n + 1. [i < n && x[i] > 0.0] * exp(x[i]) }";
  EXPECT_EQ(Print(src, "pos_exp"),
            "def pos_exp(x: f64[n]) -> f64[n + 1] {\n"
            "  let t9 = for i: n + 1. {\n"
            "    let t8 = [i < n] * {\n"
            "      let t3 = x[i]\n"
            "      let t4 = t3 > 0.0\n"
            "      let t7 = [t4] * {\n"
            "        let t5 = x[i]\n"
            "        let t6 = exp(t5)\n"
            "        t6\n"
            "      }\n"
            "      t7\n"
            "    }\n"
            "    t8\n"
            "  }\n"
            "  t9\n"
            "}\n");
  ExpectNear(elems(Eval(src, "pos_exp", {vec({-1.0, 2.0})})), {0.0, std::exp(2.0), 0.0});
}

TEST(CheckerIr, IversonFactorsOfAProductBecomeOneGuard) {
  const std::string src =
      "def abc(a: f64, b: f64, c: bool) -> f64 { a * [c] * b }\n"
      "def chain(x: f64[n], a: f64, b: f64) -> f64[n] { for i. a * [i > 0] * b * [i < n - 1] * "
      "x[i] }\n";
  EXPECT_EQ(Print(src, "abc"),
            "def abc(a: f64, b: f64, c: bool) -> f64 {\n"
            "  let t4 = [c] * {\n"
            "    let t3 = a * b\n"
            "    t3\n"
            "  }\n"
            "  t4\n"
            "}\n");
  EXPECT_EQ(Print(src, "chain"),
            "def chain(x: f64[n], a: f64, b: f64) -> f64[n] {\n"
            "  let t9 = for i: n. {\n"
            "    let t8 = [i >= 1 && i + 1 < n] * {\n"
            "      let t5 = a * b\n"
            "      let t6 = x[i]\n"
            "      let t7 = t5 * t6\n"
            "      t7\n"
            "    }\n"
            "    t8\n"
            "  }\n"
            "  t9\n"
            "}\n");
  EXPECT_EQ(Eval(src, "abc", {Value::f64(2.0), Value::f64(3.0), Value::boolean(true)}).as_f64(),
            6.0);
  EXPECT_EQ(Eval(src, "abc", {Value::f64(2.0), Value::f64(3.0), Value::boolean(false)}).as_f64(),
            0.0);
  ExpectNear(elems(Eval(src, "chain", {vec({1, 2, 3, 4}), Value::f64(2.0), Value::f64(3.0)})),
             {0, 12, 18, 0});
}

TEST(CheckerIr, NestedGuardsMerge) {
  // The inner bracket is inside a block, so only the guard merging joins them.
  const std::string src = "def f(x: f64[n]) -> f64 { sum i. [i > 0] * { [i < n - 1] * x[i] } }";
  EXPECT_EQ(Print(src, "f"),
            "def f(x: f64[n]) -> f64 {\n"
            "  let t6 = sum i: n. {\n"
            "    let t5 = [i >= 1 && i + 1 < n] * {\n"
            "      let t3 = x[i]\n"
            "      t3\n"
            "    }\n"
            "    t5\n"
            "  }\n"
            "  t6\n"
            "}\n");
  EXPECT_EQ(Eval(src, "f", {vec({1, 2, 4, 8})}).as_f64(), 6.0);
}

TEST(CheckerIr, SizeOfIsTheSizeExpression) {
  // size(x, 0) is n, so the bracket stays affine and guards the shifted read.
  const std::string src =
      "def f(x: f64[n]) -> f64 {\n"
      "  let k = size(x, 0)\n"
      "  sum i: n. [i + 1 < k] * x[i + 1]\n"
      "}\n";
  EXPECT_EQ(Print(src, "f"),
            "def f(x: f64[n]) -> f64 {\n"
            "  let t6 = sum i: n. {\n"
            "    let t5 = [i + 1 < n] * {\n"
            "      let t4 = x[i + 1]\n"
            "      t4\n"
            "    }\n"
            "    t5\n"
            "  }\n"
            "  t6\n"
            "}\n");
  EXPECT_EQ(Eval(src, "f", {vec({1, 2, 4})}).as_f64(), 6.0);
}

TEST(CheckerIr, LogicalAndShortCircuits) {
  const std::string src = "def f(x: f64[n]) -> bool { 0 < n && x[0] > 0.0 }";
  EXPECT_EQ(Print(src, "f"),
            "def f(x: f64[n]) -> bool {\n"
            "  let t2 = 0 < n\n"
            "  let t5 = if t2 then {\n"
            "    let t3 = x[0]\n"
            "    let t4 = t3 > 0.0\n"
            "    t4\n"
            "  } else { false }\n"
            "  t5\n"
            "}\n");
  EXPECT_FALSE(Eval(src, "f", {vec({})}).as_bool());  // x[0] is not read
  EXPECT_TRUE(Eval(src, "f", {vec({1.0})}).as_bool());
  EXPECT_FALSE(Eval(src, "f", {vec({-1.0})}).as_bool());
}

TEST(CheckerIr, LiteralsTakeTheTypeOfTheOtherOperand) {
  const std::string src = "def scale(x: f32) -> f32 { 2 * x + 1 / x }";
  EXPECT_EQ(Print(src, "scale"),
            "def scale(x: f32) -> f32 {\n"
            "  let t1 = f32(2.0) * x\n"
            "  let t2 = f32(1.0) / x\n"
            "  let t3 = t1 + t2\n"
            "  t3\n"
            "}\n");
}

TEST(CheckerIr, ElementwiseArithmeticBecomesGenerators) {
  const std::string src = "def axpy(a: f64, x: f64[n], y: f64[n]) -> f64[n] { a * x + y }";
  EXPECT_EQ(Print(src, "axpy"),
            "def axpy(a: f64, x: f64[n], y: f64[n]) -> f64[n] {\n"
            "  let t7 = for i: n. {\n"
            "    let t5 = x[i]\n"
            "    let t6 = a * t5\n"
            "    t6\n"
            "  }\n"
            "  let t12 = for i_8: n. {\n"
            "    let t9 = t7[i_8]\n"
            "    let t10 = y[i_8]\n"
            "    let t11 = t9 + t10\n"
            "    t11\n"
            "  }\n"
            "  t12\n"
            "}\n");
}

TEST(CheckerIr, PrintedFunctionsCheckAgainAndComputeTheSameValues) {
  const std::string src =
      "def a(x: f64[n]) -> f64[n + 1] { for i: n + 1. [i < n && x[i] > 0.0] * exp(x[i]) }\n"
      "def b(x: f64[n]) -> f64 { sum i. [i > 0] * { [i < n - 1] * x[i] } + logsumexp(x) }\n"
      "def c(x: f64[n]) -> f64 { loop s = 0.0 for t < n { if x[t] > s then x[t] else s * 0.5 } }\n"
      "def d(x: f64[n]) -> f64 {\n"
      "  let (p, q) = [n > 2] * (x[0], x[1])\n"
      "  p * q + max i. x[i] + (min i: n. x[n - 1 - i])\n"
      "}\n";
  const Value x = vec({0.5, -1.25, 3.0, 2.0});
  for (const char* fn : {"a", "b", "c", "d"}) {
    SCOPED_TRACE(fn);
    const std::string printed = Print(src, fn);
    ASSERT_FALSE(printed.empty());
    Value want = Eval(src, fn, {x});
    Value got = Eval(printed, fn, {x});
    ASSERT_EQ(got.shape(), want.shape()) << printed;
    ExpectNear(elems(got), elems(want));
  }
}

}  // namespace COTANGENT_TEST_UNIT
