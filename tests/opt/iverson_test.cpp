// Iverson-bracket simplification (src/opt/iverson.h): merging nested guards ([Bernstein20] 5.24),
// eliminating sums over equality predicates, tightening predicates by Fourier–Motzkin, and
// dropping empty regions. Each test compiles a program, runs the pass (which must verify and
// satisfy its postcondition), checks the printed form, and compares values and op counts with
// the interpreter before and after.
#include "opt/iverson.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ad/derive.h"
#include "ad/random_program.h"
#include "ir/inline_calls.h"
#include "opt/fuse.h"
#include "opt/inline.h"
#include "opt/opt_test_util.h"
#include "opt/partial_eval.h"
#include "opt/simplify.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::Value;
using opt_test::compile;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;

Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(cotangent::DType::F64, {static_cast<int64_t>(xs.size())});
  auto d = v.f64_mut();
  for (size_t k = 0; k < xs.size(); ++k) d[k] = xs[k];
  return v;
}
Value ramp(int64_t n, double scale = 1.0) {
  std::vector<double> xs;
  for (int64_t k = 0; k < n; ++k) xs.push_back(scale * (static_cast<double>(k) + 0.5));
  return vec(xs);
}

ir::Program iverson(const ir::Program& p, const std::string& fn) {
  return opt_test::run_pass(p, fn, opt::simplify_brackets, opt::iverson_postcondition);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

int64_t ops(const ir::Program& p, const std::string& fn, const std::vector<Value>& args) {
  auto r = run(p, fn, args);
  EXPECT_TRUE(r.ok) << r.error;
  return r.ops;
}

// How many times `part` occurs in `s`.
using opt_test::count;

// The example from the AD: after fusion, the transposed trace of diag(x) is this; brackets
// and the sum go away entirely.
TEST(OptIverson, transposed_trace_of_diag_becomes_ct_plus_ct) {
  ir::Program p = compile(R"(
def td(ct: f64, x: f64[n]) -> f64[n] {
  for j: n. sum k: n. [j == k] * ([j == k] * ct + [j == k] * ct)
}
)");
  ir::Program q = iverson(p, "td");
  EXPECT_EQ(printed(q, "td"),
            "def td(ct: f64, x: f64[n]) -> f64[n] {\n"
            "  let t10 = for j: n. {\n"
            "    let t11 = ct + ct\n"
            "    t11\n"
            "  }\n"
            "  t10\n"
            "}\n");
  for (int64_t n : {1, 3, 8}) expect_same_values(p, q, "td", {Value::f64(1.25), ramp(n)});
}

// [Bernstein20] §2.1: Sum j. [j = i - 2] * c[j] is the guarded read [0 <= i - 2 < m] * c[i - 2].
TEST(OptIverson, sum_over_a_shifted_equality_becomes_a_guarded_read) {
  ir::Program p = compile(R"(
def sh(c: f64[m], x: f64[n]) -> f64[n] {
  for i: n. sum j. [j == i - 2] * c[j]
}
)");
  ir::Program q = iverson(p, "sh");
  const std::string out = printed(q, "sh");
  EXPECT_FALSE(contains(out, "sum")) << out;
  EXPECT_TRUE(contains(out, "[i >= 2 && i <= m + 1] * {")) << out;
  EXPECT_TRUE(contains(out, "c[i - 2]")) << out;
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{3, 6}, {6, 3}, {1, 1}, {4, 4}}) {
    expect_same_values(p, q, "sh", {ramp(m), ramp(n, -2.0)});
  }
}

// Work before the guard in a summand runs at every point of the sum; once the sum is gone it
// runs at the one point where the guard holds, so the op count drops from n² to n.
TEST(OptIverson, sum_elimination_moves_work_under_the_guard) {
  ir::Program p = compile(R"(
def g(x: f64[n]) -> f64[n] {
  for i. sum j: n. {
    let t = x[j] * 2.0
    [j == i] * t
  }
}
)");
  ir::Program q = iverson(p, "g");
  const std::string out = printed(q, "g");
  EXPECT_FALSE(contains(out, "sum")) << out;
  EXPECT_FALSE(contains(out, "] * {")) << out;  // 0 <= i < n holds: no bracket is left
  for (int64_t n : {1, 4, 9}) expect_same_values(p, q, "g", {ramp(n)});
  EXPECT_EQ(ops(p, "g", {ramp(6)}), 36);
  EXPECT_EQ(ops(q, "g", {ramp(6)}), 6);
}

