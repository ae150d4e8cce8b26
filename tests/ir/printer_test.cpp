#include "ir/printer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "ir/builder.h"
#include "syntax/parser.h"

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
IndexExpr at(VarId v, int64_t plus = 0) {
  return affine_index(*Affine::add(Affine::var(v), Affine::constant(plus)));
}

Function& add_function(Program& p, const std::string& name) {
  p.functions.emplace_back();
  p.functions.back().name = name;
  return p.functions.back();
}

// A function `f` whose body is `let r = (atoms...)`.
Program tuple_program(std::vector<Atom> atoms) {
  Program p;
  Function& f = add_function(p, "f");
  Builder b(f);
  VarId t = b.named(b.tuple(std::move(atoms)), "r");
  b.finish({Atom::of(t)});
  return p;
}

// The spellings of literals, comma-separated, as printed in a tuple.
std::string literals(std::vector<Atom> atoms) {
  Program p = tuple_program(std::move(atoms));
  std::string s = print_function(p, p.functions[0]);
  size_t open = s.find("let r = (");
  size_t close = s.find(")\n", open);
  return s.substr(open + 9, close - open - 9);
}

Program dot_program() {
  Program p;
  Function& f = add_function(p, "dot");
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId y = b.param("y", f64v({sv("n")}));
  VarId i = b.index_var("i");
  VarId s = b.reduce(ReduceKind::Sum, {{i, sv("n")}}, [&] {
    VarId xi = b.index(Atom::of(x), {at(i)});
    VarId yi = b.index(Atom::of(y), {at(i)});
    return Atom::of(b.prim(Prim::Mul, {Atom::of(xi), Atom::of(yi)}));
  });
  b.finish({Atom::of(s)});
  return p;
}

TEST(Printer, Dot) {
  Program p = dot_program();
  const Function& f = *p.find("dot");
  EXPECT_EQ(print_function(p, f),
            "def dot(x: f64[n], y: f64[n]) -> f64 {\n"
            "  let t7 = sum i: n. {\n"
            "    let t4 = x[i]\n"
            "    let t5 = y[i]\n"
            "    let t6 = t4 * t5\n"
            "    t6\n"
            "  }\n"
            "  t7\n"
            "}\n");
}

Program shift_program() {
  Program p;
  Function& f = add_function(p, "shift");
  Builder b(f);
  VarId a = b.param("A", f64v({sv("m"), sv("n")}));
  VarId i = b.index_var("i");
  VarId j = b.index_var("j");
  VarId k = b.index_var("k");
  VarId nm1 = b.size_var("n");
  // for i: m, j: n - 1. A[i, j + 1]  and  max k: m. A[m - 1 - k]  (a row) and a bare body.
  VarId g = b.named(b.gen({{i, sv("m")}, {j, sv("n") - SizeExpr::constant(1)}},
                          [&] {
                            return Atom::of(b.index(Atom::of(a), {at(i), at(j, 1)}));
                          }),
                    "g");
  Affine rev = *Affine::sub(*Affine::add(Affine::var(b.size_var("m")), Affine::constant(-1)),
                            Affine::var(k));
  VarId r = b.named(b.reduce(ReduceKind::Max, {{k, sv("m")}},
                             [&] { return Atom::of(b.index(Atom::of(a), {affine_index(rev)})); }),
                    "r");
  VarId l = b.index_var("l");
  VarId c = b.named(b.gen({{l, SizeExpr::constant(3)}}, [&] { return Atom::of(r); }), "c");
  VarId z = b.named(b.prim(Prim::Add, {Atom::of(nm1), Atom::i64(1)}), "z");
  b.finish({Atom::of(g), Atom::of(c), Atom::of(z)});
  return p;
}

TEST(Printer, GeneratorsReductionsAndAffineIndices) {
  Program p = shift_program();
  const Function& f = *p.find("shift");
  EXPECT_EQ(print_function(p, f),
            "def shift(A: f64[m, n]) -> (f64[m, n - 1], f64[3, n], i64) {\n"
            "  let g = for i: m, j: n - 1. {\n"
            "    let t6 = A[i, j + 1]\n"
            "    t6\n"
            "  }\n"
            "  let r = max k: m. {\n"
            "    let t8 = A[m - k - 1]\n"
            "    t8\n"
            "  }\n"
            "  let c = for l: 3. r\n"
            "  let z = n + 1\n"
            "  let t13 = (g, c, z)\n"
            "  t13\n"
            "}\n");
}

