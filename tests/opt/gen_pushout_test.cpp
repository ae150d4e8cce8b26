// Generator push-out (pass "gen-pushout", rules 5.21-5.23 of [Bernstein20]).
#include "opt/gen_pushout.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ad/fd_harness.h"
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

ir::Program pushed(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::push_out_generators, opt::gen_pushout_postcondition);
}

using opt_test::count;

Value vec(int n, double scale = 1.0) {
  std::vector<double> xs;
  for (int k = 0; k < n; ++k) xs.push_back(scale * (0.75 + k) - 0.2 * k * k);
  return f64_vector(xs);
}

// (5.23): [p] * (for i. e) becomes for i. [p] * e, and the read of it then fuses (5.21).
TEST(OptGenPushout, guard_of_a_generator_moves_inside) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], c: f64) -> f64 {
  let v = [c > 0.0] * (for i. [i == 0] * x[i])
  sum i. v[i]
})");
  auto q = pushed(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(count(text, "for "), 0) << text;  // pushed out, then fused into the sum
  EXPECT_EQ(count(text, "v["), 0) << text;
  for (int n : {1, 4})
    for (double c : {-1.0, 2.0}) expect_same_values(p, q, "f", {vec(n), Value::f64(c)});
  // The sum adds only live terms: free, before (v keeps its strong zeros, docs/language.md §5.6)
  // and after.
  EXPECT_EQ(run(q, "f", {vec(5), Value::f64(1.0)}).ops, 0);
  EXPECT_EQ(run(p, "f", {vec(5), Value::f64(1.0)}).ops, 0);
}

TEST(OptGenPushout, work_before_the_generator_stays_computed_once) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], c: f64) -> f64[n] {
  [c > 0.0] * {
    let s = sum i. x[i]
    for i. x[i] * s
  }
})");
  auto q = pushed(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(count(text, "sum i"), 1) << text;
  for (int n : {1, 4})
    for (double c : {-1.0, 2.0}) expect_same_values(p, q, "f", {vec(n), Value::f64(c)});
  EXPECT_EQ(run(q, "f", {vec(4), Value::f64(1.0)}).ops, run(p, "f", {vec(4), Value::f64(1.0)}).ops);
}

// A strong-zero tensor summed costs nothing; a generator of zeros would cost additions, so a
// guard whose result is a term of a tensor sum keeps its generator.
TEST(OptGenPushout, strong_zero_tensor_in_a_sum_stays) {
  auto p = opt_test::compile(R"(
def f(x: f64[n]) -> f64[n] {
  sum j: 4. [j == 0] * (for i. x[i] * 2.0)
})");
  auto q = pushed(p, "f");
  EXPECT_EQ(printed(q, "f"), printed(p, "f"));
}

// (5.22): a read of a guard with a cost-free body reads under the guard.
TEST(OptGenPushout, read_of_a_guarded_slice_reads_under_the_guard) {
  auto p = opt_test::compile(R"(
def f(A: f64[n, m], k: i64) -> f64 {
  let row = [k > 0] * A[0]
  sum j. row[j]
})");
  auto q = pushed(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(count(text, "row["), 0) << text;
  const Value A = cotangent::adtest::f64_matrix({{1, 2, 3}, {4, 5, 6}});
  for (int64_t k : {0, 1}) expect_same_values(p, q, "f", {A, Value::i64(k)});
  // Where the guard is false the terms are strong zeros, read from the row or not: nothing is
  // added.
  EXPECT_EQ(run(q, "f", {A, Value::i64(0)}).ops, 0);
  EXPECT_EQ(run(p, "f", {A, Value::i64(0)}).ops, 0);
  EXPECT_EQ(run(p, "f", {A, Value::i64(1)}).ops, 2);
}

TEST(OptGenPushout, cost_free_generator_read_is_beta_reduced) {
  auto p = opt_test::compile(R"(
def f(x: f64[n]) -> f64 {
  let E = for i, j: n. [i == j] * x[j]
  sum i. E[i, i] + E[i, 0]
})");
  auto q = pushed(p, "f");
  EXPECT_EQ(count(printed(q, "f"), "E["), 0) << printed(q, "f");
  for (int n : {1, 3, 5}) expect_same_values(p, q, "f", {vec(n)});
}

TEST(OptGenPushout, postcondition_reports_a_guarded_generator) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], c: f64) -> f64[n] {
  [c > 0.0] * (for i. x[i] * 2.0)
})");
  auto broken = opt::gen_pushout_postcondition(p, *p.find("f"));
  ASSERT_TRUE(broken.has_value());
  auto q = pushed(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_LT(text.find("for i"), text.find("* {")) << text;  // the guard is inside the gen
  EXPECT_FALSE(opt::gen_pushout_postcondition(q, *q.find("f")).has_value());
  for (double c : {-1.0, 2.0}) expect_same_values(p, q, "f", {vec(3), Value::f64(c)});
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