// A solved variable used outside affine positions (here converted to a real) gets its value
// computed once, under the guard.
TEST(OptIverson, solved_variable_in_arithmetic) {
  ir::Program p = compile(R"(
def w(c: f64[m], x: f64[n]) -> f64[n] {
  for i: n. sum j: m. [j == i - 2] * (c[j] * f64(j))
}
)");
  ir::Program q = iverson(p, "w");
  const std::string out = printed(q, "w");
  EXPECT_FALSE(contains(out, "sum")) << out;
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{3, 6}, {6, 3}, {5, 5}}) {
    expect_same_values(p, q, "w", {ramp(m), ramp(n)});
  }
}

// Several summed variables: the one an equality fixes goes, the other stays summed.
TEST(OptIverson, sum_over_two_variables_keeps_the_free_one) {
  ir::Program p = compile(R"(
def tr(A: f64[n, n]) -> f64 {
  sum i, j. [i == j] * A[i, j]
}
def band(A: f64[n, n]) -> f64 {
  sum i, j, k. [j == i + 1 && k == j] * A[i, k]
}
)");
  ir::Program q = iverson(p, "tr");
  const std::string out = printed(q, "tr");
  EXPECT_EQ(count(out, "sum"), 1) << out;
  EXPECT_TRUE(contains(out, "sum i: n.")) << out;
  EXPECT_FALSE(contains(out, "] * {")) << out;
  EXPECT_TRUE(contains(out, "A[i, i]")) << out;
  ir::Program r = iverson(p, "band");
  const std::string band = printed(r, "band");
  EXPECT_TRUE(contains(band, "sum i: n.")) << band;
  EXPECT_TRUE(contains(band, "A[i, i + 1]")) << band;
  for (int64_t n : {1, 2, 5}) {
    Value A = Value::zeros(cotangent::DType::F64, {n, n});
    auto d = A.f64_mut();
    for (int64_t k = 0; k < n * n; ++k)
      d[static_cast<size_t>(k)] = 0.25 * static_cast<double>(k) - 1;
    expect_same_values(p, q, "tr", {A});
    expect_same_values(p, r, "band", {A});
    EXPECT_EQ(run(q, "tr", {A}).ops, n - 1);
  }
}

// An equality with coefficient 2 needs a parity condition: the sum is not eliminated wrongly
// (it stays, and the values agree on even and odd positions).
TEST(OptIverson, coefficient_two_is_not_a_unit_equality) {
  ir::Program p = compile(R"(
def up(x: f64[n]) -> f64[n] {
  for j: n. sum i: n. [2 * i == j] * x[i]
}
)");
  ir::Program q = iverson(p, "up");
  EXPECT_TRUE(contains(printed(q, "up"), "sum i: n.")) << printed(q, "up");
  EXPECT_TRUE(contains(printed(q, "up"), "2 * i")) << printed(q, "up");
  for (int64_t n : {1, 5, 6}) expect_same_values(p, q, "up", {ramp(n)});
}

// max and min are not sums: a bracket inside them is an ordinary zero for the reduction.
TEST(OptIverson, max_reduction_is_left) {
  ir::Program p = compile(R"(
def mx(x: f64[n]) -> f64[n] {
  for i. max j: n. [j == i] * x[j]
}
)");
  ir::Program q = iverson(p, "mx");
  EXPECT_TRUE(contains(printed(q, "mx"), "max j: n.")) << printed(q, "mx");
  expect_same_values(p, q, "mx", {vec({-1.0, -2.0, 3.0})});
}

