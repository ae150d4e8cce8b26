// Helpers shared by the optimizer's tests: run one pass on a checked program, verify the IR and
// the pass's postcondition, and compare values and costs before and after it.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "ad/ad_test_util.h"
#include "cotangent/cotangent.h"
#include "cotangent/value.h"
#include "interp/interpreter.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "opt/pass.h"

namespace cot::opt_test {

using ad_test::compile;
using ad_test::rho;

// `program` with function `fn` replaced by pass(program, fn). The result must verify and satisfy
// `post` (when given), and a pass that reports no change must return `fn` as it was (printed
// alike, as the pipeline's check_change_reports tests it); failures are reported as test
// failures.
inline ir::Program run_pass(const ir::Program& program, const std::string& fn, opt::PassFn pass,
                            opt::PostconditionFn post = nullptr) {
  ir::Program out = program;
  const ir::Function* f = program.find(fn);
  if (f == nullptr) {
    ADD_FAILURE() << "no function " << fn;
    return out;
  }
  opt::PassResult r = pass(program, *f);
  if (!r.changed && ir::print_function(program, r.function) != ir::print_function(program, *f)) {
    ADD_FAILURE() << "the pass reported no change, but " << fn << " became\n"
                  << ir::print_function(program, r.function);
  }
  *out.find(fn) = std::move(r.function);
  for (const auto& e : ir::verify_function(out, *out.find(fn))) {
    ADD_FAILURE() << "verifier: " << e.message << "\n" << ir::print_function(out, *out.find(fn));
  }
  if (post != nullptr) {
    if (auto broken = post(out, *out.find(fn))) {
      ADD_FAILURE() << "postcondition: " << *broken << "\n"
                    << ir::print_function(out, *out.find(fn));
    }
  }
  return out;
}

// How many times `what` occurs in `text` (overlapping occurrences count).
inline int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// An f64 vector.
inline cotangent::Value vec(const std::vector<double>& xs) {
  cotangent::Value v = cotangent::Value::zeros(cotangent::DType::F64, {int64_t(xs.size())});
  for (size_t k = 0; k < xs.size(); ++k) v.f64_mut()[k] = xs[k];
  return v;
}

// An f64 vector of n values on a parabola (distinct, of both signs for n > 6).
inline cotangent::Value curve(int n) {
  std::vector<double> xs;
  for (int k = 0; k < n; ++k) xs.push_back(0.5 + 0.25 * k - 0.1 * k * k);
  return vec(xs);
}

// The f64 vector of length 0.
inline cotangent::Value empty_vector() {
  return cotangent::Value::zeros(cotangent::DType::F64, {0});
}

// An f64 tensor of `shape` with distinct, deterministic entries (a pattern of period 7 scaled by
// `seed`, on a slope).
inline cotangent::Value tensor(std::vector<int64_t> shape, double seed) {
  cotangent::Value v = cotangent::Value::zeros(cotangent::DType::F64, std::move(shape));
  for (int64_t k = 0; k < v.numel(); ++k) {
    v.f64_mut()[static_cast<size_t>(k)] = seed * static_cast<double>(k % 7) - 0.0625 * k + 0.5;
  }
  return v;
}

inline std::string printed(const ir::Program& p, const std::string& fn) {
  const ir::Function* f = p.find(fn);
  return f == nullptr ? std::string("<no function " + fn + ">") : ir::print_function(p, *f);
}

// Every number in a value, flattened (tuples in order).
inline void flatten(const cotangent::Value& v, std::vector<double>& out) {
  if (v.is_tuple()) {
    for (const auto& e : v.elems()) flatten(e, out);
    return;
  }
  for (int64_t k = 0; k < v.numel(); ++k) out.push_back(v.element_as_f64(k));
}

struct Run {
  bool ok = false;
  std::string error;
  std::vector<double> values;
  int64_t ops = 0;
};

inline Run run(const ir::Program& p, const std::string& fn,
               const std::vector<cotangent::Value>& args) {
  interp::CostCounts cost;
  auto r = interp::evaluate(p, fn, args, &cost);
  Run out;
  if (auto* d = std::get_if<Diagnostic>(&r)) {
    out.error = d->message;
    return out;
  }
  out.ok = true;
  flatten(std::get<cotangent::Value>(r), out.values);
  out.ops = cost.total();
  return out;
}

// Evaluates `fn` in both programs: the values must agree within ρ ≤ tol (NaN matches NaN, an
// infinity itself) and
// the optimized program must not cost more operations than the original.
inline void expect_same_values(const ir::Program& before, const ir::Program& after,
                               const std::string& fn, const std::vector<cotangent::Value>& args,
                               double tol = 1e-12) {
  Run a = run(before, fn, args), b = run(after, fn, args);
  ASSERT_TRUE(a.ok) << "before: " << a.error;
  ASSERT_TRUE(b.ok) << "after: " << b.error << "\n" << printed(after, fn);
  ASSERT_EQ(a.values.size(), b.values.size());
  for (size_t k = 0; k < a.values.size(); ++k) {
    if (std::isnan(a.values[k]) && std::isnan(b.values[k])) continue;
    if (a.values[k] == b.values[k]) continue;  // equal infinities, where ρ is NaN
    EXPECT_LE(rho(a.values[k], b.values[k]), tol)
        << "element " << k << ": " << a.values[k] << " vs " << b.values[k] << "\n"
        << printed(after, fn);
  }
  EXPECT_LE(b.ops, a.ops) << "the pass made " << fn << " cost more\n" << printed(after, fn);
}

// The value and gradient of `fn` in two modules (two optimization levels) agree within ρ ≤ tol
// (NaN matches NaN, an infinity itself).
inline void expect_same_value_and_grad(const cotangent::Module& m_a, const cotangent::Module& m_b,
                                       const std::string& fn,
                                       const std::vector<cotangent::Value>& args,
                                       double tol = 1e-12) {
  auto a = m_a.value_and_grad(fn, args);
  auto b = m_b.value_and_grad(fn, args);
  ASSERT_TRUE(a.ok()) << fn << ": " << a.message();
  ASSERT_TRUE(b.ok()) << fn << ": " << b.message();
  std::vector<double> va, vb;
  flatten(a.value().value, va);
  flatten(b.value().value, vb);
  for (const auto& g : a.value().grad) flatten(g.value, va);
  for (const auto& g : b.value().grad) flatten(g.value, vb);
  ASSERT_EQ(va.size(), vb.size()) << fn;
  for (size_t k = 0; k < va.size(); ++k) {
    if ((std::isnan(va[k]) && std::isnan(vb[k])) || va[k] == vb[k]) continue;
    EXPECT_LE(rho(va[k], vb[k]), tol) << fn << " element " << k << ": " << va[k] << " vs " << vb[k];
  }
}

}  // namespace cot::opt_test
