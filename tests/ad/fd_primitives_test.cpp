// Derivatives of every real primitive of docs/language.md §6 (and the operators of §5.2), one tiny
// program `def f(x: f64, y: f64) -> f64 { ... }` each. At smooth points: grad, value_and_grad,
// jvp, vjp and the second derivative grad(grad(f, x), x) against the closed form, and the
// closed form against central finite differences. At the points where a primitive is not
// differentiable: the documented choice (docs/language.md §6.1, src/prims/prim_table.cpp partials).
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <numbers>
#include <string>
#include <vector>

#include "ad/fd_harness.h"

namespace cotangent::adtest {
namespace COTANGENT_TEST_UNIT {

using Fn = std::function<double(double, double)>;

// The derived functions every primitive program gets.
constexpr const char* kDerived = R"(
def df(x: f64, y: f64) -> (f64, f64) { grad(f)(x, y) }
def dfx(x: f64, y: f64) -> f64 { grad(f, x)(x, y) }
def dfy(x: f64, y: f64) -> f64 { grad(f, y)(x, y) }
def vg(x: f64, y: f64) -> (f64, (f64, f64)) { value_and_grad(f)(x, y) }
def fwd(x: f64, y: f64, tx: f64, ty: f64) -> (f64, f64) { jvp(f)(x, y, tx, ty) }
def rev(x: f64, y: f64, ct: f64) -> (f64, f64) { vjp(f)(x, y, ct) }
def d2x(x: f64, y: f64) -> f64 { grad(dfx, x)(x, y) }
def dxy(x: f64, y: f64) -> f64 { grad(dfx, y)(x, y) }
)";

std::string primal_source(const std::string& body) {
  return "def f(x: f64, y: f64) -> f64 {\n  " + body + "\n}\n";
}

struct Prim {
  std::string body;
  Fn f, dx, dy;
  double fd_rel_step = 1e-6;
  double fd_tol = kFdTol;
  bool fd = true;            // false where finite differences do not see the derivative
  bool second_order = true;  // check d2x and dxy against differences of dx
  double tol = kExactTol;    // AD against the closed form
};

Fn zero() {
  return [](double, double) { return 0.0; };
}

// Checks a primitive at smooth points.
void check_smooth(const Prim& p, const std::vector<std::pair<double, double>>& points) {
  SCOPED_TRACE("f(x, y) = " + p.body);
  auto primal = load(primal_source(p.body), "prim.cot");
  ASSERT_TRUE(primal.ok()) << primal.message();
  auto m = load(primal_source(p.body) + kDerived, "prim_ad.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  for (auto [x, y] : points) {
    SCOPED_TRACE("at x = " + std::to_string(x) + ", y = " + std::to_string(y));
    const std::vector<Value> args = {Value::f64(x), Value::f64(y)};
    const double fx = p.f(x, y), gx = p.dx(x, y), gy = p.dy(x, y);
    // The program computes f, and the closed form is the derivative (finite differences).
    auto v = primal.value().evaluate("f", args);
    ASSERT_TRUE(v.ok()) << v.message();
    EXPECT_TRUE(ValueNear(v.value(), {fx}, 1e-12));
    if (p.fd) {
      FdOptions opt;
      opt.rel_step = p.fd_rel_step;
      auto J = fd_jacobian(primal.value(), "f", args, {0, 1}, opt);
      ASSERT_TRUE(J.ok()) << J.message();
      EXPECT_TRUE(RealsNear(J.value().row(0), {gx, gy}, p.fd_tol)) << "closed form vs FD";
    }
    // Automatic differentiation.
    EXPECT_TRUE(DerivedEquals(m.value(), "df", args, {gx, gy}, p.tol));
    EXPECT_TRUE(DerivedEquals(m.value(), "dfx", args, {gx}, p.tol));
    EXPECT_TRUE(DerivedEquals(m.value(), "dfy", args, {gy}, p.tol));
    EXPECT_TRUE(DerivedEquals(m.value(), "vg", args, {fx, gx, gy}, p.tol));
    const double tx = 0.3, ty = -0.7, ct = 1.5;
    EXPECT_TRUE(DerivedEquals(m.value(), "fwd", {args[0], args[1], Value::f64(tx), Value::f64(ty)},
                              {fx, gx * tx + gy * ty}, p.tol));
    EXPECT_TRUE(DerivedEquals(m.value(), "rev", {args[0], args[1], Value::f64(ct)},
                              {ct * gx, ct * gy}, p.tol));
    if (p.second_order) {
      const double hxx = fd_scalar([&](double t) { return p.dx(t, y); }, x);
      const double hxy = fd_scalar([&](double t) { return p.dx(x, t); }, y);
      EXPECT_TRUE(DerivedEquals(m.value(), "d2x", args, {hxx}, 1e-6));
      EXPECT_TRUE(DerivedEquals(m.value(), "dxy", args, {hxy}, 1e-6));
    }
  }
}

// Checks the documented derivative at a non-differentiable (or infinite-slope) point.
void check_special(const std::string& body, double x, double y, double dx, double dy) {
  SCOPED_TRACE("f(x, y) = " + body + " at x = " + std::to_string(x) + ", y = " + std::to_string(y));
  auto m = load(primal_source(body) + kDerived, "prim_ad.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_TRUE(DerivedEquals(m.value(), "df", {Value::f64(x), Value::f64(y)}, {dx, dy}, 0.0));
}

const std::vector<std::pair<double, double>> kGeneral = {
    {-1.3, 0.4}, {0.0, -2.0}, {0.7, 1.1}, {2.1, -0.3}};
const std::vector<std::pair<double, double>> kPositive = {
    {0.3, 0.4}, {1.0, -2.0}, {2.5, 1.1}, {7.0, 0.5}};

TEST(AdFiniteDiffPrims, Add) {
  check_smooth({"x + y", [](double x, double y) { return x + y; },
                [](double, double) { return 1.0; }, [](double, double) { return 1.0; }},
               kGeneral);
}

TEST(AdFiniteDiffPrims, Sub) {
  check_smooth({"x - y", [](double x, double y) { return x - y; },
                [](double, double) { return 1.0; }, [](double, double) { return -1.0; }},
               kGeneral);
}

TEST(AdFiniteDiffPrims, Mul) {
  check_smooth({"x * y", [](double x, double y) { return x * y; },
                [](double, double y) { return y; }, [](double x, double) { return x; }},
               kGeneral);
}

TEST(AdFiniteDiffPrims, Div) {
  check_smooth(
      {"x / y", [](double x, double y) { return x / y; }, [](double, double y) { return 1 / y; },
       [](double x, double y) { return -x / (y * y); }},
      kGeneral);
}

TEST(AdFiniteDiffPrims, UnaryMinus) {
  check_smooth({"-x + 2.0 * -y", [](double x, double y) { return -x - 2 * y; },
                [](double, double) { return -1.0; }, [](double, double) { return -2.0; }},
               kGeneral);
}

TEST(AdFiniteDiffPrims, Exp) {
  check_smooth({"exp(x)", [](double x, double) { return std::exp(x); },
                [](double x, double) { return std::exp(x); }, zero()},
               kGeneral);
}

TEST(AdFiniteDiffPrims, Log) {
  check_smooth({"log(x)", [](double x, double) { return std::log(x); },
                [](double x, double) { return 1 / x; }, zero()},
               kPositive);
  // log'(0) = +inf (1 / x).
  check_special("log(x)", 0.0, 1.0, HUGE_VAL, 0.0);
}

TEST(AdFiniteDiffPrims, Sin) {
  check_smooth({"sin(x)", [](double x, double) { return std::sin(x); },
                [](double x, double) { return std::cos(x); }, zero()},
               kGeneral);
}

TEST(AdFiniteDiffPrims, Cos) {
  check_smooth({"cos(x)", [](double x, double) { return std::cos(x); },
                [](double x, double) { return -std::sin(x); }, zero()},
               kGeneral);
}

TEST(AdFiniteDiffPrims, Tan) {
  check_smooth({"tan(x)", [](double x, double) { return std::tan(x); },
                [](double x, double) { return 1 / (std::cos(x) * std::cos(x)); }, zero()},
               {{-1.2, 0.0}, {0.0, 1.0}, {0.4, 2.0}, {1.1, -1.0}});
}

TEST(AdFiniteDiffPrims, Tanh) {
  check_smooth({"tanh(x)", [](double x, double) { return std::tanh(x); },
                [](double x, double) { return 1 - std::tanh(x) * std::tanh(x); }, zero()},
               kGeneral);
}

TEST(AdFiniteDiffPrims, Sqrt) {
  check_smooth({"sqrt(x)", [](double x, double) { return std::sqrt(x); },
                [](double x, double) { return 0.5 / std::sqrt(x); }, zero()},
               kPositive);
  // sqrt'(0) = +inf.
  check_special("sqrt(x)", 0.0, 1.0, HUGE_VAL, 0.0);
}

TEST(AdFiniteDiffPrims, Abs) {
  check_smooth({"abs(x)", [](double x, double) { return std::fabs(x); },
                [](double x, double) { return x >= 0 ? 1.0 : -1.0; }, zero()},
               {{-1.3, 0.0}, {0.7, 1.0}, {-0.01, 2.0}, {3.0, -1.0}});
  // abs'(0) = 1: abs(x) is max(x, -x), and the tie takes the first operand.
  check_special("abs(x)", 0.0, 1.0, 1.0, 0.0);
  check_special("abs(x - y)", 2.0, 2.0, 1.0, -1.0);
}

TEST(AdFiniteDiffPrims, Sigmoid) {
  auto s = [](double x) { return 1 / (1 + std::exp(-x)); };
  check_smooth({"sigmoid(x)", [=](double x, double) { return s(x); },
                [=](double x, double) { return s(x) * (1 - s(x)); }, zero()},
               {{-30.0, 0.0}, {-2.0, 1.0}, {0.0, 0.0}, {3.0, 2.0}});
}

TEST(AdFiniteDiffPrims, Log1p) {
  check_smooth({"log1p(x)", [](double x, double) { return std::log1p(x); },
                [](double x, double) { return 1 / (1 + x); }, zero()},
               {{-0.5, 0.0}, {0.0, 1.0}, {1e-8, 2.0}, {2.0, -1.0}});
  // log1p'(-1) = +inf.
  check_special("log1p(x)", -1.0, 1.0, HUGE_VAL, 0.0);
}

TEST(AdFiniteDiffPrims, Expm1) {
  check_smooth({"expm1(x)", [](double x, double) { return std::expm1(x); },
                [](double x, double) { return std::exp(x); }, zero()},
               {{-1.0, 0.0}, {1e-3, 1.0}, {0.0, 2.0}, {2.0, -1.0}});
}

// digamma by recurrence and the asymptotic series (x > 0) and reflection (x < 0).
double digamma(double x) {
  if (x < 0) return digamma(1 - x) - std::numbers::pi / std::tan(std::numbers::pi * x);
  double r = 0;
  while (x < 20) {
    r -= 1 / x;
    x += 1;
  }
  const double i2 = 1 / (x * x);
  return r + std::log(x) - 0.5 / x -
         i2 * (1.0 / 12 - i2 * (1.0 / 120 - i2 * (1.0 / 252 - i2 * (1.0 / 240))));
}

TEST(AdFiniteDiffPrims, Lgamma) {
  // lgamma's derivative is digamma (docs/language.md §6.1). If this version documents lgamma as not
  // differentiable, the test is skipped rather than failed.
  const std::string src = primal_source("lgamma(x)") + kDerived;
  auto m = load(src, "prim_ad.cot");
  auto unsupported = [](const std::vector<Error>& es) {
    for (const Error& e : es) {
      if (e.message.find("not supported yet") == std::string::npos &&
          e.message.find("lgamma") != std::string::npos) {
        return true;
      }
    }
    return false;
  };
  if (!m.ok() && unsupported(m.errors())) GTEST_SKIP() << m.message();
  ASSERT_TRUE(m.ok()) << m.message();
  auto probe = m.value().evaluate("dfx", {Value::f64(1.5), Value::f64(0.0)});
  if (!probe.ok() && unsupported(probe.errors())) GTEST_SKIP() << probe.message();
  EXPECT_NEAR(digamma(1.0), -0.57721566490153286, 1e-14);
  check_smooth(
      {"lgamma(x)", [](double x, double) { return std::lgamma(x); },
       [](double x, double) { return digamma(x); }, zero(), 1e-6, kFdTol, true, true, 1e-9},
      {{0.5, 0.0}, {1.5, 1.0}, {3.7, 2.0}, {-0.5, -1.0}, {-2.3, 0.5}});
}

TEST(AdFiniteDiffPrims, Pow) {
  check_smooth({"pow(x, y)", [](double x, double y) { return std::pow(x, y); },
                [](double x, double y) { return y * std::pow(x, y - 1); },
                [](double x, double y) { return std::pow(x, y) * std::log(x); }},
               {{2.0, 0.5}, {0.7, -1.3}, {3.0, 2.0}, {1.5, 3.7}});
  // For x <= 0 the y-derivative is taken as 0; at y = 0 the x-derivative is 0.
  check_special("pow(x, y)", -2.0, 3.0, 12.0, 0.0);
  check_special("pow(x, y)", 0.0, 2.0, 0.0, 0.0);
  check_special("pow(x, y)", 0.0, 1.0, 1.0, 0.0);
  check_special("pow(x, y)", 2.0, 0.0, 0.0, std::log(2.0));
  check_special("pow(x, y)", 0.0, 0.0, 0.0, 0.0);
}

TEST(AdFiniteDiffPrims, PowerWithIntegerExponents) {
  check_smooth({"x ^ 2", [](double x, double) { return x * x; },
                [](double x, double) { return 2 * x; }, zero()},
               kGeneral);
  check_smooth({"x ^ 3 + y ^ 1", [](double x, double y) { return x * x * x + y; },
                [](double x, double) { return 3 * x * x; }, [](double, double) { return 1.0; }},
               kGeneral);
  check_smooth({"x ^ 5", [](double x, double) { return std::pow(x, 5); },
                [](double x, double) { return 5 * std::pow(x, 4); }, zero()},
               kGeneral);
  check_smooth({"x ^ -1", [](double x, double) { return 1 / x; },
                [](double x, double) { return -1 / (x * x); }, zero()},
               {{-1.3, 0.0}, {0.7, 1.0}, {2.1, 2.0}});
  check_smooth({"x ^ -2", [](double x, double) { return 1 / (x * x); },
                [](double x, double) { return -2 / (x * x * x); }, zero()},
               {{-1.3, 0.0}, {0.7, 1.0}, {2.1, 2.0}});
  check_smooth({"x ^ 0 + y", [](double, double y) { return 1.0 + y; }, zero(),
                [](double, double) { return 1.0; }},
               kGeneral);
  check_smooth({"-x ^ 2", [](double x, double) { return -x * x; },
                [](double x, double) { return -2 * x; }, zero()},
               kGeneral);
  // At 0: x ^ 2 has derivative 0 and x ^ 0 is constant.
  check_special("x ^ 2", 0.0, 1.0, 0.0, 0.0);
  check_special("x ^ 0", 0.0, 1.0, 0.0, 0.0);
}

TEST(AdFiniteDiffPrims, PowerWithRealExponents) {
  check_smooth({"x ^ 2.5", [](double x, double) { return std::pow(x, 2.5); },
                [](double x, double) { return 2.5 * std::pow(x, 1.5); }, zero()},
               kPositive);
  check_smooth({"x ^ y", [](double x, double y) { return std::pow(x, y); },
                [](double x, double y) { return y * std::pow(x, y - 1); },
                [](double x, double y) { return std::pow(x, y) * std::log(x); }},
               kPositive);
  check_smooth({"2.0 ^ x", [](double x, double) { return std::pow(2.0, x); },
                [](double x, double) { return std::pow(2.0, x) * std::log(2.0); }, zero()},
               kGeneral);
}

TEST(AdFiniteDiffPrims, Atan2) {
  auto dy = [](double x, double y) { return x / (x * x + y * y); };
  auto dx = [](double x, double y) { return -y / (x * x + y * y); };
  check_smooth({"atan2(y, x)", [](double x, double y) { return std::atan2(y, x); }, dx, dy},
               {{1.0, 2.0}, {-1.0, 0.5}, {0.3, -2.0}, {-2.0, -0.1}});
  // At (0, 0) the derivative is 0 in both operands.
  check_special("atan2(y, x)", 0.0, 0.0, 0.0, 0.0);
}

TEST(AdFiniteDiffPrims, Max) {
  check_smooth({"max(x, y)", [](double x, double y) { return std::max(x, y); },
                [](double x, double y) { return x >= y ? 1.0 : 0.0; },
                [](double x, double y) { return x >= y ? 0.0 : 1.0; }},
               {{1.0, 2.0}, {3.0, -1.0}, {-0.5, -0.6}});
  // On a tie the first operand's derivative.
  check_special("max(x, y)", 1.5, 1.5, 1.0, 0.0);
  check_special("max(y, x)", 1.5, 1.5, 0.0, 1.0);
  check_special("max(x, 0.0)", 0.0, 0.0, 1.0, 0.0);
}

TEST(AdFiniteDiffPrims, Min) {
  check_smooth({"min(x, y)", [](double x, double y) { return std::min(x, y); },
                [](double x, double y) { return x <= y ? 1.0 : 0.0; },
                [](double x, double y) { return x <= y ? 0.0 : 1.0; }},
               {{1.0, 2.0}, {3.0, -1.0}, {-0.5, -0.6}});
  check_special("min(x, y)", -2.0, -2.0, 1.0, 0.0);
  check_special("min(y, x)", -2.0, -2.0, 0.0, 1.0);
}

TEST(AdFiniteDiffPrims, ReluFromThePrelude) {
  check_smooth({"relu(x) * y", [](double x, double y) { return std::max(x, 0.0) * y; },
                [](double x, double y) { return x > 0 ? y : 0.0; },
                [](double x, double) { return std::max(x, 0.0); }},
               {{-1.0, 2.0}, {0.5, 3.0}});
  // relu is written with `if`: its derivative at 0 is 0 (docs/language.md §6.2).
  check_special("relu(x)", 0.0, 0.0, 0.0, 0.0);
}

TEST(AdFiniteDiffPrims, StopGradient) {
  // Finite differences see stop_gradient as the identity: closed form only.
  Prim p{"x * stop_gradient(x) + stop_gradient(y * y) + y",
         [](double x, double y) { return x * x + y * y + y; }, [](double x, double) { return x; },
         [](double, double) { return 1.0; }};
  p.fd = false;
  p.second_order = false;  // whether grad(grad(f)) sees through stop_gradient is not specified
  check_smooth(p, kGeneral);
}

TEST(AdFiniteDiffPrims, ConversionToI64HasNoDerivative) {
  check_smooth({"f64(i64(x)) * y + x", [](double x, double y) { return std::trunc(x) * y + x; },
                [](double, double) { return 1.0; }, [](double x, double) { return std::trunc(x); }},
               {{-1.3, 0.4}, {0.7, 1.1}, {2.1, -0.3}});
}

TEST(AdFiniteDiffPrims, ComparisonsBracketsAndIf) {
  check_smooth({"[x > y] * x * y + (if x < 0.0 then x else 2.0 * x)",
                [](double x, double y) { return (x > y ? x * y : 0.0) + (x < 0 ? x : 2 * x); },
                [](double x, double y) { return (x > y ? y : 0.0) + (x < 0 ? 1.0 : 2.0); },
                [](double x, double y) { return x > y ? x : 0.0; }},
               {{-1.3, 0.4}, {0.7, 1.1}, {2.1, -0.3}, {-0.5, -2.0}});
}

TEST(AdFiniteDiffPrims, F32AndF64Conversions) {
  // The product is computed in f32; its derivative is 1 through both conversions.
  Prim p{"f64(f32(x) * f32(y)) + 2.0 * f64(f32(x))",
         [](double x, double y) {
           const float fx = static_cast<float>(x), fy = static_cast<float>(y);
           return static_cast<double>(fx * fy) + 2.0 * static_cast<double>(fx);
         },
         [](double, double y) { return static_cast<double>(static_cast<float>(y)) + 2.0; },
         [](double x, double) { return static_cast<double>(static_cast<float>(x)); }};
  p.fd_rel_step = 1e-2;  // f32 rounding makes small steps meaningless
  p.fd_tol = 1e-4;
  p.second_order = false;
  p.tol = 1e-6;  // tangents pass through f32
  check_smooth(p, {{0.75, -1.5}, {2.0, 0.25}});
}

TEST(AdFiniteDiffPrims, F32Parameters) {
  constexpr const char* src = R"(
def g(x: f32, y: f32) -> f32 { x * y + sin(x) }
def dg(x: f32, y: f32) -> (f32, f32) { grad(g)(x, y) }
)";
  auto m = load(src, "prim_f32.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  const float x = 0.75f, y = -1.5f;
  auto r = m.value().evaluate("dg", {Value::f32(x), Value::f32(y)});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().type_string(), "(f32, f32)");
  EXPECT_TRUE(ValueNear(r.value(), {y + std::cos(x), x}, 1e-6));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::adtest