// 5.24: a guard whose body ends in another guard is one guard with the conjunction; the work
// before the inner guard then runs only where both hold.
TEST(OptIverson, nested_guards_merge) {
  ir::Program p = compile(R"(
def nest(x: f64[n]) -> f64[n, n] {
  for i, j. [i == j] * ([i == j] * x[i])
}
def tri(x: f64[n]) -> f64[n, n] {
  for i: n, j: n. [i <= j] * {
    let y = x[i] * 2.0
    [j <= i] * y
  }
}
)");
  ir::Program q = iverson(p, "nest");
  const std::string out = printed(q, "nest");
  EXPECT_EQ(count(out, "] * {"), 1) << out;
  EXPECT_TRUE(contains(out, "[i == j] * {")) << out;
  EXPECT_FALSE(contains(out, "&&")) << out;  // the duplicate constraint is dropped
  ir::Program r = iverson(p, "tri");
  const std::string tri = printed(r, "tri");
  EXPECT_TRUE(contains(tri, "[i <= j && j <= i] * {") || contains(tri, "[j <= i && i <= j] * {"))
      << tri;
  EXPECT_EQ(count(tri, "] * {"), 1) << tri;
  for (int64_t n : {1, 3, 6}) {
    expect_same_values(p, q, "nest", {ramp(n)});
    expect_same_values(p, r, "tri", {ramp(n)});
  }
  EXPECT_EQ(ops(p, "tri", {ramp(6)}), 21);  // i <= j: 21 points
  EXPECT_EQ(ops(r, "tri", {ramp(6)}), 6);   // i == j: 6 points
}

// A bracket implied by the index ranges and the enclosing guards goes; a constraint implied by
// the others is dropped; a predicate that cannot hold becomes false.
TEST(OptIverson, implied_and_infeasible_predicates) {
  ir::Program p = compile(R"(
def inside(x: f64[n]) -> f64[n] {
  for i: n. [i < n] * x[i]
}
def tight(x: f64[n]) -> f64[n] {
  for i: n. [i >= 0 && i < n && i < 3] * x[i]
}
def under(x: f64[n]) -> f64[n] {
  for i: n. [i > 3] * {
    let y = [i > 2] * x[i]
    y * 2.0
  }
}
def never(x: f64[n]) -> f64[n] {
  for i: n. [i >= n] * x[i]
}
)");
  ir::Program q = iverson(p, "inside");
  EXPECT_EQ(printed(q, "inside"),
            "def inside(x: f64[n]) -> f64[n] {\n"
            "  let t5 = for i: n. {\n"
            "    let t3 = x[i]\n"
            "    t3\n"
            "  }\n"
            "  t5\n"
            "}\n");
  ir::Program t = iverson(p, "tight");
  EXPECT_TRUE(contains(printed(t, "tight"), "[i <= 2] * {")) << printed(t, "tight");
  ir::Program u = iverson(p, "under");
  EXPECT_EQ(count(printed(u, "under"), "] * {"), 1) << printed(u, "under");
  EXPECT_TRUE(contains(printed(u, "under"), "[i >= 4] * {")) << printed(u, "under");
  ir::Program v = iverson(p, "never");
  EXPECT_TRUE(contains(printed(v, "never"), "[false] * ")) << printed(v, "never");
  EXPECT_FALSE(contains(printed(v, "never"), "x[i]")) << printed(v, "never");
  for (int64_t n : {0, 1, 4, 7}) {
    expect_same_values(p, q, "inside", {ramp(n)});
    expect_same_values(p, t, "tight", {ramp(n)});
    expect_same_values(p, u, "under", {ramp(n)});
    expect_same_values(p, v, "never", {ramp(n)});
  }
}

// A guard under a false bracket stays a strong zero: adding it stays free, so the op count of
// the sum around it does not change (the masked terms are not live).
TEST(OptIverson, strong_zeros_stay_strong) {
  ir::Program p = compile(R"(
def sz(c: f64[m], x: f64[n]) -> f64[n] {
  for i: n. (sum j. [j == i + 5] * c[j]) + x[i]
}
)");
  ir::Program q = iverson(p, "sz");
  for (auto [m, n] : std::vector<std::pair<int64_t, int64_t>>{{2, 6}, {7, 3}, {9, 9}}) {
    expect_same_values(p, q, "sz", {ramp(m), ramp(n)});
    EXPECT_EQ(ops(p, "sz", {ramp(m), ramp(n)}), ops(q, "sz", {ramp(m), ramp(n)}));
  }
}