TEST(Printer, RealLiteralsAreShortestAndRoundTrip) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(literals({Atom::real(1), Atom::real(0.1), Atom::real(2.5e-7), Atom::real(100),
                      Atom::real(1e16), Atom::real(123456.789), Atom::real(0.0001)}),
            "1.0, 0.1, 2.5e-07, 100.0, 1e16, 123456.789, 0.0001");
  EXPECT_EQ(literals({Atom::real(-1.5), Atom::real(-0.0), Atom::real(inf), Atom::real(-inf),
                      Atom::real(std::nan(""))}),
            "(-1.5), (-0.0), (1.0 / 0.0), (-1.0 / 0.0), (0.0 / 0.0)");
  EXPECT_EQ(literals({Atom::real(1.0 / 3.0), Atom::real(5e-324), Atom::real(1.7976931348623157e308),
                      Atom::real(123456789012345680.0)}),
            "0.3333333333333333, 5e-324, 1.7976931348623157e308, 1.2345678901234568e17");
  EXPECT_EQ(literals({Atom::real(0.1f, Scalar::F32), Atom::real(-2.0f, Scalar::F32),
                      Atom::real(inf, Scalar::F32)}),
            "f32(0.1), f32(-2.0), f32(1.0 / 0.0)");
  EXPECT_EQ(literals({Atom::i64(3), Atom::i64(-3), Atom::i64(std::numeric_limits<int64_t>::min()),
                      Atom::boolean(true), Atom::boolean(false)}),
            "3, (-3), (-9223372036854775807 - 1), true, false");
}

TEST(Printer, RealLiteralsReadBackExactly) {
  // Every printed finite f64 literal parses back (strtod, as the lexer does) to the same bits.
  const double samples[] = {1.0 / 7,
                            6.02e23,
                            1e-300,
                            2.2250738585072014e-308,
                            4.9e-324,
                            1e22,
                            9007199254740993.0,
                            0.30000000000000004,
                            3.14159,
                            1e15,
                            1e-5};
  for (double x : samples) {
    std::string s = literals({Atom::real(x)});
    EXPECT_TRUE(s.find('.') != std::string::npos || s.find('e') != std::string::npos) << s;
    EXPECT_EQ(std::strtod(s.c_str(), nullptr), x) << s;
  }
}

Program names_program() {
  Program p;
  add_function(p, "helper");
  Function& f = add_function(p, "f");
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId e = b.param("exp", kF64);                                   // a built-in function's name
  VarId x2 = b.named(b.prim(Prim::Neg, {Atom::of(e)}), "x");        // shadows a parameter
  VarId kw = b.named(b.prim(Prim::Neg, {Atom::of(x2)}), "sum");     // a keyword
  VarId fn = b.named(b.prim(Prim::Neg, {Atom::of(kw)}), "helper");  // a function's name
  VarId gen = b.named(b.prim(Prim::Neg, {Atom::of(fn)}), "%3");     // a generated name
  VarId sz = b.named(b.prim(Prim::Neg, {Atom::of(gen)}), "n");      // the size variable's name
  VarId dg = b.named(b.prim(Prim::Neg, {Atom::of(sz)}), "grad");    // a derivative operator
  VarId odd = b.named(b.prim(Prim::Neg, {Atom::of(dg)}), "d.x'");   // illegal characters
  VarId w = b.named(b.prim(Prim::Neg, {Atom::of(odd)}), "_");       // the wildcard
  VarId sum = b.tuple({Atom::of(x), Atom::of(w)});
  b.finish({Atom::of(sum)});
  return p;
}

// Function names (built-in, derivative operators, the program's) are a separate namespace
// from variables, so they are kept; keywords, size variables and duplicates are renamed.
TEST(Printer, NamesAreUniqueLegalAndAvoidReservedWords) {
  Program p = names_program();
  const Function& f = *p.find("f");
  EXPECT_EQ(print_function(p, f),
            "def f(x: f64[n], exp: f64) -> (f64[n], f64) {\n"
            "  let x_3 = -exp\n"
            "  let sum_4 = -x_3\n"
            "  let helper = -sum_4\n"
            "  let t6 = -helper\n"
            "  let n_7 = -t6\n"
            "  let grad = -n_7\n"
            "  let d_x_ = -grad\n"
            "  let t10 = -d_x_\n"
            "  let t11 = (x, t10)\n"
            "  t11\n"
            "}\n");
  std::vector<std::string> names = printed_names(p, f);
  EXPECT_EQ(names[static_cast<size_t>(f.size_vars[0].var)], "n");
  EXPECT_EQ(names[3], "x_3");
}

