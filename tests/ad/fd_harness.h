// Finite-difference oracle for the automatic-differentiation acceptance tests (tests/ad).
//
// Everything here goes through the public API only: a function of a Module is evaluated at
// perturbed arguments and its Jacobian is estimated by central differences, with a relative
// step h = rel_step * max(1, |x|) (rel_step = 1e-6 for f64) and Richardson extrapolation of
// the estimates at h and h / 2. Values are compared with
//   ρ(x, y) = |x − y| / max(1, |x| + |y|),
// at kFdTol = 1e-6 for comparisons with finite differences.
//
// "Real elements" of a value are its f64 and f32 scalars, flattened row-major, tuples in
// order; i64 and bool elements are not differentiable and are skipped. A Jacobian's columns
// are the real elements of the active arguments, in the order of `active`; its rows are the
// real elements of the result.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "cotangent/cotangent.h"
#include "cotangent/io.h"

namespace cotangent::adtest {

// Tolerance of comparisons with finite differences, in ρ.
inline constexpr double kFdTol = 1e-6;
// Tolerance of comparisons with closed forms computed in double precision.
inline constexpr double kExactTol = 1e-10;

double rho(double x, double y);

bool is_real(DType t);
// f64/f32 scalars and tensors, and tuples of them only.
bool kind_is_real(const ValueKind& k);

int64_t real_count(const Value& v);
std::vector<double> real_elements(const Value& v);
// `like` with its real elements replaced by xs[*pos], xs[*pos + 1], ... (f32 rounded).
Value with_real_elements(const Value& like, const std::vector<double>& xs, size_t* pos);
Value with_real_elements(const Value& like, const std::vector<double>& xs);

// Builders.
Value f64_tensor(std::vector<int64_t> shape, const std::vector<double>& data);
Value f64_vector(const std::vector<double>& data);
Value f64_matrix(const std::vector<std::vector<double>>& rows);
Value f32_vector(const std::vector<double>& data);
Value i64_vector(const std::vector<int64_t>& data);
// A value shaped like `like` whose real elements are uniform in [lo, hi); other elements are
// copied from `like`.
Value random_like(const Value& like, std::mt19937_64& rng, double lo = -1.0, double hi = 1.0);
std::vector<double> random_reals(size_t n, std::mt19937_64& rng, double lo = -1.0, double hi = 1.0);

// ---------------------------------------------------------------------------------------------
// Types as spelled by FunctionInfo ("f64[n, m]", "(f64[n], i64)").

struct TypeSpec {
  bool is_tuple = false;
  DType dtype = DType::F64;
  std::vector<std::string> dims;  // size expressions as written
  std::vector<TypeSpec> elems;
  bool all_real() const;
  bool is_scalar() const { return !is_tuple && dims.empty(); }
  std::string to_string() const;
};
// Parses a type string; false with *why set when it cannot.
bool parse_type(std::string_view text, TypeSpec* out, std::string* why = nullptr);
// Evaluates a size expression (+ - * / and parentheses over integers and size variables).
// False when a variable is unknown, a division is inexact, or the text does not parse.
bool eval_size(std::string_view text, const std::map<std::string, int64_t>& vars, int64_t* out);

// Random arguments for a function's parameters: size variables not given in `sizes` are drawn
// from [size_lo, size_hi] (redrawn when a size expression does not divide), reals are uniform in
// [lo, hi), i64 values uniform in [0, 2], bools fair coins. `sizes` receives the sizes chosen.
struct RandomArgOptions {
  int64_t size_lo = 3;
  int64_t size_hi = 5;
  double lo = -1.0;
  double hi = 1.0;
};
Result<std::vector<Value>> random_arguments(const FunctionInfo& info, std::mt19937_64& rng,
                                            std::map<std::string, int64_t>* sizes = nullptr,
                                            const RandomArgOptions& opt = {});

// ---------------------------------------------------------------------------------------------
// Finite differences.

struct FdOptions {
  double rel_step = 1e-6;  // f64; f32 arguments use f32_rel_step
  double f32_rel_step = 1e-2;
  bool richardson = true;   // combine the estimates at h and h / 2 (f64 only)
  int64_t max_columns = 0;  // 0: every column; else an evenly spaced subset of this many
  EvalOptions eval{100000};
};

struct FdJacobian {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> data;    // rows x cols, row-major; NaN in columns not computed
  std::vector<bool> computed;  // per column
  std::vector<double> value;   // real elements of f at the base point
  Value result;                // f at the base point
  // max over entries of ρ(estimate at h, estimate at h / 2): large near kinks and poles,
  // where a finite difference says nothing about the derivative.
  double inconsistency = 0;
  bool finite = true;  // value and every estimate finite

