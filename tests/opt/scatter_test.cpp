// One-hot gathers become scatter-adds (src/opt/scatter.h). Each test compiles a program, runs the
// pass (which must verify, satisfy its postcondition and report its change honestly), checks the
// printed form, and compares values with the program before the pass on the reference
// interpreter: bit for bit (ρ tolerance 0, NaN matching NaN), since a cell adds the same terms in
// the same order, and never more operations.
#include "opt/scatter.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "ir/builder.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::Value;
using opt_test::compile;
using opt_test::printed;
using opt_test::run;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

ir::Program scatter(const ir::Program& p, const std::string& fn) {
  return opt_test::run_pass(p, fn, opt::scatter_sums, opt::scatter_postcondition);
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

Value ints(const std::vector<int64_t>& xs) {
  Value v = Value::zeros(cotangent::DType::I64, {static_cast<int64_t>(xs.size())});
  for (size_t k = 0; k < xs.size(); ++k) v.i64_mut()[k] = xs[k];
  return v;
}

Value ints2(int64_t rows, int64_t cols, const std::vector<int64_t>& xs) {
  Value v = Value::zeros(cotangent::DType::I64, {rows, cols});
  for (size_t k = 0; k < xs.size(); ++k) v.i64_mut()[k] = xs[k];
  return v;
}

// The keys of the value tests: in range, repeated, negative, equal to k, far out of range; and
// the i64 extremes.
const std::vector<std::vector<int64_t>>& key_sets() {
  static const std::vector<std::vector<int64_t>> sets = {
      {0, 2, 2, 5, 1, 0},
      {-1, 6, 3, 3, 100, 0},
      {std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), 4, 4, 4, 4},
      {5, 5, 5, 5, 5, 5},  // one segment reached
  };
  return sets;
}

// Values with a NaN, an infinity and signed zeros among them.
Value values6() {
  return opt_test::vec({1.5, -0.0, kNaN, 2.25, kInf, -3.0});
}

// A function's result counts as seen (a caller that inlines it may see its strong zeros), so a
// scatter whose table is the result keeps a hit table: at most one addition per point (at most
// six points in these tests).
constexpr int64_t kHitCost = 6;

// Runs both programs on `args` and expects the same values bit for bit (NaN matching NaN, zeros
// of the same sign), and no more operations under the cost model than before plus `extra`.
void expect_bit_equal(const ir::Program& before, const ir::Program& after, const std::string& fn,
                      const std::vector<Value>& args, int64_t extra = kHitCost) {
  auto a = run(before, fn, args);
  auto b = run(after, fn, args);
  ASSERT_TRUE(a.ok) << "before: " << a.error;
  ASSERT_TRUE(b.ok) << "after: " << b.error << "\n" << printed(after, fn);
  ASSERT_EQ(a.values.size(), b.values.size());
  for (size_t k = 0; k < a.values.size(); ++k) {
    if (std::isnan(a.values[k])) {
      EXPECT_TRUE(std::isnan(b.values[k])) << fn << " element " << k << ": " << b.values[k];
      continue;
    }
    EXPECT_EQ(a.values[k], b.values[k]) << fn << " element " << k;
    EXPECT_EQ(std::signbit(a.values[k]), std::signbit(b.values[k])) << fn << " element " << k;
  }
  EXPECT_LE(b.ops, a.ops + extra) << fn << "\n" << printed(after, fn);
}

