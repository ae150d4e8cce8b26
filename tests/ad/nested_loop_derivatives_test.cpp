// Second derivatives of loops nested two and three deep (counted in counted, while in counted,
// counted in while, counted in while in counted): hessian (forward over reverse), a
// Hessian-vector product jvp(grad(f, x), x), and reverse over reverse grad(x -> <grad f(x), w>),
// at every optimization level on the interpreter and at the default level natively, against
// closed forms. A reverse-mode primal that is differentiated again keeps its inner saving loops
// (ad/unzip.cpp's primal_part): before, the Hessian of the first program failed to inline.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <tuple>
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

// The derived functions of `f(x: f64[n]) -> f64` that every case evaluates.
const char* kDerived = R"(
def H(x: f64[n]) -> f64[n, n] { hessian(f, x)(x) }
def Hv(x: f64[n], v: f64[n]) -> (f64[n], f64[n]) { jvp(grad(f, x), x)(x, v) }
def gw(x: f64[n], w: f64[n]) -> f64 { sum i. grad(f, x)(x)[i] * w[i] }
def Hw(x: f64[n], w: f64[n]) -> f64[n] { grad(gw, x)(x, w) }
)";

struct NestCase {
  const char* name;
  const char* f;  // def f(x: f64[n]) -> f64
  // The closed-form gradient and Hessian at x.
  std::function<std::vector<double>(const std::vector<double>&)> grad;
  std::function<std::vector<double>(const std::vector<double>&)> hessian;
};

std::vector<double> diagonal(const std::vector<double>& d) {
  const size_t n = d.size();
  std::vector<double> h(n * n, 0.0);
  for (size_t i = 0; i < n; ++i) h[i * n + i] = d[i];
  return h;
}

std::vector<double> map(const std::vector<double>& x, const std::function<double(double)>& g) {
  std::vector<double> out;
  for (double v : x) out.push_back(g(v));
  return out;
}

std::vector<NestCase> cases() {
  return {
      // The red team's program: sum over t of x[t]^n.
      {"counted_in_counted",
       "def f(x: f64[n]) -> f64 {\n"
       "  loop a = 0.0 for t < n { let b = loop p = 1.0 for t2 < n { p * x[t] }; a + b }\n"
       "}\n",
       [](const std::vector<double>& x) {
         const double n = static_cast<double>(x.size());
         return map(x, [n](double v) { return n * std::pow(v, n - 1); });
       },
       [](const std::vector<double>& x) {
         const double n = static_cast<double>(x.size());
         return diagonal(map(x, [n](double v) { return n * (n - 1) * std::pow(v, n - 2); }));
       }},
      // The product over t of (x[t]^2 + 0.5): the outer state seeds the inner while loop.
      {"while_in_counted",
       "def f(x: f64[n]) -> f64 {\n"
       "  loop a = 1.0 for t < n {\n"
       "    let (p, k) = loop (p, k) = (a, 0) while k < 2 { (p * x[t], k + 1) }\n"
       "    p + 0.5 * a\n"
       "  }\n"
       "}\n",
       [](const std::vector<double>& x) {
         double f = 1.0;
         for (double v : x) f *= v * v + 0.5;
         return map(x, [f](double v) { return f * 2 * v / (v * v + 0.5); });
       },
       [](const std::vector<double>& x) {
         double f = 1.0;
         for (double v : x) f *= v * v + 0.5;
         const size_t n = x.size();
         std::vector<double> h(n * n);
         for (size_t i = 0; i < n; ++i) {
           const double ci = x[i] * x[i] + 0.5;
           for (size_t j = 0; j < n; ++j) {
             const double cj = x[j] * x[j] + 0.5;
             h[i * n + j] = i == j ? 2 * f / ci : f * (2 * x[i] / ci) * (2 * x[j] / cj);
           }
         }
         return h;
       }},
      // The sum over k of x[k]^4, the while loop's counter reading x.
      {"counted_in_while",
       "def f(x: f64[n]) -> f64 {\n"
       "  let (a, k) = loop (a, k) = (0.0, 0) while k < size(x, 0) {\n"
       "    let b = loop q = x[k] for t < 2 { q * q }\n"
       "    (a + b, k + 1)\n"
       "  }\n"
       "  a\n"
       "}\n",
       [](const std::vector<double>& x) { return map(x, [](double v) { return 4 * v * v * v; }); },
       [](const std::vector<double>& x) {
         return diagonal(map(x, [](double v) { return 12 * v * v; }));
       }},
      // Three deep: the sum over t of 2 x[t]^3.
      {"counted_in_while_in_counted",
       "def f(x: f64[n]) -> f64 {\n"
       "  loop a = 0.0 for t < n {\n"
       "    let (s, k) = loop (s, k) = (0.0, 0) while k < 2 {\n"
       "      let r = loop q = 1.0 for u < 2 { q * x[t] }\n"
       "      (s + r, k + 1)\n"
       "    }\n"
       "    a + s * x[t]\n"
       "  }\n"
       "}\n",
       [](const std::vector<double>& x) { return map(x, [](double v) { return 6 * v * v; }); },
       [](const std::vector<double>& x) {
         return diagonal(map(x, [](double v) { return 12 * v; }));
       }},
      // Three deep the other way: the sum over t of x[t]^2 (x[t]^2 + 1) with a while loop inside.
      {"while_in_counted_in_while",
       "def f(x: f64[n]) -> f64 {\n"
       "  let (a, k) = loop (a, k) = (0.0, 0) while k < size(x, 0) {\n"
       "    let s = loop s = 0.0 for t < 2 {\n"
       "      let (p, j) = loop (p, j) = (1.0, 0) while j < 2 * t + 2 { (p * x[k], j + 1) }\n"
       "      s + p\n"
       "    }\n"
       "    (a + s, k + 1)\n"
       "  }\n"
       "  a\n"
       "}\n",
       [](const std::vector<double>& x) {
         return map(x, [](double v) { return 2 * v + 4 * v * v * v; });
       },
       [](const std::vector<double>& x) {
         return diagonal(map(x, [](double v) { return 2 + 12 * v * v; }));
       }},
  };
}

