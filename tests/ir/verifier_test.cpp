#include "ir/verifier.h"

#include <gtest/gtest.h>

#include "ir/builder.h"

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
IndexExpr at(VarId v) {
  return affine_index(Affine::var(v));
}

Function& add_function(Program& p, const std::string& name) {
  p.functions.emplace_back();
  p.functions.back().name = name;
  return p.functions.back();
}

std::string messages(const std::vector<VerifyError>& errors) {
  std::string s;
  for (const auto& e : errors) s += e.function + ": " + e.message + "\n";
  return s;
}

// The only error's message; fails the test when there is not exactly one.
std::string only_error(const Program& p) {
  auto errors = verify(p);
  EXPECT_EQ(errors.size(), 1u) << messages(errors);
  return errors.empty() ? "" : errors[0].message;
}

// dot(x: f64[n], y: f64[n]) -> f64 = sum i: n. x[i] * y[i]
void add_dot(Program& p) {
  Function& f = add_function(p, "dot");
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId y = b.param("y", f64v({sv("n")}));
  VarId i = b.index_var("i");
  VarId s = b.reduce(ReduceKind::Sum, {{i, sv("n")}}, [&] {
    VarId xi = b.named(b.index(Atom::of(x), {at(i)}), "xi");
    VarId yi = b.named(b.index(Atom::of(y), {at(i)}), "yi");
    return Atom::of(b.named(b.prim(Prim::Mul, {Atom::of(xi), Atom::of(yi)}), "p"));
  });
  b.finish({Atom::of(b.named(s, "s"))});
}

// A function that uses every operation, built correctly.
void add_everything(Program& p) {
  add_dot(p);
  Function& f = add_function(p, "everything");
  Builder b(f);
  VarId a = b.param("A", f64v({sv("m"), sv("n")}));
  VarId idx = b.param("idx", Type::tensor(Scalar::I64, {sv("m")}));
  VarId steps = b.param("steps", kI64);
  VarId i = b.index_var("i");
  VarId j = b.index_var("j");
  VarId o = b.index_var("o");
  VarId rows = b.gen({{i, sv("m")}}, [&] {
    VarId row = b.index(Atom::of(a), {at(i)});
    return Atom::of(b.call("dot", {Atom::of(row), Atom::of(row)}, kF64));
  });
  VarId g = b.gen({{j, sv("n")}}, [&] {
    Pred pr = *Pred::compare(Affine::var(j), ">", Affine::constant(0));
    return Atom::of(b.guard(pr, [&] {
      return std::vector<Atom>{
          Atom::of(b.index(Atom::of(a), {computed_index(Atom::i64(0)), at(j)}))};
    })[0]);
  });
  VarId acc = b.accum({sv("n")}, {{o, sv("m")}}, [&] {
    VarId k = b.index(Atom::of(idx), {at(o)});
    return std::vector<Atom>{Atom::of(k), Atom::of(b.index(Atom::of(rows), {at(o)}))};
  });
  auto l = b.loop_for(
      {Atom::of(acc), Atom::real(0)}, Atom::of(steps), [&](const std::vector<VarId>& s, VarId t) {
        VarId tf = b.prim(Prim::ToF64, {Atom::of(t)});
        return std::vector<Atom>{Atom::of(s[0]),
                                 Atom::of(b.prim(Prim::Add, {Atom::of(s[1]), Atom::of(tf)}))};
      });
  auto w = b.loop_while(
      {Atom::of(l[1])},
      [&](const std::vector<VarId>& s) {
        return Atom::of(b.prim(Prim::Lt, {Atom::of(s[0]), Atom::real(10)}));
      },
      [&](const std::vector<VarId>& s, VarId) {
        return std::vector<Atom>{Atom::of(b.prim(Prim::Add, {Atom::of(s[0]), Atom::real(1)}))};
      });
  VarId c = b.prim(Prim::Gt, {Atom::of(w[0]), Atom::real(5)});
  auto r = b.if_(
      Atom::of(c), [&] { return std::vector<Atom>{Atom::of(g)}; },
      [&] { return std::vector<Atom>{Atom::of(l[0])}; });
  VarId t = b.tuple({Atom::of(r[0]), Atom::of(b.size(sv("m") + sv("n")))});
  VarId first = b.proj(Atom::of(t), 0);
  b.finish({Atom::of(first), Atom::of(rows)});
}

