// GradBench's tool protocol (src/gradbench/tool.h) through the Tool class: the hello eval's
// whole message sequence and the answers to bad messages; the Runs loop (runs.h).
#include "gradbench/tool.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gradbench/runs.h"

namespace cot::gradbench {
namespace COTANGENT_TEST_UNIT {

using nlohmann::json;

Tool make_tool() {
  ToolOptions o;
  o.dir = std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench";
  return Tool(o);
}

TEST(GradbenchTool, HelloAnswersTheEvalsSequence) {
  Tool tool = make_tool();
  EXPECT_EQ(tool.respond({{"id", 0}, {"kind", "start"}, {"eval", "hello"}}),
            (json{{"id", 0}, {"tool", "cotangent"}}));
  EXPECT_EQ(tool.respond({{"id", 1}, {"kind", "define"}, {"module", "hello"}}),
            (json{{"id", 1}, {"success", true}}));
  // GradBench's hello: x = 1, then four times y = square(x), x = double(y).
  double x = 1.0;
  int id = 2;
  for (int round = 0; round < 4; ++round) {
    json sq = tool.respond({{"id", id},
                            {"kind", "evaluate"},
                            {"module", "hello"},
                            {"function", "square"},
                            {"input", x}});
    ASSERT_TRUE(sq.at("success").get<bool>()) << sq.dump();
    EXPECT_EQ(sq.at("id"), id);
    const double y = sq.at("output").get<double>();
    EXPECT_EQ(y, x * x);
    // A prepare timing (conversion, compilation, the result's memory), then one per run.
    ASSERT_EQ(sq.at("timings").size(), 2u);
    EXPECT_EQ(sq.at("timings")[0].at("name"), "prepare");
    EXPECT_EQ(sq.at("timings")[1].at("name"), "evaluate");
    EXPECT_GT(sq.at("timings")[1].at("nanoseconds").get<int64_t>(), 0);
    EXPECT_EQ(tool.respond({{"id", id + 1}, {"kind", "analysis"}, {"of", id}, {"valid", true}}),
              (json{{"id", id + 1}}));
    json db = tool.respond({{"id", id + 2},
                            {"kind", "evaluate"},
                            {"module", "hello"},
                            {"function", "double"},
                            {"input", y}});
    ASSERT_TRUE(db.at("success").get<bool>()) << db.dump();
    x = db.at("output").get<double>();
    EXPECT_EQ(x, 2 * y);
    id += 3;
  }
  EXPECT_EQ(x, 32768.0);  // 1, 2, 8, 128, 32768
}

TEST(GradbenchTool, AModuleDefinedAgainIsCompiledAgain) {
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("cot_gradbench_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  auto write = [&](const char* square) {
    std::ofstream(dir / "hello.cot") << "def square(x: f64) -> f64 { " << square
                                     << " }\ndef double(x: f64) -> f64 { 2.0 * x }\n";
  };
  Tool tool(ToolOptions{dir.string(), 1});
  const json square = {
      {"id", 1}, {"kind", "evaluate"}, {"module", "hello"}, {"function", "square"}, {"input", 3}};
  write("x * x");
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "hello"}});
  EXPECT_EQ(tool.respond(square).at("output"), 9.0);
  write("x * x + 1.0");
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "hello"}});
  EXPECT_EQ(tool.respond(square).at("output"), 10.0);
  std::filesystem::remove_all(dir);
}

// Runs after the first write into buffers the tool keeps: the output must still be the
// function's value (a scalar, and a tensor) with one timing per run.
TEST(GradbenchTool, RepeatedRunsGiveTheSameOutput) {
  Tool tool = make_tool();
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "hello"}});
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "lse"}});
  auto evaluate = [&](const char* module, const char* function, const json& input) {
    return tool.respond({{"id", 1},
                         {"kind", "evaluate"},
                         {"module", module},
                         {"function", function},
                         {"input", input}});
  };
  json once = evaluate("hello", "square", 1.5);
  EXPECT_EQ(once.at("output"), 2.25);
  // hello's input is a bare number, without Runs fields: always one run.
  const json x = {0.5, -1.0, 2.0};
  once = evaluate("lse", "gradient", {{"x", x}, {"min_runs", 1}});
  const json thrice = evaluate("lse", "gradient", {{"x", x}, {"min_runs", 3}});
  ASSERT_TRUE(thrice.at("success").get<bool>()) << thrice.dump();
  EXPECT_EQ(thrice.at("timings").size(), 4u);  // prepare and 3 runs
  EXPECT_EQ(thrice.at("output"), once.at("output"));
  // No run asked for (GradBench's harness asserts min_runs > 0): still one, for the output.
  const json none = evaluate("lse", "gradient", {{"x", x}, {"min_runs", 0}, {"min_seconds", 0}});
  ASSERT_TRUE(none.at("success").get<bool>()) << none.dump();
  EXPECT_EQ(none.at("timings").size(), 2u);
  EXPECT_EQ(none.at("output"), once.at("output"));
  const json primal = evaluate("lse", "primal", {{"x", x}, {"min_runs", 4}});
  EXPECT_EQ(primal.at("timings").size(), 5u);
  EXPECT_NEAR(primal.at("output").get<double>(),
              std::log(std::exp(0.5) + std::exp(-1.0) + std::exp(2.0)), 1e-15);
}

