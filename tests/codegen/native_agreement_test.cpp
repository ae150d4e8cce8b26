// Native code agrees with the interpreter (issue 5): every case of every end-to-end program and
// example runs through both backends, values within ρ ≤ 1e-12 and errors with the same message;
// every function with a real scalar result has its value and gradient compared the same way.
// The cases of a program are compiled in one translation unit (one compiler run per program).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ad/random_program.h"
#include "e2e/e2e_cases.h"
#include "opt/gradient_corpus.h"

namespace cotangent::e2e {
namespace COTANGENT_TEST_UNIT {

constexpr double kTol = 1e-12;

class NativeAgreement : public testing::TestWithParam<Program> {};

// A value-and-gradient result as one value, to compare with compare_values.
Value as_value(const ValueAndGrad& vg) {
  std::vector<Value> grads;
  for (const NamedValue& g : vg.grad) grads.push_back(g.value);
  return Value::tuple({vg.value, grads.size() == 1 ? grads[0] : Value::tuple(grads)});
}

bool real_scalar_result(const Module& m, const std::string& fn) {
  auto info = m.function(fn);
  return info.ok() && (info.value().result_type == "f64" || info.value().result_type == "f32") &&
         m.derivative_parameters(fn, DerivativeKind::Grad).ok();
}

TEST_P(NativeAgreement, ValuesGradientsAndErrors) {
  const Program& p = GetParam();
  const Result<Module>& loaded = load_program(p.name);
  ASSERT_TRUE(loaded.ok()) << loaded.message();
  const Module& m = loaded.value();
  EvalOptions native;
  native.backend = Backend::Native;

  struct Pending {
    std::string what;
    Value expected;
  };
  std::vector<CompileRequest> requests;
  std::vector<Pending> pending;
  int compared = 0;
  for (const Case& c : load_cases(p)) {
    auto args = case_arguments(m, c);
    if (!args.ok()) continue;  // the input itself is invalid: no backend runs
    auto r = m.evaluate(c.fn, args.value());
    if (!r.ok()) {
      // Errors: compiled alone (a batch would stop at the first argument error).
      auto n = m.evaluate(c.fn, args.value(), native);
      ASSERT_FALSE(n.ok()) << c.key() << ": native code gave " << value_to_json(n.value())
                           << " where the interpreter failed with\n"
                           << r.message();
      EXPECT_EQ(n.message(), r.message()) << c.key();
      ++compared;
      continue;
    }
    requests.push_back({c.fn, std::nullopt, {}, args.value()});
    pending.push_back({c.key(), r.value()});
    if (real_scalar_result(m, c.fn)) {
      auto g = m.value_and_grad(c.fn, args.value());
      if (g.ok()) {
        requests.push_back({c.fn, DerivativeKind::ValueAndGrad, {}, args.value()});
        pending.push_back({c.key() + " value_and_grad", as_value(g.value())});
      }
    }
  }
  if (!requests.empty()) {
    auto compiled = m.compile(requests);
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    for (size_t k = 0; k < requests.size(); ++k) {
      auto n = compiled.value()[k].call(requests[k].example_args);
      ASSERT_TRUE(n.ok()) << pending[k].what << ": native code failed:\n" << n.message();
      EXPECT_EQ(compare_values(n.value(), pending[k].expected, kTol), "") << pending[k].what;
      ++compared;
    }
  }
  EXPECT_GT(compared, 0) << p.name << " has no case";
}

INSTANTIATE_TEST_SUITE_P(Programs, NativeAgreement, testing::ValuesIn(programs()),
                         [](const testing::TestParamInfo<Program>& info) {
                           std::string s = info.param.name;
                           for (char& ch : s) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return s;
                         });

// The optimizer's corpus (tests/opt/corpus, corpus_cubic) and random programs of the AD tests:
// every function with a real scalar result, on random inputs, value and value-and-gradient.
void check_source(const std::string& name, const std::string& text, int64_t size, uint64_t seed) {
  auto m = Module::from_string(text, name + ".cot");
  ASSERT_TRUE(m.ok()) << m.message();
  std::vector<CompileRequest> requests;
  std::vector<Value> expected;
  std::vector<std::string> what;
  for (const corpus::Candidate& c : corpus::candidates(text)) {
    std::mt19937_64 rng(seed);
    std::vector<Value> args;
    bool ok = true;
    for (const cot::Type& t : c.params) {
      auto v = corpus::random_value(t, size, rng);
      ok = ok && v.has_value();
      if (v) args.push_back(std::move(*v));
    }
    if (!ok) continue;
    auto r = m.value().evaluate(c.fn, args);
    if (!r.ok()) {
      EvalOptions native;
      native.backend = Backend::Native;
      auto n = m.value().evaluate(c.fn, args, native);
      EXPECT_EQ(n.message(), r.message()) << name << ":" << c.fn;
      continue;
    }
    requests.push_back({c.fn, std::nullopt, {}, args});
    expected.push_back(r.value());
    what.push_back(name + ":" + c.fn);
    auto g = m.value().value_and_grad(c.fn, args);
    if (!g.ok()) continue;
    requests.push_back({c.fn, DerivativeKind::ValueAndGrad, {}, args});
    expected.push_back(as_value(g.value()));
    what.push_back(name + ":" + c.fn + " value_and_grad");
  }
  if (requests.empty()) return;
  auto compiled = m.value().compile(requests);
  ASSERT_TRUE(compiled.ok()) << name << ": " << compiled.message();
  for (size_t k = 0; k < requests.size(); ++k) {
    auto n = compiled.value()[k].call(requests[k].example_args);
    ASSERT_TRUE(n.ok()) << what[k] << ": native code failed:\n" << n.message();
    EXPECT_EQ(compare_values(n.value(), expected[k], kTol), "")
        << what[k] << (name.rfind("random", 0) == 0 ? "\n" + text : "");
  }
}

class NativeAgreementCorpus : public testing::TestWithParam<corpus::SourceFile> {};

TEST_P(NativeAgreementCorpus, ValuesAndGradients) {
  const corpus::SourceFile& f = GetParam();
  check_source(f.name, f.text, f.name.rfind("opt3/", 0) == 0 ? 6 : 9, 3);
}

std::vector<corpus::SourceFile> optimizer_corpus() {
  std::vector<corpus::SourceFile> out;
  for (auto& f : corpus::corpus_files(source_dir())) {
    if (f.name.rfind("opt", 0) == 0) out.push_back(std::move(f));
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Corpus, NativeAgreementCorpus, testing::ValuesIn(optimizer_corpus()),
                         [](const testing::TestParamInfo<corpus::SourceFile>& info) {
                           std::string s = info.param.name;
                           for (char& ch : s) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return s;
                         });

TEST(NativeAgreementRandom, programs_of_the_ad_tests) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    adtest::RandomProgram p = adtest::random_program(seed);
    check_source("random" + std::to_string(seed), p.source, 4, seed);
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::e2e
