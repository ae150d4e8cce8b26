// What the lowering does for speed, checked against the interpreter at sizes where it applies
// (the agreement tests' sizes are too small to trigger most of it): interchanged sums (with an
// epilogue, in lanes), window splitting, guards hoisted out of sums and loops tightened by them
// (with the strong zeros they skip), and the earliest failing iteration of a parallel loop.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "e2e/e2e_cases.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using e2e::uniform_tensor;

// Runs `fn` (and, when `grad`, its value and gradient) through both backends: the values must
// be equal to the last bit where the lowering keeps the interpreter's order of additions.
void expect_same(const std::string& source, const std::string& fn, const std::vector<Value>& args,
                 bool grad, double tol = 0.0) {
  auto m = Module::from_string(source, "lowering.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  std::vector<CompileRequest> requests{{fn, std::nullopt, {}, args}};
  if (grad) requests.push_back({fn, DerivativeKind::ValueAndGrad, {}, args});
  auto compiled = m.value().compile(requests, CompileOptions{1, 0, {}});
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  auto want = m.value().evaluate(fn, args);
  ASSERT_TRUE(want.ok()) << want.message();
  auto got = compiled.value()[0].call(args);
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(e2e::compare_values(got.value(), want.value(), tol), "") << fn;
  if (!grad) return;
  auto vg = m.value().value_and_grad(fn, args);
  ASSERT_TRUE(vg.ok()) << vg.message();
  std::vector<Value> grads;
  for (const NamedValue& g : vg.value().grad) grads.push_back(g.value);
  Value want_vg =
      Value::tuple({vg.value().value, grads.size() == 1 ? grads[0] : Value::tuple(grads)});
  auto got_vg = compiled.value()[1].call(args);
  ASSERT_TRUE(got_vg.ok()) << got_vg.message();
  EXPECT_EQ(e2e::compare_values(got_vg.value(), want_vg, tol), "") << fn << " value_and_grad";
}

TEST(NativeLowering, interchanged_sums_add_in_the_interpreters_order) {
  std::mt19937_64 rng(1);
  // A^T r: a generator over columns of sums over rows (interchanged: rows in the inner loop).
  const char* src = R"(
def atr(A: f64[m, n], r: f64[m]) -> f64[n] {
  for j. sum i. A[i, j] * r[i]
}
def ls(A: f64[m, n], x: f64[n], b: f64[m]) -> f64 {
  let r = for i. (sum j. A[i, j] * x[j]) - b[i]
  0.5 * sum i. r[i] * r[i]
}
)";
  expect_same(src, "atr", {uniform_tensor({300, 70}, rng), uniform_tensor({300}, rng)}, false);
  expect_same(src, "ls",
              {uniform_tensor({90, 80}, rng), uniform_tensor({80}, rng), uniform_tensor({90}, rng)},
              true);
}

TEST(NativeLowering, a_suffix_of_the_generator_moves_inside_the_sum) {
  std::mt19937_64 rng(2);
  // Like the GMM gradient's Qs: for k, r, c. sum i. [c <= r] * x[i, k, c] * y[k, r, i].
  const char* src = R"(
def qs(x: f64[n, K, d], y: f64[K, d, n]) -> f64[K, d, d] {
  for k, r, c. sum i. [c <= r] * x[i, k, c] * y[k, r, i]
}
def qs_loss(x: f64[n, K, d], y: f64[K, d, n]) -> f64 {
  let q = qs(x, y)
  sum k, r, c. q[k, r, c] * q[k, r, c]
}
)";
  expect_same(src, "qs", {uniform_tensor({120, 3, 6}, rng), uniform_tensor({3, 6, 120}, rng)},
              false);
  expect_same(src, "qs_loss", {uniform_tensor({100, 2, 4}, rng), uniform_tensor({2, 4, 100}, rng)},
              true);
}

// The C++ the lowering emits for `fn` at `args` (one thread).
std::string emitted(const std::string& source, const std::string& fn,
                    const std::vector<Value>& args) {
  auto m = Module::from_string(source, "lowering.cot");
  if (!m.ok()) return m.message();
  auto compiled = m.value().compile({{fn, std::nullopt, {}, args}}, CompileOptions{1, 0, {}});
  if (!compiled.ok()) return compiled.message();
  return compiled.value()[0].source();
}

