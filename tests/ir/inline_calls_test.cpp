// Inlining (src/ad/inline.h): programs are checked from source, a function is inlined, the
// result must verify, contain no call, and compute the same values as the original under the
// reference interpreter (ρ ≤ 1e-12), which the tests also compare with values computed by hand.
#include "ir/inline_calls.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "ad/ad_test_util.h"
#include "check/checker.h"
#include "cotangent/value.h"
#include "interp/interpreter.h"
#include "ir/printer.h"
#include "ir/uses.h"
#include "ir/verifier.h"
#include "syntax/parser.h"

namespace cot::ad {
namespace COTANGENT_TEST_UNIT {

using cotangent::DType;
using cotangent::Value;

constexpr double kTol = 1e-12;

using ad_test::compile;
using ad_test::rho;

// Calls `fn` for every statement of `b`, nested regions included.
void for_each_stmt(const ir::Block& b, const std::function<void(const ir::Stmt&)>& fn) {
  for (const auto& s : b.stmts) {
    fn(s);
    std::visit(
        [&](const auto& op) {
          using T = std::decay_t<decltype(op)>;
          if constexpr (std::is_same_v<T, ir::GenOp> || std::is_same_v<T, ir::ReduceOp> ||
                        std::is_same_v<T, ir::GuardOp> || std::is_same_v<T, ir::AccumOp>) {
            for_each_stmt(op.body, fn);
          } else if constexpr (std::is_same_v<T, ir::LoopOp>) {
            for_each_stmt(op.cond, fn);
            for_each_stmt(op.body, fn);
          } else if constexpr (std::is_same_v<T, ir::IfOp>) {
            for_each_stmt(op.then_branch, fn);
            for_each_stmt(op.else_branch, fn);
          }
        },
        s.op);
  }
}

int count_calls(const ir::Block& b) {
  int n = 0;
  ir::for_each_call(b, [&](const std::string&) { ++n; });
  return n;
}

std::string errors_of(const std::vector<ir::VerifyError>& es) {
  std::string out;
  for (const auto& e : es) out += e.function + ": " + e.message + "\n";
  return out;
}

// The program with `fn` replaced by its inlined form, which must verify and call nothing.
ir::Program inlined(const ir::Program& p, const std::string& fn) {
  ir::Program q = p;
  ir::Function f = ir::inline_calls(p, fn);
  EXPECT_EQ(count_calls(f.body), 0) << ir::print_function(p, f);
  ir::Function* slot = q.find(fn);
  EXPECT_NE(slot, nullptr);
  if (slot != nullptr) *slot = std::move(f);
  auto errors = ir::verify(q);
  EXPECT_TRUE(errors.empty()) << errors_of(errors) << ir::print_function(q, *q.find(fn));
  return q;
}

Value eval(const ir::Program& p, const std::string& fn, const std::vector<Value>& args) {
  auto r = interp::evaluate(p, fn, args);
  if (r.index() != 0) {
    ADD_FAILURE() << "evaluation of " << fn << " failed: " << std::get<1>(r).message;
    return Value();
  }
  return std::get<0>(r);
}

// Every element of two values agrees within kTol, and their structure is the same.
void expect_same(const Value& a, const Value& b, const std::string& where = "") {
  ASSERT_EQ(a.is_tuple(), b.is_tuple()) << where;
  if (a.is_tuple()) {
    ASSERT_EQ(a.elems().size(), b.elems().size()) << where;
    for (size_t k = 0; k < a.elems().size(); ++k) {
      expect_same(a.elems()[k], b.elems()[k], where + "." + std::to_string(k));
    }
    return;
  }
  ASSERT_EQ(a.dtype(), b.dtype()) << where;
  ASSERT_EQ(a.shape(), b.shape()) << where;
  for (int64_t k = 0; k < a.numel(); ++k) {
    EXPECT_LE(rho(a.element_as_f64(k), b.element_as_f64(k)), kTol)
        << where << "[" << k << "]: " << a.element_as_f64(k) << " vs " << b.element_as_f64(k);
  }
}

// Evaluates `fn` before and after inlining, checks they agree, and returns the inlined value.
Value check_inlining(const std::string& src, const std::string& fn,
                     const std::vector<Value>& args) {
  ir::Program p = compile(src);
  if (p.functions.empty()) return Value();
  Value before = eval(p, fn, args);
  ir::Program q = inlined(p, fn);
  Value after = eval(q, fn, args);
  expect_same(after, before, fn);
  return after;
}

Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}
Value mat(int64_t rows, int64_t cols, const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {rows, cols});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}
std::vector<double> elems(const Value& v) {
  std::vector<double> out;
  for (int64_t k = 0; k < v.numel(); ++k) out.push_back(v.element_as_f64(k));
  return out;
}
void expect_near(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_LE(rho(got[k], want[k]), kTol) << "element " << k << ": " << got[k] << " vs " << want[k];
  }
}

