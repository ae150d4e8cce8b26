// Output fission (src/opt/output_fission.h): a generator's costly per-point value materialized
// so that its elements are cheap and fusion computes them where they are read; the forward-mode
// Jacobian whose columns were copied into the Jacobian's layout; and the cases left alone.
#include "opt/output_fission.h"

#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "opt/fuse.h"
#include "opt/opt_test_util.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using opt_test::compile;
using opt_test::count;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;
using opt_test::run_pass;
using opt_test::tensor;

ir::Program split(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::split_outputs, opt::output_fission_postcondition);
}

ir::Program fused(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::fuse_producers, opt::fuse_postcondition);
}

// Columns X[j] = for i. E, each after a costly value c (a loop over a matrix that depends on
// j), read in the transposed layout: X[j] becomes cheap elements of a table of the c's.
constexpr const char* kColumns = R"(
def f(x: f64[n], w: f64[k]) -> f64[n, k] {
  let X = for j: k. {
    let c = loop a = for v: 3. w[j] * f64(v + 1) for s < 4 { for v: 3. a[v] * a[(v + 1) % 3] + 0.5 }
    for i: n. c[i % 3] * x[i] + f64(j)
  }
  for i: n, j: k. X[j, i]
}
)";

TEST(OptOutputFission, ACostlyValuePerColumnBecomesATableAndTheColumnsFuseIntoTheirReader) {
  auto p = compile(kColumns);
  ASSERT_TRUE(opt::output_fission_postcondition(p, *p.find("f")).has_value());
  auto q = split(p, "f");
  const std::string text = printed(q, "f");
  // c per j, once: a table over j of the loop's result; X's elements read it.
  EXPECT_EQ(count(text, "= for j_"), 1) << text;
  EXPECT_EQ(count(text, "loop"), 1) << text;
  EXPECT_NE(text.find("X = for j: k, i: n."), std::string::npos) << text;
  // Fusion then computes each element of X where the transposed read was.
  auto r = fused(q, "f");
  EXPECT_EQ(count(printed(r, "f"), "X ="), 0) << printed(r, "f");
  for (auto [n, k] : {std::pair<int64_t, int64_t>{1, 1}, {5, 3}, {0, 2}, {4, 0}}) {
    std::vector<cotangent::Value> args{tensor({n}, 0.5), tensor({k}, -0.25)};
    expect_same_values(p, q, "f", args, 0.0);
    expect_same_values(p, r, "f", args, 0.0);
    // The loop runs once per column, as before: no work is added.
    EXPECT_EQ(run(p, "f", args).ops, run(q, "f", args).ops);
  }
}

TEST(OptOutputFission, NotWhenTheColumnsAreNotReadElementByElement) {
  // X returned whole: nothing would fuse it, so the table would only add memory.
  auto p = compile(R"(
def f(x: f64[n], w: f64[k]) -> f64[k, n] {
  for j: k. {
    let c = loop a = for v: 3. w[j] * f64(v + 1) for s < 4 { for v: 3. a[v] * a[(v + 1) % 3] }
    for i: n. c[i % 3] * x[i]
  }
}
)");
  EXPECT_FALSE(opt::output_fission_postcondition(p, *p.find("f")).has_value());
  EXPECT_EQ(printed(split(p, "f"), "f"), printed(p, "f"));
}

