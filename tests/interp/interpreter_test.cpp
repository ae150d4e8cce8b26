// Semantics of every Core IR operation in the reference interpreter (docs/language.md §5-§7).
#include "interp/interpreter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "interp_test_util.h"

namespace cot::interp::testing {
namespace COTANGENT_TEST_UNIT {

using ir::Builder;
using ir::ReduceKind;

// def dot(x: f64[n], y: f64[n]) -> f64 { sum i. x[i] * y[i] }
ir::Function dot_fn() {
  return make_function("dot", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}), span(1));
    VarId y = b.param("y", f64t({sv("n")}), span(2));
    VarId i = b.index_var("i");
    return var(b.reduce(ReduceKind::Sum, {{i, sv("n")}}, [&] {
      VarId xi = b.index(var(x), {at(i)});
      VarId yi = b.index(var(y), {at(i)});
      return var(b.prim(Prim::Mul, {var(xi), var(yi)}));
    }));
  });
}

// def matmul(A: f64[m, k], B: f64[k, n]) -> f64[m, n] { for i, j. sum l. A[i, l] * B[l, j] }
ir::Function matmul_fn() {
  return make_function("matmul", [](Builder& b) {
    VarId a = b.param("A", f64t({sv("m"), sv("k")}));
    VarId bb = b.param("B", f64t({sv("k"), sv("n")}));
    VarId i = b.index_var("i"), j = b.index_var("j"), l = b.index_var("l");
    return var(b.gen({{i, sv("m")}, {j, sv("n")}}, [&] {
      return var(b.reduce(ReduceKind::Sum, {{l, sv("k")}}, [&] {
        VarId ail = b.index(var(a), {at(i), at(l)});
        VarId blj = b.index(var(bb), {at(l), at(j)});
        return var(b.prim(Prim::Mul, {var(ail), var(blj)}));
      }));
    }));
  });
}

TEST(Interp, DotProduct) {
  Outcome o = run(dot_fn(), {vec({1, 2, 3}), vec({4, 5, 6})});
  EXPECT_EQ(o.value().as_f64(), 32.0);
}

TEST(Interp, MatmulOfModestSize) {
  const int64_t m = 100, k = 100, n = 100;
  std::vector<double> a(m * k), bm(k * n);
  for (int64_t t = 0; t < m * k; ++t) a[t] = std::sin(0.1 * static_cast<double>(t));
  for (int64_t t = 0; t < k * n; ++t) bm[t] = std::cos(0.07 * static_cast<double>(t));
  Outcome o = run(matmul_fn(), {mat(m, k, a), mat(k, n, bm)});
  const Value& c = o.value();
  ASSERT_EQ(c.shape(), (std::vector<int64_t>{m, n}));
  for (int64_t i = 0; i < m; i += 7) {
    for (int64_t j = 0; j < n; j += 11) {
      double want = 0;
      for (int64_t l = 0; l < k; ++l) want += a[i * k + l] * bm[l * n + j];
      EXPECT_LE(rho(c.f64_data()[static_cast<size_t>(i * n + j)], want), 1e-14);
    }
  }
  EXPECT_EQ(o.cost.mul, m * n * k);
  EXPECT_EQ(o.cost.add, m * n * (k - 1));
}

