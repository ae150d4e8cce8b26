// A value an `if` branch yields more than once: every result that is it gets a cotangent, and
// the transposition sums them. `let (e, g) = if c then (t, t) else (x, x)` is what if-merge and
// CSE make of two equal ifs (the differential campaign's tests/opt/cse_test.cpp:175 program);
// the transposer took only the first result's cotangent, so the gradient of e + g was 1 where
// x comes through the else branch, not 2, at --opt 2 (and at --opt 0 when written this way).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ad/ad_test_util.h"
#include "ad/fd_harness.h"
#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using cot::ad_test::rho;

const char* kSource = R"(
def tuple_if(x: f64, c: bool) -> f64 {
  let (e, g) = if c then { let t = exp(x); (t, t) } else (x, x)
  e + 3.0 * g
}
def equal_ifs(x: f64, c: bool) -> f64 {
  let e = if c then exp(x) else x
  let g = if c then exp(x) else x
  x + e + 3.0 * g
}
)";

TEST(AdDuplicateBranchResults, GradientSumsEveryResult) {
  const double x = 0.75;
  for (int opt : {0, 1, 2}) {
    Module m = cot::ad_test::load_module(kSource, "dup.cot", opt);
    for (bool c : {false, true}) {
      const double d = c ? std::exp(x) : 1.0;  // the derivative of each branch's value
      const std::vector<Value> args{Value::f64(x), Value::boolean(c)};
      for (const auto& [fn, want] :
           {std::pair<std::string, double>{"tuple_if", 4.0 * d}, {"equal_ifs", 1.0 + 4.0 * d}}) {
        auto g = m.value_and_grad(fn, args);
        ASSERT_TRUE(g.ok()) << fn << ": " << g.message();
        const double got = g.value().grad.at(0).value.as_f64();
        EXPECT_LE(rho(got, want), adtest::kExactTol)
            << fn << " at -O" << opt << ", c = " << c << ": " << got << " vs " << want;
      }
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