double logsumexp(const std::vector<double>& x) {
  double m = *std::max_element(x.begin(), x.end());
  double s = 0;
  for (double v : x) s += std::exp(v - m);
  return m + std::log(s);
}

TEST(Inline, PreludeMatmulSoftmaxLogsumexp) {
  const std::string src =
      "def f(A: f64[m, k], B: f64[k, n]) -> f64[m] {\n"
      "  let C = matmul(A, B)\n"
      "  let P = for i. softmax(C[i])\n"
      "  for i. logsumexp(P[i]) + logsumexp(C[i])\n"
      "}\n";
  const std::vector<double> a{0.5, -1.0, 2.0, 0.25, 1.5, -0.75};  // 2 x 3
  const std::vector<double> b{1.0, 0.5, -2.0, 0.0, 3.0, -1.0};    // 3 x 2
  Value r = check_inlining(src, "f", {mat(2, 3, a), mat(3, 2, b)});
  std::vector<double> want;
  for (int i = 0; i < 2; ++i) {
    std::vector<double> c(2, 0.0);
    for (int j = 0; j < 2; ++j) {
      for (int l = 0; l < 3; ++l) c[j] += a[i * 3 + l] * b[l * 2 + j];
    }
    const double lse = logsumexp(c);
    std::vector<double> p{std::exp(c[0] - lse), std::exp(c[1] - lse)};
    want.push_back(logsumexp(p) + lse);
  }
  expect_near(elems(r), want);
}

TEST(Inline, NestedThreeDeep) {
  const std::string src =
      "def a(x: f64[n]) -> f64 { sum i. x[i] * x[i] }\n"
      "def b(x: f64[n]) -> f64 { a(x) + 1.0 }\n"
      "def c(x: f64[n], y: f64) -> f64 { b(x) * y }\n"
      "def top(x: f64[n]) -> f64 { c(x, 2.0) + c(x, a(x)) }\n";
  Value r = check_inlining(src, "top", {vec({1.0, 2.0, 3.0})});
  // a = 14, b = 15: 15 * 2 + 15 * 14.
  EXPECT_LE(rho(r.as_f64(), 240.0), kTol);
}

TEST(Inline, SizeVariablesAtDifferentSizes) {
  const std::string src =
      "def f(x: f64[n]) -> f64 { f64(n) * sum i. x[i] }\n"
      "def pad(x: f64[n]) -> f64[n + 1] { for i: n + 1. [i < n] * x[i] + f64(n) }\n"
      "def g(x: f64[m], y: f64[2]) -> f64 {\n"
      "  let p = pad(x)\n"
      "  let q = pad(pad(y))\n"
      "  f(x) + 10.0 * f(y) + 100.0 * f(p) + 1000.0 * f(q)\n"
      "}\n";
  ir::Program p = compile(src);
  ir::Program q = inlined(p, "g");
  // The size variable n of f is bound by SizeOps over g's sizes: m, 2, m + 1, 4.
  std::vector<std::string> sizes;
  for (const auto& s : q.find("g")->body.stmts) {
    if (const auto* z = s.as<ir::SizeOp>()) sizes.push_back(z->size.to_string());
  }
  EXPECT_NE(std::find(sizes.begin(), sizes.end(), "m"), sizes.end());
  EXPECT_NE(std::find(sizes.begin(), sizes.end(), "2"), sizes.end());
  EXPECT_NE(std::find(sizes.begin(), sizes.end(), "m + 1"), sizes.end());
  EXPECT_NE(std::find(sizes.begin(), sizes.end(), "3"), sizes.end());
  EXPECT_EQ(q.find("g")->size_vars.size(), 1u);

  const std::vector<double> x{1.0, 2.0, 3.0}, y{0.5, -1.5};
  Value r = check_inlining(src, "g", {vec(x), vec(y)});
  // f(x) = 3 * 6; f(y) = 2 * -1; pad(x) = (4, 5, 6, 3), f = 4 * 18;
  // pad(y) = (2.5, 0.5, 2), pad(pad(y)) = (5.5, 3.5, 5, 3), f = 4 * 17.
  EXPECT_LE(rho(r.as_f64(), 18.0 - 20.0 + 7200.0 + 68000.0), kTol);
}

