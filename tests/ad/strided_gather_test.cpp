// Gathers whose read mixes an outer index with a strided inner one: in `for i. sum k.
// h[i + 2 * k]` the transposer may not solve the outer i = j - 2k (the copy of i's level runs
// before k is bound); it keeps i summed and solves k = (j - i) / 2 where j - i is even. Dilated
// and causal convolutions have this shape. Gradients against finite differences and between
// optimization levels.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ad/ad_test_util.h"
#include "ad/fd_harness.h"
#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using cot::ad_test::rho;

const char* kSource = R"(
def dilated(h: f64[n]) -> f64 {
  let o = for i: n. sum k: 2. [i + 2 * k < n] * h[i + 2 * k]
  sum i. o[i] * o[i]
}
def causal(h: f64[n]) -> f64 {
  let o = for i: n. sum k: 3. [i >= 2 * k] * h[i - 2 * k]
  sum i. sin(o[i])
}
def stride3(h: f64[n], w: f64[2]) -> f64 {
  let o = for i: n. sum k: 2. [i + 3 * k < n] * w[k] * h[i + 3 * k]
  sum i. o[i] * o[i]
}
def two_outer(h: f64[n]) -> f64 {
  let o = for i: n, l: 2. sum k: 2. [i + l + 2 * k < n] * h[i + l + 2 * k]
  sum i, l. o[i, l] * o[i, l]
}
def twice(h: f64[n]) -> f64 {
  let o = for i: n. sum k: 2. [i + k + k < n] * h[i + k + k]
  sum i. exp(o[i])
}
)";

Module load(int opt) {
  return cot::ad_test::load_module(kSource, "strided.cot", opt);
}

Value ramp(int64_t n, double scale) {
  Value v = Value::zeros(DType::F64, {n});
  for (int64_t k = 0; k < n; ++k)
    v.f64_mut()[static_cast<size_t>(k)] = scale * (0.3 + k) - 0.1 * k * k;
  return v;
}

TEST(AdStridedGather, gradients_match_finite_differences_at_both_levels) {
  for (int opt : {0, 2}) {
    Module m = load(opt);
    for (int64_t n : {0, 1, 2, 5, 8}) {
      for (const char* fn : {"dilated", "causal", "stride3", "two_outer", "twice"}) {
        std::vector<Value> args = {ramp(n, 0.7)};
        if (std::string(fn) == "stride3") args.push_back(ramp(2, -0.4));
        auto g = m.value_and_grad(fn, args);
        ASSERT_TRUE(g.ok()) << fn << " opt " << opt << ": " << g.message();
        std::vector<int> active;
        for (size_t k = 0; k < args.size(); ++k) active.push_back(static_cast<int>(k));
        auto fd = adtest::fd_jacobian(m, fn, args, active);
        ASSERT_TRUE(fd.ok()) << fd.message();
        size_t col = 0;
        for (const auto& named : g.value().grad) {
          for (double x : named.value.f64_data()) {
            EXPECT_LE(rho(x, fd.value().at(0, static_cast<int64_t>(col))), adtest::kFdTol)
                << fn << " opt " << opt << " n " << n << " column " << col;
            ++col;
          }
        }
        EXPECT_EQ(col, static_cast<size_t>(fd.value().cols)) << fn;
      }
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
