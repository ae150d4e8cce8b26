// Strong zeros kept wherever they are stored (docs/language.md §5.6, issue 25's break 1): a value
// computed under a false guard is 0, never NaN, when it goes through a tensor (a generator, a
// sum, an accum, a slice, a guarded tensor), a loop's state, a tuple or a saving loop's stack,
// and divided or multiplied by something infinite afterwards. Each program is one the passes
// rewrite (region CSE hoists `z / x[i]` into a table, fusion turns a read back into the scalar,
// AD stores residuals), so the value, the gradient (value_and_grad, and grad called from a
// function) and the Hessian are checked against closed forms at every optimization level, on
// the interpreter and natively. Before, levels disagreed and some gave NaN.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "ad/fd_harness.h"
#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {
namespace {

using adtest::f64_vector;
using adtest::kExactTol;
using adtest::real_elements;
using adtest::RealsNear;
using adtest::rho;

// Every case's f(x: f64[n]) -> f64 is a sum over the elements of a term that is a strong zero
// where x[i] <= 0: value sum of h(x[i]) over x[i] > 0, gradient h'(x[i]) there and 0 elsewhere,
// Hessian diagonal h''(x[i]) there.
struct Term {
  std::function<double(double)> h, dh, d2h;
};

struct StoredCase {
  const char* name;
  const char* f;
  Term term;
};

// log(x) / x and its derivatives; x^2 + 1 (z * z + z / x with z = x).
const Term kLogOverX{[](double x) { return std::log(x) / x; },
                     [](double x) { return (1.0 - std::log(x)) / (x * x); },
                     [](double x) { return (2.0 * std::log(x) - 3.0) / (x * x * x); }};
Term scaled(const Term& t, double c) {
  return {[=](double x) { return c * t.h(x); }, [=](double x) { return c * t.dh(x); },
          [=](double x) { return c * t.d2h(x); }};
}

std::vector<StoredCase> cases() {
  return {
      // The red team's t4: region CSE hoists z / x[i] into a table.
      {"hoisted_table",
       "def f(x: f64[n]) -> f64 { sum i. { let z = [x[i] > 0.0] * x[i]; z * z + z / x[i] } }\n",
       {[](double x) { return x * x + 1.0; }, [](double x) { return 2.0 * x; },
        [](double) { return 2.0; }}},
      // s5: AD stores the residual z in a tensor.
      {"residual",
       "def f(x: f64[n]) -> f64 {\n"
       "  sum i. { let z = [x[i] > 0.0] * log(x[i]); z * z + z / x[i] }\n"
       "}\n",
       {[](double x) { return std::log(x) * std::log(x) + std::log(x) / x; },
        [](double x) { return 2.0 * std::log(x) / x + (1.0 - std::log(x)) / (x * x); },
        [](double x) {
          return (2.0 - 2.0 * std::log(x)) / (x * x) + (2.0 * std::log(x) - 3.0) / (x * x * x);
        }}},
      // v2: the user's own tensor, read back (fusion turns the read into the guard at -O2).
      {"generator",
       "def f(x: f64[n]) -> f64 {\n"
       "  let t = for i. [x[i] > 0.0] * log(x[i])\n"
       "  sum i. t[i] / x[i]\n"
       "}\n",
       kLogOverX},
      // A tensor-valued sum of strong zeros is one element by element.
      {"tensor_sum",
       "def f(x: f64[n]) -> f64 {\n"
       "  let t = sum j: 2. for i. [x[i] > 0.0] * log(x[i])\n"
       "  sum i. t[i] / x[i]\n"
       "}\n",
       scaled(kLogOverX, 2.0)},
      // A cell of an accum that only strong zeros reach is one.
      {"accum",
       "def f(x: f64[n]) -> f64 {\n"
       "  let t = accum[n] i. (i, [x[i] > 0.0] * log(x[i]))\n"
       "  sum i. t[i] / x[i]\n"
       "}\n",
       kLogOverX},
      // Rows of a matrix: a slice keeps its elements' marks.
      {"slice",
       "def f(x: f64[n]) -> f64 {\n"
       "  let A = for i, j: 2. [x[i] > 0.0] * log(x[i])\n"
       "  sum i. { let r = A[i]; r[0] / x[i] + r[1] / x[i] }\n"
       "}\n",
       scaled(kLogOverX, 2.0)},
      // A loop's state: the strong zeros go round the loop and come out.
      {"loop_state",
       "def f(x: f64[n]) -> f64 {\n"
       "  let s = loop s = (for i. [x[i] > 0.0] * log(x[i])) for k < 2 { for i. s[i] * 1.5 }\n"
       "  sum i. s[i] / x[i]\n"
       "}\n",
       scaled(kLogOverX, 2.25)},
      // A scalar loop state, saved for reverse mode at every step.
      {"scalar_state",
       "def f(x: f64[n]) -> f64 {\n"
       "  sum i. {\n"
       "    let z = loop z = [x[i] > 0.0] * log(x[i]) for k < 2 { z * 1.5 }\n"
       "    z / x[i]\n"
       "  }\n"
       "}\n",
       scaled(kLogOverX, 2.25)},
      // A component of a tuple.
      {"tuple",
       "def f(x: f64[n]) -> f64 {\n"
       "  let (t, c) = (for i. [x[i] > 0.0] * log(x[i]), 2.0)\n"
       "  sum i. c * t[i] / x[i]\n"
       "}\n",
       scaled(kLogOverX, 2.0)},
      // An if's branches yield tensors with strong zeros.
      {"if_branches",
       "def f(x: f64[n]) -> f64 {\n"
       "  let t = if n > 2 then for i. [x[i] > 0.0] * log(x[i]) else for i: n. 0.0\n"
       "  sum i. t[i] / x[i]\n"
       "}\n",
       kLogOverX},
      // A function called on a guarded value (inlined from -O1 on).
      {"call",
       "def q(z: f64, y: f64) -> f64 { z / y }\n"
       "def f(x: f64[n]) -> f64 { sum i. q([x[i] > 0.0] * log(x[i]), x[i]) }\n",
       kLogOverX},
  };
}

const char* kDerived = R"(
def g(x: f64[n]) -> f64[n] { grad(f, x)(x) }
def H(x: f64[n]) -> f64[n, n] { hessian(f, x)(x) }
)";

