// Pair elimination (src/opt/pair_elim.h): projections of tuples built in the function become
// the elements, through guards and ifs too; projections of inputs stay.
#include "opt/pair_elim.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "opt/dce.h"
#include "opt/inline.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::Value;
using opt_test::compile;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run_pass;

ir::Program pairs(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::eliminate_pairs, opt::pair_elim_postcondition);
}

// Statements of kind T anywhere in fn.
template <class T>
int count_ops(const ir::Block& b) {
  int c = 0;
  for (const auto& s : b.stmts) {
    if (s.as<T>() != nullptr) ++c;
    std::visit(
        [&](const auto& o) {
          using O = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<O, ir::IfOp>) {
            c += count_ops<T>(o.then_branch) + count_ops<T>(o.else_branch);
          } else if constexpr (std::is_same_v<O, ir::GuardOp> || std::is_same_v<O, ir::GenOp> ||
                               std::is_same_v<O, ir::ReduceOp>) {
            c += count_ops<T>(o.body);
          }
        },
        s.op);
  }
  return c;
}
template <class T>
int count_ops(const ir::Program& p, const std::string& fn) {
  return count_ops<T>(p.find(fn)->body);
}

TEST(OptPairElim, ProjectionsOfInlinedTuples) {
  auto p = compile(R"(
def two(x: f64) -> (f64, f64) { (x * 2.0, x + 1.0) }
def nest(x: f64) -> ((f64, f64), f64) { ((x, x * 2.0), x + 1.0) }
def f(x: f64) -> f64 {
  let (a, b) = two(x)
  let ((c, d), e) = nest(a)
  a * b + c * d * e
}
)");
  auto inlined = run_pass(p, "f", opt::inline_functions, opt::no_inlinable_calls);
  ASSERT_GT(count_ops<ir::ProjOp>(inlined, "f"), 0) << printed(inlined, "f");
  EXPECT_TRUE(opt::pair_elim_postcondition(inlined, *inlined.find("f")).has_value());
  auto q = pairs(inlined, "f");
  EXPECT_EQ(count_ops<ir::ProjOp>(q, "f"), 0) << printed(q, "f");
  auto r = run_pass(q, "f", opt::eliminate_dead_code, opt::dce_postcondition);
  EXPECT_EQ(count_ops<ir::TupleOp>(r, "f"), 0) << printed(r, "f");
  EXPECT_EQ(printed(r, "f"), R"(def f(x: f64) -> f64 {
  let t1 = x * 2.0
  let t2 = x + 1.0
  let t6 = t1 * 2.0
  let t8 = t1 + 1.0
  let t14 = t1 * t2
  let t15 = t1 * t6
  let t16 = t15 * t8
  let t17 = t14 + t16
  t17
}
)");
  for (double x : {-1.0, 0.5, 3.0}) expect_same_values(inlined, r, "f", {Value::f64(x)});
}

TEST(OptPairElim, ProjectionsOfInputsStay) {
  auto p = compile(R"(
def pp(p: (f64, f64)) -> f64 { let (a, b) = p; a + b }
)");
  auto q = pairs(p, "pp");
  EXPECT_EQ(printed(q, "pp"), printed(p, "pp"));
  EXPECT_EQ(count_ops<ir::ProjOp>(q, "pp"), 2);
}

// The checker gives `if` one result per leaf; a tuple-typed if or guard result (which other
// passes may build) is split so the projections inside can go.
ir::Program tuple_branches(bool guard) {
  ir::Program p;
  p.sources = std::make_shared<SourceManager>();
  ir::Function f;
  f.name = "f";
  ir::Builder b(f);
  const ir::VarId x = b.param("x", Type::scalar(Scalar::F64));
  const ir::VarId c = b.param("c", Type::scalar(Scalar::Bool));
  auto then_fn = [&] {
    const ir::VarId e = b.prim(Prim::Exp, {ir::Atom::of(x)});
    return std::vector<ir::Atom>{ir::Atom::of(b.tuple({ir::Atom::of(x), ir::Atom::of(e)}))};
  };
  auto else_fn = [&] {
    const ir::VarId d = b.prim(Prim::Mul, {ir::Atom::of(x), ir::Atom::real(2.0)});
    return std::vector<ir::Atom>{ir::Atom::of(b.tuple({ir::Atom::of(d), ir::Atom::of(x)}))};
  };
  const ir::VarId r =
      guard ? b.guard(Pred::atom_of(c), then_fn)[0] : b.if_(ir::Atom::of(c), then_fn, else_fn)[0];
  const ir::VarId p0 = b.proj(ir::Atom::of(r), 0);
  const ir::VarId p1 = b.proj(ir::Atom::of(r), 1);
  b.finish({ir::Atom::of(b.prim(Prim::Add, {ir::Atom::of(p0), ir::Atom::of(p1)}))});
  p.functions.push_back(f);
  return p;
}

TEST(OptPairElim, ThroughIfAndGuardResults) {
  for (bool guard : {false, true}) {
    auto p = tuple_branches(guard);
    auto q = pairs(p, "f");
    auto r = run_pass(q, "f", opt::eliminate_dead_code, opt::dce_postcondition);
    EXPECT_EQ(count_ops<ir::ProjOp>(r, "f"), 0) << printed(r, "f");
    EXPECT_EQ(count_ops<ir::TupleOp>(r, "f"), 0) << printed(r, "f");
    EXPECT_EQ(r.find("f")->body.stmts.front().results.size(), 2u) << printed(r, "f");
    for (bool c : {true, false}) {
      expect_same_values(p, r, "f", {Value::f64(0.75), Value::boolean(c)});
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
