// The derivative API: Module::value_and_grad against closed forms, Module::print_derivative
// (the derived function as source that parses back and computes the operator's values),
// Module::print of functions that call derived functions, and the errors of both.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

double rho(double x, double y) {
  return std::abs(x - y) / std::max(1.0, std::abs(x) + std::abs(y));
}

Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}

Value mat(const std::vector<std::vector<double>>& rows) {
  const auto m = static_cast<int64_t>(rows.size());
  const auto n = static_cast<int64_t>(rows.empty() ? 0 : rows[0].size());
  Value v = Value::zeros(DType::F64, {m, n});
  size_t k = 0;
  for (const auto& r : rows) {
    for (double x : r) v.f64_mut()[k++] = x;
  }
  return v;
}

// All real elements, flattened, tuples in order.
void flatten(const Value& v, std::vector<double>& out) {
  if (v.is_tuple()) {
    for (const auto& e : v.elems()) flatten(e, out);
    return;
  }
  for (int64_t k = 0; k < v.numel(); ++k) out.push_back(v.element_as_f64(k));
}

std::vector<double> flat(const Value& v) {
  std::vector<double> out;
  flatten(v, out);
  return out;
}

// "" when the two lists agree elementwise at ρ ≤ tol.
std::string compare(const std::vector<double>& a, const std::vector<double>& b,
                    double tol = 1e-12) {
  if (a.size() != b.size()) {
    return "sizes differ: " + std::to_string(a.size()) + " and " + std::to_string(b.size());
  }
  for (size_t k = 0; k < a.size(); ++k) {
    if (!(rho(a[k], b[k]) <= tol)) {
      return "element " + std::to_string(k) + ": " + std::to_string(a[k]) + " vs " +
             std::to_string(b[k]);
    }
  }
  return "";
}

constexpr const char* kSource = R"(
def loss(w: f64[k], X: f64[m, k], y: f64[m]) -> f64 {
  sum r. (dot(X[r], w) - y[r]) ^ 2
}

def lse(x: f64[n]) -> f64 {
  log(sum i. exp(x[i]))
}

def predict(w: f64[k], X: f64[m, k]) -> f64[m] {
  for r. sum j. X[r, j] * w[j]
}

def scaled(x: f64[n], c: i64) -> f64 {
  f64(c) * sum i. sin(x[i])
}

def count(n: i64) -> f64 { f64(n) }

def pair(x: f64, p: (f64, f64[n])) -> (f64, f64[n]) {
  let (a, v) = p
  (x * a, for i. exp(x) * v[i])
}

def hvp(w: f64[k], X: f64[m, k], y: f64[m], v: f64[k]) -> (f64, f64[k]) {
  let (g, hv) = jvp(grad(loss, w), w)(w, X, y, v)
  (sum i. g[i], hv)
}
)";

class DerivativeApi : public ::testing::Test {
 protected:
  // Printed derivatives "as the compiler builds them" at --opt=0 (the optimizer inlines and
  // rewrites them; tests/opt cover that); values are compared at every level elsewhere.
  void SetUp() override {
    cotangent::LoadOptions unoptimized;
    unoptimized.opt_level = 0;
    auto m = Module::from_string(kSource, "model.cot", unoptimized);
    ASSERT_TRUE(m.ok()) << m.message();
    module_.emplace(std::move(m.value()));
  }
  const Module& m() const { return *module_; }

