// Loop-invariant code motion (pass "licm").
#include "opt/licm.h"

#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "ad/fd_harness.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

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

using opt_test::empty_vector;

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
  expect_same_values(p, q, "f", {empty_vector(), vec(3)});
  // n * (2m - 1) + n before; 2m - 1 + n after.
  EXPECT_EQ(run(p, "f", {vec(4), vec(3)}).ops, 4 * 5 + 4);
  EXPECT_EQ(run(q, "f", {vec(4), vec(3)}).ops, 5 + 4);
  EXPECT_EQ(run(q, "f", {empty_vector(), vec(3)}).ops, 0);
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

// A read provably in range cannot fail: it moves out of a region that may run zero times
// without a guard (so copies of it elsewhere keep one form for CSE). One that may be out of
// range moves under [extent >= 1].
TEST(OptLicm, read_in_range_moves_out_without_a_guard) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], A: f64[n, m], w: f64[m]) -> f64[n, m] {
  for i. for k. x[i] * w[k] + A[i, 0]
})");
  auto q = hoisted(p, "f");
  const std::string text = printed(q, "f");
  // x[i] (in range for i < n) leaves the inner generator as it is; A[i, 0] may be out of
  // range (m = 0) and moves under [m >= 1].
  EXPECT_NE(text.find("for i: n. {\n    let t"), std::string::npos) << text;
  const size_t read = text.find(" = x[i]\n");
  ASSERT_NE(read, std::string::npos) << text;
  const size_t line = text.rfind('\n', read);
  const size_t previous = text.rfind('\n', line - 1);
  EXPECT_EQ(text.substr(previous, line - previous).find("[m >= 1]"), std::string::npos)
      << "x[i] is not guarded:\n"
      << text;
  EXPECT_NE(text.find("[m >= 1]"), std::string::npos) << text;
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {2, 0}, {3, 4}}) {
    expect_same_values(
        p, q, "f",
        {opt_test::tensor({n}, 0.1), opt_test::tensor({n, m}, 0.3), opt_test::tensor({m}, -0.2)});
  }
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
  expect_same_values(p, q, "f", {empty_vector(), Value::i64(0)});
}

// Plain loops are values like any other: an invariant while loop in a generator moves out
// under [n >= 1] (it runs once, and not at all for an empty generator, where it would have run
// zero times), and an invariant counted loop out of a sum that provably runs.
TEST(OptLicm, invariant_plain_loops_move_out) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], a: f64) -> f64[n] {
  for i. x[i] * { let (r, _) = loop (b, c) = (a, 0) while c < 3 { (0.5 * b + 1.0, c + 1) }; r }
}
def g(x: f64[3], a: f64, k: i64) -> f64 {
  sum i. x[i] + (loop b = a for t < k { b * a })
})");
  auto q = hoisted(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_LT(text.find("while"), text.find("for i")) << text;
  EXPECT_NE(text.find("[n >= 1] * "), std::string::npos) << text;
  for (int n : {1, 4}) expect_same_values(p, q, "f", {vec(n), Value::f64(0.3)});
  expect_same_values(p, q, "f", {empty_vector(), Value::f64(0.3)});
  // The loop: 3 iterations of 2 ops before (per element, plus the product); once after.
  EXPECT_EQ(run(p, "f", {vec(4), Value::f64(0.3)}).ops, 4 * (3 * 2 + 1));
  EXPECT_EQ(run(q, "f", {vec(4), Value::f64(0.3)}).ops, 3 * 2 + 4);
  auto r = hoisted(p, "g");
  const std::string gtext = printed(r, "g");
  EXPECT_LT(gtext.find("for t"), gtext.find("sum i")) << gtext;
  EXPECT_EQ(gtext.find(">= 1"), std::string::npos) << gtext;
  for (int64_t k : {0, 2}) expect_same_values(p, r, "g", {vec(3), Value::f64(0.3), Value::i64(k)});
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
  expect_same_values(p, q, "f", {empty_vector(), Value::f64(0.3)});
  EXPECT_LT(run(q, "f", {vec(5), Value::f64(0.3)}).ops, run(p, "f", {vec(5), Value::f64(0.3)}).ops);
}

