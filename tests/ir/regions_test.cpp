// ir::for_each_region_in (issue 27): every region of every Op kind, with the frame that opens
// it, in evaluation order; for_each_region and the optimizer's for_each_region_frame are built
// on it. Exhaustiveness itself is checked by the compiler (ir/match.h): a new Op kind without a
// case does not build.
#include "ir/regions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ad/ad_test_util.h"

namespace cot::ir {
namespace COTANGENT_TEST_UNIT {

const char* const kSource = R"(
def f(x: f64[n], k: i64) -> f64 {
  let g = for i. [i > 0] * x[i]
  let r = sum i. x[i] * g[i]
  let a = accum[n] i. (i, x[i])
  let c = if k > 2 then r else r + 1.0
  let w = loop v = 0 while v < k { v + 1 }
  let l = loop s = c for t < k { s + a[0] }
  l + f64(w)
}
)";

std::string kind_name(RegionFrame::Kind k) {
  switch (k) {
    case RegionFrame::Kind::Body:
      return "body";
    case RegionFrame::Kind::Index:
      return "index";
    case RegionFrame::Kind::Guard:
      return "guard";
    case RegionFrame::Kind::IfBranch:
      return "if";
    case RegionFrame::Kind::ForBody:
      return "for";
    case RegionFrame::Kind::WhileBody:
      return "while";
    case RegionFrame::Kind::WhileCond:
      return "cond";
  }
  return "?";
}

// The frames of the function's regions, depth first, each as `kind(ivars|iter)`.
void walk(const Function& f, const Block& b, std::vector<std::string>& out) {
  for (const Stmt& s : b.stmts) {
    for_each_region_in(s, [&](const RegionFrame& fr, const Block& r) {
      std::string what = kind_name(fr.kind);
      for (const IndexVar& iv : fr.ivars) what += " " + f.vars[static_cast<size_t>(iv.var)].name;
      if (fr.kind == RegionFrame::Kind::ForBody) {
        what += " " + f.vars[static_cast<size_t>(fr.iter)].name;
      }
      out.push_back(what);
      walk(f, r, out);
    });
  }
}

TEST(IrRegions, EveryRegionWithItsFrameInEvaluationOrder) {
  Program p = ad_test::compile(kSource, /*with_prelude=*/false);
  const Function& f = *p.find("f");
  std::vector<std::string> frames;
  walk(f, f.body, frames);
  const std::vector<std::string> want = {"index i", "guard", "index i", "index i", "if",
                                         "if",      "cond",  "while",   "for t"};
  EXPECT_EQ(frames, want);
}

TEST(IrRegions, ForEachRegionVisitsTheSameBlocksMutably) {
  Program p = ad_test::compile(kSource, /*with_prelude=*/false);
  Function& f = p.functions.at(0);
  std::vector<const Block*> seen_const, seen;
  for (const Stmt& s : std::as_const(f.body).stmts) {
    for_each_region(s, [&](const Block& b) { seen_const.push_back(&b); });
  }
  for (Stmt& s : f.body.stmts) {
    for_each_region(s, [&](Block& b) { seen.push_back(&b); });
  }
  EXPECT_EQ(seen, seen_const);
  EXPECT_EQ(seen.size(), 8u);  // gen, reduce, accum, 2 if branches, while cond + body, for body
}

// Pre-order: each statement before those of its regions, every nested statement once.
TEST(IrRegions, ForEachStmtVisitsEveryStatementBeforeItsRegions) {
  Program p = ad_test::compile(kSource, /*with_prelude=*/false);
  const Function& f = *p.find("f");
  std::vector<const Stmt*> order;
  for_each_stmt(f.body, [&](const Stmt& s) { order.push_back(&s); });
  size_t manual = 0;
  auto count = [&](auto&& self, const Block& b) -> void {
    for (const Stmt& s : b.stmts) {
      ++manual;
      for_each_region(s, [&](const Block& r) { self(self, r); });
    }
  };
  count(count, f.body);
  EXPECT_EQ(order.size(), manual);
  EXPECT_GT(order.size(), f.body.stmts.size());
  // The generator comes right before the first statement of its body.
  const Stmt& gen = f.body.stmts.front();
  ASSERT_TRUE(gen.as<GenOp>() != nullptr);
  EXPECT_EQ(order[0], &gen);
  EXPECT_EQ(order[1], &gen.as<GenOp>()->body.stmts.front());
}

TEST(IrRegions, FindStmtReturnsTheFirstInProgramOrder) {
  Program p = ad_test::compile(kSource, /*with_prelude=*/false);
  const Function& f = *p.find("f");
  // The first read of x is inside the generator's guard, before the sum's reads.
  const Stmt* read = find_stmt(f.body, [](const Stmt& s) { return s.as<IndexOp>() != nullptr; });
  ASSERT_NE(read, nullptr);
  const Stmt* in_gen = find_stmt(f.body.stmts.front().as<GenOp>()->body,
                                 [](const Stmt& s) { return s.as<IndexOp>() != nullptr; });
  EXPECT_EQ(read, in_gen);
  EXPECT_EQ(find_stmt(f.body, [](const Stmt& s) { return s.as<CallOp>() != nullptr; }), nullptr);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::ir
