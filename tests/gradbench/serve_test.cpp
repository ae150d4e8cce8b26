// The tool's message loop (src/gradbench/serve.h): one response per message line, whatever the
// line holds, and the next line served; the red team's 100,000-deep input; a response that
// cannot be written.
#include "gradbench/serve.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <streambuf>
#include <string>
#include <vector>

namespace cot::gradbench {
namespace COTANGENT_TEST_UNIT {

using nlohmann::json;

struct Served {
  int status = 0;
  std::vector<json> responses;
  std::string diagnostics;
};

Served serve_text(const std::string& text, const ServeOptions& options = {}) {
  ToolOptions o;
  o.dir = std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench";
  Tool tool(o);
  std::istringstream in(text);
  std::ostringstream out, diagnostics;
  Served s;
  s.status = serve(tool, in, out, diagnostics, options);
  s.diagnostics = diagnostics.str();
  std::istringstream lines(out.str());
  for (std::string line; std::getline(lines, line);) s.responses.push_back(json::parse(line));
  return s;
}

const char* const kHello =
    "{\"id\":8,\"kind\":\"define\",\"module\":\"hello\"}\n"
    "{\"id\":9,\"kind\":\"evaluate\",\"module\":\"hello\",\"function\":\"square\",\"input\":3}\n";

// The two responses to kHello, served after whatever came before.
void expect_hello_served(const Served& s) {
  ASSERT_GE(s.responses.size(), 2u);
  const json& defined = s.responses[s.responses.size() - 2];
  const json& evaluated = s.responses.back();
  EXPECT_EQ(defined, (json{{"id", 8}, {"success", true}}));
  EXPECT_EQ(evaluated.at("id"), 9);
  EXPECT_EQ(evaluated.value("output", json()), 9.0) << evaluated.dump();
}

std::string error_of(const json& response) {
  EXPECT_FALSE(response.at("success").get<bool>()) << response.dump();
  return response.value("error", std::string());
}

// The red team's input nested 100,000 deep overflowed the stack; the CLI caps JSON at 256
// levels and so does the tool, with the same reader.
TEST(GradbenchServe, DeepInputIsRefusedAndTheNextMessageServed) {
  const std::string deep = std::string(100'000, '[') + std::string(100'000, ']');
  const std::string message =
      "{\"id\":1,\"kind\":\"evaluate\",\"module\":\"hello\",\"function\":\"square\",\"input\":" +
      deep + "}\n";
  const Served s = serve_text(message + kHello);
  EXPECT_EQ(s.status, 0);
  ASSERT_EQ(s.responses.size(), 3u);
  EXPECT_EQ(s.responses[0].at("id"), nullptr);  // the message was not read, nor its id
  const std::string error = error_of(s.responses[0]);
  EXPECT_EQ(error.rfind("<stdin>:1:", 0), 0u) << error;
  EXPECT_NE(error.find("JSON is nested more than 256 levels deep"), std::string::npos) << error;
  expect_hello_served(s);
  // 256 levels are read: hello's input must be a number, and says so.
  const std::string at_cap =
      "{\"id\":1,\"kind\":\"evaluate\",\"module\":\"hello\",\"function\":"
      "\"square\",\"input\":" +
      std::string(255, '[') + std::string(255, ']') + "}\n";
  const Served t = serve_text(std::string(kHello) + at_cap);
  ASSERT_EQ(t.responses.size(), 3u);
  EXPECT_EQ(t.responses[2].at("id"), 1);
  EXPECT_NE(error_of(t.responses[2]).find("input: expected a number"), std::string::npos);
}

TEST(GradbenchServe, LinesThatAreNotMessagesAreAnsweredWithTheirLine) {
  ServeOptions options;
  options.max_message_bytes = 200;
  const std::string text =
      "not json\n"
      "\n"
      "  \r\n"
      "[1, 2]\n"
      "{\"id\": 3, \"kind\": \"start\"\n"
      "\"\xff\xfe\"\n" +
      std::string(1000, ' ') + "{}\n" + kHello;
  const Served s = serve_text(text, options);
  EXPECT_EQ(s.status, 0);
  ASSERT_EQ(s.responses.size(), 7u);  // blank lines are skipped
  for (int k = 0; k < 5; ++k) EXPECT_EQ(s.responses[k].at("id"), nullptr) << k;
  std::string e = error_of(s.responses[0]);
  EXPECT_EQ(e.rfind("<stdin>:1:1: error: invalid JSON", 0), 0u) << e;
  e = error_of(s.responses[1]);
  EXPECT_EQ(e, "<stdin>:4: error: a message must be a JSON object, found an array\n");
  e = error_of(s.responses[2]);
  EXPECT_EQ(e.rfind("<stdin>:5:", 0), 0u) << e;
  // Bytes that are not UTF-8 are quoted in the error: replaced, so the response is JSON.
  e = error_of(s.responses[3]);
  EXPECT_EQ(e.rfind("<stdin>:6:", 0), 0u) << e;
  e = error_of(s.responses[4]);
  EXPECT_EQ(e, "<stdin>:7: error: the message is longer than 200 bytes, the tool's limit\n");
  expect_hello_served(s);
}

TEST(GradbenchServe, ALastLineWithoutANewlineIsServed) {
  const Served s = serve_text("{\"id\":4,\"kind\":\"start\"}");
  ASSERT_EQ(s.responses.size(), 1u);
  EXPECT_EQ(s.responses[0], (json{{"id", 4}, {"tool", "cotangent"}}));
}

// A stream whose every write fails, as standard output on a full disk or /dev/full.
class FullBuffer : public std::streambuf {
 protected:
  int_type overflow(int_type) override { return traits_type::eof(); }
  std::streamsize xsputn(const char*, std::streamsize) override { return 0; }
};

TEST(GradbenchServe, AResponseThatCannotBeWrittenEndsWithStatus1) {
  ToolOptions o;
  o.dir = std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench";
  Tool tool(o);
  std::istringstream in("{\"id\":0,\"kind\":\"start\"}\n{\"id\":1,\"kind\":\"start\"}\n");
  FullBuffer full;
  std::ostream out(&full);
  std::ostringstream diagnostics;
  EXPECT_EQ(serve(tool, in, out, diagnostics), 1);
  EXPECT_EQ(diagnostics.str(),
            "cotangent gradbench: error: cannot write the response to the message on <stdin> "
            "line 1\n");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench
