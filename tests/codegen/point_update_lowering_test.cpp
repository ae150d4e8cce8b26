// In-place point updates of loop state (docs/design.md §10, ir/point_update.h): a state whose
// next value changes a few slices is stored into its own buffer. Values, strong-zero marks and
// failures must be the interpreter's to the bit, and the step must cost O(changed).
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "e2e/e2e_cases.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

// Every real element of v, in order, as bits (so -0.0 and +0.0 differ).
void bits_of(const Value& v, std::vector<uint64_t>& out) {
  if (v.is_tuple()) {
    for (const Value& e : v.elems()) bits_of(e, out);
    return;
  }
  for (int64_t k = 0; k < v.numel(); ++k)
    out.push_back(std::bit_cast<uint64_t>(v.element_as_f64(k)));
}

std::vector<uint64_t> bits(const Value& v) {
  std::vector<uint64_t> out;
  bits_of(v, out);
  return out;
}

// `fn` (and, when `grad`, its value and gradient) natively and in the interpreter: equal to the
// bit, or failing with the same message.
void expect_same_bits(const std::string& source, const std::string& fn,
                      const std::vector<Value>& args, bool grad) {
  auto m = Module::from_string(source, "update.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  std::vector<CompileRequest> requests{{fn, std::nullopt, {}, args}};
  if (grad) requests.push_back({fn, DerivativeKind::ValueAndGrad, {}, args});
  auto compiled = m.value().compile(requests, CompileOptions{1, 0, {}});
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  auto want = m.value().evaluate(fn, args);
  auto got = compiled.value()[0].call(args);
  ASSERT_EQ(got.ok(), want.ok()) << fn << ": " << (got.ok() ? want.message() : got.message());
  if (!want.ok()) {
    EXPECT_EQ(got.message(), want.message()) << fn;
    return;
  }
  EXPECT_EQ(bits(got.value()), bits(want.value())) << fn;
  if (!grad) return;
  auto vg = m.value().value_and_grad(fn, args);
  ASSERT_TRUE(vg.ok()) << vg.message();
  std::vector<Value> grads;
  for (const NamedValue& g : vg.value().grad) grads.push_back(g.value);
  Value want_vg = Value::tuple({vg.value().value, Value::tuple(grads)});
  auto got_vg = compiled.value()[1].call(args);
  ASSERT_TRUE(got_vg.ok()) << got_vg.message();
  EXPECT_EQ(bits(got_vg.value()), bits(want_vg)) << fn << " value_and_grad";
}

std::string emitted_code(const std::string& source, const std::string& fn,
                         const std::vector<Value>& args, bool grad = false) {
  auto m = Module::from_string(source, "update.cot");
  if (!m.ok()) return m.message();
  std::optional<DerivativeKind> kind;
  if (grad) kind = DerivativeKind::ValueAndGrad;
  auto compiled = m.value().compile({{fn, kind, {}, args}}, CompileOptions{1, 0, {}});
  if (!compiled.ok()) return compiled.message();
  return compiled.value()[0].source();
}

Value vector_of(std::vector<double> xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  auto d = v.f64_mut();
  for (size_t k = 0; k < xs.size(); ++k) d[k] = xs[k];
  return v;
}

// Signed zeros, an infinity and ordinary values: what the strong zeros and the -0.0 of an
// Iverson form's `+ 0.0` can tell apart.
Value awkward(size_t n) {
  std::vector<double> xs(n);
  for (size_t k = 0; k < n; ++k) {
    xs[k] = k % 5 == 0 ? -0.0 : k % 7 == 3 ? 0.0 : std::sin(static_cast<double>(k) + 0.5);
  }
  return vector_of(xs);
}

const char* kCumsums = R"(
def cumsum(x: f64[n]) -> f64[n] {
  loop s = for i: n. 0.0 for k < n {
    for i. if i == k then (if k == 0 then x[0] else s[k - 1] + x[k]) else s[i]
  }
}
def rcumsum(x: f64[n]) -> f64[n] {
  loop s = for i: n. 0.0 for t < n {
    let k = n - 1 - t
    for i. if i == k then (if k == n - 1 then x[k] else s[k + 1] + x[k]) else s[i]
  }
}
def cumsum_iv(x: f64[n]) -> f64[n] {
  loop s = for i: n. -0.0 * x[i] for k < n {
    for i. [i == k] * x[k] + [i == k && k >= 1] * s[k - 1] + [i != k] * s[i]
  }
}
def loss(x: f64[n]) -> f64 {
  let s = cumsum(x)
  sum i. s[i] * s[i]
}
def rloss(x: f64[n]) -> f64 {
  let s = rcumsum(x)
  sum i. s[i] * s[i]
}
def loss_iv(x: f64[n]) -> f64 {
  let s = cumsum_iv(x)
  sum i. s[i] * s[i]
}
)";

TEST(NativePointUpdate, cumulative_sums_agree_to_the_bit) {
  for (size_t n : {1, 2, 9, 200, 300}) {
    expect_same_bits(kCumsums, "cumsum", {awkward(n)}, false);
    expect_same_bits(kCumsums, "rcumsum", {awkward(n)}, false);
    expect_same_bits(kCumsums, "cumsum_iv", {awkward(n)}, false);
    // The loss's sum of 256 terms or more adds in vector lanes, off the interpreter's order.
    if (n >= 256) continue;
    expect_same_bits(kCumsums, "loss", {awkward(n)}, true);
    expect_same_bits(kCumsums, "rloss", {awkward(n)}, true);
    expect_same_bits(kCumsums, "loss_iv", {awkward(n)}, true);
  }
  expect_same_bits(kCumsums, "cumsum", {vector_of({})}, false);
}