TEST(OptOutputFission, ElementsReadInsideANestedSumReadTheTable) {
  // c's elements are read in a sum of E: each read becomes a read of P, c is never copied.
  auto p = compile(R"(
def f(x: f64[n], w: f64[k]) -> f64[n, k] {
  let X = for j: k. {
    let c = for v: 3. sum l: n. x[l] * w[j] * f64(v)
    for i: n. sum v: 3. c[v] * x[i]
  }
  for i: n, j: k. X[j, i]
}
)");
  auto q = split(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_NE(text.find("X = for j: k, i: n."), std::string::npos) << text;
  EXPECT_EQ(count(printed(fused(q, "f"), "f"), "X ="), 0) << printed(fused(q, "f"), "f");
  for (auto [n, k] : {std::pair<int64_t, int64_t>{4, 2}, {1, 3}, {0, 1}}) {
    std::vector<cotangent::Value> args{tensor({n}, 0.5), tensor({k}, -0.25)};
    expect_same_values(p, q, "f", args, 0.0);
    EXPECT_EQ(run(p, "f", args).ops, run(q, "f", args).ops);
  }
}

TEST(OptOutputFission, NotWhenTheCostlyValueIsUsedWhole) {
  // A loop per element starts from the whole of c: a table read per point would copy it.
  auto p = compile(R"(
def f(x: f64[n], w: f64[k]) -> f64[n, k] {
  let X = for j: k. {
    let c = for v: 3. sum l: n. x[l] * w[j] * f64(v)
    for i: n. {
      let s = loop a = c for t < 2 { for v: 3. a[v] * x[i] }
      s[i % 3]
    }
  }
  for i: n, j: k. X[j, i]
}
)");
  EXPECT_EQ(printed(split(p, "f"), "f"), printed(p, "f"));
}

TEST(OptOutputFission, NotWhenTwoCostlyValuesAreRead) {
  // Two costly values per column would need two tables each computing the column's work.
  auto p = compile(R"(
def f(x: f64[n], w: f64[k]) -> f64[n, k] {
  let X = for j: k. {
    let c = for v: 3. sum l: n. x[l] * w[j] * f64(v)
    let d = for v: 3. sum l: n. x[l] * x[l] * w[j] * f64(v)
    for i: n. c[i % 3] * d[(i + 1) % 3]
  }
  for i: n, j: k. X[j, i]
}
)");
  EXPECT_EQ(printed(split(p, "f"), "f"), printed(p, "f"));
}

// Generators whose body is one read at permuted indices: a copy into another layout.
int transposing_copies(const std::string& text) {
  static const std::regex copy(R"(= for [^\n]*\{\n *let (t\d+) = \w+\[[^\]\n]*\]\n *\1\n *\})");
  return static_cast<int>(
      std::distance(std::sregex_iterator(text.begin(), text.end(), copy), std::sregex_iterator()));
}

TEST(OptOutputFission, AForwardModeJacobianWritesItsLayoutWithoutACopyOfItsColumns) {
  // Forward mode (2 inputs, 2n outputs): the columns go through a loop, as HT's skinning does.
  const char* src = R"(
def rot(t: f64[2]) -> f64[2, 2] {
  for p: 2, q: 2. [p == q] * cos(t[0]) + [p != q] * sin(t[1]) * f64(p - q)
}
def g(t: f64[2], x: f64[n, 2]) -> f64[n, 2] {
  let R = rot(t)
  let M = loop A = R for s < 3 { for r: 2, c: 2. sum k: 2. A[r, k] * R[k, c] }
  for v: n, r: 2. sum q: 2. M[r, q] * x[v, q]
}
def J(t: f64[2], x: f64[n, 2]) -> f64[n, 2, 2] { jacobian(g, t)(t, x) }
)";
  cotangent::LoadOptions o2;
  o2.opt_level = 2;
  auto m = cotangent::Module::from_string(src, "jac.cot", o2);
  ASSERT_TRUE(m.ok()) << m.message();
  auto text = m.value().print("J");
  ASSERT_TRUE(text.ok()) << text.message();
  EXPECT_EQ(transposing_copies(text.value()), 0) << text.value();
  cotangent::LoadOptions o0;
  o0.opt_level = 0;
  auto ref = cotangent::Module::from_string(src, "jac.cot", o0);
  ASSERT_TRUE(ref.ok()) << ref.message();
  const std::vector<cotangent::Value> args{opt_test::vec({0.3, -0.7}), tensor({4, 2}, 0.5)};
  auto a = m.value().evaluate("J", args);
  auto b = ref.value().evaluate("J", args);
  ASSERT_TRUE(a.ok() && b.ok());
  std::vector<double> va, vb;
  opt_test::flatten(a.value(), va);
  opt_test::flatten(b.value(), vb);
  ASSERT_EQ(va.size(), 16u);
  ASSERT_EQ(va.size(), vb.size());
  for (size_t e = 0; e < va.size(); ++e) EXPECT_LE(opt_test::rho(va[e], vb[e]), 1e-12) << e;
}

TEST(OptOutputFission, TheCopyDetectorFindsACopy) {
  EXPECT_EQ(transposing_copies("let t9 = for o: n, p: 2. {\n  let t8 = t7[p, o]\n  t8\n}\n"), 1);
  EXPECT_EQ(transposing_copies("let t9 = for o: n. {\n  let t8 = t7[o]\n  let t6 = t8 * t8\n"
                               "  t6\n}\n"),
            0);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