// F1: the term is a guard with the equality among its conjuncts; the generator's other index is
// a key of its own, in the generator's order.
TEST(OptScatter, guard_atom_becomes_an_accum_in_generator_order) {
  ir::Program p = compile(R"(
def rows(idx: i64[n], x: f64[n, d], w: f64[k]) -> f64[k, d] {
  for j: k, l: d. sum i. [idx[i] == j] * x[i, l]
}
def cols(idx: i64[n], x: f64[n, d], w: f64[k]) -> f64[d, k] {
  for l: d, j: k. sum i. [j == idx[i]] * x[i, l]
}
def two_conjuncts(idx: i64[n], x: f64[n, d], w: f64[k]) -> f64[k, d] {
  for j: k, l: d. sum i. [idx[i] == j && l <= 1] * x[i, l]
}
)");
  ir::Program q = scatter(p, "rows");
  q = scatter(q, "cols");
  q = scatter(q, "two_conjuncts");
  const std::string rows = printed(q, "rows");
  EXPECT_TRUE(contains(rows, "accum[k, d] i_")) << rows;
  EXPECT_FALSE(contains(rows, "sum ")) << rows;
  EXPECT_TRUE(contains(rows, " >= 0\n")) << rows;  // contributions are masked by 0 <= e < k
  const std::string cols = printed(q, "cols");
  EXPECT_TRUE(contains(cols, "accum[d, k] i_")) << cols;
  EXPECT_TRUE(contains(cols, "(l_")) << cols;  // the free index first, the key second
  const std::string two = printed(q, "two_conjuncts");
  EXPECT_TRUE(contains(two, "[l_")) << two;  // the other conjunct stays in the term's guard
  const Value x = opt_test::tensor({6, 3}, 1.25);
  for (const auto& keys : key_sets()) {
    for (const char* fn : {"rows", "cols", "two_conjuncts"}) {
      expect_bit_equal(p, q, fn, {ints(keys), x, opt_test::curve(6)}, kHitCost);
    }
  }
  // Empty ranges: no points, no segments, no columns.
  Value x0 = Value::zeros(cotangent::DType::F64, {0, 3});
  Value xd0 = Value::zeros(cotangent::DType::F64, {6, 0});
  for (const char* fn : {"rows", "cols", "two_conjuncts"}) {
    expect_bit_equal(p, q, fn, {ints({}), x0, opt_test::curve(6)}, kHitCost);
    expect_bit_equal(p, q, fn, {ints(key_sets()[0]), x, opt_test::empty_vector()}, kHitCost);
    expect_bit_equal(p, q, fn, {ints(key_sets()[0]), xd0, opt_test::curve(6)}, kHitCost);
  }
}

// F3: `[idx[i] == j] * 1.0` multiplied into the term, then doubled and negated, as reverse mode
// writes kmeans' gradient. The work at the other segments is multiplications by strong zeros
// (charged): the scatter does it once per point.
TEST(OptScatter, one_times_term_becomes_an_accum_and_costs_once_per_point) {
  ir::Program p = compile(R"(
def weighted(idx: i64[n], v: f64[n], w: f64[k]) -> f64[k] {
  for j: k. sum i. {
    let one = [idx[i] == j] * 1.0
    let t = one * v[i]
    let u = v[i] * t / w[j]
    -(u + u)
  }
}
def hist(idx: i64[n], w: f64[k]) -> f64[k] {
  for j: k. sum i: n. [idx[i] == j] * 1.0
}
)");
  ir::Program q = scatter(p, "weighted");
  q = scatter(q, "hist");
  const std::string out = printed(q, "weighted");
  EXPECT_TRUE(contains(out, "accum[k] i_")) << out;
  EXPECT_TRUE(contains(out, "w[t")) << out;  // w[j] reads the key
  EXPECT_TRUE(contains(printed(q, "hist"), "accum[k] i_")) << printed(q, "hist");
  const Value w = opt_test::vec({2.0, -0.5, 0.0, kNaN, 4.0, 1.0});
  for (const auto& keys : key_sets()) {
    expect_bit_equal(p, q, "weighted", {ints(keys), values6(), w});
    expect_bit_equal(p, q, "hist", {ints(keys), w});
  }
  expect_bit_equal(p, q, "weighted", {ints({}), opt_test::empty_vector(), w});
  expect_bit_equal(p, q, "weighted",
                   {ints({1, 2}), opt_test::vec({1.0, 2.0}), opt_test::empty_vector()});
  // Before: at each of the 6 x 6 (segment, point) pairs two multiplications, a division and a
  // negation (charged on strong zeros too), at the 6 matching pairs u + u, and 2 additions of
  // live terms (segments 0 and 2 have two points each). After: the same work at the 6 points,
  // and the hit table's count of each point (the result is seen by a caller).
  const std::vector<Value> args = {ints({0, 2, 2, 5, 1, 0}), values6(), w};
  EXPECT_EQ(run(p, "weighted", args).ops, 6 * 6 * 4 + 6 + 2);
  EXPECT_GE(run(q, "weighted", args).ops, 6 * 4 + 6 + 2);
  EXPECT_LE(run(q, "weighted", args).ops, 6 * 4 + 6 + 2 + kHitCost);
}

