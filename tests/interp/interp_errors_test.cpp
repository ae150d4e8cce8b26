// Runtime errors of the reference interpreter: every one is a Diagnostic with a span and a
// message that says what and where, never a crash (the tests also run under ASan/UBSan).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "interp/interpreter.h"
#include "interp_test_util.h"

namespace cot::interp::testing {
namespace COTANGENT_TEST_UNIT {

using ir::Builder;
using ir::ReduceKind;

// def add(x: f64[n], y: f64[n]) -> f64[n] { for i. x[i] + y[i] }
ir::Function add_fn() {
  return make_function("add", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}), span(1));
    VarId y = b.param("y", f64t({sv("n")}), span(2));
    VarId i = b.index_var("i");
    return var(b.gen({{i, sv("n")}}, [&] {
      return var(b.prim(Prim::Add, {var(b.index(var(x), {at(i)})), var(b.index(var(y), {at(i)}))}));
    }));
  });
}

TEST(InterpErrors, SizeVariableDisagreement) {
  Diagnostic d = run(add_fn(), {vec({1, 2, 3}), vec({1, 2, 3, 4})}).error();
  EXPECT_EQ(d.message,
            "size variable n is 3 from parameter x (f64[3]) but 4 from parameter y (f64[4])");
  EXPECT_TRUE(same_span(d.span, span(2)));
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_TRUE(same_span(d.notes[0].first, span(1)));
}

TEST(InterpErrors, SizeVariableDisagreementWithinOneParameter) {
  // def tr(A: f64[n, n]) -> f64 { sum i. A[i, i] }
  ir::Function f = make_function("tr", [](Builder& b) {
    VarId a = b.param("A", f64t({sv("n"), sv("n")}), span(1));
    VarId i = b.index_var("i");
    return var(b.reduce(ReduceKind::Sum, {{i, sv("n")}}, [&] {
      return var(b.index(var(a), {at(i), at(i)}));
    }));
  });
  EXPECT_EQ(run(f, {mat(2, 2, {1, 2, 3, 4})}).value().as_f64(), 5);
  Diagnostic d = run(f, {mat(2, 3, {1, 2, 3, 4, 5, 6})}).error();
  EXPECT_EQ(d.message,
            "size variable n is 2 from dimension 0 of parameter A but 3 from dimension 1 (A is "
            "f64[2, 3], declared f64[n, n])");
}

TEST(InterpErrors, DerivedDimensionDisagreement) {
  // def f(x: f64[n], y: f64[n + 1]) -> f64 { 0.0 }
  ir::Function f = make_function("f", [](Builder& b) {
    b.param("x", f64t({sv("n")}), span(1));
    b.param("y", f64t({sv("n") + sc(1)}), span(2));
    return real(0);
  });
  EXPECT_TRUE(run(f, {vec({1, 2}), vec({1, 2, 3})}).ok());
  Diagnostic d = run(f, {vec({1, 2}), vec({1, 2})}).error();
  EXPECT_EQ(d.message,
            "parameter y (f64[2]) does not fit its type f64[n + 1]: dimension 0 must be n + 1 = "
            "3 (n = 2), found 2");
  EXPECT_TRUE(same_span(d.span, span(2)));
}

TEST(InterpErrors, ArgumentTypeAndCount) {
  // def f(A: f64[n, m]) -> f64 { 0.0 }
  ir::Function f = make_function("f", [](Builder& b) {
    b.param("x", f64t({sv("n"), sv("m")}), span(1));
    return real(0);
  });
  Diagnostic d = run(f, {vec({1, 2, 3})}).error();
  EXPECT_EQ(d.message, "parameter x expects f64[n, m] but got f64[3]");
  EXPECT_TRUE(same_span(d.span, span(1)));
  d = run(f, {Value::zeros(DType::I64, {2, 2})}).error();
  EXPECT_EQ(d.message, "parameter x expects f64[n, m] but got i64[2, 2]");
  d = run(f, {Value::tuple({vec({1})})}).error();
  EXPECT_EQ(d.message, "parameter x expects f64[n, m] but got (f64[1])");
  d = run(f, {}).error();
  EXPECT_EQ(d.message, "f takes 1 argument(s) but was given 0");
  d = run(program_of({f}), "g", {}).error();
  EXPECT_EQ(d.message, "there is no function named 'g' in the module");
}

TEST(InterpErrors, CallSiteShapeMismatchPointsAtTheCall) {
  // def g(x: f64[n]) -> f64[n] { add(x, for i: n + 1. 1.0) }
  ir::Function g = make_function("g", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}), span(1));
    VarId i = b.index_var("i");
    VarId ones = b.gen({{i, sv("n") + sc(1)}}, [&] { return real(1); });
    return var(b.call("add", {var(x), var(ones)}, f64t({sv("n")}), span(7)));
  });
  Diagnostic d = run(program_of({add_fn(), g}), "g", {vec({1, 2})}).error();
  EXPECT_EQ(d.message,
            "in a call of add: size variable n is 2 from parameter x (f64[2]) but 3 from "
            "parameter y (f64[3])");
  EXPECT_TRUE(same_span(d.span, span(7)));
}