// Regions over an empty constant range: a sum is a strong zero, a generator keeps no work.
TEST(OptIverson, empty_ranges) {
  ir::Program p = compile(R"(
def e(x: f64[n]) -> (f64, f64[0], f64) {
  (sum i: 0. x[i] * 2.0, for i: 0. x[i] * 2.0, (sum i: 0. x[i]) + x[0])
}
)");
  ir::Program q = iverson(p, "e");
  const std::string out = printed(q, "e");
  EXPECT_FALSE(contains(out, "sum")) << out;
  EXPECT_FALSE(contains(out, "* 2.0")) << out;
  expect_same_values(p, q, "e", {ramp(3)});
  EXPECT_EQ(ops(q, "e", {ramp(3)}), 0);  // adding the strong zero is free
}

// Programs the pass has little to do on stay valid and equal: loops, if, tuples, f32, i64,
// accum, and data-dependent brackets (atoms, not affine).
TEST(OptIverson, other_constructs_are_kept) {
  ir::Program p = compile(R"(
def mix(x: f64[n], y: f32[n], idx: i64[k], s: i64) -> (f64, f32, f64[4], i64) {
  let a = loop acc = 0.0 for t < s { acc + [t < n] * x[t] }
  let b = sum i. [y[i] > 0.0] * y[i]
  let h = accum[4] o. (idx[o], [o < n] * x[0])
  let c = if a > 1.0 then sum i: n. [i + 1 < n] * x[i + 1] else 0.0
  (a + c, b, h, s * 2)
}
)");
  ir::Program q = iverson(p, "mix");
  Value y = Value::zeros(cotangent::DType::F32, {4});
  auto yd = y.f32_mut();
  for (size_t k = 0; k < 4; ++k) yd[k] = static_cast<float>(k) - 1.5f;
  Value idx = Value::zeros(cotangent::DType::I64, {3});
  auto id = idx.i64_mut();
  id[0] = 0, id[1] = 3, id[2] = 0;
  for (int64_t s : {0, 2, 4}) expect_same_values(p, q, "mix", {ramp(4), y, idx, Value::i64(s)});
}

