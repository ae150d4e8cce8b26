// The prelude (prelude/prelude.cot): every function on inputs whose results were worked out by
// hand (or with Python's math module, to 17 digits), with the edge cases: empty vectors,
// logsumexp of large and of -inf values, softmax summing to 1, relu at 0 and below, cross
// products of unit vectors, shape errors. Prelude functions are evaluated directly through an
// empty module, and also called from user functions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

constexpr double kInf = std::numeric_limits<double>::infinity();

Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}

Value mat(int64_t rows, int64_t cols, const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {rows, cols});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}

double rho(double x, double y) {
  return std::fabs(x - y) / std::max(1.0, std::fabs(x) + std::fabs(y));
}

// Elementwise ρ ≤ tol, non-finite values exactly, and the exact shape.
void expect_values(const Value& v, const std::vector<int64_t>& shape,
                   const std::vector<double>& want, double tol = 1e-15) {
  ASSERT_FALSE(v.is_tuple());
  ASSERT_EQ(v.dtype(), DType::F64);
  ASSERT_EQ(v.shape(), shape);
  auto got = v.f64_data();
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {
    const double x = got[k], y = want[k];
    if (!std::isfinite(x) || !std::isfinite(y)) {
      EXPECT_TRUE((std::isnan(x) && std::isnan(y)) || x == y)
          << "element " << k << ": got " << x << ", want " << y;
    } else {
      EXPECT_LE(rho(x, y), tol) << "element " << k << ": got " << x << ", want " << y;
    }
  }
}

void expect_scalar(const Value& v, double want, double tol = 1e-15) {
  expect_values(v, {}, {want}, tol);
}

class Prelude : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = Module::from_string("", "empty.cot");
    ASSERT_TRUE(m.ok()) << m.message();
    module_ = std::make_unique<Module>(std::move(m).value());
  }

  Value eval(const std::string& fn, const std::vector<Value>& args) {
    auto r = module_->evaluate(fn, args);
    EXPECT_TRUE(r.ok()) << fn << ": " << r.message();
    return r.ok() ? r.value() : Value();
  }

  std::string error(const std::string& fn, const std::vector<Value>& args) {
    auto r = module_->evaluate(fn, args);
    EXPECT_FALSE(r.ok()) << fn << " should fail";
    return r.ok() ? std::string() : r.message();
  }

  std::unique_ptr<Module> module_;
};

TEST_F(Prelude, ListsEveryPreludeFunction) {
  EXPECT_TRUE(module_->function_names().empty());
  const std::vector<std::string> want = {
      "dot",     "matvec", "matmul", "transpose", "outer", "sqnorm", "norm2", "logsumexp",
      "softmax", "relu",   "cross",  "trace",     "diag",  "eye",    "vsum",  "mean"};
  std::vector<std::string> got = module_->function_names(true);
  for (const std::string& fn : want) {
    EXPECT_NE(std::find(got.begin(), got.end(), fn), got.end()) << fn;
    auto info = module_->function(fn);
    ASSERT_TRUE(info.ok()) << info.message();
    EXPECT_TRUE(info.value().from_prelude) << fn;
  }
  EXPECT_EQ(got.size(), want.size());
}

TEST_F(Prelude, Dot) {
  expect_scalar(eval("dot", {vec({1, 2, 3}), vec({4, -5, 6})}), 12.0);
  expect_scalar(eval("dot", {vec({0.5}), vec({0.25})}), 0.125);
  expect_scalar(eval("dot", {vec({}), vec({})}), 0.0);
  const std::string e = error("dot", {vec({1, 2, 3}), vec({1, 2})});
  EXPECT_NE(e.find("size variable n"), std::string::npos) << e;
}

