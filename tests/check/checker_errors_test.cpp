// Every error the checker reports (src/check/*.cpp), each triggered by a small program, with
// its exact message, position and help; independent errors reported together and no cascades;
// programs that must check, evaluated to show they mean what they say. Through the public API:
// cotangent::Module::from_string and Module::evaluate.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
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
using cotangent::Error;
using cotangent::Module;
using cotangent::Value;

struct Want {
  int line;
  int column;
  std::string message;
  std::string help;
};

std::string rendered(const std::vector<Error>& es) {
  std::string s;
  for (const auto& e : es) s += e.rendered;
  return s;
}

// The module fails to check with exactly these errors, in this order.
::testing::AssertionResult HasErrors(const std::string& src, const std::vector<Want>& want) {
  auto m = Module::from_string(src, "test.cot");
  if (m.ok()) {
    return ::testing::AssertionFailure()
           << "the program checked, but " << want.size() << " error(s) were expected";
  }
  const auto& es = m.errors();
  if (es.size() != want.size()) {
    return ::testing::AssertionFailure()
           << "expected " << want.size() << " error(s), got " << es.size() << ":\n"
           << rendered(es);
  }
  for (size_t k = 0; k < es.size(); ++k) {
    const Error& e = es[k];
    const Want& w = want[k];
    if (e.file != "test.cot" || e.line != w.line || e.column != w.column ||
        e.message != w.message || e.help != w.help) {
      return ::testing::AssertionFailure()
             << "error " << k + 1 << " differs\n  expected test.cot:" << w.line << ":" << w.column
             << ": " << w.message << "\n    help: " << w.help << "\n  got " << e.file << ":"
             << e.line << ":" << e.column << ": " << e.message << "\n    help: " << e.help
             << "\nall errors:\n"
             << rendered(es);
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult OneError(const std::string& src, int line, int column,
                                    const std::string& message, const std::string& help = "") {
  return HasErrors(src, {{line, column, message, help}});
}

::testing::AssertionResult Checks(const std::string& src) {
  auto m = Module::from_string(src, "test.cot");
  if (m.ok()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "unexpected errors:\n" << rendered(m.errors());
}

// Checks `src` and evaluates `fn`; a failure to check or to run fails the test.
Value mat(int64_t rows, int64_t cols, const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {rows, cols});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
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

// ---------------------------------------------------------------------------------------------
// Names

TEST(CheckerErrors, UnknownNameSuggestsAClosePrameter) {
  EXPECT_TRUE(
      OneError("def f(xs: f64[n]) -> f64 {\n"
               "  sum i. xs[i] * xz[i]\n"
               "}\n",
               2, 18, "unknown name `xz`", "did you mean `xs`?"));
}

TEST(CheckerErrors, UnknownNameSuggestsALetBinding) {
  EXPECT_TRUE(
      OneError("def f(x: f64) -> f64 {\n"
               "  let total = x * 2.0\n"
               "  totl + 1.0\n"
               "}\n",
               3, 3, "unknown name `totl`", "did you mean `total`?"));
}

TEST(CheckerErrors, UnknownNameWithNothingCloseHasNoHelp) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { x + velocity }", 1, 28, "unknown name `velocity`"));
}

TEST(CheckerErrors, NamesAreNotVisibleOutsideTheirBlock) {
  EXPECT_TRUE(
      OneError("def f(x: f64) -> f64 {\n"
               "  let y = { let inner = x\n"
               "            inner }\n"
               "  inner + y\n"
               "}\n",
               4, 3, "unknown name `inner`"));
}

TEST(CheckerErrors, FunctionUsedAsAValue) {
  EXPECT_TRUE(
      OneError("def g(x: f64) -> f64 { x }\n"
               "def f(x: f64) -> f64 { g + x }\n",
               2, 24, "`g` is a function, not a value", "call it with arguments, as in `g(...)`"));
  // Prelude functions too.
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64 { let d = dot\n  d }", 1, 35,
                       "`dot` is a function, not a value",
                       "call it with arguments, as in `dot(...)`"));
}

TEST(CheckerErrors, UnknownFunctionSuggestsUserPreludeAndBuiltinFunctions) {
  EXPECT_TRUE(
      OneError("def square(x: f64) -> f64 { x * x }\n"
               "def f(x: f64) -> f64 { sqare(x) }\n",
               2, 24, "unknown function `sqare`", "did you mean `square`?"));
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64 { sofmax(x)[0] }", 1, 27,
                       "unknown function `sofmax`", "did you mean `softmax`?"));
  // `exp` (a built-in) is closer than the prelude's `eye`.
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { exq(x) }", 1, 24, "unknown function `exq`",
                       "did you mean `exp`?"));
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { nonsense_name(x) }", 1, 24,
                       "unknown function `nonsense_name`"));
}

TEST(CheckerErrors, ValueCalledAsAFunction) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { x(1.0) }", 1, 24, "unknown function `x`",
                       "`x` is a value, not a function"));
}

// ---------------------------------------------------------------------------------------------
// Scalar types and literals

TEST(CheckerErrors, RealAndIntegerDoNotMix) {
  EXPECT_TRUE(OneError("def f(x: f64, n: i64) -> f64 { x + n }", 1, 34,
                       "mismatched types f64 and i64 for `+`",
                       "convert the integer with `f64(...)`"));
  EXPECT_TRUE(OneError("def f(x: f32, n: i64) -> f32 { n * x }", 1, 34,
                       "mismatched types i64 and f32 for `*`",
                       "convert the integer with `f32(...)`"));
}

TEST(CheckerErrors, F64AndF32DoNotMix) {
  EXPECT_TRUE(OneError("def f(x: f64, y: f32) -> f64 { x - y }", 1, 34,
                       "mismatched types f64 and f32 for `-`",
                       "convert one side with `f64(...)` or `f32(...)`"));
  EXPECT_TRUE(OneError("def f(x: f64, y: f32) -> f64 { max(x, y) }", 1, 32,
                       "mismatched types f64 and f32 for `max`",
                       "convert one side with `f64(...)` or `f32(...)`"));
}

TEST(CheckerErrors, NumberAndBoolDoNotMix) {
  EXPECT_TRUE(OneError("def f(x: f64, b: bool) -> f64 { max(x, b) }", 1, 33,
                       "mismatched types f64 and bool for `max`"));
}

TEST(CheckerErrors, LiteralsAdaptToTheOtherOperand) {
  const std::string src =
      "def f(x: f32) -> f32 { x * 2 + 2 * x + 1 / x + 0.5 * x }\n"
      "def g(x: f64) -> f64 { exp(1) * x + pow(x, 2) + max(x, 0) }\n"
      "def h(n: i64) -> f64 { f64(n) / 2 + 1 + 0.5 }\n"
      "def k(x: f32) -> f32 { f32(exp(1)) * x }\n";
  ASSERT_TRUE(Checks(src));
  Value f = Eval(src, "f", {Value::f32(0.5f)});
  EXPECT_EQ(f.dtype(), DType::F32);
  EXPECT_EQ(f.as_f64(), 4.25);  // 1 + 1 + 2 + 0.25, exact in f32
  Value g = Eval(src, "g", {Value::f64(2.0)});
  EXPECT_EQ(g.dtype(), DType::F64);
  EXPECT_LE(rho(g.as_f64(), 2.0 * std::exp(1.0) + 4.0 + 2.0), kTol);
  EXPECT_EQ(Eval(src, "h", {Value::i64(3)}).as_f64(), 3.0);
  Value k = Eval(src, "k", {Value::f32(2.0f)});
  EXPECT_EQ(k.dtype(), DType::F32);
  EXPECT_LE(rho(k.as_f64(), 2.0 * static_cast<double>(static_cast<float>(std::exp(1.0)))), 1e-7);
}

