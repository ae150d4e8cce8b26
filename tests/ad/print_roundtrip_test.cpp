// Printing derived functions round trip (docs/language.md §8, `cotangent print FILE FN --grad`):
// for every test program without loops (tests/e2e/programs/*.cot) and each of its functions with a
// real parameter, Module::print_derivative prints grad(f) (jvp(f) for a function whose result
// is not a real scalar); the printed text must load as a module of its own, and its derived
// `def` must compute, on the inputs of the program's cases, the same values (ρ ≤ 1e-12) as the
// derivative operator applied in the original program.
#include <gtest/gtest.h>

#include <cmath>
#include <regex>
#include <string>
#include <vector>

#include "e2e/e2e_cases.h"

namespace cotangent::e2e {
namespace COTANGENT_TEST_UNIT {

bool real_kind(const ValueKind& k) {
  if (k.is_tuple) {
    for (const auto& e : k.elems) {
      if (!real_kind(e)) return false;
    }
    return !k.elems.empty();
  }
  return k.dtype == DType::F64 || k.dtype == DType::F32;
}

// A value shaped like `like` with deterministic, varied real elements (a tangent).
Value tangent_like(const Value& like, int* counter) {
  if (like.is_tuple()) {
    std::vector<Value> elems;
    for (const auto& e : like.elems()) elems.push_back(tangent_like(e, counter));
    return Value::tuple(std::move(elems));
  }
  auto next = [&] { return std::sin(1.0 + 0.7 * (*counter)++); };
  if (like.dtype() == DType::F64) {
    if (like.is_scalar()) return Value::f64(next());
    Value v = Value::zeros(DType::F64, like.shape());
    for (double& x : v.f64_mut()) x = next();
    return v;
  }
  if (like.dtype() == DType::F32) {
    if (like.is_scalar()) return Value::f32(static_cast<float>(next()));
    Value v = Value::zeros(DType::F32, like.shape());
    for (float& x : v.f32_mut()) x = static_cast<float>(next());
    return v;
  }
  return like;
}

struct Subject {
  std::string program;
  std::string fn;
  std::string name() const {
    std::string s = program + "_" + fn;
    for (char& c : s) {
      if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    return s;
  }
};

void PrintTo(const Subject& s, std::ostream* os) {
  *os << s.program << "/" << s.fn;
}

// The word `loop` anywhere in the source (a plain scan: this runs at every test process's
// start, where std::regex cost a tenth of it).
bool has_loops(const std::string& source) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = source.find("loop"); at != std::string::npos; at = source.find("loop", at + 1)) {
    const bool starts = at == 0 || !word(source[at - 1]);
    const bool ends = at + 4 == source.size() || !word(source[at + 4]);
    if (starts && ends) return true;
  }
  return false;
}

// Every function with a real parameter of every program without loops that has a case.
std::vector<Subject> subjects() {
  std::vector<Subject> out;
  for (const Program& p : programs()) {
    if (p.source.find("tests/e2e/programs/") == std::string::npos) continue;
    if (has_loops(read_text(p.source))) continue;
    // Registration runs in every test process (ctest starts one per test), and the functions'
    // names and parameters do not depend on the optimizer: load without it.
    LoadOptions unoptimized;
    unoptimized.opt_level = 0;
    auto m = Module::from_file(p.source, unoptimized);
    if (!m.ok()) continue;  // reported by the end-to-end tests
    for (const std::string& fn : m.value().function_names()) {
      auto info = m.value().function(fn);
      bool real_param = false;
      for (const auto& par : info.value().params) real_param = real_param || real_kind(par.kind);
      bool has_case = false;
      for (const Case& c : all_cases()) {
        has_case = has_case || (c.program == p.name && c.fn == fn && !c.is_error());
      }
      if (real_param && has_case) out.push_back({p.name, fn});
    }
  }
  return out;
}

class PrintRoundTrip : public ::testing::TestWithParam<Subject> {};

TEST_P(PrintRoundTrip, PrintedDerivativeComputesTheOperatorsValues) {
  const Subject& s = GetParam();
  const Result<Module>& original = load_program(s.program);
  ASSERT_TRUE(original.ok()) << original.message();
  const Module& m = original.value();
  auto info = m.function(s.fn);
  ASSERT_TRUE(info.ok()) << info.message();
  const std::string& rt = info.value().result_type;
  const bool scalar = rt == "f64" || rt == "f32";
  const DerivativeKind kind = scalar ? DerivativeKind::Grad : DerivativeKind::Jvp;

  auto printed = m.print_derivative(s.fn, kind);
  if (!printed.ok()) {
    // A result that is not real (jvp needs one), or a limitation of the AD stage.
    const std::string msg = printed.message();
    ASSERT_TRUE(msg.find("needs a function") != std::string::npos ||
                msg.find("cannot differentiate") != std::string::npos)
        << msg;
    GTEST_SKIP() << msg;
  }
  const std::string& text = printed.value();
  // "# OP, as the compiler builds it\ndef NAME(".
  static const std::regex head(R"(^# (.*), as the compiler builds it\ndef ([A-Za-z0-9_]+)\()");
  std::smatch match;
  ASSERT_TRUE(std::regex_search(text, match, head)) << text;
  const std::string op = match[1];
  const std::string def = match[2];
  ASSERT_EQ(op.rfind(scalar ? "grad(" + s.fn : "jvp(" + s.fn, 0), 0u) << op;
  if (text.find(" saving ") != std::string::npos) GTEST_SKIP() << "saving loops do not parse";

  auto reparsed = Module::from_string(text, s.name() + ".printed.cot");
  ASSERT_TRUE(reparsed.ok()) << reparsed.message() << "\nprinted:\n" << text;
  auto dinfo = reparsed.value().function(def);
  ASSERT_TRUE(dinfo.ok()) << dinfo.message();

  // The operator itself, applied in a copy of the original program.
  std::string wrapper = "\ndef roundtrip_operator_under_test(";
  std::string call;
  for (size_t i = 0; i < dinfo.value().params.size(); ++i) {
    const auto& par = dinfo.value().params[i];
    wrapper += (i ? ", " : "") + par.name + ": " + par.type;
    call += (i ? ", " : "") + par.name;
  }
  wrapper += ") -> " + dinfo.value().result_type + " {\n  " + op + "(" + call + ")\n}\n";
  std::string program_source;
  for (const Program& p : programs()) {
    if (p.name == s.program) program_source = read_text(p.source);
  }
  auto with_op = Module::from_string(program_source + wrapper, s.name() + ".operator.cot");
  ASSERT_TRUE(with_op.ok()) << with_op.message() << "\nwrapper:\n" << wrapper;

  int compared = 0;
  for (const Program& p : programs()) {
    if (p.name != s.program) continue;
    for (const Case& c : load_cases(p)) {
      if (c.fn != s.fn || c.is_error()) continue;
      auto args = case_arguments(m, c);
      ASSERT_TRUE(args.ok()) << args.message();
      std::vector<Value> xs = args.value();
      if (!scalar) {
        int counter = c.index;
        for (size_t i = 0; i < info.value().params.size(); ++i) {
          if (real_kind(info.value().params[i].kind)) {
            xs.push_back(tangent_like(args.value()[i], &counter));
          }
        }
      }
      auto expected = with_op.value().evaluate("roundtrip_operator_under_test", xs);
      auto actual = reparsed.value().evaluate(def, xs);
      ASSERT_TRUE(expected.ok()) << c.key() << "\n" << expected.message();
      ASSERT_TRUE(actual.ok()) << c.key() << "\n" << actual.message() << "\nprinted:\n" << text;
      const std::string diff = compare_values(expected.value(), actual.value(), 1e-12);
      EXPECT_TRUE(diff.empty()) << c.key() << " with input " << c.input.dump() << ": " << diff
                                << "\nprinted:\n"
                                << text;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0);
}

INSTANTIATE_TEST_SUITE_P(Programs, PrintRoundTrip, ::testing::ValuesIn(subjects()),
                         [](const ::testing::TestParamInfo<Subject>& info) {
                           return info.param.name();
                         });

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::e2e
