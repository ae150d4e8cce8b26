// cotangent::Function (issue 26): a function or derived function built once; derivative()
// composes operators as the language does in source; compile() from the leaves' shapes alone;
// call_unchecked runs on the caller's memory; errors keep the operator's wording.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "interp/interp_test_util.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using cot::interp::testing::vec;

const char* const kSource = R"(
def cubic(x: f64[n], a: f64) -> f64 {
  sum i. a * x[i] * x[i] * x[i]
}
def pair(p: (f64, f64[n])) -> (f64[n], f64) {
  let (s, v) = p
  (for i. s * v[i], sum i. v[i] * v[i])
}
def hvp_in_source(x: f64[n], a: f64, v: f64[n]) -> (f64[n], f64[n]) {
  jvp(grad(cubic, x), x)(x, a, v)
}
)";

Module load() {
  auto m = Module::from_string(kSource, "handle.cot");
  EXPECT_TRUE(m.ok()) << m.message();
  return std::move(m).value();
}

double rho(double x, double y) {
  return std::abs(x - y) / std::max(1.0, std::abs(x) + std::abs(y));
}

TEST(FunctionHandle, NamesAndSignaturesOfDerivedFunctions) {
  Module m = load();
  auto f = m.get("cubic");
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f.value().name(), "cubic");
  EXPECT_FALSE(f.value().is_derived());
  auto g = f.value().derivative(DerivativeKind::Grad, {"x"});
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_EQ(g.value().name(), "grad(cubic, x)");
  EXPECT_TRUE(g.value().is_derived());
  EXPECT_EQ(g.value().info().result_type, "f64[n]");
  auto h = g.value().derivative(DerivativeKind::Jvp, {"x"});
  ASSERT_TRUE(h.ok()) << h.message();
  EXPECT_EQ(h.value().name(), "jvp(grad(cubic, x), x)");
  const auto& params = h.value().info().params;
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[2].name, "t_x");
  EXPECT_EQ(params[2].type, "f64[n]");
  EXPECT_EQ(h.value().info().result_type, "(f64[n], f64[n])");
  EXPECT_TRUE(h.value().info().result.is_tuple);
}

// The composed operator gives what the same operator written in source gives, and the closed
// form: d/dx (3 a x^2) v = 6 a x v.
TEST(FunctionHandle, ComposedOperatorsAgreeWithSourceAndClosedForm) {
  Module m = load();
  auto h = m.get("cubic").value().derivative(DerivativeKind::Grad, {"x"}).value().derivative(
      DerivativeKind::Jvp, {"x"});
  ASSERT_TRUE(h.ok()) << h.message();
  const std::vector<double> x = {1.0, -2.0, 0.5}, v = {0.3, 1.0, -2.0};
  const double a = 1.5;
  auto r = h.value().evaluate({vec(x), Value::f64(a), vec(v)});
  ASSERT_TRUE(r.ok()) << r.message();
  auto s = m.evaluate("hvp_in_source", {vec(x), Value::f64(a), vec(v)});
  ASSERT_TRUE(s.ok()) << s.message();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_LT(rho(r.value().elems()[0].f64_data()[i], 3 * a * x[i] * x[i]), 1e-15);
    EXPECT_LT(rho(r.value().elems()[1].f64_data()[i], 6 * a * x[i] * v[i]), 1e-15);
    EXPECT_EQ(r.value().elems()[1].f64_data()[i], s.value().elems()[1].f64_data()[i]);
  }
  auto text = h.value().print();
  ASSERT_TRUE(text.ok()) << text.message();
  EXPECT_NE(text.value().find("# jvp(grad(cubic, x), x), as the compiler builds it"),
            std::string::npos)
      << text.value();
}

// compile() reads only the leaves' dtypes and shapes (tuples depth first); call_unchecked runs
// on the caller's memory and writes every result leaf.
TEST(FunctionHandle, CompilesFromShapesAndRunsOnCallerMemory) {
  Module m = load();
  auto f = m.get("pair").value().derivative(DerivativeKind::Vjp);
  ASSERT_TRUE(f.ok()) << f.message();
  // vjp(pair, p)(p, ct): leaves s, v, then the cotangent's ct_v, ct_q.
  std::vector<TensorRef> shapes = {{DType::F64, {}, nullptr},
                                   {DType::F64, {3}, nullptr},
                                   {DType::F64, {3}, nullptr},
                                   {DType::F64, {}, nullptr}};
  auto c = f.value().compile(shapes);
  ASSERT_TRUE(c.ok()) << c.message();
  const double s = 2.0, ct_q = 0.5;
  const double v[3] = {1.0, 2.0, 3.0}, ct_v[3] = {1.0, -1.0, 4.0};
  const void* in[] = {&s, v, ct_v, &ct_q};
  double out_s = std::nan(""), out_v[3] = {std::nan(""), std::nan(""), std::nan("")};
  void* out[] = {&out_s, out_v};
  auto r = c.value().call_unchecked(in, out, 1);
  ASSERT_TRUE(r.ok()) << r.message();
  // pair = (s v, |v|^2): ct_s = <ct_v, v>, ct_v' = s ct_v + 2 ct_q v.
  EXPECT_EQ(out_s, 1.0 - 2.0 + 12.0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(out_v[i], s * ct_v[i] + 2 * ct_q * v[i]);
}

TEST(FunctionHandle, ErrorsKeepTheOperatorsWording) {
  Module m = load();
  auto none = m.get("nope");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("no function named `nope`"), std::string::npos);
  auto g = m.get("cubic").value().derivative(DerivativeKind::Grad, {"x"});
  ASSERT_TRUE(g.ok());
  auto gg = g.value().derivative(DerivativeKind::Grad, {"x"});
  ASSERT_FALSE(gg.ok());
  EXPECT_NE(gg.message().find("grad needs a function that returns a real scalar; grad(cubic, x) "
                              "returns f64[n]"),
            std::string::npos)
      << gg.message();
  auto missing = g.value().derivative(DerivativeKind::Jvp, {"y"});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.message().find("has no parameter named `y`"), std::string::npos);
  // Sizes that disagree when compiling from shapes: the interpreter's message, positioned.
  auto h = m.get("cubic").value().derivative(DerivativeKind::Hessian, {"x"});
  ASSERT_TRUE(h.ok()) << h.message();
  auto bad = h.value().compile({{DType::F64, {3, 1}, nullptr}, {DType::F64, {}, nullptr}});
  ASSERT_FALSE(bad.ok());
  auto few = h.value().compile({{DType::F64, {3}, nullptr}});
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.message().find("takes 2 argument leaves"), std::string::npos) << few.message();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