// The product of two guards with equivalent predicates is one guard: after fusion the trace of
// diag(x) * diag(y) multiplies ([i == l] * x[i]) * ([l == i] * y[l]) at all n² points (i, l);
// as one guard, sum/eq eliminates l and n multiplications are left.
TEST(OptIverson, product_of_guards_with_equivalent_predicates) {
  ir::Program p = compile(R"(
def f(x: f64[n], y: f64[n]) -> f64 {
  let A = for i, j: n. [i == j] * x[i]
  let B = for i, j: n. [i == j] * y[i]
  sum i. sum l. A[i, l] * B[l, i]
}
)");
  ir::Program inl = opt_test::run_pass(p, "f", opt::inline_functions);
  ir::Program fused = opt_test::run_pass(inl, "f", opt::fuse_producers, opt::fuse_postcondition);
  // Before the pass, the postcondition sees the product.
  auto broken = opt::iverson_postcondition(fused, *fused.find("f"));
  ASSERT_TRUE(broken.has_value()) << printed(fused, "f");
  EXPECT_TRUE(contains(*broken, "product of two guards")) << *broken;
  ir::Program q = iverson(fused, "f");
  const std::string out = printed(q, "f");
  EXPECT_EQ(out,
            "def f(x: f64[n], y: f64[n]) -> f64 {\n"
            "  let t19 = sum i_13: n. {\n"
            "    let t25 = x[i_13]\n"
            "    let t26 = y[i_13]\n"
            "    let t27 = t25 * t26\n"
            "    t27\n"
            "  }\n"
            "  t19\n"
            "}\n")
      << printed(fused, "f");
  EXPECT_EQ(count(out, "sum"), 1) << out;
  EXPECT_EQ(count(out, "] * {"), 0) << out;  // 0 <= i < n: the bracket [0 <= i < n] goes too
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t n : {0, 1, 2, 5, 9}) {
    expect_same_values(p, q, "f", {ramp(n), ramp(n, -0.75)});
    expect_same_values(fused, q, "f", {ramp(n), ramp(n, -0.75)});
  }
  const std::vector<std::pair<std::vector<double>, std::vector<double>>> special = {
      {{1.0, 2.0, 3.0}, {0.5, inf, -1.0}},           // inf
      {{1.0, 0.0, 3.0}, {0.5, inf, -1.0}},           // 0 * inf on the diagonal: NaN
      {{1.0, 2.0, 3.0, 4.0}, {nan, 1.0, 2.0, 3.0}},  // NaN on the diagonal
      {{1.0, 2.0, 3.0, 4.0}, {1.0, 2.0, 3.0, nan}}, {{-inf, 2.0}, {1.0, -inf}},
  };
  for (const auto& [xs, ys] : special) {
    expect_same_values(p, q, "f", {vec(xs), vec(ys)});
    expect_same_values(fused, q, "f", {vec(xs), vec(ys)});
  }
  // NaN in y stays NaN, and is not spread: off the diagonal both factors are strong zeros.
  EXPECT_TRUE(std::isnan(run(q, "f", {ramp(4), vec({nan, 1.0, 2.0, 3.0})}).values.at(0)));
  EXPECT_EQ(run(q, "f", {vec({1.0, 2.0}), vec({3.0, 4.0})}).values.at(0), 11.0);
  // O(n²) multiplications before, O(n) after.
  for (int64_t n : {4, 16, 64}) {
    const int64_t before = ops(fused, "f", {ramp(n), ramp(n)});
    const int64_t after = ops(q, "f", {ramp(n), ramp(n)});
    EXPECT_GE(before, n * n) << n;
    EXPECT_EQ(after, 2 * n - 1) << n;  // n multiplications, n - 1 additions
  }
}

// The factors are bound by `let`: a product written out, ([p] * a) * ([q] * b), is one guard
// [p && q] * (a * b) already in the language (docs/language.md §12.5, Iverson products).
//
// Predicates equivalent only under the facts (and written differently) still merge; a factor
// read twice is left.
TEST(OptIverson, product_of_guards_needs_equivalence_and_single_uses) {
  ir::Program p = compile(R"(
def eqv(x: f64[n], y: f64[n]) -> f64[n, n] {
  for i: n, l: n. {
    let a = [i <= l && l <= i] * x[i]
    let b = [l == i && i < n] * y[l]
    a * b
  }
}
def twice(x: f64[n], y: f64[n]) -> f64[n, n] {
  for i: n, l: n. {
    let a = [i == l] * x[i]
    let b = [l == i] * y[l]
    a * b + a
  }
}
)");
  ir::Program q = iverson(p, "eqv");
  const std::string out = printed(q, "eqv");
  EXPECT_EQ(count(out, "] * {"), 1) << out;
  EXPECT_EQ(count(out, " * "), 2) << out;  // the bracket and one multiplication inside it
  ir::Program r = iverson(p, "twice");
  const std::string tw = printed(r, "twice");
  EXPECT_EQ(count(tw, "] * {"), 2) << tw;
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (int64_t n : {1, 3, 6}) {
    expect_same_values(p, q, "eqv", {ramp(n), ramp(n, 2.0)});
    expect_same_values(p, r, "twice", {ramp(n), ramp(n, 2.0)});
  }
  expect_same_values(p, q, "eqv", {ramp(3), vec({nan, 1.0, nan})});
  EXPECT_EQ(ops(p, "eqv", {ramp(6), ramp(6)}), 36);  // a multiplication at every point
  EXPECT_EQ(ops(q, "eqv", {ramp(6), ramp(6)}), 6);   // on the diagonal only
}