TEST(GradbenchRuns, AtLeastMinRunsAndMinSeconds) {
  int calls = 0;
  auto count = [&] {
    ++calls;
    return true;
  };
  EXPECT_EQ(timed_runs(5, 0.0, count).size(), 5u);
  EXPECT_EQ(calls, 5);
  // 2 ms per call and 20 ms in all: about 10 calls, at least as many as min_runs says.
  auto nap = [] {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    return true;
  };
  std::vector<int64_t> ns = timed_runs(1, 0.02, nap);
  int64_t total = 0;
  for (int64_t t : ns) total += t;
  EXPECT_GE(total, 20'000'000);
  EXPECT_GE(ns.size(), 2u);
  EXPECT_LE(ns.size(), 11u);
  EXPECT_EQ(timed_runs(3, 10.0, [] { return false; }).size(), 1u);  // a failure stops
}

TEST(GradbenchTool, BadMessagesGetFailuresNotExceptions) {
  Tool tool = make_tool();
  json r = tool.respond({{"id", 1}, {"kind", "define"}, {"module", "no_such_eval"}});
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find("no implementation of no_such_eval"),
            std::string::npos);
  r = tool.respond(
      {{"id", 2}, {"kind", "evaluate"}, {"module", "hello"}, {"function", "square"}, {"input", 1}});
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find("was not defined"), std::string::npos);
  tool.respond({{"id", 3}, {"kind", "define"}, {"module", "hello"}});
  r = tool.respond(
      {{"id", 4}, {"kind", "evaluate"}, {"module", "hello"}, {"function", "cube"}, {"input", 1}});
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find("no function cube"), std::string::npos);
  r = tool.respond({{"id", 5},
                    {"kind", "evaluate"},
                    {"module", "hello"},
                    {"function", "square"},
                    {"input", "three"}});
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find("expected a number"), std::string::npos);
  r = tool.respond({{"id", 6}, {"kind", 7}});  // a kind that is not a string
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_EQ(r.at("id"), 6);
}

// The red team's ba with a count of 2^31 - 1 ended the process ("out of memory"): the count is
// valid GradBench input, but the replicated tensors exceed the runtime's tensor limit, so the
// message is refused before anything is allocated, and the next message is served.
TEST(GradbenchTool, ACountOverTheTensorLimitIsRefusedAndTheNextMessageServed) {
  Tool tool = make_tool();
  ASSERT_TRUE(tool.respond({{"id", 0}, {"kind", "define"}, {"module", "ba"}}).at("success"));
  auto ba = [](int64_t n, int64_t m, int64_t p) {
    return json{{"n", n},
                {"m", m},
                {"p", p},
                {"cam", {-0.1, 0.2, 0.3, 1.0, 2.0, 3.0, 100.0, 0.5, 0.5, 1e-3, 1e-5}},
                {"x", {0.5, -0.5, 10.0}},
                {"w", 0.9},
                {"feat", {120.0, 80.0}},
                {"min_runs", 1},
                {"min_seconds", 0}};
  };
  const int64_t big = 2147483647;
  for (const auto& [n, m, p, field] : {std::tuple{big, int64_t{1}, int64_t{1}, "input.n"},
                                       {1, big, 1, "input.m"},
                                       {1, 1, big, "input.p"}}) {
    for (const char* function : {"objective", "jacobian"}) {
      const json r = tool.respond({{"id", 1},
                                   {"kind", "evaluate"},
                                   {"module", "ba"},
                                   {"function", function},
                                   {"input", ba(n, m, p)}});
      EXPECT_EQ(r.at("id"), 1);
      ASSERT_FALSE(r.at("success").get<bool>()) << r.dump();
      const std::string error = r.at("error");
      EXPECT_NE(error.find(std::string(field) + ": a tensor of shape [2147483647, "),
                std::string::npos)
          << error;
      EXPECT_NE(error.find("more than the limit of 268435456"), std::string::npos) << error;
    }
  }
  const json ok = tool.respond({{"id", 2},
                                {"kind", "evaluate"},
                                {"module", "ba"},
                                {"function", "objective"},
                                {"input", ba(2, 3, 5)}});
  ASSERT_TRUE(ok.at("success").get<bool>()) << ok.dump();
  EXPECT_EQ(ok.at("id"), 2);
  EXPECT_EQ(ok.at("output").at("w_err").at("repeated"), 5);
}

