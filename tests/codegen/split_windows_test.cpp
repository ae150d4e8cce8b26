// The split-windows loop pass (codegen/split_windows.h) on a hand-built window: a generator
// loop over g whose inner sum runs [max(0, g - 4), min(20, g + 1)) with an index check, split at
// the borders and each piece simplified under g's range (docs/design.md §10).
#include "codegen/split_windows.h"

#include <gtest/gtest.h>

#include <string>

#include "codegen/expr.h"
#include "codegen/loop_intervals.h"
#include "codegen/loop_ir_printer.h"

namespace cot::codegen {
namespace COTANGENT_TEST_UNIT {

// out[g] = sum i in [max(0, g - 4), min(20, g + 1)) of x[i], for g < 24, the read checked.
LoopFunction window(int64_t gens) {
  LoopFunction fn;
  fn.name = "window";
  const LocalId x = fn.new_local("x", Scalar::F64, true);
  const LocalId out = fn.new_local("out", Scalar::F64, true);
  const LocalId g = fn.new_local("g", Scalar::I64);
  const LocalId acc = fn.new_local("acc", Scalar::F64);
  const LocalId lo = fn.new_local("lo", Scalar::I64);
  const LocalId hi = fn.new_local("hi", Scalar::I64);
  const LocalId i = fn.new_local("i", Scalar::I64);
  const ExprP gv = local(fn, g), iv = local(fn, i);
  Body term;
  term.push_back(Stmt{If{prim(Prim::Ge, {iv, lit_i64(20)}), Body{Stmt{Fail{1, {iv}}}}, {}}});
  term.push_back(Stmt{Assign{acc, prim(Prim::Add, {local(fn, acc), load(Scalar::F64, x, iv)})}});
  Body point;
  point.push_back(Stmt{Declare{acc, lit_real(0)}});
  point.push_back(Stmt{Declare{lo, prim(Prim::Max, {lit_i64(0), sub_i64(gv, lit_i64(4))})}});
  point.push_back(Stmt{Declare{hi, prim(Prim::Min, {lit_i64(20), add_i64(gv, lit_i64(1))})}});
  point.push_back(Stmt{For{i, local(fn, lo), local(fn, hi), std::move(term)}});
  point.push_back(Stmt{Store{out, gv, local(fn, acc)}});
  For gen{g, lit_i64(0), lit_i64(gens), std::move(point), true};
  gen.independent = true;
  fn.body.push_back(Stmt{std::move(gen)});
  return fn;
}

TEST(SplitWindows, a_clipped_window_splits_at_the_borders) {
  const std::string before = print_loop_function(window(24));
  EXPECT_NE(before.find("for v6_i in [v4_lo, v5_hi)"), std::string::npos) << before;
  const std::string after = print_loop_function(split_windows(window(24)));
  // max(0, g - 4) picks g - 4 from g = 5 on (at 4 both are 0); min(20, g + 1) picks 20 from
  // g = 20 on. The index check i >= 20 folds away in every piece.
  const std::string want = R"(loop function window
  for v2_g in [0, 5) parallel independent
    f64 v3_acc = 0
    i64 v5_hi = (v2_g + 1)
    for v6_i in [0, v5_hi)
      v3_acc = (v3_acc + v0_x[v6_i])
    v1_out[v2_g] = v3_acc
  for v2_g in [5, 20) parallel independent
    f64 v3_acc = 0
    i64 v4_lo = (v2_g - 4)
    i64 v5_hi = (v2_g + 1)
    for v7_t in [0, 5)
      i64 v6_i = (v4_lo + v7_t)
      v3_acc = (v3_acc + v0_x[v6_i])
    v1_out[v2_g] = v3_acc
  for v2_g in [20, 24) parallel independent
    f64 v3_acc = 0
    i64 v4_lo = (v2_g - 4)
    for v6_i in [v4_lo, 20)
      v3_acc = (v3_acc + v0_x[v6_i])
    v1_out[v2_g] = v3_acc
)";
  EXPECT_EQ(after, want);
}

TEST(SplitWindows, a_loop_the_window_never_clips_stays_whole) {
  // g < 4: max(0, g - 4) is always 0 and min(20, g + 1) always g + 1; nothing changes side.
  const std::string after = print_loop_function(split_windows(window(4)));
  EXPECT_NE(after.find("for v2_g in [0, 4) parallel independent\n"), std::string::npos) << after;
  EXPECT_EQ(after.find("[4, "), std::string::npos) << after;
  EXPECT_NE(after.find("max"), std::string::npos) << after;  // not a piece: nothing folds
}

TEST(SplitWindows, a_triangle_peels_the_row_where_its_bound_is_the_whole_range) {
  // for r < 10 { strong = r + 1 < 10; hi = r + 1; for c in [0, hi) acc += x[c] }: the bound
  // moves with r and the flag's test changes at r = 9, where the row runs all 10 points.
  LoopFunction fn;
  fn.name = "triangle";
  const LocalId x = fn.new_local("x", Scalar::F64, true);
  const LocalId r = fn.new_local("r", Scalar::I64);
  const LocalId strong = fn.new_local("strong", Scalar::Bool);
  const LocalId acc = fn.new_local("acc", Scalar::F64);
  const LocalId hi = fn.new_local("hi", Scalar::I64);
  const LocalId c = fn.new_local("c", Scalar::I64);
  const ExprP rv = local(fn, r);
  Body term{
      Stmt{Assign{acc, prim(Prim::Add, {local(fn, acc), load(Scalar::F64, x, local(fn, c))})}}};
  Body row;
  row.push_back(Stmt{Declare{strong, prim(Prim::Lt, {add_i64(rv, lit_i64(1)), lit_i64(10)})}});
  row.push_back(Stmt{Declare{acc, lit_real(0)}});
  row.push_back(Stmt{Declare{hi, add_i64(rv, lit_i64(1))}});
  row.push_back(Stmt{For{c, lit_i64(0), local(fn, hi), std::move(term)}});
  For gen{r, lit_i64(0), lit_i64(10), std::move(row)};
  gen.independent = true;
  fn.body.push_back(Stmt{std::move(gen)});
  const std::string after = print_loop_function(split_windows(std::move(fn)));
  const std::string want = R"(loop function triangle
  for v1_r in [0, 9) independent
    bool v2_strong = true
    f64 v3_acc = 0
    i64 v4_hi = (v1_r + 1)
    for v5_c in [0, v4_hi)
      v3_acc = (v3_acc + v0_x[v5_c])
  for v1_r in [9, 10) independent
    bool v2_strong = false
    f64 v3_acc = 0
    for v5_c in [0, 10)
      v3_acc = (v3_acc + v0_x[v5_c])
)";
  EXPECT_EQ(after, want);
}

