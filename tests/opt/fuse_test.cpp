// Producer-consumer fusion (pass "fuse"): reads of generators become the generator's body at
// the read, only where no work is duplicated and the read is provably in bounds.
#include "opt/fuse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ad/derive.h"
#include "ad/fd_harness.h"
#include "e2e/e2e_cases.h"
#include "opt/gen_pushout.h"
#include "opt/gradient_corpus.h"
#include "opt/inline.h"
#include "opt/licm.h"
#include "opt/opt_test_util.h"
#include "opt/sink.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::Value;
using cotangent::adtest::f64_matrix;
using cotangent::adtest::f64_vector;
using opt_test::expect_same_values;
using opt_test::printed;
using opt_test::run;
using opt_test::run_pass;

// Compiles `src`, builds derivatives, inlines every call in `fn`.
ir::Program inlined(const std::string& src, const std::string& fn) {
  ir::Program p = opt_test::compile(src);
  EXPECT_FALSE(ad::build_derivatives(p).has_value());
  return run_pass(p, fn, opt::inline_functions, opt::no_inlinable_calls);
}

ir::Program fused(const ir::Program& p, const std::string& fn) {
  return run_pass(p, fn, opt::fuse_producers, opt::fuse_postcondition);
}

using opt_test::count;

Value vec(int n, double scale = 1.0) {
  std::vector<double> xs;
  for (int k = 0; k < n; ++k) xs.push_back(scale * (0.5 + k) - 0.3 * k * k);
  return f64_vector(xs);
}

TEST(OptFuse, single_use_producer_fuses_into_a_reduction) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], y: f64[n]) -> f64 {
  let X = for i. x[i] * 2.0
  sum i. X[i] * y[i]
})");
  auto q = fused(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(count(text, "for "), 0) << text;  // the generator is gone
  EXPECT_EQ(count(text, "X"), 0) << text;     // every element is computed where it is summed
  for (int n : {1, 3, 7}) expect_same_values(p, q, "f", {vec(n), vec(n, -2.0)});
}

TEST(OptFuse, cost_free_producer_fuses_into_every_read) {
  // Three traces of diag(x): diag is cost-free, so it is fused into each of the three reads.
  auto p = inlined(R"(
def traces(x: f64[n]) -> f64 {
  let A = diag(x)
  trace(A) + trace(A) + trace(A)
})",
                   "traces");
  auto q = fused(p, "traces");
  const std::string text = printed(q, "traces");
  EXPECT_EQ(count(text, "for "), 0) << text;
  for (int n : {1, 4, 9}) expect_same_values(p, q, "traces", {vec(n)});
}

TEST(OptFuse, producer_with_work_read_twice_stays) {
  auto p = opt_test::compile(R"(
def f(x: f64[n]) -> f64 {
  let X = for i. x[i] * 2.0
  (sum i. X[i]) + X[0]
})");
  auto q = fused(p, "f");
  EXPECT_EQ(printed(q, "f"), printed(p, "f"));
}

TEST(OptFuse, non_injective_read_stays) {
  // Each X[i] would be recomputed for every j.
  auto p = opt_test::compile(R"(
def f(x: f64[n], y: f64[m]) -> f64[n, m] {
  let X = for i. exp(x[i])
  for i, j. X[i] * y[j]
})");
  auto q = fused(p, "f");
  EXPECT_EQ(printed(q, "f"), printed(p, "f"));
}

TEST(OptFuse, read_inside_a_loop_body_stays) {
  auto p = opt_test::compile(R"(
def f(x: f64[n], k: i64) -> f64 {
  let X = for i. exp(x[i])
  loop s = 0.0 for t < k { s + X[0] }
})");
  auto q = fused(p, "f");
  EXPECT_EQ(printed(q, "f"), printed(p, "f"));
  expect_same_values(p, q, "f", {vec(3), Value::i64(4)});
}

TEST(OptFuse, read_that_may_be_out_of_range_stays) {
  // X[i + 1] fails at i = n - 1; fusing would lose the error.
  auto p = opt_test::compile(R"(
def f(x: f64[n]) -> f64[n] {
  let X = for i. [i == 0] * x[i]
  for i: n. X[i + 1]
}
def g(x: f64[n]) -> f64[n] {
  let X = for i. [i == 0] * x[i]
  for i: n. [i + 1 < n] * X[i + 1]
})");
  auto q = fused(p, "f");
  EXPECT_EQ(printed(q, "f"), printed(p, "f"));
  EXPECT_FALSE(run(q, "f", {vec(3)}).ok);
  // Under a guard that keeps it in range, it fuses.
  auto r = fused(p, "g");
  EXPECT_EQ(count(printed(r, "g"), "X["), 0) << printed(r, "g");
  for (int n : {1, 2, 5}) expect_same_values(p, r, "g", {vec(n)});
}

