// Operation counts under the cost model (docs/language.md §10, [Bernstein20] §4.3), by hand.
#include <gtest/gtest.h>

#include "interp/interpreter.h"
#include "interp_test_util.h"

namespace cot::interp::testing {
namespace COTANGENT_TEST_UNIT {

using ir::Builder;
using ir::ReduceKind;

void expect_cost(const Outcome& o, int64_t add, int64_t mul, int64_t call) {
  ASSERT_TRUE(o.ok()) << o.error().message;
  EXPECT_EQ(o.cost.add, add);
  EXPECT_EQ(o.cost.mul, mul);
  EXPECT_EQ(o.cost.call, call);
}

TEST(InterpCost, DotCostsNMulsAndNMinusOneAdds) {
  ir::Function f = make_function("dot", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId y = b.param("y", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.reduce(ReduceKind::Sum, {{i, sv("n")}}, [&] {
      return var(b.prim(Prim::Mul, {var(b.index(var(x), {at(i)})), var(b.index(var(y), {at(i)}))}));
    }));
  });
  expect_cost(run(f, {vec({1, 2, 3, 4, 5}), vec({1, 1, 1, 1, 1})}), 4, 5, 0);
  expect_cost(run(f, {vec({2}), vec({3})}), 0, 1, 0);  // a sum of one term is free
  expect_cost(run(f, {vec({}), vec({})}), 0, 0, 0);
}

// sum i. [i < 3] * x[i]  over n = 10 costs 2 additions: only live terms are summed.
TEST(InterpCost, GuardedSumCountsOnlyLiveTerms) {
  ir::Function f = make_function("s", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.reduce(ReduceKind::Sum, {{i, sv("n")}}, [&] {
      return var(b.guard(cmp(av(i), "<", ac(3)),
                         [&] { return std::vector<Atom>{var(b.index(var(x), {at(i)}))}; })[0]);
    }));
  });
  Outcome o = run(f, {vec({1, 2, 3, 4, 5, 6, 7, 8, 9, 10})});
  expect_cost(o, 2, 0, 0);
  EXPECT_EQ(o.value().as_f64(), 6);
}

// Rule 4.24: [i < 2] * x[i] + y[i] costs an addition only where the guard holds; a product
// with a strong zero still costs its multiplication (rule 4.25).
TEST(InterpCost, AdditionOfAStrongZeroIsFreeButMultiplicationIsNot) {
  auto build = [](Prim op) {
    return make_function("g", [op](Builder& b) {
      VarId x = b.param("x", f64t({sv("n")}));
      VarId y = b.param("y", f64t({sv("n")}));
      VarId i = b.index_var("i");
      return var(b.gen({{i, sv("n")}}, [&] {
        VarId g = b.guard(cmp(av(i), "<", ac(2)),
                          [&] { return std::vector<Atom>{var(b.index(var(x), {at(i)}))}; })[0];
        return var(b.prim(op, {var(g), var(b.index(var(y), {at(i)}))}));
      }));
    });
  };
  Outcome add = run(build(Prim::Add), {vec({1, 2, 3, 4}), vec({10, 20, 30, 40})});
  expect_cost(add, 2, 0, 0);
  EXPECT_EQ(elems(add.value()), (std::vector<double>{11, 22, 30, 40}));
  expect_cost(run(build(Prim::Sub), {vec({1, 2, 3, 4}), vec({10, 20, 30, 40})}), 2, 0, 0);
  expect_cost(run(build(Prim::Mul), {vec({1, 2, 3, 4}), vec({10, 20, 30, 40})}), 0, 4, 0);
}

// Rule 4.30, nested sums under one guard are costed jointly: sum i. sum j. [j < i] * A[i, j]
// over n = 3 has 3 live (i, j) pairs, hence 2 additions, even though the sum for i = 0 is empty.
TEST(InterpCost, NestedGuardedSumsCostLikeTheJointSum) {
  auto build = [](const char* op) {
    return make_function("tri", [op](Builder& b) {
      VarId a = b.param("A", f64t({sv("n"), sv("n")}));
      VarId i = b.index_var("i"), j = b.index_var("j");
      return var(b.reduce(ReduceKind::Sum, {{i, sv("n")}}, [&] {
        return var(b.reduce(ReduceKind::Sum, {{j, sv("n")}}, [&] {
          return var(b.guard(cmp(av(j), op, av(i)), [&] {
            return std::vector<Atom>{var(b.index(var(a), {at(i), at(j)}))};
          })[0]);
        }));
      }));
    });
  };
  Value a3 = mat(3, 3, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Outcome strict = run(build("<"), {a3});
  expect_cost(strict, 2, 0, 0);
  EXPECT_EQ(strict.value().as_f64(), 4 + 7 + 8);
  expect_cost(run(build("<="), {a3}), 5, 0, 0);  // 6 pairs
}

// Nested guards are the conjunction: sum i. [i < 5] * ([i >= 2] * x[i]) has 3 live terms.
TEST(InterpCost, StrongZerosStayStrongUnderATrueGuard) {
  ir::Function f = make_function("s", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.reduce(ReduceKind::Sum, {{i, sv("n")}}, [&] {
      return var(b.guard(cmp(av(i), "<", ac(5)), [&] {
        return std::vector<Atom>{var(b.guard(cmp(av(i), ">=", ac(2)), [&] {
          return std::vector<Atom>{var(b.index(var(x), {at(i)}))};
        })[0])};
      })[0]);
    }));
  });
  Outcome o = run(f, {vec({1, 2, 3, 4, 5, 6, 7, 8})});
  expect_cost(o, 2, 0, 0);
  EXPECT_EQ(o.value().as_f64(), 3 + 4 + 5);
}