TEST(InterpErrors, IndexOutOfRange) {
  // def f(x: f64[n]) -> f64 { x[n] }
  ir::Function f = make_function("f", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    return var(b.index(var(x), {ir::affine_index(av(b.size_var("n")))}, span(4)));
  });
  Diagnostic d = run(f, {vec({1, 2, 3, 4, 5})}).error();
  EXPECT_EQ(d.message, "index 5 is out of range for dimension 0 of x, which has shape [5]");
  EXPECT_TRUE(same_span(d.span, span(4)));
}

TEST(InterpErrors, NegativeIndexInASecondDimension) {
  // def f(A: f64[m, n]) -> f64[m] { for i. A[i, i - 1] }
  ir::Function f = make_function("f", [](Builder& b) {
    VarId a = b.param("A", f64t({sv("m"), sv("n")}));
    VarId i = b.index_var("i");
    return var(b.gen({{i, sv("m")}}, [&] {
      return var(b.index(var(a), {at(i), at(i, -1)}, span(3)));
    }));
  });
  Diagnostic d = run(f, {mat(2, 3, {1, 2, 3, 4, 5, 6})}).error();
  EXPECT_EQ(d.message, "index -1 is out of range for dimension 1 of A, which has shape [2, 3]");
  EXPECT_TRUE(same_span(d.span, span(3)));
}

TEST(InterpErrors, IntegerOverflow) {
  // def f(a: i64, b: i64) -> i64 { a * b + 1 }
  ir::Function f = make_function("f", [](Builder& b) {
    VarId x = b.param("a", i64t());
    VarId y = b.param("b", i64t());
    VarId p = b.prim(Prim::Mul, {var(x), var(y)}, span(1));
    return var(b.prim(Prim::Add, {var(p), i64(1)}, span(2)));
  });
  EXPECT_EQ(run(f, {Value::i64(3), Value::i64(4)}).value().as_i64(), 13);
  Diagnostic d = run(f, {Value::i64(int64_t{1} << 32), Value::i64(int64_t{1} << 31)}).error();
  EXPECT_NE(d.message.find("integer overflow"), std::string::npos) << d.message;
  EXPECT_TRUE(same_span(d.span, span(1)));
  d = run(f, {Value::i64(std::numeric_limits<int64_t>::max()), Value::i64(1)}).error();
  EXPECT_NE(d.message.find("integer overflow"), std::string::npos) << d.message;
  EXPECT_TRUE(same_span(d.span, span(2)));
}

TEST(InterpErrors, IntegerDivisionByZero) {
  ir::Function f = make_function("f", [](Builder& b) {
    VarId x = b.param("a", i64t());
    VarId y = b.param("b", i64t());
    return var(b.prim(Prim::FloorDiv, {var(x), var(y)}, span(1)));
  });
  Diagnostic d = run(f, {Value::i64(3), Value::i64(0)}).error();
  EXPECT_NE(d.message.find("division by zero"), std::string::npos) << d.message;
  d = run(f, {Value::i64(std::numeric_limits<int64_t>::min()), Value::i64(-1)}).error();
  EXPECT_NE(d.message.find("integer overflow"), std::string::npos) << d.message;
}

TEST(InterpErrors, OverflowInASumAndInAnAffineIndex) {
  ir::Function s = make_function("s", [](Builder& b) {
    VarId x = b.param("x", i64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.reduce(
        ReduceKind::Sum, {{i, sv("n")}}, [&] { return var(b.index(var(x), {at(i)})); }, span(1)));
  });
  const int64_t big = std::numeric_limits<int64_t>::max() / 2 + 1;
  Diagnostic d = run(s, {ivec({big, big})}).error();
  EXPECT_EQ(d.message, "integer overflow in a sum of i64 values");
  EXPECT_TRUE(same_span(d.span, span(1)));

  // x[(2^63 - 1) * i + 1] for i = 1 overflows while computing the index.
  ir::Function g = make_function("g", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.gen({{i, sv("n")}}, [&] {
      return var(b.index(var(x),
                         {ir::affine_index(*Affine::add(
                             Affine::var(i, std::numeric_limits<int64_t>::max()), ac(1)))},
                         span(2)));
    }));
  });
  d = run(g, {vec({0, 0, 0})}).error();
  EXPECT_EQ(d.message.rfind("integer overflow in the index", 0), 0u) << d.message;
  EXPECT_TRUE(same_span(d.span, span(2)));
}

TEST(InterpErrors, AllocationLimits) {
  // for i: n * n, j: n * n. 0.0  -- 10^12 elements for n = 1000
  ir::Function f = make_function("big", [](Builder& b) {
    b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i"), j = b.index_var("j");
    return var(b.gen(
        {{i, sv("n") * sv("n")}, {j, sv("n") * sv("n")}}, [&] { return real(0); }, span(1)));
  });
  Diagnostic d = run(f, {Value::zeros(DType::F64, {1000})}).error();
  EXPECT_NE(d.message.find("more than the limit"), std::string::npos) << d.message;
  EXPECT_TRUE(same_span(d.span, span(1)));
  Options small;
  small.max_tensor_elements = 10;
  Diagnostic e = run(f, {Value::zeros(DType::F64, {2})}, small).error();
  EXPECT_EQ(e.message, "a tensor of shape [4, 4] has 16 elements, more than the limit of 10");
}

