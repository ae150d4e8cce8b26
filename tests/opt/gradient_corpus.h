// The corpus of the cheap-gradient bound (design.md §8.2, issue 4): every test program
// (tests/e2e/programs), every example (examples/) and the optimizer's corpus of sparse
// pathologies (tests/opt/corpus, and tests/opt/corpus_cubic for those whose function costs
// O(n^3)); in each, every function with a real scalar result and a real
// parameter, measured at several sizes against
//
//   ops(value_and_grad f) <= 4 * ops(f) + size(inputs) + size(outputs).
//
// Shared by the bound's test (cheap_gradient_test.cpp) and bench/cost_ratios.cpp, which prints
// the ratios for docs/benchmarks.md. No gtest here.
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "check/checker.h"
#include "cotangent/cotangent.h"
#include "ir/ir.h"
#include "syntax/parser.h"
#include "syntax/prelude_text.h"

namespace cotangent::corpus {

struct SourceFile {
  std::string name;  // "e2e/loops", "examples/quickstart", "opt/pathologies"
  std::string text;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The .cot files of the corpus under the source tree `root`, sorted by name in each folder.
inline std::vector<SourceFile> corpus_files(const std::string& root) {
  std::vector<SourceFile> out;
  const std::pair<const char*, const char*> dirs[] = {{"tests/e2e/programs", "e2e/"},
                                                      {"examples", "examples/"},
                                                      {"tests/opt/corpus", "opt/"},
                                                      {"tests/opt/corpus_cubic", "opt3/"}};
  for (const auto& [dir, prefix] : dirs) {
    std::vector<std::filesystem::path> paths;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator(root + "/" + dir, ec)) {
      if (e.path().extension() == ".cot") paths.push_back(e.path());
    }
    std::sort(paths.begin(), paths.end());
    for (const auto& p : paths) {
      out.push_back({std::string(prefix) + p.stem().string(), read_file(p)});
    }
  }
  return out;
}

// A function of the corpus and its parameters' types (with symbolic shapes).
struct Candidate {
  std::string fn;
  std::vector<cot::Type> params;
};

// The functions of `text` (prelude included, as modules load it) that return a real scalar and
// take a real parameter; empty when the text does not check.
inline std::vector<Candidate> candidates(const std::string& text) {
  auto sm = std::make_shared<cot::SourceManager>();
  const uint32_t prelude_id = sm->add("<prelude>", std::string(cot::kPreludeText));
  const uint32_t user_id = sm->add("corpus.cot", text);
  cot::DiagnosticSink diags;
  cot::ast::Module prelude = cot::parse_module(*sm, prelude_id, diags);
  cot::ast::Module user = cot::parse_module(*sm, user_id, diags);
  if (diags.has_errors()) return {};
  auto program = cot::check_program(sm, &prelude, user, diags);
  if (!program) return {};
  std::vector<Candidate> out;
  for (const auto& f : program->functions) {
    if (f.from_prelude || f.derivation || f.result_type.is_tuple || !f.result_type.shape.empty() ||
        !f.result_type.is_real_valued()) {
      continue;
    }
    Candidate c{f.name, {}};
    bool real_param = false;
    for (size_t k = 0; k < f.params.size(); ++k) {
      c.params.push_back(f.param_type(k));
      real_param = real_param || f.param_type(k).is_real_valued();
    }
    if (real_param) out.push_back(std::move(c));
  }
  return out;
}

// A value of type `t` with every size variable equal to `size`: reals uniform in [-1, 1), i64
// uniform in [0, size) (valid indices and small trip counts), bools at random.
inline std::optional<Value> random_value(const cot::Type& t, int64_t size, std::mt19937_64& rng) {
  if (t.is_tuple) {
    std::vector<Value> elems;
    for (const auto& e : t.elems) {
      auto v = random_value(e, size, rng);
      if (!v) return std::nullopt;
      elems.push_back(std::move(*v));
    }
    return Value::tuple(std::move(elems));
  }
  std::vector<int64_t> shape;
  for (const auto& d : t.shape) {
    auto n = d.eval([&](const std::string&) { return std::optional<int64_t>(size); });
    if (!n || *n < 0) return std::nullopt;
    shape.push_back(*n);
  }
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int64_t> index(0, std::max<int64_t>(0, size - 1));
  switch (t.elem) {
    case cot::Scalar::F64: {
      Value v = Value::zeros(DType::F64, shape);
      for (double& x : v.f64_mut()) x = real(rng);
      return v;
    }
    case cot::Scalar::F32: {
      Value v = Value::zeros(DType::F32, shape);
      for (float& x : v.f32_mut()) x = static_cast<float>(real(rng));
      return v;
    }
    case cot::Scalar::I64: {
      Value v = Value::zeros(DType::I64, shape);
      for (int64_t& x : v.i64_mut()) x = index(rng);
      return v;
    }
    case cot::Scalar::Bool: {
      Value v = Value::zeros(DType::Bool, shape);
      for (uint8_t& x : v.bool_mut()) x = static_cast<uint8_t>(rng() & 1U);
      return v;
    }
  }
  return std::nullopt;
}

inline int64_t elements(const Value& v) {
  if (!v.is_tuple()) return v.numel();
  int64_t n = 0;
  for (const auto& e : v.elems()) n += elements(e);
  return n;
}

// One function at one size.
struct Measurement {
  std::string program, fn;
  int64_t size = 0;
  bool measured = false;  // false: f itself fails on this input (skipped), see `skipped`
  std::string skipped;
  std::string error;  // value_and_grad failed where f did not: always a failure
  int64_t ops_f = 0, ops_vg = 0, inputs = 0, outputs = 1;

  int64_t bound() const { return 4 * ops_f + inputs + outputs; }
  bool holds() const { return measured && error.empty() && ops_vg <= bound(); }
  // ops(value_and_grad f) / ops(f), the figure docs/benchmarks.md tabulates.
  double ratio() const {
    return ops_f == 0 ? 0.0 : static_cast<double>(ops_vg) / static_cast<double>(ops_f);
  }
};

inline Measurement measure(const Module& m, const std::string& program, const Candidate& c,
                           int64_t size, uint64_t seed) {
  Measurement r;
  r.program = program;
  r.fn = c.fn;
  r.size = size;
  std::mt19937_64 rng(seed);
  std::vector<Value> args;
  for (const auto& t : c.params) {
    auto v = random_value(t, size, rng);
    if (!v) {
      r.skipped = "a parameter's shape does not evaluate at this size";
      return r;
    }
    r.inputs += elements(*v);
    args.push_back(std::move(*v));
  }
  auto f = m.cost(c.fn, args);
  if (!f) {
    r.skipped = f.message();
    return r;
  }
  r.ops_f = f.value().ops;
  r.measured = true;
  auto vg = m.derivative_cost(c.fn, DerivativeKind::ValueAndGrad, args);
  if (!vg) {
    r.error = vg.message();
    return r;
  }
  r.ops_vg = vg.value().ops;
  return r;
}

}  // namespace cotangent::corpus
