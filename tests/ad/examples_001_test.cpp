// The worked examples of [HuotShaikhha] (unary normal form, purely functional reverse mode;
// design.md §References), numbered E1..E16 here: E1 is its §2.3, E2 Examples 1.1/3.1/5.2, E3..E5
// the prod, sum and dot of Example 1.2, E6 Examples 4.1/4.2, E7 Prop. A.3, E8 Prop. A.1; E9..E16
// are ours, beyond the paper. `reduce` and `foldl` are written as `loop ... for t < n`, `map2` as
// a generator. Expected values are closed forms; each is also checked against finite differences
// of the primal program.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ad/fd_harness.h"

namespace cotangent::adtest {
namespace COTANGENT_TEST_UNIT {

using Vec = std::vector<double>;

TEST(AdExamples001, E1_naive_reverse_mode_exp_cos) {
  // x1..xn ⊢ exp(cos(x_i)): slot i is -sin(x_i) exp(cos(x_i)), the others 0. The slot is read
  // with a computed index.
  constexpr const char* primal = R"(
def e1(x: f64[n], i: i64) -> f64 { exp(cos(x[i])) }
)";
  constexpr const char* derived = R"(
def d_e1(x: f64[n], i: i64) -> f64[n] { grad(e1)(x, i) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const Vec x = {1.0, 0.3, -2.0, 0.5};
  const double slot = -std::sin(0.3) * std::exp(std::cos(0.3));
  EXPECT_NEAR(slot, -0.76822, 5e-6);  // by hand
  const std::vector<Value> args = {f64_vector(x), Value::i64(1)};
  EXPECT_TRUE(FdGradientEquals(P, "e1", args, {0}, {0, slot, 0, 0}));
  EXPECT_TRUE(DerivedEquals(M, "d_e1", args, {0, slot, 0, 0}));
}

TEST(AdExamples001, E2_first_order_term) {
  constexpr const char* primal = R"(
def e2(x1: f64, x2: f64, x3: f64) -> f64 {
  let w1 = x1 * x2
  let w2 = w1 * x1
  w2
}
)";
  constexpr const char* derived = R"(
def d_e2(x1: f64, x2: f64, x3: f64) -> (f64, (f64, f64, f64)) { value_and_grad(e2)(x1, x2, x3) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const std::vector<Value> args = {Value::f64(2), Value::f64(3), Value::f64(5)};
  EXPECT_TRUE(FdGradientEquals(P, "e2", args, {0, 1, 2}, {12, 4, 0}));
  EXPECT_TRUE(DerivedEquals(M, "d_e2", args, {12, 12, 4, 0}));
}

constexpr const char* kReduce = R"(
def prod(A: f64[n]) -> f64 { loop p = 1.0 for t < n { p * A[t] } }
def total(A: f64[n]) -> f64 { loop s = 0.0 for t < n { s + A[t] } }
def dot_loop(A: f64[n], B: f64[n]) -> f64 {
  let C = for i. A[i] * B[i]
  loop s = 0.0 for t < n { s + C[t] }
}
)";

constexpr const char* kReduceDerived = R"(
def d_prod(A: f64[n]) -> (f64, f64[n]) { value_and_grad(prod)(A) }
def d_total(A: f64[n]) -> f64[n] { grad(total)(A) }
def d_dot(A: f64[n], B: f64[n]) -> (f64, (f64[n], f64[n])) { value_and_grad(dot_loop)(A, B) }
)";

TEST(AdExamples001, E3_prod) {
  AD_LOAD_EXAMPLE(kReduce, kReduceDerived);
  // Exclusive prefix products times exclusive suffix products; no division.
  EXPECT_TRUE(FdGradientEquals(P, "prod", {f64_vector({2, 3, 4})}, {0}, {12, 8, 6}));
  EXPECT_TRUE(DerivedEquals(M, "d_prod", {f64_vector({2, 3, 4})}, {24, 12, 8, 6}));
  EXPECT_TRUE(FdGradientEquals(P, "prod", {f64_vector({2, 0, 4})}, {0}, {0, 8, 0}));
  EXPECT_TRUE(DerivedEquals(M, "d_prod", {f64_vector({2, 0, 4})}, {0, 0, 8, 0}));
  EXPECT_TRUE(DerivedEquals(M, "d_prod", {f64_vector({5})}, {5, 1}));
}

TEST(AdExamples001, E4_sum) {
  AD_LOAD_EXAMPLE(kReduce, kReduceDerived);
  EXPECT_TRUE(FdGradientEquals(P, "total", {f64_vector({1, 2, 3})}, {0}, {1, 1, 1}));
  EXPECT_TRUE(DerivedEquals(M, "d_total", {f64_vector({1, 2, 3})}, {1, 1, 1}));
}

TEST(AdExamples001, E5_dot) {
  AD_LOAD_EXAMPLE(kReduce, kReduceDerived);
  const std::vector<Value> args = {f64_vector({1, 2, 3}), f64_vector({4, 5, 6})};
  EXPECT_TRUE(FdGradientEquals(P, "dot_loop", args, {0, 1}, {4, 5, 6, 1, 2, 3}));
  EXPECT_TRUE(DerivedEquals(M, "d_dot", args, {32, 4, 5, 6, 1, 2, 3}));
}

