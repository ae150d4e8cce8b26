// The worked examples of [Radul23] ("You Only Linearize Once", design.md §References): Ex1 is
// its running example (Figs. 6, 9, 10), Ex2 the indexed-linear function of §4.1, Ex4 the
// amortization example of §7.2; Ex5..Ex12 are ours, one per rule they exercise. The paper's
// functions are written as ordinary (non-linear) functions of our language; its JVPs are `jvp`,
// and the transposed linear maps (gradients, VJPs) are `vjp` and `grad`. Expected numbers are
// closed forms.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ad/fd_harness.h"

namespace cotangent::adtest {
namespace COTANGENT_TEST_UNIT {

using Vec = std::vector<double>;

constexpr const char* kF = R"(
def f(u: f64) -> f64 {
  let v = sin(u)
  let w = -v
  w
}
)";

TEST(AdExamples004, Ex1_running_example_negative_sine) {
  constexpr const char* derived = R"(
def f_jvp(u: f64, du: f64) -> (f64, f64) { jvp(f)(u, du) }
def f_vjp(u: f64, ct: f64) -> f64 { vjp(f)(u, ct) }
def f_grad(u: f64) -> f64 { grad(f)(u) }
)";
  AD_LOAD_EXAMPLE(kF, derived);
  const Value u = Value::f64(0.5);
  auto v = P.evaluate("f", {u});
  ASSERT_TRUE(v.ok()) << v.message();
  EXPECT_NEAR(v.value().as_f64(), -0.479425538604203, 1e-15);
  EXPECT_TRUE(FdGradientEquals(P, "f", {u}, {0}, {-0.8775825618903728}));
  EXPECT_TRUE(
      DerivedEquals(M, "f_jvp", {u, Value::f64(1.0)}, {-0.479425538604203, -0.8775825618903728}));
  EXPECT_TRUE(DerivedEquals(M, "f_vjp", {u, Value::f64(1.0)}, {-0.8775825618903728}));
  EXPECT_TRUE(DerivedEquals(M, "f_grad", {u}, {-0.8775825618903728}));
}

TEST(AdExamples004, Ex2_indexed_linear_function) {
  constexpr const char* primal = R"(
def g(x: f64, y: f64) -> (f64, f64) {
  let a = x * x
  (a, a * y)
}
)";
  constexpr const char* derived = R"(
def g_lin_t(x: f64, y: f64, bb: f64) -> f64 { vjp(g, y)(x, y, (0.0, bb)) }
def g_jvp_y(x: f64, y: f64, dy: f64) -> ((f64, f64), (f64, f64)) { jvp(g, y)(x, y, dy) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  // g(3; 2) = (9; 18); g.lin^T(⊗(9); 1) = 9.
  auto v = P.evaluate("g", {Value::f64(3), Value::f64(2)});
  ASSERT_TRUE(v.ok()) << v.message();
  EXPECT_TRUE(ValueNear(v.value(), {9, 18}, 0.0));
  EXPECT_TRUE(DerivedEquals(M, "g_lin_t", {Value::f64(3), Value::f64(2), Value::f64(1)}, {9}));
  EXPECT_TRUE(
      DerivedEquals(M, "g_jvp_y", {Value::f64(3), Value::f64(2), Value::f64(1)}, {9, 18, 0, 9}));
}

TEST(AdExamples004, Ex4_fan_out_amortization) {
  constexpr const char* primal = R"(
def fan(x: f64) -> (f64, f64, f64) { (x, x, x) }
)";
  constexpr const char* derived = R"(
def fan_t(x: f64, c: (f64, f64, f64)) -> f64 { vjp(fan)(x, c) }
def fan_d(x: f64, dx: f64) -> ((f64, f64, f64), (f64, f64, f64)) { jvp(fan)(x, dx) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  // <ẋ, ä + b̈ + c̈> = <(ẋ, ẋ, ẋ), (ä, b̈, c̈)>
  const Value c = Value::tuple({Value::f64(1.5), Value::f64(-2.0), Value::f64(0.25)});
  EXPECT_TRUE(DerivedEquals(M, "fan_t", {Value::f64(4.0), c}, {-0.25}));
  EXPECT_TRUE(
      DerivedEquals(M, "fan_d", {Value::f64(4.0), Value::f64(0.5)}, {4, 4, 4, 0.5, 0.5, 0.5}));
}