TEST(CheckerErrors, ARealLiteralDoesNotBecomeAnInteger) {
  EXPECT_TRUE(OneError("def f(n: i64) -> i64 { n + 0.5 }", 1, 26,
                       "mismatched types i64 and f64 for `+`",
                       "convert the integer with `f64(...)`"));
}

TEST(CheckerErrors, ArithmeticNeedsNumbers) {
  EXPECT_TRUE(
      OneError("def f(x: f64, b: bool) -> f64 { x + b }", 1, 37, "`+` needs numbers, found bool"));
  EXPECT_TRUE(OneError("def f(t: (f64, f64)) -> f64 { t * 2.0 }", 1, 31,
                       "`*` needs numbers, found (f64, f64)"));
  EXPECT_TRUE(OneError("def f(b: bool) -> f64 { -b }", 1, 25, "`-` needs a number, found bool"));
  EXPECT_TRUE(OneError("def f(x: f64) -> bool { !x }", 1, 25, "`!` needs a bool, found f64"));
}

TEST(CheckerErrors, FloorDivisionAndModulusAreIntegerOnly) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { x // 2.0 }", 1, 26,
                       "`//` is defined on integers (i64), not on f64",
                       "use `/` for real division"));
  EXPECT_TRUE(OneError("def f(x: f32) -> f32 { x % 2 }", 1, 26,
                       "`%` is defined on integers (i64), not on f32"));
}

// Integer arithmetic on literals that would fail is not folded: it may sit in a branch that
// never runs (`if` and brackets are lazy), so it fails at run time, with its position.
TEST(CheckerErrors, FailingIntegerLiteralArithmeticIsARunTimeError) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"def f(x: f64) -> i64 { 1 // 0 }", "integer division by zero: 1 // 0"},
      {"def f(x: f64) -> i64 { 9223372036854775807 + 1 }",
       "integer overflow in `+`: 9223372036854775807 + 1"},
      {"def f(x: f64) -> i64 { 7 / 2 }",
       "`/` on integers must divide exactly: 7 / 2; use `//` for floor division"},
      {"def f(x: f64) -> i64 { -(-9223372036854775807 - 1) }", "integer overflow in `-`"},
  };
  for (const auto& [src, message] : cases) {
    auto m = Module::from_string(src, "lit.cot");
    ASSERT_TRUE(m.ok()) << src << "\n" << m.message();
    auto r = m.value().evaluate("f", {Value::f64(0.0)});
    ASSERT_FALSE(r.ok()) << src;
    EXPECT_EQ(r.errors()[0].message.rfind(message, 0), 0u) << r.errors()[0].message;
    EXPECT_EQ(r.errors()[0].line, 1) << src;
    EXPECT_EQ(r.errors()[0].column, 24) << src;
  }
}

TEST(CheckerErrors, Comparisons) {
  EXPECT_TRUE(
      OneError("def f(x: f64) -> bool { (x, x) == (x, x) }", 1, 25, "`==` cannot compare tuples"));
  EXPECT_TRUE(OneError("def f(x: f64, b: bool) -> bool { x < b }", 1, 36,
                       "`<` cannot compare f64 and bool"));
  EXPECT_TRUE(OneError("def f(a: bool, b: bool) -> bool { a < b }", 1, 37,
                       "`<` cannot compare bool and bool"));
  EXPECT_TRUE(OneError("def f(x: f64, n: i64) -> bool { x < n }", 1, 35,
                       "mismatched types f64 and i64 for `<`",
                       "convert the integer with `f64(...)`"));
  const std::string ok = "def f(a: bool, b: bool, x: f64) -> bool { a == b && x > 1 }";
  EXPECT_TRUE(
      Eval(ok, "f", {Value::boolean(true), Value::boolean(true), Value::f64(2.0)}).as_bool());
  EXPECT_FALSE(
      Eval(ok, "f", {Value::boolean(true), Value::boolean(false), Value::f64(2.0)}).as_bool());
}

TEST(CheckerErrors, LogicNeedsBools) {
  EXPECT_TRUE(OneError("def f(x: f64, y: f64) -> bool { x && y }", 1, 33,
                       "an operand of `&&` must be a bool, found f64",
                       "compare it, as in `x > 0.0`"));
  EXPECT_TRUE(OneError("def f(x: f64, b: bool) -> bool { b || x }", 1, 39,
                       "an operand of `||` must be a bool, found f64",
                       "compare it, as in `x > 0.0`"));
}

TEST(CheckerErrors, Powers) {
  EXPECT_TRUE(OneError("def f(b: bool) -> f64 { b ^ 2 }", 1, 25, "`^` needs a number, found bool"));
  EXPECT_TRUE(OneError("def f(n: i64) -> i64 { n ^ -1 }", 1, 28,
                       "a negative power of an integer is not an integer",
                       "convert the base with `f64(...)`"));
  EXPECT_TRUE(OneError("def f(x: f64, n: i64) -> f64 { x ^ n }", 1, 36,
                       "the exponent of `^` must be real or an integer literal",
                       "convert it with `f64(...)`"));
  EXPECT_TRUE(OneError("def f(x: f64, n: i64) -> f64 { n ^ x }", 1, 32,
                       "a real power of an integer is not defined",
                       "convert the base with `f64(...)`"));
  EXPECT_TRUE(OneError("def f(x: f64, y: f32) -> f64 { x ^ y }", 1, 34,
                       "mismatched types f64 and f32 for `^`",
                       "convert one side with `f64(...)` or `f32(...)`"));
  EXPECT_TRUE(OneError("def f(x: f64, t: (f64, f64)) -> f64 { x ^ t }", 1, 43,
                       "`^` cannot be applied to a tuple ((f64, f64))"));
  const std::string ok =
      "def f(x: f64, n: i64) -> f64 { x ^ 3 + x ^ -2 + 2 ^ x + x ^ 0.5 + f64(n ^ 2) }";
  EXPECT_LE(rho(Eval(ok, "f", {Value::f64(4.0), Value::i64(3)}).as_f64(),
                64.0 + 1.0 / 16.0 + 16.0 + 2.0 + 9.0),
            kTol);
}

// ---------------------------------------------------------------------------------------------
// Built-in functions

TEST(CheckerErrors, BuiltinArity) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { exp(x, x) }", 1, 24,
                       "`exp` takes 1 argument, but 2 were given"));
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { atan2(x) }", 1, 24,
                       "`atan2` takes 2 arguments, but 1 was given"));
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> i64 { size(x) }", 1, 27,
                       "`size` takes 2 arguments, but 1 was given"));
  EXPECT_TRUE(OneError("def f(x: f64) -> i64 { i64(x, x) }", 1, 24,
                       "`i64` takes 1 argument, but 2 were given"));
}

TEST(CheckerErrors, BuiltinArgumentTypes) {
  EXPECT_TRUE(OneError("def f(n: i64) -> f64 { exp(n) }", 1, 28,
                       "`exp` needs a real (f64 or f32) argument, found i64",
                       "convert it with `f64(...)`"));
  EXPECT_TRUE(OneError("def f(b: bool) -> f64 { log(b) }", 1, 29,
                       "`log` needs a real (f64 or f32) argument, found bool"));
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { exp((x, x)) }", 1, 28,
                       "`exp` cannot be applied to a tuple"));
  EXPECT_TRUE(OneError("def f(a: bool, b: bool) -> bool { max(a, b) }", 1, 35,
                       "`max` needs numeric (f64, f32 or i64) arguments, found bool"));
  EXPECT_TRUE(OneError("def f(t: (f64, f64)) -> f64 { f64(t) }", 1, 35,
                       "`f64` cannot be applied to a tuple ((f64, f64))"));
}