Program prims_program() {
  Program p;
  Function& f = add_function(p, "prims");
  Builder b(f);
  VarId x = b.param("x", kF64);
  VarId k = b.param("k", kI64);
  VarId c = b.param("c", kBool);
  auto X = Atom::of(x), K = Atom::of(k), C = Atom::of(c);
  std::vector<Atom> out;
  auto add = [&](Prim pr, std::vector<Atom> args, const char* name) {
    out.push_back(Atom::of(b.named(b.prim(pr, std::move(args)), name)));
  };
  add(Prim::Sub, {X, Atom::real(-1)}, "a");
  add(Prim::Div, {X, X}, "b");
  add(Prim::ExactDiv, {K, Atom::i64(2)}, "d");
  add(Prim::FloorDiv, {K, Atom::i64(-2)}, "e");
  add(Prim::Mod, {K, Atom::i64(3)}, "g");
  add(Prim::Neg, {X}, "h");
  add(Prim::Not, {C}, "j");
  add(Prim::Le, {K, Atom::i64(0)}, "l");
  add(Prim::Ne, {C, Atom::boolean(true)}, "m");
  add(Prim::And, {C, C}, "o");
  add(Prim::Or, {C, C}, "q");
  add(Prim::Pow, {X, Atom::real(2)}, "r");
  add(Prim::Max, {X, Atom::real(0)}, "s");
  add(Prim::Atan2, {X, X}, "u");
  add(Prim::Sigmoid, {X}, "v");
  add(Prim::ToF64, {K}, "w");
  add(Prim::ToI64, {X}, "y");
  add(Prim::ToF32, {X}, "z");
  add(Prim::StopGradient, {X}, "sg");
  add(Prim::Select, {C, X, Atom::real(0.5)}, "sel");
  b.finish(out);
  return p;
}

TEST(Printer, PrimitiveSpellings) {
  Program p = prims_program();
  std::string s = print_function(p, *p.find("prims"));
  const char* expected =
      "def prims(x: f64, k: i64, c: bool) -> (f64, f64, i64, i64, i64, f64, bool, bool, bool, "
      "bool, bool, f64, f64, f64, f64, f64, i64, f32, f64, f64) {\n"
      "  let a = x - (-1.0)\n"
      "  let b = x / x\n"
      "  let d = k / 2\n"
      "  let e = k // (-2)\n"
      "  let g = k % 3\n"
      "  let h = -x\n"
      "  let j = !c\n"
      "  let l = k <= 0\n"
      "  let m = c != true\n"
      "  let o = c && c\n"
      "  let q = c || c\n"
      "  let r = pow(x, 2.0)\n"
      "  let s = max(x, 0.0)\n"
      "  let u = atan2(x, x)\n"
      "  let v = sigmoid(x)\n"
      "  let w = f64(k)\n"
      "  let y = i64(x)\n"
      "  let z = f32(x)\n"
      "  let sg = stop_gradient(x)\n"
      "  let sel = if c then x else 0.5\n";
  EXPECT_EQ(s.substr(0, std::string(expected).size()), expected);
}

Program guards_program() {
  Program p;
  Function& f = add_function(p, "guards");
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId flag = b.param("flag", kBool);
  VarId i = b.index_var("i");
  Pred in_range = *Pred::compare(*Affine::add(Affine::var(i), Affine::constant(1)), "<",
                                 Affine::var(b.size_var("n")));
  VarId g = b.named(b.gen({{i, sv("n")}},
                          [&] {
                            auto r = b.guard(in_range, [&] {
                              return std::vector<Atom>{Atom::of(b.index(Atom::of(x), {at(i, 1)}))};
                            });
                            return Atom::of(r[0]);
                          }),
                    "g");
  // Several real results; then a result that is not real-valued.
  auto two = b.guard(Pred::atom_of(flag), [&] {
    return std::vector<Atom>{Atom::real(1), Atom::of(g)};
  });
  b.named(two[0], "a");
  b.named(two[1], "bb");
  auto mixed = b.guard(Pred::atom_of(flag, true), [&] {
    VarId s = b.named(b.size(sv("n")), "len");
    return std::vector<Atom>{Atom::of(s), Atom::of(x), Atom::boolean(true)};
  });
  auto one_int = b.guard(Pred::atom_of(flag), [&] { return std::vector<Atom>{Atom::i64(7)}; });
  b.named(one_int[0], "seven");
  b.finish({Atom::of(two[0]), Atom::of(mixed[0]), Atom::of(one_int[0])});
  return p;
}

