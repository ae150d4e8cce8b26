// Fusing sibling loops (codegen/fuse_loops.h): which pairs fuse, what the fused body reads, and,
// through the native backend against the interpreter, that a Runge-Kutta step and its
// gradient, whose loops fuse, compute the interpreter's values.
#include "codegen/fuse_loops.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <variant>
#include <vector>

#include "codegen/expr.h"
#include "codegen/may_fail.h"
#include "cotangent/cotangent.h"
#include "e2e/e2e_cases.h"

namespace cot::codegen {
namespace COTANGENT_TEST_UNIT {

constexpr int64_t kN = 1000;

// for i in [0, end): dst[i] = value(i), a generator's points.
Stmt points(LoopFunction& fn, LocalId dst, const std::function<ExprP(const ExprP&)>& value,
            int64_t end = kN) {
  const LocalId i = fn.new_local("i", Scalar::I64);
  const LocalId v = fn.new_local("v", Scalar::F64);
  For f{i, lit_i64(0), lit_i64(end),
        Body{Stmt{Declare{v, value(local(fn, i))}}, Stmt{Store{dst, local(fn, i), local(fn, v)}}}};
  f.independent = true;
  return Stmt{std::move(f)};
}

Stmt alloc(LocalId p) {
  return Stmt{Alloc{p, lit_i64(kN)}};
}

std::vector<const For*> loops(const Body& body) {
  std::vector<const For*> out;
  for (const Stmt& s : body) {
    if (const auto* f = std::get_if<For>(&s.op)) out.push_back(f);
  }
  return out;
}

// Whether an expression of the body (nested bodies included) loads through `pointer`.
bool loads(const Body& body, LocalId pointer) {
  std::function<bool(const ExprP&)> in = [&](const ExprP& e) {
    if (!e) return false;
    if (e->kind == Expr::Kind::Load && e->local == pointer) return true;
    for (const ExprP& a : e->args) {
      if (in(a)) return true;
    }
    return false;
  };
  for (const Stmt& s : body) {
    if (const auto* d = std::get_if<Declare>(&s.op); d != nullptr && in(d->value)) return true;
    if (const auto* st = std::get_if<Store>(&s.op); st != nullptr && in(st->value)) return true;
    if (const auto* a = std::get_if<Assign>(&s.op); a != nullptr && in(a->value)) return true;
  }
  return false;
}

struct Fixture {
  LoopFunction fn;
  LocalId x = fn.new_local("x", Scalar::F64, true);
  LocalId a = fn.new_local("a", Scalar::F64, true);
  LocalId b = fn.new_local("b", Scalar::F64, true);
  Fixture() { fn.inputs.push_back(Port{x, Scalar::F64, kN}); }
};

TEST(FuseLoops, a_chain_of_element_wise_loops_runs_as_one_reading_the_stored_values) {
  Fixture t;
  // a = 2 x; b = a + x: the second loop's read of a[i] is the value just stored.
  t.fn.body.push_back(alloc(t.a));
  t.fn.body.push_back(points(t.fn, t.a, [&](const ExprP& i) {
    return prim(Prim::Mul, {lit_real(2.0), load(Scalar::F64, t.x, i)});
  }));
  t.fn.body.push_back(alloc(t.b));
  t.fn.body.push_back(points(t.fn, t.b, [&](const ExprP& i) {
    return prim(Prim::Add, {load(Scalar::F64, t.a, i), load(Scalar::F64, t.x, i)});
  }));
  const LoopFunction out = fuse_loops(t.fn);
  ASSERT_EQ(out.body.size(), 3u);
  // Both allocations come first, then the one loop.
  EXPECT_TRUE(std::holds_alternative<Alloc>(out.body[0].op));
  EXPECT_TRUE(std::holds_alternative<Alloc>(out.body[1].op));
  const auto fused = loops(out.body);
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_TRUE(fused[0]->independent);
  EXPECT_EQ(fused[0]->body.size(), 4u);
  EXPECT_FALSE(loads(fused[0]->body, t.a));
  EXPECT_TRUE(loads(fused[0]->body, t.x));
}

TEST(FuseLoops, reads_of_another_element_keep_the_loops_apart) {
  // a[n - 1 - i] and a[0] are written by other iterations of the first loop; and a first loop
  // that writes a[0] in every iteration leaves the last one's value for the second to read.
  for (int which = 0; which < 3; ++which) {
    Fixture t;
    t.fn.body.push_back(alloc(t.a));
    t.fn.body.push_back(
        points(t.fn, t.a, [&](const ExprP& i) { return load(Scalar::F64, t.x, i); }));
    if (which == 2) std::get<Store>(std::get<For>(t.fn.body[1].op).body[1].op).index = lit_i64(0);
    t.fn.body.push_back(alloc(t.b));
    t.fn.body.push_back(points(t.fn, t.b, [&](const ExprP& i) {
      ExprP at = which == 0 ? sub_i64(lit_i64(kN - 1), i) : lit_i64(0);  // 1, 2: a[0]
      return load(Scalar::F64, t.a, at);
    }));
    EXPECT_EQ(loops(fuse_loops(t.fn).body).size(), 2u) << which;
  }
}

TEST(FuseLoops, a_loop_writing_what_the_first_reads_is_not_fused) {
  Fixture t;
  // a = x + b, then b = 2 x: fused, the second would overwrite b[i] before later iterations
  // of the first read it (here at the same element, still refused: b is the first's input).
  t.fn.body.push_back(alloc(t.a));
  t.fn.body.push_back(alloc(t.b));
  t.fn.body.push_back(points(t.fn, t.a, [&](const ExprP& i) {
    return prim(Prim::Add, {load(Scalar::F64, t.x, i), load(Scalar::F64, t.b, i)});
  }));
  t.fn.body.push_back(points(t.fn, t.b, [&](const ExprP& i) {
    return prim(Prim::Mul, {lit_real(2.0), load(Scalar::F64, t.x, i)});
  }));
  EXPECT_EQ(loops(fuse_loops(t.fn).body).size(), 2u);
}

TEST(FuseLoops, only_generator_loops_over_the_same_range_fuse) {
  auto two = [](const std::function<void(For&, For&)>& change, int64_t end_b) {
    Fixture t;
    t.fn.body.push_back(alloc(t.a));
    t.fn.body.push_back(
        points(t.fn, t.a, [&](const ExprP& i) { return load(Scalar::F64, t.x, i); }));
    t.fn.body.push_back(alloc(t.b));
    t.fn.body.push_back(points(
        t.fn, t.b, [&](const ExprP& i) { return load(Scalar::F64, t.x, i); }, end_b));
    change(std::get<For>(t.fn.body[1].op), std::get<For>(t.fn.body[3].op));
    return loops(fuse_loops(t.fn).body).size();
  };
  EXPECT_EQ(two([](For&, For&) {}, kN), 1u);
  EXPECT_EQ(two([](For&, For&) {}, kN - 1), 2u);
  // A loop whose iterations run in order (a step loop, a sum's points).
  EXPECT_EQ(two([](For&, For& g) { g.independent = false; }, kN), 2u);
  EXPECT_EQ(two([](For& f, For&) { f.independent = false; }, kN), 2u);
  // A top-level generator's threads and a nested one's lanes are not mixed.
  EXPECT_EQ(two([](For& f, For&) { f.parallel = true; }, kN), 2u);
  EXPECT_EQ(two([](For& f, For& g) { f.parallel = g.parallel = true; }, kN), 1u);
}

TEST(FuseLoops, short_loops_are_left_to_run_apart) {
  // Under 256 points a loop runs one point at a time; out-of-order execution overlaps the
  // iterations of short bodies better than those of one long body.
  Fixture t;
  t.fn.body.push_back(alloc(t.a));
  t.fn.body.push_back(points(
      t.fn, t.a, [&](const ExprP& i) { return load(Scalar::F64, t.x, i); }, kLongLoop - 1));
  t.fn.body.push_back(alloc(t.b));
  t.fn.body.push_back(points(
      t.fn, t.b, [&](const ExprP& i) { return load(Scalar::F64, t.a, i); }, kLongLoop - 1));
  EXPECT_EQ(loops(fuse_loops(t.fn).body).size(), 2u);
  std::get<For>(t.fn.body[1].op).end = lit_i64(kLongLoop);
  std::get<For>(t.fn.body[3].op).end = lit_i64(kLongLoop);
  EXPECT_EQ(loops(fuse_loops(t.fn).body).size(), 1u);
}

TEST(FuseLoops, views_and_swapped_states_count_as_their_buffer) {
  // The second loop reads through a view of a (one element on) and the first's output's swap
  // partner: both may be the elements the first writes, at other indices.
  Fixture t;
  const LocalId view = t.fn.new_local("view", Scalar::F64, true);
  t.fn.body.push_back(alloc(t.a));
  t.fn.body.push_back(Stmt{View{view, t.a, lit_i64(1)}});
  t.fn.body.push_back(points(
      t.fn, t.a, [&](const ExprP& i) { return load(Scalar::F64, t.x, i); }, kN - 1));
  t.fn.body.push_back(points(
      t.fn, t.b, [&](const ExprP& i) { return load(Scalar::F64, view, i); }, kN - 1));
  EXPECT_EQ(loops(fuse_loops(t.fn).body).size(), 2u);

  Fixture s;
  s.fn.body.push_back(alloc(s.a));
  s.fn.body.push_back(alloc(s.b));
  s.fn.body.push_back(points(s.fn, s.a, [&](const ExprP& i) { return load(Scalar::F64, s.x, i); }));
  const LocalId c = s.fn.new_local("c", Scalar::F64, true);
  s.fn.body.push_back(alloc(c));
  s.fn.body.push_back(points(s.fn, c, [&](const ExprP& i) { return load(Scalar::F64, s.b, i); }));
  s.fn.body.push_back(Stmt{Swap{s.a, s.b}});
  EXPECT_EQ(loops(fuse_loops(s.fn).body).size(), 2u);
}

TEST(FuseLoops, a_value_assigned_after_its_store_is_read_from_the_buffer) {
  Fixture t;
  const LocalId i = t.fn.new_local("i", Scalar::I64);
  const LocalId v = t.fn.new_local("v", Scalar::F64);
  For first{i, lit_i64(0), lit_i64(kN),
            Body{Stmt{Declare{v, load(Scalar::F64, t.x, local(t.fn, i))}},
                 Stmt{Store{t.a, local(t.fn, i), local(t.fn, v)}}, Stmt{Assign{v, lit_real(0.0)}}}};
  first.independent = true;
  t.fn.body.push_back(alloc(t.a));
  t.fn.body.push_back(Stmt{std::move(first)});
  t.fn.body.push_back(alloc(t.b));
  t.fn.body.push_back(points(t.fn, t.b, [&](const ExprP& j) { return load(Scalar::F64, t.a, j); }));
  const LoopFunction out = fuse_loops(t.fn);
  const auto fused = loops(out.body);
  ASSERT_EQ(fused.size(), 1u);
  EXPECT_TRUE(loads(fused[0]->body, t.a));
}

// for i: out[i] = (i == 0) ? 1 : in[i - 1], with the read's index check, as the lowering writes
// a stencil; partitioning folds the check away.
Stmt stencil(LoopFunction& fn, LocalId in, LocalId out) {
  const LocalId i = fn.new_local("i", Scalar::I64);
  const LocalId v = fn.new_local("v", Scalar::F64);
  ExprP prev = add_i64(local(fn, i), lit_i64(-1));
  Body read{
      Stmt{If{not_(and_(prim(Prim::Ge, {prev, lit_i64(0)}), prim(Prim::Lt, {prev, lit_i64(kN)}))),
              Body{Stmt{Fail{1, {prev}}}},
              {}}},
      Stmt{Assign{v, load(Scalar::F64, in, prev)}}};
  Body body{Stmt{Declare{v, nullptr}},
            Stmt{If{prim(Prim::Eq, {local(fn, i), lit_i64(0)}),
                    Body{Stmt{Assign{v, lit_real(1.0)}}}, std::move(read)}},
            Stmt{Store{out, local(fn, i), local(fn, v)}}};
  For f{i, lit_i64(0), lit_i64(kN), std::move(body)};
  f.independent = true;
  return Stmt{std::move(f)};
}

TEST(FuseLoops, checks_that_partitioning_removes_do_not_stop_fusion_others_do) {
  Fixture t;
  // a = shift(x), then b = 2 a: the stencil's index check never fails once partitioned.
  t.fn.body.push_back(alloc(t.a));
  t.fn.body.push_back(stencil(t.fn, t.x, t.a));
  t.fn.body.push_back(alloc(t.b));
  t.fn.body.push_back(points(t.fn, t.b, [&](const ExprP& i) {
    return prim(Prim::Mul, {lit_real(2.0), load(Scalar::F64, t.a, i)});
  }));
  EXPECT_EQ(loops(fuse_loops(t.fn).body).size(), 1u);

  // A gather's check stays: fused, the element-wise loop would lose its lanes, and a failure
  // could be reported from another iteration first.
  Fixture g;
  const LocalId idx = g.fn.new_local("idx", Scalar::I64, true);
  const LocalId i = g.fn.new_local("i", Scalar::I64);
  const LocalId k = g.fn.new_local("k", Scalar::I64);
  const LocalId v = g.fn.new_local("v", Scalar::F64);
  ExprP at = local(g.fn, k);
  For gather{
      i, lit_i64(0), lit_i64(kN),
      Body{Stmt{Declare{k, load(Scalar::I64, idx, local(g.fn, i))}},
           Stmt{If{not_(and_(prim(Prim::Ge, {at, lit_i64(0)}), prim(Prim::Lt, {at, lit_i64(kN)}))),
                   Body{Stmt{Fail{1, {at}}}},
                   {}}},
           Stmt{Declare{v, load(Scalar::F64, g.x, at)}},
           Stmt{Store{g.a, local(g.fn, i), local(g.fn, v)}}}};
  gather.independent = true;
  g.fn.body.push_back(alloc(g.a));
  g.fn.body.push_back(Stmt{std::move(gather)});
  g.fn.body.push_back(alloc(g.b));
  g.fn.body.push_back(points(g.fn, g.b, [&](const ExprP& j) {
    return prim(Prim::Mul, {lit_real(2.0), load(Scalar::F64, g.a, j)});
  }));
  EXPECT_EQ(loops(fuse_loops(g.fn).body).size(), 2u);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::codegen

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using e2e::uniform_tensor;

// GradBench's ode step: stages that each read the one before at i - 1, combined element by
// element; its gradient's reverse step is a chain of element-wise adjoints and shifted reads.
// The step agrees with the interpreter to the last bit.
TEST(FuseLoops, a_runge_kutta_step_and_its_gradient_agree_with_the_interpreter) {
  const char* src = R"(
def rhs(x: f64[n], y: f64[n]) -> f64[n] {
  for i. x[i] * (if i == 0 then 1.0 else y[i - 1])
}
def rk4(x: f64[n], s: i64) -> f64[n] {
  let h = 2.0 / f64(s)
  loop y = (for i: n. 0.0) for step < s {
    let k1 = rhs(x, y)
    let k2 = rhs(x, y + h * k1 / 2.0)
    let k3 = rhs(x, y + h * k2 / 2.0)
    let k4 = rhs(x, y + h * k3)
    y + h * (k1 + 2.0 * k2 + 2.0 * k3 + k4) / 6.0
  }
}
def loss(x: f64[n], s: i64) -> f64 {
  let y = rk4(x, s)
  sum i. y[i] * y[i]
}
)";
  auto m = Module::from_string(src, "fuse.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  std::mt19937_64 rng(17);
  for (int64_t n : {int64_t{40}, int64_t{1000}}) {
    const std::vector<Value> args{uniform_tensor({n}, rng), Value::i64(4)};
    auto compiled = m.value().compile(
        {{"rk4", std::nullopt, {}, args}, {"loss", DerivativeKind::ValueAndGrad, {}, args}},
        CompileOptions{1, 0, {}});
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    auto want = m.value().evaluate("rk4", args);
    ASSERT_TRUE(want.ok()) << want.message();
    auto got = compiled.value()[0].call(args);
    ASSERT_TRUE(got.ok()) << got.message();
    EXPECT_EQ(e2e::compare_values(got.value(), want.value(), 0.0), "") << n;
    auto vg = m.value().value_and_grad("loss", args);
    ASSERT_TRUE(vg.ok()) << vg.message();
    ASSERT_EQ(vg.value().grad.size(), 1u);
    auto got_vg = compiled.value()[1].call(args);
    ASSERT_TRUE(got_vg.ok()) << got_vg.message();
    const Value want_vg = Value::tuple({vg.value().value, vg.value().grad[0].value});
    // The loss's sum runs in lanes, reassociated.
    EXPECT_EQ(e2e::compare_values(got_vg.value(), want_vg, 1e-12), "") << n;

    // The primal's seven generators per step run as four loops: each stage with its
    // y + h k / 2, which the next stage reads at i - 1 (so it stays a loop of its own), and the
    // last stage with the update. Each runs in lanes once partitioned.
    if (n < 1000) continue;
    const std::string code = compiled.value()[0].source();
    const size_t step = code.find("_step = ");
    ASSERT_NE(step, std::string::npos) << code;
    const size_t next_function = code.find("cot_fn", step);  // the gradient's, in one source
    size_t lanes = 0;
    for (size_t at = code.find("#pragma omp simd\n", step); at < next_function;
         at = code.find("#pragma omp simd\n", at + 1)) {
      ++lanes;
    }
    EXPECT_EQ(lanes, 4u) << code;
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
