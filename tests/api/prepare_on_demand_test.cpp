// A module prepares a function (optimizes it, builds and optimizes the derived functions it
// needs) the first time a caller asks for it, with what it needs, and only once (design.md §1,
// "Preparing on demand"). The optimizer's dump callback says which functions were optimized.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {
namespace {

const char* kSource = R"(
def square(x: f64) -> f64 { x * x }
def model(x: f64) -> f64 { square(x) + sin(x) }
def model_grad(x: f64) -> f64 { grad(model)(x) }
def other(x: f64) -> f64 { exp(x) * 3.0 }
def other_grad(x: f64) -> f64 { grad(other)(x) }
)";

// How many times each function went through the optimizer's first pass.
struct Optimized {
  std::mutex mutex;
  std::map<std::string, int> runs;

  LoadOptions options() {
    LoadOptions load;
    load.opt_level = 2;
    load.dump_after = "inline";  // the pipeline's first pass, once per function and round
    load.dump = [this](const std::string&, const std::string& fn, const std::string&) {
      std::lock_guard<std::mutex> lock(mutex);
      ++runs[fn];
    };
    return load;
  }
  std::set<std::string> names() {
    std::lock_guard<std::mutex> lock(mutex);
    std::set<std::string> out;
    for (const auto& [fn, n] : runs) out.insert(fn);
    return out;
  }
};

TEST(PrepareOnDemand, loading_checks_everything_and_optimizes_nothing) {
  Optimized seen;
  auto m = Module::from_string(kSource, "models.cot", seen.options());
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_TRUE(seen.names().empty());
  EXPECT_EQ(m.value().function_names().size(), 5u);
  // An error anywhere in the file is still an error at load.
  auto bad = Module::from_string(std::string(kSource) + "def broken(x: f64) -> f64 { y }\n",
                                 "models.cot", seen.options());
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("models.cot:7:"), std::string::npos) << bad.message();
}

TEST(PrepareOnDemand, a_function_is_prepared_with_what_it_needs_and_nothing_else) {
  Optimized seen;
  auto m = Module::from_string(kSource, "models.cot", seen.options());
  ASSERT_TRUE(m.ok()) << m.message();
  auto g = m.value().evaluate("model_grad", {Value::f64(0.5)});
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_NEAR(g.value().as_f64(), 2 * 0.5 + std::cos(0.5), 1e-15);
  const std::set<std::string> first = seen.names();
  EXPECT_TRUE(first.count("model_grad") && first.count("model") && first.count("square"));
  EXPECT_TRUE(first.count("grad(model, x)"));
  EXPECT_FALSE(first.count("other") || first.count("other_grad") || first.count("grad(other, x)"));

  // Asking again prepares nothing more; asking for another function prepares it alone.
  const std::map<std::string, int> runs = seen.runs;
  auto again = m.value().evaluate("model_grad", {Value::f64(1.5)});
  ASSERT_TRUE(again.ok()) << again.message();
  EXPECT_EQ(seen.runs, runs);
  auto o = m.value().evaluate("other_grad", {Value::f64(0.0)});
  ASSERT_TRUE(o.ok()) << o.message();
  EXPECT_EQ(o.value().as_f64(), 3.0);
  for (const auto& [fn, n] : runs) EXPECT_EQ(seen.runs.at(fn), n) << fn;
  EXPECT_TRUE(seen.names().count("grad(other, x)"));
}

TEST(PrepareOnDemand, the_code_is_the_code_of_a_module_prepared_at_once) {
  // broken_functions prepares every function; a function's print is the same either way.
  auto all = Module::from_string(kSource, "models.cot");
  ASSERT_TRUE(all.ok()) << all.message();
  EXPECT_TRUE(all.value().broken_functions().empty());
  auto one = Module::from_string(kSource, "models.cot");
  ASSERT_TRUE(one.ok()) << one.message();
  for (const char* fn : {"model_grad", "other_grad", "model"}) {
    auto a = all.value().print(fn);
    auto b = one.value().print(fn);
    ASSERT_TRUE(a.ok() && b.ok()) << fn;
    EXPECT_EQ(a.value(), b.value()) << fn;
  }
}

TEST(PrepareOnDemand, threads_asking_at_once_prepare_each_function_once) {
  Optimized seen;
  auto m = Module::from_string(kSource, "models.cot", seen.options());
  ASSERT_TRUE(m.ok()) << m.message();
  std::vector<std::thread> threads;
  std::vector<double> results(8, 0.0);
  for (size_t k = 0; k < results.size(); ++k) {
    threads.emplace_back([&, k] {
      const char* fn = k % 2 == 0 ? "model_grad" : "other_grad";
      auto r = m.value().evaluate(fn, {Value::f64(0.0)});
      results[k] = r.ok() ? r.value().as_f64() : -1.0;
    });
  }
  for (auto& t : threads) t.join();
  for (size_t k = 0; k < results.size(); ++k) EXPECT_EQ(results[k], k % 2 == 0 ? 1.0 : 3.0);
  // Each function went through the pipeline as often as it does when prepared by one caller.
  Optimized alone;
  auto single = Module::from_string(kSource, "models.cot", alone.options());
  ASSERT_TRUE(single.ok());
  ASSERT_TRUE(single.value().evaluate("model_grad", {Value::f64(0.0)}).ok());
  ASSERT_TRUE(single.value().evaluate("other_grad", {Value::f64(0.0)}).ok());
  EXPECT_EQ(seen.runs, alone.runs);
}

}  // namespace
}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
