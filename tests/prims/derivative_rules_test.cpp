// The derivative rules of the primitive table (PrimInfo::partials) are source expressions of
// the language; here each one is checked by the checker and compared, through the reference
// interpreter, with central finite differences of the primitive itself at several points,
// and at the documented choices where the primitive is not differentiable.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "prims/prim.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::Module;
using cotangent::Value;

double rho(double a, double b) {
  return std::fabs(a - b) / std::max(1.0, std::fabs(a) + std::fabs(b));
}

// The primitive applied to the operands x, y as source.
std::string application(const PrimInfo& p) {
  const std::string op(p.symbol);
  if (p.spelling == Spelling::Infix) return "x " + op + " y";
  if (p.spelling == Spelling::Prefix) return op + "x";
  return op + (p.arity == 1 ? "(x)" : "(x, y)");
}

// A module with the primitive `f` and its partial `d` with respect to operand `k`.
std::string rule_module(const PrimInfo& p, int k) {
  const std::string params = p.arity == 1 ? "x: f64" : "x: f64, y: f64";
  return "def f(" + params + ") -> f64 { " + application(p) + " }\n" + "def d(" + params +
         ") -> f64 {\n  let r = " + application(p) + "\n  " + std::string(p.partials[k]) + "\n}\n";
}

double eval(const Module& m, const std::string& fn, const std::vector<double>& at) {
  std::vector<Value> args;
  for (double a : at) args.push_back(Value::f64(a));
  auto r = m.evaluate(fn, args);
  EXPECT_TRUE(r.ok()) << r.message();
  return r.ok() ? r.value().as_f64() : NAN;
}

std::vector<Prim> differentiable_real_prims() {
  std::vector<Prim> out;
  for (int i = 0; i < static_cast<int>(Prim::kCount); ++i) {
    const PrimInfo& p = prim_info(static_cast<Prim>(i));
    if (p.eval_f64 && !p.partials[0].empty()) out.push_back(p.prim);
  }
  return out;
}

TEST(DerivativeRules, EveryRealPrimitiveHasOneExceptTheKnownGaps) {
  std::vector<std::string> missing;
  for (int i = 0; i < static_cast<int>(Prim::kCount); ++i) {
    const PrimInfo& p = prim_info(static_cast<Prim>(i));
    if (!p.eval_f64 || p.prim == Prim::StopGradient) continue;  // not real, or zero by definition
    for (int k = 0; k < p.arity; ++k) {
      if (p.partials[k].empty()) missing.push_back(std::string(p.name));
    }
  }
  // trigamma ends the chain lgamma -> digamma -> trigamma: its derivative is not provided, and
  // AD reports differentiating it as an error rather than a zero.
  EXPECT_EQ(missing, std::vector<std::string>{"trigamma"});
}

TEST(DerivativeRules, MatchCentralFiniteDifferences) {
  const std::vector<double> xs = {0.3, 0.7, 1.3, 2.1};
  const std::vector<double> ys = {0.4, 1.1, 1.7};
  for (Prim prim : differentiable_real_prims()) {
    const PrimInfo& p = prim_info(prim);
    for (int k = 0; k < p.arity; ++k) {
      SCOPED_TRACE(std::string(p.name) + " operand " + std::to_string(k));
      auto m = Module::from_string(rule_module(p, k), std::string(p.name) + "_rule.cot");
      ASSERT_TRUE(m.ok()) << m.message();
      for (double x : xs) {
        for (double y : p.arity == 1 ? std::vector<double>{0.0} : ys) {
          std::vector<double> at = p.arity == 1 ? std::vector<double>{x} : std::vector{x, y};
          const double h = 1e-6 * std::max(1.0, std::fabs(at[k]));
          std::vector<double> up = at, down = at;
          up[k] += h;
          down[k] -= h;
          const double fd = (eval(m.value(), "f", up) - eval(m.value(), "f", down)) / (2 * h);
          const double rule = eval(m.value(), "d", at);
          // Central differences are accurate to about h^2 * f''' and eps / h.
          EXPECT_LE(rho(rule, fd), 1e-7) << "at x = " << x << ", y = " << y << ": rule " << rule
                                         << ", finite differences " << fd;
        }
      }
    }
  }
}