TEST_F(Prelude, Matvec) {
  expect_values(eval("matvec", {mat(3, 2, {1, 2, 3, 4, 5, 6}), vec({1, -1})}), {3}, {-1, -1, -1});
  expect_values(eval("matvec", {mat(2, 3, {1, 0, 2, 0, 1, 0}), vec({3, 4, 5})}), {2}, {13, 4});
  const std::string e = error("matvec", {mat(2, 3, {1, 0, 2, 0, 1, 0}), vec({3, 4})});
  EXPECT_NE(e.find("size variable n"), std::string::npos) << e;
}

TEST_F(Prelude, Matmul) {
  expect_values(eval("matmul", {mat(2, 2, {1, 2, 3, 4}), mat(2, 2, {5, 6, 7, 8})}), {2, 2},
                {19, 22, 43, 50});
  // (1 x 3) (3 x 2) = (1 x 2)
  expect_values(eval("matmul", {mat(1, 3, {1, 2, 3}), mat(3, 2, {1, 0, 0, 1, 1, 1})}), {1, 2},
                {4, 5});
  const std::string e = error("matmul", {mat(2, 2, {1, 2, 3, 4}), mat(3, 1, {1, 2, 3})});
  EXPECT_NE(e.find("size variable k"), std::string::npos) << e;
}

TEST_F(Prelude, Transpose) {
  expect_values(eval("transpose", {mat(2, 3, {1, 2, 3, 4, 5, 6})}), {3, 2}, {1, 4, 2, 5, 3, 6});
  expect_values(eval("transpose", {mat(1, 1, {7})}), {1, 1}, {7});
}

TEST_F(Prelude, Outer) {
  expect_values(eval("outer", {vec({1, 2}), vec({3, 4, 5})}), {2, 3}, {3, 4, 5, 6, 8, 10});
  expect_values(eval("outer", {vec({}), vec({3, 4})}), {0, 2}, {});
}

TEST_F(Prelude, SqnormAndNorm2) {
  expect_scalar(eval("sqnorm", {vec({3, 4})}), 25.0);
  expect_scalar(eval("sqnorm", {vec({})}), 0.0);
  expect_scalar(eval("norm2", {vec({3, 4})}), 5.0);
  expect_scalar(eval("norm2", {vec({1, 1})}), 1.4142135623730951);
  expect_scalar(eval("norm2", {vec({})}), 0.0);
  expect_scalar(eval("norm2", {vec({-2})}), 2.0);
}

TEST_F(Prelude, Logsumexp) {
  // 3 + log(1 + e^-1 + e^-2)
  expect_scalar(eval("logsumexp", {vec({1, 2, 3})}), 3.4076059644443806);
  expect_scalar(eval("logsumexp", {vec({0, 0})}), 0.6931471805599453);
  expect_scalar(eval("logsumexp", {vec({5})}), 5.0);
  // Large values do not overflow; very negative ones do not underflow to -inf.
  expect_scalar(eval("logsumexp", {vec({1000, 1000})}), 1000.6931471805599);
  expect_scalar(eval("logsumexp", {vec({-1000, -1000})}), -999.3068528194401);
  expect_scalar(eval("logsumexp", {vec({1e308, 0})}), 1e308);
  // Empty: -inf; all -inf: -inf (not nan); one -inf entry contributes nothing.
  expect_scalar(eval("logsumexp", {vec({})}), -kInf);
  expect_scalar(eval("logsumexp", {vec({-kInf, -kInf})}), -kInf);
  expect_scalar(eval("logsumexp", {vec({-kInf, 0})}), 0.0);
  // An infinite element makes the result infinite (not nan).
  expect_scalar(eval("logsumexp", {vec({kInf, 1.0})}), kInf);
}

TEST_F(Prelude, Softmax) {
  expect_values(eval("softmax", {vec({1, 2, 3})}), {3},
                {0.09003057317038046, 0.24472847105479764, 0.6652409557748218});
  expect_values(eval("softmax", {vec({1000, 1000})}), {2}, {0.5, 0.5});
  expect_values(eval("softmax", {vec({-1000, 1000})}), {2}, {0.0, 1.0});
  expect_values(eval("softmax", {vec({7})}), {1}, {1.0});
  expect_values(eval("softmax", {vec({})}), {0}, {});
  // Sums to 1.
  Value p = eval("softmax", {vec({0.3, -2.0, 4.5, 1.25, 0.0})});
  double s = 0;
  for (double v : p.f64_data()) s += v;
  EXPECT_LE(rho(s, 1.0), 1e-15);
}

