// A linear loop whose results all have a zero cotangent transposes to nothing (a symbolic zero,
// as JAX's): here the result of a while loop on the state is only compared with, so the
// reverse pass runs no loop for it, and dead-code elimination turns the saving loops whose
// stacks nobody reads into plain ones (a counted loop's count is then max(count, 0)).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ad/ad_test_util.h"
#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using cot::ad_test::rho;

// d f / d a = 0.5^n: the branch adds x[t] or 0, neither depending on the state.
const char* kSource = R"(
def f(x: f64[n], a: f64) -> f64 {
  loop s = a for t < n {
    0.5 * s + (if x[t] >= { let (r, _) = loop (b, c) = (x[0], 0) while c < 4 { (b + tanh(s), c + 1) }; r }
               then x[t] else 0.0)
  }
}
)";

Module load(int opt) {
  return cot::ad_test::load_module(kSource, "zero_cotangent.cot", opt);
}

Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  for (size_t k = 0; k < xs.size(); ++k) v.f64_mut()[k] = xs[k];
  return v;
}

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

TEST(AdZeroCotangentLoop, no_reverse_loop_for_a_result_only_compared_with) {
  for (int opt : {0, 2}) {
    Module m = load(opt);
    auto text = m.print_derivative("f", DerivativeKind::Grad, {"a"});
    ASSERT_TRUE(text.ok()) << text.message();
    // The reverse pass is one loop (over the outer iterations): none for the while loop.
    EXPECT_EQ(count(text.value(), " for kk"), 1u) << "opt " << opt << "\n" << text.value();
    // At opt 0 both loops save their states, as the unzip made them. At opt 2 nothing does:
    // the reverse step (0.5 * s) reads no primal state, so dead-code elimination makes the
    // forward sweep plain, its count T = max(n, 0), and then removes it.
    EXPECT_EQ(count(text.value(), " saving "), opt == 0 ? 2u : 0u) << "opt " << opt << "\n"
                                                                   << text.value();
    if (opt == 2) {
      EXPECT_NE(text.value().find("let T = max(n, 0)"), std::string::npos) << text.value();
    }
  }
}

TEST(AdZeroCotangentLoop, gradient_is_the_states_own_factor) {
  for (int opt : {0, 2}) {
    Module m = load(opt);
    for (const auto& x : std::vector<std::vector<double>>{
             {}, {0.3}, {2.0, -1.0, 0.5, 4.0, 3.0}, {-5.0, 5.0, -5.0}}) {
      auto r = m.value_and_grad("f", {vec(x), Value::f64(0.7)}, {"a"});
      ASSERT_TRUE(r.ok()) << r.message();
      const double expected = std::pow(0.5, static_cast<double>(x.size()));
      EXPECT_LE(rho(r.value().grad[0].value.as_f64(), expected), 1e-15)
          << "opt " << opt << " n " << x.size();
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