  // Loads the printed text and evaluates its def `def` on `args`; checks it against the
  // operator `op` applied in the original source, through a wrapper def.
  void expect_same_as_operator(const std::string& printed, const std::vector<Value>& args) {
    static const std::regex head(R"(^# (.*), as the compiler builds it\ndef ([A-Za-z0-9_]+)\()");
    std::smatch match;
    ASSERT_TRUE(std::regex_search(printed, match, head)) << printed;
    const std::string op = match[1];
    const std::string def = match[2];
    auto reparsed = Module::from_string(printed, "printed.cot");
    ASSERT_TRUE(reparsed.ok()) << reparsed.message() << "\n" << printed;
    auto info = reparsed.value().function(def);
    ASSERT_TRUE(info.ok()) << info.message();
    std::string wrapper = "\ndef wrapped_operator(", call;
    for (size_t i = 0; i < info.value().params.size(); ++i) {
      const auto& p = info.value().params[i];
      wrapper += (i ? ", " : "") + p.name + ": " + p.type;
      call += (i ? ", " : "") + p.name;
    }
    wrapper += ") -> " + info.value().result_type + " { " + op + "(" + call + ") }\n";
    auto with_op = Module::from_string(std::string(kSource) + wrapper, "wrapped.cot");
    ASSERT_TRUE(with_op.ok()) << with_op.message();
    auto a = with_op.value().evaluate("wrapped_operator", args);
    auto b = reparsed.value().evaluate(def, args);
    ASSERT_TRUE(a.ok()) << a.message();
    ASSERT_TRUE(b.ok()) << b.message() << "\n" << printed;
    EXPECT_EQ(a.value().type_string(), b.value().type_string());
    EXPECT_EQ(compare(flat(a.value()), flat(b.value())), "") << printed;
  }

  std::optional<Module> module_;
  const Value w_ = vec({0.5, -0.25});
  const Value X_ = mat({{1, 2}, {3, 4}, {5, 6}});
  const Value y_ = vec({1, 2, 3});
};

TEST_F(DerivativeApi, ValueAndGradOfLeastSquaresMatchesTheClosedForm) {
  auto r = m().value_and_grad("loss", {w_, X_, y_});
  ASSERT_TRUE(r.ok()) << r.message();
  // residual e = X w - y; loss = |e|^2; d/dw = 2 X^T e; d/dX = 2 e w^T; d/dy = -2 e.
  const double w[2] = {0.5, -0.25};
  const double X[3][2] = {{1, 2}, {3, 4}, {5, 6}};
  const double y[3] = {1, 2, 3};
  double e[3], value = 0;
  for (int r = 0; r < 3; ++r) {
    e[r] = X[r][0] * w[0] + X[r][1] * w[1] - y[r];
    value += e[r] * e[r];
  }
  std::vector<double> gw(2, 0.0), gX, gy;
  for (int j = 0; j < 2; ++j) {
    for (int r = 0; r < 3; ++r) gw[static_cast<size_t>(j)] += 2 * X[r][j] * e[r];
  }
  for (int r = 0; r < 3; ++r) {
    for (int j = 0; j < 2; ++j) gX.push_back(2 * e[r] * w[j]);
    gy.push_back(-2 * e[r]);
  }
  EXPECT_LE(rho(r.value().value.as_f64(), value), 1e-12);
  ASSERT_EQ(r.value().grad.size(), 3u);
  EXPECT_EQ(r.value().grad[0].name, "w");
  EXPECT_EQ(r.value().grad[1].name, "X");
  EXPECT_EQ(r.value().grad[2].name, "y");
  EXPECT_EQ(r.value().grad[1].value.type_string(), "f64[3, 2]");
  EXPECT_EQ(compare(flat(r.value().grad[0].value), gw), "");
  EXPECT_EQ(compare(flat(r.value().grad[1].value), gX), "");
  EXPECT_EQ(compare(flat(r.value().grad[2].value), gy), "");
}

TEST_F(DerivativeApi, ValueAndGradKeepsTheOrderAskedFor) {
  auto r = m().value_and_grad("loss", {w_, X_, y_}, {"y", "w"});
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r.value().grad.size(), 2u);
  EXPECT_EQ(r.value().grad[0].name, "y");
  EXPECT_EQ(r.value().grad[1].name, "w");
  auto all = m().value_and_grad("loss", {w_, X_, y_});
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(compare(flat(r.value().grad[0].value), flat(all.value().grad[2].value)), "");
  EXPECT_EQ(compare(flat(r.value().grad[1].value), flat(all.value().grad[0].value)), "");
}