// A sum under a guard on the generator's index moves out of the guard and the generator, under
// the guard's projection [n >= 2] (some i in 0..n-1 has i >= 1): computed once, and not at all
// when the original never ran it.
TEST(OptLicm, invariant_of_a_guard_moves_out_under_its_projection) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], y: f64[m]) -> f64[n] {
  for i. [i >= 1] * (x[i] * (sum j. y[j] * y[j]))
})");
  auto q = hoisted(p, "f");
  EXPECT_EQ(printed(q, "f"), R"(def f(x: f64[n], y: f64[m]) -> f64[n] {
  let t14 = [n >= 2] * {
    let t10 = sum j: m. {
      let t7 = y[j]
      let t8 = y[j]
      let t9 = t7 * t8
      t9
    }
    t10
  }
  let t13 = for i: n. {
    let t12 = [i >= 1] * {
      let t5 = x[i]
      let t11 = t5 * t14
      t11
    }
    t12
  }
  t13
}
)") << printed(q, "f");
  for (int n : {0, 1, 2, 4}) {
    for (int m : {0, 3})
      expect_same_values(p, q, "f",
                         {n == 0 ? empty_vector() : vec(n), m == 0 ? empty_vector() : vec(m)});
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  expect_same_values(p, q, "f", {vec(3), f64_vector({nan, 1.0})});
  expect_same_values(p, q, "f", {vec(3), f64_vector({inf, 1.0})});
  expect_same_values(p, q, "f", {vec(1), f64_vector({nan, 1.0})});
  // 3 * (2m - 1 + 1) before; 2m - 1 + 3 after (n = 4, m = 3).
  EXPECT_EQ(run(p, "f", {vec(4), vec(3)}).ops, 3 * 6);
  EXPECT_EQ(run(q, "f", {vec(4), vec(3)}).ops, 5 + 3);
  EXPECT_EQ(run(q, "f", {vec(1), vec(3)}).ops, 0);
}

// In a counted loop, a guard on the counter: the sum moves out under [k >= 3] (it is not
// evaluated when the original did not evaluate it).
TEST(OptLicm, invariant_of_a_guard_on_the_counter_moves_out) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], k: i64) -> f64 {
  loop s = 0.0 for t < k { s + [t >= 2] * (sum j. x[j] * x[0]) }
})");
  auto q = hoisted(p, "f");
  EXPECT_EQ(printed(q, "f"), R"(def f(x: f64[n], k: i64) -> f64 {
  let t14 = [k >= 3] * {
    let t13 = [n >= 1] * {
      let t7 = x[0]
      t7
    }
    let t9 = sum j: n. {
      let t6 = x[j]
      let t8 = t6 * t13
      t8
    }
    t9
  }
  let t12 = loop s = 0.0 for t < k {
    let t10 = [t >= 2] * t14
    let t11 = s + t10
    t11
  }
  t12
}
)") << printed(q, "f");
  for (int64_t k : {0, 2, 3, 6}) expect_same_values(p, q, "f", {vec(2), Value::i64(k)});
  expect_same_values(p, q, "f", {empty_vector(), Value::i64(2)});
  // The sum (3) once; the additions of the strong zeros of t = 0, 1 are not charged.
  EXPECT_EQ(run(q, "f", {vec(2), Value::i64(6)}).ops, 3 + 4);
  EXPECT_EQ(run(p, "f", {vec(2), Value::i64(6)}).ops, 4 * 3 + 4);
}

// What varies in the region, guards whose predicate is not an affine conjunction over the
// index variables and what is outside, and scalar work under a guard, stay.
TEST(OptLicm, guards_that_vary_or_do_not_project_stay) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], y: f64[m]) -> f64[n] {
  for i. [i >= 1] * exp(x[i])
}
def g(x: f64[n], y: f64[m]) -> f64[n] {
  for i. [i >= 1 || i + 2 < n] * (x[i] * (sum j. y[j] * y[j]))
}
def h(x: f64[n], a: f64) -> f64[n] {
  for i. [i >= 1] * (x[i] * exp(a))
})");
  for (const char* fn : {"f", "g", "h"}) {
    EXPECT_EQ(printed(hoisted(p, fn), fn), printed(p, fn)) << fn;
  }
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

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
