// The pipeline itself: levels, fixed point, --dump-after, and that a pass which breaks the IR
// or its own postcondition is reported with its name instead of producing a wrong program.
#include "opt/pipeline.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "opt/inline.h"
#include "opt/opt_test_util.h"

namespace cot::opt {
namespace COTANGENT_TEST_UNIT {

constexpr const char* kSource = R"(
def f(x: f64[n]) -> f64 {
  let A = diag(x)
  trace(A) + trace(A)
}
)";

// A pass that breaks the IR: it yields a variable nobody binds.
PassResult break_ir(const ir::Program&, const ir::Function& f) {
  ir::Function g = f;
  g.body.results = {ir::Atom::of(static_cast<ir::VarId>(g.vars.size() + 100))};
  return {std::move(g), true};
}
// A pass whose postcondition never holds.
PassResult identity(const ir::Program&, const ir::Function& f) {
  return {f, false};
}
std::optional<std::string> never(const ir::Program&, const ir::Function&) {
  return std::string("never holds");
}
// A pass that lies: it inlines (kSource calls diag and trace) but reports no change.
PassResult inline_and_deny(const ir::Program& p, const ir::Function& f) {
  return {inline_functions(p, f).function, false};
}
// A pass that reports a change it did not make: allowed (conservative), it costs rounds.
PassResult claim_a_change(const ir::Program&, const ir::Function& f) {
  return {f, true};
}

// How many times the pass named `name` ran (its dumps) when `passes` optimize f.
int runs_of(const ir::Program& p, const std::vector<Pass>& passes, std::string_view name,
            bool check = false) {
  int runs = 0;
  PipelineOptions o;
  o.check_change_reports = check;
  o.dump_after = std::string(name);
  o.dump = [&](std::string_view, const ir::Program&, const ir::Function&) { ++runs; };
  auto r = optimize_function(p, *p.find("f"), o, passes);
  EXPECT_TRUE(std::holds_alternative<ir::Function>(r)) << std::get<PipelineError>(r).message;
  return runs;
}

TEST(OptPipeline, level_zero_changes_nothing) {
  ir::Program p = opt_test::compile(kSource);
  PipelineOptions o;
  o.level = 0;
  auto r = optimize_function(p, *p.find("f"), o);
  ASSERT_TRUE(std::holds_alternative<ir::Function>(r));
  EXPECT_EQ(ir::print_function(p, std::get<ir::Function>(r)), opt_test::printed(p, "f"));
}

TEST(OptPipeline, level_two_inlines_and_keeps_values) {
  ir::Program p = opt_test::compile(kSource);
  auto r = optimize_function(p, *p.find("f"), PipelineOptions{});
  ASSERT_TRUE(std::holds_alternative<ir::Function>(r)) << std::get<PipelineError>(r).message;
  ir::Program q = p;
  *q.find("f") = std::get<ir::Function>(r);
  const std::string text = opt_test::printed(q, "f");
  EXPECT_EQ(text.find("diag("), std::string::npos) << text;
  EXPECT_EQ(text.find("trace("), std::string::npos) << text;
  for (int64_t n : {1, 4, 9}) {
    cotangent::Value x = cotangent::Value::zeros(cotangent::DType::F64, {n});
    for (int64_t i = 0; i < n; ++i) x.f64_mut()[static_cast<size_t>(i)] = 0.5 * double(i) - 1.0;
    opt_test::expect_same_values(p, q, "f", {x});
  }
}

TEST(OptPipeline, a_pass_that_breaks_the_ir_is_named) {
  ir::Program p = opt_test::compile(kSource);
  std::vector<Pass> passes = {{"breaker", 1, break_ir, nullptr, "breaks the IR"}};
  auto r = optimize_function(p, *p.find("f"), PipelineOptions{}, passes);
  ASSERT_TRUE(std::holds_alternative<PipelineError>(r));
  const auto& e = std::get<PipelineError>(r);
  EXPECT_EQ(e.pass, "breaker");
  EXPECT_EQ(e.function, "f");
  EXPECT_NE(e.message.find("does not verify"), std::string::npos) << e.message;
}

TEST(OptPipeline, a_broken_postcondition_is_named) {
  ir::Program p = opt_test::compile(kSource);
  std::vector<Pass> passes = {{"liar", 1, identity, never, "claims a normal form"}};
  auto r = optimize_function(p, *p.find("f"), PipelineOptions{}, passes);
  ASSERT_TRUE(std::holds_alternative<PipelineError>(r));
  EXPECT_EQ(std::get<PipelineError>(r).pass, "liar");
  EXPECT_NE(std::get<PipelineError>(r).message.find("never holds"), std::string::npos);
}

TEST(OptPipeline, a_pass_that_denies_its_change_is_named_in_checking_mode) {
  ir::Program p = opt_test::compile(kSource);
  std::vector<Pass> passes = {{"denier", 1, inline_and_deny, nullptr, "inlines, says not"}};
  // Believed, the report ends the pipeline after one round (the function is still inlined).
  EXPECT_EQ(runs_of(p, passes, "denier"), 1);
  PipelineOptions o;
  o.check_change_reports = true;
  auto r = optimize_function(p, *p.find("f"), o, passes);
  ASSERT_TRUE(std::holds_alternative<PipelineError>(r));
  const auto& e = std::get<PipelineError>(r);
  EXPECT_EQ(e.pass, "denier");
  EXPECT_EQ(e.function, "f");
  EXPECT_NE(e.message.find("reported no change"), std::string::npos) << e.message;
}

TEST(OptPipeline, rounds_stop_when_no_pass_reports_a_change) {
  ir::Program p = opt_test::compile(kSource);
  PipelineOptions defaults;
  // The real passes reach their fixed point and the last round reports nothing; every report
  // holds in checking mode.
  // (inline runs first in a round, so it runs in every round: the function changed since.)
  const int rounds = runs_of(p, pipeline_passes(), "inline", /*check=*/true);
  EXPECT_GE(rounds, 2);
  EXPECT_LT(rounds, defaults.max_rounds);
  // A pass that always claims a change keeps the rounds going to the bound; checking mode
  // accepts the claim (the print is the same, but a claimed change is never an error).
  std::vector<Pass> claims = {{"claims", 1, claim_a_change, nullptr, "says it changed"}};
  EXPECT_EQ(runs_of(p, claims, "claims", /*check=*/true), defaults.max_rounds);
  // A pass that changes nothing and says so: one round.
  std::vector<Pass> honest = {{"honest", 1, identity, nullptr, "changes nothing"}};
  EXPECT_EQ(runs_of(p, honest, "honest", /*check=*/true), 1);
}

// A pass is not run again on the function it left as it was: in the second round below, the
// inliner finds nothing to inline, and the pass after it saw this function in the first round.
TEST(OptPipeline, a_pass_that_changed_nothing_does_not_see_the_same_function_again) {
  ir::Program p = opt_test::compile(kSource);
  std::vector<Pass> passes = {
      {"inline", 2, inline_functions, nullptr, "inlines"},
      {"honest", 1, identity, nullptr, "changes nothing"},
  };
  EXPECT_EQ(runs_of(p, passes, "inline"), 2);
  EXPECT_EQ(runs_of(p, passes, "honest"), 1);
  // Before a pass that changes the function in every round, each round runs both.
  std::vector<Pass> churn = {
      {"claims", 1, claim_a_change, nullptr, "says it changed"},
      {"honest", 1, identity, nullptr, "changes nothing"},
  };
  EXPECT_EQ(runs_of(p, churn, "honest"), PipelineOptions{}.max_rounds);
}

// A postcondition marked costly runs only when PipelineOptions asks for it (the library asks
// with COTANGENT_CHECK_PASSES=1); the tests' default asks.
TEST(OptPipeline, a_costly_postcondition_runs_only_when_checking) {
  ir::Program p = opt_test::compile(kSource);
  std::vector<Pass> passes = {{"liar", 1, identity, never, "claims a normal form", true}};
  PipelineOptions o;
  EXPECT_TRUE(o.check_costly_postconditions);
  EXPECT_TRUE(std::holds_alternative<PipelineError>(optimize_function(p, *p.find("f"), o, passes)));
  o.check_costly_postconditions = false;
  EXPECT_TRUE(std::holds_alternative<ir::Function>(optimize_function(p, *p.find("f"), o, passes)));
}

TEST(OptPipeline, passes_above_the_level_do_not_run) {
  ir::Program p = opt_test::compile(kSource);
  std::vector<Pass> passes = {{"breaker", 2, break_ir, nullptr, "breaks the IR"}};
  PipelineOptions o;
  o.level = 1;
  EXPECT_TRUE(std::holds_alternative<ir::Function>(optimize_function(p, *p.find("f"), o, passes)));
}

TEST(OptPipeline, dump_after_a_pass_and_after_all) {
  ir::Program p = opt_test::compile(kSource);
  std::vector<std::string> seen;
  PipelineOptions o;
  o.dump_after = "inline";
  o.dump = [&](std::string_view pass, const ir::Program&, const ir::Function& f) {
    seen.push_back(std::string(pass) + ":" + f.name);
  };
  ASSERT_TRUE(std::holds_alternative<ir::Function>(optimize_function(p, *p.find("f"), o)));
  ASSERT_FALSE(seen.empty());
  for (const auto& s : seen) EXPECT_EQ(s, "inline:f");
  seen.clear();
  o.dump_after = "all";
  ASSERT_TRUE(std::holds_alternative<ir::Function>(optimize_function(p, *p.find("f"), o)));
  // Every pass of the pipeline ran and was dumped at least once.
  for (const auto& pass : pipeline_passes()) {
    EXPECT_NE(std::find(seen.begin(), seen.end(), std::string(pass.name) + ":f"), seen.end())
        << pass.name;
  }
}

TEST(OptPipeline, every_pass_has_a_name_a_postcondition_and_a_summary) {
  for (const auto& pass : pipeline_passes()) {
    EXPECT_TRUE(is_pass_name(pass.name));
    EXPECT_NE(pass.postcondition, nullptr) << pass.name;
    EXPECT_FALSE(pass.summary.empty()) << pass.name;
  }
  EXPECT_FALSE(is_pass_name("no-such-pass"));
  EXPECT_EQ(cotangent::optimizer_pass_names().size(), pipeline_passes().size());
}

// Through the public API: the module remembers its level; COTANGENT_OPT is only the default.
TEST(OptPipeline, module_levels) {
  for (int level : {0, 1, 2}) {
    cotangent::LoadOptions o;
    o.opt_level = level;
    auto m = cotangent::Module::from_string(kSource, "f.cot", o);
    ASSERT_TRUE(m.ok()) << m.message();
    EXPECT_EQ(m.value().opt_level(), level);
    auto v = m.value().evaluate("f", {cotangent::Value::zeros(cotangent::DType::F64, {3})});
    ASSERT_TRUE(v.ok()) << v.message();
    EXPECT_EQ(v.value().as_f64(), 0.0);
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::opt