TEST(Printer, Guards) {
  Program p = guards_program();
  const Function& f = *p.find("guards");
  EXPECT_EQ(print_function(p, f),
            "def guards(x: f64[n], flag: bool) -> (f64, i64, i64) {\n"
            "  let g = for i: n. {\n"
            "    let t5 = [i + 1 < n] * {\n"
            "      let t4 = x[i + 1]\n"
            "      t4\n"
            "    }\n"
            "    t5\n"
            "  }\n"
            "  let (a, bb) = [flag] * (1.0, g)\n"
            "  let (t10, t11, t12) = if !flag then {\n"
            "    let len = n\n"
            "    (len, x, true)\n"
            "  } else (0, (for z: n. 0.0), false)\n"
            "  let seven = if flag then 7 else 0\n"
            "  let t14 = (a, t10, seven)\n"
            "  t14\n"
            "}\n");
}

Program loops_program() {
  Program p;
  Function& f = add_function(p, "loops");
  Builder b(f);
  VarId h0 = b.param("h0", f64v({sv("h")}));
  VarId steps = b.param("steps", kI64);
  auto rnn = b.loop_for(
      {Atom::of(h0), Atom::real(0)}, Atom::of(steps),
      [&](const std::vector<VarId>& s, VarId) {
        return std::vector<Atom>{Atom::of(s[0]),
                                 Atom::of(b.prim(Prim::Add, {Atom::of(s[1]), Atom::real(1)}))};
      },
      {"hs", "acc"}, "step");
  b.named(rnn[0], "hT");
  b.named(rnn[1], "total");
  auto single = b.loop_for(
      {Atom::of(rnn[1])}, Atom::i64(3),
      [&](const std::vector<VarId>& s, VarId) { return std::vector<Atom>{Atom::of(s[0])}; });
  auto w = b.loop_while(
      {Atom::of(single[0])},
      [&](const std::vector<VarId>& s) {
        return Atom::of(b.named(b.prim(Prim::Lt, {Atom::of(s[0]), Atom::real(100)}), "go"));
      },
      [&](const std::vector<VarId>& s, VarId) {
        return std::vector<Atom>{
            Atom::of(b.named(b.prim(Prim::Mul, {Atom::of(s[0]), Atom::real(2)}), "next"))};
      },
      {"v"});
  VarId big = b.named(b.prim(Prim::Gt, {Atom::of(w[0]), Atom::real(1000)}), "big");
  auto r = b.if_(
      Atom::of(big),
      [&] {
        return std::vector<Atom>{Atom::of(b.named(b.prim(Prim::Neg, {Atom::of(w[0])}), "neg")),
                                 Atom::i64(1)};
      },
      [&] {
        return std::vector<Atom>{Atom::of(w[0]), Atom::i64(0)};
      });
  auto one = b.if_(
      Atom::of(big), [&] { return std::vector<Atom>{Atom::of(h0)}; },
      [&] { return std::vector<Atom>{Atom::of(rnn[0])}; });
  b.finish({Atom::of(r[0]), Atom::of(r[1]), Atom::of(one[0])});
  return p;
}

TEST(Printer, LoopsAndIf) {
  Program p = loops_program();
  const Function& f = *p.find("loops");
  EXPECT_EQ(print_function(p, f),
            "def loops(h0: f64[h], steps: i64) -> (f64, i64, f64[h]) {\n"
            "  let (hT, total) = loop (hs, acc) = (h0, 0.0) for step < steps {\n"
            "    let t6 = acc + 1.0\n"
            "    (hs, t6)\n"
            "  }\n"
            "  let t11 = loop s = total for t < 3 { s }\n"
            "  let t15 = loop v = t11 while {\n"
            "    let go = v < 100.0\n"
            "    go\n"
            "  } {\n"
            "    let next = v * 2.0\n"
            "    next\n"
            "  }\n"
            "  let big = t15 > 1000.0\n"
            "  let (t18, t19) = if big then {\n"
            "    let neg = -t15\n"
            "    (neg, 1)\n"
            "  } else { (t15, 0) }\n"
            "  let t20 = if big then { h0 } else { hT }\n"
            "  let t21 = (t18, t19, t20)\n"
            "  t21\n"
            "}\n");
}