TEST(Interp, GenWithTensorBodyAndSlice) {
  // def rows(A: f64[m, n]) -> f64[m, n] { for i. A[i] }  (a slice per row)
  ir::Function f = make_function("rows", [](Builder& b) {
    VarId a = b.param("A", f64t({sv("m"), sv("n")}));
    VarId i = b.index_var("i");
    return var(b.gen({{i, sv("m")}}, [&] { return var(b.index(var(a), {at(i)})); }));
  });
  Value a = mat(2, 3, {1, 2, 3, 4, 5, 6});
  Outcome o = run(f, {a});
  EXPECT_EQ(o.value().shape(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(elems(o.value()), (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(Interp, GenOfIndexVariablesAndSizes) {
  // def iota(x: f64[n]) -> f64[n] { for i. f64(i) * f64(n) }
  ir::Function f = make_function("iota", [](Builder& b) {
    b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.gen({{i, sv("n")}}, [&] {
      VarId fi = b.prim(Prim::ToF64, {var(i)});
      VarId n = b.size(sv("n"));
      VarId fn = b.prim(Prim::ToF64, {var(n)});
      return var(b.prim(Prim::Mul, {var(fi), var(fn)}));
    }));
  });
  Outcome o = run(f, {vec({0, 0, 0})});
  EXPECT_EQ(elems(o.value()), (std::vector<double>{0, 3, 6}));
}

TEST(Interp, GenOverAnEmptyRangeHasTheStaticShape) {
  // for i. for j: 3. x[i]   with n = 0  ->  f64[0, 3]
  ir::Function f = make_function("g", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i"), j = b.index_var("j");
    return var(b.gen({{i, sv("n")}, {j, sc(3)}}, [&] { return var(b.index(var(x), {at(i)})); }));
  });
  Outcome o = run(f, {vec({})});
  EXPECT_EQ(o.value().shape(), (std::vector<int64_t>{0, 3}));
}

TEST(Interp, StrongZeroGuardsAnOutOfRangeRead) {
  // for i. [i + 1 < n] * x[i + 1]
  ir::Function f = make_function("shift", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.gen({{i, sv("n")}}, [&] {
      Pred p = cmp(*Affine::add(av(i), ac(1)), "<", av(b.size_var("n")));
      return var(
          b.guard(p, [&] { return std::vector<Atom>{var(b.index(var(x), {at(i, 1)}))}; })[0]);
    }));
  });
  Outcome o = run(f, {vec({1, 2, 3, 4})});
  EXPECT_EQ(elems(o.value()), (std::vector<double>{2, 3, 4, 0}));
}

TEST(Interp, StrongZeroHidesNaNAndBindsTensorZeros) {
  // [b] * (x / 0.0, x)  with b false: zeros of both result types, no NaN.
  ir::Function f = make_function("g", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId c = b.param("c", boolt());
    std::vector<VarId> r = b.guard(Pred::atom_of(c), [&] {
      VarId i = b.index_var("i");
      VarId nan = b.gen({{i, sv("n")}}, [&] {
        VarId xi = b.index(var(x), {at(i)});
        return var(b.prim(Prim::Div, {var(xi), real(0)}));
      });
      return std::vector<Atom>{var(nan), var(x)};
    });
    return var(b.tuple({var(r[0]), var(r[1])}));
  });
  Outcome off = run(f, {vec({0, 2}), Value::boolean(false)});
  ASSERT_TRUE(off.ok());
  EXPECT_EQ(elems(off.value().elems()[0]), (std::vector<double>{0, 0}));
  EXPECT_EQ(elems(off.value().elems()[1]), (std::vector<double>{0, 0}));
  Outcome on = run(f, {vec({0, 2}), Value::boolean(true)});
  EXPECT_TRUE(std::isnan(on.value().elems()[0].f64_data()[0]));
  EXPECT_EQ(on.value().elems()[0].f64_data()[1], std::numeric_limits<double>::infinity());
  EXPECT_EQ(elems(on.value().elems()[1]), (std::vector<double>{0, 2}));
}

TEST(Interp, GuardPredicatesWithDisjunctionsAndBooleanAtoms) {
  // for i. [i == 0 || i == n - 1 || !c] * x[i]   (the ends, or everything when c is false)
  ir::Function f = make_function("ends", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId c = b.param("c", boolt());
    VarId i = b.index_var("i");
    return var(b.gen({{i, sv("n")}}, [&] {
      Affine last = *Affine::sub(av(b.size_var("n")), ac(1));
      Pred p = Pred::disj(
          {cmp(av(i), "==", ac(0)), cmp(av(i), "==", last), Pred::atom_of(c, /*negated=*/true)});
      return var(b.guard(p, [&] { return std::vector<Atom>{var(b.index(var(x), {at(i)}))}; })[0]);
    }));
  });
  EXPECT_EQ(elems(run(f, {vec({1, 2, 3, 4}), Value::boolean(true)}).value()),
            (std::vector<double>{1, 0, 0, 4}));
  EXPECT_EQ(elems(run(f, {vec({1, 2, 3, 4}), Value::boolean(false)}).value()),
            (std::vector<double>{1, 2, 3, 4}));
}