TEST_F(DerivativeApi, GradientOfLogSumExpIsSoftmax) {
  const std::vector<double> x = {1.0, -2.0, 0.5, 3.0};
  auto r = m().value_and_grad("lse", {vec(x)});
  ASSERT_TRUE(r.ok()) << r.message();
  double s = 0;
  for (double v : x) s += std::exp(v);
  std::vector<double> softmax;
  for (double v : x) softmax.push_back(std::exp(v) / s);
  EXPECT_LE(rho(r.value().value.as_f64(), std::log(s)), 1e-12);
  ASSERT_EQ(r.value().grad.size(), 1u);
  EXPECT_EQ(r.value().grad[0].name, "x");
  EXPECT_EQ(compare(flat(r.value().grad[0].value), softmax), "");
}

TEST_F(DerivativeApi, IntegerParametersAreNotActiveByDefault) {
  const std::vector<double> x = {0.25, -1.5};
  auto r = m().value_and_grad("scaled", {vec(x), Value::i64(3)});
  ASSERT_TRUE(r.ok()) << r.message();
  ASSERT_EQ(r.value().grad.size(), 1u);
  EXPECT_EQ(r.value().grad[0].name, "x");
  EXPECT_EQ(compare(flat(r.value().grad[0].value), {3 * std::cos(0.25), 3 * std::cos(-1.5)}), "");
}

TEST_F(DerivativeApi, ErrorsUseTheCheckersWords) {
  auto no_param = m().value_and_grad("loss", {w_, X_, y_}, {"z"});
  ASSERT_FALSE(no_param.ok());
  EXPECT_EQ(no_param.errors()[0].message, "`loss` has no parameter named `z`");
  EXPECT_EQ(no_param.errors()[0].help, "its parameters are w: f64[k], X: f64[m, k], y: f64[m]");
  EXPECT_EQ(no_param.errors()[0].file, "model.cot");
  EXPECT_EQ(no_param.errors()[0].line, 2);

  auto integer = m().print_derivative("scaled", DerivativeKind::Grad, {"c"});
  ASSERT_FALSE(integer.ok());
  EXPECT_EQ(integer.errors()[0].message,
            "parameter `c` of `scaled` has type i64 and cannot be differentiated");
  EXPECT_NE(integer.errors()[0].help.find("only parameters of real type"), std::string::npos);
  EXPECT_EQ(integer.errors()[0].line, 14);  // at the parameter

  auto twice = m().print_derivative("loss", DerivativeKind::Vjp, {"w", "w"});
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.errors()[0].message, "parameter `w` is named twice");

  auto vector_result = m().value_and_grad("predict", {w_, X_});
  ASSERT_FALSE(vector_result.ok());
  EXPECT_EQ(vector_result.errors()[0].message,
            "grad needs a function that returns a real scalar; predict returns f64[m]");
  EXPECT_EQ(vector_result.errors()[0].line, 10);
  EXPECT_EQ(vector_result.errors()[0].column, 1);

  auto no_real = m().print_derivative("count", DerivativeKind::Grad);
  ASSERT_FALSE(no_real.ok());
  EXPECT_EQ(no_real.errors()[0].message, "`count` has no real parameter to differentiate");

  auto jac = m().print_derivative("predict", DerivativeKind::Jacobian);
  ASSERT_FALSE(jac.ok());
  EXPECT_NE(jac.errors()[0].message.find("exactly one parameter"), std::string::npos);

  auto missing = m().print_derivative("nope", DerivativeKind::Grad);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.errors()[0].message, "no function named `nope`");

  for (const auto* r : {&no_param.errors(), &vector_result.errors()}) {
    for (const auto& e : *r) {
      EXPECT_EQ(e.rendered.find("__"), std::string::npos) << e.rendered;
    }
  }
  auto params = m().derivative_parameters("loss", DerivativeKind::Grad, {"y"});
  ASSERT_TRUE(params.ok());
  EXPECT_EQ(params.value(), std::vector<std::string>{"y"});
}

