// Hostile input sizes (issue 25, break 10): many unknown JSON entries, files without end,
// empty results whose JSON text would never end, and line endings other than LF.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cotangent/io.h"
#include "io/json_parse.h"
#include "io/read_text.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

ValueKind real_scalar() {
  ValueKind k;
  k.spelling = "f64";
  return k;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The red team's reproduction at 100,000 keys took minutes: each unknown key built a positioned
// error (a pass over the text) and a suggestion, past the error limit too.
TEST(InputLimits, HundredThousandUnknownEntriesAreCountedNotBuilt) {
  std::string text = "{";
  for (int i = 0; i < 100000; ++i) text += "\"key" + std::to_string(i) + "\": 1, ";
  text += "\"x\": 1}";
  const auto t0 = std::chrono::steady_clock::now();
  auto r = arguments_from_json(text, "in.json", {"x"}, {real_scalar()});
  const double s = seconds_since(t0);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.errors().size(), 21u);
  EXPECT_EQ(r.errors()[0].message,
            "input has an entry 'key0' that is not a parameter of the function (parameters: x)");
  EXPECT_EQ(r.errors()[0].line, 1);
  EXPECT_EQ(r.errors()[0].column, 2);
  EXPECT_EQ(r.errors()[20].message, "99980 more errors in the input are not shown");
  EXPECT_EQ(r.errors()[20].help, "fix the errors above and run again");
  // Linear work takes well under a second; the quadratic one took minutes.
  EXPECT_LT(s, 5.0);
}

// Missing parameters count against the same limit.
TEST(InputLimits, MissingParametersPastTheLimitAreCounted) {
  std::vector<std::string> names;
  std::vector<ValueKind> kinds;
  for (int i = 0; i < 30; ++i) {
    names.push_back("p" + std::to_string(i));
    kinds.push_back(real_scalar());
  }
  auto r = arguments_from_json("{}", "in.json", names, kinds);
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.errors().size(), 21u);
  EXPECT_EQ(r.errors()[19].message, "parameter 'p19' is missing from the input; expected f64");
  EXPECT_EQ(r.errors()[20].message, "10 more errors in the input are not shown");
}

// The suggestion is bounded: a 100,000-character parameter name is never compared in full.
TEST(InputLimits, SuggestionsAreBoundedAndStillFound) {
  const std::string long_name(100000, 'w');
  auto r = arguments_from_json(R"({"wieght": 1, "w": 2})", "in.json", {"weight", long_name, "w"},
                               {real_scalar(), real_scalar(), real_scalar()});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].help, "did you mean 'weight'?");  // a swap of two neighbours
  auto far =
      arguments_from_json(R"({"zzzzzz": 1, "weight": 2})", "in.json", {"weight"}, {real_scalar()});
  ASSERT_FALSE(far.ok());
  EXPECT_EQ(far.errors()[0].help, "remove the entry");
}

// Lone CR and CRLF end lines in positions; a byte-order mark does not count as columns.
TEST(InputLimits, JsonPositionsWithCrLineEndingsAndAByteOrderMark) {
  auto cr = arguments_from_json("{\r  \"x\": true\r}", "in.json", {"x"}, {real_scalar()});
  ASSERT_FALSE(cr.ok());
  EXPECT_EQ(cr.errors()[0].line, 2);
  EXPECT_EQ(cr.errors()[0].column, 8);
  EXPECT_EQ(cr.errors()[0].rendered,
            "in.json:2:8: error: x must be a real number (f64), found true\n"
            "    \"x\": true\n"
            "         ^\n"
            "  help: write a number\n");
  auto crlf = arguments_from_json("{\r\n  \"x\": true\r\n}", "in.json", {"x"}, {real_scalar()});
  ASSERT_FALSE(crlf.ok());
  EXPECT_EQ(crlf.errors()[0].line, 2);
  EXPECT_EQ(crlf.errors()[0].column, 8);
  auto bom = arguments_from_json("\xEF\xBB\xBF{\"x\": true}", "in.json", {"x"}, {real_scalar()});
  ASSERT_FALSE(bom.ok());
  EXPECT_EQ(bom.errors()[0].line, 1);
  EXPECT_EQ(bom.errors()[0].column, 7);
  EXPECT_EQ(bom.errors()[0].rendered,
            "in.json:1:7: error: x must be a real number (f64), found true\n"
            "  {\"x\": true}\n"
            "        ^\n"
            "  help: write a number\n");
  auto ok = arguments_from_json("\xEF\xBB\xBF{\r\"x\": 2.5\r}", "in.json", {"x"}, {real_scalar()});
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(ok.value()[0].as_f64(), 2.5);
}

