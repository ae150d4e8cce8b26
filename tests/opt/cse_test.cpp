// Common-subexpression elimination (src/opt/cse.h): golden forms, values and op counts before
// and after, and the cases that must stay apart.
#include "opt/cse.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "opt/inline.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::DType;
using cotangent::Value;
using opt_test::compile;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;
using opt_test::run_pass;

using opt_test::vec;

Value mat(int64_t n, double seed) {
  Value v = Value::zeros(DType::F64, {n, n});
  for (int64_t k = 0; k < n * n; ++k) {
    v.f64_mut()[static_cast<size_t>(k)] = seed * static_cast<double>(k % 7) - 0.25 * k;
  }
  return v;
}

ir::Program cse(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::eliminate_common_subexpressions, opt::cse_postcondition);
}

// How many times `needle` occurs in `hay`.
using opt_test::count;

TEST(OptCse, ThreeTracesAfterInliningAreOneSum) {
  auto p = compile("def f(A: f64[n, n]) -> f64 { trace(A) + trace(A) + trace(A) }\n");
  auto inlined = run_pass(p, "f", opt::inline_functions, opt::no_inlinable_calls);
  auto q = cse(inlined, "f");
  EXPECT_EQ(printed(q, "f"), R"(def f(A: f64[n, n]) -> f64 {
  let t4 = sum i: n. {
    let t3 = A[i, i]
    t3
  }
  let t8 = t4 + t4
  let t12 = t8 + t4
  t12
}
)");
  for (int64_t n : {1, 3, 6}) {
    expect_same_values(inlined, q, "f", {mat(n, 0.5)});
    // Three sums of n terms cost 3 (n - 1) + 2; one costs n - 1 + 2.
    EXPECT_EQ(run(inlined, "f", {mat(n, 0.5)}).ops, 3 * (n - 1) + 2);
    EXPECT_EQ(run(q, "f", {mat(n, 0.5)}).ops, (n - 1) + 2);
  }
  // The input had the redundancy the postcondition looks for.
  EXPECT_TRUE(opt::cse_postcondition(inlined, *inlined.find("f")).has_value());
}

TEST(OptCse, AlphaEquivalentAndCommutedRegionsMerge) {
  auto p = compile(R"(
def g(x: f64[n], y: f64[n]) -> f64 {
  (sum i. x[i] * y[i]) * (sum k. y[k] * x[k]) + exp(x[0]) * exp(x[0])
}
)");
  auto q = cse(p, "g");
  EXPECT_EQ(printed(q, "g"), R"(def g(x: f64[n], y: f64[n]) -> f64 {
  let t7 = sum i: n. {
    let t4 = x[i]
    let t5 = y[i]
    let t6 = t4 * t5
    t6
  }
  let t13 = t7 * t7
  let t14 = x[0]
  let t15 = exp(t14)
  let t18 = t15 * t15
  let t19 = t13 + t18
  t19
}
)");
  expect_same_values(p, q, "g", {vec({1, 2, 3}), vec({-1, 0.5, 4})});
  EXPECT_LT(run(q, "g", {vec({1, 2, 3}), vec({-1, 0.5, 4})}).ops,
            run(p, "g", {vec({1, 2, 3}), vec({-1, 0.5, 4})}).ops);
}

TEST(OptCse, CommutativeScalarsMergeButNotSubtraction) {
  auto p = compile(R"(
def h(x: f64, y: f64) -> f64 {
  (x * y + y * x) * (x - y) * (y - x) + max(x, y) * max(y, x)
}
)");
  auto q = cse(p, "h");
  const std::string out = printed(q, "h");
  EXPECT_EQ(count(out, "x * y") + count(out, "y * x"), 1) << out;
  EXPECT_EQ(count(out, "max("), 1) << out;
  EXPECT_EQ(count(out, "x - y"), 1) << out;
  EXPECT_EQ(count(out, "y - x"), 1) << out;
  for (double x : {-1.5, 0.0, 2.0})
    expect_same_values(p, q, "h", {Value::f64(x), Value::f64(0.75)});
}

TEST(OptCse, ChainsResolve) {
  auto p = compile(R"(
def c(x: f64) -> f64 {
  (exp(x) + 1.0) * (exp(x) + 1.0) + (exp(x) + 2.0)
}
)");
  auto q = cse(p, "c");
  const std::string out = printed(q, "c");
  EXPECT_EQ(count(out, "exp("), 1) << out;
  EXPECT_EQ(count(out, "+ 1.0"), 1) << out;
  EXPECT_EQ(count(out, "+ 2.0"), 1) << out;
  expect_same_values(p, q, "c", {Value::f64(0.3)});
  EXPECT_EQ(run(q, "c", {Value::f64(0.3)}).ops, 5);  // exp, + 1, *, + 2, +
}