TEST(NativeLowering, a_sum_followed_by_arithmetic_is_interchanged_with_its_mask) {
  std::mt19937_64 rng(5);
  // The GMM gradient's Qs: the block's sums first (the skipped triangle strong zeros), then the
  // rest of the body per element; a strong zero times inf is 0, an ordinary 0 times inf NaN.
  const char* src = R"(
def tri(x: f64[n, K, d], y: f64[K, d, n], Q: f64[K, d, d], t: f64) -> f64[K, d, d] {
  for k, r, c. (sum i. [c <= r] * x[i, k, c] * y[k, r, i]) * t + Q[k, r, c]
}
def relu(x: f64[n, K, d], t: f64) -> f64[K, d] {
  for k, c. (sum i. [x[i, k, c] > 0.0] * x[i, k, c]) * t
}
def tri_loss(x: f64[n, K, d], y: f64[K, d, n], Q: f64[K, d, d]) -> f64 {
  let q = for k, r, c. exp(0.1 * sum i. [c <= r] * x[i, k, c] * y[k, r, i]) * Q[k, r, c]
  sum k, r, c. q[k, r, c] * q[k, r, c]
}
)";
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<Value> tri_args{uniform_tensor({100, 3, 5}, rng),
                                    uniform_tensor({3, 5, 100}, rng),
                                    uniform_tensor({3, 5, 5}, rng), Value::f64(inf)};
  expect_same(src, "tri", tri_args, false);
  EXPECT_NE(emitted(src, "tri", tri_args).find("acc_array"), std::string::npos);
  // Per-term masks: the sums of column (0, 1), every term negative, are strong zeros.
  Value x = uniform_tensor({90, 3, 4}, rng);
  for (int64_t i = 0; i < 90; ++i) x.f64_mut()[static_cast<size_t>(i * 12 + 1)] = -1.0 - i;
  const std::vector<Value> relu_args{x, Value::f64(inf)};
  expect_same(src, "relu", relu_args, false);
  EXPECT_NE(emitted(src, "relu", relu_args).find("acc_live_array"), std::string::npos);
  auto m = Module::from_string(src, "lowering.cot");
  ASSERT_TRUE(m.ok());
  auto r = m.value().evaluate("relu", relu_args);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().f64_data()[1], 0.0);
  EXPECT_EQ(r.value().f64_data()[0], inf);
  expect_same(src, "tri_loss",
              {uniform_tensor({80, 2, 4}, rng), uniform_tensor({2, 4, 80}, rng),
               uniform_tensor({2, 4, 4}, rng)},
              true);
}

TEST(NativeLowering, a_triangular_sum_over_the_block_is_interchanged) {
  std::mt19937_64 rng(7);
  // The GMM gradient's dxc: for i, c. sum r >= c. Q[r, c] * y[i, r]: the guard bounds the
  // loop over c inside the loop over r (each element's terms still in the order of r).
  const char* src = R"(
def lt(Q: f64[d, d], y: f64[n, d]) -> f64[n, d] {
  for i, c. sum r. [r >= c] * Q[r, c] * y[i, r]
}
)";
  const std::vector<Value> args{uniform_tensor({10, 10}, rng), uniform_tensor({50, 10}, rng)};
  expect_same(src, "lt", args, false);
  EXPECT_NE(emitted(src, "lt", args).find("acc_array"), std::string::npos);
}

TEST(NativeLowering, short_blocks_of_long_sums_run_in_lanes) {
  std::mt19937_64 rng(6);
  // A convolution's kernel gradient: 3 x 3 sums of 40 x 37 terms, each keeping 4 partial sums
  // along j (37 = 9 groups of 4 and 1). Masked terms keep the interpreter's order.
  const char* src = R"(
def corr(dy: f64[m, n], img: f64[h, w]) -> f64[3, 3] {
  for a: 3, b: 3. sum i: m, j: n. dy[i, j] * img[i + a, j + b]
}
def relu_corr(dy: f64[m, n], img: f64[h, w]) -> f64[3, 3] {
  for a: 3, b: 3. sum i: m, j: n. [dy[i, j] > 0.0] * dy[i, j] * img[i + a, j + b]
}
)";
  const std::vector<Value> args{uniform_tensor({40, 37}, rng), uniform_tensor({42, 39}, rng)};
  expect_same(src, "corr", args, false, 1e-12);
  EXPECT_NE(emitted(src, "corr", args).find("#pragma omp simd"), std::string::npos);
  expect_same(src, "relu_corr", args, false);
  EXPECT_EQ(emitted(src, "relu_corr", args).find("#pragma omp simd"), std::string::npos);
}