TEST(AdExamples004, Ex5_square_with_a_repeated_argument) {
  constexpr const char* primal = R"(
def sq(x: f64) -> f64 { x * x }
)";
  constexpr const char* derived = R"(
def sq_vg(x: f64) -> (f64, f64) { value_and_grad(sq)(x) }
def sq_jvp(x: f64, dx: f64) -> (f64, f64) { jvp(sq)(x, dx) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  EXPECT_TRUE(FdGradientEquals(P, "sq", {Value::f64(3)}, {0}, {6}));
  EXPECT_TRUE(DerivedEquals(M, "sq_vg", {Value::f64(3)}, {9, 6}));
  EXPECT_TRUE(DerivedEquals(M, "sq_jvp", {Value::f64(3), Value::f64(0.5)}, {9, 3}));
}

TEST(AdExamples004, Ex6_variable_shared_by_a_let_and_its_body) {
  constexpr const char* primal = R"(
def h(x: f64) -> f64 {
  let y = sin(x)
  let z = y * x
  z
}
)";
  constexpr const char* derived = R"(
def h_vg(x: f64) -> (f64, f64) { value_and_grad(h)(x) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  EXPECT_TRUE(FdGradientEquals(P, "h", {Value::f64(0.5)}, {0}, {0.9182168195493894}));
  EXPECT_TRUE(
      DerivedEquals(M, "h_vg", {Value::f64(0.5)}, {0.2397127693021015, 0.9182168195493894}));
}

TEST(AdExamples004, Ex7_tuple_parameter) {
  constexpr const char* primal = R"(
def m(p: (f64, f64)) -> f64 {
  let (a, b) = p
  a * b
}
)";
  constexpr const char* derived = R"(
def m_grad(p: (f64, f64)) -> (f64, f64) { grad(m)(p) }
def m_jvp(p: (f64, f64), dp: (f64, f64)) -> (f64, f64) { jvp(m)(p, dp) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Value p = Value::tuple({Value::f64(2), Value::f64(5)});
  EXPECT_TRUE(FdGradientEquals(P, "m", {p}, {0}, {5, 2}));
  auto r = M.evaluate("m_grad", {p});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().type_string(), "(f64, f64)");
  EXPECT_TRUE(ValueNear(r.value(), {5, 2}, kExactTol));
  EXPECT_TRUE(
      DerivedEquals(M, "m_jvp", {p, Value::tuple({Value::f64(1), Value::f64(-1)})}, {10, 3}));
}

TEST(AdExamples004, Ex8_dead_input) {
  constexpr const char* primal = R"(
def d(x: f64, y: f64) -> f64 { sin(x) }
)";
  constexpr const char* derived = R"(
def d_vg(x: f64, y: f64) -> (f64, (f64, f64)) { value_and_grad(d)(x, y) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const std::vector<Value> args = {Value::f64(0.5), Value::f64(7)};
  EXPECT_TRUE(FdGradientEquals(P, "d", args, {0, 1}, {0.8775825618903728, 0}));
  EXPECT_TRUE(DerivedEquals(M, "d_vg", args, {0.479425538604203, 0.8775825618903728, 0}));
}

TEST(AdExamples004, Ex9_function_calls_and_nested_tapes) {
  constexpr const char* derived = R"(
def k(x: f64) -> f64 {
  let a = f(x)
  let b = f(a)
  b
}
def k_vg(x: f64) -> (f64, f64) { value_and_grad(k)(x) }
def k_jvp(x: f64, dx: f64) -> (f64, f64) { jvp(k)(x, dx) }
)";
  AD_LOAD_EXAMPLE(kF, derived);
  // k(x) = f(f(x)) = sin(sin x); grad cos(sin x) cos x.
  EXPECT_TRUE(
      DerivedEquals(M, "k_vg", {Value::f64(0.5)}, {0.4612695550331807, 0.7786439483717796}));
  EXPECT_TRUE(DerivedEquals(M, "k_jvp", {Value::f64(0.5), Value::f64(2.0)},
                            {0.4612695550331807, 2 * 0.7786439483717796}));
  EXPECT_NEAR(std::cos(std::sin(0.5)) * std::cos(0.5), 0.7786439483717796, 1e-15);
  EXPECT_TRUE(FdGradientEquals(M, "k", {Value::f64(0.5)}, {0}, {0.7786439483717796}));
}

