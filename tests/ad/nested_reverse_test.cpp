// Reverse over reverse through loops: grad of a function that itself calls grad of a function
// with a loop (the inner gradient's saving loop and backward loop are differentiated again),
// compared with hessian (forward over reverse) and closed forms.
#include <gtest/gtest.h>

#include <cmath>

#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

double rho(double x, double y) {
  return std::abs(x - y) / std::max(1.0, std::abs(x) + std::abs(y));
}

const char* kSource = R"(
def f(x: f64) -> f64 { loop a = x for t < 3 { sin(a) * x } }
def g(x: f64) -> f64 { grad(f)(x) }
def gg(x: f64) -> f64 { grad(g)(x) }
def hs(x: f64) -> f64 { hessian(f)(x) }
def sq(x: f64) -> f64 { loop a = x for t < 1 { a * a } }
def gsq(x: f64) -> f64 { grad(sq)(x) }
def ggsq(x: f64) -> f64 { grad(gsq)(x) }
def w(x: f64) -> f64 {
  let (a, k) = loop (a, k) = (x, 0) while k < 4 { (a * x + 0.5 * a, k + 1) }
  a
}
def gw(x: f64) -> f64 { grad(w)(x) }
def ggw(x: f64) -> f64 { grad(gw)(x) }
def hw(x: f64) -> f64 { hessian(w)(x) }
)";

double eval(const Module& m, const char* fn, double x) {
  auto r = m.evaluate(fn, {Value::f64(x)});
  EXPECT_TRUE(r.ok()) << fn << ": " << r.message();
  return r.ok() ? r.value().as_f64() : std::nan("");
}

TEST(AdNestedReverse, GradOfGradThroughLoopsMatchesHessian) {
  auto m = Module::from_string(kSource, "nested.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  for (double x : {0.7, -0.4, 1.3}) {
    EXPECT_LE(rho(eval(m.value(), "gg", x), eval(m.value(), "hs", x)), 1e-12) << x;
    // sq(x) = x^2.
    EXPECT_LE(rho(eval(m.value(), "ggsq", x), 2.0), 1e-14) << x;
    // w(x) = x (x + 0.5)^4, so w'' = 8 (x + 0.5)^3 + 12 x (x + 0.5)^2.
    const double c = x + 0.5;
    EXPECT_LE(rho(eval(m.value(), "ggw", x), 8 * c * c * c + 12 * x * c * c), 1e-12) << x;
    EXPECT_LE(rho(eval(m.value(), "hw", x), 8 * c * c * c + 12 * x * c * c), 1e-12) << x;
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