// Where a strong zero of the sum can be seen (here as a dividend), the cells no point reaches are
// masked by the `hit` table: an empty segment's mean is 0 / 0 of strong zeros, 0, not NaN, and
// with no points at all both sums are ordinary zeros (NaN).
TEST(OptScatter, a_seen_strong_zero_is_kept_by_the_hit_table) {
  ir::Program p = compile(R"(
def means(idx: i64[n], v: f64[n], w: f64[k]) -> f64[k] {
  let total = for j: k. sum i. [idx[i] == j] * v[i]
  let count = for j: k. sum i. [idx[i] == j] * 1.0
  for j: k. total[j] / count[j]
}
)");
  ir::Program q = scatter(p, "means");
  const std::string out = printed(q, "means");
  EXPECT_EQ(opt_test::count(out, "accum["), 3) << out;  // two sums and one hit table
  EXPECT_TRUE(contains(out, "hit")) << out;
  EXPECT_TRUE(contains(out, "|| n <= 0")) << out;
  const Value w = opt_test::curve(6);
  // The hit table is a real count (the language's accum sums reals): at most one addition per
  // point more under the cost model, where the sums' work was all under their brackets (free
  // where false) and only the live terms' additions counted.
  for (const auto& keys : key_sets()) {
    expect_bit_equal(p, q, "means", {ints(keys), values6(), w}, static_cast<int64_t>(keys.size()));
  }
  auto r = run(q, "means", {ints({0, 0, 2, 2, 2, 0}), opt_test::vec({1, 2, 3, 4, 5, 6}), w});
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.values, (std::vector<double>{3.0, 0.0, 4.0, 0.0, 0.0, 0.0}));
  auto e = run(q, "means", {ints({}), opt_test::empty_vector(), w});
  ASSERT_TRUE(e.ok) << e.error;
  for (double m : e.values) EXPECT_TRUE(std::isnan(m));
  expect_bit_equal(p, q, "means", {ints({}), opt_test::empty_vector(), w});
}

// The generator's side of the equality as licm leaves it in reverse mode: `[n >= 1] * j`, bound
// before the sum (j wherever the sum runs), read by the equality.
TEST(OptScatter, fires_through_a_guarded_copy_of_the_index) {
  ir::Function f;
  f.name = "licmd";
  ir::Builder b(f);
  const SizeExpr n = SizeExpr::var("n"), k = SizeExpr::var("k");
  const ir::VarId idx = b.param("idx", Type::tensor(Scalar::I64, {n}));
  const ir::VarId x = b.param("x", Type::tensor(Scalar::F64, {n}));
  b.param("w", Type::tensor(Scalar::F64, {k}));
  const ir::VarId nv = b.size_var("n");
  const ir::VarId j = b.index_var("j");
  const ir::VarId out = b.gen({{j, k}}, [&] {
    const Pred nonempty = Pred::ge0(*Affine::add(Affine::var(nv), Affine::constant(-1)));
    const ir::VarId t =
        b.guard(nonempty, [&] { return std::vector<ir::Atom>{ir::Atom::of(j)}; })[0];
    const ir::VarId i = b.index_var("i");
    return ir::Atom::of(b.reduce(ir::ReduceKind::Sum, {{i, n}}, [&] {
      const ir::VarId e = b.index(ir::Atom::of(idx), {ir::affine_index(Affine::var(i))});
      const ir::VarId c = b.prim(Prim::Eq, {ir::Atom::of(t), ir::Atom::of(e)});
      return ir::Atom::of(b.guard(Pred::atom_of(c), [&] {
        return std::vector<ir::Atom>{
            ir::Atom::of(b.index(ir::Atom::of(x), {ir::affine_index(Affine::var(i))}))};
      })[0]);
    }));
  });
  b.finish({ir::Atom::of(out)});
  ir::Program p;
  p.sources = std::make_shared<SourceManager>();
  p.functions.push_back(std::move(f));
  ir::Program q = scatter(p, "licmd");
  EXPECT_TRUE(contains(printed(q, "licmd"), "accum[k]")) << printed(q, "licmd");
  for (const auto& keys : key_sets()) {
    expect_bit_equal(p, q, "licmd", {ints(keys), values6(), opt_test::curve(6)});
  }
}

