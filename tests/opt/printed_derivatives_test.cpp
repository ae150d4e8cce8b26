// Printed derivatives read as a person would write them (issue 4 item 6): golden forms of the
// papers' examples after the whole pipeline (--opt=2). Generated names (t12, j_27) are
// renumbered in order of appearance before comparing, so the goldens pin the structure, not the
// compiler's counters.
#include <gtest/gtest.h>

#include <map>
#include <regex>
#include <string>

#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

// t12 -> t1, j_27 -> j_1, ... in order of first appearance (per prefix).
std::string canonical(const std::string& text) {
  static const std::regex generated(R"(\b(t|[a-z]+_)(\d+)\b)");
  std::map<std::string, std::string> names;
  std::map<std::string, int> next;
  std::string out;
  auto begin = std::sregex_iterator(text.begin(), text.end(), generated);
  size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::smatch& m = *it;
    out += text.substr(last, static_cast<size_t>(m.position(0)) - last);
    auto [slot, fresh] = names.try_emplace(m.str(0));
    if (fresh) slot->second = m.str(1) + std::to_string(++next[m.str(1)]);
    out += slot->second;
    last = static_cast<size_t>(m.position(0) + m.length(0));
  }
  return out + text.substr(last);
}

std::string derivative(const char* source, const char* fn, DerivativeKind kind,
                       std::vector<std::string> wrt = {}) {
  LoadOptions o;
  o.opt_level = 2;
  auto m = Module::from_string(source, "golden.cot", o);
  if (!m.ok()) return "load failed: " + m.message();
  auto text = m.value().print_derivative(fn, kind, wrt);
  if (!text.ok()) return "print failed: " + text.message();
  // Only the derived function itself (print_derivative appends what it calls).
  const std::string& t = text.value();
  const size_t end = t.find("\n}\n");
  return canonical(end == std::string::npos ? t : t.substr(0, end + 3));
}

TEST(OptPrintedDerivatives, canonical_renumbers_generated_names) {
  EXPECT_EQ(canonical("let t12 = x[j_27] + t12 * t9 + i_5 + j_3"),
            "let t1 = x[j_1] + t1 * t2 + i_1 + j_2");
}

// [Bernstein20] §2.2 and §1: the gradient of trace(diag(x)) is the constant vector of ones;
// repeated, it is the constant k, with no n-by-n tensor anywhere.
TEST(OptPrintedDerivatives, gradient_of_trace_of_diag_is_a_constant_vector) {
  const char* src = R"(
def trace_diag(x: f64[n]) -> f64 { trace(diag(x)) }
def traces(x: f64[n]) -> f64 {
  let A = diag(x)
  trace(A) + trace(A) + trace(A)
}
)";
  EXPECT_EQ(derivative(src, "trace_diag", DerivativeKind::Grad),
            "# grad(trace_diag, x), as the compiler builds it\n"
            "def grad_trace_diag_x(x: f64[n]) -> f64[n] {\n"
            "  let t1 = for j: n. 1.0\n"
            "  t1\n"
            "}\n");
  const std::string traces = derivative(src, "traces", DerivativeKind::Vjp);
  EXPECT_EQ(traces,
            "# vjp(traces, x), as the compiler builds it\n"
            "def vjp_traces_x(x: f64[n], ct: f64) -> f64[n] {\n"
            "  let t1 = ct + ct\n"
            "  let t2 = t1 + ct\n"
            "  let t3 = for j: n. t2\n"
            "  t3\n"
            "}\n");
}

// [Bernstein20] §1: the gradient of a row times a column of diag(x) is Gen i. [i = 0] 2 x[0] dy.
TEST(OptPrintedDerivatives, row_times_column_of_diag_is_one_hot) {
  const char* src = R"(
def row_col(x: f64[n]) -> f64 {
  let A = diag(x)
  dot(for i. A[i, 0], for j. A[0, j])
}
)";
  EXPECT_EQ(derivative(src, "row_col", DerivativeKind::Vjp),
            "# vjp(row_col, x), as the compiler builds it\n"
            "def vjp_row_col_x(x: f64[n], ct: f64) -> f64[n] {\n"
            "  let t1 = for j: n. {\n"
            "    let t2 = [j == 0] * {\n"
            "      let t3 = x[0]\n"
            "      let t4 = t3 * ct\n"
            "      let t5 = t4 + t4\n"
            "      t5\n"
            "    }\n"
            "    t2\n"
            "  }\n"
            "  t1\n"
            "}\n");
}