// Guards fail at 0 and -1: log is -inf and NaN there, and x[i] is 0 or negative.
const std::vector<double> kX = {0.0, 2.0, -1.0, 0.5};

struct Want {
  double value;
  std::vector<double> grad, hessian;
};

Want expected(const Term& t) {
  const size_t n = kX.size();
  Want w{0.0, std::vector<double>(n, 0.0), std::vector<double>(n * n, 0.0)};
  for (size_t i = 0; i < n; ++i) {
    if (kX[i] <= 0.0) continue;
    w.value += t.h(kX[i]);
    w.grad[i] = t.dh(kX[i]);
    w.hessian[i * n + i] = t.d2h(kX[i]);
  }
  return w;
}

Result<Module> load(const StoredCase& c, int opt_level) {
  LoadOptions options;
  options.opt_level = opt_level;
  return Module::from_string(std::string(c.f) + kDerived, std::string(c.name) + ".cot", options);
}

// The suite runs every level itself (its name keeps it out of CMakeLists.txt's second run at
// level 0 of the suites named Ad*).
TEST(StrongZeroStorage, EveryLevelOnTheInterpreter) {
  const Value X = f64_vector(kX);
  for (const StoredCase& c : cases()) {
    const Want want = expected(c.term);
    for (int level : {0, 1, 2}) {
      const std::string where = std::string(c.name) + " at -O" + std::to_string(level);
      auto m = load(c, level);
      ASSERT_TRUE(m.ok()) << where << ": " << m.message();
      auto v = m.value().evaluate("f", {X});
      ASSERT_TRUE(v.ok()) << where << ": " << v.message();
      EXPECT_LE(rho(v.value().as_f64(), want.value), kExactTol)
          << where << ": " << v.value().as_f64() << " vs " << want.value;
      auto vg = m.value().value_and_grad("f", {X});
      ASSERT_TRUE(vg.ok()) << where << ": " << vg.message();
      ASSERT_EQ(vg.value().grad.size(), 1u) << where;
      EXPECT_LE(rho(vg.value().value.as_f64(), want.value), kExactTol) << where;
      EXPECT_TRUE(RealsNear(real_elements(vg.value().grad[0].value), want.grad, kExactTol))
          << where + ": value_and_grad";
      auto g = m.value().evaluate("g", {X});
      ASSERT_TRUE(g.ok()) << where << ": " << g.message();
      EXPECT_TRUE(RealsNear(real_elements(g.value()), want.grad, kExactTol))
          << where + ": grad called from g";
      auto h = m.value().evaluate("H", {X});
      ASSERT_TRUE(h.ok()) << where << ": " << h.message();
      EXPECT_TRUE(RealsNear(real_elements(h.value()), want.hessian, kExactTol))
          << where + ": hessian";
    }
  }
}