TEST(CheckerErrors, Size) {
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> i64 { size(x, n) }", 1, 35,
                       "the dimension of `size` must be an integer literal",
                       "write `size(x, 0)` for the first dimension"));
  EXPECT_TRUE(
      OneError("def f(y: f64[n]) -> i64 { size(y, 1) }", 1, 35,
               "`size(y, 1)` needs a tensor with more than 1 dimensions; y has type f64[n]"));
  EXPECT_TRUE(OneError("def f(t: (f64, f64)) -> i64 { size(t, 0) }", 1, 39,
                       "`size(t, 0)` needs a tensor with more than 0 dimensions; t has type "
                       "(f64, f64)"));
  const std::string ok = "def f(x: f64[n, m]) -> i64 { size(x, 0) * 10 + size(x, 1) }";
  EXPECT_EQ(Eval(ok, "f", {mat(2, 3, {1, 2, 3, 4, 5, 6})}).as_i64(), 23);
}

// ---------------------------------------------------------------------------------------------
// Tensors: elementwise arithmetic and indexing

TEST(CheckerErrors, ElementwiseArithmeticOnTensorsOfOneShape) {
  const std::string src =
      "def f(x: f64[n], y: f64[n]) -> f64[n] { x * y + 2.0 - x / 2.0 }\n"
      "def g(x: f64[n]) -> f64[n] { max(x, 0.0) + -x + exp(x * 0.0) }\n";
  ExpectNear(elems(Eval(src, "f", {vec({1, 2, 3}), vec({4, 5, 6})})), {5.5, 11.0, 18.5});
  ExpectNear(elems(Eval(src, "g", {vec({-1, 2})})), {2.0, 1.0});
}

TEST(CheckerErrors, ElementwiseShapeMismatch) {
  EXPECT_TRUE(OneError("def f(x: f64[n], y: f64[m]) -> f64[n] { x + y }", 1, 41,
                       "the shapes of the operands of `+` do not match: f64[n] and f64[m]",
                       "elementwise operations need tensors of one shape, or a scalar"));
  EXPECT_TRUE(OneError("def f(x: f64[n], A: f64[n, n]) -> f64[n] { x * A }", 1, 44,
                       "the shapes of the operands of `*` do not match: f64[n] and f64[n, n]",
                       "elementwise operations need tensors of one shape, or a scalar"));
  EXPECT_TRUE(OneError("def f(x: f64[n], y: f64[m]) -> f64[n] { max(x, y) }", 1, 41,
                       "the shapes of the operands of `max` do not match: f64[n] and f64[m]",
                       "elementwise operations need tensors of one shape, or a scalar"));
}

TEST(CheckerErrors, IndexingErrors) {
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64 { x[0, 1] }", 1, 27,
                       "too many indices: f64[n] has rank 1 but is indexed with 2"));
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { x[0] }", 1, 24, "a scalar (f64) cannot be indexed"));
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 {\n  let t = (x, x)\n  t[0]\n}", 3, 3,
                       "a tuple cannot be indexed", "destructure it with `let (a, b) = ...`"));
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64 { x[1.0] }", 1, 29,
                       "an index must be an integer (i64), found f64",
                       "convert it with `i64(...)`"));
  EXPECT_TRUE(OneError("def f(x: f64[n], b: bool) -> f64 { x[b] }", 1, 38,
                       "an index must be an integer (i64), found bool"));
  EXPECT_TRUE(OneError("def f(x: f64[n], k: i64[2]) -> f64 { x[k] }", 1, 40,
                       "an index must be an integer (i64), found i64[2]"));
}

TEST(CheckerErrors, IndexingAndSlicingCheck) {
  const std::string src =
      "def row(A: f64[m, n]) -> f64[n] { A[1] }\n"
      "def gather(x: f64[n], idx: i64[k]) -> f64[k] { for o. x[idx[o]] }\n"
      "def rev(x: f64[n]) -> f64[n] { for i. x[n - 1 - i] * [i >= 0] + 0.0 * x[i] }\n";
  ExpectNear(elems(Eval(src, "row", {mat(2, 2, {1, 2, 3, 4})})), {3, 4});
  Value idx = Value::zeros(DType::I64, {3});
  idx.i64_mut()[0] = 2;
  idx.i64_mut()[1] = 0;
  idx.i64_mut()[2] = 2;
  ExpectNear(elems(Eval(src, "gather", {vec({10, 20, 30}), idx})), {30, 10, 30});
  ExpectNear(elems(Eval(src, "rev", {vec({1, 2, 3})})), {3, 2, 1});
}

// ---------------------------------------------------------------------------------------------
// Index variables and extents

TEST(CheckerErrors, ExtentInferredFromWholeIndexUses) {
  const std::string src =
      "def f(x: f64[n]) -> f64[n] { for i. 2.0 * x[i] }\n"
      "def g(A: f64[m, n]) -> f64[n] { for j. sum i. A[i, j] }\n"
      "def d(x: f64[n]) -> f64[n, n] { for i, j. [i == j] * x[i] }\n";
  ExpectNear(elems(Eval(src, "f", {vec({1, 2})})), {2, 4});
  Value g = Eval(src, "g", {mat(2, 3, {1, 2, 3, 4, 5, 6})});
  EXPECT_EQ(g.shape(), (std::vector<int64_t>{3}));
  ExpectNear(elems(g), {5, 7, 9});
  Value d = Eval(src, "d", {vec({1, 2})});
  EXPECT_EQ(d.shape(), (std::vector<int64_t>{2, 2}));
  ExpectNear(elems(d), {1, 0, 0, 2});
}

TEST(CheckerErrors, ExtentThatCannotBeInferred) {
  EXPECT_TRUE(
      OneError("def f(x: f64[n]) -> f64 { sum i. 1.0 }", 1, 31,
               "cannot infer the extent of `i`: it is not used as a whole index of a tensor",
               "write the extent, as in `i: n`"));
  // x[i + 1] is not a whole index.
  EXPECT_TRUE(
      OneError("def f(x: f64[n]) -> f64 {\n  sum k. x[k + 1]\n}", 2, 7,
               "cannot infer the extent of `k`: it is not used as a whole index of a tensor",
               "write the extent, as in `k: n`"));
}

TEST(CheckerErrors, AmbiguousExtentNamesBothUses) {
  const std::string src = "def f(x: f64[n], y: f64[m]) -> f64 { sum i. x[i] * y[i] }";
  EXPECT_TRUE(OneError(src, 1, 42,
                       "the extent of `i` is ambiguous: x[i] in dimension 0 gives n, but y[i] in "
                       "dimension 0 gives m",
                       "write the extent, as in `i: n`"));
  auto m = Module::from_string(src, "test.cot");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.errors()[0].rendered.find("test.cot:1:54: note: this use gives m"), std::string::npos)
      << m.errors()[0].rendered;
  // The same tensor in two dimensions of different sizes.
  EXPECT_TRUE(OneError("def f(A: f64[m, n]) -> f64 { sum i. A[i, i] }", 1, 34,
                       "the extent of `i` is ambiguous: A[i] in dimension 0 gives m, but A[i] in "
                       "dimension 1 gives n",
                       "write the extent, as in `i: m`"));
}

TEST(CheckerErrors, ExplicitExtents) {
  const std::string src =
      "def pad(x: f64[n]) -> f64[n + 1] { for i: n + 1. [i < n] * x[i] }\n"
      "def cols(A: f64[m, n]) -> f64[n] { for j: size(A, 1). A[0, j] }\n"
      "def three(x: f64[n]) -> f64[3] { for i: 3. f64(i) }\n"
      "def square(A: f64[n, n]) -> f64 { sum i: n. A[i, i] }\n"
      "def twice(x: f64[n]) -> f64[n] { for i: size(x, 0). x[i] * 2.0 }\n";
  ExpectNear(elems(Eval(src, "pad", {vec({1, 2})})), {1, 2, 0});
  ExpectNear(elems(Eval(src, "cols", {mat(2, 3, {1, 2, 3, 4, 5, 6})})), {1, 2, 3});
  ExpectNear(elems(Eval(src, "three", {vec({})})), {0, 1, 2});
  EXPECT_EQ(Eval(src, "square", {mat(2, 2, {1, 2, 3, 4})}).as_f64(), 5.0);
  ExpectNear(elems(Eval(src, "twice", {vec({1.5, -2})})), {3, -4});
}