  double at(int64_t r, int64_t c) const { return data[static_cast<size_t>(r * cols + c)]; }
  std::vector<double> row(int64_t r) const;
  // J t (t has cols entries; columns not computed must have t = 0) and Jᵀ c.
  std::vector<double> times(const std::vector<double>& t) const;
  std::vector<double> transpose_times(const std::vector<double>& c) const;
};

// The Jacobian of `fn` at `args` with respect to the real elements of args[active[0]], ...
Result<FdJacobian> fd_jacobian(const Module& m, const std::string& fn,
                               const std::vector<Value>& args, const std::vector<int>& active,
                               const FdOptions& opt = {});

// Central differences of a C++ function (for closed forms of second derivatives).
double fd_scalar(const std::function<double(double)>& f, double x, double rel_step = 1e-5);

// ---------------------------------------------------------------------------------------------
// Comparisons. Non-finite values must match exactly (inf with inf of the same sign, NaN with
// NaN). Columns marked in `mask` (when given) are the only ones compared.

std::string compare_reals(const std::vector<double>& got, const std::vector<double>& want,
                          double tol, const std::vector<bool>* mask = nullptr);
::testing::AssertionResult RealsNear(const std::vector<double>& got,
                                     const std::vector<double>& want, double tol);
::testing::AssertionResult ValueNear(const Value& got, const std::vector<double>& want, double tol);
// Same type string and real elements within tol; other elements equal.
::testing::AssertionResult ValuesNear(const Value& got, const Value& want, double tol);

// ---------------------------------------------------------------------------------------------
// Checks used by the example tests.

// Module::from_string; callers ASSERT_TRUE(m.ok()) << m.message().
Result<Module> load(std::string_view source, const std::string& name);

// Evaluates `derived` (a function whose body applies a derivative operator) and compares its
// real elements with `expected`.
::testing::AssertionResult DerivedEquals(const Module& m, const std::string& derived,
                                         const std::vector<Value>& args,
                                         const std::vector<double>& expected,
                                         double tol = kExactTol);
// The gradient of scalar `fn` w.r.t. args[active...] by finite differences equals `expected`
// (checks the test's own closed form, independently of AD).
::testing::AssertionResult FdGradientEquals(const Module& m, const std::string& fn,
                                            const std::vector<Value>& args,
                                            const std::vector<int>& active,
                                            const std::vector<double>& expected,
                                            double tol = kFdTol);
// `derived` evaluated at args equals the finite-difference gradient (scalar fn) or Jacobian,
// flattened row-major (jacobian layout: result index major), of `fn` w.r.t. active.
::testing::AssertionResult DerivedMatchesFd(const Module& m, const std::string& derived,
                                            const std::string& fn, const std::vector<Value>& args,
                                            const std::vector<int>& active, double tol = kFdTol);

std::string to_text(const std::vector<double>& xs);

// In a test body: loads `primal` (checked alone, for the finite-difference side, which needs no
// AD) as `P` and `primal + derived` (the derivative operators) as `M`.
#define AD_LOAD_EXAMPLE(primal, derived)                                                      \
  auto ad_primal_ = ::cotangent::adtest::load(primal, "primal.cot");                          \
  ASSERT_TRUE(ad_primal_.ok()) << ad_primal_.message();                                       \
  auto ad_derived_ = ::cotangent::adtest::load(std::string(primal) + derived, "derived.cot"); \
  ASSERT_TRUE(ad_derived_.ok()) << ad_derived_.message();                                     \
  const ::cotangent::Module& P = ad_primal_.value();                                          \
  const ::cotangent::Module& M = ad_derived_.value();                                         \
  (void)P;                                                                                    \
  (void)M

}  // namespace cotangent::adtest
