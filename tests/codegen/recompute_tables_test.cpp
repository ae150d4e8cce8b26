// Recomputing large cheap tables (codegen/recompute_tables.h): which tables go and which stay,
// and, through the native backend against the interpreter, that the GMM gradient, whose table
// is read once per column of a triangle, computes the same values when it is recomputed.
#include "codegen/recompute_tables.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "codegen/expr.h"
#include "cotangent/cotangent.h"
#include "e2e/e2e_cases.h"

namespace cot::codegen {
namespace COTANGENT_TEST_UNIT {

// table[j, i] = a[j, i] * b[i] + a[j, i] (J x I), then for j, i, c < 4: out[j, c] += x[i, c] *
// table[j, i], as the lowering writes a sum that reads a table once per column.
struct Case {
  LoopFunction fn;
  LocalId a, b, x, table, out, i_read;
};

Case table_then_sum(int64_t rows, int64_t cols) {
  Case t;
  LoopFunction& fn = t.fn;
  t.a = fn.new_local("a", Scalar::F64, true);
  t.b = fn.new_local("b", Scalar::F64, true);
  t.x = fn.new_local("x", Scalar::F64, true);
  t.out = fn.new_local("out", Scalar::F64, true);
  t.table = fn.new_local("table", Scalar::F64, true);
  const LocalId j = fn.new_local("j", Scalar::I64), i = fn.new_local("i", Scalar::I64);
  const LocalId e = fn.new_local("e", Scalar::F64), p = fn.new_local("p", Scalar::F64);
  fn.body.push_back(Stmt{Alloc{t.table, lit_i64(rows * cols)}});
  ExprP at = add_i64(mul_i64(local(fn, j), lit_i64(cols)), local(fn, i));
  Body inner{
      Stmt{Declare{e, load(Scalar::F64, t.a, at)}},
      Stmt{Declare{p, prim(Prim::Mul, {local(fn, e), load(Scalar::F64, t.b, local(fn, i))})}},
      Stmt{Store{t.table, at, prim(Prim::Add, {local(fn, p), local(fn, e)})}}};
  Body rows_body{Stmt{For{i, lit_i64(0), lit_i64(cols), std::move(inner)}}};
  fn.body.push_back(Stmt{For{j, lit_i64(0), lit_i64(rows), std::move(rows_body)}});
  // The reader.
  const LocalId j2 = fn.new_local("j", Scalar::I64), i2 = fn.new_local("i", Scalar::I64);
  const LocalId c = fn.new_local("c", Scalar::I64);
  t.i_read = i2;
  ExprP acc = add_i64(mul_i64(local(fn, j2), lit_i64(4)), local(fn, c));
  ExprP term = prim(
      Prim::Mul,
      {load(Scalar::F64, t.x, add_i64(mul_i64(local(fn, i2), lit_i64(4)), local(fn, c))),
       load(Scalar::F64, t.table, add_i64(mul_i64(local(fn, j2), lit_i64(cols)), local(fn, i2)))});
  Body cs{Stmt{Store{t.out, acc, prim(Prim::Add, {load(Scalar::F64, t.out, acc), term})}}};
  Body is{Stmt{For{c, lit_i64(0), lit_i64(4), std::move(cs)}}};
  Body js{Stmt{For{i2, lit_i64(0), lit_i64(cols), std::move(is)}}};
  fn.body.push_back(Stmt{For{j2, lit_i64(0), lit_i64(rows), std::move(js)}});
  return t;
}

// How many loads of `p` the expressions of `body` hold, nested bodies included.
int loads_of(const Body& body, LocalId p) {
  int n = 0;
  std::function<void(const ExprP&)> count = [&](const ExprP& e) {
    if (!e) return;
    n += e->kind == Expr::Kind::Load && e->local == p ? 1 : 0;
    for (const ExprP& a : e->args) count(a);
  };
  for (const Stmt& s : body) {
    if (const auto* st = std::get_if<Store>(&s.op)) {
      count(st->index);
      count(st->value);
    } else if (const auto* f = std::get_if<For>(&s.op)) {
      n += loads_of(f->body, p);
    } else if (const auto* d = std::get_if<Declare>(&s.op)) {
      count(d->value);
    }
  }
  return n;
}

TEST(RecomputeTables, a_large_table_read_by_the_next_loop_is_computed_at_its_reads) {
  Case t = table_then_sum(200, 1000);  // 1.6 MB
  const LoopFunction fn = recompute_tables(std::move(t.fn));
  ASSERT_EQ(fn.body.size(), 1u);  // the allocation and the producer are gone
  EXPECT_EQ(loads_of(fn.body, t.table), 0);
  EXPECT_EQ(loads_of(fn.body, t.a), 2);  // a[j, i] * b[i] + a[j, i], at the read
  EXPECT_EQ(loads_of(fn.body, t.b), 1);
}

TEST(RecomputeTables, small_tables_stay) {
  Case t = table_then_sum(20, 1000);  // 160 KB: the cache holds it
  const LoopFunction fn = recompute_tables(std::move(t.fn));
  EXPECT_EQ(fn.body.size(), 3u);
  EXPECT_EQ(loads_of(fn.body, t.table), 1);
}

TEST(RecomputeTables, a_gather_from_the_table_keeps_it) {
  // A later loop reads table[idx[k]]: an offset known only at run time has no element to compute.
  Case t = table_then_sum(200, 1000);
  const LocalId idx = t.fn.new_local("idx", Scalar::I64, true);
  const LocalId k = t.fn.new_local("k", Scalar::I64);
  Body again{Stmt{Store{t.out, local(t.fn, k),
                        load(Scalar::F64, t.table, load(Scalar::I64, idx, local(t.fn, k)))}}};
  t.fn.body.push_back(Stmt{For{k, lit_i64(0), lit_i64(4), std::move(again)}});
  const LoopFunction fn = recompute_tables(std::move(t.fn));
  EXPECT_EQ(fn.body.size(), 4u);
  EXPECT_EQ(loads_of(fn.body, t.table), 2);
}

TEST(RecomputeTables, every_later_read_is_computed_where_it_is) {
  // A second reader of elements (0, k): both read the element's value, and the table goes.
  Case t = table_then_sum(200, 1000);
  const LocalId k = t.fn.new_local("k", Scalar::I64);
  Body again{Stmt{Store{t.out, local(t.fn, k), load(Scalar::F64, t.table, local(t.fn, k))}}};
  t.fn.body.push_back(Stmt{For{k, lit_i64(0), lit_i64(4), std::move(again)}});
  const LoopFunction fn = recompute_tables(std::move(t.fn));
  EXPECT_EQ(fn.body.size(), 2u);
  EXPECT_EQ(loads_of(fn.body, t.table), 0);
  EXPECT_EQ(loads_of(fn.body, t.b), 2);
}

TEST(RecomputeTables, a_reader_that_writes_what_the_producer_reads_keeps_the_table) {
  Case t = table_then_sum(200, 1000);
  For& reader = std::get<For>(t.fn.body.back().op);
  // The reader also writes b: a recomputed element would read the new value.
  reader.body.push_back(Stmt{Store{t.b, lit_i64(0), lit_real(1.0)}});
  const LoopFunction fn = recompute_tables(std::move(t.fn));
  EXPECT_EQ(fn.body.size(), 3u);
}

TEST(RecomputeTables, a_read_whose_offset_does_not_split_into_the_nest_keeps_the_table) {
  // The reader's i runs one further than the table's columns: table[j * I + i] with i = I is
  // row j + 1's first element, not an element (j, I) of the nest.
  Case t = table_then_sum(200, 1000);
  For& reader = std::get<For>(t.fn.body.back().op);
  std::get<For>(reader.body[0].op).end = lit_i64(1001);
  const LoopFunction fn = recompute_tables(std::move(t.fn));
  EXPECT_EQ(fn.body.size(), 3u);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::codegen

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using e2e::uniform_tensor;

// The GMM gradient (examples/gradbench/gmm.cot) at k = 20, d = 8, n = 1000, where its [k, d, n]
// table of 2 w_ji (Q_j x_i)_r (1.3 MB) is recomputed at its reads: the native gradient agrees
// with the interpreter's.
TEST(RecomputeTables, the_gmm_gradient_agrees_with_the_interpreter) {
  auto m = Module::from_file(std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench/gmm.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  std::mt19937_64 rng(7);
  const int64_t k = 20, d = 8, n = 1000;
  const std::vector<Value> args{uniform_tensor({k}, rng),
                                uniform_tensor({k, d}, rng),
                                uniform_tensor({k, d}, rng),
                                uniform_tensor({k, d * (d - 1) / 2}, rng),
                                uniform_tensor({n, d}, rng),
                                Value::i64(0),
                                Value::f64(1.0)};
  auto compiled =
      m.value().compile({{"gradient", std::nullopt, {}, args}}, CompileOptions{1, 0, {}});
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  auto want = m.value().evaluate("gradient", args);
  ASSERT_TRUE(want.ok()) << want.message();
  auto got = compiled.value()[0].call(args);
  ASSERT_TRUE(got.ok()) << got.message();
  EXPECT_EQ(e2e::compare_values(got.value(), want.value(), 1e-10), "");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