TEST_F(Prelude, Relu) {
  expect_scalar(eval("relu", {Value::f64(2.5)}), 2.5);
  expect_scalar(eval("relu", {Value::f64(0.0)}), 0.0);
  expect_scalar(eval("relu", {Value::f64(-0.0)}), 0.0);
  expect_scalar(eval("relu", {Value::f64(-3.0)}), 0.0);
  expect_scalar(eval("relu", {Value::f64(1e-300)}), 1e-300);
  expect_scalar(eval("relu", {Value::f64(-kInf)}), 0.0);
}

TEST_F(Prelude, Cross) {
  const Value e1 = vec({1, 0, 0}), e2 = vec({0, 1, 0}), e3 = vec({0, 0, 1});
  expect_values(eval("cross", {e1, e2}), {3}, {0, 0, 1});
  expect_values(eval("cross", {e2, e3}), {3}, {1, 0, 0});
  expect_values(eval("cross", {e3, e1}), {3}, {0, 1, 0});
  expect_values(eval("cross", {e2, e1}), {3}, {0, 0, -1});
  expect_values(eval("cross", {e1, e1}), {3}, {0, 0, 0});
  // (2 3 - 3 5, 3 4 - 1 6, 1 5 - 2 4)
  expect_values(eval("cross", {vec({1, 2, 3}), vec({4, 5, 6})}), {3}, {-3, 6, -3});
  const std::string e = error("cross", {vec({1, 2}), vec({4, 5, 6})});
  EXPECT_NE(e.find("f64[3]"), std::string::npos) << e;
}

TEST_F(Prelude, Trace) {
  expect_scalar(eval("trace", {mat(2, 2, {1, 2, 3, 4})}), 5.0);
  expect_scalar(eval("trace", {mat(3, 3, {1, 0, 0, 0, -2, 0, 0, 0, 0.5})}), -0.5);
  const std::string e = error("trace", {mat(2, 3, {1, 2, 3, 4, 5, 6})});
  EXPECT_NE(e.find("size variable n"), std::string::npos) << e;
}

TEST_F(Prelude, DiagAndEye) {
  expect_values(eval("diag", {vec({1, 2})}), {2, 2}, {1, 0, 0, 2});
  expect_values(eval("diag", {vec({})}), {0, 0}, {});
  // Off-diagonal entries are strong zeros: 0, not 0 * inf.
  expect_values(eval("diag", {vec({kInf, 1})}), {2, 2}, {kInf, 0, 0, 1});
  expect_values(eval("eye", {vec({5, 6, 7})}), {3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1});
  expect_values(eval("eye", {vec({9})}), {1, 1}, {1});
}

TEST_F(Prelude, VsumAndMean) {
  expect_scalar(eval("vsum", {vec({1, 2, 3.5})}), 6.5);
  expect_scalar(eval("vsum", {vec({})}), 0.0);
  expect_scalar(eval("mean", {vec({1, 2, 3, 4})}), 2.5);
  expect_scalar(eval("mean", {vec({-3})}), -3.0);
  expect_scalar(eval("mean", {vec({})}), std::nan(""));  // 0 / 0
}