TEST(OptFuse, slice_read_becomes_a_generator) {
  auto p = opt_test::compile(R"(
def f(x: f64[3], y: f64[m]) -> f64 {
  let A = for i, j. x[i] * y[j]
  let r = A[1]
  sum j. r[j]
})");
  auto q = fused(p, "f");
  const std::string text = printed(q, "f");
  EXPECT_EQ(count(text, "A["), 0) << text;
  EXPECT_EQ(count(text, "r["), 0) << text;  // the slice fused too, into the sum
  for (int m : {1, 2, 5}) expect_same_values(p, q, "f", {vec(3), vec(m, 0.5)});
  // The product is computed for one row only: m multiplications, not 3m.
  EXPECT_EQ(run(q, "f", {vec(3), vec(6)}).ops, 6 + 5);
  EXPECT_EQ(run(p, "f", {vec(3), vec(6)}).ops, 18 + 5);
}

TEST(OptFuse, shifted_read_keeps_index_arithmetic) {
  // The producer uses its index variable as a number: the fused body computes i + 1.
  auto p = opt_test::compile(R"(
def f(x: f64[n]) -> f64 {
  let X = for i. f64(i) * x[i]
  sum i: n - 1. X[i + 1]
})");
  auto q = fused(p, "f");
  EXPECT_EQ(count(printed(q, "f"), "for "), 0) << printed(q, "f");
  for (int n : {1, 2, 6}) expect_same_values(p, q, "f", {vec(n)});
}

TEST(OptFuse, chains_fuse_to_the_end) {
  auto p = opt_test::compile(R"(
def f(x: f64[n]) -> f64 {
  let A = for i. exp(x[i])
  let B = for i. A[i] * 3.0
  let C = for i. B[i] + x[i]
  sum i. C[i]
})");
  auto q = fused(p, "f");
  EXPECT_EQ(count(printed(q, "f"), "for "), 0) << printed(q, "f");
  for (int n : {1, 4}) expect_same_values(p, q, "f", {vec(n)});
}

TEST(OptFuse, postcondition_reports_a_fusible_read) {
  auto p = opt_test::compile(R"(
def f(x: f64[3]) -> f64 {
  let X = for i. [i == 0] * x[i]
  X[2]
}
def g(x: f64[n]) -> f64 {
  let X = for i. [i == 0] * x[i]
  X[0]
})");
  // X[0] is out of range when n = 0: the read must still fail, so it is not fusible.
  EXPECT_FALSE(opt::fuse_postcondition(p, *p.find("g")).has_value());
  auto broken = opt::fuse_postcondition(p, *p.find("f"));
  ASSERT_TRUE(broken.has_value());
  EXPECT_NE(broken->find("can be fused"), std::string::npos) << *broken;
}

// The derivative of three traces of diag(x): dense n x n cotangents summed elementwise. The
// additions of strong zeros are free, stored or not (docs/language.md §5.6), so the count is linear
// in n before fusion and after it.
TEST(OptFuse, traces_of_diag_gradient_becomes_linear) {
  const std::string src = R"(
def traces(x: f64[n]) -> f64 {
  let A = diag(x)
  trace(A) + trace(A) + trace(A)
}
def g(x: f64[n], ct: f64) -> f64[n] { vjp(traces, x)(x, ct) }
)";
  auto p = inlined(src, "g");
  auto q = fused(p, "g");
  for (int n : {1, 3, 8}) expect_same_values(p, q, "g", {vec(n), Value::f64(1.5)});
  const int64_t before8 = run(p, "g", {vec(8), Value::f64(1.0)}).ops;
  const int64_t before16 = run(p, "g", {vec(16), Value::f64(1.0)}).ops;
  const int64_t after8 = run(q, "g", {vec(8), Value::f64(1.0)}).ops;
  const int64_t after16 = run(q, "g", {vec(16), Value::f64(1.0)}).ops;
  EXPECT_LE(before16, 2 * before8 + 8) << printed(p, "g");
  EXPECT_LE(after8, before8) << printed(q, "g");
  EXPECT_LE(after16, 2 * after8 + 8) << printed(q, "g");
  EXPECT_LE(after16, 8 * 16) << printed(q, "g");
}

