// A derived function the compiler cannot build breaks only the functions that need it
// (design.md §2): the module loads, its other functions run, and each function that needs the
// failed one (by a call, or by differentiating one that does) reports the failure when it is
// evaluated, printed, differentiated or compiled. Module::broken_functions lists them for
// `cotangent check`.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {
namespace {

// trigamma has no derivative rule, so grad(t) cannot be built (a limitation of AD, reported
// as "cannot differentiate").
const char* kSource = R"(
def t(x: f64) -> f64 { trigamma(x) * x }
def uses_grad(x: f64) -> f64 { grad(t)(x) + 1.0 }
def calls_user(x: f64) -> f64 { uses_grad(x) * 2.0 }
def fine(x: f64) -> f64 { x * x + 1.0 }
def fine_grad(x: f64) -> f64 { grad(fine)(x) }
)";

TEST(BrokenFunction, OnlyTheFunctionsThatNeedItFail) {
  for (int level : {0, 2}) {
    SCOPED_TRACE("opt level " + std::to_string(level));
    LoadOptions load;
    load.opt_level = level;
    auto m = Module::from_string(kSource, "broken.cot", load);
    ASSERT_TRUE(m.ok()) << m.message();

    for (Backend backend : {Backend::Interpreter, Backend::Native}) {
      EvalOptions eval;
      eval.backend = backend;
      auto fine = m.value().evaluate("fine", {Value::f64(3.0)}, eval);
      ASSERT_TRUE(fine.ok()) << fine.message();
      EXPECT_EQ(fine.value().as_f64(), 10.0);
      auto fine_grad = m.value().evaluate("fine_grad", {Value::f64(3.0)}, eval);
      ASSERT_TRUE(fine_grad.ok()) << fine_grad.message();
      EXPECT_EQ(fine_grad.value().as_f64(), 6.0);
      // t itself has no derivative operator applied, so it runs.
      auto t = m.value().evaluate("t", {Value::f64(2.0)}, eval);
      ASSERT_TRUE(t.ok()) << t.message();
      for (const char* fn : {"uses_grad", "calls_user"}) {
        auto r = m.value().evaluate(fn, {Value::f64(2.0)}, eval);
        ASSERT_FALSE(r.ok()) << fn;
        EXPECT_NE(r.message().find("cannot differentiate grad(t, x): `trigamma` has no derivative"),
                  std::string::npos)
            << fn << ": " << r.message();
      }
    }

    // Printing, differentiating and compiling a broken function give the same error.
    auto printed = m.value().print("calls_user");
    ASSERT_FALSE(printed.ok());
    EXPECT_NE(printed.message().find("cannot differentiate grad(t, x)"), std::string::npos);
    auto vg = m.value().value_and_grad("calls_user", {Value::f64(2.0)}, {});
    ASSERT_FALSE(vg.ok());
    EXPECT_NE(vg.message().find("cannot differentiate grad(t, x)"), std::string::npos);
    auto direct = m.value().print_derivative("t", DerivativeKind::Grad, {});
    ASSERT_FALSE(direct.ok());
    EXPECT_NE(direct.message().find("cannot differentiate grad(t, x)"), std::string::npos);
    auto compiled = m.value().compile({{"uses_grad", std::nullopt, {}, {Value::f64(2.0)}}});
    ASSERT_FALSE(compiled.ok());
    EXPECT_NE(compiled.message().find("cannot differentiate grad(t, x)"), std::string::npos);
    // A derivative of a working function is still built on request.
    auto other = m.value().value_and_grad("fine", {Value::f64(3.0)}, {});
    ASSERT_TRUE(other.ok()) << other.message();
    EXPECT_EQ(other.value().grad.at(0).value.as_f64(), 6.0);

    // The broken functions, in definition order, each naming itself and the cause.
    const std::vector<Error> broken = m.value().broken_functions();
    ASSERT_EQ(broken.size(), 2u);
    EXPECT_NE(broken[0].message.find("`uses_grad` cannot run: cannot differentiate grad(t, x)"),
              std::string::npos)
        << broken[0].message;
    EXPECT_NE(broken[1].message.find("`calls_user` cannot run: cannot differentiate grad(t, x)"),
              std::string::npos)
        << broken[1].message;
  }
}

TEST(BrokenFunction, AModuleWithoutFailuresHasNone) {
  auto m = Module::from_string(
      "def s(x: f64) -> f64 { sin(x) }\ndef f(x: f64) -> f64 { grad(s)(x) }", "ok.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  EXPECT_TRUE(m.value().broken_functions().empty());
}

// A file with many errors: the structured errors keep all of them, the message (what the CLI
// prints) the first kErrorsShown and a count of the rest.
TEST(BrokenFunction, AFileWithManyErrorsShowsTheFirstTwenty) {
  std::string src;
  for (int i = 0; i < 30; ++i) {
    src += "def g" + std::to_string(i) + "(x: f64) -> f64 { yy" + std::to_string(i) + " }\n";
  }
  auto m = Module::from_string(src, "many.cot");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.errors().size(), 30u);
  const std::string text = m.message();
  EXPECT_NE(text.find("many.cot:20:"), std::string::npos) << text;
  EXPECT_EQ(text.find("many.cot:21:"), std::string::npos) << text;
  EXPECT_NE(text.find("10 more errors not shown (30 in all)\n"), std::string::npos) << text;
  // One more than the limit is shown rather than counted; two are counted.
  std::vector<Error> some(m.errors().begin(), m.errors().begin() + 22);
  EXPECT_NE(to_string(some).find("2 more errors not shown (22 in all)"), std::string::npos);
  some.resize(21);
  EXPECT_EQ(to_string(some).find("not shown"), std::string::npos);
  EXPECT_NE(to_string(some).find("many.cot:21:"), std::string::npos);
}

}  // namespace
}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