// The prelude called from user code, composed, and on slices.
TEST(PreludeCalls, FromUserFunctions) {
  auto m = Module::from_string(R"(
def all_of(A: f64[n, n], x: f64[n]) -> (f64, f64[n], f64[n, n], f64[n, n], f64, f64, f64) {
  (dot(x, x), matvec(A, x), matmul(A, transpose(A)), outer(x, x), trace(diag(x)),
   norm2(A[0]), logsumexp(softmax(x)))
}
def cross_rows(A: f64[m, 3]) -> f64[3] {
  cross(A[0], A[1])
}
def relu_all(x: f64[n]) -> f64[n] {
  for i. relu(x[i])
}
def stats(x: f64[n]) -> (f64, f64, f64) {
  (vsum(x), mean(x), sqnorm(eye(x)[0]))
}
)",
                               "user.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  auto r = m.value().evaluate("all_of", {mat(2, 2, {1, 2, 3, 4}), vec({1, -1})});
  ASSERT_TRUE(r.ok()) << r.message();
  const auto& t = r.value().elems();
  ASSERT_EQ(t.size(), 7u);
  expect_scalar(t[0], 2.0);
  expect_values(t[1], {2}, {-1, -1});
  expect_values(t[2], {2, 2}, {5, 11, 11, 25});
  expect_values(t[3], {2, 2}, {1, -1, -1, 1});
  expect_scalar(t[4], 0.0);
  expect_scalar(t[5], 2.23606797749979);  // sqrt(5)
  // softmax(1, -1) = (e^2, 1) / (1 + e^2); its logsumexp is log(e^p0 + e^p1).
  const double p0 = std::exp(2.0) / (1.0 + std::exp(2.0)), p1 = 1.0 / (1.0 + std::exp(2.0));
  expect_scalar(t[6], std::log(std::exp(p0) + std::exp(p1)), 1e-14);

  auto c = m.value().evaluate("cross_rows", {mat(2, 3, {0, 0, 1, 1, 0, 0})});
  ASSERT_TRUE(c.ok()) << c.message();
  expect_values(c.value(), {3}, {0, 1, 0});

  auto rl = m.value().evaluate("relu_all", {vec({-1, 0, 2})});
  ASSERT_TRUE(rl.ok()) << rl.message();
  expect_values(rl.value(), {3}, {0, 0, 2});

  auto s = m.value().evaluate("stats", {vec({1, 2, 6})});
  ASSERT_TRUE(s.ok()) << s.message();
  expect_scalar(s.value().elems()[0], 9.0);
  expect_scalar(s.value().elems()[1], 3.0);
  expect_scalar(s.value().elems()[2], 1.0);
}

// A user definition shadows the prelude function of the same name.
TEST(PreludeCalls, UserDefinitionsShadowThePrelude) {
  auto m = Module::from_string(R"(
def dot(x: f64[n], y: f64[n]) -> f64 {
  42.0 + 0.0 * sum i. x[i] * y[i]
}
def use(x: f64[n]) -> (f64, f64) {
  (dot(x, x), sqnorm(x))
}
)",
                               "shadow.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  auto info = m.value().function("dot");
  ASSERT_TRUE(info.ok());
  EXPECT_FALSE(info.value().from_prelude);
  auto r = m.value().evaluate("use", {vec({1, 2})});
  ASSERT_TRUE(r.ok()) << r.message();
  expect_scalar(r.value().elems()[0], 42.0);
  expect_scalar(r.value().elems()[1], 5.0);
  auto d = m.value().evaluate("dot", {vec({1, 2}), vec({3, 4})});
  ASSERT_TRUE(d.ok()) << d.message();
  expect_scalar(d.value(), 42.0);
}

// Every prelude function prints as a def that loads again and computes the same values.
TEST(PreludeCalls, PreludeFunctionsPrintAsSource) {
  auto m = Module::from_string("", "empty.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  for (const std::string& fn : m.value().function_names(true)) {
    auto p = m.value().print(fn);
    ASSERT_TRUE(p.ok()) << fn << ": " << p.message();
    EXPECT_EQ(p.value().rfind("def " + fn + "(", 0), 0u) << p.value();
    auto again = Module::from_string(p.value(), fn + ".printed.cot");
    EXPECT_TRUE(again.ok()) << fn << ": " << again.message() << "\n" << p.value();
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