TEST(Verifier, AcceptsWellFormedIR) {
  Program p;
  add_everything(p);
  EXPECT_EQ(messages(verify(p)), "");
}

TEST(Verifier, ReportsADoubleBinding) {
  Program p;
  add_dot(p);
  Function& f = p.functions[0];
  // y[i] binds xi again (and yi is never bound).
  auto& body = f.body.stmts[0].as<ReduceOp>()->body;
  body.stmts[1].results[0] = body.stmts[0].results[0];
  auto errors = verify(p);
  ASSERT_EQ(errors.size(), 2u) << messages(errors);
  EXPECT_EQ(errors[0].function, "dot");
  EXPECT_EQ(errors[0].message,
            "variable xi is bound twice\n"
            "  in:\n"
            "    let xi = y[i]");
  EXPECT_EQ(errors[1].message.substr(0, 29), "yi is used before it is bound");

  // A region's index variable that is also a parameter.
  add_dot(p);
  p.functions.erase(p.functions.begin());
  auto& red = *p.functions[0].body.stmts[0].as<ReduceOp>();
  red.ivars[0].var = p.functions[0].params[1];
  errors = verify(p);
  ASSERT_FALSE(errors.empty());
  EXPECT_EQ(errors[0].message.substr(0, 30), "index variable y is bound twic");
}

TEST(Verifier, ReportsAUseOutOfScopeWithTheStatementPrinted) {
  Program p;
  add_dot(p);
  Function& f = p.functions[0];
  // Yield the product from inside the sum's body at the function level.
  const auto* red = f.body.stmts[0].as<ReduceOp>();
  f.body.results[0] = red->body.results[0];
  EXPECT_EQ(only_error(p), "p is used out of its scope");

  // An index variable used after its region, in a statement: the message shows the statement.
  Function& g = add_function(p, "g");
  Builder b(g);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId i = b.index_var("i");
  b.gen({{i, sv("n")}}, [&] { return Atom::of(x); });
  VarId bad = b.named(b.index(Atom::of(x), {at(i)}), "bad");
  b.finish({Atom::of(bad)});
  p.functions.erase(p.functions.begin());
  EXPECT_EQ(only_error(p),
            "i is used out of its scope\n"
            "  in:\n"
            "    let bad = x[i]");
}

TEST(Verifier, ReportsAUseBeforeTheBinding) {
  Program p;
  add_dot(p);
  Function& f = p.functions[0];
  auto& body = f.body.stmts[0].as<ReduceOp>()->body;
  std::swap(body.stmts[0], body.stmts[2]);  // the product now comes before its operands
  auto errors = verify(p);
  ASSERT_EQ(errors.size(), 2u) << messages(errors);
  EXPECT_EQ(errors[0].message,
            "xi is used before it is bound\n"
            "  in:\n"
            "    let p = xi * yi");
  EXPECT_EQ(errors[1].message.substr(0, 29), "yi is used before it is bound");
}

TEST(Verifier, ReportsPrimitiveTypeMismatches) {
  Program p;
  Function& f = add_function(p, "f");
  Builder b(f);
  VarId x = b.param("x", kF64);
  VarId k = b.param("k", kI64);
  VarId v = b.param("v", f64v({sv("n")}));
  VarId y = b.named(b.prim(Prim::Add, {Atom::of(x), Atom::real(1)}), "y");
  b.finish({Atom::of(y)});
  f.body.stmts[0].as<PrimOp>()->args[1] = Atom::of(k);
  std::string m = only_error(p);
  EXPECT_NE(m.find("in:\n    let y = x + k"), std::string::npos) << m;

  f.body.stmts[0].as<PrimOp>()->args[1] = Atom::of(v);
  EXPECT_EQ(only_error(p),
            "add operand v has type f64[n]; primitives apply to scalars\n"
            "  in:\n"
            "    let y = x + v");

  f.body.stmts[0].as<PrimOp>()->args[1] = Atom::real(2);
  f.vars[static_cast<size_t>(y)].type = kI64;
  f.result_type = kI64;
  EXPECT_EQ(only_error(p),
            "y has type i64 but the operation yields f64\n"
            "  in:\n"
            "    let y = x + 2.0");

  f.vars[static_cast<size_t>(y)].type = kF64;
  f.result_type = kF64;
  f.body.stmts[0].as<PrimOp>()->args.pop_back();
  EXPECT_EQ(only_error(p).substr(0, 29), "add takes 2 operands, not 1\n ");
}

