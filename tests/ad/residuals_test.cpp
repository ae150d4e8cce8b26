// Residuals of loops (UnzipPolicy::save_costly_values, ad/residuals.h): a reverse pass through a
// loop reads the costly values (tanh, sigmoid, sin, ...) its forward sweep computed instead of
// computing them again, so the backward pass applies none of the primal's calls, and its values
// are those of the gradient that recomputes them.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "ad/ad_test_util.h"
#include "ad/derive.h"
#include "interp/interpreter.h"
#include "opt/pipeline.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using ad_test::rho;

// The program with its derived functions, all optimized (as Module::load does, with the policy
// given): dead recomputations removed, so counts are those of the code that runs.
ir::Program derived(const std::string& src, bool save) {
  ir::Program prog = ad_test::compile(src, /*with_prelude=*/false);
  ad::DeriveOptions options;
  options.policy.save_costly_values = save;
  auto failed = ad::build_derivatives(prog, options);
  EXPECT_FALSE(failed.has_value()) << failed->message;
  auto optimized =
      opt::optimize_program(std::move(prog), {}, [](const ir::Function&) { return true; });
  if (const auto* e = std::get_if<opt::PipelineError>(&optimized)) {
    ADD_FAILURE() << e->pass << ": " << e->message;
    return {};
  }
  return std::get<ir::Program>(std::move(optimized));
}

cotangent::Value vec(size_t n, double phase) {
  auto v = cotangent::Value::zeros(cotangent::DType::F64, {static_cast<int64_t>(n)});
  for (size_t i = 0; i < n; ++i) {
    v.f64_mut()[i] = 0.4 * std::sin(phase + 1.3 * static_cast<double>(i));
  }
  return v;
}

// Evaluates fn, failing the test on an error; counts into *cost.
cotangent::Value run(const ir::Program& p, const std::string& fn,
                     const std::vector<cotangent::Value>& args, interp::CostCounts* cost) {
  auto r = interp::evaluate(p, fn, args, cost, {});
  if (const auto* d = std::get_if<Diagnostic>(&r)) {
    ADD_FAILURE() << fn << ": " << d->message;
    return cotangent::Value::f64(0.0);
  }
  return std::get<cotangent::Value>(r);
}

std::vector<double> leaves(const cotangent::Value& v) {
  std::vector<double> out;
  if (v.is_tuple()) {
    for (const auto& e : v.elems()) {
      for (double x : leaves(e)) out.push_back(x);
    }
    return out;
  }
  const auto d = v.f64_data();
  return {d.begin(), d.end()};
}

struct Case {
  const char* name;
  const char* source;
  const char* primal;
  const char* gradient;
  bool saves;  // whether the backward pass should read the loop's calls instead of applying them
};

// Each gradient is evaluated at a loop length of 0, 1, 2 and 6 iterations (n or s).
const Case kCases[] = {
    {"scalar for-loop", R"(
def rnn(w: f64, x: f64[n]) -> f64 {
  let h = loop h = 0.5 for t < n { tanh(w * h + x[t]) }
  h * h
}
def g(w: f64, x: f64[n]) -> (f64, f64[n]) { grad(rnn)(w, x) }
)",
     "rnn", "g", true},
    {"scalar while-loop", R"(
def grow(a: f64, x: f64[n]) -> f64 {
  let (s, k) = loop (s, k) = (a, 0) while k < n { (sin(s) * x[k] + a, k + 1) }
  s
}
def g(a: f64, x: f64[n]) -> (f64, f64[n]) { grad(grow)(a, x) }
)",
     "grow", "g", true},
    // The primal as the optimizer leaves it before AD: the costly values inside one fused gen,
    // which the tangent gen computes again unless they become gens of their own.
    {"fused gen", R"(
def f(w: f64, x: f64[n]) -> f64 {
  let y = loop h = x for k < n { for q. sigmoid(h[q] * w) * tanh(h[q]) + 0.1 * x[k] }
  sum q. y[q]
}
def g(w: f64, x: f64[n]) -> (f64, f64[n]) { grad(f)(w, x) }
)",
     "f", "g", true},
    // A residual of a smaller shape than the state: a row of an [n, n] state.
    {"row of a matrix state", R"(
def f(w: f64, x: f64[n]) -> f64 {
  let m0 = for i, j. x[i] * x[j]
  let y = loop m = m0 for k < n {
    let r = for j. exp(w * m[0, j])
    for i, j. 0.5 * m[i, j] + 0.1 * r[j]
  }
  sum i, j. y[i, j]
}
def g(w: f64, x: f64[n]) -> (f64, f64[n]) { grad(f)(w, x) }
)",
     "f", "g", true},
    // A value larger than every state (an [n, n] table from an [n] state) is recomputed.
    {"value larger than the state", R"(
def f(w: f64, x: f64[n]) -> f64 {
  let y = loop h = x for k < n {
    let e = for i, j. exp(w * h[i] * h[j])
    for i. sum j. 0.1 * e[i, j]
  }
  sum q. y[q]
}
def g(w: f64, x: f64[n]) -> (f64, f64[n]) { grad(f)(w, x) }
)",
     "f", "g", false},
};

TEST(AdResiduals, SameGradientsAsRecomputing) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    const ir::Program saving = derived(c.source, true);
    const ir::Program recomputing = derived(c.source, false);
    for (size_t n : {0u, 1u, 2u, 6u}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      const std::vector<cotangent::Value> args{cotangent::Value::f64(0.7), vec(n, 0.3)};
      const auto a = leaves(run(saving, c.gradient, args, nullptr));
      const auto b = leaves(run(recomputing, c.gradient, args, nullptr));
      ASSERT_EQ(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) EXPECT_LE(rho(a[i], b[i]), 1e-13) << i;
    }
  }
}

TEST(AdResiduals, GradientAppliesCallsAsOftenAsThePrimal) {
  for (const auto& c : kCases) {
    SCOPED_TRACE(c.name);
    const ir::Program saving = derived(c.source, true);
    const ir::Program recomputing = derived(c.source, false);
    for (size_t n : {1u, 6u}) {
      SCOPED_TRACE("n=" + std::to_string(n));
      const std::vector<cotangent::Value> args{cotangent::Value::f64(0.7), vec(n, 0.3)};
      interp::CostCounts primal, saved, recomputed;
      run(saving, c.primal, args, &primal);
      run(saving, c.gradient, args, &saved);
      run(recomputing, c.gradient, args, &recomputed);
      // Every call of these primals is in the loop: recomputing applies them once more
      // backward (besides derivatives that need calls of their own, such as sin's cos).
      ASSERT_GT(primal.call, 0);
      ASSERT_GE(recomputed.call, 2 * primal.call);
      EXPECT_EQ(saved.call, c.saves ? recomputed.call - primal.call : recomputed.call);
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
