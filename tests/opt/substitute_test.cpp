// substitute_uses: the in-place replacement every pass shares, through operands, nested
// regions, affine indices (renaming and folding literals) and predicates.
#include "opt/substitute.h"

#include <gtest/gtest.h>

#include "ir/builder.h"
#include "ir/printer.h"

namespace cot::opt {
namespace COTANGENT_TEST_UNIT {

TEST(OptSubstitute, renames_operands_indices_and_predicates_in_nested_regions) {
  ir::Function f;
  f.name = "f";
  ir::Builder b(f);
  ir::VarId x = b.param("x", Type::tensor(Scalar::F64, {SizeExpr::var("n")}));
  ir::VarId k = b.param("k", Type::scalar(Scalar::I64));
  ir::VarId j = b.param("j", Type::scalar(Scalar::I64));
  ir::VarId i = b.index_var("i");
  ir::VarId g = b.gen({ir::IndexVar{i, SizeExpr::var("n")}}, [&] {
    auto r = b.guard(*Pred::compare(Affine::var(i), "<", Affine::var(k)), [&] {
      return std::vector<ir::Atom>{
          ir::Atom::of(b.index(ir::Atom::of(x), {ir::affine_index(Affine::var(k))}))};
    });
    return ir::Atom::of(r[0]);
  });
  b.finish({ir::Atom::of(g)});

  // k := j renames the affine uses; then j := 2 folds them into constants.
  substitute_uses(f.body, {{k, ir::Atom::of(j)}});
  const auto& gen = *f.body.stmts.back().as<ir::GenOp>();
  const auto& guard = *gen.body.stmts.front().as<ir::GuardOp>();
  EXPECT_TRUE(guard.pred.expr.mentions(j));
  EXPECT_FALSE(guard.pred.expr.mentions(k));
  substitute_uses(f.body, {{j, ir::Atom::i64(2)}});
  const auto& gen2 = *f.body.stmts.back().as<ir::GenOp>();
  const auto& guard2 = *gen2.body.stmts.front().as<ir::GuardOp>();
  EXPECT_FALSE(guard2.pred.expr.mentions(j));
  const auto& read = *guard2.body.stmts.front().as<ir::IndexOp>();
  ASSERT_TRUE(read.indices[0].is_affine);
  EXPECT_TRUE(read.indices[0].affine.is_constant());
  EXPECT_EQ(read.indices[0].affine.constant_term(), 2);
}

TEST(OptSubstitute, bool_literals_fold_predicates) {
  const int32_t c = 7;
  Pred p = Pred::conj({Pred::atom_of(c), Pred::ge0(Affine::var(3))});
  Pred t = substitute_pred(p, {{c, ir::Atom::boolean(true)}});
  EXPECT_EQ(t, Pred::ge0(Affine::var(3)));
  Pred f = substitute_pred(p, {{c, ir::Atom::boolean(false)}});
  EXPECT_EQ(f.kind, Pred::Kind::False);
  Pred neg = substitute_pred(Pred::atom_of(c, /*negated=*/true), {{c, ir::Atom::boolean(false)}});
  EXPECT_EQ(neg.kind, Pred::Kind::True);
}

TEST(OptSubstitute, a_real_in_an_affine_position_is_a_compiler_bug) {
  ir::Block b;
  ir::IndexOp read{ir::Atom::of(0), {ir::affine_index(Affine::var(1))}};
  b.stmts.push_back(ir::Stmt{{2}, read, {}});
  EXPECT_THROW(substitute_uses(b, {{1, ir::Atom::real(1.5)}}), std::logic_error);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::opt