TEST(Interp, IfWithSeveralResults) {
  ir::Function f = make_function("f", [](Builder& b) {
    VarId c = b.param("c", boolt());
    std::vector<VarId> r = b.if_(
        var(c),
        [&] {
          return std::vector<Atom>{real(1), i64(2)};
        },
        [&] {
          return std::vector<Atom>{real(3), i64(4)};
        });
    return var(b.tuple({var(r[0]), var(r[1])}));
  });
  Value t = run(f, {Value::boolean(false)}).value();
  EXPECT_EQ(t.elems()[0].as_f64(), 3);
  EXPECT_EQ(t.elems()[1].as_i64(), 4);
}

TEST(Interp, IfEvaluatesOnlyTheTakenBranch) {
  // for i. if i > 0 then x[i - 1] else 0.0
  ir::Function f = make_function("prev", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.gen({{i, sv("n")}}, [&] {
      VarId c = b.prim(Prim::Gt, {var(i), i64(0)});
      return var(b.if_(
          var(c), [&] { return std::vector<Atom>{var(b.index(var(x), {at(i, -1)}))}; },
          [&] { return std::vector<Atom>{real(0)}; })[0]);
    }));
  });
  Outcome o = run(f, {vec({5, 6, 7})});
  EXPECT_EQ(elems(o.value()), (std::vector<double>{0, 5, 6}));
}

ir::Function reduce_fn(ReduceKind kind, Type elem_type) {
  return make_function("r", [&](Builder& b) {
    VarId x = b.param("x", Type::tensor(elem_type.elem, {sv("n")}));
    VarId i = b.index_var("i");
    return var(b.reduce(kind, {{i, sv("n")}}, [&] { return var(b.index(var(x), {at(i)})); }));
  });
}

TEST(Interp, Reductions) {
  EXPECT_EQ(run(reduce_fn(ReduceKind::Sum, f64t()), {vec({1, 2, 3.5})}).value().as_f64(), 6.5);
  EXPECT_EQ(run(reduce_fn(ReduceKind::Max, f64t()), {vec({1, 7, 3})}).value().as_f64(), 7);
  EXPECT_EQ(run(reduce_fn(ReduceKind::Min, f64t()), {vec({4, -2, 3})}).value().as_f64(), -2);
  EXPECT_EQ(run(reduce_fn(ReduceKind::Sum, i64t()), {ivec({1, 2, 3})}).value().as_i64(), 6);
  EXPECT_EQ(run(reduce_fn(ReduceKind::Max, i64t()), {ivec({-5, -2, -9})}).value().as_i64(), -2);
  EXPECT_EQ(run(reduce_fn(ReduceKind::Min, i64t()), {ivec({-5, -2, -9})}).value().as_i64(), -9);
  Value f = run(reduce_fn(ReduceKind::Sum, f32t()), {fvec({0.1f, 0.2f, 0.3f})}).value();
  ASSERT_EQ(f.dtype(), DType::F32);
  EXPECT_EQ(f.f32_data()[0], (0.1f + 0.2f) + 0.3f);  // accumulated in float, left to right
}

TEST(Interp, EmptyReductions) {
  Value s = run(reduce_fn(ReduceKind::Sum, f64t()), {vec({})}).value();
  EXPECT_EQ(s.as_f64(), 0.0);
  EXPECT_FALSE(std::signbit(s.as_f64()));
  EXPECT_EQ(run(reduce_fn(ReduceKind::Max, f64t()), {vec({})}).value().as_f64(),
            -std::numeric_limits<double>::infinity());
  EXPECT_EQ(run(reduce_fn(ReduceKind::Min, f64t()), {vec({})}).value().as_f64(),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(run(reduce_fn(ReduceKind::Sum, i64t()), {ivec({})}).value().as_i64(), 0);
  Diagnostic d = run(reduce_fn(ReduceKind::Max, i64t()), {ivec({})}).error();
  EXPECT_EQ(d.message, "max over an empty range of integers has no value");
}

TEST(Interp, MaxAndMinPropagateNaN) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(
      std::isnan(run(reduce_fn(ReduceKind::Max, f64t()), {vec({1, nan, 3})}).value().as_f64()));
  EXPECT_TRUE(
      std::isnan(run(reduce_fn(ReduceKind::Min, f64t()), {vec({nan, 1, 3})}).value().as_f64()));
  EXPECT_TRUE(
      std::isnan(run(reduce_fn(ReduceKind::Sum, f64t()), {vec({1, nan})}).value().as_f64()));
}