// The window with its store in a branch on g < 5, which every piece decides: the branch taken
// joins the piece's body, unless its declaration names a local the other branch declares too.
LoopFunction window_with_branch(bool both_declare) {
  LoopFunction fn = window(24);
  const LocalId x = 0, out = 1, g = 2, acc = 3;
  const LocalId y = fn.new_local("y", Scalar::F64);
  const ExprP gv = local(fn, g);
  auto& point = std::get<For>(fn.body[0].op).body;
  point.pop_back();  // the store
  Body then_body{Stmt{Declare{y, load(Scalar::F64, x, gv)}},
                 Stmt{Store{out, gv, prim(Prim::Add, {local(fn, acc), local(fn, y)})}}};
  Body else_body;
  if (both_declare) else_body.push_back(Stmt{Declare{y, local(fn, acc)}});
  else_body.push_back(Stmt{Store{out, gv, both_declare ? local(fn, y) : local(fn, acc)}});
  point.push_back(
      Stmt{If{prim(Prim::Lt, {gv, lit_i64(5)}), std::move(then_body), std::move(else_body)}});
  return fn;
}

TEST(SplitWindows, a_branch_each_piece_decides_joins_the_piece) {
  const std::string after = print_loop_function(split_windows(window_with_branch(false)));
  EXPECT_EQ(after.find("if"), std::string::npos) << after;
  EXPECT_NE(after.find(R"(      v3_acc = (v3_acc + v0_x[v6_i])
    f64 v7_y = v0_x[v2_g]
    v1_out[v2_g] = (v3_acc + v7_y)
  for v2_g in [5, 20))"),
            std::string::npos)
      << after;
  EXPECT_NE(after.find(R"(      v3_acc = (v3_acc + v0_x[v6_i])
    v1_out[v2_g] = v3_acc
  for v2_g in [20, 24))"),
            std::string::npos)
      << after;
}

TEST(SplitWindows, a_branch_whose_local_is_declared_twice_keeps_its_block) {
  const std::string after = print_loop_function(split_windows(window_with_branch(true)));
  EXPECT_NE(after.find(R"(    if true
      f64 v7_y = v0_x[v2_g]
      v1_out[v2_g] = (v3_acc + v7_y)
  for v2_g in [5, 20))"),
            std::string::npos)
      << after;
}

TEST(LoopIntervals, folds_what_the_ranges_decide) {
  LoopFunction fn;
  const LocalId g = fn.new_local("g", Scalar::I64);
  LoopIntervals env;
  env.set(g, Range{5, 9});
  const ExprP gv = local(fn, g);
  const ExprP shifted = sub_i64(gv, lit_i64(4));
  EXPECT_EQ(env.fold(prim(Prim::Max, {lit_i64(0), shifted})), shifted);
  EXPECT_EQ(as_bool(env.fold(prim(Prim::Lt, {gv, lit_i64(10)}))), true);
  EXPECT_EQ(as_bool(env.fold(prim(Prim::Lt, {gv, lit_i64(7)}))), std::nullopt);
  EXPECT_TRUE(env.fits(Prim::Mul, {gv, lit_i64(1000)}));
  EXPECT_FALSE(env.fits(Prim::Mul, {gv, lit_i64(INT64_MAX)}));
  env.set(g, Range{3, 3});
  EXPECT_EQ(as_i64(env.fold(gv)), 3);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::codegen
