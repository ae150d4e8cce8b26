// Source files as editors write them (issue 25, break 11): a UTF-8 byte-order mark at the start,
// CRLF and lone CR line endings, and long lines in messages.
#include <gtest/gtest.h>

#include <string>

#include "base/diagnostic.h"
#include "base/source.h"
#include "cotangent/cotangent.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

using cotangent::Module;
using cotangent::Value;

// Two statements on two lines: with lone CR endings they ran together as `let a = x b`.
std::string program(std::string_view eol) {
  const std::string e(eol);
  return "def f(x: f64) -> f64 {" + e + "  let a = x * 2.0" + e + "  let b = a + 1.0" + e + "  b" +
         e + "}" + e;
}

TEST(LineEndings, CrCrLfAndLfProgramsRunAlike) {
  for (std::string_view eol : {"\n", "\r\n", "\r"}) {
    for (bool bom : {false, true}) {
      const std::string src = (bom ? "\xEF\xBB\xBF" : "") + program(eol);
      auto m = Module::from_string(src, "t.cot");
      ASSERT_TRUE(m.ok()) << m.message();
      auto r = m.value().evaluate("f", {Value::f64(1.5)});
      ASSERT_TRUE(r.ok()) << r.message();
      EXPECT_EQ(r.value().as_f64(), 4.0);
    }
  }
}

TEST(LineEndings, ErrorsAreLocatedByLineWithEveryEnding) {
  for (std::string_view eol : {"\n", "\r\n", "\r"}) {
    const std::string e(eol);
    const std::string src =
        "\xEF\xBB\xBF"
        "def f(x: f64) -> f64 {" +
        e + "  let a = x" + e + "  a + y" + e + "}" + e;
    auto m = Module::from_string(src, "t.cot");
    ASSERT_FALSE(m.ok());
    const cotangent::Error& err = m.errors()[0];
    EXPECT_EQ(err.line, 3);
    EXPECT_EQ(err.column, 7);
    EXPECT_NE(err.rendered.find("t.cot:3:7: error: "), std::string::npos) << err.rendered;
    EXPECT_NE(err.rendered.find("\n    a + y\n        ^\n"), std::string::npos) << err.rendered;
  }
  // A byte-order mark elsewhere is named, not shown as an invisible character.
  auto m = Module::from_string(
      "def f() -> f64 {\n  \xEF\xBB\xBF"
      "1.0\n}\n",
      "t.cot");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.errors()[0].message, "unexpected byte-order mark (U+FEFF, invisible)");
  EXPECT_EQ(m.errors()[0].line, 2);
  EXPECT_EQ(m.errors()[0].column, 3);
}

// A program on one long line: the message shows a window around the caret, not the line.
TEST(LineEndings, LongLinesAreShownAsAWindow) {
  std::string src = "def f(x: f64) -> f64 { ";
  for (int i = 0; i < 5000; ++i) src += "x + ";
  src += "$ }";
  SourceManager sm;
  const uint32_t id = sm.add("long.cot", src);
  const uint32_t at = static_cast<uint32_t>(src.find('$'));
  const std::string out = render(sm, Diagnostic{Span{id, at, at + 1}, "unexpected", {}, {}});
  EXPECT_LT(out.size(), 400u) << out;
  const size_t line = out.find("\n  ...") + 1;
  const size_t caret_line = out.find('\n', line) + 1;
  const size_t caret = out.find('^', caret_line) - caret_line;
  EXPECT_EQ(out.substr(line + caret, 3), "$ }") << out;
  EXPECT_EQ(out.substr(0, 22), "long.cot:1:20024: erro");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