// Tensor-valued bodies reduce elementwise; empty ranges give zeros (or infinities) of the
// body's static shape.
TEST(Interp, TensorValuedReductions) {
  auto column_reduce = [](ReduceKind kind) {
    return make_function("cols", [&](Builder& b) {
      VarId a = b.param("A", f64t({sv("m"), sv("n")}));
      VarId i = b.index_var("i");
      return var(b.reduce(kind, {{i, sv("m")}}, [&] { return var(b.index(var(a), {at(i)})); }));
    });
  };
  Value a = mat(3, 2, {1, 6, 5, 2, 3, 4});
  EXPECT_EQ(elems(run(column_reduce(ReduceKind::Sum), {a}).value()), (std::vector<double>{9, 12}));
  EXPECT_EQ(elems(run(column_reduce(ReduceKind::Max), {a}).value()), (std::vector<double>{5, 6}));
  EXPECT_EQ(elems(run(column_reduce(ReduceKind::Min), {a}).value()), (std::vector<double>{1, 2}));
  Value empty = Value::zeros(DType::F64, {0, 2});
  EXPECT_EQ(elems(run(column_reduce(ReduceKind::Sum), {empty}).value()),
            (std::vector<double>{0, 0}));
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(elems(run(column_reduce(ReduceKind::Max), {empty}).value()),
            (std::vector<double>{-inf, -inf}));
}

TEST(Interp, MultiIndexReductionIsRowMajor) {
  // sum i, j. f64(10 * i + j) * x[j]  over i < 2, j < 3
  ir::Function f = make_function("s", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i"), j = b.index_var("j");
    return var(b.reduce(ReduceKind::Sum, {{i, sc(2)}, {j, sv("n")}}, [&] {
      VarId ten_i = b.prim(Prim::Mul, {i64(10), var(i)});
      VarId k = b.prim(Prim::Add, {var(ten_i), var(j)});
      VarId fk = b.prim(Prim::ToF64, {var(k)});
      return var(b.prim(Prim::Mul, {var(fk), var(b.index(var(x), {at(j)}))}));
    }));
  });
  // (0*1 + 1*2 + 2*3) + (10*1 + 11*2 + 12*3) = 8 + 68
  EXPECT_EQ(run(f, {vec({1, 2, 3})}).value().as_f64(), 76);
}

TEST(Interp, ForLoopWithTupleState) {
  // loop (a, b) = (0, 1) for t < n { (b, a + b) }  -> (fib(n), fib(n + 1))
  ir::Function f = make_function("fib", [](Builder& b) {
    VarId n = b.param("n", i64t());
    std::vector<VarId> r = b.loop_for({i64(0), i64(1)}, var(n), [&](const auto& s, VarId) {
      return std::vector<Atom>{var(s[1]), var(b.prim(Prim::Add, {var(s[0]), var(s[1])}))};
    });
    return var(b.tuple({var(r[0]), var(r[1])}));
  });
  Value v = run(f, {Value::i64(10)}).value();
  EXPECT_EQ(v.elems()[0].as_i64(), 55);
  EXPECT_EQ(v.elems()[1].as_i64(), 89);
  // Zero and negative counts run no iteration.
  EXPECT_EQ(run(f, {Value::i64(0)}).value().elems()[1].as_i64(), 1);
  EXPECT_EQ(run(f, {Value::i64(-3)}).value().elems()[0].as_i64(), 0);
}

TEST(Interp, ForLoopOverTensorsUsesTheCounter) {
  // loop h = x for t < 1000 { for i. h[i] + f64(t) }   (1000 iterations)
  ir::Function f = make_function("acc", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    return var(b.loop_for({var(x)}, i64(1000), [&](const auto& s, VarId t) {
      VarId i = b.index_var("i");
      VarId g = b.gen({{i, sv("n")}}, [&] {
        VarId hi = b.index(var(s[0]), {at(i)});
        return var(b.prim(Prim::Add, {var(hi), var(b.prim(Prim::ToF64, {var(t)}))}));
      });
      return std::vector<Atom>{var(g)};
    })[0]);
  });
  EXPECT_EQ(elems(run(f, {vec({1, 2})}).value()), (std::vector<double>{499501, 499502}));
}

