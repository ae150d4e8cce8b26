// Sinking into guards (pass "sink"): statements used only under one guard (or one if branch)
// move under it, so they cost only where the guard holds.
#include "opt/sink.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ad/derive.h"
#include "ad/fd_harness.h"
#include "opt/fuse.h"
#include "opt/inline.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::Value;
using cotangent::adtest::f64_matrix;
using cotangent::adtest::f64_vector;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;
using opt_test::run_pass;

ir::Program sunk(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::sink_into_guards, opt::sink_postcondition);
}

Value vec(int n, double scale = 1.0) {
  std::vector<double> xs;
  for (int k = 0; k < n; ++k) xs.push_back(scale * (0.25 + k) - 0.1 * k * k);
  return f64_vector(xs);
}

Value mat(int n) {
  std::vector<std::vector<double>> rows;
  for (int i = 0; i < n; ++i) {
    rows.emplace_back();
    for (int j = 0; j < n; ++j) rows.back().push_back(0.5 * i - j + 0.1 * i * j);
  }
  return f64_matrix(rows);
}

// The IR of the derivative: `sum k. { t = A[j, k] * 2.0; [j == k] * t }` written directly, as
// the transposer emits it (the read and product before the bracket).
TEST(OptSink, work_moves_under_the_guard) {
  auto p = opt_test::compile(R"(
def f(A: f64[n, n]) -> f64[n] {
  for j. sum k. {
    let t = A[j, k] * 2.0
    [j == k] * t
  }
})");
  const std::string before = printed(p, "f");
  auto q = sunk(p, "f");
  const std::string after = printed(q, "f");
  EXPECT_NE(before, after);
  // The product is now inside the bracket.
  EXPECT_LT(after.find("[j == k]"), after.find("A[j, k]")) << after;
  EXPECT_LT(before.find("A[j, k]"), before.find("[j == k]")) << before;
  for (int n : {1, 3, 6}) expect_same_values(p, q, "f", {mat(n)});
  // Only the true points multiply: n multiplications instead of n^2.
  EXPECT_EQ(run(q, "f", {mat(6)}).ops, 6);
  EXPECT_EQ(run(p, "f", {mat(6)}).ops, 36);
}

TEST(OptSink, moves_into_the_branch_that_uses_it) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], c: bool) -> f64 {
  let s = sum i. x[i] * x[i]
  if c then s + 1.0 else 0.0
})");
  auto q = sunk(p, "f");
  const std::string text = printed(q, "f");
  // The sum is computed in the then-branch only.
  EXPECT_LT(text.find("if c"), text.find("sum i")) << text;
  for (bool c : {true, false}) expect_same_values(p, q, "f", {vec(4), Value::boolean(c)});
  EXPECT_EQ(run(q, "f", {vec(4), Value::boolean(false)}).ops, 0);
}

TEST(OptSink, stays_when_used_outside_the_guard_or_by_the_predicate) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], y: f64) -> f64 {
  let s = sum i. x[i]
  let a = [y > 0.0] * (s * 2.0)
  a + s
}
def g(x: f64[n], k: i64) -> f64 {
  let t = k + 1
  [t > 2] * x[0]
})");
  EXPECT_EQ(printed(sunk(p, "f"), "f"), printed(p, "f"));
  EXPECT_EQ(printed(sunk(p, "g"), "g"), printed(p, "g"));
}

TEST(OptSink, not_into_generators_or_loops) {
  // Moving the sum into the generator would compute it n times.
  auto p = opt_test::compile(R"(
def f(x: f64[n]) -> f64[n] {
  let s = sum i. x[i]
  for j: n. [j > 0] * s
}
def g(x: f64[n], k: i64) -> f64 {
  let s = sum i. x[i]
  loop a = 0.0 for t < k { [t > 0] * s + a }
})");
  EXPECT_EQ(printed(sunk(p, "f"), "f"), printed(p, "f"));
  EXPECT_EQ(printed(sunk(p, "g"), "g"), printed(p, "g"));
}

TEST(OptSink, chains_sink_together_and_keep_order) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], c: f64) -> f64 {
  let a = exp(c)
  let b = a * x[0]
  let d = b + a
  [c > 0.5] * (d * d)
})");
  auto q = sunk(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_LT(text.find("c > 0.5"), text.find("exp(c)")) << text;
  for (double c : {0.1, 0.9}) expect_same_values(p, q, "f", {vec(3), Value::f64(c)});
  EXPECT_EQ(run(q, "f", {vec(3), Value::f64(0.1)}).ops, 0);
}

TEST(OptSink, postcondition_reports_a_statement_used_only_under_a_guard) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], c: f64) -> f64 {
  let a = exp(c)
  [c > 0.5] * a
})");
  auto broken = opt::sink_postcondition(p, *p.find("f"));
  ASSERT_TRUE(broken.has_value());
  EXPECT_NE(broken->find("exp"), std::string::npos) << *broken;
}

// The derivative of three traces of diag(x) after fusion and sinking: the dense cotangent
// matrices are never built and every surviving read sits under its bracket.
TEST(OptSink, traces_of_diag_gradient_after_fusion) {
  ir::Program p = opt_test::compile(R"(
def traces(x: f64[n]) -> f64 {
  let A = diag(x)
  trace(A) + trace(A) + trace(A)
}
def g(x: f64[n], ct: f64) -> f64[n] { vjp(traces, x)(x, ct) }
)");
  ASSERT_FALSE(ad::build_derivatives(p).has_value());
  p = run_pass(p, "g", opt::inline_functions, opt::no_inlinable_calls);
  auto q = run_pass(p, "g", opt::fuse_producers, opt::fuse_postcondition);
  q = sunk(q, "g");
  q = run_pass(q, "g", opt::fuse_producers, opt::fuse_postcondition);
  for (int n : {1, 3, 8}) expect_same_values(p, q, "g", {vec(n), Value::f64(0.75)});
  const int64_t ops8 = run(q, "g", {vec(8), Value::f64(1.0)}).ops;
  const int64_t ops32 = run(q, "g", {vec(32), Value::f64(1.0)}).ops;
  EXPECT_LE(ops32, 4 * ops8 + 8) << printed(q, "g");
  // The value (3 sums) and, per element, two additions of the three cotangents.
  EXPECT_LE(ops32, 5 * 32) << printed(q, "g");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