Program scatter_program() {
  Program p;
  Function& f = add_function(p, "scatter");
  Builder b(f);
  VarId idx = b.param("idx", Type::tensor(Scalar::I64, {sv("m")}));
  VarId v = b.param("v", f64v({sv("m")}));
  VarId o = b.index_var("o");
  VarId acc = b.named(b.accum({sv("m") * SizeExpr::constant(2)}, {{o, sv("m")}},
                              [&] {
                                VarId k = b.named(b.index(Atom::of(idx), {at(o)}), "k");
                                VarId val = b.named(b.index(Atom::of(v), {at(o)}), "val");
                                return std::vector<Atom>{Atom::of(k), Atom::of(val)};
                              }),
                      "acc");
  VarId t = b.named(b.tuple({Atom::of(acc), Atom::i64(1), Atom::of(v)}), "t");
  VarId mid = b.named(b.proj(Atom::of(t), 1), "mid");
  VarId len = b.named(b.size(sv("m") * SizeExpr::constant(2) + SizeExpr::constant(1)), "len");
  VarId pick = b.named(b.index(Atom::of(acc), {computed_index(Atom::of(mid))}), "pick");
  b.finish({Atom::of(pick), Atom::of(len)});
  return p;
}

TEST(Printer, AccumTupleProjectionAndSize) {
  Program p = scatter_program();
  const Function& f = *p.find("scatter");
  EXPECT_EQ(print_function(p, f),
            "def scatter(idx: i64[m], v: f64[m]) -> (f64, i64) {\n"
            "  let acc = accum[2 * m] o: m. {\n"
            "    let k = idx[o]\n"
            "    let val = v[o]\n"
            "    (k, val)\n"
            "  }\n"
            "  let t = (acc, 1, v)\n"
            "  let (_, mid, _) = t\n"
            "  let len = 2 * m + 1\n"
            "  let pick = acc[mid]\n"
            "  let t11 = (pick, len)\n"
            "  t11\n"
            "}\n");
}

// loss(w, X, y), grad(loss, w) and jvp(grad(loss, w), w) as a program with derived functions.
Program derived_program() {
  Program p;
  {
    Function& loss = add_function(p, "loss");
    Builder b(loss);
    b.param("w", f64v({sv("k")}));
    b.param("X", f64v({sv("m"), sv("k")}));
    b.param("y", f64v({sv("m")}));
    b.finish({Atom::real(0)});
  }
  {
    Function& g = add_function(p, "loss__grad_w");
    g.derivation = Derivation{ast::DerivKind::Grad, "loss", {0}};
  }
  {
    // A derived function that has its parameters: their names are used.
    Function& h = add_function(p, "hvp");
    Builder b(h);
    b.param("w", f64v({sv("k")}));
    b.param("X", f64v({sv("m"), sv("k")}));
    b.param("y", f64v({sv("m")}));
    b.param("dw", f64v({sv("k")}));
    h.derivation = Derivation{ast::DerivKind::Jvp, "loss__grad_w", {0}};
  }
  {
    Function& prelude = add_function(p, "sqnorm");
    prelude.from_prelude = true;
    Builder b(prelude);
    b.param("x", f64v({sv("n")}));
    b.finish({Atom::real(0)});
  }
  Function& f = add_function(p, "newton");
  Builder b(f);
  VarId w = b.param("w", f64v({sv("k")}));
  VarId X = b.param("X", f64v({sv("m"), sv("k")}));
  VarId y = b.param("y", f64v({sv("m")}));
  VarId g = b.named(
      b.call("loss__grad_w", {Atom::of(w), Atom::of(X), Atom::of(y)}, f64v({sv("k")})), "g");
  VarId hv = b.named(b.call("hvp", {Atom::of(w), Atom::of(X), Atom::of(y), Atom::of(g)},
                            Type::tuple({f64v({sv("k")}), f64v({sv("k")})})),
                     "hv");
  VarId n = b.named(b.call("sqnorm", {Atom::of(g)}, kF64), "n");
  b.finish({Atom::of(hv), Atom::of(n)});
  return p;
}