TEST(Verifier, ReportsAWrongGeneratorResultType) {
  Program p;
  Function& f = add_function(p, "f");
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId i = b.index_var("i");
  VarId g =
      b.named(b.gen({{i, sv("n")}}, [&] { return Atom::of(b.index(Atom::of(x), {at(i)})); }), "g");
  b.finish({Atom::of(g)});
  f.vars[static_cast<size_t>(g)].type = f64v({sv("n") + SizeExpr::constant(1)});
  f.result_type = f.vars[static_cast<size_t>(g)].type;
  std::string m = only_error(p);
  EXPECT_EQ(m.substr(0, m.find('\n')), "g has type f64[n + 1] but the operation yields f64[n]");

  // A body that yields a tuple.
  f.vars[static_cast<size_t>(g)].type = f64v({sv("n")});
  f.result_type = f64v({sv("n")});
  f.body.stmts[0].as<GenOp>()->body.results.push_back(Atom::real(1));
  m = only_error(p);
  EXPECT_EQ(m.substr(0, m.find('\n')), "the generator body yields 2 values; it must yield one");
}

TEST(Verifier, ReportsExtentsAndTypesOverUnknownSizeVariables) {
  Program p;
  Function& f = add_function(p, "f");
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId i = b.index_var("i");
  VarId g = b.gen({{i, sv("q")}}, [&] { return Atom::of(x); });
  b.finish({Atom::of(g)});
  auto errors = verify(p);
  ASSERT_EQ(errors.size(), 3u) << messages(errors);
  EXPECT_EQ(errors[0].message, "the result type mentions q, not a size variable of f");
  EXPECT_EQ(errors[1].message,
            "the extent of i mentions q, not a size variable of f\n"
            "  in:\n"
            "    let t3 = for i: q. x");
  EXPECT_EQ(errors[2].message.substr(0, errors[2].message.find('\n')),
            "the type of t3 mentions q, not a size variable of f");
}

TEST(Verifier, ReportsIndexingErrors) {
  Program p;
  Function& f = add_function(p, "f");
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId fl = b.param("r", kF64);
  VarId e = b.named(b.index(Atom::of(x), {computed_index(Atom::i64(0))}), "e");
  b.finish({Atom::of(e)});
  auto& ix = *f.body.stmts[0].as<IndexOp>();
  ix.indices.push_back(computed_index(Atom::i64(0)));
  EXPECT_EQ(only_error(p),
            "indexes x of type f64[n] with 2 indices\n"
            "  in:\n"
            "    let e = x[0, 0]");
  ix.indices = {computed_index(Atom::of(fl))};
  EXPECT_EQ(only_error(p).substr(0, 37), "the index r has type f64; it must be ");
  ix.indices = {affine_index(Affine::var(fl))};
  EXPECT_EQ(only_error(p).substr(0, 59),
            "an affine index expression uses r of type f64; it must be i");
}

TEST(Verifier, ReportsRegionTypeErrors) {
  Program p;
  Function& f = add_function(p, "f");
  Builder b(f);
  VarId x = b.param("x", kF64);
  VarId n = b.param("k", kI64);
  VarId c = b.named(b.prim(Prim::Gt, {Atom::of(x), Atom::real(0)}), "c");
  auto l = b.loop_for({Atom::of(x)}, Atom::of(n), [&](const std::vector<VarId>& s, VarId) {
    return std::vector<Atom>{Atom::of(s[0])};
  });
  auto r = b.if_(
      Atom::of(c), [&] { return std::vector<Atom>{Atom::of(l[0])}; },
      [&] { return std::vector<Atom>{Atom::real(1)}; });
  VarId i = b.index_var("i");
  VarId s = b.reduce(ReduceKind::Max, {{i, SizeExpr::constant(3)}}, [&] { return Atom::of(r[0]); });
  b.finish({Atom::of(s)});
  ASSERT_EQ(messages(verify(p)), "");

  auto first_line = [](const std::string& m) { return m.substr(0, m.find('\n')); };
  auto* loop = f.body.stmts[1].as<LoopOp>();
  loop->body.results[0] = Atom::i64(1);
  EXPECT_EQ(first_line(only_error(p)), "the loop body yields i64 for the state s of type f64");
  loop->body.results[0] = Atom::of(loop->state[0]);
  loop->count = Atom::real(2);
  EXPECT_EQ(first_line(only_error(p)), "the trip count literal has type f64; it must be i64");
  loop->count = Atom::of(n);

  auto* iff = f.body.stmts[2].as<IfOp>();
  iff->else_branch.results[0] = Atom::boolean(false);
  EXPECT_EQ(first_line(only_error(p)), "t6 has type f64 but the operation yields bool");
  iff->else_branch.results[0] = Atom::real(1);
  iff->cond = Atom::of(x);
  EXPECT_EQ(first_line(only_error(p)), "the condition x has type f64; it must be bool");
  iff->cond = Atom::of(c);

  auto* red = f.body.stmts[3].as<ReduceOp>();
  red->body.results[0] = Atom::of(c);
  EXPECT_EQ(first_line(only_error(p)), "the reduction body yields bool; it must be real or i64");
}

