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
#include "codegen/long_sums.h"
#include "codegen/loop_ir_printer.h"
#include "cotangent/cotangent.h"
#include "e2e/e2e_cases.h"

namespace cot::codegen {
namespace COTANGENT_TEST_UNIT {

TEST(LoopPasses, the_table_runs_the_schedule_passes_first_and_the_memory_plan_last) {
  std::vector<std::string> names;
  for (const LoopPass& p : loop_passes()) names.emplace_back(p.name);
  EXPECT_EQ(names, (std::vector<std::string>{"split-windows", "long-sums", "recompute-tables",
                                             "fuse-loops", "partition-loops", "plan-memory"}));
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
    dumped.clear();  // the Core IR passes' dumps, with "all"
    std::mt19937_64 rng(1);
    const std::vector<cotangent::Value> args{cotangent::e2e::uniform_tensor({1000}, rng)};
    auto compiled =
        m.value().compile({{"total", std::nullopt, {}, args}}, cotangent::CompileOptions{1, 0, {}});
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    ASSERT_EQ(dumped.size(), after == "all" ? loop_passes().size() : 1u);
    const std::string& text = dumped.at(after == "all" ? 1 : 0);  // split-windows runs first
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