TEST(CheckerErrors, ExtentsThatAreNotSizes) {
  const std::string help =
      "use integer literals, size variables, `size(x, k)` and `+ - * /`; to skip part of a "
      "range, guard the body with an Iverson bracket `[cond] * e`";
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64 { sum i: 1.5. x[i] }", 1, 34,
                       "the extent of `i` must be a size expression known from the argument shapes",
                       help));
  // A data-dependent count, even an i64 one, is not a size; nor reported twice when unused.
  EXPECT_TRUE(OneError("def f(x: f64[n], k: i64) -> f64 { sum i: k. x[i] }", 1, 42,
                       "the extent of `i` must be a size expression known from the argument shapes",
                       help));
  EXPECT_TRUE(OneError("def f(x: f64[n], k: i64) -> f64 { sum i: k. 1.0 }", 1, 42,
                       "the extent of `i` must be a size expression known from the argument shapes",
                       help));
  // Type errors inside the extent are reported instead.
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64 { sum i: nn. x[i] }", 1, 34, "unknown name `nn`",
                       "did you mean `n`?"));
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64 { sum i: 2 - 5. x[i] }", 1, 34,
                       "the extent of `i` is negative"));
}

TEST(CheckerErrors, IndexVariableBoundTwice) {
  // One error, not also "cannot infer the extent" of the shadowed first `i`.
  EXPECT_TRUE(OneError("def f(x: f64[n, n]) -> f64 { sum i, i. x[i, i] }", 1, 37,
                       "index variable `i` is bound twice here"));
}

TEST(CheckerErrors, BinderBodies) {
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64 {\n  let t = for i. (x[i], x[i])\n  0.0\n}", 2, 18,
                       "the body of `for` must be a number or a tensor, not a tuple ((f64, f64))",
                       "build one tensor per component"));
  EXPECT_TRUE(OneError("def f(b: bool[n]) -> f64 { sum i. b[i] }", 1, 35,
                       "the body of `sum` must be a number or a tensor of numbers, found bool"));
  EXPECT_TRUE(
      OneError("def f(t: (f64, f64)) -> f64 { max i: 3. t }", 1, 41,
               "the body of `max` must be a number or a tensor of numbers, found (f64, f64)"));
}

TEST(CheckerErrors, Accum) {
  EXPECT_TRUE(OneError("def f(x: f64[n], k: i64) -> f64[n] { accum[k] i. (0, x[i]) }", 1, 44,
                       "a dimension of `accum` must be a size expression"));
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64[n] { accum[n] i. x[i] }", 1, 42,
                       "the body of `accum` must be a tuple of 1 indices and a value, found f64"));
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64[n] { accum[n] i. (1.5, x[i]) }", 1, 42,
                       "an index of `accum` must be an integer (i64), found f64"));
  EXPECT_TRUE(OneError("def f(j: i64[n]) -> f64[n] { accum[n] i. (j[i], j[i]) }", 1, 42,
                       "the value of `accum` must be real, found i64"));
}

// ---------------------------------------------------------------------------------------------
// Iverson brackets, if, loops

TEST(CheckerErrors, IversonBracketConditionMustBeBool) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { [x] * x }", 1, 25,
                       "the condition of an Iverson bracket must be a bool, found f64",
                       "compare it, as in `x > 0.0`"));
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { [1.0 + x] * x }", 1, 25,
                       "the condition of an Iverson bracket must be a bool, found f64",
                       "compare it, as in `x > 0.0`"));
}

TEST(CheckerErrors, IversonBracketMultipliesRealsOnly) {
  EXPECT_TRUE(OneError("def f(x: f64, n: i64) -> f64 { [x > 0.0] * n }", 1, 44,
                       "an Iverson bracket is a real number and can only multiply real values; "
                       "this has type i64",
                       "for other types use `if c then e else ...`"));
  EXPECT_TRUE(OneError("def f(x: f64, b: bool) -> f64 { [x > 0.0] * b }", 1, 45,
                       "an Iverson bracket is a real number and can only multiply real values; "
                       "this has type bool",
                       "for other types use `if c then e else ...`"));
  // A negated bracket negates the guarded product, which must then be a number.
  EXPECT_TRUE(OneError("def f(x: f64, b: bool) -> f64 { -[x > 0.0] * b }", 1, 46,
                       "`-` needs a number, found bool"));
  const std::string ok =
      "def f(x: f64) -> f64 { [x > 0.0] * 2 + [x < 0.0] * x - [x > 1.0] * x * 0.5 }";
  EXPECT_EQ(Eval(ok, "f", {Value::f64(3.0)}).as_f64(), 0.5);
  const std::string neg = "def g(x: f64) -> f64 { -[x > 0.0] * x * 2 }";
  EXPECT_EQ(Eval(neg, "g", {Value::f64(3.0)}).as_f64(), -6.0);
  EXPECT_EQ(Eval(neg, "g", {Value::f64(-3.0)}).as_f64(), 0.0);
  EXPECT_EQ(Eval(ok, "f", {Value::f64(-3.0)}).as_f64(), -3.0);
}

TEST(CheckerErrors, IfConditionMustBeBool) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { if x then 1.0 else 2.0 }", 1, 27,
                       "the condition of `if` must be a bool, found f64",
                       "compare it, as in `x > 0.0`"));
}

TEST(CheckerErrors, IfBranchesMustAgree) {
  EXPECT_TRUE(OneError("def f(x: f64, n: i64) -> f64 { if x > 0.0 then x else n }", 1, 32,
                       "the branches of `if` have different types: f64 and i64"));
  EXPECT_TRUE(OneError("def f(x: f64, y: f32) -> f64 { if x > 0.0 then x else y }", 1, 32,
                       "the branches of `if` have different types: f64 and f32"));
  EXPECT_TRUE(OneError("def f(x: f64, n: i64) -> i64 { if x > 0.0 then 1.5 else n }", 1, 48,
                       "this branch has type f64, but i64 is expected", "write an integer"));
}

TEST(CheckerErrors, IfBranchLiteralsAdapt) {
  const std::string src =
      "def a(x: f64) -> f64 { if x > 0.0 then 1.0 else 2 }\n"
      "def b(x: f64) -> f64 { if x > 0.0 then 1 else 2.5 }\n"
      "def c(x: f32) -> f32 { if x > 0.0 then x else 0 }\n";
  EXPECT_EQ(Eval(src, "a", {Value::f64(-1.0)}).as_f64(), 2.0);
  EXPECT_EQ(Eval(src, "a", {Value::f64(1.0)}).as_f64(), 1.0);
  EXPECT_EQ(Eval(src, "b", {Value::f64(1.0)}).as_f64(), 1.0);
  Value c = Eval(src, "c", {Value::f32(-1.0f)});
  EXPECT_EQ(c.dtype(), DType::F32);
  EXPECT_EQ(c.as_f64(), 0.0);
}

TEST(CheckerErrors, LoopStateTypeMismatch) {
  // An integer literal as the initial state: the help says to write a real.
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { loop s = 0 for t < 3 { x } }", 1, 45,
                       "the loop body yields f64, but the state has type i64 (the type of its "
                       "initial value)",
                       "write the initial value as a real, e.g. `0.0`"));
  EXPECT_TRUE(OneError("def f(x: f64, y: f32) -> f64 { loop s = x for t < 3 { y } }", 1, 53,
                       "the loop body yields f32, but the state has type f64 (the type of its "
                       "initial value)",
                       "the body must yield the next state"));
  EXPECT_TRUE(
      OneError("def f(a: f64) -> f64 { loop (h, c) = (a, 0) for t < 3 { (h, 1.0) } }", 1, 55,
               "the loop body yields (f64, f64), but the state has type (f64, i64) (the type "
               "of its initial value)",
               "the body must yield the next state"));
  // Using the integer state with a real is reported where they meet.
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { loop s = 0 for t < 3 { s + x } }", 1, 49,
                       "mismatched types i64 and f64 for `+`",
                       "convert the integer with `f64(...)`"));
}

