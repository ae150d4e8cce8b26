// Saving loops (LoopOp::saves_states): built with ir::Builder, verified, printed and evaluated.
// A saving loop binds its final state, the number of iterations T it ran (a dynamic size
// variable of the function) and per state variable the stack of its values at the start of
// every iteration, of type [T] ++ the state's type.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "check/drop_unused_tuples.h"
#include "interp/interp_test_util.h"
#include "ir/printer.h"
#include "ir/uses.h"
#include "ir/verifier.h"

namespace cot::ir {
namespace COTANGENT_TEST_UNIT {

using cotangent::DType;
using cotangent::Value;
using interp::testing::run;
using interp::testing::vec;

SizeExpr sv(const char* n) {
  return SizeExpr::var(n);
}
Type f64v(std::vector<SizeExpr> shape) {
  return Type::tensor(Scalar::F64, std::move(shape));
}
const Type kF64 = Type::scalar(Scalar::F64);
const Type kI64 = Type::scalar(Scalar::I64);
IndexExpr at(VarId v) {
  return affine_index(Affine::var(v));
}

std::string messages(const std::vector<VerifyError>& errors) {
  std::string s;
  for (const auto& e : errors) s += e.function + ": " + e.message + "\n";
  return s;
}

Program one(Function f) {
  Program p;
  p.functions.push_back(std::move(f));
  return p;
}

std::vector<double> f64s(const Value& v) {
  auto d = v.f64_data();
  return {d.begin(), d.end()};
}
std::vector<int64_t> i64s(const Value& v) {
  auto d = v.i64_data();
  return {d.begin(), d.end()};
}

// The statement of the first loop at the top level of f's body.
Stmt& first_loop(Function& f) {
  for (auto& s : f.body.stmts) {
    if (s.as<LoopOp>()) return s;
  }
  throw std::logic_error("no loop");
}

// f(x: f64[n], k: i64) = loop (acc, v) = (1.0, x) for t < k saving { (acc * 2.0, v + 1.0) },
// returning (acc, v, T, acc_saved, v_saved).
Function for_program() {
  Function f;
  f.name = "f";
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId k = b.param("k", kI64);
  auto l = b.loop_for_saving(
      {Atom::real(1.0), Atom::of(x)}, Atom::of(k),
      [&](const std::vector<VarId>& s, VarId) {
        VarId acc = b.named(b.prim(Prim::Mul, {Atom::of(s[0]), Atom::real(2.0)}), "acc2");
        VarId i = b.index_var("i");
        VarId v =
            b.named(b.gen({{i, sv("n")}},
                          [&] {
                            VarId vi = b.index(Atom::of(s[1]), {at(i)});
                            return Atom::of(b.prim(Prim::Add, {Atom::of(vi), Atom::real(1.0)}));
                          }),
                    "v1");
        return std::vector<Atom>{Atom::of(acc), Atom::of(v)};
      },
      {"acc", "v"});
  b.named(l.final_state[0], "acc_final");
  b.named(l.final_state[1], "v_final");
  b.finish({Atom::of(l.final_state[0]), Atom::of(l.final_state[1]), Atom::of(l.count),
            Atom::of(l.stacks[0]), Atom::of(l.stacks[1])});
  return f;
}

// g(x0: f64, limit: f64) = loop (s, c) = (x0, 0) while s < limit saving { (s * 2.0, c + 1) },
// returning (s, c, T, s_saved, c_saved).
Function while_program() {
  Function f;
  f.name = "g";
  Builder b(f);
  VarId x0 = b.param("x0", kF64);
  VarId limit = b.param("limit", kF64);
  auto l = b.loop_while_saving(
      {Atom::of(x0), Atom::i64(0)},
      [&](const std::vector<VarId>& s) {
        return Atom::of(b.named(b.prim(Prim::Lt, {Atom::of(s[0]), Atom::of(limit)}), "go"));
      },
      [&](const std::vector<VarId>& s, VarId) {
        VarId s2 = b.named(b.prim(Prim::Mul, {Atom::of(s[0]), Atom::real(2.0)}), "s2");
        VarId c1 = b.named(b.prim(Prim::Add, {Atom::of(s[1]), Atom::i64(1)}), "c1");
        return std::vector<Atom>{Atom::of(s2), Atom::of(c1)};
      },
      {"s", "c"});
  b.named(l.final_state[0], "s_final");
  b.named(l.final_state[1], "c_final");
  b.finish({Atom::of(l.final_state[0]), Atom::of(l.final_state[1]), Atom::of(l.count),
            Atom::of(l.stacks[0]), Atom::of(l.stacks[1])});
  return f;
}

// --- builder --------------------------------------------------------------------------------

TEST(SavingLoopBuilder, ResultsTypesAndDynamicSizeVariables) {
  Function f;
  f.name = "f";
  Builder b(f);
  VarId x = b.param("x", f64v({sv("T")}));  // a parameter size variable already named T
  auto first = b.loop_for_saving(
      {Atom::of(x)}, Atom::i64(2),
      [&](const std::vector<VarId>& s, VarId) { return std::vector<Atom>{Atom::of(s[0])}; });
  auto second = b.loop_while_saving(
      {Atom::real(0.0)}, [&](const std::vector<VarId>&) { return Atom::boolean(false); },
      [&](const std::vector<VarId>& s, VarId) { return std::vector<Atom>{Atom::of(s[0])}; }, {"y"});
  b.finish({Atom::of(first.final_state[0]), Atom::of(second.final_state[0])});

  EXPECT_EQ(first.size_name, "T_2");
  EXPECT_EQ(second.size_name, "T_3");
  ASSERT_EQ(first.results.size(), 3u);
  EXPECT_EQ(first.results[1], first.count);
  EXPECT_EQ(f.type_of(first.count), kI64);
  EXPECT_EQ(f.type_of(first.stacks[0]), f64v({sv("T_2"), sv("T")}));
  EXPECT_EQ(f.type_of(second.stacks[0]), f64v({sv("T_3")}));
  EXPECT_EQ(f.vars[static_cast<size_t>(second.stacks[0])].name, "y_saved");
  ASSERT_EQ(f.size_vars.size(), 3u);
  EXPECT_EQ(f.size_vars[1].name, "T_2");
  EXPECT_EQ(f.size_vars[1].param, -1);
  EXPECT_EQ(f.size_vars[1].var, first.count);
  EXPECT_EQ(f.size_vars[2].var, second.count);
  const auto* loop = first_loop(f).as<LoopOp>();
  EXPECT_TRUE(loop->saves_states);
  EXPECT_FALSE(loop->is_while);
  EXPECT_EQ(messages(verify(one(f))), "");
}

TEST(SavingLoopBuilder, TupleStateIsMisuse) {
  Function f;
  f.name = "f";
  Builder b(f);
  VarId p = b.param("p", Type::tuple({kF64, kF64}));
  EXPECT_THROW(b.loop_for_saving({Atom::of(p)}, Atom::i64(1),
                                 [&](const std::vector<VarId>& s, VarId) {
                                   return std::vector<Atom>{Atom::of(s[0])};
                                 }),
               std::logic_error);
  EXPECT_TRUE(f.size_vars.empty());
}

// --- interpreter ----------------------------------------------------------------------------

TEST(SavingLoopInterp, ForLoopStacksScalarAndTensorStates) {
  Program p = one(for_program());
  ASSERT_EQ(messages(verify(p)), "");
  auto o = run(p, "f", {vec({1, 2}), Value::i64(3)});
  const Value& r = o.value();
  ASSERT_TRUE(r.is_tuple());
  ASSERT_EQ(r.elems().size(), 5u);
  EXPECT_EQ(r.elems()[0].as_f64(), 8.0);
  EXPECT_EQ(f64s(r.elems()[1]), (std::vector<double>{4, 5}));
  EXPECT_EQ(r.elems()[2].as_i64(), 3);
  EXPECT_EQ(r.elems()[3].shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(f64s(r.elems()[3]), (std::vector<double>{1, 2, 4}));
  EXPECT_EQ(r.elems()[4].shape(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(f64s(r.elems()[4]), (std::vector<double>{1, 2, 2, 3, 3, 4}));
}

TEST(SavingLoopInterp, ZeroOrNegativeTripCountGivesEmptyStacks) {
  Program p = one(for_program());
  for (int64_t k : {0, -4}) {
    auto o = run(p, "f", {vec({1, 2}), Value::i64(k)});
    const Value& r = o.value();
    ASSERT_TRUE(r.is_tuple());
    EXPECT_EQ(r.elems()[0].as_f64(), 1.0);
    EXPECT_EQ(f64s(r.elems()[1]), (std::vector<double>{1, 2}));
    EXPECT_EQ(r.elems()[2].as_i64(), 0);
    EXPECT_EQ(r.elems()[3].shape(), (std::vector<int64_t>{0}));
    EXPECT_EQ(r.elems()[4].shape(), (std::vector<int64_t>{0, 2}));
  }
}

TEST(SavingLoopInterp, WhileLoopSavesADataDependentNumberOfStates) {
  Program p = one(while_program());
  ASSERT_EQ(messages(verify(p)), "");
  auto o = run(p, "g", {Value::f64(1.0), Value::f64(100.0)});
  const Value& r = o.value();
  ASSERT_TRUE(r.is_tuple());
  EXPECT_EQ(r.elems()[0].as_f64(), 128.0);
  EXPECT_EQ(r.elems()[1].as_i64(), 7);
  EXPECT_EQ(r.elems()[2].as_i64(), 7);
  EXPECT_EQ(f64s(r.elems()[3]), (std::vector<double>{1, 2, 4, 8, 16, 32, 64}));
  EXPECT_EQ(r.elems()[4].dtype(), DType::I64);
  EXPECT_EQ(i64s(r.elems()[4]), (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));

  auto none = run(p, "g", {Value::f64(500.0), Value::f64(100.0)});
  const Value& z = none.value();
  ASSERT_TRUE(z.is_tuple());
  EXPECT_EQ(z.elems()[0].as_f64(), 500.0);
  EXPECT_EQ(z.elems()[2].as_i64(), 0);
  EXPECT_EQ(z.elems()[3].shape(), (std::vector<int64_t>{0}));
  EXPECT_EQ(z.elems()[4].shape(), (std::vector<int64_t>{0}));
}

TEST(SavingLoopInterp, WhileLoopLimitStillApplies) {
  Program p = one(while_program());
  interp::Options opts;
  opts.max_while_iterations = 3;
  auto o = run(p, "g", {Value::f64(1.0), Value::f64(100.0)}, opts);
  EXPECT_NE(o.error().message.find("did not finish within 3 iterations"), std::string::npos);
}

// The dynamic size T is usable after the loop: in an extent, a size read and a sum.
TEST(SavingLoopInterp, DynamicSizeInExtentsAfterTheLoop) {
  Function f;
  f.name = "h";
  Builder b(f);
  VarId limit = b.param("limit", kF64);
  auto l = b.loop_while_saving(
      {Atom::real(1.0)},
      [&](const std::vector<VarId>& s) {
        return Atom::of(b.prim(Prim::Lt, {Atom::of(s[0]), Atom::of(limit)}));
      },
      [&](const std::vector<VarId>& s, VarId) {
        return std::vector<Atom>{Atom::of(b.prim(Prim::Add, {Atom::of(s[0]), Atom::real(1.0)}))};
      },
      {"s"});
  const SizeExpr T = sv(l.size_name.c_str());
  VarId i = b.index_var("i");
  VarId doubled = b.gen({{i, T}}, [&] {
    VarId si = b.index(Atom::of(l.stacks[0]), {at(i)});
    return Atom::of(b.prim(Prim::Mul, {Atom::of(si), Atom::real(2.0)}));
  });
  VarId j = b.index_var("j");
  VarId total = b.reduce(ReduceKind::Sum, {{j, T}},
                         [&] { return Atom::of(b.index(Atom::of(doubled), {at(j)})); });
  VarId t1 = b.size(T + SizeExpr::constant(1));
  b.finish({Atom::of(doubled), Atom::of(total), Atom::of(t1)});
  Program p = one(f);
  ASSERT_EQ(messages(verify(p)), "");
  EXPECT_GE(use_counts(p.functions[0])[static_cast<size_t>(l.count)], 3);

  auto o = run(p, "h", {Value::f64(4.5)});
  const Value& r = o.value();
  ASSERT_TRUE(r.is_tuple());
  EXPECT_EQ(f64s(r.elems()[0]), (std::vector<double>{2, 4, 6, 8}));
  EXPECT_EQ(r.elems()[1].as_f64(), 20.0);
  EXPECT_EQ(r.elems()[2].as_i64(), 5);
}

// A saving loop inside a generator body runs once per point, each time with its own T.
TEST(SavingLoopInterp, NestedInAGeneratorEachRunHasItsOwnCount) {
  Function f;
  f.name = "tri";
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId j = b.index_var("j");
  std::string T;
  VarId out = b.gen({{j, sv("n")}}, [&] {
    auto l =
        b.loop_for_saving({Atom::real(1.0)}, Atom::of(j), [&](const std::vector<VarId>& s, VarId) {
          return std::vector<Atom>{Atom::of(b.prim(Prim::Add, {Atom::of(s[0]), Atom::real(1.0)}))};
        });
    T = l.size_name;
    VarId i = b.index_var("i");
    VarId sum = b.reduce(ReduceKind::Sum, {{i, sv(T.c_str())}},
                         [&] { return Atom::of(b.index(Atom::of(l.stacks[0]), {at(i)})); });
    VarId xj = b.index(Atom::of(x), {at(j)});
    return Atom::of(b.prim(Prim::Add, {Atom::of(sum), Atom::of(xj)}));
  });
  b.finish({Atom::of(out)});
  Program p = one(f);
  ASSERT_EQ(messages(verify(p)), "");
  auto o = run(p, "tri", {vec({0, 0, 0, 0, 100})});
  EXPECT_EQ(f64s(o.value()), (std::vector<double>{0, 1, 3, 6, 110}));
}

TEST(SavingLoopInterp, StacksRespectTheTensorSizeLimit) {
  Program p = one(for_program());
  interp::Options opts;
  opts.max_tensor_elements = 10;
  // Four iterations of a 2-vector state stack 8 elements: fine.
  auto ok = run(p, "f", {vec({1, 2}), Value::i64(4)}, opts);
  EXPECT_TRUE(ok.ok());
  // Six iterations would stack 12 > 10.
  auto o = run(p, "f", {vec({1, 2}), Value::i64(6)}, opts);
  EXPECT_EQ(o.error().message,
            "the saved states of v in a loop of 6 or more iterations would make a tensor of more "
            "than the limit of 10 elements");
}

TEST(SavingLoopInterp, SavingCostsNothing) {
  Function plain;
  plain.name = "f";
  {
    Builder b(plain);
    VarId x = b.param("x", kF64);
    auto r = b.loop_for({Atom::of(x)}, Atom::i64(5), [&](const std::vector<VarId>& s, VarId) {
      return std::vector<Atom>{Atom::of(b.prim(Prim::Mul, {Atom::of(s[0]), Atom::real(1.5)}))};
    });
    b.finish({Atom::of(r[0])});
  }
  Function saving;
  saving.name = "f";
  {
    Builder b(saving);
    VarId x = b.param("x", kF64);
    auto r =
        b.loop_for_saving({Atom::of(x)}, Atom::i64(5), [&](const std::vector<VarId>& s, VarId) {
          return std::vector<Atom>{Atom::of(b.prim(Prim::Mul, {Atom::of(s[0]), Atom::real(1.5)}))};
        });
    b.finish({Atom::of(r.final_state[0])});
  }
  auto a = run(one(plain), "f", {Value::f64(2.0)});
  auto c = run(one(saving), "f", {Value::f64(2.0)});
  EXPECT_EQ(a.value().as_f64(), c.value().as_f64());
  EXPECT_EQ(a.cost.mul, 5);
  EXPECT_EQ(c.cost.mul, a.cost.mul);
  EXPECT_EQ(c.cost.total(), a.cost.total());
}

// IR that reads a dynamic size before its loop ran (the verifier rejects it) is an internal
// error of the interpreter, not a crash or a wrong value.
TEST(SavingLoopInterp, DynamicSizeReadBeforeItsLoopIsAnInternalError) {
  Function f = for_program();
  VarId early = f.new_var("early", kI64);
  Stmt read;
  read.results = {early};
  read.op = SizeOp{sv("T")};
  f.body.stmts.insert(f.body.stmts.begin(), read);
  auto o = run(one(f), "f", {vec({1, 2}), Value::i64(2)});
  EXPECT_EQ(o.error().message,
            "internal error: the size T reads the dynamic size T before the saving loop that "
            "defines it has run");
}

// --- verifier -------------------------------------------------------------------------------

TEST(SavingLoopVerifier, RejectsAWrongResultCount) {
  Function f = for_program();
  first_loop(f).results.pop_back();
  auto errors = verify(one(f));
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].message.substr(0, errors[0].message.find('\n')),
            "the saving loop binds 4 variables; with 2 state variables it must bind 5 (the final "
            "state, the iteration count and the stacks)");
}

TEST(SavingLoopVerifier, RejectsAPlainLoopWithSavingResults) {
  Function f = for_program();
  first_loop(f).as<LoopOp>()->saves_states = false;
  auto errors = verify(one(f));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(messages(errors).find("the loop yields 2 values for 5 results"), std::string::npos)
      << messages(errors);
}

TEST(SavingLoopVerifier, RejectsAWrongStackType) {
  Function f = for_program();
  VarId stack = first_loop(f).results[4];
  f.vars[static_cast<size_t>(stack)].type = f64v({sv("T"), SizeExpr::constant(2)});
  auto errors = verify(one(f));
  ASSERT_FALSE(errors.empty());
  EXPECT_NE(messages(errors).find("v_saved has type f64[T, 2] but the operation yields f64[T, n]"),
            std::string::npos)
      << messages(errors);

  Function g = for_program();
  VarId s0 = first_loop(g).results[3];
  g.vars[static_cast<size_t>(s0)].type = Type::tensor(Scalar::F32, {sv("T")});
  EXPECT_NE(messages(verify(one(g)))
                .find("acc_saved has type f32[T] but the operation yields "
                      "f64[T]"),
            std::string::npos);
}

TEST(SavingLoopVerifier, RejectsACountThatIsNotADynamicSize) {
  Function f = for_program();
  f.size_vars.pop_back();  // the dynamic size T
  std::string m = messages(verify(one(f)));
  EXPECT_NE(m.find("of the saving loop is not the variable of a dynamic size variable of f"),
            std::string::npos)
      << m;

  Function g = for_program();
  g.size_vars.back().var = g.params[1];  // names k instead of the loop's T
  m = messages(verify(one(g)));
  EXPECT_NE(m.find("is not the variable of a dynamic size variable"), std::string::npos) << m;

  Function h = for_program();
  VarId t = first_loop(h).results[2];
  h.vars[static_cast<size_t>(t)].type = kF64;
  m = messages(verify(one(h)));
  EXPECT_NE(m.find("the iteration count T of the saving loop has type f64; it must be i64"),
            std::string::npos)
      << m;
}

TEST(SavingLoopVerifier, RejectsADynamicSizeNoStatementBinds) {
  Function f = for_program();
  VarId stray = f.new_var("stray", kI64);
  f.size_vars.push_back(SizeVar{"U", stray, -1, {}, 0});
  EXPECT_EQ(messages(verify(one(f))), "f: dynamic size variable U is not bound by any statement\n");
}

TEST(SavingLoopVerifier, RejectsADynamicSizeBeforeItsLoop) {
  Function f = for_program();
  VarId early = f.new_var("early", kI64);
  Stmt read;
  read.results = {early};
  read.op = SizeOp{sv("T")};
  f.body.stmts.insert(f.body.stmts.begin(), read);
  std::string m = messages(verify(one(f)));
  EXPECT_NE(m.find("the size mentions the dynamic size T where it is not defined (before the "
                   "saving loop that binds it)"),
            std::string::npos)
      << m;
}

TEST(SavingLoopVerifier, RejectsADynamicSizeOutOfItsScope) {
  // The loop runs inside a generator body; its T is not defined after the generator.
  Function f;
  f.name = "f";
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId j = b.index_var("j");
  std::string T;
  VarId out = b.gen({{j, sv("n")}}, [&] {
    auto l = b.loop_for_saving(
        {Atom::real(1.0)}, Atom::of(j),
        [&](const std::vector<VarId>& s, VarId) { return std::vector<Atom>{Atom::of(s[0])}; });
    T = l.size_name;
    return Atom::of(b.index(Atom::of(x), {at(j)}));
  });
  VarId late = b.size(sv(T.c_str()));
  b.finish({Atom::of(out), Atom::of(late)});
  std::string m = messages(verify(one(f)));
  EXPECT_NE(m.find("the size mentions the dynamic size T where it is not defined (out of the "
                   "scope of the saving loop that binds it)"),
            std::string::npos)
      << m;
}

TEST(SavingLoopVerifier, RejectsACallOfAFunctionThatReturnsAStack) {
  Program p = one(for_program());
  Function caller;
  caller.name = "caller";
  {
    Builder b(caller);
    VarId x = b.param("x", f64v({sv("m")}));
    VarId r = b.call("f", {Atom::of(x), Atom::i64(2)},
                     p.functions[0].result_type.substitute({{"n", sv("m")}}));
    b.finish({Atom::of(r)});
  }
  p.functions.push_back(std::move(caller));
  std::string m = messages(verify(p));
  EXPECT_NE(m.find("caller: calls f, whose result type (f64, f64[n], i64, f64[T], f64[T, n]) "
                   "has the dynamic size T, which a caller cannot name"),
            std::string::npos)
      << m;
}

TEST(SavingLoopVerifier, ResultTypeNamesOnlyDynamicSizesInScopeAtTheEnd) {
  Function f;
  f.name = "f";
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId j = b.index_var("j");
  VarId stack = -1;
  b.gen({{j, sv("n")}}, [&] {
    auto l = b.loop_for_saving(
        {Atom::real(1.0)}, Atom::of(j),
        [&](const std::vector<VarId>& s, VarId) { return std::vector<Atom>{Atom::of(s[0])}; });
    stack = l.stacks[0];
    return Atom::of(b.index(Atom::of(x), {at(j)}));
  });
  f.body.results = {Atom::of(x)};
  f.result_type = f.type_of(stack);  // f64[T], but T is local to the generator body
  std::string m = messages(verify(one(f)));
  EXPECT_NE(m.find("the result type mentions the dynamic size T where it is not defined (out of "
                   "the scope of the saving loop that binds it)"),
            std::string::npos)
      << m;
}

// drop_unused_tuples never removes a loop and leaves a saving loop well-formed.
TEST(SavingLoopVerifier, DropUnusedTuplesKeepsSavingLoopsCorrect) {
  Function f = for_program();
  check::drop_unused_tuples(f);
  EXPECT_EQ(messages(verify(one(f))), "");
  ASSERT_NE(first_loop(f).as<LoopOp>(), nullptr);
  EXPECT_EQ(first_loop(f).results.size(), 5u);
}

// --- printer --------------------------------------------------------------------------------

TEST(SavingLoopPrinter, PrintsForAndWhileForms) {
  Program p = one(for_program());
  EXPECT_EQ(
      print_function(p, p.functions[0]),
      "def f(x: f64[n], k: i64) -> (f64, f64[n], i64, f64[T], f64[T, n]) {\n"
      "  let (acc_final, v_final, T, acc_saved, v_saved) = loop (acc, v) = (1.0, x) for t < k "
      "saving {\n"
      "    let acc2 = acc * 2.0\n"
      "    let v1 = for i: n. {\n"
      "      let t8 = v[i]\n"
      "      let t9 = t8 + 1.0\n"
      "      t9\n"
      "    }\n"
      "    (acc2, v1)\n"
      "  }\n"
      "  let t16 = (acc_final, v_final, T, acc_saved, v_saved)\n"
      "  t16\n"
      "}\n");
  Program q = one(while_program());
  EXPECT_EQ(print_function(q, q.functions[0]),
            "def g(x0: f64, limit: f64) -> (f64, i64, i64, f64[T], i64[T]) {\n"
            "  let (s_final, c_final, T, s_saved, c_saved) = loop (s, c) = (x0, 0) while {\n"
            "    let go = s < limit\n"
            "    go\n"
            "  } saving {\n"
            "    let s2 = s * 2.0\n"
            "    let c1 = c + 1\n"
            "    (s2, c1)\n"
            "  }\n"
            "  let t12 = (s_final, c_final, T, s_saved, c_saved)\n"
            "  t12\n"
            "}\n");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::ir