TEST(AdExamples001, E6_unary_normal_form_pair) {
  // OP1(cos); PAIR: (x1, x2, x3) -> (x1, x2, (x3, cos x3)); its continuation maps
  // (c1, c2, (p1, p2)) to (c1, c2, p1 - sin(x3) p2).
  constexpr const char* primal = R"(
def unf(x1: f64, x2: f64, x3: f64) -> (f64, f64, (f64, f64)) { (x1, x2, (x3, cos(x3))) }
)";
  constexpr const char* derived = R"(
def k_unf(x1: f64, x2: f64, x3: f64, c: (f64, f64, (f64, f64))) -> (f64, f64, f64) {
  vjp(unf)(x1, x2, x3, c)
}
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const double x3 = 0.8, c1 = 1.5, c2 = -2.0, p1 = 0.25, p2 = 3.0;
  const std::vector<Value> args = {Value::f64(0.1), Value::f64(0.2), Value::f64(x3)};
  const Vec expected = {c1, c2, p1 - std::sin(x3) * p2};
  auto J = fd_jacobian(P, "unf", args, {0, 1, 2});
  ASSERT_TRUE(J.ok()) << J.message();
  EXPECT_TRUE(RealsNear(J.value().transpose_times({c1, c2, p1, p2}), expected, kFdTol));
  const Value c = Value::tuple(
      {Value::f64(c1), Value::f64(c2), Value::tuple({Value::f64(p1), Value::f64(p2)})});
  EXPECT_TRUE(DerivedEquals(M, "k_unf", {args[0], args[1], args[2], c}, expected));
}

TEST(AdExamples001, E7_reduce_unrolled_associative_body) {
  // x ⊙ y = x + y + x y, unit 0: A = [1, 2, 3] gives 23 and gradient prod_{j != i}(1 + a_j).
  constexpr const char* primal = R"(
def circ(A: f64[n]) -> f64 { loop s = 0.0 for t < n { s + A[t] + s * A[t] } }
)";
  constexpr const char* derived = R"(
def d_circ(A: f64[n]) -> (f64, f64[n]) { value_and_grad(circ)(A) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  EXPECT_TRUE(FdGradientEquals(P, "circ", {f64_vector({1, 2, 3})}, {0}, {12, 8, 6}));
  EXPECT_TRUE(DerivedEquals(M, "d_circ", {f64_vector({1, 2, 3})}, {23, 12, 8, 6}));
}

TEST(AdExamples001, E8_map2_one_hot_vjp) {
  // t = map2 (x, y. θ x sin y + y^2) A B; the VJP with a one-hot cotangent at i is the gradient
  // of the body at (a_i, b_i), in slot i, and its θ-derivative.
  constexpr const char* primal = R"(
def map2(theta: f64, A: f64[n], B: f64[n]) -> f64[n] {
  for i. theta * A[i] * sin(B[i]) + B[i] ^ 2
}
)";
  constexpr const char* derived = R"(
def v_map2(theta: f64, A: f64[n], B: f64[n], Z: f64[n]) -> (f64, f64[n], f64[n]) {
  vjp(map2)(theta, A, B, Z)
}
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const double th = 1.5;
  const Vec A = {0.5, -1.0, 2.0}, B = {0.3, 1.2, -0.7};
  const std::vector<Value> args = {Value::f64(th), f64_vector(A), f64_vector(B)};
  auto J = fd_jacobian(P, "map2", args, {0, 1, 2});
  ASSERT_TRUE(J.ok()) << J.message();
  for (size_t i = 0; i < 3; ++i) {
    SCOPED_TRACE("one-hot at " + std::to_string(i));
    Vec Z(3, 0.0);
    Z[i] = 1.0;
    Vec expected(7, 0.0);
    expected[0] = A[i] * std::sin(B[i]);
    expected[1 + i] = th * std::sin(B[i]);
    expected[4 + i] = th * A[i] * std::cos(B[i]) + 2 * B[i];
    EXPECT_TRUE(RealsNear(J.value().transpose_times(Z), expected, kFdTol));
    EXPECT_TRUE(DerivedEquals(M, "v_map2", {args[0], args[1], args[2], f64_vector(Z)}, expected));
  }
}

TEST(AdExamples001, E9_map2_body_with_a_free_variable) {
  constexpr const char* primal = R"(
def e9(theta: f64, A: f64[n], B: f64[n]) -> f64 { sum i. theta * A[i] * B[i] }
)";
  constexpr const char* derived = R"(
def d_e9(theta: f64, A: f64[n], B: f64[n]) -> (f64, (f64, f64[n], f64[n])) {
  value_and_grad(e9)(theta, A, B)
}
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const std::vector<Value> args = {Value::f64(2), f64_vector({1, 2, 3}), f64_vector({4, 5, 6})};
  EXPECT_TRUE(FdGradientEquals(P, "e9", args, {0, 1, 2}, {32, 8, 10, 12, 2, 4, 6}));
  EXPECT_TRUE(DerivedEquals(M, "d_e9", args, {64, 32, 8, 10, 12, 2, 4, 6}));
}

