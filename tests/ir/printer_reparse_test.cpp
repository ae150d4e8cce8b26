// Printed source must read back: programs whose printing once produced text the parser
// rejected (a size printed with a leading minus, a constant INT64_MIN in an index or a guard)
// or that use `accum` as an ordinary name. Each is loaded, printed, and the printed text must
// load again and print the same (a fixed point), and compute the same values.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace COTANGENT_TEST_UNIT {

using cotangent::DType;
using cotangent::Module;
using cotangent::Value;

// The printed text of each of `fns`, one after the other; fails the test on any error.
std::string PrintAll(const std::string& src, const std::vector<std::string>& fns) {
  auto m = Module::from_string(src, "test.cot");
  if (!m.ok()) {
    ADD_FAILURE() << "unexpected errors:\n" << m.message() << "in:\n" << src;
    return "";
  }
  std::string out;
  for (const std::string& fn : fns) {
    auto p = m.value().print(fn);
    if (!p.ok()) {
      ADD_FAILURE() << "print of " << fn << " failed:\n" << p.message();
      return "";
    }
    out += p.value() + "\n";
  }
  return out;
}

// Prints, reloads the printed text and prints again; returns the first printing.
std::string RoundTrip(const std::string& src, const std::vector<std::string>& fns) {
  std::string once = PrintAll(src, fns);
  if (once.empty()) return once;
  std::string twice = PrintAll(once, fns);
  EXPECT_EQ(once, twice);
  return once;
}

Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  for (size_t i = 0; i < xs.size(); ++i) v.f64_mut()[i] = xs[i];
  return v;
}

double Eval1(const std::string& src, const std::string& fn, const std::vector<Value>& args) {
  auto m = Module::from_string(src, "test.cot");
  if (!m.ok()) {
    ADD_FAILURE() << m.message();
    return 0;
  }
  auto r = m.value().evaluate(fn, args);
  if (!r.ok()) {
    ADD_FAILURE() << r.message();
    return 0;
  }
  return r.value().as_f64();
}

TEST(PrinterReparse, SizesWithALeadingNegativeTerm) {
  std::string printed = RoundTrip(
      "def f(y: f64[n], x: f64[5 - n]) -> f64 { 0.0 }\n"
      "def g(y: f64[n], x: f64[0 - n - 1]) -> f64 { 0.0 }\n"
      "def h(y: f64[n], k: f64[m], x: f64[m - 2 * n]) -> f64 { 0.0 }\n"
      "def q(y: f64[n], x: f64[(5 - n) / 2 + 3]) -> f64 { 0.0 }\n",
      {"f", "g", "h", "q"});
  EXPECT_NE(printed.find("x: f64[5 - n]"), std::string::npos) << printed;
  EXPECT_NE(printed.find("x: f64[-n - 1]"), std::string::npos) << printed;
  EXPECT_NE(printed.find("x: f64[m - 2 * n]"), std::string::npos) << printed;
  EXPECT_NE(printed.find("x: f64[3 - (n - 5) / 2]"), std::string::npos) << printed;
}

TEST(PrinterReparse, Int64MinInIndicesAndGuards) {
  const std::string src =
      "def f(x: f64[n]) -> f64[n] {\n"
      "  for i: n. if n > 100 then x[i - 9223372036854775807 - 1] else x[i]\n"
      "}\n"
      "def g(x: f64[n]) -> f64 { sum i. [i - 9223372036854775807 - 1 >= 0] * x[i] }\n";
  std::string printed = RoundTrip(src, {"f", "g"});
  EXPECT_EQ(printed.find("9223372036854775808"), std::string::npos) << printed;
  EXPECT_NE(printed.find("x[i - 9223372036854775807 - 1]"), std::string::npos) << printed;
  EXPECT_NE(printed.find("[i - 9223372036854775807 - 1 >= 0]"), std::string::npos) << printed;
  EXPECT_EQ(Eval1(printed, "g", {vec({1, 2})}), 0.0);
}

TEST(PrinterReparse, AccumIsAnOrdinaryName) {
  const std::string src =
      "def f(accum: f64) -> f64 { accum }\n"
      "def g(n: i64, x: f64[m]) -> f64 {\n"
      "  let a = loop accum = 0.0 for t < n { accum + 1.0 }\n"
      "  let accum = x\n"
      "  accum[0] + a\n"
      "}\n"
      "def h(idx: i64[m], v: f64[m], z: f64[n]) -> f64 { sum accum. (accum[n] i. (idx[i], "
      "v[i]))[accum] * z[accum] }\n";
  EXPECT_EQ(Eval1(src, "f", {Value::f64(2.5)}), 2.5);
  EXPECT_EQ(Eval1(src, "g", {Value::i64(3), vec({10, 20})}), 13.0);
  std::string printed = RoundTrip(src, {"f", "g", "h"});
  // Printed variables avoid the name `accum`: the only whole word `accum` is the accum form.
  std::regex word(R"(\baccum\b)");
  std::vector<size_t> at;
  for (auto it = std::sregex_iterator(printed.begin(), printed.end(), word);
       it != std::sregex_iterator(); ++it) {
    at.push_back(static_cast<size_t>(it->position()));
  }
  ASSERT_EQ(at.size(), 1u) << printed;
  EXPECT_EQ(printed.compare(at[0], 10, "accum[n] i"), 0) << printed;
  EXPECT_EQ(Eval1(printed, "g", {Value::i64(3), vec({10, 20})}), 13.0);
}

}  // namespace COTANGENT_TEST_UNIT
