// A tensor a loop reads at positions that move with its counter (`x[t]`, `x[t + 1]`, a scan's
// xs) transposes to a scatter of each step's cotangent after the backward loop (transpose.h),
// not to a dense cotangent carried through it. The gradients match their closed forms at
// --opt=0 and --opt=2, on empty and one-step loops too.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ad/ad_test_util.h"
#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using cot::ad_test::rho;

const char* kSource = R"(
def decay(x: f64[n]) -> f64 {
  loop p = 0.0 for t < n { 0.5 * p + x[t] * x[t] }
}
def products(x: f64[n]) -> f64 {
  loop p = 1.0 for t < n - 1 { p * x[t + 1] }
}
)";

Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  for (size_t k = 0; k < xs.size(); ++k) v.f64_mut()[k] = xs[k];
  return v;
}

std::vector<double> ramp(size_t n) {
  std::vector<double> xs;
  for (size_t k = 0; k < n; ++k) xs.push_back(0.75 - 0.3 * static_cast<double>(k));
  return xs;
}

TEST(AdSteppedRead, the_cotangent_is_scattered_after_the_backward_loop) {
  Module m = cot::ad_test::load_module(kSource, "stepped.cot", 0);
  auto text = m.print_derivative("decay", DerivativeKind::Grad);
  ASSERT_TRUE(text.ok()) << text.message();
  EXPECT_NE(text.value().find("accum[n] q"), std::string::npos) << text.value();
  // The backward loop saves its states (each step's cotangent of x[t] among them).
  EXPECT_NE(text.value().find("for kk < "), std::string::npos) << text.value();
  EXPECT_NE(text.value().find(" saving {"), std::string::npos) << text.value();
}

TEST(AdSteppedRead, gradients_match_their_closed_forms) {
  for (int opt : {0, 2}) {
    Module m = cot::ad_test::load_module(kSource, "stepped.cot", opt);
    for (size_t n : {0u, 1u, 2u, 6u}) {
      const std::vector<double> x = ramp(n);
      // decay: d/dx[t] = 2 x[t] 0.5^(n - 1 - t).
      auto d = m.value_and_grad("decay", {vec(x)});
      ASSERT_TRUE(d.ok()) << d.message();
      for (size_t t = 0; t < n; ++t) {
        const double expected = 2 * x[t] * std::pow(0.5, static_cast<double>(n - 1 - t));
        EXPECT_LE(rho(d.value().grad[0].value.f64_data()[t], expected), 1e-14)
            << "opt " << opt << " n " << n << " t " << t;
      }
      // products: p = x[1] * ... * x[n-1]; d/dx[0] = 0, d/dx[t] = p / x[t].
      auto p = m.value_and_grad("products", {vec(x)});
      ASSERT_TRUE(p.ok()) << p.message();
      for (size_t t = 0; t < n; ++t) {
        double expected = 0;
        if (t > 0) {
          expected = 1;
          for (size_t k = 1; k < n; ++k) expected *= k == t ? 1.0 : x[k];
        }
        EXPECT_LE(rho(p.value().grad[0].value.f64_data()[t], expected), 1e-14)
            << "opt " << opt << " n " << n << " t " << t;
      }
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