TEST(NativeLowering, long_sums_run_in_vector_lanes) {
  std::mt19937_64 rng(7);
  // lse's sum of exponentials: 1000 terms in lanes (reassociated, within 1e-12); 100 terms, or
  // terms that can be masked, in the interpreter's order, to the bit.
  const char* src = R"(
def lse(x: f64[n]) -> f64 {
  let m = max i. x[i]
  m + log(sum i. exp(x[i] - m))
}
def positive(x: f64[n]) -> f64 {
  sum i. [x[i] > 0.0] * exp(x[i])
}
def rows(A: f64[m, n]) -> f64 {
  sum i, j. A[i, j] * A[i, j]
}
)";
  const Value x = uniform_tensor({1000}, rng);
  expect_same(src, "lse", {x}, true, 1e-12);
  EXPECT_NE(emitted(src, "lse", {x}).find("#pragma omp simd reduction(+:"), std::string::npos);
  const Value short_x = uniform_tensor({100}, rng);
  expect_same(src, "lse", {short_x}, false);
  EXPECT_EQ(emitted(src, "lse", {short_x}).find("#pragma omp simd reduction"), std::string::npos);
  expect_same(src, "positive", {x}, false);
  EXPECT_EQ(emitted(src, "positive", {x}).find("#pragma omp simd reduction"), std::string::npos);
  // The inner loop of a sum over two indices; the total over rows stays a sum of sums.
  const Value a = uniform_tensor({7, 300}, rng);
  expect_same(src, "rows", {a}, true, 1e-12);
  EXPECT_NE(emitted(src, "rows", {a}).find("#pragma omp simd reduction(+:"), std::string::npos);
}

TEST(NativeLowering, short_loops_call_the_scalar_functions) {
  std::mt19937_64 rng(10);
  // Nine elements are enough for GCC to vectorize a loop on its own; only the loops the emitter
  // marks (long ones) may call libmvec's vector functions, so these agree to the bit.
  const char* src = R"(
def each(x: f64[n], y: f64[n]) -> f64[n] {
  for i. exp(x[i]) + log(y[i]) + sin(x[i]) + cos(x[i]) + tan(x[i]) + tanh(x[i]) +
    log1p(y[i]) + expm1(x[i]) + atan2(x[i], y[i]) + sigmoid(x[i]) + pow(y[i], x[i])
}
def total(x: f64[n], y: f64[n]) -> f64 {
  sum i. exp(x[i]) * tanh(y[i]) + sin(x[i])
}
def th(x: f64[n], y: f64[n]) -> f64[n] { for i. tanh(x[i]) }
def sn(x: f64[n], y: f64[n]) -> f64 { sum i. sin(x[i]) }
def ex(x: f64[n], y: f64[n]) -> f64[n] { for i. exp(x[i]) }
)";
  const Value x = uniform_tensor({9}, rng);
  Value y = uniform_tensor({9}, rng);
  for (double& v : y.f64_mut()) v = 0.5 + std::abs(v);
  expect_same(src, "each", {x, y}, false);
  expect_same(src, "total", {x, y}, false);
  for (const char* fn : {"th", "sn", "ex"}) expect_same(src, fn, {x, y}, false);
  const std::string code = emitted(src, "each", {x, y});
  ASSERT_NE(code.find("cot_fn0("), std::string::npos);
  EXPECT_EQ(code.find("cot_vec::", code.find("cot_fn0(")), std::string::npos);
  // Long, the same loops call the vector versions.
  const Value lx = uniform_tensor({1000}, rng);
  Value ly = uniform_tensor({1000}, rng);
  for (double& v : ly.f64_mut()) v = 0.5 + std::abs(v);
  expect_same(src, "each", {lx, ly}, false, 1e-12);
  EXPECT_NE(emitted(src, "each", {lx, ly}).find("cot_vec::tanh("), std::string::npos);
}

