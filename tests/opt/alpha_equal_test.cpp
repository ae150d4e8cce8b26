// Alpha-equivalence of statements (src/opt/alpha_equal.h): equal up to renaming of the
// variables they bind, with commutative primitives compared in either order.
#include "opt/alpha_equal.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using opt_test::compile;

// The top-level statement of `fn` that binds the k-th component of the tuple it returns.
const ir::Stmt& component(const ir::Program& p, const std::string& fn, size_t k) {
  const ir::Function& f = *p.find(fn);
  const auto& t = std::get<ir::TupleOp>(f.body.stmts.back().op);
  const ir::VarId v = t.elems.at(k).var;
  for (const auto& s : f.body.stmts) {
    for (ir::VarId r : s.results) {
      if (r == v) return s;
    }
  }
  ADD_FAILURE() << "no statement binds component " << k;
  return f.body.stmts.front();
}

// Whether components a and b of fn's result are alpha-equal; checks that the hash agrees.
bool same(const ir::Program& p, const std::string& fn, size_t a, size_t b) {
  const ir::Function& f = *p.find(fn);
  const ir::Stmt &x = component(p, fn, a), &y = component(p, fn, b);
  const bool eq = opt::alpha_equal(f, x, y);
  EXPECT_EQ(eq, opt::alpha_equal(f, y, x)) << "not symmetric";
  if (eq) {
    EXPECT_EQ(opt::alpha_hash(f, x), opt::alpha_hash(f, y)) << "equal but hashes differ";
  }
  return eq;
}

TEST(OptAlphaEqual, RenamedIndexVariables) {
  auto p = compile(R"(
def f(x: f64[n], A: f64[n, n]) -> (f64, f64, f64[n], f64[n], f64[n]) {
  (sum i. x[i], sum k. x[k], for i. sum j. A[i, j], for k. sum l. A[k, l], for i. sum j. A[j, i])
}
)");
  EXPECT_TRUE(same(p, "f", 0, 1));
  EXPECT_TRUE(same(p, "f", 2, 3));
  EXPECT_FALSE(same(p, "f", 2, 4));  // a transposed read is another computation
  EXPECT_TRUE(opt::alpha_equal(*p.find("f"), component(p, "f", 0), component(p, "f", 0)));
}

TEST(OptAlphaEqual, RangesOperandsAndKinds) {
  auto p = compile(R"(
def f(x: f64[n], y: f64[n]) -> (f64, f64, f64, f64, f64, f64) {
  (sum i. x[i], sum i: n - 1. x[i], sum i. y[i], max i. x[i], sum i. x[i] * x[i],
   sum i. [i > 0] * x[i])
}
)");
  for (size_t k = 1; k < 6; ++k) EXPECT_FALSE(same(p, "f", 0, k)) << "component " << k;
}

TEST(OptAlphaEqual, CommutativePrimitives) {
  auto p = compile(R"(
def f(x: f64, y: f64) -> (f64, f64, f64, f64, f64, f64, f64, f64) {
  (x + y, y + x, x * y, y * x, x - y, y - x, max(x, y), max(y, x))
}
)");
  EXPECT_TRUE(same(p, "f", 0, 1));
  EXPECT_TRUE(same(p, "f", 2, 3));
  EXPECT_FALSE(same(p, "f", 4, 5));
  EXPECT_TRUE(same(p, "f", 6, 7));
  EXPECT_FALSE(same(p, "f", 0, 2));
}

TEST(OptAlphaEqual, CommutativeInsideRegions) {
  auto p = compile(R"(
def f(x: f64[n], y: f64[n]) -> (f64, f64, f64) {
  (sum i. x[i] * y[i], sum j. y[j] * x[j], sum j. y[j] - x[j])
}
)");
  EXPECT_TRUE(same(p, "f", 0, 1));
  EXPECT_FALSE(same(p, "f", 0, 2));
}

TEST(OptAlphaEqual, LiteralsByTypeAndBits) {
  auto p = compile(R"(
def f(x: f64) -> (f64, f64, f64, f64) {
  (x * 0.0, x * -0.0, x * 0.0, x * 2.0)
}
)");
  EXPECT_TRUE(same(p, "f", 0, 2));
  EXPECT_FALSE(same(p, "f", 0, 1));  // -0 and 0 differ (1 / (x * -0.0) is -inf)
  EXPECT_FALSE(same(p, "f", 0, 3));
}

TEST(OptAlphaEqual, LoopsGuardsAndIfs) {
  auto p = compile(R"(
def f(x: f64, k: i64, c: bool) -> (f64, f64, f64, f64, f64, f64) {
  (loop s = x for t < k { s * x }, loop u = x for r < k { u * x }, loop u = x for r < k { u + x },
   if c then exp(x) else x, if c then exp(x) else x, if c then x else exp(x))
}
)");
  EXPECT_TRUE(same(p, "f", 0, 1));
  EXPECT_FALSE(same(p, "f", 0, 2));
  EXPECT_TRUE(same(p, "f", 3, 4));
  EXPECT_FALSE(same(p, "f", 3, 5));
}

// Regions compare as dataflow: statement order and unused statements do not matter.
TEST(OptAlphaEqual, RegionsCompareAsDataflow) {
  auto p = compile(R"(
def f(x: f64[n], y: f64[n]) -> (f64, f64, f64) {
  (sum i. x[i] * y[i], sum j. { let unused = exp(x[j]); y[j] * x[j] }, sum j. y[j] * y[j])
}
)");
  EXPECT_TRUE(same(p, "f", 0, 1));
  EXPECT_FALSE(same(p, "f", 0, 2));
}

// Saving loops bind their own dynamic size: never equal, even to an identical copy.
TEST(OptAlphaEqual, SavingLoopsAreNeverEqual) {
  ir::Program p;
  ir::Function f;
  f.name = "f";
  {
    ir::Builder b(f);
    const ir::VarId x = b.param("x", Type::scalar(Scalar::F64));
    auto body = [&](const std::vector<ir::VarId>& s, ir::VarId) {
      return std::vector<ir::Atom>{
          ir::Atom::of(b.prim(Prim::Mul, {ir::Atom::of(s[0]), ir::Atom::of(x)}))};
    };
    auto a = b.loop_for_saving({ir::Atom::of(x)}, ir::Atom::i64(3), body);
    auto c = b.loop_for_saving({ir::Atom::of(x)}, ir::Atom::i64(3), body);
    b.finish({ir::Atom::of(a.final_state[0]), ir::Atom::of(c.final_state[0])});
  }
  EXPECT_FALSE(opt::alpha_equal(f, f.body.stmts[0], f.body.stmts[1]));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