io::TextRules small_rules(size_t max_bytes) {
  io::TextRules r;
  r.max_bytes = max_bytes;
  r.kind = "test input";
  r.too_large_help = "make it smaller";
  return r;
}

TEST(InputLimits, ReadsStopAtTheLimit) {
  std::istringstream exact("0123456789");
  auto r = io::read_text_stream(exact, "s", small_rules(10));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value(), "0123456789");
  std::istringstream longer("0123456789X");
  auto e = io::read_text_stream(longer, "s", small_rules(10));
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.errors()[0].message,
            "the file is larger than 10 bytes, the largest test input accepted");
  EXPECT_EQ(e.errors()[0].help, "make it smaller");
  EXPECT_EQ(io::byte_size_text(size_t{16} << 20), "16 MiB");
  EXPECT_EQ(io::byte_size_text(size_t{1} << 30), "1 GiB");
}

TEST(InputLimits, ANulByteEndsTheReadWithItsPosition) {
  std::istringstream in(std::string("{\n  \"x\": \0", 10));
  auto e = io::read_text_stream(in, "in.json", io::json_text_rules());
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.errors()[0].message, "the JSON input contains a NUL byte: it is not text");
  EXPECT_EQ(e.errors()[0].line, 2);
  EXPECT_EQ(e.errors()[0].column, 8);
}

// `--input /dev/zero` read until the OOM killer; it now stops at the first byte.
TEST(InputLimits, DevZeroIsRefusedAtOnce) {
  if (!std::filesystem::exists("/dev/zero")) GTEST_SKIP() << "no /dev/zero";
  auto e = read_json_input("/dev/zero");
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.errors()[0].file, "/dev/zero");
  EXPECT_EQ(e.errors()[0].message, "the JSON input contains a NUL byte: it is not text");
}

TEST(InputLimits, DirectoriesAndMissingFilesAreErrors) {
  auto dir = read_json_input(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(dir.errors()[0].message.find("is a directory"), std::string::npos);
  auto missing = read_json_input("/nonexistent/in.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.errors()[0].message, "cannot read /nonexistent/in.json");
}

TEST(InputLimits, ARegularFileOverTheLimitIsRefusedBeforeReading) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("cot_limit_" + std::to_string(::getpid()));
  {
    std::ofstream out(p, std::ios::binary);
    out << "0123456789abcdef";
  }
  auto e = io::read_text_file(p.string(), "big.txt", small_rules(8));
  std::filesystem::remove(p);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.errors()[0].message,
            "the file is larger than 8 bytes, the largest test input accepted");
}

TEST(InputLimits, JsonTextOverTheLimitIsRefused) {
  // parse_json's own check, for text that did not come through read_json_input (the API).
  EXPECT_EQ(io::kMaxJsonBytes, size_t{1} << 30);
  EXPECT_EQ(io::json_text_rules().max_bytes, io::kMaxJsonBytes);
}

// Printing an empty result of shape [10^12, 0] never ended: 10^12 empty arrays.
TEST(InputLimits, HugeEmptyResultsAreRefusedAsJson) {
  Value huge = Value::zeros(DType::F64, {1000000000000, 0});
  ASSERT_TRUE(huge.well_formed());
  auto r = value_to_json_checked(huge);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors()[0].message,
            "an empty tensor of shape [1000000000000, 0] is too large to write as JSON: its text "
            "would hold more than 268435456 empty arrays");
  EXPECT_EQ(value_to_json(huge), "null");
  // In a tuple, and deeper: [2^20, 2^20, 0] is 2^40 arrays.
  Value deep = Value::zeros(DType::I64, {int64_t{1} << 20, int64_t{1} << 20, 0});
  EXPECT_FALSE(value_to_json_checked(Value::tuple({Value::f64(1.0), deep})).ok());
  // A dimension product that overflows int64 is refused, not wrapped.
  Value wide = Value::zeros(DType::F64, {int64_t{1} << 40, int64_t{1} << 40, 0});
  EXPECT_FALSE(value_to_json_checked(wide).ok());
}

TEST(InputLimits, SmallEmptyResultsArePrinted) {
  auto r = value_to_json_checked(Value::zeros(DType::F64, {3, 0}));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value(), "[[], [], []]");
  EXPECT_EQ(value_to_json_checked(Value::zeros(DType::F64, {0, 1000000000000})).value(), "[]");
  EXPECT_EQ(value_to_json_checked(Value::zeros(DType::Bool, {2, 0, 5})).value(), "[[], []]");
  // Just past the limit: the outer array and 2^28 inner ones.
  EXPECT_FALSE(value_to_json_checked(Value::zeros(DType::F64, {kMaxJsonEmptyArrays, 0})).ok());
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