TEST(Verifier, ReportsGuardAndProjectionErrors) {
  Program p;
  Function& f = add_function(p, "f");
  Builder b(f);
  VarId x = b.param("x", kF64);
  VarId k = b.param("k", kI64);
  VarId c = b.named(b.prim(Prim::Gt, {Atom::of(x), Atom::real(0)}), "c");
  auto g = b.guard(Pred::conj({Pred::atom_of(c), Pred::ge0(Affine::var(k))}), [&] {
    return std::vector<Atom>{Atom::of(x), Atom::of(k)};
  });
  VarId t = b.tuple({Atom::of(g[0]), Atom::of(g[1])});
  VarId e = b.named(b.proj(Atom::of(t), 1), "e");
  b.finish({Atom::of(e)});
  ASSERT_EQ(messages(verify(p)), "");
  auto first_line = [](const std::string& m) { return m.substr(0, m.find('\n')); };

  auto* guard = f.body.stmts[1].as<GuardOp>();
  guard->pred = Pred::conj({Pred::atom_of(k), Pred::ge0(Affine::var(x))});
  auto errors = verify(p);
  ASSERT_EQ(errors.size(), 2u) << messages(errors);
  EXPECT_EQ(errors[0].message,
            "the predicate atom k has type i64; it must be bool\n"
            "  in:\n"
            "    let (t3, t4) = if k && x >= 0 then (x, k) else (0.0, 0)");
  EXPECT_EQ(first_line(errors[1].message), "a predicate uses x of type f64; it must be i64");
  guard->pred = Pred::atom_of(e);  // bound later
  EXPECT_EQ(first_line(only_error(p)), "e is used before it is bound");
  guard->pred = Pred::truth();
  guard->body.results.pop_back();
  EXPECT_EQ(first_line(only_error(p)), "the guard body yields 1 values for 2 results");
  guard->body.results.push_back(Atom::of(k));

  f.body.stmts[3].as<ProjOp>()->index = 2;
  EXPECT_EQ(first_line(only_error(p)), "projection 2 of t5 of type (f64, i64)");
  f.body.stmts[3].as<ProjOp>()->index = 0;
  EXPECT_EQ(first_line(only_error(p)), "e has type i64 but the operation yields f64");
}

TEST(Verifier, ReportsWhileLoopAndAccumErrors) {
  Program p;
  Function& f = add_function(p, "f");
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  auto w = b.loop_while(
      {Atom::real(1)},
      [&](const std::vector<VarId>& s) {
        return Atom::of(b.prim(Prim::Lt, {Atom::of(s[0]), Atom::real(10)}));
      },
      [&](const std::vector<VarId>& s, VarId) {
        return std::vector<Atom>{Atom::of(b.prim(Prim::Add, {Atom::of(s[0]), Atom::real(1)}))};
      });
  VarId o = b.index_var("o");
  VarId acc = b.accum({sv("n")}, {{o, sv("n")}}, [&] {
    return std::vector<Atom>{Atom::of(o), Atom::of(w[0])};
  });
  VarId r = b.index(Atom::of(acc), {computed_index(Atom::i64(0))});
  b.finish({Atom::of(r)});
  (void)x;
  ASSERT_EQ(messages(verify(p)), "");
  auto first_line = [](const std::string& m) { return m.substr(0, m.find('\n')); };

  auto* loop = f.body.stmts[0].as<LoopOp>();
  Atom cond = loop->cond.results[0];
  loop->cond.results[0] = Atom::of(loop->state[0]);
  EXPECT_EQ(first_line(only_error(p)), "the loop condition yields f64; it must be bool");
  loop->cond.results[0] = cond;
  // The state is local to the loop.
  f.body.results[0] = Atom::of(loop->state[0]);
  f.result_type = kF64;
  EXPECT_EQ(only_error(p), "s is used out of its scope");
  f.body.results[0] = Atom::of(r);

  auto* ac = f.body.stmts[1].as<AccumOp>();
  ac->body.results[0] = Atom::real(0);
  EXPECT_EQ(first_line(only_error(p)), "accum position 0 has type f64; it must be i64");
  ac->body.results.erase(ac->body.results.begin());
  EXPECT_EQ(first_line(only_error(p)),
            "the accum body yields 1 values; it must yield 1 positions and a value");
}

