// Shared by the end-to-end tests: the test programs (tests/e2e/programs/*.cot and
// examples/*.cot), their cases (NAME.json, written by tests/e2e/reference.py from independent
// Python implementations), running a case through the public API and comparing values.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

#ifndef COTANGENT_SOURCE_DIR
#define COTANGENT_SOURCE_DIR "."
#endif

namespace cotangent::e2e {

using json = nlohmann::json;

// A program under test: its source file and the file of its cases.
struct Program {
  std::string name;        // "loops", or "examples/quickstart"
  std::string source;      // path of the .cot file
  std::string cases_file;  // path of the .json file with {"cases": [...]}
};

// One case: evaluate `fn` on `input`, expect `expected` (of exact type `type`) within `tol`,
// or, when `errors` is non-empty, expect a failure whose message contains every substring.
struct Case {
  std::string program;
  int index = 0;
  std::string fn;
  json input;
  json expected;
  std::string type;
  double tol = 1e-12;
  std::vector<std::string> errors;

  bool is_error() const { return !errors.empty(); }
  // "loops/fib/3": the key of known-bug lists and the test name.
  std::string key() const { return program + "/" + fn + "/" + std::to_string(index); }
};

inline std::string source_dir() {
  return COTANGENT_SOURCE_DIR;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The test programs with independent expected values: tests/e2e/programs/NAME.cot with
// NAME.json, and examples/NAME.cot with tests/e2e/examples/NAME.json. Sorted by name.
inline std::vector<Program> programs() {
  namespace fs = std::filesystem;
  std::vector<Program> out;
  const fs::path dir = fs::path(source_dir()) / "tests" / "e2e" / "programs";
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".cot") continue;
    const std::string stem = e.path().stem().string();
    out.push_back({stem, e.path().string(), (dir / (stem + ".json")).string()});
  }
  const fs::path examples = fs::path(source_dir()) / "examples";
  const fs::path example_cases = fs::path(source_dir()) / "tests" / "e2e" / "examples";
  for (const auto& e : fs::directory_iterator(examples)) {
    if (e.path().extension() != ".cot") continue;
    const std::string stem = e.path().stem().string();
    out.push_back(
        {"examples/" + stem, e.path().string(), (example_cases / (stem + ".json")).string()});
  }
  std::sort(out.begin(), out.end(),
            [](const Program& a, const Program& b) { return a.name < b.name; });
  return out;
}

// The cases of a program; an empty list when the file is missing (a test reports that).
inline std::vector<Case> load_cases(const Program& p) {
  std::vector<Case> out;
  if (!std::filesystem::exists(p.cases_file)) return out;
  json doc;
  try {
    doc = json::parse(read_text(p.cases_file));
    (void)doc.at("cases").size();
  } catch (const json::exception& e) {
    // A case that fails with the parse error (there is no function of that name).
    Case bad;
    bad.program = p.name;
    bad.fn = std::string("invalid cases file: ") + e.what();
    out.push_back(std::move(bad));
    return out;
  }
  int index = 0;
  for (const json& c : doc.at("cases")) {
    Case k;
    k.program = p.name;
    k.index = index++;
    k.fn = c.at("fn").get<std::string>();
    k.input = c.at("input");
    if (c.contains("error")) {
      const json& e = c.at("error");
      if (e.is_string()) {
        k.errors.push_back(e.get<std::string>());
      } else {
        for (const json& s : e) k.errors.push_back(s.get<std::string>());
      }
    } else {
      k.expected = c.at("expected");
      if (c.contains("type")) k.type = c.at("type").get<std::string>();
      if (c.contains("tol")) k.tol = c.at("tol").get<double>();
    }
    out.push_back(std::move(k));
  }
  return out;
}

// Names cases and programs in gtest's messages.
inline void PrintTo(const Case& c, std::ostream* os) {
  *os << c.key();
}
inline void PrintTo(const Program& p, std::ostream* os) {
  *os << p.name;
}

