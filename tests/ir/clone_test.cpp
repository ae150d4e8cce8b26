// Copying blocks (src/ad/clone.h): fresh variables for everything a block binds, free variables
// and sizes mapped, affine substitution of index variables, literal-mapped variables folded,
// computed indices when the affine arithmetic overflows, and saving loops' dynamic sizes.
// Source programs are checked, pieces of their IR are copied into functions assembled around
// them, and the results are verified and evaluated with the reference interpreter.
#include "ir/clone.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "ad/ad_test_util.h"
#include "check/checker.h"
#include "cotangent/value.h"
#include "interp/interpreter.h"
#include "ir/builder.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "syntax/parser.h"

namespace cot::ad {
namespace COTANGENT_TEST_UNIT {

using cotangent::DType;
using cotangent::Value;
using ir::Atom;
using ir::VarId;

constexpr double kTol = 1e-12;

using ad_test::compile;
using ad_test::rho;

// The program with `f` added (or replacing the function of the same name); it must verify.
ir::Program with(const ir::Program& p, ir::Function f) {
  ir::Program q = p;
  if (ir::Function* slot = q.find(f.name)) {
    *slot = std::move(f);
  } else {
    q.functions.push_back(std::move(f));
  }
  std::string errors;
  for (const auto& e : ir::verify(q)) errors += e.function + ": " + e.message + "\n";
  EXPECT_EQ(errors, "");
  return q;
}

std::vector<double> eval(const ir::Program& p, const std::string& fn,
                         const std::vector<Value>& args) {
  auto r = interp::evaluate(p, fn, args);
  if (r.index() != 0) {
    ADD_FAILURE() << "evaluation of " << fn << " failed: " << std::get<1>(r).message;
    return {};
  }
  const Value& v = std::get<0>(r);
  std::vector<double> out;
  for (int64_t k = 0; k < v.numel(); ++k) out.push_back(v.element_as_f64(k));
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < got.size(); ++k) {
    EXPECT_LE(rho(got[k], want[k]), kTol) << "element " << k << ": " << got[k] << " vs " << want[k];
  }
}

Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}

// The first top-level generator of `f`.
const ir::GenOp& first_gen(const ir::Function& f) {
  for (const auto& s : f.body.stmts) {
    if (const auto* g = s.as<ir::GenOp>()) return *g;
  }
  throw std::logic_error("no generator in " + f.name);
}

// Every statement of a block, nested regions included.
template <class F>
void for_each_stmt(const ir::Block& b, const F& fn) {
  for (const auto& s : b.stmts) {
    fn(s);
    if (const auto* g = s.as<ir::GuardOp>()) for_each_stmt(g->body, fn);
    if (const auto* g = s.as<ir::GenOp>()) for_each_stmt(g->body, fn);
  }
}

std::vector<ir::IndexExpr> indices_of(const ir::Block& b) {
  std::vector<ir::IndexExpr> out;
  for_each_stmt(b, [&](const ir::Stmt& s) {
    if (const auto* x = s.as<ir::IndexOp>()) {
      out.insert(out.end(), x->indices.begin(), x->indices.end());
    }
  });
  return out;
}

// A function g(x: f64[m]) -> f64[m] { for j: m. [j >= 1] * BODY }, where BODY is the generator
// body of `f` (index variable i, over f's parameter x and size n) copied with i replaced by
// `by_affine` in affine positions and by the value j - 1 elsewhere.
ir::Function shifted(const ir::Function& f, const std::function<Affine(VarId j)>& by_affine,
                     ir::Block* copied = nullptr) {
  ir::Function g;
  g.name = "g";
  ir::Builder b(g);
  VarId x = b.param("x", Type::tensor(Scalar::F64, {SizeExpr::var("m")}));
  VarId m = b.size_var("m");
  VarId j = b.index_var("j");
  const ir::GenOp& gen = first_gen(f);
  ir::Block body;
  VarId jm1 = g.new_var("jm1", Type::scalar(Scalar::I64));
  body.stmts.push_back(ir::Stmt{{jm1}, ir::PrimOp{Prim::Sub, {Atom::of(j), Atom::i64(1)}}, {}});
  ir::CloneMap map;
  map.atoms[f.params[0]] = Atom::of(x);
  map.atoms[f.size_vars[0].var] = Atom::of(m);
  map.sizes["n"] = SizeExpr::var("m");
  map.atoms[gen.ivars[0].var] = Atom::of(jm1);
  map.affine[gen.ivars[0].var] = by_affine(j);
  ir::Block c = ir::clone_block(f, gen.body, g, map);
  if (copied != nullptr) *copied = c;
  Type t = ir::atom_type(g, c.results.at(0));
  VarId guarded = g.new_var("", t);
  Pred p = *Pred::compare(Affine::var(j), ">=", Affine::constant(1));
  body.stmts.push_back(ir::Stmt{{guarded}, ir::GuardOp{p, std::move(c)}, {}});
  body.results = {Atom::of(guarded)};
  VarId out = g.new_var("out", Type::tensor(Scalar::F64, {SizeExpr::var("m")}));
  g.body.stmts.push_back(
      ir::Stmt{{out}, ir::GenOp{{ir::IndexVar{j, SizeExpr::var("m")}}, std::move(body)}, {}});
  b.finish({Atom::of(out)});
  return g;
}