TEST(Printer, CallsOfDerivedFunctionsPrintAsDerivativeOperators) {
  Program p = derived_program();
  // `n` is the name of the variable here, not a size variable: it is kept.
  EXPECT_EQ(print_function(p, *p.find("newton")),
            "def newton(w: f64[k], X: f64[m, k], y: f64[m]) -> ((f64[k], f64[k]), f64) {\n"
            "  let g = grad(loss, w)(w, X, y)\n"
            "  let hv = jvp(grad(loss, w), w)(w, X, y, g)\n"
            "  let n = sqnorm(g)\n"
            "  let t8 = (hv, n)\n"
            "  t8\n"
            "}\n");
}

TEST(Printer, ProgramSkipsThePreludeAndFunctionsWithoutBodies) {
  Program p = derived_program();
  EXPECT_EQ(print_program(p),
            "def loss(w: f64[k], X: f64[m, k], y: f64[m]) -> f64 {\n"
            "  0.0\n"
            "}\n"
            "\n" +
                print_function(p, *p.find("newton")));
}

TEST(Printer, PrintStmtShowsOneStatementWithItsRegions) {
  Program p;
  Function& f = add_function(p, "f");
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId i = b.index_var("i");
  b.gen({{i, sv("n")}}, [&] { return Atom::of(b.index(Atom::of(x), {at(i)})); });
  EXPECT_EQ(print_stmt(p, f, f.body.stmts[0]),
            "let t4 = for i: n. {\n"
            "  let t3 = x[i]\n"
            "  t3\n"
            "}");
  // Broken IR still prints (the verifier shows it).
  Stmt bad;
  bad.results = {99};
  bad.op = PrimOp{Prim::Neg, {Atom::of(-5)}};
  EXPECT_EQ(print_stmt(p, f, bad), "let %bad99 = -%bad-5");
}

// Regions over no index variables: a generator or reduction is its body; an accum takes one
// contribution.
Program degenerate_program() {
  Program p;
  Function& f = add_function(p, "degenerate");
  Builder b(f);
  VarId x = b.param("x", f64v({sv("n")}));
  VarId g = b.named(b.gen({}, [&] { return Atom::of(x); }), "g");
  VarId r = b.named(b.reduce(ReduceKind::Sum, {},
                             [&] {
                               return Atom::of(b.named(
                                   b.index(Atom::of(g), {computed_index(Atom::i64(0))}), "e"));
                             }),
                    "r");
  VarId a = b.named(b.accum({sv("n")}, {},
                            [&] {
                              return std::vector<Atom>{Atom::i64(1), Atom::of(r)};
                            }),
                    "a");
  b.finish({Atom::of(a)});
  return p;
}

TEST(Printer, RegionsOverNoIndexVariables) {
  Program p = degenerate_program();
  EXPECT_EQ(print_program(p),
            "def degenerate(x: f64[n]) -> f64[n] {\n"
            "  let g = { x }\n"
            "  let r = {\n"
            "    let e = g[0]\n"
            "    e\n"
            "  }\n"
            "  let a = accum[n] z: 1. (1, r)\n"
            "  a\n"
            "}\n");
}

Program literals_program() {
  const double inf = std::numeric_limits<double>::infinity();
  return tuple_program({Atom::real(2.5e-7), Atom::real(1e16), Atom::real(-1.5), Atom::real(-0.0),
                        Atom::real(inf), Atom::real(-inf), Atom::real(std::nan("")),
                        Atom::real(0.1f, Scalar::F32), Atom::real(-2.0f, Scalar::F32),
                        Atom::real(-inf, Scalar::F32), Atom::i64(-3),
                        Atom::i64(std::numeric_limits<int64_t>::min()), Atom::boolean(true)});
}

// Every printed program is valid source for the parser.
TEST(Printer, PrintedProgramsParse) {
  const std::pair<const char*, Program (*)()> programs[] = {
      {"dot", dot_program},           {"shift", shift_program},
      {"names", names_program},       {"prims", prims_program},
      {"guards", guards_program},     {"loops", loops_program},
      {"scatter", scatter_program},   {"derived", derived_program},
      {"literals", literals_program}, {"degenerate", degenerate_program}};
  for (const auto& [name, make] : programs) {
    std::string text = print_program(make());
    SourceManager sm;
    uint32_t file = sm.add(std::string(name) + ".cot", text);
    DiagnosticSink diags;
    ast::Module m = parse_module(sm, file, diags);
    EXPECT_FALSE(diags.has_errors()) << name << ":\n" << text << render(sm, diags.diagnostics());
    EXPECT_FALSE(m.defs.empty()) << name;
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::ir
