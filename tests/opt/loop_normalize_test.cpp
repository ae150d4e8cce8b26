// Loop normalization (src/opt/loop_normalize.h): [Shaikhha22]'s rules (f).1–(f).4 (Fig. 8f) on Core
// IR loops; saving loops are left alone.
#include "opt/loop_normalize.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "opt/dce.h"
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

ir::Program norm(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::normalize_loops, opt::loop_normalize_postcondition);
}

using opt_test::count;

TEST(OptLoopNormalize, InvariantStateBecomesFree) {
  auto p = compile(R"(
def l(x: f64, k: i64) -> f64 {
  let (a, b, c) = loop (a, b, c) = (x, 1.0, x) for t < k { (a * x + b, b, x) }
  a + b + c
}
)");
  auto q = norm(p, "l");
  EXPECT_EQ(printed(q, "l"), R"(def l(x: f64, k: i64) -> f64 {
  let a_11 = loop a = x for t < k {
    let t8 = a * x
    let t9 = t8 + 1.0
    t9
  }
  let t15 = a_11 + 1.0
  let t16 = t15 + x
  t16
}
)");
  EXPECT_TRUE(opt::loop_normalize_postcondition(p, *p.find("l")).has_value());
  for (int64_t k : {-1, 0, 1, 4}) {
    expect_same_values(p, q, "l", {Value::f64(1.25), Value::i64(k)});
  }
}

TEST(OptLoopNormalize, WhileLoopInvariantState) {
  auto p = compile(R"(
def w(x: f64, y: f64) -> f64 {
  let (v, s) = loop (v, s) = (x, y) while v < s { (v * 2.0, s) }
  v + s
}
)");
  auto q = norm(p, "w");
  const std::string out = printed(q, "w");
  EXPECT_EQ(count(out, "loop v = x while"), 1) << out;
  for (double x : {0.1, 3.0, 50.0})
    expect_same_values(p, q, "w", {Value::f64(x), Value::f64(10.0)});
}

TEST(OptLoopNormalize, ConstantTripCounts) {
  auto p = compile(R"(
def z(x: f64[n]) -> f64 { loop s = 1.0 for t < 0 { s * x[t] } }
def o(x: f64[n]) -> f64 { loop s = 1.0 for t < 1 { s * x[t] + x[t + 1] } }
def m(x: f64[n]) -> f64 { loop s = 1.0 for t < 2 { s * x[t] } }
)");
  auto z = norm(p, "z");
  EXPECT_EQ(printed(z, "z"), "def z(x: f64[n]) -> f64 {\n  1.0\n}\n");
  auto o = norm(p, "o");
  EXPECT_EQ(printed(o, "o"), R"(def o(x: f64[n]) -> f64 {
  let t9 = x[0]
  let t10 = 1.0 * t9
  let t11 = x[1]
  let t12 = t10 + t11
  t12
}
)");
  auto m = norm(p, "m");  // two iterations are not unrolled
  EXPECT_EQ(printed(m, "m"), printed(p, "m"));
  expect_same_values(p, z, "z", {vec({2, 3, 4})});
  expect_same_values(p, o, "o", {vec({2, 3, 4})});
  EXPECT_EQ(run(o, "o", {vec({2, 3})}).ops, run(p, "o", {vec({2, 3})}).ops);
}

TEST(OptLoopNormalize, OneHotLoopCollapses) {
  auto p = compile(R"(
def oh(v: f64[n], j: i64) -> f64[n] {
  loop acc = v for t < n { if t == j then (for i. acc[i] * 2.0) else acc }
}
)");
  auto q = norm(p, "oh");
  auto r = run_pass(q, "oh", opt::eliminate_dead_code, opt::dce_postcondition);
  EXPECT_EQ(printed(r, "oh"), R"(def oh(v: f64[n], j: i64) -> f64[n] {
  let in_range = j >= 0
  let in_range_19 = j < n
  let in_range_20 = in_range && in_range_19
  let t11 = if in_range_20 then {
    let t16 = for i_13: n. {
      let t14 = v[i_13]
      let t15 = t14 * 2.0
      t15
    }
    t16
  } else { v }
  t11
}
)");
  const Value v = vec({1, -2, 3, 0.5});
  for (int64_t j : {-1, 0, 2, 3, 4, 100}) {
    expect_same_values(p, r, "oh", {v, Value::i64(j)});
  }
  // n iterations of a loop with one live one become that one iteration: n multiplications.
  EXPECT_EQ(run(r, "oh", {v, Value::i64(2)}).ops, 4);
  EXPECT_EQ(run(p, "oh", {v, Value::i64(2)}).ops, 4);
}

TEST(OptLoopNormalize, OneHotNeedsAnInvariantIndexAndAnUnchangedElse) {
  auto p = compile(R"(
def a(v: f64[n], j: i64) -> f64[n] {
  loop acc = v for t < n { if t == j then (for i. acc[i] * 2.0) else (for i. acc[i] + 1.0) }
}
def b(x: f64, k: i64) -> f64 {
  loop s = x for t < k { if t == 2 * t then s * x else s }
}
def c(x: f64, k: i64) -> f64 {
  loop s = x for t < k { s * x + 1.0 }
}
)");
  for (const char* fn : {"a", "b", "c"}) {
    auto q = norm(p, fn);
    EXPECT_EQ(printed(q, fn), printed(p, fn)) << fn;
  }
}

// A saving loop keeps its shape even when its state is invariant or its count is 1.
TEST(OptLoopNormalize, SavingLoopsStay) {
  ir::Program p;
  p.sources = std::make_shared<SourceManager>();
  ir::Function f;
  f.name = "f";
  {
    ir::Builder b(f);
    const ir::VarId x = b.param("x", Type::scalar(Scalar::F64));
    auto l = b.loop_for_saving(
        {ir::Atom::of(x), ir::Atom::of(x)}, ir::Atom::i64(1),
        [&](const std::vector<ir::VarId>& s, ir::VarId) {
          return std::vector<ir::Atom>{
              ir::Atom::of(b.prim(Prim::Mul, {ir::Atom::of(s[0]), ir::Atom::of(x)})),
              ir::Atom::of(s[1])};
        });
    b.finish({ir::Atom::of(
        b.prim(Prim::Add, {ir::Atom::of(l.final_state[0]), ir::Atom::of(l.final_state[1])}))});
  }
  p.functions.push_back(f);
  auto q = run_pass(p, "f", opt::normalize_loops);  // the postcondition exempts saving loops
  EXPECT_EQ(printed(q, "f"), printed(p, "f"));
  EXPECT_FALSE(opt::loop_normalize_postcondition(p, *p.find("f")).has_value());
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