// [Bernstein20] §2.1: the adjoint of a valid convolution is a correlation with range guards.
TEST(OptPrintedDerivatives, adjoint_of_a_valid_convolution_is_a_guarded_correlation) {
  const char* src = R"(
def conv(x: f64[n], c: f64[m]) -> f64[n - m + 1] { for i: n - m + 1. sum j. x[i + j] * c[j] }
)";
  EXPECT_EQ(derivative(src, "conv", DerivativeKind::Vjp, {"x"}),
            "# vjp(conv, x), as the compiler builds it\n"
            "def vjp_conv_x(x: f64[n], c: f64[m], ct: f64[n - m + 1]) -> f64[n] {\n"
            "  let t1 = for j_1: n. {\n"
            "    let t2 = sum i_1: n - m + 1. {\n"
            "      let t3 = [i_1 <= j_1 && j_1 < m + i_1] * {\n"
            "        let t4 = ct[i_1]\n"
            "        let t5 = c[j_1 - i_1]\n"
            "        let t6 = t5 * t4\n"
            "        t6\n"
            "      }\n"
            "      t3\n"
            "    }\n"
            "    t2\n"
            "  }\n"
            "  t1\n"
            "}\n");
}

// [Bernstein20] §2.2 (as its skipped-entry sum): a shifted product's gradient is two guarded
// shifted reads.
TEST(OptPrintedDerivatives, shifted_product_gradient_is_two_guarded_shifts) {
  const char* src = R"(
def shifted(x: f64[n]) -> f64 { sum i. [i + 1 < n] * x[i + 1] * x[i] }
)";
  EXPECT_EQ(derivative(src, "shifted", DerivativeKind::Grad),
            "# grad(shifted, x), as the compiler builds it\n"
            "def grad_shifted_x(x: f64[n]) -> f64[n] {\n"
            "  let t1 = for i_1: n. {\n"
            "    let t2 = [i_1 >= 1] * {\n"
            "      let t3 = x[i_1 - 1]\n"
            "      t3\n"
            "    }\n"
            "    let t4 = [i_1 + 1 < n] * {\n"
            "      let t5 = x[i_1 + 1]\n"
            "      t5\n"
            "    }\n"
            "    let t6 = t2 + t4\n"
            "    t6\n"
            "  }\n"
            "  t1\n"
            "}\n");
}

// [UrbanSmagt] §6: the derivative of the main example with respect to d has the paper's index
// structure: dd[p] sums over i under the Fourier-Motzkin range p - 4 <= i <= p, with the factor
// 3 d[p]^2 (here d[p] * (d[p] * s) twice plus d[p]^2 * s). s = sum j. ct'[i, j] is the
// adjoint of the exp summed over j, materialized once per i instead of once per p.
TEST(OptPrintedDerivatives, main_example_of_paper_003_keeps_its_index_structure) {
  const char* src = R"(
def f(a: f64[3, 5], b: f64[4, 5], c: f64[3, 3], d: f64[8]) -> f64[3, 4] {
  for i, j. exp(-(sum k. (a[i, k] + b[j, k]) ^ 2 * c[i, i] + d[i + k] ^ 3))
}
)";
  const std::string dd = derivative(src, "f", DerivativeKind::Vjp, {"d"});
  // s[i] = sum j. ct'[i, j], ct'[i, j] = -exp(-...) * ct[i, j], once per i (the transposer's
  // shared residuals, design.md §7.4): the only sums over k are the primal's.
  EXPECT_NE(dd.find("let t5 = for i_1: 3. {\n    let t6 = c[i_1, i_1]\n"
                    "    let t7 = sum j_1: 4. {\n      let t8 = ct[i_1, j_1]"),
            std::string::npos)
      << dd;
  // for p. sum i. [i <= p && p <= i + 4] * (... d[p] ...): no dense scatter.
  EXPECT_NE(dd.find("let t21 = for j_2: 8. {\n    let t22 = sum i_2: 3. {\n"
                    "      let t23 = [i_2 <= j_2 && j_2 <= i_2 + 4] * {\n"
                    "        let t24 = t5[i_2]\n        let t25 = d[j_2]"),
            std::string::npos)
      << dd;
  EXPECT_EQ(dd.find("accum"), std::string::npos) << dd;
  // da[p, q] sums over j only (the liberated k is fixed to q); a[i, k] + b[j, k], which the
  // primal and the gather both need, is a table read by both (region-cse).
  const std::string da = derivative(src, "f", DerivativeKind::Vjp, {"a"});
  EXPECT_NE(da.find("let t22 = for j_5: 3, j_6: 5. {\n    let t23 = sum j_7: 4. {\n"
                    "      let t24 = shared[j_5, j_7, j_6]\n"),
            std::string::npos)
      << da;
  EXPECT_NE(da.find("let shared = for j_1: 3, j_2: 4, k_1: 5. {\n    let t5 = a[j_1, k_1]\n"
                    "    let t6 = b[j_2, k_1]\n    let t7 = t5 + t6\n"),
            std::string::npos)
      << da;
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