const char* kShiftSrc =
    "def f(x: f64[n]) -> f64[n - 1] { for i: n - 1. [i + 2 < n] * x[i + 1] * f64(i) }\n";

TEST(Clone, AffineSubstitutionOfAnIndexVariable) {
  ir::Program p = compile(kShiftSrc);
  const ir::Function& f = *p.find("f");
  ir::Block copied;
  ir::Function g = shifted(
      f, [](VarId j) { return *Affine::add(Affine::var(j), Affine::constant(-1)); }, &copied);
  const VarId j = std::get<ir::GenOp>(g.body.stmts.back().op).ivars[0].var;
  // x[i + 1] became x[j]; [i + 2 < n] became [j + 1 < m].
  auto ix = indices_of(copied);
  ASSERT_EQ(ix.size(), 1u);
  ASSERT_TRUE(ix[0].is_affine);
  EXPECT_EQ(ix[0].affine, Affine::var(j));
  bool saw_guard = false;
  for_each_stmt(copied, [&](const ir::Stmt& s) {
    if (const auto* gd = s.as<ir::GuardOp>()) {
      saw_guard = true;
      EXPECT_EQ(gd->pred, *Pred::compare(*Affine::add(Affine::var(j), Affine::constant(1)), "<",
                                         Affine::var(g.size_vars[0].var)));
    }
  });
  EXPECT_TRUE(saw_guard);
  ir::Program q = with(p, std::move(g));
  // g[j] = [j >= 1] * [j + 1 < 5] * x[j] * (j - 1).
  expect_near(eval(q, "g", {vec({1, 2, 3, 4, 5})}), {0, 0, 3, 8, 0});
}

TEST(Clone, LiteralMappedVariableFoldsIntoTheIndex) {
  ir::Program p = compile(kShiftSrc);
  const ir::Function& f = *p.find("f");
  const ir::GenOp& gen = first_gen(f);
  // h(y: f64[k]) -> f64 { BODY with i = 2 }: [4 < k] * y[3] * 2.
  ir::Function h;
  h.name = "h";
  ir::Builder b(h);
  VarId y = b.param("y", Type::tensor(Scalar::F64, {SizeExpr::var("k")}));
  ir::CloneMap map;
  map.atoms[f.params[0]] = Atom::of(y);
  map.atoms[f.size_vars[0].var] = Atom::of(b.size_var("k"));
  map.sizes["n"] = SizeExpr::var("k");
  map.atoms[gen.ivars[0].var] = Atom::i64(2);
  ir::Block c = ir::clone_block(f, gen.body, h, map);
  auto ix = indices_of(c);
  ASSERT_EQ(ix.size(), 1u);
  ASSERT_TRUE(ix[0].is_affine);
  EXPECT_EQ(ix[0].affine, Affine::constant(3));
  h.body = std::move(c);
  h.result_type = Type::scalar(Scalar::F64);
  ir::Program q = with(p, std::move(h));
  expect_near(eval(q, "h", {vec({1, 2, 3, 4, 5})}), {8});
  expect_near(eval(q, "h", {vec({1, 2, 3, 4})}), {0});
}