std::vector<double> matvec(const std::vector<double>& h, const std::vector<double>& v) {
  const size_t n = v.size();
  std::vector<double> out(n, 0.0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) out[i] += h[i * n + j] * v[j];
  }
  return out;
}

// The values of H, Hv and Hw at (x, v): evaluated one by one on the interpreter, or compiled
// together (one native object) and called.
struct Results {
  Value h, hv, hw;
};

void check_results(const NestCase& c, const std::vector<double>& x, const std::vector<double>& v,
                   const Results& r, const std::string& where) {
  const std::vector<double> want_h = c.hessian(x);
  EXPECT_TRUE(RealsNear(real_elements(r.h), want_h, kExactTol)) << where + ": hessian(f, x)";
  ASSERT_EQ(r.hv.elems().size(), 2u) << where;
  EXPECT_TRUE(RealsNear(real_elements(r.hv.elems()[0]), c.grad(x), kExactTol))
      << where + ": grad in jvp(grad f)";
  EXPECT_TRUE(RealsNear(real_elements(r.hv.elems()[1]), matvec(want_h, v), kExactTol))
      << where + ": jvp(grad(f, x), x)";
  EXPECT_TRUE(RealsNear(real_elements(r.hw), matvec(want_h, v), kExactTol))
      << where + ": grad of <grad f, w>";
}

const std::vector<double> kX = {0.7, -1.3, 0.4};
const std::vector<double> kV = {0.5, 0.25, -2.0};

Result<Module> load(const NestCase& c, int opt_level) {
  LoadOptions options;
  options.opt_level = opt_level;
  return Module::from_string(std::string(c.f) + kDerived, std::string(c.name) + ".cot", options);
}

// The suite runs every level itself, so its name keeps it out of the second run at level 0 that
// CMakeLists.txt gives the suites named Ad*.
TEST(NestedLoopDerivatives, EveryLevelOnTheInterpreter) {
  const Value X = f64_vector(kX), V = f64_vector(kV);
  for (const NestCase& c : cases()) {
    for (int level : {0, 1, 2}) {
      const std::string where = std::string(c.name) + " at --opt " + std::to_string(level);
      auto m = load(c, level);
      ASSERT_TRUE(m.ok()) << where << ": " << m.message();
      Results r;
      for (auto [fn, args, out] : {std::tuple{"H", std::vector<Value>{X}, &r.h},
                                   std::tuple{"Hv", std::vector<Value>{X, V}, &r.hv},
                                   std::tuple{"Hw", std::vector<Value>{X, V}, &r.hw}}) {
        auto y = m.value().evaluate(fn, args);
        ASSERT_TRUE(y.ok()) << where << ": " << fn << ": " << y.message();
        *out = std::move(y).value();
      }
      check_results(c, kX, kV, r, where);
    }
  }
}

TEST(NestedLoopDerivatives, NativeAtTheDefaultLevel) {
  const Value X = f64_vector(kX), V = f64_vector(kV);
  for (const NestCase& c : cases()) {
    const std::string where = std::string(c.name) + " (native)";
    auto m = load(c, -1);
    ASSERT_TRUE(m.ok()) << where << ": " << m.message();
    auto fs = m.value().compile({{"H", std::nullopt, {}, {X}},
                                 {"Hv", std::nullopt, {}, {X, V}},
                                 {"Hw", std::nullopt, {}, {X, V}}});
    ASSERT_TRUE(fs.ok()) << where << ": " << fs.message();
    Results r;
    std::vector<Value*> outs = {&r.h, &r.hv, &r.hw};
    for (size_t k = 0; k < outs.size(); ++k) {
      auto y = fs.value()[k].call(k == 0 ? std::vector<Value>{X} : std::vector<Value>{X, V});
      ASSERT_TRUE(y.ok()) << where << ": " << y.message();
      *outs[k] = std::move(y).value();
    }
    check_results(c, kX, kV, r, where);
  }
}

}  // namespace
}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