TEST(Verifier, ChecksCallsUpToSizeVariableSubstitution) {
  Program p;
  add_dot(p);
  {
    // rows(A: f64[r, c]) -> f64[r]: a callee whose result has a size.
    Function& g = add_function(p, "rows");
    Builder b(g);
    VarId a = b.param("A", f64v({sv("r"), sv("c")}));
    VarId i = b.index_var("i");
    VarId v = b.gen({{i, sv("r")}}, [&] {
      return Atom::of(b.index(Atom::of(a), {at(i), computed_index(Atom::i64(0))}));
    });
    b.finish({Atom::of(v)});
  }
  Function& f = add_function(p, "f");
  Builder b(f);
  VarId x = b.param("x", f64v({sv("m") + SizeExpr::constant(1)}));
  VarId y = b.param("y", f64v({sv("m") + SizeExpr::constant(1)}));
  VarId z = b.param("z", f64v({sv("m")}));
  VarId M = b.param("M", f64v({sv("m"), sv("k")}));
  VarId d = b.named(b.call("dot", {Atom::of(x), Atom::of(y)}, kF64), "d");
  VarId r = b.named(b.call("rows", {Atom::of(M)}, f64v({sv("m")})), "r");
  VarId t = b.tuple({Atom::of(d), Atom::of(r)});
  b.finish({Atom::of(t)});
  ASSERT_EQ(messages(verify(p)), "");

  auto first_line = [](const std::string& m) { return m.substr(0, m.find('\n')); };
  auto* call = f.body.stmts[0].as<CallOp>();
  call->args[1] = Atom::of(z);
  EXPECT_EQ(first_line(only_error(p)),
            "argument 1 of dot has shape f64[m]; the parameter's shape f64[n] is f64[m + 1] here");
  call->args[1] = Atom::of(M);
  EXPECT_EQ(first_line(only_error(p)),
            "argument 1 of dot has type f64[m, k]; the parameter has type f64[n]");
  call->args.pop_back();
  EXPECT_EQ(first_line(only_error(p)), "calls dot with 1 arguments; it takes 2");
  call->args.push_back(Atom::of(y));
  call->callee = "dotx";
  EXPECT_EQ(first_line(only_error(p)), "calls dotx, which is not in the program");
  call->callee = "dot";

  f.vars[static_cast<size_t>(r)].type = f64v({sv("k")});
  f.result_type = Type::tuple({kF64, f64v({sv("k")})});
  f.vars[static_cast<size_t>(t)].type = f.result_type;
  EXPECT_EQ(first_line(only_error(p)), "r has type f64[k] but the operation yields f64[m]");
}

TEST(Verifier, ReportsBrokenFunctionSignatures) {
  Program p;
  add_dot(p);
  Function& f = p.functions[0];
  f.result_type = kI64;
  EXPECT_EQ(only_error(p), "the body yields f64 but the function returns i64");
  f.result_type = kF64;
  f.size_vars[0].dim = 1;
  EXPECT_EQ(only_error(p), "size variable n is bound at a dimension of x that is not n");
  f.size_vars[0].dim = 0;
  f.body.results.push_back(Atom::real(0));
  EXPECT_EQ(only_error(p), "the body yields 2 values; a function yields one");
  f.body.results.pop_back();

  // A derived function without a body is fine; one whose base is missing is not.
  Function& g = add_function(p, "dot_grad");
  g.derivation = Derivation{ast::DerivKind::Grad, "dot", {0}};
  EXPECT_EQ(messages(verify(p)), "");
  g.derivation->wrt = {2};
  EXPECT_EQ(only_error(p),
            "differentiates with respect to parameter 2 of dot, which does not exist");
  g.derivation->base = "nope";
  EXPECT_EQ(only_error(p), "derived from nope, which is not in the program");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::ir
