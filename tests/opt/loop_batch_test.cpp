// Batching a loop over a region's points (src/opt/loop_batch.h): the batched form, values and
// op counts before and after (empty ranges, zero trip counts, NaN and infinities included), the
// loops that must stay per point, and the gradients it is for: one backward sweep that computes
// every tangent's cotangent, a read at the counter scattered per step.
#include "opt/loop_batch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ad/ad_test_util.h"
#include "cotangent/cotangent.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::DType;
using cotangent::Value;
using opt_test::compile;
using opt_test::count;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;
using opt_test::run_pass;
using opt_test::vec;

ir::Program batch(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::batch_loops, opt::loop_batch_postcondition);
}

const double kInf = std::numeric_limits<double>::infinity();

// Horner's rule per element.
constexpr const char* kHorner = R"(
def f(x: f64[n], c: f64[m]) -> f64 {
  sum i. loop p = 0.0 for t < m { p * x[i] + c[t] }
}
)";

TEST(OptLoopBatch, LoopOfASumRunsOnceWithAStatePerPoint) {
  auto p = compile(kHorner);
  auto q = batch(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(text, R"(def f(x: f64[n], c: f64[m]) -> f64 {
  let t14 = for i_13: n. 0.0
  let t24 = loop p_15 = t14 for t_16 < m {
    let t17 = c[t_16]
    let t23 = for i_18: n. {
      let t19 = p_15[i_18]
      let t20 = x[i_18]
      let t21 = t19 * t20
      let t22 = t21 + t17
      t22
    }
    t23
  }
  let t12 = sum i: n. {
    let t11 = t24[i]
    t11
  }
  t12
}
)") << text;
  for (int n : {0, 1, 6}) {
    for (int m : {0, 1, 4}) {
      std::vector<double> x(static_cast<size_t>(n));
      std::vector<double> c(static_cast<size_t>(m));
      for (int k = 0; k < n; ++k) x[static_cast<size_t>(k)] = 0.3 * k - 0.7;
      for (int k = 0; k < m; ++k) c[static_cast<size_t>(k)] = 1.5 - 0.5 * k;
      expect_same_values(p, q, "f", {vec(x), vec(c)});
      // The same operations, in another order.
      EXPECT_EQ(run(p, "f", {vec(x), vec(c)}).ops, run(q, "f", {vec(x), vec(c)}).ops);
    }
  }
  expect_same_values(p, q, "f", {vec({kInf, std::nan(""), -2.0}), vec({1.0, 0.0, 2.0})});
}

// A read that moves with the point and the step reads a table's slice per step.
TEST(OptLoopBatch, ReadAtThePointAndTheStepReadsASlicePerStep) {
  auto p = compile(R"(
def f(A: f64[n, m], c: f64[m]) -> f64 {
  sum i. loop p = 0.0 for t < m { p * 0.9 + A[i, t] * c[t] }
}
)");
  auto q = batch(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_NE(text.find("let T = max(m, 0)"), std::string::npos) << text;
  EXPECT_NE(text.find(": T, i_"), std::string::npos) << text;
  EXPECT_NE(text.find("let A_step"), std::string::npos) << text;
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {3, 0}, {1, 1}, {4, 5}}) {
    expect_same_values(p, q, "f", {opt_test::tensor({n, m}, 0.3), opt_test::tensor({m}, -0.2)});
  }
}

// A tensor state, its initial value computed per point (a generator, run once per point).
TEST(OptLoopBatch, TensorStateWithAnInitialValuePerPoint) {
  auto p = compile(R"(
def f(x: f64[n], w: f64[k]) -> f64 {
  sum i. {
    let s = loop s = (for j. x[i] * w[j]) for t < 3 { for j. tanh(s[j]) * w[j] }
    sum j. s[j]
  }
}
)");
  auto q = batch(p, "f");
  EXPECT_EQ(count(printed(q, "f"), "loop "), 1) << printed(q, "f");
  for (int n : {0, 2, 5}) {
    std::vector<double> x(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) x[static_cast<size_t>(k)] = 0.4 * k - 0.5;
    expect_same_values(p, q, "f", {vec(x), vec({0.5, -1.0, 2.0})});
  }
}

// A trip count computed in R's body from a size (m - 1) moves before the batched loop, and
// bounds the body's shifted reads; the initial state's read A[i, 0] may fail (m = 0): the
// batched loop reads every point's initial state first, in the points' order, so the error is
// the one the points in order raise.
TEST(OptLoopBatch, ShiftedRecurrenceWithACountFromASize) {
  auto p = compile(R"(
def f(A: f64[n, m], c: f64[m]) -> f64 {
  sum i. loop p = A[i, 0] for t < m - 1 { p * c[t + 1] + A[i, t + 1] }
}
)");
  auto q = batch(p, "f");
  const std::string text = printed(q, "f");
  const size_t sum_at = text.find("sum i: n. {");
  ASSERT_NE(sum_at, std::string::npos) << text;
  EXPECT_EQ(text.find("loop ", sum_at), std::string::npos) << "the loop left the sum:\n" << text;
  EXPECT_LT(text.find("loop "), sum_at) << text;
  for (auto [n, m] : std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {3, 1}, {1, 2}, {4, 5}}) {
    expect_same_values(p, q, "f", {opt_test::tensor({n, m}, 0.3), opt_test::tensor({m}, -0.2)});
  }
  const auto a = run(p, "f", {opt_test::tensor({2, 0}, 0.3), opt_test::tensor({0}, -0.2)});
  const auto b = run(q, "f", {opt_test::tensor({2, 0}, 0.3), opt_test::tensor({0}, -0.2)});
  ASSERT_FALSE(a.ok);
  ASSERT_FALSE(b.ok);
  EXPECT_EQ(a.error, b.error);
}