TEST(InterpErrors, ElementCountOverflow) {
  // for i: n, j: n, k: n, l: n. 0.0  with n = 2^16 + 1: the count overflows before the limit.
  ir::Function f = make_function("big", [](Builder& b) {
    VarId i = b.index_var("i"), j = b.index_var("j"), k = b.index_var("k"), l = b.index_var("l");
    VarId n = b.param("n", i64t());
    (void)n;
    SizeExpr e = SizeExpr::constant(int64_t{1} << 20);
    return var(b.gen(
        {{i, e}, {j, e}, {k, e}, {l, e}}, [&] { return real(0); }, span(1)));
  });
  Diagnostic d = run(f, {Value::i64(0)}).error();
  EXPECT_NE(d.message.find("overflows"), std::string::npos) << d.message;
}

TEST(InterpErrors, NegativeGeneratorExtent) {
  // for i: n - 2. x[i]   with n = 1
  ir::Function f = make_function("f", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.gen(
        {{i, sv("n") - sc(2)}}, [&] { return var(b.index(var(x), {at(i)})); }, span(1)));
  });
  Diagnostic d = run(f, {vec({1})}).error();
  EXPECT_EQ(d.message, "the extent n - 2 of index i is negative (-1)");
  // A reduction over a negative extent is empty instead (like a loop's trip count).
  ir::Function s = make_function("s", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.reduce(ReduceKind::Sum, {{i, sv("n") - sc(2)}},
                        [&] { return var(b.index(var(x), {at(i)})); }));
  });
  EXPECT_EQ(run(s, {vec({1})}).value().as_f64(), 0);
}

TEST(InterpErrors, ConversionOfNaNToInteger) {
  ir::Function f = make_function("f", [](Builder& b) {
    VarId x = b.param("x", f64t());
    return var(b.prim(Prim::ToI64, {var(x)}, span(1)));
  });
  EXPECT_EQ(run(f, {Value::f64(-2.7)}).value().as_i64(), -2);
  Diagnostic d = run(f, {Value::f64(std::numeric_limits<double>::quiet_NaN())}).error();
  EXPECT_NE(d.message.find("NaN"), std::string::npos) << d.message;
  EXPECT_TRUE(same_span(d.span, span(1)));
  d = run(f, {Value::f64(1e19)}).error();
  EXPECT_NE(d.message.find("range"), std::string::npos) << d.message;
  EXPECT_EQ(run(f, {Value::f64(-0x1p63)}).value().as_i64(), std::numeric_limits<int64_t>::min());
}

TEST(InterpErrors, DerivativeOperatorsAreNotSupportedYet) {
  ir::Function loss = make_function("loss", [](Builder& b) {
    b.param("w", f64t({sv("k")}));
    b.param("X", f64t({sv("m"), sv("k")}));
    return real(0);
  });
  ir::Function g;
  g.name = "grad(loss, w)";
  g.derivation = ir::Derivation{ast::DerivKind::Grad, "loss", {0}};
  ir::Function user = make_function("user", [](Builder& b) {
    VarId w = b.param("w", f64t({sv("k")}));
    VarId x = b.param("X", f64t({sv("m"), sv("k")}));
    return var(b.call("grad(loss, w)", {var(w), var(x)}, f64t({sv("k")}), span(6)));
  });
  ir::Program p = program_of({loss, g, user});
  Diagnostic d = run(p, "user", {vec({1}), mat(1, 1, {1})}).error();
  EXPECT_EQ(d.message,
            "derivative operators are not supported yet: grad(loss, w) cannot be evaluated by "
            "this version");
  EXPECT_TRUE(same_span(d.span, span(6)));
}

TEST(InterpErrors, RecursionIsAnErrorNotAStackOverflow) {
  // The checker rejects recursion; the interpreter still must not overflow the stack on it.
  ir::Function f = make_function("f", [](Builder& b) {
    VarId x = b.param("x", f64t());
    return var(b.call("f", {var(x)}, f64t(), span(3)));
  });
  Diagnostic d = run(f, {Value::f64(1)}).error();
  EXPECT_NE(d.message.find("calls nest more than 256 deep"), std::string::npos) << d.message;
}

TEST(InterpErrors, MalformedIrIsAnErrorNotACrash) {
  ir::Function f = make_function("f", [](Builder& b) {
    VarId x = b.param("x", f64t());
    return var(b.prim(Prim::Neg, {var(x)}));
  });
  std::get<ir::PrimOp>(f.body.stmts[0].op).args[0] = var(1234);
  Diagnostic d = run(f, {Value::f64(1)}).error();
  EXPECT_NE(d.message.find("internal error"), std::string::npos) << d.message;
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::interp::testing