TEST(CheckerErrors, LoopBodyLiteralMustFitTheState) {
  EXPECT_TRUE(OneError("def f(n: i64) -> i64 { loop s = n for t < 3 { 0.5 } }", 1, 45,
                       "the loop body has type f64, but i64 is expected", "write an integer"));
}

TEST(CheckerErrors, LoopTripCountMustBeAnInteger) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { loop s = x for t < 2.0 { s } }", 1, 43,
                       "the trip count of `loop` must be an integer (i64), found f64",
                       "convert it with `i64(...)`"));
}

TEST(CheckerErrors, WhileConditionMustBeBool) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { loop s = x while s { s / 2.0 } }", 1, 41,
                       "the condition of `while` must be a bool, found f64",
                       "compare it, as in `x > 0.0`"));
}

TEST(CheckerErrors, LoopsThatCheck) {
  const std::string src =
      "def halve(x: f64) -> f64 { loop s = x while s > 1.0 { s / 2.0 } }\n"
      "def total(x: f64[n]) -> f64 { loop s = 0.0 for t < n { s + x[t] } }\n"
      "def count(n: i64) -> i64 { loop s = 0 for t < n { s + t } }\n"
      "def lit(x: f64) -> f64 { loop s = x for t < 3 { 1 } }\n"
      "def pair(a: f64, b: f64) -> f64 {\n"
      "  let (h, c) = loop (h, c) = (a, b) for t < 3 { (h + c, c * 2.0) }\n"
      "  h + c\n"
      "}\n";
  EXPECT_EQ(Eval(src, "halve", {Value::f64(10.0)}).as_f64(), 0.625);
  EXPECT_EQ(Eval(src, "total", {vec({1, 2, 4})}).as_f64(), 7.0);
  EXPECT_EQ(Eval(src, "count", {Value::i64(5)}).as_i64(), 10);
  EXPECT_EQ(Eval(src, "lit", {Value::f64(7.0)}).as_f64(), 1.0);
  // h: 1, 3, 7, 15; c: 2, 4, 8, 16.
  EXPECT_EQ(Eval(src, "pair", {Value::f64(1.0), Value::f64(2.0)}).as_f64(), 31.0);
}

// ---------------------------------------------------------------------------------------------
// Functions: results, signatures, definitions

TEST(CheckerErrors, ReturnTypeMismatch) {
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64[n + 1] { x }", 1, 34,
                       "the result of f has type f64[n], but f64[n + 1] is expected"));
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64 { x }", 1, 27,
                       "the result of f has type f64[n], but f64 is expected"));
  EXPECT_TRUE(OneError("def f(x: f64) -> f32 { x }", 1, 24,
                       "the result of f has type f64, but f32 is expected",
                       "convert it with `f32(...)`"));
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> i64[n] { x }", 1, 30,
                       "the result of f has type f64[n], but i64[n] is expected",
                       "convert it with `i64(...)`"));
  EXPECT_TRUE(OneError("def f(x: f64) -> i64 { 2.5 }", 1, 24,
                       "the result of f has type f64, but i64 is expected", "write an integer"));
  EXPECT_TRUE(OneError("def f(x: f64) -> bool { x }", 1, 25,
                       "the result of f has type f64, but bool is expected"));
  // The error points at the block's result expression.
  EXPECT_TRUE(OneError("def f(x: f64) -> (f64, i64) {\n  let y = x\n  (y, 1.0)\n}", 3, 3,
                       "the result of f has type (f64, f64), but (f64, i64) is expected"));
}

TEST(CheckerErrors, SymbolicResultShapesCompareByValue) {
  const std::string src =
      "def conv(x: f64[n], w: f64[k]) -> f64[1 + n - k] {\n"
      "  for i: n - k + 1. sum j. x[i + j] * w[j]\n"
      "}\n"
      "def twice(x: f64[n]) -> f64[2 * n] { for i: n + n. x[i // 2] }\n";
  Value c = Eval(src, "conv", {vec({1, 2, 3, 4}), vec({1, -1})});
  EXPECT_EQ(c.shape(), (std::vector<int64_t>{3}));
  ExpectNear(elems(c), {-1, -1, -1});
  ExpectNear(elems(Eval(src, "twice", {vec({5, 6})})), {5, 5, 6, 6});
}

TEST(CheckerErrors, SizeVariableNotInferable) {
  EXPECT_TRUE(OneError("def f(x: f64[n + 1]) -> f64 { 0.0 }", 1, 7,
                       "size variable n cannot be determined from the arguments",
                       "give some parameter a dimension that is exactly `n`"));
  // Reported at the parameter that mentions it (here `y`, although `x`'s type spells "f64").
  EXPECT_TRUE(OneError("def g(x: f64[k], y: f64[f + 1]) -> f64 { 0.0 }", 1, 18,
                       "size variable f cannot be determined from the arguments",
                       "give some parameter a dimension that is exactly `f`"));
}

TEST(CheckerErrors, ResultTypeWithAnUnknownSizeVariable) {
  // Once, although it occurs twice.
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64[m, m] { 0.0 }", 1, 5,
                       "the result type of f uses size variable m, which no parameter type has",
                       "a result dimension must be a size expression of the parameters' sizes"));
}

TEST(CheckerErrors, DimensionErrors) {
  const std::string help =
      "a dimension is a size expression: integer literals, size variables, `+`, `-`, `*` and `/`";
  EXPECT_TRUE(
      OneError("def f(x: f64[n / 0]) -> f64 { 0.0 }", 1, 14, "division by zero in a dimension"));
  EXPECT_TRUE(OneError("def f(x: f64[9223372036854775807 + 1]) -> f64 { 0.0 }", 1, 14,
                       "integer overflow in a dimension"));
  EXPECT_TRUE(OneError("def f(x: f64[2 - 5]) -> f64 { 0.0 }", 1, 14,
                       "a dimension cannot be negative (-3)", help));
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64[6 / 4] { 0.0 }", 1, 25,
                       "`/` in a dimension must divide exactly: 6 / 4 does not", help));
  // Intermediate negative values are fine; symbolic quotients are checked when evaluated.
  EXPECT_TRUE(Checks("def f(x: f64[(2 - 5) * (0 - 1)], y: f64[n, n / 2]) -> f64 { 0.0 }"));
}

TEST(CheckerErrors, DuplicateDefinitions) {
  const std::string src =
      "def f(x: f64) -> f64 { x }\n"
      "def f(y: f64) -> f64 { y }\n";
  EXPECT_TRUE(
      OneError(src, 2, 5, "function `f` is defined twice", "rename one of the definitions"));
  auto m = Module::from_string(src, "test.cot");
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.errors()[0].rendered.find("test.cot:1:5: note: first defined here"),
            std::string::npos)
      << m.errors()[0].rendered;
}

TEST(CheckerErrors, UserDefinitionsShadowThePrelude) {
  const std::string src =
      "def dot(x: f64, y: f64) -> f64 { x * y + 1.0 }\n"
      "def f(x: f64) -> f64 { dot(x, x) }\n";
  EXPECT_EQ(Eval(src, "f", {Value::f64(3.0)}).as_f64(), 10.0);
}

TEST(CheckerErrors, ReservedNames) {
  EXPECT_TRUE(OneError("def exp(x: f64) -> f64 { x }", 1, 5, "cannot define a function named `exp`",
                       "`exp` is a built-in; choose another name"));
  EXPECT_TRUE(HasErrors(
      "def grad(x: f64) -> f64 { x }\n"
      "def size(x: f64) -> f64 { x }\n",
      {{1, 5, "cannot define a function named `grad`", "`grad` is a built-in; choose another name"},
       {2, 5, "cannot define a function named `size`",
        "`size` is a built-in; choose another name"}}));
}