TEST(Clone, OverflowingSubstitutionBecomesAComputedIndex) {
  // x[2 * i] with i = 2^62 * j - 2^62: the coefficient 2^63 does not fit, so the index is
  // computed by checked i64 statements: 2 * (2^62 * j - 2^62), which is 0 at j = 1 and
  // overflows at j = 2.
  ir::Program p = compile("def f(x: f64[n]) -> f64[n / 2] { for i: n / 2. x[2 * i] }\n");
  const ir::Function& f = *p.find("f");
  ir::Block copied;
  ir::Function g = shifted(
      f,
      [](VarId j) {
        return *Affine::add(Affine::var(j, int64_t{1} << 62),
                            Affine::constant(-(int64_t{1} << 62)));
      },
      &copied);
  auto ix = indices_of(copied);
  ASSERT_EQ(ix.size(), 1u);
  EXPECT_FALSE(ix[0].is_affine);
  ir::Program q = with(p, std::move(g));
  // g[0] = 0 (guarded), g[1] = x[0].
  expect_near(eval(q, "g", {vec({7, 8})}), {0, 7});
  auto r = interp::evaluate(q, "g", {vec({7, 8, 9})});
  ASSERT_EQ(r.index(), 1u);  // 2^62 * 2 overflows at run time
}

TEST(Clone, LiteralLoopCounterAndStateFold) {
  // A loop body copied with the counter t = 1 and the state s = 10.0 (one iteration unrolled):
  // x[t + 1] becomes x[2], f64(t) reads the literal.
  ir::Program p =
      compile("def f(x: f64[n]) -> f64 { loop s = 0.0 for t < 2 { s + x[t + 1] * f64(t) } }\n");
  const ir::Function& f = *p.find("f");
  const ir::LoopOp* loop = nullptr;
  for (const auto& st : f.body.stmts) {
    if (st.as<ir::LoopOp>() != nullptr) loop = st.as<ir::LoopOp>();
  }
  ASSERT_NE(loop, nullptr);
  ir::Function h;
  h.name = "h";
  ir::Builder b(h);
  VarId y = b.param("y", Type::tensor(Scalar::F64, {SizeExpr::var("k")}));
  ir::CloneMap map;
  map.atoms[f.params[0]] = Atom::of(y);
  map.atoms[f.size_vars[0].var] = Atom::of(b.size_var("k"));
  map.sizes["n"] = SizeExpr::var("k");
  map.atoms[loop->iter] = Atom::i64(1);
  map.atoms[loop->state[0]] = Atom::real(10.0);
  ir::Block c = ir::clone_block(f, loop->body, h, map);
  auto ix = indices_of(c);
  ASSERT_EQ(ix.size(), 1u);
  ASSERT_TRUE(ix[0].is_affine);
  EXPECT_EQ(ix[0].affine, Affine::constant(2));
  h.body = std::move(c);
  h.result_type = Type::scalar(Scalar::F64);
  ir::Program q = with(p, std::move(h));
  expect_near(eval(q, "h", {vec({1, 2, 3})}), {13});
  expect_near(eval(q, "f", {vec({1, 2, 3})}), {3});
}

TEST(Clone, WithinTheSameFunctionAndResultsMapped) {
  ir::Program p = compile("def s(x: f64[n]) -> f64 { sum i. x[i] * x[i] }\n");
  ir::Function f = *p.find("s");
  const ir::Block original = f.body;
  ir::CloneMap map;  // x is kept: same function
  ir::Block c = ir::clone_block(f, f.body, f, map);
  ASSERT_EQ(c.results.size(), 1u);
  ASSERT_TRUE(c.results[0].is_var);
  ASSERT_TRUE(original.results[0].is_var);
  EXPECT_NE(c.results[0].var, original.results[0].var);
  EXPECT_EQ(map.atoms.at(original.results[0].var), c.results[0]);
  for (auto& st : c.stmts) f.body.stmts.push_back(std::move(st));
  VarId total = f.new_var("total", Type::scalar(Scalar::F64));
  f.body.stmts.push_back(
      ir::Stmt{{total}, ir::PrimOp{Prim::Add, {original.results[0], c.results[0]}}, {}});
  f.body.results = {Atom::of(total)};
  ir::Program q = with(p, std::move(f));
  expect_near(eval(q, "s", {vec({1, 2, 3})}), {28});
}