// Every case of every program, for value-parameterized tests. Read once per process: every
// test process registers the suites that list them (ctest runs one process per test).
inline const std::vector<Case>& all_cases() {
  static const std::vector<Case> cases = [] {
    std::vector<Case> out;
    for (const Program& p : programs()) {
      for (Case& c : load_cases(p)) out.push_back(std::move(c));
    }
    return out;
  }();
  return cases;
}

// A test name from a case key: letters, digits and '_' only.
inline std::string test_name(const Case& c) {
  std::string s = c.key();
  for (char& ch : s) {
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  }
  return s;
}

// ρ(x, y) = |x − y| / max(1, |x| + |y|).
inline double rho(double x, double y) {
  return std::fabs(x - y) / std::max(1.0, std::fabs(x) + std::fabs(y));
}

// A real from expected JSON: a number or one of the strings "inf", "-inf", "nan".
inline bool expected_real(const json& e, double* out) {
  if (e.is_number()) {
    *out = e.get<double>();
    return true;
  }
  if (e.is_string()) {
    const std::string s = e.get<std::string>();
    if (s == "inf") *out = HUGE_VAL;
    if (s == "-inf") *out = -HUGE_VAL;
    if (s == "nan") *out = std::nan("");
    return s == "inf" || s == "-inf" || s == "nan";
  }
  return false;
}

// Element k of tensor v against an expected scalar: booleans and integers exactly, reals
// within ρ ≤ tol (f32 elements against the expected value rounded to f32), and non-finite
// reals exactly (inf to inf of the same sign, nan to nan).
inline std::string compare_element(const Value& v, int64_t k, const json& e, double tol,
                                   const std::string& where) {
  auto mismatch = [&](const std::string& got) {
    return where + ": expected " + e.dump() + ", got " + got;
  };
  switch (v.dtype()) {
    case DType::Bool: {
      const bool b = v.bool_data()[static_cast<size_t>(k)] != 0;
      if (!e.is_boolean() || e.get<bool>() != b) return mismatch(b ? "true" : "false");
      return "";
    }
    case DType::I64: {
      const int64_t x = v.i64_data()[static_cast<size_t>(k)];
      if (!e.is_number_integer() || e.get<int64_t>() != x) return mismatch(std::to_string(x));
      return "";
    }
    case DType::F64:
    case DType::F32: {
      const double x = v.element_as_f64(k);
      std::ostringstream got;
      got.precision(17);
      got << x;
      double y = 0;
      if (!expected_real(e, &y)) return mismatch(got.str());
      if (v.dtype() == DType::F32) y = static_cast<double>(static_cast<float>(y));
      if (!std::isfinite(x) || !std::isfinite(y)) {
        const bool same = (std::isnan(x) && std::isnan(y)) || x == y;
        return same ? "" : mismatch(got.str());
      }
      if (!(rho(x, y) <= tol)) {
        std::ostringstream s;
        s.precision(17);
        s << " (rho = " << rho(x, y) << ", tol = " << tol << ")";
        return mismatch(got.str() + s.str());
      }
      return "";
    }
  }
  return where + ": unknown dtype";
}

inline std::string compare_tensor(const Value& v, const json& e, size_t dim, int64_t& flat,
                                  double tol, const std::string& where) {
  const auto& shape = v.shape();
  if (dim == shape.size()) return compare_element(v, flat++, e, tol, where);
  if (!e.is_array() || static_cast<int64_t>(e.size()) != shape[dim]) {
    return where + ": expected " + e.dump() + ", but dimension " + std::to_string(dim) +
           " of the result has " + std::to_string(shape[dim]) + " elements";
  }
  for (size_t i = 0; i < e.size(); ++i) {
    std::string d =
        compare_tensor(v, e[i], dim + 1, flat, tol, where + "[" + std::to_string(i) + "]");
    if (!d.empty()) return d;
  }
  return "";
}