TEST(Inline, CallsInsideRegions) {
  const std::string src =
      "def sq(x: f64) -> f64 { x * x }\n"
      "def h(x: f64[n], k: i64) -> f64 {\n"
      "  let g = for i. sq(x[i])\n"
      "  let s = sum i. sq(g[i])\n"
      "  let w = [s > 1.0] * sq(s)\n"
      "  let v = sum i. [i < k] * sq(x[i])\n"
      "  let u = if s > 2.0 then sq(w) else sq(v)\n"
      "  let l = loop p = 1.0 for t < n { 0.5 * p + sq(x[t]) }\n"
      "  let (c, _) = loop (q, j) = (0.0, 0) while j < k { (q + sq(x[j]), j + 1) }\n"
      "  u / 1e6 + v + l + c\n"
      "}\n";
  const std::vector<double> x{1.0, -2.0, 0.5};
  Value r = check_inlining(src, "h", {vec(x), Value::i64(2)});
  double s = 0, v = 0, l = 1.0, c = 0;
  for (double e : x) s += e * e * e * e;
  double w = s > 1.0 ? s * s : 0.0;
  for (int i = 0; i < 2; ++i) v += x[i] * x[i];
  double u = s > 2.0 ? w * w : v * v;
  for (double e : x) l = 0.5 * l + e * e;
  for (int j = 0; j < 2; ++j) c += x[j] * x[j];
  EXPECT_LE(rho(r.as_f64(), u / 1e6 + v + l + c), kTol);
}

TEST(Inline, TupleResultsAndTupleParameters) {
  const std::string src =
      "def spread(x: f64[n]) -> (f64, f64[n]) { let lo = min i. x[i]; (lo, for i. x[i] - lo) }\n"
      "def scaled(p: (f64, f64[n])) -> f64 { let (s, v) = p; s * sum i. v[i] * f64(n) }\n"
      "def top(x: f64[m]) -> (f64, f64[m], f64) {\n"
      "  let (lo, shifted) = spread(x)\n"
      "  (lo, shifted, scaled(spread(shifted)) + scaled((2.0, x)))\n"
      "}\n";
  const std::vector<double> x{3.0, 1.0, 4.0, 1.5};
  Value r = check_inlining(src, "top", {vec(x)});
  ASSERT_TRUE(r.is_tuple());
  ASSERT_EQ(r.elems().size(), 3u);
  EXPECT_LE(rho(r.elems()[0].as_f64(), 1.0), kTol);
  expect_near(elems(r.elems()[1]), {2.0, 0.0, 3.0, 0.5});
  // spread(shifted) = (0, shifted): scaled = 0; scaled((2, x)) = 2 * 9.5 * 4.
  EXPECT_LE(rho(r.elems()[2].as_f64(), 76.0), kTol);
}

TEST(Inline, SizeVariableInAffineIndex) {
  const std::string src =
      "def rev(x: f64[n]) -> f64[n] { for i: n. x[n - 1 - i] }\n"
      "def r(y: f64[m], z: f64[3]) -> f64[m] {\n"
      "  let a = rev(z)\n"
      "  for i. rev(y)[i] + 10.0 * rev(rev(y))[i] + 100.0 * a[0]\n"
      "}\n";
  ir::Program p = compile(src);
  ir::Program q = inlined(p, "r");
  // The reads stay affine: the SizeOp's variable takes the place of n.
  int affine_reads = 0;
  for_each_stmt(q.find("r")->body, [&](const ir::Stmt& s) {
    if (const auto* x = s.as<ir::IndexOp>()) {
      for (const auto& e : x->indices) {
        EXPECT_TRUE(e.is_affine);
        affine_reads += e.is_affine && !e.affine.is_constant() ? 1 : 0;
      }
    }
  });
  EXPECT_GE(affine_reads, 4);
  Value v = check_inlining(src, "r", {vec({1.0, 2.0, 3.0, 4.0}), vec({7.0, 8.0, 9.0})});
  expect_near(elems(v), {914.0, 923.0, 932.0, 941.0});
}