// Collatz: loop (x, steps) = (x0, 0) while x != 1 { (x % 2 == 0 ? x // 2 : 3x + 1, steps + 1) }
ir::Function collatz_fn() {
  return make_function("collatz", [](Builder& b) {
    VarId x0 = b.param("x0", i64t());
    std::vector<VarId> r = b.loop_while(
        {var(x0), i64(0)},
        [&](const auto& s) {
          return var(b.prim(Prim::Ne, {var(s[0]), i64(1)}));
        },
        [&](const auto& s, VarId) {
          VarId m = b.prim(Prim::Mod, {var(s[0]), i64(2)});
          VarId even = b.prim(Prim::Eq, {var(m), i64(0)});
          VarId half = b.prim(Prim::FloorDiv, {var(s[0]), i64(2)});
          VarId thrice = b.prim(Prim::Mul, {i64(3), var(s[0])});
          VarId up = b.prim(Prim::Add, {var(thrice), i64(1)});
          VarId next = b.prim(Prim::Select, {var(even), var(half), var(up)});
          return std::vector<Atom>{var(next), var(b.prim(Prim::Add, {var(s[1]), i64(1)}))};
        });
    return var(r[1]);
  });
}

TEST(Interp, WhileLoop) {
  EXPECT_EQ(run(collatz_fn(), {Value::i64(27)}).value().as_i64(), 111);
  EXPECT_EQ(run(collatz_fn(), {Value::i64(1)}).value().as_i64(), 0);  // condition false at once
}

TEST(Interp, WhileLoopIterationLimit) {
  Options o;
  o.max_while_iterations = 100;
  EXPECT_EQ(run(collatz_fn(), {Value::i64(6)}, o).value().as_i64(), 8);
  Diagnostic d = run(collatz_fn(), {Value::i64(27)}, o).error();
  EXPECT_NE(d.message.find("did not finish within 100 iterations"), std::string::npos) << d.message;
}

TEST(Interp, LoopStateSwapReadsTheOldState) {
  // loop (a, b) = (1.0, 2.0) for t < 3 { (b, a) }  -> (2, 1)
  ir::Function f = make_function("swap", [](Builder& b) {
    std::vector<VarId> r = b.loop_for({real(1), real(2)}, i64(3), [&](const auto& s, VarId) {
      return std::vector<Atom>{var(s[1]), var(s[0])};
    });
    return var(b.tuple({var(r[0]), var(r[1])}));
  });
  Value v = run(f, {}).value();
  EXPECT_EQ(v.elems()[0].as_f64(), 2);
  EXPECT_EQ(v.elems()[1].as_f64(), 1);
}

TEST(Interp, ComputedIndicesGather) {
  // for o. x[idx[o]]
  ir::Function f = make_function("gather", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId idx = b.param("idx", i64t({sv("k")}));
    VarId o = b.index_var("o");
    return var(b.gen({{o, sv("k")}}, [&] {
      VarId j = b.index(var(idx), {at(o)});
      return var(b.index(var(x), {at_atom(var(j))}));
    }));
  });
  EXPECT_EQ(elems(run(f, {vec({10, 20, 30}), ivec({2, 0, 2, 1})}).value()),
            (std::vector<double>{30, 10, 30, 20}));
  Diagnostic d = run(f, {vec({10, 20, 30}), ivec({0, 3})}).error();
  EXPECT_EQ(d.message, "index 3 is out of range for dimension 0 of x, which has shape [3]");
}