// Every function of the test programs and examples, and the value_and_grad of every scalar
// one, inlined and then run through each of the four passes alone and all of them in a row: the
// IR verifies, the postconditions hold, values agree and op counts do not grow on random inputs.
opt::PassResult all_four(const ir::Program& p, const ir::Function& f) {
  opt::PassResult r{f, false};
  for (opt::PassFn pass : {opt::fuse_producers, opt::push_out_generators, opt::sink_into_guards,
                           opt::hoist_invariants, opt::fuse_producers, opt::sink_into_guards}) {
    opt::PassResult next = pass(p, r.function);
    r = {std::move(next.function), r.changed || next.changed};
  }
  return r;
}

std::optional<ir::Program> load(const std::string& text) {
  auto sm = std::make_shared<SourceManager>();
  const uint32_t prelude_id = sm->add("<prelude>", std::string(kPreludeText));
  const uint32_t user_id = sm->add("corpus.cot", text);
  DiagnosticSink diags;
  ast::Module prelude = parse_module(*sm, prelude_id, diags);
  ast::Module user = parse_module(*sm, user_id, diags);
  if (diags.has_errors()) return std::nullopt;
  return check_program(sm, &prelude, user, diags);
}

TEST(OptFuse, corpus_and_gradients_keep_values_under_the_four_passes) {
  struct Step {
    const char* name;
    opt::PassFn run;
    opt::PostconditionFn post;
  };
  const std::vector<Step> steps = {
      {"fuse", opt::fuse_producers, opt::fuse_postcondition},
      {"gen-pushout", opt::push_out_generators, opt::gen_pushout_postcondition},
      {"sink", opt::sink_into_guards, opt::sink_postcondition},
      {"licm", opt::hoist_invariants, opt::licm_postcondition},
      {"all", all_four, nullptr},
  };
  int compared = 0;
  for (const auto& file : cotangent::corpus::corpus_files(cotangent::e2e::source_dir())) {
    auto loaded = load(file.text);
    if (!loaded) continue;
    ir::Program p = std::move(*loaded);
    std::vector<std::string> fns;
    for (const auto& c : cotangent::corpus::candidates(file.text)) {
      std::vector<int> active;
      for (size_t k = 0; k < c.params.size(); ++k) {
        if (c.params[k].is_real_valued()) active.push_back(static_cast<int>(k));
      }
      const std::string name =
          ad::derived_function_name(p, ast::DerivKind::ValueAndGrad, c.fn, active);
      if (p.find(name) == nullptr) {
        ir::Function shell;
        shell.name = name;
        shell.derivation = ir::Derivation{ast::DerivKind::ValueAndGrad, c.fn, active};
        p.functions.push_back(std::move(shell));
      }
    }
    if (ad::build_derivatives(p)) continue;  // a limitation of AD, tested elsewhere
    for (const auto& f : p.functions) {
      if (!f.from_prelude && !f.body.results.empty()) fns.push_back(f.name);
    }
    for (const auto& fn : fns) {
      ir::Program base = run_pass(p, fn, opt::inline_functions, opt::no_inlinable_calls);
      const ir::Function* f = base.find(fn);
      for (int64_t size : {1, 4}) {
        std::mt19937_64 rng(static_cast<uint64_t>(size) * 7 + fns.size());
        std::vector<Value> args;
        bool ok = true;
        for (size_t k = 0; k < f->params.size() && ok; ++k) {
          auto v = cotangent::corpus::random_value(f->param_type(k), size, rng);
          ok = v.has_value();
          if (ok) args.push_back(std::move(*v));
        }
        if (!ok) continue;
        // Skip inputs where the reference fails or runs long (a while loop on random data).
        interp::Options limits;
        limits.max_while_iterations = 10000;
        limits.max_tensor_elements = int64_t{1} << 16;
        if (std::holds_alternative<Diagnostic>(interp::evaluate(base, fn, args, nullptr, limits))) {
          continue;
        }
        for (const auto& step : steps) {
          SCOPED_TRACE(file.name + ":" + fn + " after " + step.name + " at size " +
                       std::to_string(size));
          ir::Program q = run_pass(base, fn, step.run, step.post);
          expect_same_values(base, q, fn, args);

          ++compared;
        }
      }
    }
  }
  EXPECT_GE(compared, 1000);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
