#include "gradbench/tool.h"

#include <cstdint>
#include <map>
#include <vector>

#include "gradbench/eval.h"
#include "gradbench/json_values.h"
#include "gradbench/runs.h"

namespace cot::gradbench {
namespace {

using nlohmann::json;

json failure(const json& id, const std::string& error) {
  return {{"id", id}, {"success", false}, {"error", error}};
}

// A key for the shapes of the arguments (tuples depth first).
void shape_key(const cotangent::Value& v, std::string& out) {
  if (v.is_tuple()) {
    out += "(";
    for (const cotangent::Value& e : v.elems()) shape_key(e, out);
    out += ")";
    return;
  }
  out += "[";
  for (int64_t d : v.shape()) out += std::to_string(d) + ",";
  out += "]";
}

}  // namespace

json Tool::respond(const json& message, const std::string& source, int line) {
  const json id = message.is_object() && message.contains("id") ? message.at("id") : json(nullptr);
  try {
    const std::string kind = message.value("kind", "");
    if (kind == "start") return {{"id", id}, {"tool", "cotangent"}};
    if (kind == "define") return define(id, message);
    if (kind == "evaluate") return evaluate(id, message, source, line);
    return {{"id", id}};                // analysis, and anything else: an acknowledgement
  } catch (const json::exception& e) {  // a field of the wrong JSON type
    return failure(id, std::string("malformed message: ") + e.what());
  }
}

json Tool::define(const json& id, const json& message) {
  const std::string module = message.value("module", "");
  auto eval = evals().find(module);
  if (eval == evals().end()) return failure(id, "cotangent has no implementation of " + module);
  auto m = cotangent::Module::from_file(options_.dir + "/" + module + ".cot");
  if (!m.ok()) return failure(id, m.message());
  modules_.insert_or_assign(module, std::move(m.value()));
  // A module defined again (its file may have changed) is compiled again.
  std::erase_if(compiled_, [&](const auto& c) { return c.first.rfind(module + "/", 0) == 0; });
  return {{"id", id}, {"success", true}};
}

json Tool::evaluate(const json& id, const json& message, const std::string& source, int line) {
  const std::string module = message.value("module", "");
  const std::string function = message.value("function", "");
  auto m = modules_.find(module);
  if (m == modules_.end()) return failure(id, "the module " + module + " was not defined");
  const Eval& eval = evals().at(module);
  auto f = eval.functions.find(function);
  if (f == eval.functions.end()) {
    return failure(id, "the eval " + module + " has no function " + function);
  }
  const json input = message.contains("input") ? message.at("input") : json(nullptr);
  auto args = eval.arguments(function, input);
  if (!args.ok()) {
    std::vector<cotangent::Error> errors = args.errors();
    for (cotangent::Error& e : errors) {
      e.file = source;
      e.line = line;
    }
    return failure(id, cotangent::to_string(errors));
  }
  std::string key = module + "/" + function;
  for (const cotangent::Value& a : args.value()) shape_key(a, key);
  auto c = compiled_.find(key);
  if (c == compiled_.end()) {
    cotangent::CompileRequest request{f->second, std::nullopt, {}, args.value()};
    cotangent::CompileOptions options;
    options.threads = options_.threads;
    auto compiled = m->second.compile({request}, options);
    if (!compiled.ok()) return failure(id, compiled.message());
    c = compiled_.emplace(key, std::move(compiled.value().at(0))).first;
  }
  // GradBench's Runs: one timing per call; the output of the last.
  int64_t min_runs = 1;
  double min_seconds = 0.0;
  if (input.is_object()) {
    min_runs = input.value("min_runs", int64_t{1});
    min_seconds = input.value("min_seconds", 0.0);
  }
  cotangent::Result<cotangent::Value> result = cotangent::Error{};
  const std::vector<int64_t> ns = timed_runs(min_runs, min_seconds, [&] {
    result = c->second.call(args.value());
    return result.ok();
  });
  if (!result.ok()) return failure(id, result.message());
  json timings = json::array();
  for (int64_t t : ns) timings.push_back({{"name", "evaluate"}, {"nanoseconds", t}});
  return {{"id", id},
          {"success", true},
          {"output", eval.output ? eval.output(function, result.value()) : to_json(result.value())},
          {"timings", timings}};
}

}  // namespace cot::gradbench