TEST(NativeLowering, a_branch_on_sizes_lowers_only_the_branch_taken) {
  std::mt19937_64 rng(9);
  // The shapes decide the condition (as they decide a Jacobian's mode): each specialization
  // holds only its branch's code, and computes the interpreter's value to the bit.
  const char* src = R"(
def pick(x: f64[n]) -> f64 {
  if n <= 4 then sum i. sin(x[i]) else sum i. tanh(x[i])
}
)";
  const Value small = uniform_tensor({3}, rng);
  const Value large = uniform_tensor({9}, rng);
  expect_same(src, "pick", {small}, false);
  expect_same(src, "pick", {large}, false);
  const std::string small_code = emitted(src, "pick", {small});
  const std::string large_code = emitted(src, "pick", {large});
  const std::string body = "cot_fn0(";
  ASSERT_NE(small_code.find(body), std::string::npos);
  ASSERT_NE(large_code.find(body), std::string::npos);
  EXPECT_NE(small_code.find("sin(", small_code.find(body)), std::string::npos);
  EXPECT_EQ(small_code.find("tanh(", small_code.find(body)), std::string::npos);
  EXPECT_NE(large_code.find("tanh(", large_code.find(body)), std::string::npos);
  EXPECT_EQ(large_code.find("sin(", large_code.find(body)), std::string::npos);
}

TEST(NativeLowering, a_parallel_loop_that_cannot_fail_tracks_no_failure) {
  std::mt19937_64 rng(8);
  // Nothing in the body can fail: a plain worksharing loop in vector lanes (over fixed blocks
  // of iterations, run in lanes: NativeThreads), on one thread and on two.
  const char* src = R"(
def soft(x: f64[n]) -> f64[n] {
  for i. exp(x[i]) / (1.0 + exp(x[i]))
}
)";
  const Value x = uniform_tensor({50000}, rng);
  const std::string code = emitted(src, "soft", {x});
  const size_t blocks = code.find("_block = 0;");
  ASSERT_NE(blocks, std::string::npos);
  EXPECT_NE(code.rfind("#pragma omp for schedule(static)", blocks), std::string::npos);
  EXPECT_NE(code.find("#pragma omp simd", blocks), std::string::npos);
  EXPECT_EQ(code.find("first_fail"), std::string::npos);
  expect_same(src, "soft", {x}, false, 1e-12);
  auto m = Module::from_string(src, "lowering.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  auto want = m.value().evaluate("soft", {x});
  ASSERT_TRUE(want.ok()) << want.message();
  auto two = m.value().compile({{"soft", std::nullopt, {}, {x}}}, CompileOptions{2, 0, {}});
  ASSERT_TRUE(two.ok()) << two.message();
  auto got = two.value()[0].call({x});
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(e2e::compare_values(got.value(), want.value(), 1e-12), "");
}

TEST(NativeLowering, generators_inside_a_sequential_loop_run_in_vector_lanes) {
  std::mt19937_64 rng(11);
  // A step loop's generators run on one thread, in lanes (`omp simd`): the language makes a
  // generator's points independent. Left to GCC, a run-time alias check that merged the arena's
  // buffers into one range (which held the swapped loop states) sent the ode's loops to scalar
  // code. A body that can fail (the gather's index check) stays in order, and so does a sum.
  const char* src = R"(
def steps(x: f64[n], s: i64) -> f64[n] {
  loop y = x for step < s {
    let a = for i. y[i] * x[i] + 0.5
    for i. tanh(a[i]) + y[i]
  }
}
def steps_loss(x: f64[n], s: i64) -> f64 {
  let y = steps(x, s)
  sum i. y[i] * y[i]
}
def gather_steps(x: f64[n], idx: i64[n], s: i64) -> f64[n] {
  loop y = x for step < s {
    for i. y[idx[i]] * 0.5 + x[i]
  }
}
def total_steps(x: f64[n], s: i64) -> f64 {
  loop t = 0.0 for step < s {
    t + sum i. x[i] * x[i]
  }
}
)";
  const Value x = uniform_tensor({1000}, rng);
  const Value s = Value::i64(3);
  // In lanes, tanh is libmvec's: within 1e-12 of the interpreter, not to the bit.
  expect_same(src, "steps", {x, s}, false, 1e-12);
  expect_same(src, "steps_loss", {x, s}, true, 1e-12);
  const std::string code = emitted(src, "steps", {x, s});
  const size_t step = code.find("_step = ");
  ASSERT_NE(step, std::string::npos) << code;
  EXPECT_NE(code.find("#pragma omp simd\n", step), std::string::npos) << code;

  Value idx = Value::zeros(DType::I64, {1000});
  for (int64_t i = 0; i < 1000; ++i) idx.i64_mut()[static_cast<size_t>(i)] = (i * 7 + 3) % 1000;
  expect_same(src, "gather_steps", {x, idx, s}, false);
  const std::string gather = emitted(src, "gather_steps", {x, idx, s});
  const size_t gather_step = gather.find("_step = ");
  ASSERT_NE(gather_step, std::string::npos) << gather;
  EXPECT_EQ(gather.find("#pragma omp simd\n", gather_step), std::string::npos) << gather;
  const std::string total = emitted(src, "total_steps", {x, s});
  const size_t total_step = total.find("_step = ");
  ASSERT_NE(total_step, std::string::npos) << total;
  EXPECT_EQ(total.find("#pragma omp simd\n", total_step), std::string::npos) << total;
}