TEST_F(DerivativeApi, PrintDerivativePrintsANamedDefThatParsesBack) {
  auto g = m().print_derivative("loss", DerivativeKind::Grad, {"w"});
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_EQ(g.value().rfind("# grad(loss, w), as the compiler builds it\n"
                            "def grad_loss_w(w: f64[k], X: f64[m, k], y: f64[m]) -> f64[k] {\n",
                            0),
            0u)
      << g.value();
  expect_same_as_operator(g.value(), {w_, X_, y_});
  // And the gradient it computes is value_and_grad's.
  auto reparsed = Module::from_string(g.value());
  ASSERT_TRUE(reparsed.ok());
  auto printed_grad = reparsed.value().evaluate("grad_loss_w", {w_, X_, y_});
  auto vg = m().value_and_grad("loss", {w_, X_, y_}, {"w"});
  ASSERT_TRUE(printed_grad.ok() && vg.ok());
  EXPECT_EQ(compare(flat(printed_grad.value()), flat(vg.value().grad[0].value)), "");
}

TEST_F(DerivativeApi, PrintDerivativeOfEveryOperatorParsesBack) {
  const Value v = vec({0.75, -1.25});
  const Value ct = vec({0.5, 1.5, -2.0});
  auto all = m().print_derivative("loss", DerivativeKind::Grad);
  ASSERT_TRUE(all.ok()) << all.message();
  EXPECT_NE(all.value().find("def grad_loss_w_X_y("), std::string::npos);
  expect_same_as_operator(all.value(), {w_, X_, y_});

  auto vg = m().print_derivative("lse", DerivativeKind::ValueAndGrad);
  ASSERT_TRUE(vg.ok()) << vg.message();
  expect_same_as_operator(vg.value(), {vec({1.0, -2.0, 0.5})});

  auto jvp = m().print_derivative("predict", DerivativeKind::Jvp, {"w"});
  ASSERT_TRUE(jvp.ok()) << jvp.message();
  EXPECT_NE(jvp.value().find("def jvp_predict_w(w: f64[k], X: f64[m, k], t_w: f64[k])"),
            std::string::npos)
      << jvp.value();
  expect_same_as_operator(jvp.value(), {w_, X_, v});

  auto vjp = m().print_derivative("predict", DerivativeKind::Vjp);
  ASSERT_TRUE(vjp.ok()) << vjp.message();
  expect_same_as_operator(vjp.value(), {w_, X_, ct});

  auto tuple_jvp = m().print_derivative("pair", DerivativeKind::Jvp);
  ASSERT_TRUE(tuple_jvp.ok()) << tuple_jvp.message();
  const Value p = Value::tuple({Value::f64(2.0), vec({1.0, -1.0})});
  const Value tp = Value::tuple({Value::f64(0.5), vec({0.25, 3.0})});
  expect_same_as_operator(tuple_jvp.value(), {Value::f64(0.3), p, Value::f64(-0.7), tp});

  // jacobian and hessian call jvp and vjp helpers, printed after them in operator form.
  auto jac = m().print_derivative("predict", DerivativeKind::Jacobian, {"w"});
  ASSERT_TRUE(jac.ok()) << jac.message();
  EXPECT_NE(jac.value().find("jvp(predict, w)("), std::string::npos) << jac.value();
  EXPECT_NE(jac.value().find("# vjp(predict, w), as the compiler builds it\ndef vjp_predict_w("),
            std::string::npos);
  EXPECT_NE(jac.value().find("\ndef predict("), std::string::npos);
  expect_same_as_operator(jac.value(), {w_, X_});

  auto hess = m().print_derivative("loss", DerivativeKind::Hessian, {"w"});
  ASSERT_TRUE(hess.ok()) << hess.message();
  EXPECT_NE(hess.value().find("jvp(grad(loss, w), w)("), std::string::npos);
  EXPECT_NE(hess.value().find("def jvp_grad_loss_w_w("), std::string::npos);
  expect_same_as_operator(hess.value(), {w_, X_, y_});
}