TEST(AdExamples001, E10_nested_array_operation_and_hoisted) {
  constexpr const char* primal = R"(
def e10(A: f64[n], W: f64[k]) -> f64 { sum i. A[i] * (sum j. W[j]) }
def e10_hoisted(A: f64[n], W: f64[k]) -> f64 {
  let s = sum j. W[j]
  sum i. A[i] * s
}
)";
  constexpr const char* derived = R"(
def d_e10(A: f64[n], W: f64[k]) -> (f64, (f64[n], f64[k])) { value_and_grad(e10)(A, W) }
def d_e10_hoisted(A: f64[n], W: f64[k]) -> (f64, (f64[n], f64[k])) {
  value_and_grad(e10_hoisted)(A, W)
}
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const std::vector<Value> args = {f64_vector({1, 2}), f64_vector({3, 4, 5})};
  for (const char* fn : {"e10", "e10_hoisted"}) {
    EXPECT_TRUE(FdGradientEquals(P, fn, args, {0, 1}, {12, 12, 3, 3, 3})) << fn;
    EXPECT_TRUE(DerivedEquals(M, std::string("d_") + fn, args, {36, 12, 12, 3, 3, 3}));
  }
}

TEST(AdExamples001, E11_foldl) {
  constexpr const char* primal = R"(
def fold(v: f64, A: f64[n]) -> f64 { loop p = v for t < n { p * A[t] } }
)";
  constexpr const char* derived = R"(
def d_fold(v: f64, A: f64[n]) -> (f64, (f64, f64[n])) { value_and_grad(fold)(v, A) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const std::vector<Value> args = {Value::f64(2), f64_vector({3, 4})};
  EXPECT_TRUE(FdGradientEquals(P, "fold", args, {0, 1}, {12, 8, 6}));
  EXPECT_TRUE(DerivedEquals(M, "d_fold", args, {24, 12, 8, 6}));
}

TEST(AdExamples001, E12_conditional) {
  constexpr const char* primal = R"(
def cond(x: f64, b: bool) -> f64 { if b then x * x else sin(x) }
)";
  constexpr const char* derived = R"(
def d_cond(x: f64, b: bool) -> f64 { grad(cond)(x, b) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  EXPECT_TRUE(FdGradientEquals(P, "cond", {Value::f64(0.5), Value::boolean(true)}, {0}, {1.0}));
  EXPECT_TRUE(DerivedEquals(M, "d_cond", {Value::f64(0.5), Value::boolean(true)}, {1.0}));
  EXPECT_TRUE(
      FdGradientEquals(P, "cond", {Value::f64(0.5), Value::boolean(false)}, {0}, {std::cos(0.5)}));
  EXPECT_TRUE(
      DerivedEquals(M, "d_cond", {Value::f64(0.5), Value::boolean(false)}, {std::cos(0.5)}));
  EXPECT_NEAR(std::cos(0.5), 0.87758, 5e-6);
}

TEST(AdExamples001, E13_prod_of_empty_and_single_arrays) {
  AD_LOAD_EXAMPLE(kReduce, kReduceDerived);
  auto r = M.evaluate("d_prod", {f64_vector({})});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().type_string(), "(f64, f64[0])");
  EXPECT_TRUE(ValueNear(r.value(), {1.0}, 0.0));
  EXPECT_TRUE(DerivedEquals(M, "d_prod", {f64_vector({7})}, {7, 1}));
}

TEST(AdExamples001, E14_reduce_with_a_context_dependent_body_and_unit) {
  // reduce (x, y. x + y + θ) (0 - θ) A: ∂θ = 0 for A = [5], not 2 as the paper's Fig. 13 has it.
  constexpr const char* primal = R"(
def e14(theta: f64, A: f64[n]) -> f64 { loop s = 0.0 - theta for t < n { s + A[t] + theta } }
)";
  constexpr const char* derived = R"(
def d_e14(theta: f64, A: f64[n]) -> (f64, (f64, f64[n])) { value_and_grad(e14)(theta, A) }
)";
  AD_LOAD_EXAMPLE(primal, derived);
  const std::vector<Value> args = {Value::f64(1), f64_vector({5})};
  EXPECT_TRUE(FdGradientEquals(P, "e14", args, {0, 1}, {0, 1}));
  EXPECT_TRUE(DerivedEquals(M, "d_e14", args, {5, 0, 1}));
  // With n terms the value is sum(A) + (n - 1) θ.
  const std::vector<Value> args3 = {Value::f64(1.5), f64_vector({5, -1, 2})};
  EXPECT_TRUE(FdGradientEquals(P, "e14", args3, {0, 1}, {2, 1, 1, 1}));
  EXPECT_TRUE(DerivedEquals(M, "d_e14", args3, {9, 2, 1, 1, 1}));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::adtest