TEST(NativeLowering, windowed_sums_split_at_the_borders) {
  std::mt19937_64 rng(3);
  // The convolution's image gradient is a guarded sum over the output map: the lowering runs
  // the kernel's window, split into borders and an interior.
  const char* src = R"(
def conv_loss(img: f64[h, w], ker: f64[p, q]) -> f64 {
  let y = for i: h - p + 1, j: w - q + 1. sum a, b. img[i + a, j + b] * ker[a, b]
  0.5 * sum i, j. y[i, j] * y[i, j]
}
def full(y: f64[m], ker: f64[p]) -> f64[m + p - 1] {
  for j: m + p - 1. sum i: m. [i <= j && j < i + p] * y[i] * ker[j - i]
}
)";
  // The kernel gradient's sums run in lanes (reassociated): within 1e-12, not to the bit.
  expect_same(src, "conv_loss", {uniform_tensor({23, 19}, rng), uniform_tensor({5, 3}, rng)}, true,
              1e-12);
  expect_same(src, "full", {uniform_tensor({40}, rng), uniform_tensor({7}, rng)}, false);
}

TEST(NativeLowering, skipped_points_are_strong_zeros) {
  // Every point of the sum fails its guard: the sum is a strong zero, and a strong zero times
  // inf is 0 (docs/language.md §5.6), not NaN. A guard on the outer index only (hoisted out of the
  // sum) gives strong zeros for half the rows.
  const char* src = R"(
def none(x: f64[n], t: f64) -> f64 {
  let s = sum j. [j > n] * x[j]
  s * t
}
def upper(x: f64[n, m], t: f64) -> f64[n] {
  for i. (sum j. [i >= 3] * x[i, j]) * t
}
)";
  std::mt19937_64 rng(4);
  const double inf = std::numeric_limits<double>::infinity();
  expect_same(src, "none", {uniform_tensor({6}, rng), Value::f64(inf)}, false);
  expect_same(src, "upper", {uniform_tensor({6, 70}, rng), Value::f64(inf)}, false);
  auto m = Module::from_string(src, "lowering.cot");
  ASSERT_TRUE(m.ok());
  EvalOptions native;
  native.backend = Backend::Native;
  auto r = m.value().evaluate("none", {uniform_tensor({6}, rng), Value::f64(inf)}, native);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().as_f64(), 0.0);
}

TEST(NativeLowering, a_parallel_loop_reports_its_earliest_failing_iteration) {
  const char* src = R"(
def gather(x: f64[n], idx: i64[k]) -> f64[k] {
  for i. exp(x[idx[i]]) + sin(x[idx[i]]) * cos(x[idx[i]])
}
)";
  auto m = Module::from_string(src, "lowering.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  Value x = Value::zeros(DType::F64, {10});
  Value idx = Value::zeros(DType::I64, {40000});
  for (int64_t& v : idx.i64_mut()) v = 3;
  idx.i64_mut()[21000] = 17;  // the first bad index, in the second thread's half
  idx.i64_mut()[39000] = 12;
  idx.i64_mut()[30000] = -1;
  auto compiled = m.value().compile({{"gather", std::nullopt, {}, {x, idx}}}, {2, 0, {}});
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  auto want = m.value().evaluate("gather", {x, idx});
  ASSERT_FALSE(want.ok());
  for (int run = 0; run < 5; ++run) {
    auto got = compiled.value()[0].call({x, idx});
    ASSERT_FALSE(got.ok());
    EXPECT_EQ(got.message(), want.message());
  }
  EXPECT_NE(want.message().find("index 17 is out of range"), std::string::npos);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