TEST(CheckerErrors, Parameters) {
  EXPECT_TRUE(
      OneError("def f(x: f64, x: f64) -> f64 { x }", 1, 15, "parameter `x` is declared twice"));
  EXPECT_TRUE(OneError("def f(x: f64[n], n: i64) -> f64 { x[0] }", 1, 18,
                       "parameter `n` has the name of a size variable",
                       "rename the parameter or the size variable"));
}

TEST(CheckerErrors, Destructuring) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 {\n  let (a, b) = (x, x, x)\n  a\n}", 2, 7,
                       "cannot destructure a value of type (f64, f64, f64) with a pattern of 2 "
                       "elements",
                       "the value has 3 elements"));
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 {\n  let (a, b) = x\n  a + b\n}", 2, 7,
                       "cannot destructure a value of type f64 with a pattern of 2 elements",
                       "only tuples can be destructured"));
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 {\n  let (a, a) = (x, x)\n  a\n}", 2, 11,
                       "`a` is bound twice in this pattern"));
  const std::string ok =
      "def f(a: f64, b: f64) -> f64 {\n"
      "  let (p, (q, r)) = (a, (b, 10.0))\n"
      "  let (_, s) = (1, 2.0)\n"
      "  p * q + r * s\n"
      "}\n";
  EXPECT_EQ(Eval(ok, "f", {Value::f64(2.0), Value::f64(3.0)}).as_f64(), 26.0);
}

// ---------------------------------------------------------------------------------------------
// Calls

TEST(CheckerErrors, CallArityShowsTheSignature) {
  EXPECT_TRUE(
      OneError("def g(a: f64, b: f64[n]) -> f64 { a }\n"
               "def f(x: f64) -> f64 { g(x) }\n",
               2, 24, "`g` takes 2 arguments, but 1 was given",
               "its signature is g(a: f64, b: f64[n]) -> f64"));
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64 { sqnorm(x, x) }", 1, 27,
                       "`sqnorm` takes 1 argument, but 2 were given",
                       "its signature is sqnorm(x: f64[n]) -> f64"));
}

TEST(CheckerErrors, CallArgumentTypesShowTheSignature) {
  EXPECT_TRUE(
      OneError("def g(a: f64, b: f64[n]) -> f64 { a }\n"
               "def f(x: f64, y: f64[m, m]) -> f64 { g(x, y) }\n",
               2, 43, "argument 2 (`b`) of `g`: expected f64[n], found f64[m, m]",
               "its signature is g(a: f64, b: f64[n]) -> f64"));
  EXPECT_TRUE(
      OneError("def g(a: f64) -> f64 { a }\n"
               "def f(x: f32) -> f64 { g(x) }\n",
               2, 26, "argument 1 (`a`) of `g`: expected f64, found f32",
               "its signature is g(a: f64) -> f64"));
  EXPECT_TRUE(
      OneError("def g(a: f64, b: i64) -> f64 { a }\n"
               "def f(x: f64) -> f64 { g(x, 1.5) }\n",
               2, 29, "argument 2 has type f64, but i64 is expected", "write an integer"));
  EXPECT_TRUE(
      OneError("def g(a: (f64, f64)) -> f64 { 0.0 }\n"
               "def f(x: f64) -> f64 { g((x, x, x)) }\n",
               2, 26, "argument 1 (`a`) of `g`: expected (f64, f64), found (f64, f64, f64)",
               "its signature is g(a: (f64, f64)) -> f64"));
}

TEST(CheckerErrors, InconsistentSizesNameTheVariableBothShapesAndBothParameters) {
  EXPECT_TRUE(
      OneError("def g(a: f64[n], b: f64[n]) -> f64 { a[0] }\n"
               "def f(x: f64[p], y: f64[q]) -> f64 { g(x, y) }\n",
               2, 43,
               "argument 2 (`b`) of `g`: expected f64[p], found f64[q]; in `g`, size variable n "
               "is the caller's p, from argument 1 (`a`: f64[p])",
               "its signature is g(a: f64[n], b: f64[n]) -> f64"));
  EXPECT_TRUE(OneError("def f(x: f64[p], y: f64[q]) -> f64 { dot(x, y) }", 1, 45,
                       "argument 2 (`y`) of `dot`: expected f64[p], found f64[q]; in `dot`, size "
                       "variable n is the caller's p, from argument 1 (`x`: f64[p])",
                       "its signature is dot(x: f64[n], y: f64[n]) -> f64"));
  EXPECT_TRUE(
      OneError("def g(a: f64[n, m], b: f64[m + 1]) -> f64 { a[0, 0] }\n"
               "def f(x: f64[p, q], y: f64[p]) -> f64 { g(x, y) }\n",
               2, 46,
               "argument 2 (`b`) of `g`: expected f64[q + 1], found f64[p]; in `g`, size "
               "variable m is the caller's q, from argument 1 (`a`: f64[p, q])",
               "its signature is g(a: f64[n, m], b: f64[m + 1]) -> f64"));
  // Consistent sizes instantiate the result type.
  const std::string ok =
      "def g(a: f64[n], b: f64[n + 1]) -> f64[2 * n + 1] { for i: 2 * n + 1. f64(i) }\n"
      "def f(x: f64[p], y: f64[p + 1]) -> f64[p + p + 1] { g(x, y) }\n";
  ExpectNear(elems(Eval(ok, "f", {vec({0}), vec({0, 0})})), {0, 1, 2});
}

// ---------------------------------------------------------------------------------------------
// Recursion

TEST(CheckerErrors, DirectRecursion) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { f(x) }", 1, 24,
                       "recursion is not allowed: `f`, which calls `f`",
                       "functions cannot call themselves, directly or indirectly; use `loop` for "
                       "iteration"));
}

TEST(CheckerErrors, MutualRecursionNamesTheChainOnce) {
  EXPECT_TRUE(
      OneError("def a(x: f64) -> f64 { b(x) }\n"
               "def b(x: f64) -> f64 { c(x) }\n"
               "def c(x: f64) -> f64 { a(x) }\n",
               3, 24,
               "recursion is not allowed: `a`, which calls `b`, which calls `c`, which "
               "calls `a`",
               "functions cannot call themselves, directly or indirectly; use `loop` for "
               "iteration"));
}

TEST(CheckerErrors, RecursionThroughADerivative) {
  EXPECT_TRUE(OneError("def f(w: f64) -> f64 { grad(f, w)(w) }", 1, 24,
                       "recursion is not allowed: `f`, which calls `grad(f, w)`, which calls `f`",
                       "functions cannot call themselves, directly or indirectly; use `loop` for "
                       "iteration"));
}

// ---------------------------------------------------------------------------------------------
// Derivative operators

TEST(CheckerErrors, DerivativeWithRespectToAnUnknownParameter) {
  EXPECT_TRUE(
      OneError("def f(w: f64[n], x: f64) -> f64 { x }\n"
               "def g(w: f64[n]) -> f64[n] { grad(f, v)(w, 1.0) }\n",
               2, 38, "`f` has no parameter named `v`", "its parameters are w: f64[n], x: f64"));
}

TEST(CheckerErrors, DerivativeWithRespectToAnIntegerParameter) {
  EXPECT_TRUE(
      OneError("def f(w: f64[n], k: i64) -> f64 { w[k] }\n"
               "def g(w: f64[n]) -> f64[n] { grad(f, k)(w, 1) }\n",
               2, 38, "parameter `k` of `f` has type i64 and cannot be differentiated",
               "only parameters of real type (f64, f32, tensors and tuples of them) are "
               "active"));
  EXPECT_TRUE(
      OneError("def f(k: i64) -> f64 { 1.0 }\n"
               "def g(w: f64[n]) -> f64 { grad(f)(1) }\n",
               2, 27, "`f` has no real parameter to differentiate", "its parameters are k: i64"));
  EXPECT_TRUE(
      OneError("def f(w: f64[n]) -> f64 { w[0] }\n"
               "def g(w: f64[n]) -> f64[n] { grad(f, w, w)(w) }\n",
               2, 41, "parameter `w` is named twice"));
}

