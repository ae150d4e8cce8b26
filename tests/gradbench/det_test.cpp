// GradBench's det through the tool: `primal` against a direct recursive expansion by minors in
// C++ (ρ ≤ 1e-12); `gradient` against the cofactors (−1)^(i+j) det M_ij, each by the same
// recursion (ρ ≤ 1e-12), against central differences of the C++ determinant, and against forward
// mode (`jvp` of the determinant along directions, ρ ≤ 1e-12). The sizes cover the bordered
// path (ell < 6), the block alone (ell = 6) and the loop over the rows above it (ell > 6).
//
// The determinant is linear in each entry, so central differences have no truncation error, only
// rounding: about ε · Σ|terms| / h, with Σ|terms| ≤ ell! ≤ 40320 for entries in [0, 1) and
// ell ≤ 8. With h = 1e-2 that is below 1e-9, so ρ ≤ 1e-8 holds.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "eval_harness.h"

namespace cot::gradbench::testing {
namespace COTANGENT_TEST_UNIT {

using nlohmann::json;

// The determinant of the rows `rows` and columns `cols` of the ell x ell row-major matrix a, by
// expansion along the first of the rows.
double det_of(const std::vector<double>& a, int ell, std::vector<int> rows, std::vector<int> cols) {
  if (rows.empty()) return 1.0;
  const int r = rows.front();
  rows.erase(rows.begin());
  double det = 0, sign = 1;
  for (size_t j = 0; j < cols.size(); ++j, sign = -sign) {
    std::vector<int> rest = cols;
    rest.erase(rest.begin() + static_cast<long>(j));
    det += sign * a[r * ell + cols[j]] * det_of(a, ell, rows, rest);
  }
  return det;
}

std::vector<int> all_but(int ell, int skip) {
  std::vector<int> v;
  for (int i = 0; i < ell; ++i) {
    if (i != skip) v.push_back(i);
  }
  return v;
}

double det(const std::vector<double>& a) {
  const int ell = static_cast<int>(std::lround(std::sqrt(a.size())));
  return det_of(a, ell, all_but(ell, -1), all_but(ell, -1));
}

std::vector<double> cofactors(const std::vector<double>& a, int ell) {
  std::vector<double> c(a.size());
  for (int i = 0; i < ell; ++i) {
    for (int j = 0; j < ell; ++j) {
      c[i * ell + j] =
          ((i + j) % 2 == 0 ? 1 : -1) * det_of(a, ell, all_but(ell, i), all_but(ell, j));
    }
  }
  return c;
}

json input(const std::vector<double>& a, int ell) {
  return {{"A", a}, {"ell", ell}, {"min_runs", 1}, {"min_seconds", 0}};
}

// Natively, through the tool, with two rows above the block (ell = 8). Compiling the gradient
// for a size takes seconds, so the other sizes run in the interpreter (below).
TEST(GradbenchDet, PrimalAndGradientMatchReferences) {
  Tool tool = eval_tool();
  const int ell = 8;
  const std::vector<double> a = Uniform(48).vector(ell * ell);
  expect_json_near(det(a), run_eval(tool, "det", "primal", input(a, ell)), 1e-12);
  const json gradient = run_eval(tool, "det", "gradient", input(a, ell));
  expect_json_near(json(cofactors(a, ell)), gradient, 1e-12);
  expect_json_near(json(central_differences(det, a, 1e-2)), gradient, 1e-8);
}

// The second route: forward mode, in the reference interpreter, at the sizes the native test
// leaves out (1 and 3: bordered; 6: the block alone; 7: one row above it). jvp(primal, A) along a
// direction V gives ⟨∇det, V⟩, which must agree with the reverse-mode gradient; both are also
// checked against the C++ references.
TEST(GradbenchDet, GradientMatchesForwardMode) {
  std::ifstream file(std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench/det.cot");
  std::stringstream source;
  source << file.rdbuf();
  source << R"(
def directional(A: f64[n, n], V: f64[n, n]) -> f64 {
  let (_, tangent) = jvp(primal, A)(A, V)
  tangent
}
)";
  auto module = cotangent::Module::from_string(source.str(), "det_jvp.cot");
  ASSERT_TRUE(module.ok()) << module.message();
  auto matrix = [](const std::vector<double>& v, int64_t ell) {
    cotangent::Value t = cotangent::Value::zeros(cotangent::DType::F64, {ell, ell});
    std::copy(v.begin(), v.end(), t.f64_mut().begin());
    return t;
  };
  Uniform u(9);
  for (int ell : {1, 3, 6, 7}) {
    SCOPED_TRACE("ell=" + std::to_string(ell));
    const std::vector<double> a = u.vector(ell * ell);
    auto value = module.value().evaluate("primal", {matrix(a, ell)});
    ASSERT_TRUE(value.ok()) << value.message();
    EXPECT_LE(rho(det(a), value.value().as_f64()), 1e-12);
    auto gradient = module.value().evaluate("gradient", {matrix(a, ell)});
    ASSERT_TRUE(gradient.ok()) << gradient.message();
    const auto g = gradient.value().f64_data();
    const std::vector<double> c = cofactors(a, ell);
    for (int e = 0; e < ell * ell; ++e) EXPECT_LE(rho(c[e], g[e]), 1e-12) << "element " << e;
    const std::vector<double> v = u.vector(ell * ell);
    auto tangent = module.value().evaluate("directional", {matrix(a, ell), matrix(v, ell)});
    ASSERT_TRUE(tangent.ok()) << tangent.message();
    double inner = 0;
    for (int e = 0; e < ell * ell; ++e) inner += g[e] * v[e];
    EXPECT_LE(rho(inner, tangent.value().as_f64()), 1e-12);
  }
}

TEST(GradbenchDet, MalformedInputIsAFailureThatSaysWhere) {
  Tool tool = eval_tool();
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "det"}});
  const json r = tool.respond({{"id", 1},
                               {"kind", "evaluate"},
                               {"module", "det"},
                               {"function", "primal"},
                               {"input", {{"A", {1.0, 2.0, 3.0}}, {"ell", 2}}}});
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find("input.A: expected ell * ell = 4 elements"),
            std::string::npos)
      << r.dump();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench::testing
