// Loop partitioning (codegen/partition_loops.h): which loops split where, what folds in each
// piece, and, through the native backend against the interpreter, that stencils with boundary
// branches and guards compute the same values and report the same failures.
#include "codegen/partition_loops.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "codegen/expr.h"
#include "codegen/may_fail.h"
#include "cotangent/cotangent.h"
#include "e2e/e2e_cases.h"

namespace cot::codegen {
namespace COTANGENT_TEST_UNIT {

// for i in [0, n): out[i] = (i == 0) ? 1 : in[i - 1], with the read's index check, as the
// lowering writes a stencil `if i == 0 then 1.0 else y[i - 1]`. `at` is the tested index.
LoopFunction stencil(int64_t n, int64_t at) {
  LoopFunction fn;
  const LocalId in = fn.new_local("in", Scalar::F64, true);
  const LocalId out = fn.new_local("out", Scalar::F64, true);
  const LocalId i = fn.new_local("i", Scalar::I64);
  const LocalId first = fn.new_local("first", Scalar::Bool);
  const LocalId v = fn.new_local("v", Scalar::F64);
  ExprP prev = add_i64(local(fn, i), lit_i64(-1));
  Body read{
      Stmt{If{not_(and_(prim(Prim::Ge, {prev, lit_i64(0)}), prim(Prim::Lt, {prev, lit_i64(n)}))),
              Body{Stmt{Fail{1, {prev}}}},
              {}}},
      Stmt{Assign{v, load(Scalar::F64, in, prev)}}};
  Body body{Stmt{Declare{first, prim(Prim::Eq, {local(fn, i), lit_i64(at)})}},
            Stmt{Declare{v, nullptr}},
            Stmt{If{local(fn, first), Body{Stmt{Assign{v, lit_real(1.0)}}}, std::move(read)}},
            Stmt{Store{out, local(fn, i), local(fn, v)}}};
  fn.body.push_back(Stmt{For{i, lit_i64(0), lit_i64(n), std::move(body)}});
  return fn;
}

std::vector<const For*> loops(const LoopFunction& fn) {
  std::vector<const For*> out;
  for (const Stmt& s : fn.body) {
    if (const auto* f = std::get_if<For>(&s.op)) out.push_back(f);
  }
  return out;
}

// Whether a body still branches on something that is not a literal.
bool branches(const Body& body) {
  for (const Stmt& s : body) {
    if (const auto* i = std::get_if<If>(&s.op)) {
      if (!as_bool(i->cond) || branches(i->then_body) || branches(i->else_body)) return true;
    }
  }
  return false;
}

TEST(PartitionLoops, a_test_of_the_first_index_peels_one_iteration) {
  const LoopFunction fn = partition_loops(stencil(100, 0));
  const std::vector<const For*> pieces = loops(fn);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(as_i64(pieces[0]->begin), 0);
  EXPECT_EQ(as_i64(pieces[0]->end), 1);
  EXPECT_EQ(as_i64(pieces[1]->begin), 1);
  EXPECT_EQ(as_i64(pieces[1]->end), 100);
  // The steady state neither branches nor checks: i != 0 and 0 <= i - 1 < 100 hold throughout.
  EXPECT_FALSE(branches(pieces[1]->body));
  EXPECT_FALSE(may_fail(pieces[1]->body));
  // In the first iteration the read is not taken, so nothing can fail either.
  EXPECT_FALSE(may_fail(pieces[0]->body));
}

TEST(PartitionLoops, tests_near_both_ends_give_a_prologue_and_an_epilogue) {
  // i == 97: the test changes at 97 and 98, both within the last eight iterations.
  const LoopFunction fn = partition_loops(stencil(100, 97));
  const std::vector<const For*> pieces = loops(fn);
  ASSERT_EQ(pieces.size(), 3u);
  EXPECT_EQ(as_i64(pieces[0]->end), 1);  // the read's check changes at i = 1
  EXPECT_EQ(as_i64(pieces[1]->begin), 1);
  EXPECT_EQ(as_i64(pieces[1]->end), 97);
  EXPECT_EQ(as_i64(pieces[2]->begin), 97);
  EXPECT_FALSE(branches(pieces[1]->body));
  EXPECT_TRUE(branches(pieces[2]->body));  // i == 97 is not constant on [97, 100)
}

TEST(PartitionLoops, a_test_in_the_middle_stays_a_branch) {
  const LoopFunction fn = partition_loops(stencil(100, 50));
  const std::vector<const For*> pieces = loops(fn);
  ASSERT_EQ(pieces.size(), 2u);  // the check's change at 1 still peels
  EXPECT_TRUE(branches(pieces[1]->body));
}

TEST(PartitionLoops, short_loops_and_loops_of_run_time_bounds_are_left_alone) {
  LoopFunction fn = partition_loops(stencil(20, 0));
  ASSERT_EQ(loops(fn).size(), 1u);
  EXPECT_TRUE(branches(loops(fn)[0]->body));
  LoopFunction dynamic = stencil(100, 0);
  const LocalId n = dynamic.new_local("n", Scalar::I64);
  std::get<For>(dynamic.body[0].op).end = local(dynamic, n);
  dynamic = partition_loops(std::move(dynamic));
  ASSERT_EQ(loops(dynamic).size(), 1u);
  EXPECT_TRUE(branches(loops(dynamic)[0]->body));
}

TEST(PartitionLoops, tests_at_the_ends_of_the_integers_do_not_overflow) {
  // INT64_MIN - i == 0 (a = -1, c = INT64_MIN: the remainder c % a traps in 64 bits) and
  // INT64_MAX < -i: the arithmetic of the tests stays exact.
  LoopFunction fn;
  const LocalId out = fn.new_local("out", Scalar::F64, true);
  const LocalId i = fn.new_local("i", Scalar::I64);
  ExprP neg = prim(Prim::Neg, {local(fn, i)});
  ExprP low = prim(Prim::Sub, {lit_i64(INT64_MIN), local(fn, i)});
  Body body{
      Stmt{If{or_(prim(Prim::Eq, {low, lit_i64(0)}), prim(Prim::Lt, {lit_i64(INT64_MAX), neg})),
              Body{Stmt{Store{out, local(fn, i), lit_real(1.0)}}},
              {}}}};
  fn.body.push_back(Stmt{For{i, lit_i64(0), lit_i64(100), std::move(body)}});
  fn = partition_loops(std::move(fn));
  ASSERT_EQ(loops(fn).size(), 1u);  // neither test changes inside the loop: both fold to false
  EXPECT_FALSE(branches(loops(fn)[0]->body));
}

TEST(PartitionLoops, a_local_linear_in_the_index_is_followed) {
  // k = 1 + i; if (k < 100) out[i] = in[k]: the guard of a read shifted by one, `[i + 1 < n]`.
  LoopFunction fn;
  const LocalId in = fn.new_local("in", Scalar::F64, true);
  const LocalId out = fn.new_local("out", Scalar::F64, true);
  const LocalId i = fn.new_local("i", Scalar::I64);
  const LocalId k = fn.new_local("k", Scalar::I64);
  Body body{Stmt{Declare{k, add_i64(lit_i64(1), local(fn, i))}},
            Stmt{If{prim(Prim::Lt, {local(fn, k), lit_i64(100)}),
                    Body{Stmt{Store{out, local(fn, i), load(Scalar::F64, in, local(fn, k))}}},
                    Body{Stmt{Store{out, local(fn, i), lit_real(0.0)}}}}}};
  fn.body.push_back(Stmt{For{i, lit_i64(0), lit_i64(100), std::move(body)}});
  fn = partition_loops(std::move(fn));
  const std::vector<const For*> pieces = loops(fn);
  ASSERT_EQ(pieces.size(), 2u);
  EXPECT_EQ(as_i64(pieces[0]->end), 99);
  EXPECT_FALSE(branches(pieces[0]->body));
  EXPECT_FALSE(branches(pieces[1]->body));
  // A local assigned in the body is not followed: its value is not the declared one throughout.
  LoopFunction assigned;
  const LocalId i2 = assigned.new_local("i", Scalar::I64);
  const LocalId k2 = assigned.new_local("k", Scalar::I64);
  const LocalId o2 = assigned.new_local("out", Scalar::F64, true);
  Body body2{Stmt{Declare{k2, local(assigned, i2)}}, Stmt{Assign{k2, lit_i64(0)}},
             Stmt{If{prim(Prim::Eq, {local(assigned, k2), lit_i64(0)}),
                     Body{Stmt{Store{o2, local(assigned, i2), lit_real(1.0)}}},
                     {}}}};
  assigned.body.push_back(Stmt{For{i2, lit_i64(0), lit_i64(100), std::move(body2)}});
  assigned = partition_loops(std::move(assigned));
  ASSERT_EQ(loops(assigned).size(), 1u);
  EXPECT_TRUE(branches(loops(assigned)[0]->body));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::codegen

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using e2e::uniform_tensor;

// Stencils whose borders branch, through the native backend (partitioned) and the interpreter;
// their gradients read shifted by one the other way, under guards `[j + 1 < n]`.
TEST(PartitionLoops, stencils_with_borders_agree_with_the_interpreter) {
  const char* src = R"(
def shift(x: f64[n], y: f64[n]) -> f64[n] {
  for i. x[i] * (if i == 0 then 1.0 else y[i - 1])
}
def centered(x: f64[n]) -> f64[n] {
  for i. if i == 0 then x[1] - x[0] else if i == n - 1 then x[i] - x[i - 1]
         else 0.5 * (x[i + 1] - x[i - 1])
}
def edges(x: f64[n]) -> f64[n] {
  for i. if i < 3 then x[i] else if i > n - 4 then 2.0 * x[i] else x[i - 3] + x[i + 3]
}
def middle(x: f64[n]) -> f64[n] {
  for i. if i == 40 then 7.0 else x[i]
}
def loss(x: f64[n], y: f64[n]) -> f64 {
  let a = shift(x, y)
  let b = centered(a)
  let c = edges(b)
  let d = middle(c)
  sum i. d[i] * d[i] + sin(a[i])
}
)";
  auto m = Module::from_string(src, "partition.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  std::mt19937_64 rng(5);
  for (int64_t n : {int64_t{33}, int64_t{100}, int64_t{1001}}) {
    const std::vector<Value> args{uniform_tensor({n}, rng), uniform_tensor({n}, rng)};
    auto compiled = m.value().compile(
        {{"loss", std::nullopt, {}, args}, {"loss", DerivativeKind::ValueAndGrad, {}, args}},
        CompileOptions{1, 0, {}});
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    auto want = m.value().evaluate("loss", args);
    ASSERT_TRUE(want.ok()) << want.message();
    auto got = compiled.value()[0].call(args);
    ASSERT_TRUE(got.ok()) << got.message();
    EXPECT_EQ(e2e::compare_values(got.value(), want.value(), 1e-12), "") << n;
    auto vg = m.value().value_and_grad("loss", args);
    ASSERT_TRUE(vg.ok()) << vg.message();
    auto got_vg = compiled.value()[1].call(args);
    ASSERT_TRUE(got_vg.ok()) << got_vg.message();
    Value want_vg = Value::tuple(
        {vg.value().value, Value::tuple({vg.value().grad[0].value, vg.value().grad[1].value})});
    EXPECT_EQ(e2e::compare_values(got_vg.value(), want_vg, 1e-12), "") << n;
  }
}

TEST(PartitionLoops, a_read_past_the_end_fails_as_in_the_interpreter) {
  // The read x[i + 1] is out of range only at the last index, which the epilogue runs.
  const char* src = R"(
def ahead(x: f64[n]) -> f64[n] {
  for i: n. if i == 0 then 0.0 else x[i + 1] - x[i - 1]
}
)";
  auto m = Module::from_string(src, "partition.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  std::mt19937_64 rng(6);
  const std::vector<Value> args{uniform_tensor({100}, rng)};
  auto compiled = m.value().compile({{"ahead", std::nullopt, {}, args}}, CompileOptions{1, 0, {}});
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  auto want = m.value().evaluate("ahead", args);
  ASSERT_FALSE(want.ok());
  auto got = compiled.value()[0].call(args);
  ASSERT_FALSE(got.ok());
  EXPECT_EQ(got.message(), want.message());
  EXPECT_NE(want.message().find("index 100 is out of range"), std::string::npos) << want.message();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
