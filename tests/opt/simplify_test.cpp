// Algebraic simplification with symbolic zeros (src/opt/simplify.h): constant folding exactly as
// the interpreter computes (f32 in f32; i64 overflow and division by zero left to fail at run
// time), identities, strong zeros, projections of tuples and ifs with literal conditions. Each
// test runs the pass (verified, postcondition checked), checks the printed form, and compares
// values and op counts with the interpreter before and after.
#include "opt/simplify.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "ir/builder.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::Value;
using opt_test::compile;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;

ir::Program simplify(const ir::Program& p, const std::string& fn) {
  return opt_test::run_pass(p, fn, opt::simplify_algebra, opt::simplify_postcondition);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// A program holding one function built in code (for primitives the surface language folds or
// does not spell).
ir::Program program_of(ir::Function f) {
  ir::Program p;
  p.sources = std::make_shared<SourceManager>();
  p.functions.push_back(std::move(f));
  return p;
}

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(OptSimplify, identities) {
  ir::Program p = compile(R"(
def ids(x: f64, k: i64, b: bool) -> (f64, f64, f64, f64, i64, bool, f64) {
  (x + 0.0, 0.0 - x, --x, x / 1.0, 0 + k * 1, !!b || false, 0.0 * x)
}
)");
  ir::Program q = simplify(p, "ids");
  const std::string out = printed(q, "ids");
  EXPECT_TRUE(contains(out, "let t4 = -x\n")) << out;             // 0 - x -> -x
  EXPECT_TRUE(contains(out, "(x, t4, x, x, k, b, t13)")) << out;  // the rest -> x, k, b
  EXPECT_TRUE(contains(out, "let t13 = 0.0 * x\n")) << out;       // an ordinary zero
  for (double x : {-2.5, 0.0, 3.0, kNaN, kInf}) {
    for (bool b : {false, true}) {
      expect_same_values(p, q, "ids", {Value::f64(x), Value::i64(-7), Value::boolean(b)});
    }
  }
  // x + 0, 0 - x, -x, -(-x), x / 1 and 0 * x cost 6; -x (twice, one dead) and 0 * x cost 3.
  const std::vector<Value> args = {Value::f64(1.5), Value::i64(2), Value::boolean(true)};
  EXPECT_EQ(run(p, "ids", args).ops, 6);
  EXPECT_EQ(run(q, "ids", args).ops, 3);
}

// 0.0 * NaN is NaN: an ordinary literal zero never absorbs a product.
TEST(OptSimplify, ordinary_zero_times_nan_stays_nan) {
  ir::Program p = compile(R"(
def z(x: f64) -> f64 { 0.0 * x + x * 0.0 }
)");
  ir::Program q = simplify(p, "z");
  EXPECT_TRUE(contains(printed(q, "z"), "0.0 * x")) << printed(q, "z");
  EXPECT_TRUE(contains(printed(q, "z"), "x * 0.0")) << printed(q, "z");
  auto r = run(q, "z", {Value::f64(kNaN)});
  ASSERT_TRUE(r.ok);
  EXPECT_TRUE(std::isnan(r.values[0]));
  expect_same_values(p, q, "z", {Value::f64(kInf)});
}

// Folding computes as the interpreter does: reals on f32 in f32, i64 exactly; overflow and
// division by zero stay in the program so the run-time error stays.
TEST(OptSimplify, constant_folding) {
  ir::Function f;
  f.name = "fold";
  ir::Builder b(f);
  const ir::VarId x = b.param("x", Type::scalar(Scalar::F32));
  const ir::VarId k = b.param("k", Type::scalar(Scalar::I64));
  const auto f32 = [](double v) { return ir::Atom::real(v, Scalar::F32); };
  const ir::VarId s = b.prim(Prim::Add, {f32(0.1), f32(0.2)});  // in f32
  const ir::VarId e = b.prim(Prim::Exp, {f32(0.5)});            // expf
  const ir::VarId m = b.prim(Prim::Mul, {ir::Atom::of(x), ir::Atom::of(s)});
  const ir::VarId m2 = b.prim(Prim::Add, {ir::Atom::of(m), ir::Atom::of(e)});
  const ir::VarId d = b.prim(Prim::Div, {ir::Atom::real(1.0), ir::Atom::real(0.0)});  // inf
  const ir::VarId i = b.prim(Prim::Mul, {ir::Atom::i64(6), ir::Atom::i64(7)});
  const ir::VarId c = b.prim(Prim::Lt, {ir::Atom::of(i), ir::Atom::i64(43)});
  const ir::VarId sel = b.prim(Prim::Select, {ir::Atom::of(c), ir::Atom::of(k), ir::Atom::i64(0)});
  const ir::VarId cv = b.prim(Prim::ToF64, {ir::Atom::of(i)});
  const ir::VarId sum = b.prim(Prim::Add, {ir::Atom::of(cv), ir::Atom::of(d)});
  b.finish({ir::Atom::of(m2), ir::Atom::of(sel), ir::Atom::of(sum)});
  ir::Program p = program_of(f);
  ir::Program q = simplify(p, "fold");
  const std::string out = printed(q, "fold");
  EXPECT_FALSE(contains(out, "0.1")) << out;
  EXPECT_FALSE(contains(out, "exp")) << out;
  EXPECT_FALSE(contains(out, "select")) << out;
  EXPECT_FALSE(contains(out, "6 * 7")) << out;
  for (float xv : {1.0f, -3.25f, 1e20f}) {
    auto before = run(p, "fold", {Value::f32(xv), Value::i64(5)});
    auto after = run(q, "fold", {Value::f32(xv), Value::i64(5)});
    ASSERT_TRUE(before.ok && after.ok) << before.error << after.error;
    // Bit-identical, not merely close: an f64 evaluation of 0.1 + 0.2 would differ here.
    EXPECT_EQ(before.values, after.values) << out;
    EXPECT_LT(after.ops, before.ops);
  }

  ir::Program bad = compile(R"(
def ov(k: i64) -> i64 { 9223372036854775807 + 1 + k }
def dz(k: i64) -> i64 { 7 // 0 + k }
def conv(x: f64) -> i64 { i64(0.0 / 0.0) }
)");
  for (const char* fn : {"ov", "dz", "conv"}) {
    ir::Program after = simplify(bad, fn);
    const std::vector<Value> args = {std::string(fn) == "conv" ? Value::f64(1) : Value::i64(1)};
    auto r0 = run(bad, fn, args), r1 = run(after, fn, args);
    EXPECT_FALSE(r0.ok) << fn;
    EXPECT_FALSE(r1.ok) << fn << ": the run-time error was folded away\n" << printed(after, fn);
    EXPECT_EQ(r0.error, r1.error);
  }
  EXPECT_TRUE(contains(printed(simplify(bad, "ov"), "ov"), "9223372036854775807 + 1"));
}

// Strong zeros (docs/language.md §5.6): adding one is the other operand; a product with one is one
// (masks propagate), except for a sum of zeros, whose range may be empty: an empty sum times
// NaN is NaN.
TEST(OptSimplify, symbolic_zeros) {
  ir::Program p = compile(R"(
def sz(x: f64, y: f64[n]) -> (f64, f64, f64, f64, f64, f64) {
  let z = [false] * x
  let w = [n > 100] * ([false] * x)
  let s = sum i. [false] * y[i]
  (z + x, z * x, x - w, -s + x, x * w, s * x)
}
)");
  ir::Program q = simplify(p, "sz");
  const std::string out = printed(q, "sz");
  EXPECT_TRUE(contains(out, "(x, z, x, x, w, ")) << out;
  EXPECT_TRUE(contains(out, "s * x")) << out;
  for (double x : {-2.5, 0.0, 3.0, std::nan(""), HUGE_VAL}) {
    for (int64_t n : {0, 4}) {
      expect_same_values(p, q, "sz", {Value::f64(x), Value::zeros(cotangent::DType::F64, {n})});
    }
  }
  // The empty sum times NaN is NaN; the strong zero times NaN is 0.
  auto empty = run(q, "sz", {Value::f64(std::nan("")), Value::zeros(cotangent::DType::F64, {0})});
  ASSERT_TRUE(empty.ok) << empty.error;
  EXPECT_EQ(empty.values.at(1), 0.0);
  EXPECT_TRUE(std::isnan(empty.values.at(5)));
  const std::vector<Value> args = {Value::f64(2), Value::zeros(cotangent::DType::F64, {3})};
  // z * x, -s, x * w, s * x (adding z or -s, strong zeros, is free).
  EXPECT_EQ(run(p, "sz", args).ops, 4);
  EXPECT_EQ(run(q, "sz", args).ops, 1);  // s * x
}

// Pair elimination at the atom level ([Bernstein20] 5.11) and ifs with literal conditions.
TEST(OptSimplify, projections_and_literal_ifs) {
  ir::Program p = compile(R"(
def tup(x: f64) -> f64 {
  let t = (x, 2.0 * x)
  let (a, b) = t
  if true then a + b else a - b
}
def cond(x: f64) -> f64 {
  if 3 < 4 && x > 0.0 then x else -x
}
)");
  ir::Program q = simplify(p, "tup");
  EXPECT_EQ(printed(q, "tup"),
            "def tup(x: f64) -> f64 {\n"
            "  let b = 2.0 * x\n"
            "  let t3 = x + b\n"
            "  t3\n"
            "}\n");
  ir::Program r = simplify(p, "cond");
  EXPECT_FALSE(contains(printed(r, "cond"), "3 < 4")) << printed(r, "cond");
  for (double x : {-1.0, 0.0, 2.0}) {
    expect_same_values(p, q, "tup", {Value::f64(x)});
    expect_same_values(p, r, "cond", {Value::f64(x)});
  }
}

// Booleans, selects and conversions built in code: b && true, b || true, select(true, a, b),
// f64 of an f64.
TEST(OptSimplify, boolean_select_and_conversion_identities) {
  ir::Function f;
  f.name = "bs";
  ir::Builder b(f);
  const ir::VarId x = b.param("x", Type::scalar(Scalar::F64));
  const ir::VarId c = b.param("c", Type::scalar(Scalar::Bool));
  const ir::VarId a1 = b.prim(Prim::And, {ir::Atom::of(c), ir::Atom::boolean(true)});
  const ir::VarId o1 = b.prim(Prim::Or, {ir::Atom::of(a1), ir::Atom::boolean(true)});
  const ir::VarId s1 = b.prim(Prim::Select, {ir::Atom::of(o1), ir::Atom::of(x), ir::Atom::real(2)});
  const ir::VarId s2 =
      b.prim(Prim::Select, {ir::Atom::of(a1), ir::Atom::of(s1), ir::Atom::real(2)});
  const ir::VarId cv = b.prim(Prim::ToF64, {ir::Atom::of(s2)});
  b.finish({ir::Atom::of(cv)});
  ir::Program p = program_of(f);
  ir::Program q = simplify(p, "bs");
  EXPECT_EQ(printed(q, "bs"),
            "def bs(x: f64, c: bool) -> f64 {\n"
            "  let t5 = if c then x else 2.0\n"
            "  t5\n"
            "}\n");
  for (bool cv2 : {false, true}) {
    expect_same_values(p, q, "bs", {Value::f64(1.5), Value::boolean(cv2)});
  }
}

// Rules apply inside regions too, and affine uses of a folded i64 fold into the index.
TEST(OptSimplify, inside_regions_and_indices) {
  ir::Program p = compile(R"(
def reg(x: f64[n]) -> f64[n] {
  for i. {
    let k = 1 * 2
    [i + k < n] * (x[i] * 1.0 + 0.0)
  }
}
)");
  ir::Program q = simplify(p, "reg");
  const std::string out = printed(q, "reg");
  EXPECT_FALSE(contains(out, "1.0")) << out;
  EXPECT_FALSE(contains(out, "0.0")) << out;
  for (int64_t n : {0, 1, 5}) {
    Value x = Value::zeros(cotangent::DType::F64, {n});
    auto d = x.f64_mut();
    for (int64_t k = 0; k < n; ++k) d[static_cast<size_t>(k)] = 0.5 * static_cast<double>(k) - 1;
    expect_same_values(p, q, "reg", {x});
  }
}

// 0 * x on i64 is 0 whatever x: exact, it cannot overflow (x is already computed). Reverse mode
// writes an index as `0 * k + j`, which then reads as j (opt/scatter.h matches it).
TEST(OptSimplify, integer_zero_times_x_is_zero) {
  ir::Program p = compile(R"(
def zk(k: i64, x: f64[n]) -> (i64, i64, f64[n]) {
  (0 * k, k * 0 + k, for j: n. { let t = 0 * k + j
                                 x[t] })
}
)");
  ir::Program q = simplify(p, "zk");
  const std::string out = printed(q, "zk");
  EXPECT_FALSE(contains(out, "0 * k")) << out;
  EXPECT_FALSE(contains(out, "k * 0")) << out;
  EXPECT_TRUE(contains(out, "x[j]")) << out;  // the read became affine again
  for (int64_t k : {int64_t{0}, int64_t{-3}, std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::min()}) {
    auto a = run(p, "zk", {Value::i64(k), opt_test::curve(4)});
    auto b = run(q, "zk", {Value::i64(k), opt_test::curve(4)});
    ASSERT_TRUE(a.ok) << a.error;
    ASSERT_TRUE(b.ok) << b.error;
    EXPECT_EQ(a.values, b.values);  // bit-exact: integers and copies of x
    EXPECT_EQ(b.values[0], 0.0);
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
