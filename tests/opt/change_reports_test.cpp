// Every pass reports truthfully whether it changed a function (opt/pass.h, PassResult): the
// pipeline in checking mode (PipelineOptions::check_change_reports) over every function of the
// GradBench examples and the native benchmarks' kernels, primal and gradient, as `cotangent
// print FILE FN [--grad]` builds them (docs/design.md §8). A pass that reports no change but
// returns a function that prints differently fails the pipeline with its name.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ad/derive.h"
#include "check/checker.h"
#include "e2e/e2e_cases.h"
#include "opt/gradient_corpus.h"
#include "opt/pipeline.h"
#include "syntax/parser.h"
#include "syntax/prelude_text.h"

namespace cot::opt {
namespace COTANGENT_TEST_UNIT {

std::optional<ir::Program> load(const std::string& path, const std::string& text) {
  auto sm = std::make_shared<SourceManager>();
  const uint32_t prelude_id = sm->add("<prelude>", std::string(kPreludeText));
  const uint32_t user_id = sm->add(path, text);
  DiagnosticSink diags;
  ast::Module prelude = parse_module(*sm, prelude_id, diags);
  ast::Module user = parse_module(*sm, user_id, diags);
  if (diags.has_errors()) return std::nullopt;
  return check_program(sm, &prelude, user, diags);
}

// The benchmark programs: examples/gradbench/*.cot but particle.cot (its nested gradients take
// a minute to optimize), and bench/native/kernels.cot.
std::vector<std::string> benchmark_programs() {
  namespace fs = std::filesystem;
  const std::string root = cotangent::e2e::source_dir();
  std::vector<std::string> paths;
  for (const auto& e : fs::directory_iterator(root + "/examples/gradbench")) {
    if (e.path().extension() == ".cot" && e.path().stem() != "particle") {
      paths.push_back(e.path().string());
    }
  }
  std::sort(paths.begin(), paths.end());
  paths.push_back(root + "/bench/native/kernels.cot");
  return paths;
}

// Optimizes the user functions `select` accepts in checking mode; every failure is reported.
void optimize_checked(ir::Program& p, const std::string& path,
                      const std::function<bool(const ir::Function&)>& select) {
  PipelineOptions o;
  o.check_change_reports = true;
  OptimizedProgram r = optimize_each(
      std::move(p), o, [&](const ir::Function& f) { return !f.from_prelude && select(f); });
  for (const auto& e : r.failed) {
    ADD_FAILURE() << path << ": pass " << e.pass << " on " << e.function << ": " << e.message;
  }
  p = std::move(r.program);
}

TEST(OptChangeReports, no_pass_misreports_on_the_benchmarks_primal_and_gradient) {
  size_t primals = 0, gradients = 0;
  for (const auto& path : benchmark_programs()) {
    SCOPED_TRACE(path);
    const std::string text = cotangent::e2e::read_text(path);
    auto loaded = load(path, text);
    ASSERT_TRUE(loaded.has_value()) << path << " does not check";
    ir::Program p = std::move(*loaded);
    // grad(f, every real parameter), as `print --grad` names it, for each function that
    // returns a real scalar.
    for (const auto& c : cotangent::corpus::candidates(text)) {
      std::vector<int> active;
      for (size_t k = 0; k < c.params.size(); ++k) {
        if (c.params[k].is_real_valued()) active.push_back(static_cast<int>(k));
      }
      const std::string name = ad::derived_function_name(p, ast::DerivKind::Grad, c.fn, active);
      if (p.find(name) != nullptr) continue;
      ir::Function shell;
      shell.name = name;
      shell.derivation = ir::Derivation{ast::DerivKind::Grad, c.fn, active};
      p.functions.push_back(std::move(shell));
    }
    // As a module loads: the primal first, then the derivatives built from it.
    optimize_checked(p, path, [](const ir::Function& f) { return !f.derivation; });
    for (const auto& f : p.functions) primals += !f.from_prelude && !f.derivation ? 1 : 0;
    const auto failed = ad::build_each_derivative(p);
    for (const auto& [fn, why] : failed) ADD_FAILURE() << path << ": " << fn << ": " << why.message;
    // Then every user function again, as Module::load does (a primal that calls a derivative
    // inlines it now).
    optimize_checked(p, path, [](const ir::Function&) { return true; });
    for (const auto& f : p.functions) gradients += f.derivation && !f.body.results.empty() ? 1 : 0;
  }
  // Every program has functions and most have gradients.
  EXPECT_GE(primals, 40u);
  EXPECT_GE(gradients, 20u);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::opt