TEST(InterpCost, FunctionCallsAndMaxReductions) {
  // max i. exp(x[i])  over n = 4: 4 exp calls and 3 max comparisons.
  ir::Function f = make_function("m", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.reduce(ReduceKind::Max, {{i, sv("n")}},
                        [&] { return var(b.prim(Prim::Exp, {var(b.index(var(x), {at(i)}))})); }));
  });
  expect_cost(run(f, {vec({0, 1, 2, 3})}), 0, 0, 7);
}

TEST(InterpCost, TensorValuedSumsCostPerElement) {
  // sum i. A[i]  with A: 3 x 2 -> 2 * 2 additions.
  ir::Function f = make_function("cols", [](Builder& b) {
    VarId a = b.param("A", f64t({sv("m"), sv("n")}));
    VarId i = b.index_var("i");
    return var(
        b.reduce(ReduceKind::Sum, {{i, sv("m")}}, [&] { return var(b.index(var(a), {at(i)})); }));
  });
  expect_cost(run(f, {mat(3, 2, {1, 2, 3, 4, 5, 6})}), 4, 0, 0);
}

TEST(InterpCost, IntegerBooleanAndDataMovementAreFree) {
  // let k = sum i. i * i; let c = x > 0.0; (f64(k), -x / 2.0, c, x[..] as a tuple)
  ir::Function f = make_function("free", [](Builder& b) {
    VarId x = b.param("x", f64t());
    VarId i = b.index_var("i");
    VarId k = b.reduce(ReduceKind::Sum, {{i, sc(10)}}, [&] {
      return var(b.prim(Prim::Mul, {var(i), var(i)}));
    });
    VarId fk = b.prim(Prim::ToF64, {var(k)});
    VarId c = b.prim(Prim::Gt, {var(x), real(0)});
    VarId s = b.prim(Prim::Select, {var(c), var(fk), var(x)});
    VarId neg = b.prim(Prim::Neg, {var(x)});              // 1 mul
    VarId half = b.prim(Prim::Div, {var(neg), real(2)});  // 1 mul
    VarId sg = b.prim(Prim::StopGradient, {var(half)});
    return var(b.tuple({var(s), var(sg), var(c)}));
  });
  expect_cost(run(f, {Value::f64(3)}), 0, 2, 0);
}

TEST(InterpCost, WorkUnderAFalseGuardIsNotExecuted) {
  ir::Function f = make_function("g", [](Builder& b) {
    VarId x = b.param("x", f64t());
    VarId c = b.param("c", boolt());
    return var(b.guard(Pred::atom_of(c),
                       [&] { return std::vector<Atom>{var(b.prim(Prim::Exp, {var(x)}))}; })[0]);
  });
  expect_cost(run(f, {Value::f64(1), Value::boolean(false)}), 0, 0, 0);
  expect_cost(run(f, {Value::f64(1), Value::boolean(true)}), 0, 0, 1);
}

TEST(InterpCost, LoopsAndCallsCountEverythingExecuted) {
  // def inc(s: f64) -> f64 { s + 1.0 };  loop s = 0.0 for t < 10 { inc(s) * 2.0 }
  ir::Function inc = make_function("inc", [](Builder& b) {
    VarId s = b.param("s", f64t());
    return var(b.prim(Prim::Add, {var(s), real(1)}));
  });
  ir::Function f = make_function("f", [](Builder& b) {
    return var(b.loop_for({real(0)}, i64(10), [&](const auto& s, VarId) {
      VarId r = b.call("inc", {var(s[0])}, f64t());
      return std::vector<Atom>{var(b.prim(Prim::Mul, {var(r), real(2)}))};
    })[0]);
  });
  expect_cost(run(program_of({inc, f}), "f", {}), 10, 10, 0);
}

TEST(InterpCost, CostIsResetForEachEvaluation) {
  ir::Function f = make_function("f", [](Builder& b) {
    VarId x = b.param("x", f64t());
    return var(b.prim(Prim::Add, {var(x), var(x)}));
  });
  ir::Program p = program_of({f});
  CostCounts c;
  c.add = 100;
  ASSERT_EQ(evaluate(p, "f", {Value::f64(1)}, &c).index(), 0u);
  EXPECT_EQ(c.add, 1);
  EXPECT_EQ(c.total(), 1);
  // Without a cost pointer nothing is counted (and nothing breaks).
  EXPECT_EQ(evaluate(p, "f", {Value::f64(1)}).index(), 0u);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::interp::testing