TEST(NativePointUpdate, a_cumulative_sum_stores_one_element_per_step) {
  Value x = awkward(1000);
  for (const char* fn : {"cumsum", "rcumsum", "cumsum_iv"}) {
    const std::string code = emitted_code(kCumsums, fn, {x});
    // The only loops: the initial state's, the copy into it, the loop over k, and for the
    // Iverson form the first step's pass that turns -0.0 into +0.0. No swap, no second buffer.
    EXPECT_EQ(code.find("swapped"), std::string::npos) << fn << "\n" << code;
    EXPECT_EQ(code.find("_next"), std::string::npos) << fn << "\n" << code;
  }
  // In the if-forms nothing loops inside the loop over the steps: every loop after its start
  // is a piece of it (partitioning peels its first iteration).
  for (const char* fn : {"cumsum", "rcumsum"}) {
    const std::string code = emitted_code(kCumsums, fn, {x});
    const size_t steps = code.find("for (int64_t", code.find("_iterations = int64_t(0)"));
    ASSERT_NE(steps, std::string::npos) << fn << "\n" << code;
    const std::string head = code.substr(steps, code.find(" =", steps) - steps);
    for (size_t at = code.find("for (", steps); at != std::string::npos;
         at = code.find("for (", at + 1)) {
      EXPECT_EQ(code.compare(at, head.size(), head), 0) << fn << ": " << code.substr(at, 60);
    }
  }
}

const char* kChol = R"(
def chol(A: f64[n, n]) -> f64[n, n] {
  loop L = for r: n, c: n. 0.0 for j < n {
    let d = sqrt(A[j, j] - (sum k. [k < j] * L[j, k] * L[j, k]))
    for r, c. if c == j then (if r == j then d else [r > j] * (A[r, j] - (sum k. [k < j] * L[r, k] * L[j, k])) / d) else L[r, c]
  }
}
def loss(A: f64[n, n]) -> f64 {
  let L = chol(A)
  sum r, c. L[r, c] * L[r, c]
}
)";

Value spd(int64_t n) {
  Value a = Value::zeros(DType::F64, {n, n});
  auto d = a.f64_mut();
  for (int64_t r = 0; r < n; ++r) {
    for (int64_t c = 0; c < n; ++c) {
      d[r * n + c] = (r == c ? n + 1.0 : 0.0) + std::cos(static_cast<double>(r + 2 * c)) * 0.3 +
                     std::cos(static_cast<double>(c + 2 * r)) * 0.3;
    }
  }
  return a;
}

// A state whose pinned slices cover half of it or more gains nothing in place: two elements,
// one changed per step, keep the two buffers (values agree either way).
TEST(NativePointUpdate, slices_covering_half_the_state_keep_two_buffers) {
  const std::string code = emitted_code(kCumsums, "cumsum", {awkward(2)});
  EXPECT_NE(code.find("_next"), std::string::npos) << code;
  EXPECT_EQ(emitted_code(kCumsums, "cumsum", {awkward(3)}).find("_next"), std::string::npos);
}

TEST(NativePointUpdate, a_column_update_agrees_to_the_bit) {
  for (int64_t n : {1, 3, 12}) {
    expect_same_bits(kChol, "chol", {spd(n)}, false);
    expect_same_bits(kChol, "loss", {spd(n)}, true);
  }
  const std::string code = emitted_code(kChol, "chol", {spd(12)});
  EXPECT_EQ(code.find("swapped"), std::string::npos) << code;
}

TEST(NativePointUpdate, pins_out_of_range_change_nothing) {
  const char* src = R"(
def f(x: f64[n], m: i64) -> f64[n] {
  loop s = x for k < m {
    for i. if i == k - 2 then s[i] * 2.0 + 1.0 else s[i]
  }
}
)";
  for (int64_t m : {0, 2, 5, 9, 40}) expect_same_bits(src, "f", {awkward(7), Value::i64(m)}, false);
}

TEST(NativePointUpdate, failures_in_a_box_are_the_interpreters) {
  const char* src = R"(
def f(x: f64[n], m: i64) -> f64[n] {
  loop s = for i: n. 0.0 for k < m {
    for i. if i == k then x[k + 2] else s[i]
  }
}
)";
  for (int64_t m : {3, 5, 6}) expect_same_bits(src, "f", {awkward(6), Value::i64(m)}, false);
}

TEST(NativePointUpdate, strong_zeros_stay_marked) {
  // s starts with strong zeros where x <= 0; the update keeps them where it does not touch,
  // and makes more (a sum of two strong zeros); the product with an infinity tells them apart.
  const char* src = R"(
def f(x: f64[n], y: f64[n]) -> f64[n] {
  let s0 = for i. [x[i] > 0.0] * x[i]
  let s = loop s = s0 for k < n - 1 {
    for i. if i == k then s[i] + s[i + 1] else s[i]
  }
  for i. s[i] * y[i]
}
)";
  const double inf = std::numeric_limits<double>::infinity();
  Value x = vector_of({1.0, -1.0, -2.0, 0.5, -0.0, -3.0, 2.0});
  Value y = vector_of({inf, inf, inf, 1.0, inf, inf, 2.0});
  expect_same_bits(src, "f", {x, y}, false);
}

TEST(NativePointUpdate, a_state_read_after_its_update_keeps_its_old_value) {
  // The stores happen at the end of the step: the reads after the generator see the old state.
  const char* src = R"(
def f(x: f64[n]) -> (f64[n], f64) {
  loop (s, a) = (x, 0.0) for k < n {
    let t = for i. if i == k then s[i] * 3.0 else s[i]
    (t, a + s[k] + s[0])
  }
}
)";
  expect_same_bits(src, "f", {awkward(8)}, false);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