TEST(StrongZeroStorage, EveryLevelNatively) {
  const Value X = f64_vector(kX);
  for (const StoredCase& c : cases()) {
    const Want want = expected(c.term);
    for (int level : {0, 1, 2}) {
      const std::string where = std::string(c.name) + " natively at -O" + std::to_string(level);
      auto m = load(c, level);
      ASSERT_TRUE(m.ok()) << where << ": " << m.message();
      auto fs = m.value().compile({{"f", std::nullopt, {}, {X}},
                                   {"f", DerivativeKind::ValueAndGrad, {}, {X}},
                                   {"g", std::nullopt, {}, {X}},
                                   {"f", DerivativeKind::Hessian, {}, {X}}},
                                  CompileOptions{1, 0, {}});
      ASSERT_TRUE(fs.ok()) << where << ": " << fs.message();
      auto v = fs.value()[0].call({X});
      ASSERT_TRUE(v.ok()) << where << ": " << v.message();
      EXPECT_LE(rho(v.value().as_f64(), want.value), kExactTol)
          << where << ": " << v.value().as_f64() << " vs " << want.value;
      auto vg = fs.value()[1].call({X});
      ASSERT_TRUE(vg.ok()) << where << ": " << vg.message();
      ASSERT_EQ(vg.value().elems().size(), 2u) << where;
      EXPECT_TRUE(RealsNear(real_elements(vg.value().elems()[1]), want.grad, kExactTol))
          << where + ": value_and_grad";
      auto g = fs.value()[2].call({X});
      ASSERT_TRUE(g.ok()) << where << ": " << g.message();
      EXPECT_TRUE(RealsNear(real_elements(g.value()), want.grad, kExactTol))
          << where + ": grad called from g";
      auto h = fs.value()[3].call({X});
      ASSERT_TRUE(h.ok()) << where << ": " << h.message();
      EXPECT_TRUE(RealsNear(real_elements(h.value()), want.hessian, kExactTol))
          << where + ": hessian";
    }
  }
}

// A branch that does not depend on the input has a strong zero tangent (the AD campaign's seeds
// 25022509 and 25050867): with x <= 0 everywhere the else branch makes v the zero vector, where
// norm2's partial is 0/0, and jvp gave NaN where jacobian, with its strong-zero basis, gave 0.
// g is |a| times the norm of x's positive part, so its derivative in a is that norm (a > 0).
const char* kBranch = R"(
def g(x: f64[n], a: f64) -> f64 { norm2(for i. if x[i] > 0.0 then a * x[i] else x[i] - x[i]) }
def dg(x: f64[n], a: f64) -> (f64, f64) { jvp(g, a)(x, a, 1.0) }
def Jg(x: f64[n], a: f64) -> f64 { jacobian(g, a)(x, a) }
def Gg(x: f64[n], a: f64) -> f64 { grad(g, a)(x, a) }
)";

TEST(StrongZeroStorage, BranchWithoutTheInputHasAStrongZeroTangent) {
  const Value A = Value::f64(0.5);
  for (const auto& [x, want] :
       {std::pair<std::vector<double>, double>{{-1.0, -2.0}, 0.0}, {{3.0, -1.0, 4.0}, 5.0}}) {
    const Value X = f64_vector(x);
    for (int level : {0, 1, 2}) {
      LoadOptions options;
      options.opt_level = level;
      auto m = Module::from_string(kBranch, "branch.cot", options);
      ASSERT_TRUE(m.ok()) << m.message();
      const std::string where = "x[0] = " + std::to_string(x[0]) + " at -O" + std::to_string(level);
      auto fs = m.value().compile({{"dg", std::nullopt, {}, {X, A}},
                                   {"Jg", std::nullopt, {}, {X, A}},
                                   {"Gg", std::nullopt, {}, {X, A}}},
                                  CompileOptions{1, 0, {}});
      ASSERT_TRUE(fs.ok()) << where << ": " << fs.message();
      for (const char* fn : {"dg", "Jg", "Gg"}) {
        auto r = m.value().evaluate(fn, {X, A});
        ASSERT_TRUE(r.ok()) << where << " " << fn << ": " << r.message();
        const Value& got = r.value().is_scalar() ? r.value() : r.value().elems()[1];
        EXPECT_LE(rho(got.as_f64(), want), kExactTol)
            << where << " " << fn << " (interpreter): " << got.as_f64() << " vs " << want;
      }
      for (size_t k = 0; k < 3; ++k) {
        auto r = fs.value()[k].call({X, A});
        ASSERT_TRUE(r.ok()) << where << ": " << r.message();
        const Value& got = r.value().is_scalar() ? r.value() : r.value().elems()[1];
        EXPECT_LE(rho(got.as_f64(), want), kExactTol)
            << where << " native function " << k << ": " << got.as_f64() << " vs " << want;
      }
    }
  }
}

}  // namespace
}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
