// The loop-IR passes (codegen/loop_passes.h): the table's order, the printer, each schedule
// pass's mechanism on a small loop function, and `--dump-after` of a loop pass through the
// library (the CLI's flag sets LoadOptions::dump_after and prints what `dump` gets).
#include "codegen/loop_passes.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "codegen/expr.h"
#include "codegen/interchange_sums.h"
#include "codegen/long_sums.h"
#include "codegen/loop_ir_printer.h"
#include "cotangent/cotangent.h"
#include "e2e/e2e_cases.h"

namespace cot::codegen {
namespace COTANGENT_TEST_UNIT {

TEST(LoopPasses, the_table_runs_the_schedule_passes_first_and_the_memory_plan_last) {
  std::vector<std::string> names;
  for (const LoopPass& p : loop_passes()) names.emplace_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "interchange-sums", "split-windows", "interchange-split-sums", "long-sums",
                       "recompute-tables", "fuse-loops", "partition-loops", "plan-memory"}));
  EXPECT_TRUE(is_loop_pass_name("long-sums"));
  EXPECT_FALSE(is_loop_pass_name("fuse"));  // a Core IR pass
  EXPECT_EQ(cotangent::loop_pass_names(), names);
}

// acc = 0; for i in [0, n) sum_of acc { x = in[i]; acc = acc + x }, as the lowering writes a
// sum of terms never masked; with `outer`, a loop of that many iterations around it (a sum over
// two indices), and with `checked`, an index check in the body.
struct Sum {
  LoopFunction fn;
  LocalId acc = -1;
};
Sum sum_loop(int64_t n, int64_t outer = 0, bool checked = false) {
  Sum s;
  LoopFunction& fn = s.fn;
  const LocalId in = fn.new_local("in", Scalar::F64, true);
  s.acc = fn.new_local("acc", Scalar::F64);
  const LocalId i = fn.new_local("i", Scalar::I64);
  const LocalId x = fn.new_local("x", Scalar::F64);
  Body body;
  if (checked) {
    body.push_back(
        Stmt{If{prim(Prim::Ge, {local(fn, i), lit_i64(n)}), Body{Stmt{Fail{1, {}}}}, {}}});
  }
  body.push_back(Stmt{Declare{x, load(Scalar::F64, in, local(fn, i))}});
  body.push_back(Stmt{Assign{s.acc, prim(Prim::Add, {local(fn, s.acc), local(fn, x)})}});
  For loop{i, lit_i64(0), lit_i64(n), std::move(body)};
  fn.body.push_back(Stmt{Declare{s.acc, lit_real(0)}});
  if (outer > 0) {
    const LocalId o = fn.new_local("o", Scalar::I64);
    For around{o, lit_i64(0), lit_i64(outer), Body{Stmt{std::move(loop)}}};
    around.sum_of = s.acc;
    fn.body.push_back(Stmt{std::move(around)});
  } else {
    loop.sum_of = s.acc;
    fn.body.push_back(Stmt{std::move(loop)});
  }
  return s;
}

const For& loop_at(const Body& b, size_t k) {
  return std::get<For>(b.at(k).op);
}