// Compares a value with expected JSON (nested arrays for tensors, arrays for tuples). Returns
// "" or a description of the first difference.
inline std::string compare_value(const Value& v, const json& e, double tol,
                                 const std::string& where = "result") {
  if (v.is_tuple()) {
    if (!e.is_array() || e.size() != v.elems().size()) {
      return where + ": expected " + e.dump() + ", got a " + std::to_string(v.elems().size()) +
             "-tuple";
    }
    for (size_t i = 0; i < e.size(); ++i) {
      std::string d = compare_value(v.elems()[i], e[i], tol, where + "." + std::to_string(i));
      if (!d.empty()) return d;
    }
    return "";
  }
  int64_t flat = 0;
  return compare_tensor(v, e, 0, flat, tol, where);
}

// Compares two values: `b` through its JSON text (value_to_json writes reals so that they read
// back exactly: 17 significant digits, 9 for f32).
inline std::string compare_values(const Value& a, const Value& b, double tol) {
  if (a.type_string() != b.type_string()) {
    return "types differ: " + a.type_string() + " and " + b.type_string();
  }
  return compare_value(a, json::parse(value_to_json(b)), tol);
}

// An f64 tensor of the shape with elements uniform in [-1, 1) (the native lowering's tests).
inline Value uniform_tensor(std::vector<int64_t> shape, std::mt19937_64& rng) {
  Value v = Value::zeros(DType::F64, std::move(shape));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (double& x : v.f64_mut()) x = u(rng);
  return v;
}

// The arguments of a case, read with the function's parameter kinds.
inline Result<std::vector<Value>> case_arguments(const Module& m, const Case& c) {
  auto info = m.function(c.fn);
  if (!info.ok()) return info.errors();
  std::vector<std::string> names;
  std::vector<ValueKind> kinds;
  for (const ParamInfo& p : info.value().params) {
    names.push_back(p.name);
    kinds.push_back(p.kind);
  }
  return arguments_from_json(c.input.dump(), c.key() + ".input", names, kinds);
}

// Runs a case on a module and checks it against its expectation. Returns "" on success.
// `result`, when given, receives the JSON text of the value.
inline std::string check_case(const Module& m, const Case& c, std::string* result = nullptr) {
  auto args = case_arguments(m, c);
  if (!args.ok()) return "cannot read the input: " + args.message();
  auto r = m.evaluate(c.fn, args.value());
  if (c.is_error()) {
    if (r.ok()) return "expected an error, got " + value_to_json(r.value());
    const std::string msg = r.message();
    for (const std::string& s : c.errors) {
      if (msg.find(s) == std::string::npos) {
        return "the error message does not contain \"" + s + "\":\n" + msg;
      }
    }
    if (result) *result = msg;
    return "";
  }
  if (!r.ok()) return "evaluation failed:\n" + r.message();
  const std::string text = value_to_json(r.value());
  if (result) *result = text;
  if (!c.type.empty() && r.value().type_string() != c.type) {
    return "expected type " + c.type + ", got " + r.value().type_string() + " (" + text + ")";
  }
  if (!json::accept(text)) return "value_to_json wrote invalid JSON: " + text;
  std::string d = compare_value(r.value(), c.expected, c.tol);
  if (!d.empty()) return d + "\n  whole result: " + text;
  return "";
}

// Loads each program once.
inline const Result<Module>& load_program(const std::string& name) {
  static std::map<std::string, std::unique_ptr<Result<Module>>> cache;
  auto it = cache.find(name);
  if (it != cache.end()) return *it->second;
  std::string path;
  for (const Program& p : programs()) {
    if (p.name == name) path = p.source;
  }
  auto r = std::make_unique<Result<Module>>(Module::from_file(path));
  return *cache.emplace(name, std::move(r)).first->second;
}

}  // namespace cotangent::e2e