// A statement of the term that reads what the generator's body computes before the sum (cost
// free, cannot fail) is copied into the scatter at j = e.
TEST(OptScatter, copies_cheap_statements_of_the_generator_body) {
  ir::Program p = compile(R"(
def centred(idx: i64[n], x: f64[n, d], c: f64[k, d]) -> f64[k, d] {
  for j: k, l: d. {
    let cj = c[j, l]
    let s = sum i. { let one = [idx[i] == j] * 1.0
                     (x[i, l] - cj) * one }
    s * 2.0
  }
}
)");
  ir::Program q = scatter(p, "centred");
  const std::string out = printed(q, "centred");
  EXPECT_TRUE(contains(out, "accum[k, d]")) << out;
  EXPECT_TRUE(contains(out, "c[t")) << out;  // c[e, l] in the scatter
  const Value x = opt_test::tensor({6, 2}, 0.75);
  const Value c = opt_test::tensor({6, 2}, -1.5);
  for (const auto& keys : key_sets()) expect_bit_equal(p, q, "centred", {ints(keys), x, c});
}

// What the pass leaves: each function below is returned as it was (run_pass checks the report).
TEST(OptScatter, declines_what_it_cannot_prove) {
  ir::Program p = compile(R"(
def not_unit(idx: i64[n], v: f64[n], w: f64[k]) -> f64[k] {
  for j: k. sum i. [idx[i] == 2 * j] * v[i]
}
def shifted(idx: i64[n], v: f64[n], w: f64[k]) -> f64[k] {
  for j: k. sum i. [idx[i] == j + 1] * v[i]
}
def key_reads_j(idx: i64[n, k], v: f64[n], w: f64[k]) -> f64[k] {
  for j: k. sum i. [idx[i, j] == j] * v[i]
}
def key_reads_l(idx: i64[n, d], x: f64[n, d], w: f64[k]) -> f64[k, d] {
  for j: k, l: d. sum i. [idx[i, l] == j] * x[i, l]
}
def three(idx: i64[n], v: f64[n]) -> f64[3] {
  for j: 3. sum i. [idx[i] == j] * v[i]
}
def integers(idx: i64[n], v: i64[n], w: f64[k]) -> i64[k] {
  for j: k. sum i. if idx[i] == j then v[i] else 0
}
def rows_of(idx: i64[n], x: f64[n, d], w: f64[k]) -> f64[k, d] {
  for j: k. sum i. [idx[i] == j] * x[i]
}
def fails_outside(idx: i64[n], idx2: i64[n], v: f64[n], w: f64[k]) -> f64[k] {
  for j: k. sum i. { let y = v[idx2[i]]
                     [idx[i] == j] * 1.0 * y }
}
def fails_inside(idx: i64[n], idx2: i64[n], v: f64[n], w: f64[k]) -> f64[k] {
  for j: k. sum i. [idx[i] == j] * v[idx2[i]]
}
def if_form(idx: i64[n], v: f64[n], w: f64[k]) -> f64[k] {
  for j: k. sum i. if j == idx[i] then v[i] else 0.0
}
def ordinary_zero(idx: i64[n], v: f64[n], w: f64[k]) -> f64[k] {
  for j: k. sum i. ([idx[i] == j] * 1.0 + 0.0 * v[i]) * v[i]
}
def costly_before(idx: i64[n], v: f64[n], w: f64[k]) -> f64[k] {
  for j: k. { let c = sum m. w[m] * w[j]
              sum i. [idx[i] == j] * (v[i] * c) }
}
)");
  const std::vector<std::string> fns = {
      "not_unit", "shifted",       "key_reads_j",  "key_reads_l", "three",         "integers",
      "rows_of",  "fails_outside", "fails_inside", "if_form",     "ordinary_zero", "costly_before"};
  for (const auto& fn : fns) {
    ir::Program q = scatter(p, fn);
    EXPECT_EQ(printed(q, fn), printed(p, fn)) << fn;
    EXPECT_FALSE(opt::scatter_postcondition(q, *q.find(fn)).has_value()) << fn;
  }
  // A literal pinned extent of 4 gains enough.
  ir::Program four = compile(R"(
def four(idx: i64[n], v: f64[n]) -> f64[4] {
  for j: 4. sum i. [idx[i] == j] * v[i]
}
)");
  ir::Program q = scatter(four, "four");
  EXPECT_TRUE(contains(printed(q, "four"), "accum[4]")) << printed(q, "four");
  for (const auto& keys : key_sets()) {
    expect_bit_equal(four, q, "four", {ints(keys), values6()}, kHitCost);
  }
}