TEST(Inline, LiteralArgumentsFoldIntoPredicates) {
  const std::string src =
      "def at(x: f64[n], k: i64) -> f64 { x[k + 1] + x[n - 1 - k] }\n"
      "def gate(b: bool, k: i64, x: f64) -> f64 { [b] * [k > 2] * x + 1.0 }\n"
      "def top(x: f64[n]) -> f64 {\n"
      "  at(x, 0) + 10.0 * at(x, 1) + 100.0 * gate(true, 3, x[0]) + 1000.0 * gate(false, 3, 1.0) "
      "+\n"
      "    10000.0 * gate(true, 1, 1.0)\n"
      "}\n";
  ir::Program p = compile(src);
  ir::Program q = inlined(p, "top");
  // The literal booleans fold into the guards' predicates: [true] and [false] become constant
  // predicates instead of reads of a variable. (The checker computes i64 parameters such as k
  // as values, so the indices are computed either way.)
  int constant_guards = 0;
  for_each_stmt(q.find("top")->body, [&](const ir::Stmt& s) {
    if (const auto* g = s.as<ir::GuardOp>()) {
      std::vector<int32_t> vs;
      g->pred.collect_vars(vs);
      constant_guards += vs.empty() ? 1 : 0;
    }
  });
  EXPECT_EQ(constant_guards, 3);
  Value r = check_inlining(src, "top", {vec({1.0, 2.0, 3.0, 4.0})});
  // at(x, 0) = x[1] + x[3] = 6; at(x, 1) = x[2] + x[2] = 6; gate(true, 3, 1) = 2;
  // gate(false, 3, 1) = 1; gate(true, 1, 1) = 1.
  EXPECT_LE(rho(r.as_f64(), 6.0 + 60.0 + 200.0 + 1000.0 + 10000.0), kTol);
}

TEST(Inline, RuntimeErrorsPointIntoTheCallee) {
  const std::string src =
      "def get(x: f64[n], k: i64) -> f64 { x[k] }\n"
      "def top(x: f64[n], k: i64) -> f64 { 2.0 * get(x, k + 1) }\n";
  ir::Program p = compile(src);
  ir::Program q = inlined(p, "top");
  auto before = interp::evaluate(p, "top", {vec({1.0, 2.0}), Value::i64(1)});
  auto after = interp::evaluate(q, "top", {vec({1.0, 2.0}), Value::i64(1)});
  ASSERT_EQ(before.index(), 1u);
  ASSERT_EQ(after.index(), 1u);
  const Span want = std::get<1>(before).span;
  const Span got = std::get<1>(after).span;
  EXPECT_EQ(got.file, want.file);
  EXPECT_EQ(got.begin, want.begin);
  EXPECT_EQ(got.end, want.end);
  // The span is inside get's definition (the first line).
  EXPECT_LT(got.begin, src.find('\n'));
  EXPECT_LE(rho(eval(q, "top", {vec({1.0, 2.0}), Value::i64(0)}).as_f64(), 4.0), kTol);
}

TEST(Inline, KeepsTheSignature) {
  const std::string src =
      "def f(x: f64[n], A: f64[n, m]) -> f64[m] { for j. dot(x, for i. A[i, j]) }\n";
  ir::Program p = compile(src);
  ir::Function f = ir::inline_calls(p, "f");
  const ir::Function& orig = *p.find("f");
  EXPECT_EQ(f.name, "f");
  EXPECT_EQ(f.result_type, orig.result_type);
  ASSERT_EQ(f.params.size(), orig.params.size());
  for (size_t i = 0; i < f.params.size(); ++i) EXPECT_EQ(f.param_type(i), orig.param_type(i));
  ASSERT_EQ(f.size_vars.size(), orig.size_vars.size());
  for (size_t k = 0; k < f.size_vars.size(); ++k) {
    EXPECT_EQ(f.size_vars[k].name, orig.size_vars[k].name);
    EXPECT_EQ(f.size_vars[k].param, orig.size_vars[k].param);
    EXPECT_EQ(f.size_vars[k].dim, orig.size_vars[k].dim);
  }
  Value r = check_inlining(src, "f", {vec({1.0, 2.0}), mat(2, 3, {1, 2, 3, 4, 5, 6})});
  expect_near(elems(r), {9.0, 12.0, 15.0});
}

TEST(Inline, DerivedFunctionWithoutBodyIsABug) {
  const std::string src =
      "def f(x: f64) -> f64 { x * x }\n"
      "def g(x: f64) -> f64 { grad(f, x)(x) }\n";
  ir::Program p = compile(src);
  // Whatever the AD stage has built, a derived function with an empty body cannot be inlined.
  for (auto& fn : p.functions) {
    if (fn.derivation) fn.body = ir::Block{};
  }
  EXPECT_THROW(ir::inline_calls(p, "g"), std::logic_error);
  EXPECT_THROW(ir::inline_calls(p, "no_such_function"), std::logic_error);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::ad