TEST(Interp, AccumScatterAdds) {
  // accum[m] i. (idx[i], x[i])   -- a histogram of weights
  ir::Function f = make_function("hist", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId idx = b.param("idx", i64t({sv("n")}));
    b.param("bins", f64t({sv("m")}));
    VarId i = b.index_var("i");
    return var(b.accum({sv("m")}, {{i, sv("n")}}, [&] {
      return std::vector<Atom>{var(b.index(var(idx), {at(i)})), var(b.index(var(x), {at(i)}))};
    }));
  });
  Outcome o = run(f, {vec({1, 2, 4, 8}), ivec({2, 0, 2, 2}), vec({0, 0, 0})});
  EXPECT_EQ(elems(o.value()), (std::vector<double>{2, 0, 13}));
  EXPECT_EQ(o.cost.add, 2);  // three contributions to bin 2, one to bin 0
  Diagnostic d = run(f, {vec({1, 2}), ivec({0, 3}), vec({0, 0, 0})}).error();
  EXPECT_EQ(d.message,
            "index 3 is out of range for dimension 0 of the accumulated tensor, which has "
            "shape [3]");
}

TEST(Interp, AccumOfTensorValuesAndIntegers) {
  // accum[2] i. (i % 2, A[i])  over rows of A: sums of even and odd rows.
  ir::Function f = make_function("rows", [](Builder& b) {
    VarId a = b.param("A", i64t({sv("m"), sv("n")}));
    VarId i = b.index_var("i");
    return var(b.accum({sc(2)}, {{i, sv("m")}}, [&] {
      VarId k = b.prim(Prim::Mod, {var(i), i64(2)});
      return std::vector<Atom>{var(k), var(b.index(var(a), {at(i)}))};
    }));
  });
  Value a = Value::zeros(DType::I64, {3, 2});
  int64_t data[] = {1, 2, 3, 4, 5, 6};
  std::copy(std::begin(data), std::end(data), a.i64_mut().begin());
  Value r = run(f, {a}).value();
  EXPECT_EQ(r.shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(ielems(r), (std::vector<int64_t>{6, 8, 3, 4}));
}

TEST(Interp, TuplesProjectionsAndSizes) {
  // let t = (x, size(x, 0) * 2); (t.1, t.0[1])
  ir::Function f = make_function("t", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId n2 = b.size(sv("n") * sc(2));
    VarId t = b.tuple({var(x), var(n2)});
    VarId first = b.proj(var(t), 0);
    VarId second = b.proj(var(t), 1);
    return var(b.tuple({var(second), var(b.index(var(first), {at_const(1)}))}));
  });
  Value v = run(f, {vec({3, 4, 5})}).value();
  EXPECT_EQ(v.elems()[0].as_i64(), 6);
  EXPECT_EQ(v.elems()[1].as_f64(), 4);
}

TEST(Interp, TupleParametersBindSizeVariables) {
  // def f(p: (f64[n], f64[m])) -> i64 { n * 10 + m }
  ir::Function f = make_function("f", [](Builder& b) {
    b.param("p", Type::tuple({f64t({sv("n")}), f64t({sv("m")})}));
    return var(b.size(sv("n") * sc(10) + sv("m")));
  });
  EXPECT_EQ(run(f, {Value::tuple({vec({1, 2}), vec({1, 2, 3})})}).value().as_i64(), 23);
}

TEST(Interp, CallsBindParametersInANewFrame) {
  // def norm2(v: f64[k]) -> f64 { dot(v, v) }
  ir::Function g = make_function("norm2", [](Builder& b) {
    VarId v = b.param("v", f64t({sv("k")}));
    return var(b.call("dot", {var(v), var(v)}, f64t(), span(5)));
  });
  ir::Program p = program_of({dot_fn(), g});
  Outcome o = run(p, "norm2", {vec({3, 4})});
  EXPECT_EQ(o.value().as_f64(), 25);
  EXPECT_EQ(o.cost.mul, 2);
  EXPECT_EQ(o.cost.add, 1);
}

TEST(Interp, CallInsideAGeneratorReusesNoState) {
  // for i. dot(A[i], x)
  ir::Function g = make_function("matvec", [](Builder& b) {
    VarId a = b.param("A", f64t({sv("m"), sv("n")}));
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.gen({{i, sv("m")}}, [&] {
      VarId row = b.index(var(a), {at(i)});
      return var(b.call("dot", {var(row), var(x)}, f64t()));
    }));
  });
  ir::Program p = program_of({dot_fn(), g});
  EXPECT_EQ(elems(run(p, "matvec", {mat(2, 2, {1, 2, 3, 4}), vec({1, 1})}).value()),
            (std::vector<double>{3, 7}));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::interp::testing