// Different predicates: [i == l] implies [i <= l] but not the converse, and where i < l the
// product is 0.0 * y[l], which is NaN when y[l] is. The pass leaves the program as it is.
TEST(OptIverson, product_of_guards_with_different_predicates_is_left) {
  ir::Program p = compile(R"(
def g(x: f64[n], y: f64[n]) -> f64 {
  sum i. sum l: n. {
    let a = [i == l] * x[i]
    let b = [i <= l] * y[l]
    a * b
  }
}
)");
  ir::Program q = iverson(p, "g");
  EXPECT_EQ(printed(q, "g"), printed(p, "g"));
  EXPECT_EQ(count(printed(q, "g"), "] * {"), 2) << printed(q, "g");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t n : {1, 3, 5}) expect_same_values(p, q, "g", {ramp(n), ramp(n, -1.5)});
  // y[1] = NaN is read at (i, l) = (0, 1), where the first factor is a strong zero (the
  // product is one), and at (1, 1), where it is x[1] * NaN: NaN.
  auto r = run(q, "g", {ramp(3), vec({1.0, nan, 2.0})});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(std::isnan(r.values.at(0)));
  expect_same_values(p, q, "g", {ramp(3), vec({1.0, nan, 2.0})});
  expect_same_values(p, q, "g", {ramp(3), vec({1.0, 2.0, inf})});
  // y[2] = inf is read at (0, 2) and (1, 2), where the first factor is a strong zero: the
  // product is one (masks propagate, docs/language.md §5.6); only (2, 2) adds x[2] * inf.
  EXPECT_TRUE(std::isinf(run(q, "g", {ramp(3), vec({1.0, 2.0, inf})}).values.at(0)));
}

// Any valid IR: random programs of the AD tests (loops, while, if, accum, tuples, computed
// indices, calls) and their reverse-mode gradients (saving loops, transposed gathers), inlined
// into one function each, go through the three passes of this family in turn. Every step must
// verify and satisfy its postcondition, and values and op counts are compared at the end.
TEST(OptIverson, random_programs_and_gradients_through_the_family) {
  int checked = 0, changed = 0;
  for (uint64_t seed = 1; seed <= 120; ++seed) {
    const auto rp = cotangent::adtest::random_program(seed);
    const auto tensors = rp.tensor_params();
    if (tensors.empty()) continue;
    const auto& a = rp.params[static_cast<size_t>(tensors[seed % tensors.size()])];
    const std::string src = rp.source + "def gfa(" + rp.decl() + ") -> " + a.type + " { grad(f, " +
                            a.name + ")(" + rp.call() + ") }\n";
    ir::Program p = compile(src);
    if (p.functions.empty()) continue;
    if (auto err = ad::build_derivatives(p)) {
      ADD_FAILURE() << "seed " << seed << ": " << err->message;
      continue;
    }
    for (const char* fn : {"f", "g", "gfa"}) {
      ir::Program base = p;
      *base.find(fn) = ir::inline_calls(p, fn);
      ir::Program cur = base;
      for (opt::PassFn pass :
           {opt::simplify_brackets, opt::simplify_algebra, opt::partially_evaluate,
            opt::simplify_brackets, opt::simplify_algebra}) {
        opt::PostconditionFn post = pass == opt::simplify_brackets ? opt::iverson_postcondition
                                    : pass == opt::simplify_algebra
                                        ? opt::simplify_postcondition
                                        : opt::partial_eval_postcondition;
        SCOPED_TRACE("seed " + std::to_string(seed) + ", " + fn + "\n" + src);
        cur = opt_test::run_pass(cur, fn, pass, post);
      }
      if (printed(cur, fn) != printed(base, fn)) ++changed;
      std::mt19937_64 rng(seed);
      for (int trial = 0; trial < 2; ++trial) {
        auto args = cotangent::adtest::random_program_arguments(rp, rng);
        SCOPED_TRACE("seed " + std::to_string(seed) + ", " + fn + "\n" + src + "\n" +
                     printed(base, fn));
        expect_same_values(base, cur, fn, args, 1e-12);
        ++checked;
      }
    }
  }
  EXPECT_GE(checked, 500);
  EXPECT_GE(changed, 50);  // not vacuous: the passes rewrite many of them
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