// Loops that stay per point: a trip count that varies with the point, a while loop, a body
// that may fail (a read not provably in range), a guard in the body (a strong zero in the
// state), a state that starts as a strong zero, two states, a costly initial value read again.
TEST(OptLoopBatch, LoopsThatMustStayPerPoint) {
  const std::vector<std::string> sources = {
      R"(def f(x: f64[n]) -> f64 { sum i. loop p = 1.0 for t < i { p * x[i] + x[t] } })",
      R"(def f(x: f64[n]) -> f64 {
  sum i. { let (p, k) = loop (p, k) = (x[i], 0) while k < 3 { (p * 0.5, k + 1) }; p }
})",
      R"(def f(x: f64[n], c: f64[k]) -> f64 { sum i. loop p = 0.0 for t < n { p * x[i] + c[t] } })",
      R"(def f(x: f64[n], c: f64[m]) -> f64 {
  sum i. loop p = 0.0 for t < m { p * x[i] + [t > 0] * c[t] }
})",
      R"(def f(x: f64[n], c: f64[m]) -> f64 {
  sum i. loop p = [i > 0] * x[i] for t < m { p * x[i] + c[t] }
})",
      R"(def f(x: f64[n], c: f64[m]) -> f64 {
  sum i. { let (a, b) = loop (a, b) = (x[i], 0.0) for t < m { (a * c[t], b + a) }; b }
})",
      // A costly initial value the region reads again after the loop (it would run twice).
      R"(def f(x: f64[n], c: f64[m]) -> f64 {
  sum i. { let a = exp(x[i]); let y = loop p = a for t < m { p * 0.5 + c[t] }; y * a }
})",
  };

  for (const auto& src : sources) {
    auto p = compile(src);
    auto q = batch(p, "f");
    EXPECT_EQ(printed(q, "f"), printed(p, "f")) << src;
  }
}

// The loop after a batched one reads its result per point: batched in turn.
TEST(OptLoopBatch, ChainsOfLoopsBatchOneAfterAnother) {
  auto p = compile(R"(
def f(x: f64[n], c: f64[m]) -> f64 {
  sum i. {
    let a = loop p = 0.0 for t < m { p * x[i] + c[t] }
    let b = loop q = 1.0 for t < m { q * 0.5 + sin(a * c[t]) }
    a * b
  }
}
)");
  auto q = batch(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(count(text, "loop "), 2) << text;
  EXPECT_EQ(count(text, "sum i: n. {\n    let"), 1) << text;
  for (int n : {0, 3}) {
    std::vector<double> x(static_cast<size_t>(n));
    for (int k = 0; k < n; ++k) x[static_cast<size_t>(k)] = 0.25 * k - 0.3;
    expect_same_values(p, q, "f", {vec(x), vec({0.5, -1.0, 2.0, 0.75})});
  }
}

// Through the whole pipeline: the gradient runs one forward and one backward sweep, and its
// cost stays within a constant of the function's as the sizes grow (it grew linearly in n
// when each point carried a dense cotangent of A).
const char* kSmoothing = R"(
def smooth(A: f64[n, m], c: f64[m]) -> f64 {
  sum i. loop p = 0.0 for t < m { p * 0.9 + A[i, t] * c[t] }
}
def horner(x: f64[n], c: f64[m]) -> f64 {
  sum i. loop p = 0.0 for t < m { p * x[i] + c[t] }
}
)";

TEST(OptLoopBatch, GradientIsOneBackwardSweep) {
  cotangent::Module m = ad_test::load_module(kSmoothing, "smoothing.cot", 2);
  for (const char* fn : {"smooth", "horner"}) {
    auto text = m.print_derivative(fn, cotangent::DerivativeKind::ValueAndGrad);
    ASSERT_TRUE(text.ok()) << text.message();
    EXPECT_EQ(count(text.value(), " for kk"), 1) << fn << "\n" << text.value();
  }
  for (int64_t n : {10, 40}) {
    const int64_t cols = n / 2 + 1;
    const std::vector<Value> args = {opt_test::tensor({n, cols}, 0.01),
                                     opt_test::tensor({cols}, 0.1)};
    auto f = m.cost("smooth", args);
    auto vg = m.derivative_cost("smooth", cotangent::DerivativeKind::ValueAndGrad, args);
    ASSERT_TRUE(f.ok() && vg.ok());
    EXPECT_LE(vg.value().ops, 3 * f.value().ops) << "n = " << n;
  }
}

TEST(OptLoopBatch, GradientsAgreeWithOptZero) {
  cotangent::Module m0 = ad_test::load_module(kSmoothing, "smoothing.cot", 0);
  cotangent::Module m2 = ad_test::load_module(kSmoothing, "smoothing.cot", 2);
  auto same = [&](const std::string& fn, const std::vector<Value>& args) {
    opt_test::expect_same_value_and_grad(m0, m2, fn, args);
  };

  for (auto [n, cols] : std::vector<std::pair<int64_t, int64_t>>{{0, 2}, {2, 0}, {1, 1}, {4, 3}}) {
    same("smooth", {opt_test::tensor({n, cols}, 0.3), opt_test::tensor({cols}, -0.2)});
    same("horner", {opt_test::tensor({n}, 0.3), opt_test::tensor({cols}, -0.2)});
  }
  same("horner", {vec({kInf, -1.0, std::nan("")}), vec({0.5, 2.0})});
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
