#include "ir/builder.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace cot::ir {
namespace COTANGENT_TEST_UNIT {

SizeExpr sv(const char* n) {
  return SizeExpr::var(n);
}
Type f64v(std::vector<SizeExpr> shape) {
  return Type::tensor(Scalar::F64, std::move(shape));
}
const Type kF64 = Type::scalar(Scalar::F64);
const Type kI64 = Type::scalar(Scalar::I64);
const Type kBool = Type::scalar(Scalar::Bool);

TEST(Builder, ParamsBindSizeVariablesAtTheirFirstBareOccurrence) {
  Function f;
  f.name = "f";
  Builder b(f);
  // `k + 1` is not a binding site; the bare `k` inside the tuple is.
  VarId a = b.param("A", f64v({sv("m"), sv("n")}));
  VarId x = b.param("x", f64v({sv("n")}));
  VarId t = b.param("t", Type::tuple({f64v({sv("k") + SizeExpr::constant(1)}), f64v({sv("k")})}));
  EXPECT_EQ(f.params, (std::vector<VarId>{a, x, t}));
  EXPECT_EQ(f.param_spans.size(), 3u);
  ASSERT_EQ(f.size_vars.size(), 3u);
  EXPECT_EQ(f.size_vars[0].name, "m");
  EXPECT_EQ(f.size_vars[0].param, 0);
  EXPECT_EQ(f.size_vars[0].dim, 0);
  EXPECT_EQ(f.size_vars[1].name, "n");
  EXPECT_EQ(f.size_vars[1].param, 0);
  EXPECT_EQ(f.size_vars[1].dim, 1);
  EXPECT_EQ(f.size_vars[2].name, "k");
  EXPECT_EQ(f.size_vars[2].param, 2);
  EXPECT_EQ(f.size_vars[2].path, std::vector<int>{1});
  EXPECT_EQ(f.size_vars[2].dim, 0);
  for (const auto& s : f.size_vars) {
    EXPECT_EQ(f.type_of(s.var), kI64);
    EXPECT_EQ(f.vars[static_cast<size_t>(s.var)].name, s.name);
  }
  EXPECT_EQ(b.size_var("n"), f.size_vars[1].var);
  EXPECT_THROW(b.size_var("q"), std::logic_error);
}

TEST(Builder, PrimitiveResultTypesComeFromThePrimitiveTable) {
  Function f;
  Builder b(f);
  VarId x = b.param("x", kF64);
  VarId i = b.param("i", kI64);
  VarId v = b.param("v", f64v({sv("n")}));
  EXPECT_EQ(f.type_of(b.prim(Prim::Add, {Atom::of(x), Atom::real(1)})), kF64);
  EXPECT_EQ(f.type_of(b.prim(Prim::Lt, {Atom::of(i), Atom::i64(3)})), kBool);
  EXPECT_EQ(f.type_of(b.prim(Prim::ToF32, {Atom::of(i)})), Type::scalar(Scalar::F32));
  EXPECT_EQ(f.body.stmts.size(), 3u);
  // Mixed operand types and tensors are misuse.
  EXPECT_THROW(b.prim(Prim::Add, {Atom::of(x), Atom::of(i)}), std::logic_error);
  EXPECT_THROW(b.prim(Prim::Exp, {Atom::of(v)}), std::logic_error);
  EXPECT_EQ(f.body.stmts.size(), 3u);
}

TEST(Builder, IndexGivesTheRemainingDimensions) {
  Function f;
  Builder b(f);
  VarId a = b.param("A", f64v({sv("m"), sv("n")}));
  VarId i = b.index_var("i");
  VarId row = b.index(Atom::of(a), {affine_index(Affine::var(i))});
  EXPECT_EQ(f.type_of(row), f64v({sv("n")}));
  VarId e = b.index(Atom::of(a), {affine_index(Affine::var(i)), computed_index(Atom::i64(0))});
  EXPECT_EQ(f.type_of(e), kF64);
  EXPECT_THROW(b.index(Atom::of(row), {computed_index(Atom::i64(0)), computed_index(Atom::i64(0))}),
               std::logic_error);
}

TEST(Builder, RegionsNestStatementsAndTypeTheResults) {
  Function f;
  f.name = "matvec";
  Builder b(f);
  VarId a = b.param("A", f64v({sv("m"), sv("n")}));
  VarId x = b.param("x", f64v({sv("n")}));
  VarId i = b.index_var("i");
  VarId j = b.index_var("j");
  VarId y = b.gen({{i, sv("m")}}, [&] {
    VarId s = b.reduce(ReduceKind::Sum, {{j, sv("n")}}, [&] {
      VarId aij =
          b.index(Atom::of(a), {affine_index(Affine::var(i)), affine_index(Affine::var(j))});
      VarId xj = b.index(Atom::of(x), {affine_index(Affine::var(j))});
      return Atom::of(b.prim(Prim::Mul, {Atom::of(aij), Atom::of(xj)}));
    });
    return Atom::of(s);
  });
  b.finish({Atom::of(y)});

  EXPECT_EQ(f.type_of(y), f64v({sv("m")}));
  EXPECT_EQ(f.result_type, f64v({sv("m")}));
  ASSERT_EQ(f.body.stmts.size(), 1u);
  const auto* gen = f.body.stmts[0].as<GenOp>();
  ASSERT_NE(gen, nullptr);
  ASSERT_EQ(gen->body.stmts.size(), 1u);
  const auto* red = gen->body.stmts[0].as<ReduceOp>();
  ASSERT_NE(red, nullptr);
  EXPECT_EQ(red->body.stmts.size(), 3u);
  EXPECT_EQ(f.body.results, std::vector<Atom>{Atom::of(y)});

  // A tensor-valued generator body extends the shape.
  Function g;
  Builder c(g);
  VarId v = c.param("v", f64v({sv("n")}));
  VarId k = c.index_var("k");
  VarId rep = c.gen({{k, SizeExpr::constant(3)}}, [&] { return Atom::of(v); });
  EXPECT_EQ(g.type_of(rep), f64v({SizeExpr::constant(3), sv("n")}));
}

TEST(Builder, GuardIfAndLoopsTypeTheirResultsFromTheirBodies) {
  Function f;
  Builder b(f);
  VarId x = b.param("x", kF64);
  VarId n = b.param("n", kI64);
  VarId c = b.prim(Prim::Gt, {Atom::of(x), Atom::real(0)});

  auto g = b.guard(Pred::atom_of(c), [&] { return std::vector<Atom>{Atom::of(x), Atom::i64(1)}; });
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(f.type_of(g[0]), kF64);
  EXPECT_EQ(f.type_of(g[1]), kI64);

  auto r = b.if_(
      Atom::of(c), [&] { return std::vector<Atom>{Atom::of(x)}; },
      [&] { return std::vector<Atom>{Atom::real(0)}; });
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(f.type_of(r[0]), kF64);

  VarId seen_iter = -2;
  auto l = b.loop_for({Atom::of(x), Atom::i64(0)}, Atom::of(n),
                      [&](const std::vector<VarId>& s, VarId t) {
                        seen_iter = t;
                        return std::vector<Atom>{
                            Atom::of(b.prim(Prim::Mul, {Atom::of(s[0]), Atom::real(2)})),
                            Atom::of(b.prim(Prim::Add, {Atom::of(s[1]), Atom::of(t)}))};
                      },
                      {"acc", "k"});
  ASSERT_EQ(l.size(), 2u);
  EXPECT_EQ(f.type_of(l[1]), kI64);
  const auto* loop = f.body.stmts.back().as<LoopOp>();
  ASSERT_NE(loop, nullptr);
  EXPECT_FALSE(loop->is_while);
  EXPECT_EQ(loop->iter, seen_iter);
  EXPECT_EQ(f.type_of(loop->iter), kI64);
  EXPECT_EQ(f.vars[static_cast<size_t>(loop->state[0])].name, "acc");
  EXPECT_EQ(loop->body.stmts.size(), 2u);

  auto w = b.loop_while(
      {Atom::of(x)},
      [&](const std::vector<VarId>& s) {
        return Atom::of(b.prim(Prim::Lt, {Atom::of(s[0]), Atom::real(100)}));
      },
      [&](const std::vector<VarId>& s, VarId t) {
        EXPECT_EQ(t, -1);
        return std::vector<Atom>{Atom::of(b.prim(Prim::Mul, {Atom::of(s[0]), Atom::real(2)}))};
      });
  const auto* wl = f.body.stmts.back().as<LoopOp>();
  ASSERT_NE(wl, nullptr);
  EXPECT_TRUE(wl->is_while);
  EXPECT_EQ(wl->iter, -1);
  EXPECT_EQ(wl->cond.stmts.size(), 1u);
  EXPECT_EQ(f.type_of(w[0]), kF64);
}

TEST(Builder, AccumTupleProjSizeAndCall) {
  Function f;
  Builder b(f);
  VarId idx = b.param("idx", Type::tensor(Scalar::I64, {sv("m")}));
  VarId v = b.param("v", f64v({sv("m"), sv("d")}));
  VarId o = b.index_var("o");
  VarId acc = b.accum({sv("n")}, {{o, sv("m")}}, [&] {
    VarId k = b.index(Atom::of(idx), {affine_index(Affine::var(o))});
    VarId row = b.index(Atom::of(v), {affine_index(Affine::var(o))});
    return std::vector<Atom>{Atom::of(k), Atom::of(row)};
  });
  EXPECT_EQ(f.type_of(acc), f64v({sv("n"), sv("d")}));
  EXPECT_THROW(b.accum({sv("n")}, {}, [&] { return std::vector<Atom>{Atom::real(1)}; }),
               std::logic_error);

  VarId t = b.tuple({Atom::of(acc), Atom::i64(2)});
  EXPECT_EQ(f.type_of(t), Type::tuple({f64v({sv("n"), sv("d")}), Type::scalar(Scalar::I64)}));
  EXPECT_EQ(f.type_of(b.proj(Atom::of(t), 1)), kI64);
  EXPECT_THROW(b.proj(Atom::of(t), 2), std::logic_error);
  EXPECT_EQ(f.type_of(b.size(sv("m") + SizeExpr::constant(1))), kI64);
  VarId c =
      b.call("sqnorm", {Atom::of(b.index(Atom::of(v), {computed_index(Atom::i64(0))}))}, kF64);
  EXPECT_EQ(f.type_of(c), kF64);
  EXPECT_EQ(f.body.stmts.back().as<CallOp>()->callee, "sqnorm");
}

TEST(Builder, FinishPacksSeveralResultsIntoATuple) {
  Function f;
  Builder b(f);
  VarId x = b.param("x", kF64);
  b.finish({Atom::of(x), Atom::i64(1)});
  ASSERT_EQ(f.body.results.size(), 1u);
  EXPECT_EQ(f.result_type, Type::tuple({kF64, kI64}));
  ASSERT_EQ(f.body.stmts.size(), 1u);
  EXPECT_NE(f.body.stmts[0].as<TupleOp>(), nullptr);
}

TEST(Builder, ARegionCallbackThatThrowsLeavesTheBuilderUsable) {
  Function f;
  Builder b(f);
  VarId x = b.param("x", kF64);
  VarId i = b.index_var("i");
  EXPECT_THROW(
      b.gen({{i, SizeExpr::constant(2)}}, [&]() -> Atom { throw std::logic_error("inner"); }),
      std::logic_error);
  VarId y = b.prim(Prim::Neg, {Atom::of(x)});
  ASSERT_EQ(f.body.stmts.size(), 1u);
  EXPECT_EQ(f.body.stmts[0].results[0], y);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::ir
