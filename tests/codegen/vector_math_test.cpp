// The elementwise functions in vectorized loops (codegen/vector_math.h: glibc's libmvec under
// GCC on x86-64) agree with the interpreter's scalar functions within ρ ≤ 1e-12 for f64 and
// 1e-6 for f32, on ordinary arguments and on the IEEE special cases a vector kernel handles on a
// slow path: infinities, NaN, signed zeros, subnormals, overflow and underflow, arguments out of
// the domain, huge arguments of the trigonometric functions.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

double rho(double x, double y) {
  return std::abs(x - y) / std::max(1.0, std::abs(x) + std::abs(y));
}

std::vector<double> arguments() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> xs = {0.0,    -0.0,  inf,    -inf,   std::nan(""), 1e-310, -1e-310,
                            709.7,  710.0, -745.0, -746.0, 88.7,         89.0,   -104.0,
                            1e22,   -1e22, 1e300,  -1.0,   -1.0 + 1e-12, 1e-20,  -1e-20,
                            1.5e-5, 0.5,   1.0,    2.0,    3.14159,      -7.25,  20.0};
  // Ordinary arguments: the loops run in vector lanes from 256 iterations (kLongLoop).
  for (int k = 0; k < 300; ++k) xs.push_back(-9.0 + 0.061 * k);
  return xs;
}

Value tensor_of(const std::vector<double>& xs, DType t) {
  Value v = Value::zeros(t, {static_cast<int64_t>(xs.size())});
  for (size_t k = 0; k < xs.size(); ++k) {
    if (t == DType::F64) {
      v.f64_mut()[k] = xs[k];
    } else {
      v.f32_mut()[k] = static_cast<float>(xs[k]);
    }
  }
  return v;
}

double element(const Value& v, size_t k) {
  return v.dtype() == DType::F64 ? v.f64_data()[k] : static_cast<double>(v.f32_data()[k]);
}

// Compares two results element by element: NaN where the other is NaN, infinities equal.
void expect_close(const Value& got, const Value& want, double tol, const std::string& what,
                  const std::vector<double>& xs) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  for (size_t k = 0; k < xs.size(); ++k) {
    const double g = element(got, k), w = element(want, k);
    if (std::isnan(w) || std::isnan(g)) {
      EXPECT_TRUE(std::isnan(w) && std::isnan(g))
          << what << " at x = " << xs[k] << ": " << g << " vs " << w;
    } else if (std::isinf(w) || std::isinf(g)) {
      EXPECT_EQ(g, w) << what << " at x = " << xs[k];
    } else {
      EXPECT_LE(rho(g, w), tol) << what << " at x = " << xs[k] << ": " << g << " vs " << w;
    }
  }
}

TEST(NativeVectorMath, functions_in_vectorized_loops_agree_with_the_interpreter) {
  const std::vector<std::string> unary = {"exp",  "log",   "sin",   "cos",     "tan",
                                          "tanh", "log1p", "expm1", "sigmoid", "sqrt"};
  const std::vector<double> xs = arguments();
  std::vector<double> ys;  // second arguments of pow and atan2
  for (size_t k = 0; k < xs.size(); ++k) ys.push_back(k % 3 == 0 ? 0.5 : k % 3 == 1 ? -2.0 : 3.0);
  for (const char* elem : {"f64", "f32"}) {
    const DType t = std::string(elem) == "f64" ? DType::F64 : DType::F32;
    const double tol = t == DType::F64 ? 1e-12 : 1e-6;
    std::string src;
    for (const std::string& f : unary) {
      src +=
          "def " + f + "_all(x: " + elem + "[n]) -> " + elem + "[n] { for i. " + f + "(x[i]) }\n";
    }
    src += std::string("def pow_all(x: ") + elem + "[n], y: " + elem + "[n]) -> " + elem +
           "[n] { for i. pow(abs(x[i]), y[i]) }\n";
    src += std::string("def atan2_all(x: ") + elem + "[n], y: " + elem + "[n]) -> " + elem +
           "[n] { for i. atan2(y[i], x[i]) }\n";
    auto m = Module::from_string(src, "vector_math.cot");
    ASSERT_TRUE(m.ok()) << m.message();
    const Value x = tensor_of(xs, t), y = tensor_of(ys, t);
    std::vector<CompileRequest> requests;
    std::vector<std::string> names;
    for (const std::string& f : unary) {
      requests.push_back({f + "_all", std::nullopt, {}, {x}});
      names.push_back(f + "_all");
    }
    for (const char* f : {"pow_all", "atan2_all"}) {
      requests.push_back({f, std::nullopt, {}, {x, y}});
      names.emplace_back(f);
    }
    auto compiled = m.value().compile(requests, CompileOptions{1, 0, {}});
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    for (size_t k = 0; k < names.size(); ++k) {
      std::vector<Value> args = {x};
      if (names[k] == "pow_all" || names[k] == "atan2_all") args.push_back(y);
      auto want = m.value().evaluate(names[k], args);
      ASSERT_TRUE(want.ok()) << want.message();
      auto got = compiled.value()[k].call(args);
      ASSERT_TRUE(got.ok()) << got.message();
      expect_close(got.value(), want.value(), tol, names[k] + " " + elem, xs);
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
