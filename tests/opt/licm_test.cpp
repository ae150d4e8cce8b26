// Loop-invariant code motion (pass "licm").
#include "opt/licm.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ad/fd_harness.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace {

using cotangent::Value;
using cotangent::adtest::f64_vector;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;
using opt_test::run_pass;

ir::Program hoisted(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::hoist_invariants, opt::licm_postcondition);
}

Value vec(int n, double scale = 1.0) {
  std::vector<double> xs;
  for (int k = 0; k < n; ++k) xs.push_back(scale * (0.5 + k) - 0.15 * k * k);
  return f64_vector(xs);
}

Value empty_vec() {
  return Value::zeros(cotangent::DType::F64, {0});
}

// A sum invariant in the generator's index moves out under [n >= 1]: computed once, and not at
// all when the generator is empty.
TEST(OptLicm, invariant_reduction_moves_out_of_a_generator_under_a_guard) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], y: f64[m]) -> f64[n] {
  for i. x[i] * (sum j. y[j] * y[j])
})");
  auto q = hoisted(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_LT(text.find("sum j"), text.find("for i")) << text;
  EXPECT_NE(text.find("n >= 1"), std::string::npos) << text;
  for (int n : {1, 4}) expect_same_values(p, q, "f", {vec(n), vec(3)});
  expect_same_values(p, q, "f", {empty_vec(), vec(3)});
  // n * (2m - 1) + n before; 2m - 1 + n after.
  EXPECT_EQ(run(p, "f", {vec(4), vec(3)}).ops, 4 * 5 + 4);
  EXPECT_EQ(run(q, "f", {vec(4), vec(3)}).ops, 5 + 4);
  EXPECT_EQ(run(q, "f", {empty_vec(), vec(3)}).ops, 0);
}

TEST(OptLicm, constant_extent_needs_no_guard) {
  auto p = opt_test::compile(R"(
def f(a: f64, b: f64) -> f64[3] {
  for i: 3. f64(i) + a * b
})");
  auto q = hoisted(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_LT(text.find("a * b"), text.find("for i")) << text;
  EXPECT_EQ(text.find(">= 1"), std::string::npos) << text;
  expect_same_values(p, q, "f", {Value::f64(1.5), Value::f64(-2.0)});
  EXPECT_EQ(run(q, "f", {Value::f64(1.5), Value::f64(-2.0)}).ops, 4);
}

TEST(OptLicm, counted_loop_body_invariant_moves_out) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], k: i64) -> f64 {
  loop s = 0.0 for t < k { s + exp(x[0]) }
})");
  auto q = hoisted(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_LT(text.find("exp"), text.find("loop")) << text;
  for (int64_t k : {0, 1, 5}) expect_same_values(p, q, "f", {vec(2), Value::i64(k)});
  // A read out of range is not introduced when the loop does not run.
  expect_same_values(p, q, "f", {empty_vec(), Value::i64(0)});
}

TEST(OptLicm, variant_statements_stay) {
  auto p = opt_test::compile(R"(
def f(x: f64[n]) -> f64 {
  sum i. exp(x[i]) * f64(i)
}
def g(x: f64[n], k: i64) -> f64 {
  loop s = 1.0 while s < 100.0 { s * exp(x[0]) + 1.0 }
}
def h(x: f64[n], c: bool) -> f64 {
  if c then exp(x[0]) else 0.0
})");
  for (const char* fn : {"f", "g", "h"}) {
    EXPECT_EQ(printed(hoisted(p, fn), fn), printed(p, fn)) << fn;
  }
}

TEST(OptLicm, nested_regions_hoist_through_every_level) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], c: f64) -> f64 {
  sum i. sum j. x[i] * x[j] * exp(c)
})");
  auto q = hoisted(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_LT(text.find("exp(c)"), text.find("sum i")) << text;
  for (int n : {1, 3}) expect_same_values(p, q, "f", {vec(n), Value::f64(0.3)});
  expect_same_values(p, q, "f", {empty_vec(), Value::f64(0.3)});
  EXPECT_LT(run(q, "f", {vec(5), Value::f64(0.3)}).ops, run(p, "f", {vec(5), Value::f64(0.3)}).ops);
}

TEST(OptLicm, postcondition_reports_an_invariant) {
  auto p = opt_test::compile(R"(
def f(a: f64, b: f64) -> f64[3] {
  for i: 3. a * b
})");
  auto broken = opt::licm_postcondition(p, *p.find("f"));
  ASSERT_TRUE(broken.has_value());
  EXPECT_NE(broken->find("invariant"), std::string::npos) << *broken;
}

}  // namespace
}  // namespace cot