TEST_F(DerivativeApi, PrintShowsTheDerivedFunctionsAFunctionCalls) {
  auto text = m().print("hvp");
  ASSERT_TRUE(text.ok()) << text.message();
  const std::string& t = text.value();
  // The function, the user function, then the derived function, in operator form in calls.
  const size_t hvp = t.find("def hvp(");
  const size_t loss = t.find("\ndef loss(");
  const size_t derived =
      t.find("\n# jvp(grad(loss, w), w), as the compiler builds it\ndef jvp_grad_loss_w_w(");
  ASSERT_EQ(hvp, 0u) << t;
  ASSERT_NE(loss, std::string::npos) << t;
  ASSERT_NE(derived, std::string::npos) << t;
  EXPECT_LT(loss, derived);
  EXPECT_NE(t.find("jvp(grad(loss, w), w)(w, X, y, v)"), std::string::npos);
  auto reparsed = Module::from_string(t);
  ASSERT_TRUE(reparsed.ok()) << reparsed.message() << "\n" << t;
  const Value v = vec({0.75, -1.25});
  auto a = m().evaluate("hvp", {w_, X_, y_, v});
  auto b = reparsed.value().evaluate("hvp", {w_, X_, y_, v});
  auto c = reparsed.value().evaluate("jvp_grad_loss_w_w", {w_, X_, y_, v});
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  EXPECT_EQ(compare(flat(a.value()), flat(b.value())), "");
  // The Hessian of the loss is 2 X^T X: hv = 2 X^T X v.
  const double X[3][2] = {{1, 2}, {3, 4}, {5, 6}};
  const double vv[2] = {0.75, -1.25};
  std::vector<double> hv(2, 0.0);
  for (int i = 0; i < 2; ++i) {
    for (int r = 0; r < 3; ++r) {
      hv[static_cast<size_t>(i)] += 2 * X[r][i] * (X[r][0] * vv[0] + X[r][1] * vv[1]);
    }
  }
  EXPECT_EQ(compare(flat(c.value().elems()[1]), hv), "");
}

TEST(DerivativeApiNames, PrintedNamesAvoidExistingFunctions) {
  cotangent::LoadOptions unoptimized;  // keeps the calls that print() shows (--opt=2 inlines them)
  unoptimized.opt_level = 0;
  auto m = Module::from_string(R"(
def sq(x: f64) -> f64 { x * x }
def grad_sq_x(x: f64) -> f64 { 2.0 * x }
def d(x: f64) -> (f64, f64) { (grad(sq, x)(x), grad_sq_x(x)) }
)",
                               "<string>", unoptimized);
  ASSERT_TRUE(m.ok()) << m.message();
  auto text = m.value().print("d");
  ASSERT_TRUE(text.ok()) << text.message();
  EXPECT_NE(text.value().find("# grad(sq, x), as the compiler builds it\ndef grad_sq_x_2("),
            std::string::npos)
      << text.value();
  auto reparsed = Module::from_string(text.value());
  ASSERT_TRUE(reparsed.ok()) << reparsed.message() << "\n" << text.value();
  auto r = reparsed.value().evaluate("grad_sq_x_2", {Value::f64(1.5)});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().as_f64(), 3.0);
  auto p = m.value().print_derivative("sq", DerivativeKind::Grad);
  ASSERT_TRUE(p.ok());
  EXPECT_NE(p.value().find("def grad_sq_x_2("), std::string::npos) << p.value();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