TEST(CheckerErrors, DerivativeOfTheWrongKindOfFunction) {
  EXPECT_TRUE(
      OneError("def f(w: f64[n]) -> f64[n] { w }\n"
               "def g(w: f64[n]) -> f64[n] { grad(f, w)(w) }\n",
               2, 30,
               "cannot apply `grad` here: grad needs a function that returns a real "
               "scalar; f returns f64[n]"));
  EXPECT_TRUE(
      OneError("def f(w: f64[n]) -> i64 { 1 }\n"
               "def g(w: f64[n]) -> f64 { let (v, d) = value_and_grad(f, w)(w)\n  0.0 }\n",
               2, 40,
               "cannot apply `value_and_grad` here: value_and_grad needs a function that "
               "returns a real scalar; f returns i64"));
  EXPECT_TRUE(
      OneError("def f(w: f64[n]) -> f64[n] { w }\n"
               "def g(w: f64[n]) -> f64 { hessian(f, w)(w) }\n",
               2, 27,
               "cannot apply `hessian` here: hessian needs a function that returns a real "
               "scalar; f returns f64[n]"));
  EXPECT_TRUE(
      OneError("def f(w: f64[n]) -> bool { w[0] > 0.0 }\n"
               "def g(w: f64[n]) -> f64 { let (a, b) = jvp(f, w)(w, w)\n  0.0 }\n",
               2, 40,
               "cannot apply `jvp` here: jvp needs a function with a real result; f "
               "returns bool"));
  EXPECT_TRUE(
      OneError("def f(w: f64[n]) -> bool { w[0] > 0.0 }\n"
               "def g(w: f64[n]) -> f64[n] { vjp(f, w)(w, true) }\n",
               2, 30,
               "cannot apply `vjp` here: vjp needs a function with a real result; f "
               "returns bool"));
  EXPECT_TRUE(
      OneError("def f(w: f64[n]) -> bool[n] { for i. w[i] > 0.0 }\n"
               "def g(w: f64[n]) -> f64 { jacobian(f, w)(w) }\n",
               2, 27,
               "cannot apply `jacobian` here: jacobian needs a function that returns a "
               "real tensor; f returns bool[n]"));
  EXPECT_TRUE(
      OneError("def f(w: (f64, f64)) -> f64 { 1.0 }\n"
               "def g(w: f64) -> f64 { jacobian(f, w)((w, w)) }\n",
               2, 24,
               "cannot apply `jacobian` here: jacobian needs a tensor parameter, not a "
               "tuple"));
}

TEST(CheckerErrors, JacobianOfTwoParameters) {
  EXPECT_TRUE(
      OneError("def f(w: f64[n], v: f64[n]) -> f64[n] { w }\n"
               "def g(w: f64[n]) -> f64[n, n] { jacobian(f)(w, w) }\n",
               2, 33,
               "cannot apply `jacobian` here: jacobian differentiates with respect to "
               "exactly one parameter; name it, as in `jacobian(f, w)`"));
  EXPECT_TRUE(
      OneError("def f(w: f64[n], v: f64[n]) -> f64[n] { w }\n"
               "def g(w: f64[n]) -> f64[n, n] { jacobian(f, w, v)(w, w) }\n",
               2, 33,
               "cannot apply `jacobian` here: jacobian differentiates with respect to "
               "exactly one parameter; name it, as in `jacobian(f, w)`"));
}

TEST(CheckerErrors, DerivativeOfAnUnknownFunction) {
  EXPECT_TRUE(OneError("def g(w: f64[n]) -> f64[n] { grad(nope, w)(w) }", 1, 35,
                       "unknown function `nope`"));
  EXPECT_TRUE(OneError("def g(w: f64) -> f64 { grad(exp, w)(w) }", 1, 29, "unknown function `exp`",
                       "built-in functions cannot be passed to derivative operators; wrap it in a "
                       "`def`"));
  EXPECT_TRUE(OneError("def g(w: f64) -> f64 { jvp(grad(nope), w)(w, w) }", 1, 33,
                       "unknown function `nope`"));
}

TEST(CheckerErrors, DerivedFunctionsAreCalledLikeFunctions) {
  EXPECT_TRUE(
      OneError("def f(w: f64[n]) -> f64 { w[0] }\n"
               "def g(w: f64[n]) -> f64[n] { grad(f, w)(w, w) }\n",
               2, 30, "`grad(f, w)` takes 1 argument, but 2 were given",
               "its signature is grad(f, w)(w: f64[n]) -> f64[n]"));
  EXPECT_TRUE(
      OneError("def f(w: f64[n]) -> f64 { w[0] }\n"
               "def g(w: f64[n], u: f64[m]) -> f64[n] { grad(f, w)(u) }\n",
               2, 41, "the result of g has type f64[m], but f64[n] is expected"));
  // Without the second argument list: one error, not also "f is a function".
  EXPECT_TRUE(
      OneError("def f(w: f64[n]) -> f64 { w[0] }\n"
               "def g(w: f64[n]) -> f64 { f(w) + grad(f, w) }\n",
               2, 34, "`grad(f, w)` is a function, not a value",
               "call it with arguments, as in `grad(f, w)(...)`"));
}

const char* const kDerivatives = R"(def loss(w: f64[k], X: f64[m, k], y: f64[m]) -> f64 {
  sum r. (dot(X[r], w) - y[r]) ^ 2
}
def lin(w: f64[k], X: f64[m, k]) -> f64[m] { matvec(X, w) }
def g1(w: f64[k], X: f64[m, k], y: f64[m]) -> f64[k] { grad(loss, w)(w, X, y) }
def g2(w: f64[k], X: f64[m, k], y: f64[m]) -> (f64, f64[k]) { value_and_grad(loss, w)(w, X, y) }
def g3(w: f64[k], X: f64[m, k], y: f64[m], v: f64[k]) -> (f64, f64) { jvp(loss, w)(w, X, y, v) }
def g4(w: f64[k], X: f64[m, k], y: f64[m]) -> f64[k] { vjp(loss, w)(w, X, y, 1.0) }
def g5(w: f64[k], X: f64[m, k]) -> f64[m, k] { jacobian(lin, w)(w, X) }
def g6(w: f64[k], X: f64[m, k], y: f64[m]) -> f64[k, k] { hessian(loss, w)(w, X, y) }
def g7(w: f64[k], X: f64[m, k], y: f64[m], v: f64[k]) -> f64[k] {
  let (_, hv) = jvp(grad(loss, w), w)(w, X, y, v)
  hv
}
def g8(w: f64[k], X: f64[m, k], y: f64[m]) -> (f64[k], f64[m, k], f64[m]) { grad(loss)(w, X, y) }
def g9(w: f64[k], X: f64[m, k], y: f64[m]) -> (f64[k], f64[m]) { grad(loss, w, y)(w, X, y) }
def g10(w: f64[k], X: f64[m, k], u: f64[m]) -> f64[k] { vjp(lin, w)(w, X, u) }
)";

TEST(CheckerErrors, DerivativeOperatorsTypeCheck) {
  EXPECT_TRUE(Checks(kDerivatives));
}

