// Dead-code elimination (src/opt/dce.h): unused statements in every block, unused results of
// guards and ifs, dead loop state; saving loops keep their shape.
#include "opt/dce.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
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

ir::Program dce(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::eliminate_dead_code, opt::dce_postcondition);
}

using opt_test::count;

TEST(OptDce, UnusedLetsGoTransitively) {
  auto p = compile(R"(
def f(x: f64) -> f64 {
  let a = exp(x)
  let b = a * 2.0
  let c = x * 3.0
  c
}
)");
  auto q = dce(p, "f");
  EXPECT_EQ(printed(q, "f"), R"(def f(x: f64) -> f64 {
  let c = x * 3.0
  c
}
)");
  expect_same_values(p, q, "f", {Value::f64(0.5)});
  EXPECT_EQ(run(p, "f", {Value::f64(0.5)}).ops, 3);
  EXPECT_EQ(run(q, "f", {Value::f64(0.5)}).ops, 1);
  EXPECT_TRUE(opt::dce_postcondition(p, *p.find("f")).has_value());
}

TEST(OptDce, NestedRegionsAndOuterStatementsOnlyTheyUsed) {
  auto p = compile(R"(
def g(x: f64[n], y: f64) -> f64[n] {
  let e = exp(y)
  for i. { let u = e * x[i]; x[i] * 2.0 }
}
)");
  auto q = dce(p, "g");
  const std::string out = printed(q, "g");
  EXPECT_EQ(count(out, "exp("), 0) << out;
  EXPECT_EQ(count(out, "e * "), 0) << out;
  expect_same_values(p, q, "g", {vec({1, -2, 3}), Value::f64(0.25)});
  EXPECT_EQ(run(q, "g", {vec({1, -2, 3}), Value::f64(0.25)}).ops, 3);
}

TEST(OptDce, DeadWorkThatWouldFailIsRemoved) {
  auto p = compile(R"(
def r(x: f64[n]) -> f64 {
  let bad = x[n]
  x[0]
}
)");
  auto q = dce(p, "r");
  EXPECT_FALSE(run(p, "r", {vec({1, 2})}).ok);
  auto after = run(q, "r", {vec({1, 2})});
  ASSERT_TRUE(after.ok) << after.error;
  EXPECT_EQ(after.values, std::vector<double>{1});
}

TEST(OptDce, UnusedIfResultsAreDropped) {
  auto p = compile(R"(
def h(x: f64, y: f64, c: bool) -> f64 {
  let (a, b) = if c then (exp(x), log(y)) else (x, sin(y))
  a
}
)");
  auto q = dce(p, "h");
  const std::string out = printed(q, "h");
  EXPECT_EQ(count(out, "log("), 0) << out;
  EXPECT_EQ(count(out, "sin("), 0) << out;
  EXPECT_EQ(count(out, "exp("), 1) << out;
  for (bool c : {true, false}) {
    expect_same_values(p, q, "h", {Value::f64(0.5), Value::f64(2.0), Value::boolean(c)});
  }
  EXPECT_EQ(run(q, "h", {Value::f64(0.5), Value::f64(2.0), Value::boolean(true)}).ops, 1);
}

TEST(OptDce, DeadLoopStateIsDropped) {
  auto p = compile(R"(
def l(x: f64, y: f64, k: i64) -> f64 {
  let (a, b, c) = loop (a, b, c) = (x, y, 0.0) for t < k { (a * x, b * y + c, c + 1.0) }
  a
}
)");
  auto q = dce(p, "l");
  EXPECT_EQ(printed(q, "l"), R"(def l(x: f64, y: f64, k: i64) -> f64 {
  let a_14 = loop a = x for t < k {
    let t9 = a * x
    t9
  }
  a_14
}
)");
  for (int64_t k : {0, 1, 5}) {
    expect_same_values(p, q, "l", {Value::f64(1.5), Value::f64(0.5), Value::i64(k)});
  }
  EXPECT_EQ(run(q, "l", {Value::f64(1.5), Value::f64(0.5), Value::i64(5)}).ops, 5);
}

TEST(OptDce, LoopStateAnotherComponentReadsStays) {
  auto p = compile(R"(
def m(x: f64, y: f64, k: i64) -> f64 {
  let (a, b) = loop (a, b) = (x, y) for t < k { (a + b, b * 2.0) }
  a
}
def w(x: f64, y: f64) -> f64 {
  let (a, b) = loop (a, b) = (x, y) while b < 10.0 { (a * 2.0, b + 1.0) }
  a
}
)");
  auto q = dce(p, "m");
  EXPECT_EQ(printed(q, "m"), printed(p, "m"));
  auto r = dce(p, "w");  // the condition reads b
  EXPECT_EQ(printed(r, "w"), printed(p, "w"));
}