TEST(Clone, SubstitutesSizesInTypesAndExtents) {
  ir::Program p = compile(
      "def f(x: f64[n]) -> f64[n + 1] { let y = for i: n + 1. [i < n] * x[i] * f64(n); y }\n");
  const ir::Function& f = *p.find("f");
  // g(z: f64[m]) -> f64[m + 1]: f's body with n = m.
  ir::Function g;
  g.name = "g";
  ir::Builder b(g);
  VarId z = b.param("z", Type::tensor(Scalar::F64, {SizeExpr::var("m")}));
  ir::CloneMap map;
  map.atoms[f.params[0]] = Atom::of(z);
  map.atoms[f.size_vars[0].var] = Atom::of(b.size_var("m"));
  map.sizes["n"] = SizeExpr::var("m");
  ir::Block c = ir::clone_block(f, f.body, g, map);
  for (auto& st : c.stmts) {
    for (VarId v : st.results) {
      for (const auto& d : g.type_of(v).shape) {
        EXPECT_EQ(d.vars(), std::vector<std::string>{"m"}) << d.to_string();
      }
    }
  }
  g.body = std::move(c);
  g.result_type = Type::tensor(Scalar::F64, {SizeExpr::var("m") + SizeExpr::constant(1)});
  ir::Program q = with(p, std::move(g));
  expect_near(eval(q, "g", {vec({1, 2})}), {2, 4, 0});
}

TEST(Clone, UnmappedFreeVariableIsABug) {
  ir::Program p = compile(kShiftSrc);
  const ir::Function& f = *p.find("f");
  ir::Function g;
  g.name = "g";
  ir::CloneMap map;
  EXPECT_THROW(ir::clone_block(f, first_gen(f).body, g, map), std::logic_error);
}

// f(x: f64) -> f64 { let (s, T, s_saved) = loop s = x for t < 3 saving { 2.0 * s }; s }
ir::Function saving_function() {
  ir::Function f;
  f.name = "f";
  ir::Builder b(f);
  VarId x = b.param("x", Type::scalar(Scalar::F64));
  ir::LoopOp l;
  l.init = {Atom::of(x)};
  l.state = {f.new_var("s", Type::scalar(Scalar::F64))};
  l.iter = f.new_var("t", Type::scalar(Scalar::I64));
  l.count = Atom::i64(3);
  VarId next = f.new_var("next", Type::scalar(Scalar::F64));
  l.body.stmts.push_back(
      ir::Stmt{{next}, ir::PrimOp{Prim::Mul, {Atom::real(2.0), Atom::of(l.state[0])}}, {}});
  l.body.results = {Atom::of(next)};
  l.saves_states = true;
  VarId fin = f.new_var("s", Type::scalar(Scalar::F64));
  VarId t = f.new_var("T", Type::scalar(Scalar::I64));
  VarId stack = f.new_var("s_saved", Type::tensor(Scalar::F64, {SizeExpr::var("T")}));
  f.body.stmts.push_back(ir::Stmt{{fin, t, stack}, std::move(l), {}});
  f.size_vars.push_back(ir::SizeVar{"T", t, -1, {}, 0});
  b.finish({Atom::of(fin)});
  return f;
}

TEST(Clone, SavingLoopGetsAFreshDynamicSize) {
  ir::Function f = saving_function();
  ir::CloneMap map;
  ir::Block c = ir::clone_block(f, f.body, f, map);
  ASSERT_EQ(c.stmts.size(), 1u);
  const ir::Stmt& s = c.stmts[0];
  ASSERT_EQ(s.results.size(), 3u);
  ASSERT_TRUE(s.as<ir::LoopOp>() != nullptr);
  EXPECT_TRUE(s.as<ir::LoopOp>()->saves_states);
  ASSERT_EQ(f.size_vars.size(), 2u);
  const ir::SizeVar& fresh = f.size_vars[1];
  EXPECT_EQ(fresh.name, "T_2");
  EXPECT_EQ(fresh.param, -1);
  EXPECT_EQ(fresh.var, s.results[1]);
  EXPECT_EQ(f.type_of(s.results[2]), Type::tensor(Scalar::F64, {SizeExpr::var("T_2")}));
  EXPECT_EQ(map.sizes.at("T"), SizeExpr::var("T_2"));
  // The original loop is untouched.
  EXPECT_EQ(f.type_of(f.body.stmts[0].results[2]), Type::tensor(Scalar::F64, {SizeExpr::var("T")}));

  // Into another function with no size named T, the name is kept.
  ir::Function g;
  g.name = "g";
  ir::Builder b(g);
  VarId y = b.param("y", Type::scalar(Scalar::F64));
  ir::CloneMap m2;
  m2.atoms[f.params[0]] = Atom::of(y);
  ir::Block c2 = ir::clone_block(f, f.body, g, m2);
  ASSERT_EQ(g.size_vars.size(), 1u);
  EXPECT_EQ(g.size_vars[0].name, "T");
  EXPECT_EQ(g.type_of(c2.stmts[0].results[2]), Type::tensor(Scalar::F64, {SizeExpr::var("T")}));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::ad