// JSON has no number for NaN or infinity (nlohmann writes null, which GradBench's validator
// reads as a value of the wrong type) and the protocol no other representation: an output
// that is not finite is a failure that names its first place, never `null` with success.
TEST(GradbenchTool, NonFiniteOutputsAreFailuresNamingThePlace) {
  Tool tool = make_tool();
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "hello"}});
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "kmeans"}});
  auto evaluate = [&](const char* module, const char* function, const json& input) {
    return tool.respond({{"id", 7},
                         {"kind", "evaluate"},
                         {"module", module},
                         {"function", function},
                         {"input", input}});
  };
  json r = evaluate("hello", "square", 1e200);  // 1e400 overflows
  ASSERT_FALSE(r.at("success").get<bool>()) << r.dump();
  EXPECT_EQ(r.at("id"), 7);
  EXPECT_FALSE(r.contains("output"));
  EXPECT_NE(r.at("error").get<std::string>().find("output is inf: JSON has no number for NaN"),
            std::string::npos)
      << r.dump();
  EXPECT_EQ(r.at("timings").size(), 2u);  // the runs were made: prepare and one
  r = evaluate("hello", "double", -1.5e308);
  ASSERT_FALSE(r.at("success").get<bool>()) << r.dump();
  EXPECT_NE(r.at("error").get<std::string>().find("output is -inf"), std::string::npos);
  // The second centroid is nearest to no point: its gradient and Hessian diagonal are 0, and
  // the Newton direction 0 / 0.
  const json points = {{0.0, 0.0}, {1.0, 0.0}};
  const json centroids = {{0.5, 0.0}, {100.0, 100.0}};
  r = evaluate("kmeans", "dir", {{"points", points}, {"centroids", centroids}});
  ASSERT_FALSE(r.at("success").get<bool>()) << r.dump();
  EXPECT_NE(
      r.at("error").get<std::string>().find("output[1][0] is nan (and 1 more non-finite number)"),
      std::string::npos)
      << r.dump();
  // The same function with finite values answers.
  r = evaluate("kmeans", "dir", {{"points", points}, {"centroids", {{0.5, 0.0}, {1.0, 0.0}}}});
  ASSERT_TRUE(r.at("success").get<bool>()) << r.dump();
  EXPECT_EQ(r.at("output").size(), 2u);
  r = evaluate("hello", "square", 1e100);
  ASSERT_TRUE(r.at("success").get<bool>()) << r.dump();
  EXPECT_EQ(r.at("output"), 1e200);
}

// The Runs fields are read as the other fields are (a wrong type, a real out of the i64 range:
// an error, not undefined behaviour), and bounded, so that a message cannot keep the tool busy
// for ever.
TEST(GradbenchTool, RunsFieldsAreCheckedAndBounded) {
  Tool tool = make_tool();
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "lse"}});
  auto error_of = [&](json runs) {
    runs["x"] = {0.5, 1.5};
    const json r = tool.respond({{"id", 3},
                                 {"kind", "evaluate"},
                                 {"module", "lse"},
                                 {"function", "primal"},
                                 {"input", runs}});
    EXPECT_FALSE(r.at("success").get<bool>()) << r.dump();
    return r.value("error", std::string());
  };
  EXPECT_NE(error_of({{"min_runs", 1e300}}).find("input.min_runs: expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of({{"min_runs", "three"}}).find("input.min_runs: expected an integer"),
            std::string::npos);
  EXPECT_NE(error_of({{"min_runs", 10'000'001}}).find("expected at most 10000000 runs"),
            std::string::npos);
  EXPECT_NE(error_of({{"min_seconds", 1e9}}).find("input.min_seconds: expected at most 3600"),
            std::string::npos);
  EXPECT_NE(error_of({{"min_seconds", "1"}}).find("input.min_seconds: expected a number"),
            std::string::npos);
  const json r = tool.respond({{"id", 4},
                               {"kind", "evaluate"},
                               {"module", "lse"},
                               {"function", "primal"},
                               {"input", {{"x", {0.5, 1.5}}, {"min_runs", 2.0}}}});
  ASSERT_TRUE(r.at("success").get<bool>()) << r.dump();
  EXPECT_EQ(r.at("timings").size(), 3u);  // an integral real counts, as Python's json writes it
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench
