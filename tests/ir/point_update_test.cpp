// ir::point_update: which generators of a loop's body are point updates of the loop's state
// (docs/design.md §10, "In-place point updates of loop state"), on programs as the optimizer
// and the AD stage leave them.
#include "ir/point_update.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ad/ad_test_util.h"
#include "ad/derive.h"
#include "ir/printer.h"
#include "opt/pipeline.h"

namespace cot::ir {
namespace COTANGENT_TEST_UNIT {

// `src` checked, derived and optimized as the pipeline does.
Program optimized(const std::string& src) {
  Program prog = ad_test::compile(src, /*with_prelude=*/false);
  auto failed = ad::build_derivatives(prog, {});
  EXPECT_FALSE(failed.has_value()) << failed->message;
  auto out = opt::optimize_program(std::move(prog), {}, [](const Function&) { return true; });
  if (const auto* e = std::get_if<opt::PipelineError>(&out)) {
    ADD_FAILURE() << e->pass << ": " << e->message;
    return {};
  }
  return std::get<Program>(std::move(out));
}

// For every top-level loop of `fn`, for each state: the point update of the state by the
// statement computing its next value (nullopt when it is no top-level generator or not one).
std::vector<std::optional<PointUpdate>> updates(const Program& p, const std::string& fn) {
  std::vector<std::optional<PointUpdate>> out;
  const Function* f = p.find(fn);
  EXPECT_NE(f, nullptr) << fn;
  if (f == nullptr) return out;
  for (const Stmt& s : f->body.stmts) {
    const auto* loop = s.as<LoopOp>();
    if (loop == nullptr) continue;
    for (size_t k = 0; k < loop->state.size(); ++k) {
      const Atom& r = loop->body.results[k];
      std::optional<PointUpdate> u;
      for (const Stmt& st : loop->body.stmts) {
        if (r.is_var && !st.results.empty() && st.results[0] == r.var && st.as<GenOp>()) {
          u = point_update(*f, st, loop->state[k]);
        }
      }
      out.push_back(std::move(u));
    }
  }
  return out;
}

std::string pins(const Function& f, const PointUpdate& u) {
  std::string s;
  for (const Pin& p : u.boxes) {
    s += std::to_string(p.ivar) + "=" +
         p.value.to_string([&](int32_t v) { return f.vars.at(static_cast<size_t>(v)).name; }) + ";";
  }
  return s;
}

TEST(PointUpdate, the_if_form_of_a_cumulative_sum_is_one_point) {
  Program p = optimized(R"(
def cumsum(x: f64[n]) -> f64[n] {
  loop s = for i: n. 0.0 for k < n {
    for i. if i == k then (if k == 0 then x[0] else s[k - 1] + x[k]) else s[i]
  }
}
)");
  auto u = updates(p, "cumsum");
  ASSERT_EQ(u.size(), 1u);
  ASSERT_TRUE(u[0].has_value()) << print_function(p, *p.find("cumsum"));
  EXPECT_FALSE(u[0]->adds_zero);
  EXPECT_EQ(pins(*p.find("cumsum"), *u[0]), "0=k;");
}

TEST(PointUpdate, a_reversed_scan_pins_a_value_computed_in_the_loop) {
  Program p = optimized(R"(
def rcumsum(x: f64[n]) -> f64[n] {
  loop s = for i: n. 0.0 for t < n {
    let k = n - 1 - t
    for i. if i == k then (if k == n - 1 then x[k] else s[k + 1] + x[k]) else s[i]
  }
}
)");
  auto u = updates(p, "rcumsum");
  ASSERT_EQ(u.size(), 1u);
  ASSERT_TRUE(u[0].has_value()) << print_function(p, *p.find("rcumsum"));
  EXPECT_EQ(u[0]->boxes.size(), 1u);
}

TEST(PointUpdate, the_iverson_form_adds_a_strong_zero) {
  Program p = optimized(R"(
def cumsum_iv(x: f64[n]) -> f64[n] {
  loop s = for i: n. 0.0 for k < n {
    for i. [i == k] * x[k] + [i == k && k >= 1] * s[k - 1] + [i != k] * s[i]
  }
}
)");
  auto u = updates(p, "cumsum_iv");
  ASSERT_EQ(u.size(), 1u);
  ASSERT_TRUE(u[0].has_value()) << print_function(p, *p.find("cumsum_iv"));
  EXPECT_TRUE(u[0]->adds_zero);
  EXPECT_EQ(pins(*p.find("cumsum_iv"), *u[0]), "0=k;");
  EXPECT_FALSE(u[0]->evaluated.empty());  // i - k, evaluated at every point
}

TEST(PointUpdate, a_column_update_pins_one_index) {
  Program p = optimized(R"(
def chol(A: f64[n, n]) -> f64[n, n] {
  loop L = for r: n, c: n. 0.0 for j < n {
    let d = sqrt(A[j, j] - (sum k. [k < j] * L[j, k] * L[j, k]))
    for r, c. if c == j then (if r == j then d else [r > j] * (A[r, j] - (sum k. [k < j] * L[r, k] * L[j, k])) / d) else L[r, c]
  }
}
)");
  auto u = updates(p, "chol");
  ASSERT_EQ(u.size(), 1u);
  ASSERT_TRUE(u[0].has_value()) << print_function(p, *p.find("chol"));
  EXPECT_EQ(pins(*p.find("chol"), *u[0]), "1=j;");
}

TEST(PointUpdate, the_gradient_of_a_cumulative_sum_updates_its_two_dense_states_at_points) {
  Program p = optimized(R"(
def cumsum(x: f64[n]) -> f64[n] {
  loop s = for i: n. 0.0 for k < n {
    for i. if i == k then (if k == 0 then x[0] else s[k - 1] + x[k]) else s[i]
  }
}
def loss(x: f64[n]) -> f64 {
  let s = cumsum(x)
  sum i. s[i] * s[i]
}
def vg(x: f64[n]) -> (f64, f64[n]) { value_and_grad(loss, x)(x) }
)");
  const Function* f = p.find("value_and_grad(loss, x)");
  ASSERT_NE(f, nullptr);
  auto u = updates(p, "value_and_grad(loss, x)");
  ASSERT_EQ(u.size(), 3u) << print_function(p, *f);  // the primal loop, then two states
  EXPECT_TRUE(u[0].has_value());
  for (size_t k = 1; k < 3; ++k) {
    ASSERT_TRUE(u[k].has_value()) << k << "\n" << print_function(p, *f);
    EXPECT_TRUE(u[k]->adds_zero);
    EXPECT_EQ(u[k]->boxes.size(), 2u) << pins(*f, *u[k]);
  }
}

TEST(PointUpdate, rejects_work_at_unchanged_points_that_could_fail) {
  // x[k] at every point: out of range when n > size of x... the read is not at the point.
  Program p = optimized(R"(
def f(x: f64[m], n: i64) -> f64[m] {
  loop s = for i: m. 0.0 for k < n {
    for i. if i == k then 1.0 else s[i] + 0.0 * x[k]
  }
}
)");
  auto u = updates(p, "f");
  ASSERT_EQ(u.size(), 1u);
  EXPECT_FALSE(u[0].has_value()) << print_function(p, *p.find("f"));
}

TEST(PointUpdate, rejects_a_body_that_changes_unpinned_points) {
  Program p = optimized(R"(
def f(x: f64[n]) -> f64[n] {
  loop s = for i: n. 0.0 for k < n {
    for i. if i == k then x[k] else s[i] * 2.0
  }
}
def g(x: f64[n]) -> f64[n] {
  loop s = for i: n. 0.0 for k < n {
    for i. if i < k then x[k] else s[i]
  }
}
def h(x: f64[n]) -> f64[n] {
  loop s = for i: n. 0.0 for k < n {
    for i. if i + i == k then x[k] else s[i]
  }
}
)");
  for (const char* fn : {"f", "g", "h"}) {
    auto u = updates(p, fn);
    ASSERT_EQ(u.size(), 1u) << fn;
    EXPECT_FALSE(u[0].has_value()) << fn << "\n" << print_function(p, *p.find(fn));
  }
}

TEST(PointUpdate, rejects_mismatched_extents) {
  Program p = optimized(R"(
def f(x: f64[n]) -> f64[n] {
  let y = for i: n. 0.0
  loop s = y for k < n {
    let z = for i: n - 1. if i == k then x[k] else s[i]
    for i: n. if i < n - 1 then z[i] else 0.0
  }
}
)");
  const Function* f = p.find("f");
  // The generator over n - 1 points is no point update of s (its shape is not s's).
  for (const Stmt& s : f->body.stmts) {
    if (const auto* loop = s.as<LoopOp>()) {
      for (const Stmt& st : loop->body.stmts) {
        if (st.as<GenOp>()) {
          EXPECT_FALSE(point_update(*f, st, loop->state[0]).has_value());
        }
      }
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::ir