// Every derivative operator evaluates (the AD stage builds the derived functions). At w = (1, 2),
// X = I, y = (1, 1): r = Xw - y = (0, 1), loss = |r|^2 = 1, grad_w = 2 X^T r = (0, 2),
// grad_X = 2 r w^T, grad_y = -2 r, hessian = 2 X^T X = 2 I.
TEST(CheckerErrors, DerivativeOperatorsEvaluate) {
  auto m = Module::from_string(kDerivatives, "test.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  const Value w = vec({1, 2}), X = mat(2, 2, {1, 0, 0, 1}), y = vec({1, 1});
  auto base = m.value().evaluate("loss", {w, X, y});
  ASSERT_TRUE(base.ok()) << base.message();
  EXPECT_EQ(base.value().as_f64(), 1.0);
  auto flat = [&](const char* fn, std::vector<Value> args) {
    auto r = m.value().evaluate(fn, args);
    EXPECT_TRUE(r.ok()) << fn << ": " << r.message();
    std::vector<double> out;
    if (!r.ok()) return out;
    std::vector<const Value*> todo{&r.value()};
    for (size_t k = 0; k < todo.size(); ++k) {
      if (todo[k]->is_tuple()) {
        for (const auto& e : todo[k]->elems()) todo.push_back(&e);
      } else {
        for (double x : todo[k]->f64_data()) out.push_back(x);
      }
    }
    return out;
  };
  using V = std::vector<double>;
  EXPECT_EQ(flat("g1", {w, X, y}), (V{0, 2}));
  EXPECT_EQ(flat("g2", {w, X, y}), (V{1, 0, 2}));
  EXPECT_EQ(flat("g3", {w, X, y, w}), (V{1, 4}));
  EXPECT_EQ(flat("g4", {w, X, y}), (V{0, 2}));
  EXPECT_EQ(flat("g5", {w, X}), (V{1, 0, 0, 1}));
  EXPECT_EQ(flat("g6", {w, X, y}), (V{2, 0, 0, 2}));
  EXPECT_EQ(flat("g7", {w, X, y, w}), (V{2, 4}));
  EXPECT_EQ(flat("g8", {w, X, y}), (V{0, 2, 0, 0, 2, 4, 0, -2}));
  EXPECT_EQ(flat("g9", {w, X, y}), (V{0, 2, 0, -2}));
  EXPECT_EQ(flat("g10", {w, X, vec({3, 5})}), (V{3, 5}));
}

// ---------------------------------------------------------------------------------------------
// Several errors at once, and no cascades

TEST(CheckerErrors, IndependentErrorsAreAllReportedInSourceOrder) {
  EXPECT_TRUE(HasErrors(
      "def a(x: f64) -> f64 { x + 1 + undefined_a }\n"
      "def b(x: f64, n: i64) -> f64 { x * n }\n"
      "def c(x: f64[n]) -> f64 { x[0, 0] }\n",
      {{1, 32, "unknown name `undefined_a`", ""},
       {2, 34, "mismatched types f64 and i64 for `*`", "convert the integer with `f64(...)`"},
       {3, 27, "too many indices: f64[n] has rank 1 but is indexed with 2", ""}}));
  // Signature errors, body errors and recursion, in one run, in source order although they
  // are found in different phases.
  EXPECT_TRUE(HasErrors(
      "def r(x: f64) -> f64 { r(x) }\n"
      "def s(x: f64[n + 1]) -> f64 { 0.0 }\n"
      "def t(x: f64) -> f64 { if x then 1.0 else 0.0 }\n",
      {{1, 24, "recursion is not allowed: `r`, which calls `r`",
        "functions cannot call themselves, directly or indirectly; use `loop` "
        "for iteration"},
       {2, 7, "size variable n cannot be determined from the arguments",
        "give some parameter a dimension that is exactly `n`"},
       {3, 27, "the condition of `if` must be a bool, found f64", "compare it, as in `x > 0.0`"}}));
  // Two independent mistakes in one expression.
  EXPECT_TRUE(HasErrors(
      "def f(x: f64) -> f64 { if x then zz else 1.0 }",
      {{1, 27, "the condition of `if` must be a bool, found f64", "compare it, as in `x > 0.0`"},
       {1, 34, "unknown name `zz`", ""}}));
}

TEST(CheckerErrors, AnUnknownNameIsReportedOnce) {
  EXPECT_TRUE(
      OneError("def f(x: f64[n]) -> f64 {\n"
               "  let y = zz + 1.0\n"
               "  let w = for i. x[i] * y\n"
               "  let v = sum i. w[i] + exp(y)\n"
               "  if v > y then v else y[0]\n"
               "}\n",
               2, 11, "unknown name `zz`"));
}

TEST(CheckerErrors, AFailedBodyDoesNotAlsoReportItsExtent) {
  EXPECT_TRUE(OneError("def f(x: f64[n]) -> f64 { sum i. zz }", 1, 34, "unknown name `zz`"));
}

TEST(CheckerErrors, AFailedArgumentIsNotAlsoAWrongArgument) {
  EXPECT_TRUE(
      OneError("def g(a: f64[n]) -> f64 { a[0] }\n"
               "def f(x: f64) -> f64 { g(zz) * 2.0 }\n",
               2, 26, "unknown name `zz`"));
  EXPECT_TRUE(
      OneError("def g(a: f64[n]) -> f64 { a[0] }\n"
               "def f(x: f64) -> f64 { g(x + zz) }\n",
               2, 30, "unknown name `zz`"));
  // Each use of an unknown name is its own error.
  EXPECT_TRUE(HasErrors("def f(x: f64) -> f64 { exp(zz) + x * zz }",
                        {{1, 28, "unknown name `zz`", ""}, {1, 38, "unknown name `zz`", ""}}));
}

TEST(CheckerErrors, ABrokenSignatureIsReportedOnceNotAtEveryCall) {
  EXPECT_TRUE(
      OneError("def g(x: f64[n + 1]) -> f64 { 0.0 }\n"
               "def f(x: f64[m]) -> f64 { g(x) + g(x, x) + grad(g)(x) }\n",
               1, 7, "size variable n cannot be determined from the arguments",
               "give some parameter a dimension that is exactly `n`"));
}

TEST(CheckerErrors, AnErrorInACalleeBodyDoesNotReachItsCallers) {
  EXPECT_TRUE(
      OneError("def g(x: f64) -> f64 { x + nope }\n"
               "def f(x: f64) -> f64 { g(x) * 2.0 }\n",
               1, 28, "unknown name `nope`"));
}

TEST(CheckerErrors, AWrongAccumDimensionIsReportedOnce) {
  EXPECT_TRUE(OneError("def f(x: f64[n], k: i64) -> f64[n] { accum[k] i. (0, x[i]) }", 1, 44,
                       "a dimension of `accum` must be a size expression"));
}

// Conversions, negations and powers of literals have their type: only plain literals adapt.
TEST(CheckerErrors, ConvertedLiteralsDoNotAdapt) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { i64(5) + 0.5 }", 1, 31,
                       "mismatched types i64 and f64 for `+`",
                       "convert the integer with `f64(...)`"));
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { -i64(5.0) + 0.5 }", 1, 34,
                       "mismatched types i64 and f64 for `+`",
                       "convert the integer with `f64(...)`"));
  EXPECT_TRUE(OneError("def f(i: i64) -> f64 { (i ^ 0) + 0.5 }", 1, 32,
                       "mismatched types i64 and f64 for `+`",
                       "convert the integer with `f64(...)`"));
  // Plain literals still adapt, negated or raised to a power.
  EXPECT_EQ(Eval("def f(x: f64) -> f64 { x + -2 + 2 ^ 3 }", "f", {Value::f64(1.0)}).as_f64(), 7.0);
}

TEST(CheckerErrors, DerivativeOperatorsNestAtMostEightDeep) {
  std::string op = "f";
  for (int k = 0; k < 9; ++k) op = "jvp(" + op + ")";
  auto m = Module::from_string(
      "def f(x: f64) -> f64 { x }\ndef g(x: f64) -> f64 { " + op + "(x) }\n", "deep.cot");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.errors()[0].message,
            "derivative operators nest 9 deep here; at most 8 are supported");
}

TEST(CheckerErrors, AnIversonBracketIsNotACondition) {
  EXPECT_TRUE(OneError("def f(x: f64) -> f64 { if [x > 0.0] then x else 0.0 }", 1, 27,
                       "the condition of `if` must be a bool, found f64",
                       "`[c]` is the number 1 or 0; write the condition without the brackets"));
}

}  // namespace COTANGENT_TEST_UNIT