// The postcondition finds what the pass would rewrite.
TEST(OptScatter, postcondition_sees_a_gather) {
  ir::Program p = compile(R"(
def rows(idx: i64[n], x: f64[n, d], w: f64[k]) -> f64[k, d] {
  for j: k, l: d. sum i. [idx[i] == j] * x[i, l]
}
)");
  EXPECT_TRUE(opt::scatter_postcondition(p, *p.find("rows")).has_value());
  ir::Program q = scatter(p, "rows");
  EXPECT_FALSE(opt::scatter_postcondition(q, *q.find("rows")).has_value());
}

// Errors: the scatter never fails on a key out of range (the sum ignores it), and a key that
// reads out of range fails as it did (the key is computed at every point in both).
TEST(OptScatter, errors_stay_as_they_were) {
  ir::Program p = compile(R"(
def keyed(idx: i64[m], pos: i64[n], v: f64[n], w: f64[k]) -> f64[k] {
  for j: k. sum i. [idx[pos[i]] == j] * v[i]
}
)");
  ir::Program q = scatter(p, "keyed");
  const std::string out = printed(q, "keyed");
  // pos[i] is in range, idx[pos[i]] may not be: the key may fail, so the pass declines.
  EXPECT_EQ(out, printed(p, "keyed"));
  ir::Program r = compile(R"(
def ok(idx: i64[n], v: f64[n], w: f64[k]) -> f64[k] {
  for j: k. sum i. [idx[i] == j] * v[i]
}
)");
  ir::Program s = scatter(r, "ok");
  auto a = run(s, "ok", {ints({9, -9, 0, 1, 2, 3}), values6(), opt_test::curve(2)});
  ASSERT_TRUE(a.ok) << a.error;
  expect_bit_equal(r, s, "ok", {ints({9, -9, 0, 1, 2, 3}), values6(), opt_test::curve(2)});
}

// Points n x d with entries spread over [0, 1) by a multiplicative hash (no two alike, so no
// ties between distances), and the last k of them as centroids, as GradBench's kmeans has it.
std::vector<Value> kmeans_input(int64_t n, int64_t k, int64_t d) {
  Value points = Value::zeros(cotangent::DType::F64, {n, d});
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (auto& x : points.f64_mut()) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x = static_cast<double>(state >> 11) / 9007199254740992.0;
  }
  Value centroids = Value::zeros(cotangent::DType::F64, {k, d});
  for (int64_t e = 0; e < k * d; ++e) {
    centroids.f64_mut()[static_cast<size_t>(e)] =
        points.f64_data()[static_cast<size_t>((n - k) * d + e)];
  }
  return {points, centroids};
}

// Timing-free complexity of the plain kmeans program (bench/natural/kmeans.cot) at --opt 2: what
// `dir` (the gradient and the Hessian's diagonal) costs beyond the primal `cost` does not grow
// with k, O(n d), where it grew like k n d before the pass (on GradBench's workloads, n = 1000,
// d = 8: 276,991 ops at k = 10 and 2,616,901 at k = 100 before; 34,981 and 34,801 after). The
// gradient of `cost` in the centroids is a scatter-add too.
TEST(OptScatter, natural_kmeans_gradient_cost_does_not_grow_with_k) {
  auto m =
      cotangent::Module::from_file(std::string(COTANGENT_SOURCE_DIR) + "/bench/natural/kmeans.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  const int64_t n = 1000, d = 8;
  std::vector<int64_t> extra;
  for (int64_t k : {10, 40, 100}) {
    const std::vector<Value> args = kmeans_input(n, k, d);
    auto dir = m.value().cost("dir", args);
    auto primal = m.value().cost("cost", args);
    ASSERT_TRUE(dir.ok()) << dir.message();
    ASSERT_TRUE(primal.ok()) << primal.message();
    extra.push_back(dir.value().ops - primal.value().ops);
  }
  // Each point adds its coordinates to its cluster's sums once (and counts itself once): a
  // few operations per point and coordinate, fewer additions as k grows (a cluster's first
  // term is free).
  EXPECT_LT(extra[0], 5 * n * d) << extra[0];
  EXPECT_LE(extra[1], extra[0]);
  EXPECT_LE(extra[2], extra[1]);
  auto grad = m.value().print_derivative("cost", cotangent::DerivativeKind::Grad, {"centroids"});
  ASSERT_TRUE(grad.ok()) << grad.message();
  EXPECT_TRUE(contains(grad.value(), "accum[k, d]")) << grad.value();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