TEST(OptCse, OuterStatementReplacesInnerCopy) {
  auto p = compile(R"(
def o(x: f64[n], y: f64) -> f64[n] {
  let e = exp(y)
  for i. exp(y) * x[i] + e
}
)");
  auto q = cse(p, "o");
  const std::string out = printed(q, "o");
  EXPECT_EQ(count(out, "exp("), 1) << out;
  expect_same_values(p, q, "o", {vec({1, 2, 3, 4}), Value::f64(0.5)});
  EXPECT_EQ(run(q, "o", {vec({1, 2, 3, 4}), Value::f64(0.5)}).ops,
            run(p, "o", {vec({1, 2, 3, 4}), Value::f64(0.5)}).ops - 4);
}

TEST(OptCse, SiblingRegionsAndDifferentRangesStayApart) {
  auto p = compile(R"(
def s(x: f64[n], y: f64) -> (f64[n], f64[n], f64, f64) {
  (for i. exp(y) * x[i], for i. exp(y) + x[i], sum i. x[i], sum i: n - 1. x[i])
}
)");
  auto q = cse(p, "s");
  EXPECT_EQ(printed(q, "s"), printed(p, "s"));
  EXPECT_FALSE(opt::cse_postcondition(p, *p.find("s")).has_value());
}

TEST(OptCse, LiteralsCompareByValueAndType) {
  auto p = compile(R"(
def l(x: f64, k: i64) -> f64 {
  x * 2.0 + x * 2.0 + x * 3.0 + x * -0.0 + x * 0.0 + f64(k * 2) + f64(k * 2)
}
)");
  auto q = cse(p, "l");
  const std::string out = printed(q, "l");
  EXPECT_EQ(count(out, "x * 2.0"), 1) << out;
  EXPECT_EQ(count(out, "x * 3.0"), 1) << out;
  EXPECT_EQ(count(out, "x * (-0.0)"), 1) << out;
  EXPECT_EQ(count(out, "x * 0.0"), 1) << out;
  EXPECT_EQ(count(out, "k * 2"), 1) << out;
  expect_same_values(p, q, "l", {Value::f64(1.25), Value::i64(3)});
}

TEST(OptCse, CallsAreMerged) {
  auto p = compile(R"(
def sq(x: f64) -> f64 { x * x }
def k(x: f64) -> f64 { sq(x) + sq(x) }
)");
  auto q = cse(p, "k");
  EXPECT_EQ(count(printed(q, "k"), "sq("), 1) << printed(q, "k");
  expect_same_values(p, q, "k", {Value::f64(1.5)});
  EXPECT_EQ(run(q, "k", {Value::f64(1.5)}).ops, 2);
}

TEST(OptCse, LoopsGuardsAndIfsMerge) {
  auto p = compile(R"(
def m(x: f64, k: i64, c: bool) -> f64 {
  let a = loop s = x for t < k { s * x }
  let b = loop u = x for r < k { u * x }
  let d = loop u = x for r < k { u + x }
  let e = if c then exp(x) else x
  let g = if c then exp(x) else x
  a + b + d + e + g
}
)");
  auto q = cse(p, "m");
  const std::string out = printed(q, "m");
  EXPECT_EQ(count(out, "loop"), 2) << out;
  EXPECT_EQ(count(out, "if c"), 1) << out;
  for (bool c : {true, false}) {
    expect_same_values(p, q, "m", {Value::f64(1.1), Value::i64(4), Value::boolean(c)});
  }
}

// A program the checker cannot write: two identical saving loops (each binds its own dynamic
// size) stay; their bodies are still cleaned.
TEST(OptCse, SavingLoopsAreNotMerged) {
  ir::Program p;
  p.sources = std::make_shared<SourceManager>();
  ir::Function f;
  f.name = "f";
  {
    ir::Builder b(f);
    const ir::VarId x = b.param("x", Type::scalar(Scalar::F64));
    auto body = [&](const std::vector<ir::VarId>& s, ir::VarId) {
      const ir::VarId a = b.prim(Prim::Exp, {ir::Atom::of(x)});
      const ir::VarId c = b.prim(Prim::Exp, {ir::Atom::of(x)});
      const ir::VarId d = b.prim(Prim::Mul, {ir::Atom::of(a), ir::Atom::of(c)});
      return std::vector<ir::Atom>{
          ir::Atom::of(b.prim(Prim::Mul, {ir::Atom::of(s[0]), ir::Atom::of(d)}))};
    };
    auto l1 = b.loop_for_saving({ir::Atom::of(x)}, ir::Atom::i64(3), body);
    auto l2 = b.loop_for_saving({ir::Atom::of(x)}, ir::Atom::i64(3), body);
    const ir::VarId sum =
        b.prim(Prim::Add, {ir::Atom::of(l1.final_state[0]), ir::Atom::of(l2.final_state[0])});
    b.finish({ir::Atom::of(sum)});
  }
  p.functions.push_back(f);
  auto q = cse(p, "f");
  const ir::Function& g = *q.find("f");
  ASSERT_EQ(g.body.stmts.size(), 3u);
  for (size_t k = 0; k < 2; ++k) {
    const auto& l = std::get<ir::LoopOp>(g.body.stmts[k].op);
    EXPECT_TRUE(l.saves_states);
    EXPECT_EQ(l.body.stmts.size(), 3u) << "one exp merged in each body";
  }
  expect_same_values(p, q, "f", {Value::f64(0.5)});
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
