// Helpers shared by the checker tests: run a module's function, compare reals with ρ, build
// vectors.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace cot::check_test {

using cotangent::DType;
using cotangent::Module;
using cotangent::Value;

// Evaluates `fn` of the module `src`; a load or evaluation error fails the test.
inline Value Eval(const std::string& src, const std::string& fn, const std::vector<Value>& args) {
  auto m = Module::from_string(src, "test.cot");
  if (!m.ok()) {
    ADD_FAILURE() << "unexpected errors:\n" << m.message();
    return Value();
  }
  auto r = m.value().evaluate(fn, args);
  if (!r.ok()) {
    ADD_FAILURE() << "evaluation failed:\n" << r.message();
    return Value();
  }
  return r.value();
}

// ρ(x, y) = |x − y| / max(1, |x| + |y|).
inline double rho(double x, double y) {
  return std::abs(x - y) / std::max(1.0, std::abs(x) + std::abs(y));
}
constexpr double kTol = 1e-14;

inline Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}

}  // namespace cot::check_test