TEST(LongSums, a_long_flat_sum_adds_in_lanes) {
  Sum s = sum_loop(1000);
  EXPECT_EQ(loop_at(s.fn.body, 1).sum_into, -1);  // as lowered: in order
  const LoopFunction after = mark_long_sums(s.fn);
  EXPECT_EQ(loop_at(after.body, 1).sum_into, s.acc);
  const std::string text = print_loop_function(after);
  EXPECT_NE(text.find("for v2_i in [0, 1000) sum_of v1_acc sum_into v1_acc\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("\n    v1_acc = (v1_acc + v3_x)\n"), std::string::npos) << text;
}

TEST(LongSums, short_failing_or_unmarked_sums_keep_their_order) {
  EXPECT_EQ(loop_at(mark_long_sums(sum_loop(100).fn).body, 1).sum_into, -1);
  EXPECT_EQ(loop_at(mark_long_sums(sum_loop(1000, 0, true).fn).body, 1).sum_into, -1);
  Sum unmarked = sum_loop(1000);
  std::get<For>(unmarked.fn.body[1].op).sum_of = -1;  // a sum whose terms may be masked
  EXPECT_EQ(loop_at(mark_long_sums(unmarked.fn).body, 1).sum_into, -1);
}

TEST(LongSums, only_the_innermost_loop_of_a_nest_adds_in_lanes) {
  Sum s = sum_loop(1000, 300);
  const LoopFunction after = mark_long_sums(s.fn);
  const For& outer = loop_at(after.body, 1);
  EXPECT_EQ(outer.sum_into, -1);  // its body runs a loop
  EXPECT_EQ(loop_at(outer.body, 0).sum_into, s.acc);
}

// sum o. (sum i. in[i]) * in[o]: the inner sum's long loop adds in lanes of its own accumulator,
// not of the outer sum's, whose nest it stands in.
TEST(LongSums, a_sum_nested_in_a_term_of_another_keeps_its_own_accumulator) {
  Sum inner = sum_loop(1000);
  LoopFunction& fn = inner.fn;
  const LocalId total = fn.new_local("total", Scalar::F64);
  const LocalId o = fn.new_local("o", Scalar::I64);
  const LocalId in = 0;
  Body term = std::move(fn.body);  // inner_acc = 0; for i ... { inner_acc += in[i] }
  term.push_back(Stmt{Assign{
      total, prim(Prim::Add,
                  {local(fn, total), prim(Prim::Mul, {local(fn, inner.acc),
                                                      load(Scalar::F64, in, local(fn, o))})})}});
  For outer{o, lit_i64(0), lit_i64(300), std::move(term)};
  outer.sum_of = total;
  fn.body = Body{};
  fn.body.push_back(Stmt{Declare{total, lit_real(0)}});
  fn.body.push_back(Stmt{std::move(outer)});
  const LoopFunction after = mark_long_sums(fn);
  const For& around = loop_at(after.body, 1);
  EXPECT_EQ(around.sum_into, -1);  // its body runs a loop
  EXPECT_EQ(loop_at(around.body, 1).sum_into, inner.acc) << print_loop_function(after);
}

// out[i] = sum j. A[j, i] * x[j] over i < 6, j < 40, as the lowering writes it: a parallel
// generator loop whose body declares the accumulator, runs the sum's loop (sum_of) and stores.
// `row_stride` is A's stride along i (1: A read by rows once interchanged), `epilogue` adds
// exp(acc) before the store, `triangle` bounds j by i + 10 (the skipped points' flags unread).
struct Generator {
  LoopFunction fn;
  LocalId out = -1;
};
Generator generator_of_sums(int64_t row_stride, bool epilogue = false, bool triangle = false) {
  Generator g;
  LoopFunction& fn = g.fn;
  const LocalId a = fn.new_local("A", Scalar::F64, true);
  const LocalId x = fn.new_local("x", Scalar::F64, true);
  g.out = fn.new_local("out", Scalar::F64, true);
  const LocalId i = fn.new_local("i", Scalar::I64);
  const LocalId acc = fn.new_local("t", Scalar::F64);
  const LocalId j = fn.new_local("j", Scalar::I64);
  const LocalId t = fn.new_local("p", Scalar::F64);
  const LocalId strong = fn.new_local("t_strong", Scalar::Bool);
  ExprP at = add_i64(mul_i64(local(fn, j), lit_i64(row_stride == 1 ? 6 : 1)),
                     mul_i64(local(fn, i), lit_i64(row_stride)));
  Body term{Stmt{Declare{t, prim(Prim::Mul,
                                 {load(Scalar::F64, a, at), load(Scalar::F64, x, local(fn, j))})}},
            Stmt{Assign{acc, prim(Prim::Add, {local(fn, acc), local(fn, t)})}}};
  ExprP end = triangle ? add_i64(local(fn, i), lit_i64(10)) : lit_i64(40);
  For sum{j, lit_i64(0), end, std::move(term)};
  sum.sum_of = acc;
  sum.sum_masked = triangle;
  Body body;
  if (triangle) body.push_back(Stmt{Declare{strong, lit_bool(true)}});
  body.push_back(Stmt{Declare{acc, lit_real(0)}});
  body.push_back(Stmt{std::move(sum)});
  ExprP value = local(fn, acc);
  if (epilogue) {
    const LocalId e = fn.new_local("e", Scalar::F64);
    body.push_back(Stmt{Declare{e, prim(Prim::Exp, {local(fn, acc)})}});
    value = local(fn, e);
  }
  body.push_back(Stmt{Store{g.out, local(fn, i), value}});
  For gen{i, lit_i64(0), lit_i64(6), std::move(body)};
  gen.parallel = gen.independent = true;
  fn.body.push_back(Stmt{std::move(gen)});
  return g;
}

TEST(InterchangeSums, a_generator_of_sums_runs_the_sum_outside_its_points) {
  const std::string text = print_loop_function(interchange_sums(generator_of_sums(1).fn));
  EXPECT_NE(text.find("  f64* v8_acc = alloc 6 (stack)\n"
                      "  fill v8_acc[0] count 6 = 0\n"
                      "  for v5_j in [0, 40)\n"
                      "    for v3_i in [0, 6)\n"
                      "      f64 v6_p = (v0_A[((v5_j * 6) + v3_i)] * v1_x[v5_j])\n"
                      "      v8_acc[v3_i] = (v8_acc[v3_i] + v6_p)\n"
                      "  copy v2_out[0] <- v8_acc[0] count 6\n"),
            std::string::npos)
      << text;
}

TEST(InterchangeSums, the_rest_of_the_body_runs_per_element_after_the_sums) {
  const std::string text = print_loop_function(interchange_sums(generator_of_sums(1, true).fn));
  EXPECT_NE(text.find("  for v3_i in [0, 6)\n"
                      "    f64 v4_t = v9_acc[v3_i]\n"
                      "    f64 v8_e = exp(v4_t)\n"
                      "    v2_out[v3_i] = v8_e\n"),
            std::string::npos)
      << text;
}

TEST(InterchangeSums, a_triangle_bounds_the_loop_over_the_block) {
  const std::string text =
      print_loop_function(interchange_sums(generator_of_sums(1, false, true).fn));
  EXPECT_NE(text.find("  for v5_j in [0, 15)\n    for v3_i in [max(0, (v5_j + -9)), 6)\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("strong"), std::string::npos) << text;  // the unread flag is gone
}

// The pieces a window split cuts a generator into (sibling loops over [0, 1) and [1, 6)) share
// one block: one pass of the sum's loops per piece, one copy of the row.
TEST(InterchangeSums, the_pieces_of_a_split_generator_share_one_block) {
  Generator g = generator_of_sums(1);
  For second = std::get<For>(g.fn.body[0].op);
  std::get<For>(g.fn.body[0].op).end = lit_i64(1);
  second.begin = lit_i64(1);
  g.fn.body.push_back(Stmt{std::move(second)});
  const std::string text = print_loop_function(interchange_split_sums(g.fn));
  EXPECT_NE(text.find("  f64* v8_acc = alloc 6 (stack)\n"
                      "  fill v8_acc[0] count 6 = 0\n"
                      "  for v5_j in [0, 40)\n"
                      "    for v3_i in [0, 1)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  for v5_j in [0, 40)\n    for v3_i in [1, 6)\n"), std::string::npos)
      << text;
  EXPECT_NE(text.find("  copy v2_out[0] <- v8_acc[0] count 6\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("alloc", text.find("alloc") + 1), std::string::npos) << text;
}

TEST(InterchangeSums, strided_reads_short_sums_and_failing_terms_keep_the_plain_order) {
  Generator strided = generator_of_sums(40);  // A[i, j]: the inner loop would stride
  const std::string before = print_loop_function(strided.fn);
  EXPECT_EQ(print_loop_function(interchange_sums(strided.fn)), before);
  Generator failing = generator_of_sums(1);
  auto& sum = std::get<For>(std::get<For>(failing.fn.body[0].op).body[1].op);
  sum.body.insert(sum.body.begin(), Stmt{Fail{1, {}}});
  const std::string failing_before = print_loop_function(failing.fn);
  EXPECT_EQ(print_loop_function(interchange_sums(failing.fn)), failing_before);
  Generator short_sum = generator_of_sums(1);
  std::get<For>(std::get<For>(short_sum.fn.body[0].op).body[1].op).end = lit_i64(5);
  const std::string short_before = print_loop_function(short_sum.fn);
  EXPECT_EQ(print_loop_function(interchange_sums(short_sum.fn)), short_before);
}

// A generator of one point (the last row a window split peels off, alone): interchanged it would
// sum in the same order through a one-element array of accumulators.
TEST(InterchangeSums, a_generator_of_one_point_keeps_the_plain_order) {
  Generator one = generator_of_sums(1);
  std::get<For>(one.fn.body[0].op).begin = lit_i64(5);
  const std::string before = print_loop_function(one.fn);
  EXPECT_EQ(print_loop_function(interchange_sums(one.fn)), before);
}

// A program whose sum runs long, compiled natively with --dump-after's options: the loop IR of
// the function is printed after the pass, and shows the pass's work.
TEST(LoopPasses, dump_after_a_loop_pass_prints_the_loop_ir) {
  const char* src = R"(
def total(x: f64[n]) -> f64 {
  sum i. exp(x[i])
}
)";
  for (const std::string after : {"long-sums", "all"}) {
    std::vector<std::string> dumped;
    cotangent::LoadOptions lo;
    lo.dump_after = after;
    lo.dump = [&](const std::string& pass, const std::string& fn, const std::string& text) {
      dumped.push_back("# after " + pass + ": " + fn + "\n" + text);
    };
    auto m = cotangent::Module::from_string(src, "sums.cot", lo);
    ASSERT_TRUE(m.ok()) << m.message();
    ASSERT_TRUE(m.value().print("total").ok());  // prepares `total`: the Core IR passes run
    dumped.clear();                              // and, with "all", dump
    std::mt19937_64 rng(1);
    const std::vector<cotangent::Value> args{cotangent::e2e::uniform_tensor({1000}, rng)};
    auto compiled =
        m.value().compile({{"total", std::nullopt, {}, args}}, cotangent::CompileOptions{1, 0, {}});
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    ASSERT_EQ(dumped.size(), after == "all" ? loop_passes().size() : 1u);
    // interchange-sums, split-windows and interchange-split-sums run first
    const std::string& text = dumped.at(after == "all" ? 3 : 0);
    EXPECT_EQ(text.rfind("# after long-sums: total\nloop function cot_fn0\n", 0), 0u) << text;
    EXPECT_NE(text.find(") sum_of v"), std::string::npos) << text;
    EXPECT_NE(text.find(" sum_into v"), std::string::npos) << text;
    if (after == "all") {
      EXPECT_EQ(dumped.back().rfind("# after plan-memory: total\n", 0), 0u) << dumped.back();
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::codegen
