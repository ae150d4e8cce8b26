// Mask propagation (docs/language.md §5.6, [Bernstein20] §5.4): a product with a strong zero, a
// strong zero divided by anything, its negation and sums of strong zeros are strong zeros, 0 even
// where the other operand is infinite or NaN; an ordinary zero is not strong. The derivative of a
// guarded value is then 0 where the guard fails at every optimization level (the optimizer's
// sinking of a value under its guard and the reference agree).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ad/ad_test_util.h"
#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

const char* kSource = R"(
def products(x: f64, p: bool) -> (f64, f64, f64, f64, f64, f64, f64) {
  let z = [p] * x
  let inf = 1.0 / 0.0
  let nan = inf - inf
  let zero = 0.0 * x
  (z * inf, nan * z, z / 0.0, -z, zero * inf, z * 2.0 + 1.0, (z + z - 0.0) * inf)
}
def empty_and_if(x: f64[n], a: f64, p: bool, q: bool) -> (f64, f64) {
  let inf = 1.0 / 0.0
  let z = [p] * a
  let y = if q then z else 1.0
  ((sum i: n. a) * inf, y * inf)
}
def guarded_log(x: f64[n], p: f64) -> f64 {
  let a = log(x[0]) * sum i. x[i]
  [p > 0.0] * a + x[1]
}
)";

Module load(int opt) {
  return cot::ad_test::load_module(kSource, "masks.cot", opt);
}

std::vector<double> leaves(const Value& v) {
  std::vector<double> out;
  for (const auto& e : v.elems()) out.push_back(e.as_f64());
  return out;
}

TEST(InterpMaskPropagation, products_with_a_strong_zero_are_strong_zeros) {
  for (int opt : {0, 2}) {
    Module m = load(opt);
    auto off = m.evaluate("products", {Value::f64(3.0), Value::boolean(false)});
    ASSERT_TRUE(off.ok()) << off.message();
    const auto z = leaves(off.value());
    ASSERT_EQ(z.size(), 7u);
    EXPECT_EQ(z[0], 0.0) << "opt " << opt;  // strong zero * inf
    EXPECT_EQ(z[1], 0.0) << "opt " << opt;  // NaN * strong zero
    EXPECT_EQ(z[2], 0.0) << "opt " << opt;  // strong zero / 0
    EXPECT_EQ(z[3], 0.0) << "opt " << opt;
    EXPECT_TRUE(std::isnan(z[4])) << "opt " << opt;  // an ordinary zero is not strong
    EXPECT_EQ(z[5], 1.0) << "opt " << opt;
    EXPECT_EQ(z[6], 0.0) << "opt " << opt;  // sums of strong zeros are strong zeros
    auto on = m.evaluate("products", {Value::f64(3.0), Value::boolean(true)});
    ASSERT_TRUE(on.ok()) << on.message();
    const auto y = leaves(on.value());
    EXPECT_TRUE(std::isinf(y[0]) && y[0] > 0) << "opt " << opt;
    EXPECT_TRUE(std::isnan(y[1])) << "opt " << opt;
    EXPECT_TRUE(std::isinf(y[2])) << "opt " << opt;
    EXPECT_EQ(y[3], -3.0) << "opt " << opt;
    EXPECT_EQ(y[5], 7.0) << "opt " << opt;
  }
}

// An empty sum is an ordinary 0 as a factor (optimized into one product or not); an if passes
// on the strong zero its branch yields.
TEST(InterpMaskPropagation, empty_sums_are_ordinary_and_ifs_pass_masks_on) {
  for (int opt : {0, 2}) {
    Module m = load(opt);
    auto empty = m.evaluate("empty_and_if", {Value::zeros(DType::F64, {0}), Value::f64(1.0),
                                             Value::boolean(false), Value::boolean(true)});
    ASSERT_TRUE(empty.ok()) << empty.message();
    const auto e = leaves(empty.value());
    EXPECT_TRUE(std::isnan(e[0])) << "opt " << opt;
    EXPECT_EQ(e[1], 0.0) << "opt " << opt;
    auto two = m.evaluate("empty_and_if", {Value::zeros(DType::F64, {2}), Value::f64(1.0),
                                           Value::boolean(false), Value::boolean(false)});
    ASSERT_TRUE(two.ok()) << two.message();
    const auto t = leaves(two.value());
    EXPECT_TRUE(std::isinf(t[0])) << "opt " << opt;
    EXPECT_TRUE(std::isinf(t[1])) << "opt " << opt;
  }
}

// At x[0] = 0 the unguarded value's derivative is infinite; where the guard fails, the
// gradient is that of x[1] alone at both levels.
TEST(InterpMaskPropagation, gradient_of_a_guarded_value_is_zero_where_the_guard_fails) {
  Value x = Value::zeros(DType::F64, {3});
  x.f64_mut()[1] = 2.0;
  x.f64_mut()[2] = 3.0;
  for (int opt : {0, 2}) {
    Module m = load(opt);
    auto r = m.value_and_grad("guarded_log", {x, Value::f64(-1.0)}, {"x"});
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r.value().value.as_f64(), 2.0);
    const auto g = r.value().grad[0].value.f64_data();
    ASSERT_EQ(g.size(), 3u);
    EXPECT_EQ(g[0], 0.0) << "opt " << opt;
    EXPECT_EQ(g[1], 1.0) << "opt " << opt;
    EXPECT_EQ(g[2], 0.0) << "opt " << opt;
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