// Where a primitive is not differentiable, the rule gives the documented choice
// (PrimInfo::nondiff_note, docs/language.md §6.1).
TEST(DerivativeRules, DocumentedChoicesAtNonDifferentiablePoints) {
  auto at = [](Prim prim, int k, std::vector<double> point) {
    auto m = Module::from_string(rule_module(prim_info(prim), k), "choice.cot");
    EXPECT_TRUE(m.ok()) << m.message();
    return m.ok() ? eval(m.value(), "d", point) : NAN;
  };
  EXPECT_EQ(at(Prim::Abs, 0, {0.0}), 1.0);  // abs = max(x, -x): the first operand at a tie
  EXPECT_EQ(at(Prim::Max, 0, {1.5, 1.5}), 1.0);
  EXPECT_EQ(at(Prim::Max, 1, {1.5, 1.5}), 0.0);
  EXPECT_EQ(at(Prim::Min, 0, {1.5, 1.5}), 1.0);
  EXPECT_EQ(at(Prim::Min, 1, {1.5, 1.5}), 0.0);
  EXPECT_EQ(at(Prim::Atan2, 0, {0.0, 0.0}), 0.0);
  EXPECT_EQ(at(Prim::Atan2, 1, {0.0, 0.0}), 0.0);
  EXPECT_EQ(at(Prim::Pow, 1, {0.0, 2.0}), 0.0);   // y-derivative at x = 0
  EXPECT_EQ(at(Prim::Pow, 1, {-2.0, 2.0}), 0.0);  // and for x < 0
  EXPECT_EQ(at(Prim::Pow, 0, {0.0, 0.0}), 0.0);   // x-derivative at y = 0
  EXPECT_EQ(at(Prim::Sqrt, 0, {0.0}), INFINITY);
  EXPECT_EQ(at(Prim::Log, 0, {0.0}), INFINITY);
  // The table's +inf holds for -0.0 too (1 / x and 0.5 / sqrt(x) gave -inf there).
  EXPECT_EQ(at(Prim::Sqrt, 0, {-0.0}), INFINITY);
  EXPECT_EQ(at(Prim::Log, 0, {-0.0}), INFINITY);
  EXPECT_EQ(at(Prim::Log1p, 0, {-1.0}), INFINITY);
  // Away from 0 the rules are 1 / x and 0.5 / sqrt(x) exactly, the sign of x kept.
  EXPECT_EQ(at(Prim::Log, 0, {-2.0}), -0.5);
  EXPECT_EQ(at(Prim::Log, 0, {4.0}), 0.25);
  EXPECT_EQ(at(Prim::Sqrt, 0, {4.0}), 0.25);
  EXPECT_TRUE(std::isnan(at(Prim::Sqrt, 0, {-4.0})));
  // Negative values on the other side of abs, max and min.
  EXPECT_EQ(at(Prim::Abs, 0, {-0.5}), -1.0);
  EXPECT_EQ(at(Prim::Max, 1, {0.5, 1.5}), 1.0);
  EXPECT_EQ(at(Prim::Min, 1, {1.5, 0.5}), 1.0);
}