TEST(AdExamples004, Ex10_sine_of_sine_checkpointing) {
  constexpr const char* primal = R"(
def s(x: f64) -> f64 { sin(sin(x)) }
)";
  constexpr const char* derived = R"(
def s_grad(x: f64) -> f64 { grad(s)(x) }
def s_vjp(x: f64, ct: f64) -> f64 { vjp(s)(x, ct) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  EXPECT_TRUE(FdGradientEquals(P, "s", {Value::f64(0.5)}, {0}, {0.7786439483717796}));
  EXPECT_TRUE(DerivedEquals(M, "s_grad", {Value::f64(0.5)}, {0.7786439483717796}));
  EXPECT_TRUE(
      DerivedEquals(M, "s_vjp", {Value::f64(0.5), Value::f64(-3.0)}, {-3 * 0.7786439483717796}));
}

TEST(AdExamples004, Ex11_tuple_variable_also_returned) {
  constexpr const char* primal = R"(
def q(p: (f64, f64)) -> (f64, (f64, f64)) {
  let (a, b) = p
  (a * b, p)
}
)";
  constexpr const char* derived = R"(
def q_t(p: (f64, f64), c: (f64, (f64, f64))) -> (f64, f64) { vjp(q)(p, c) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  // p = (2, 5), cotangents (1, (10, 100)) -> (5 + 10, 2 + 100)
  const Value p = Value::tuple({Value::f64(2), Value::f64(5)});
  const Value c = Value::tuple({Value::f64(1), Value::tuple({Value::f64(10), Value::f64(100)})});
  auto J = fd_jacobian(P, "q", {p}, {0});
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_TRUE(RealsNear(J.value().transpose_times({1, 10, 100}), {15, 102}, kFdTol));
  EXPECT_TRUE(DerivedEquals(M, "q_t", {p, c}, {15, 102}));
}

TEST(AdExamples004, Ex12_transposing_a_linear_function) {
  // y = [[a, b], [0, a]] x; its transpose computes [[a, 0], [b, a]] ÿ.
  constexpr const char* primal = R"(
def lin(a: f64, b: f64, x: (f64, f64)) -> (f64, f64) {
  let (x1, x2) = x
  (a * x1 + b * x2, a * x2)
}
)";
  constexpr const char* derived = R"(
def lin_t(a: f64, b: f64, x: (f64, f64), y: (f64, f64)) -> (f64, f64) { vjp(lin, x)(a, b, x, y) }
def lin_d(a: f64, b: f64, x: (f64, f64), dx: (f64, f64)) -> ((f64, f64), (f64, f64)) {
  jvp(lin, x)(a, b, x, dx)
}
def lin_tt(a: f64, b: f64, y: (f64, f64), x: (f64, f64)) -> (f64, f64) {
  vjp(lin_t, y)(a, b, (0.0, 0.0), y, x)
}
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Value a = Value::f64(2), b = Value::f64(3);
  const Value x = Value::tuple({Value::f64(5), Value::f64(7)});
  const Value yb = Value::tuple({Value::f64(1), Value::f64(10)});
  auto v = P.evaluate("lin", {a, b, x});
  ASSERT_TRUE(v.ok()) << v.message();
  EXPECT_TRUE(ValueNear(v.value(), {31, 14}, 0.0));
  EXPECT_TRUE(DerivedEquals(M, "lin_t", {a, b, x, yb}, {2, 23}));
  EXPECT_TRUE(DerivedEquals(M, "lin_d", {a, b, x, x}, {31, 14, 31, 14}));
  // Dot test: <ẋ, ẍ> = 171 = <ẏ, ÿ>.
  EXPECT_EQ(5 * 2 + 7 * 23, 171);
  EXPECT_EQ(31 * 1 + 14 * 10, 171);
  // Transposing the transpose gives the original map back (Corollary 7.2).
  EXPECT_TRUE(DerivedEquals(M, "lin_tt", {a, b, yb, x}, {31, 14}));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::adtest