// A saving loop keeps its shape while its count or a stack is read; with only its final state
// read it becomes a plain loop; unused, it goes with its size.
TEST(OptDce, SavingLoops) {
  auto build = [](bool use_stack, bool use_final = false) {
    ir::Program p;
    p.sources = std::make_shared<SourceManager>();
    ir::Function f;
    f.name = "f";
    ir::Builder b(f);
    const ir::VarId x = b.param("x", Type::scalar(Scalar::F64));
    auto l = b.loop_for_saving(
        {ir::Atom::of(x), ir::Atom::of(x)}, ir::Atom::i64(3),
        [&](const std::vector<ir::VarId>& s, ir::VarId) {
          return std::vector<ir::Atom>{
              ir::Atom::of(b.prim(Prim::Mul, {ir::Atom::of(s[0]), ir::Atom::of(x)})),
              ir::Atom::of(b.prim(Prim::Add, {ir::Atom::of(s[1]), ir::Atom::of(x)}))};
        });
    const ir::VarId dead = b.prim(Prim::Exp, {ir::Atom::of(x)});
    (void)dead;
    if (use_stack) {
      const ir::VarId r =
          b.index(ir::Atom::of(l.stacks[0]), {ir::affine_index(Affine::constant(1))});
      b.finish({ir::Atom::of(r)});
    } else if (use_final) {
      b.finish({ir::Atom::of(l.final_state[0])});
    } else {
      b.finish({ir::Atom::of(x)});
    }
    p.functions.push_back(f);
    return p;
  };
  auto used = build(true);
  auto q = dce(used, "f");
  const ir::Function& g = *q.find("f");
  ASSERT_EQ(g.body.stmts.size(), 2u) << printed(q, "f");
  const auto& l = std::get<ir::LoopOp>(g.body.stmts[0].op);
  EXPECT_TRUE(l.saves_states);
  // The state whose stack is read stays; the other, whose final value and stack nothing
  // reads, goes with its stack.
  EXPECT_EQ(l.state.size(), 1u) << printed(q, "f");
  EXPECT_EQ(g.body.stmts[0].results.size(), 3u);
  expect_same_values(used, q, "f", {Value::f64(1.5)});

  // The final state read, the count and stacks not: a plain loop, its dead state dropped.
  auto plain = build(false, true);
  auto pq = dce(plain, "f");
  const ir::Function& h = *pq.find("f");
  ASSERT_EQ(h.body.stmts.size(), 1u) << printed(pq, "f");
  const auto& pl = std::get<ir::LoopOp>(h.body.stmts[0].op);
  EXPECT_FALSE(pl.saves_states) << printed(pq, "f");
  EXPECT_EQ(pl.state.size(), 1u) << printed(pq, "f");
  for (const auto& sv : h.size_vars) EXPECT_NE(sv.param, -1) << sv.name;
  expect_same_values(plain, pq, "f", {Value::f64(1.5)});

  auto unused = build(false, false);
  auto r = dce(unused, "f");
  EXPECT_TRUE(r.find("f")->body.stmts.empty()) << printed(r, "f");
  for (const auto& sv : r.find("f")->size_vars) EXPECT_NE(sv.param, -1) << sv.name;
  expect_same_values(unused, r, "f", {Value::f64(1.5)});
}

// A counted saving loop whose stacks nobody reads but whose count the reverse pass reads: the
// count is max(count, 0), and the loop, its final state unread, goes.
TEST(OptDce, SavingLoopWhoseCountAloneIsReadGoes) {
  ir::Program p;
  p.sources = std::make_shared<SourceManager>();
  ir::Function f;
  f.name = "f";
  ir::Builder b(f);
  const ir::VarId x = b.param("x", Type::scalar(Scalar::F64));
  const ir::VarId k = b.param("k", Type::scalar(Scalar::I64));
  auto l = b.loop_for_saving(
      {ir::Atom::of(x)}, ir::Atom::of(k), [&](const std::vector<ir::VarId>& s, ir::VarId) {
        return std::vector<ir::Atom>{
            ir::Atom::of(b.prim(Prim::Mul, {ir::Atom::of(s[0]), ir::Atom::of(x)}))};
      });
  const ir::VarId r = b.prim(Prim::ToF64, {ir::Atom::of(l.count)});
  b.finish({ir::Atom::of(b.prim(Prim::Mul, {ir::Atom::of(r), ir::Atom::of(x)}))});
  p.functions.push_back(f);
  auto q = dce(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(text.find("loop"), std::string::npos) << text;
  EXPECT_NE(text.find("max(k, 0)"), std::string::npos) << text;
  for (const auto& sv : q.find("f")->size_vars) EXPECT_NE(sv.param, -1) << sv.name;
  for (int64_t n : {-2, 0, 3}) expect_same_values(p, q, "f", {Value::f64(1.5), Value::i64(n)});
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