// The derivatives of sqrt and log at -0.0 and +0.0 through AD, at every level of derivative
// and optimization and on both backends: +inf, and -inf for the second derivative (the
// derivative of the divisor stays 1 where -0.0 is turned into +0.0).
TEST(DerivativeRules, SqrtAndLogAtSignedZeros) {
  // One function of every derivative, so that each level compiles two functions natively.
  const std::string src =
      "def sq(x: f64) -> f64 { sqrt(x) }\n"
      "def lg(x: f64) -> f64 { log(x) }\n"
      "def all(x: f64) -> (f64, f64, f64, f64, (f64, f64)) {\n"
      "  (grad(sq, x)(x), grad(lg, x)(x), grad(grad(sq, x), x)(x), grad(grad(lg, x), x)(x),\n"
      "   jvp(lg, x)(x, 1.0))\n"
      "}\n"
      "def for_sqrt(x: f64[n]) -> f64[n] { for i. sqrt(x[i]) }\n"
      "def vsq(x: f64[n]) -> f64[n] { vjp(for_sqrt)(x, for i: n. 1.0) }\n";
  for (int opt : {0, 1, 2}) {
    cotangent::LoadOptions lo;
    lo.opt_level = opt;
    auto m = Module::from_string(src, "zeros.cot", lo);
    ASSERT_TRUE(m.ok()) << m.message();
    for (auto backend : {cotangent::Backend::Interpreter, cotangent::Backend::Native}) {
      SCOPED_TRACE("opt " + std::to_string(opt) +
                   (backend == cotangent::Backend::Native ? ", native" : ", interpreter"));
      cotangent::EvalOptions eo;
      eo.backend = backend;
      auto all = [&](double x) {
        std::vector<double> out;
        auto r = m.value().evaluate("all", {Value::f64(x)}, eo);
        EXPECT_TRUE(r.ok()) << r.message();
        if (!r.ok()) return std::vector<double>(5, NAN);
        const auto& e = r.value().elems();
        for (size_t k = 0; k < 4; ++k) out.push_back(e[k].as_f64());
        out.push_back(e[4].elems()[1].as_f64());  // the tangent of log
        return out;
      };
      for (double zero : {0.0, -0.0}) {
        EXPECT_EQ(all(zero),
                  (std::vector<double>{INFINITY, INFINITY, -INFINITY, -INFINITY, INFINITY}))
            << "at " << (std::signbit(zero) ? "-0.0" : "+0.0");
      }
      EXPECT_EQ(all(4.0), (std::vector<double>{0.25, 0.25, -1.0 / 32.0, -1.0 / 16.0, 0.25}));
      EXPECT_EQ(all(-2.0)[1], -0.5);
      Value x = Value::zeros(cotangent::DType::F64, {4});
      auto xs = x.f64_mut();
      xs[0] = -0.0;
      xs[1] = 0.0;
      xs[2] = 4.0;
      xs[3] = -0.0;
      auto v = m.value().evaluate("vsq", {x}, eo);
      ASSERT_TRUE(v.ok()) << v.message();
      const auto g = v.value().f64_data();
      EXPECT_EQ((std::vector<double>(g.begin(), g.end())),
                (std::vector<double>{INFINITY, INFINITY, 0.25, INFINITY}));
    }
  }
}

// Rules whose primitives the surface language does not spell as calls: select (an `if` of
// evaluated operands) and the conversions.
TEST(DerivativeRules, SelectAndConversions) {
  const PrimInfo& sel = prim_info(Prim::Select);
  EXPECT_TRUE(sel.partials[0].empty());  // no derivative with respect to the condition
  auto m = Module::from_string("def d1(x: bool) -> f64 { " + std::string(sel.partials[1]) +
                                   " }\ndef d2(x: bool) -> f64 { " + std::string(sel.partials[2]) +
                                   " }\n",
                               "select_rule.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_EQ(m.value().evaluate("d1", {Value::boolean(true)}).value().as_f64(), 1.0);
  EXPECT_EQ(m.value().evaluate("d1", {Value::boolean(false)}).value().as_f64(), 0.0);
  EXPECT_EQ(m.value().evaluate("d2", {Value::boolean(true)}).value().as_f64(), 0.0);
  EXPECT_EQ(m.value().evaluate("d2", {Value::boolean(false)}).value().as_f64(), 1.0);
  EXPECT_EQ(prim_info(Prim::ToF64).partials[0], "1.0");
  EXPECT_EQ(prim_info(Prim::ToF32).partials[0], "1.0");
  EXPECT_TRUE(prim_info(Prim::ToI64).partials[0].empty());
  EXPECT_TRUE(prim_info(Prim::StopGradient).partials[0].empty());
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
