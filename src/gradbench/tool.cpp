#include "gradbench/tool.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <new>
#include <string>
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

// A value's tensors, depth first (the order of CompiledFunction's leaves), each a shallow copy
// (sharing its storage).
void leaf_values(const cotangent::Value& v, std::vector<cotangent::Value>& out) {
  if (v.is_tuple()) {
    for (const cotangent::Value& e : v.elems()) leaf_values(e, out);
    return;
  }
  out.push_back(v);
}

// `shape` (a value, for its tuple structure) with its tensors taken from `leaves`, in order.
cotangent::Value with_leaves(const cotangent::Value& shape,
                             const std::vector<cotangent::Value>& leaves, size_t& k) {
  if (!shape.is_tuple()) return leaves[k++];
  std::vector<cotangent::Value> elems;
  for (const cotangent::Value& e : shape.elems()) elems.push_back(with_leaves(e, leaves, k));
  return cotangent::Value::tuple(std::move(elems));
}

// GradBench's Runs fields of an evaluate's input (absent: one run). Bounded, so that a hostile
// count cannot keep the tool busy for ever or fill memory with timings.
constexpr int64_t kMaxRuns = 10'000'000;
constexpr double kMaxSeconds = 3600.0;

struct Runs {
  int64_t min_runs = 1;
  double min_seconds = 0.0;
};

cotangent::Result<Runs> runs_of(const json& input) {
  Runs runs;
  if (!input.is_object()) return runs;  // hello's input is a bare number
  if (input.contains("min_runs")) {
    auto k = integer(input, "min_runs");
    if (!k) return k.errors();
    if (k.value() > kMaxRuns) {
      return input_error("input.min_runs", "expected at most " + std::to_string(kMaxRuns) +
                                               " runs, found " + std::to_string(k.value()));
    }
    runs.min_runs = std::max<int64_t>(k.value(), 1);  // at least one: the output is the last's
  }
  if (input.contains("min_seconds")) {
    auto s = real(input, "min_seconds");
    if (!s) return s.errors();
    if (s.value() > kMaxSeconds) {
      return input_error("input.min_seconds",
                         "expected at most " + std::to_string(static_cast<int>(kMaxSeconds)) +
                             " seconds, found " + input.at("min_seconds").dump());
    }
    runs.min_seconds = s.value();
  }
  return runs;
}

std::string non_finite_error(const NonFinite& bad) {
  const std::string value = std::isnan(bad.value) ? "nan" : bad.value > 0 ? "inf" : "-inf";
  std::string more;
  if (bad.count > 1) {
    more = " (and " + std::to_string(bad.count - 1) + " more non-finite number" +
           (bad.count > 2 ? "s" : "") + ")";
  }
  return "error: " + bad.where + " is " + value + more +
         ": JSON has no number for NaN or infinity, and GradBench's protocol no other way to "
         "send one, so the output is not sent\n  help: the function's result is not finite "
         "for this input\n";
}

}  // namespace

json Tool::respond(const json& message, const std::string& source, int line) {
  const json id = message.is_object() && message.contains("id") ? message.at("id") : json(nullptr);
  // Whatever goes wrong with one message is its answer, and the next message is served: a
  // GradBench run is many messages, and a tool that dies loses them all.
  try {
    const std::string kind = message.value("kind", "");
    if (kind == "start") return {{"id", id}, {"tool", "cotangent"}};
    if (kind == "define") return define(id, message);
    if (kind == "evaluate") return evaluate(id, message, source, line);
    return {{"id", id}};                // analysis, and anything else: an acknowledgement
  } catch (const json::exception& e) {  // a field of the wrong JSON type
    return failure(id, std::string("malformed message: ") + e.what());
  } catch (const std::bad_alloc&) {  // what it held is freed by now
    return failure(id,
                   "out of memory while handling the message; the input may be too large for "
                   "this machine");
  } catch (const std::exception& e) {
    return failure(id, std::string("internal error while handling the message: ") + e.what());
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
  // A `prepare` step, timed once apart from the runs (GradBench's C++ tools time constructing
  // their function object so): the conversion, the compilation (when these shapes are new) and
  // the result's memory, which every run writes into, as compiled code writes into its
  // caller's destination. Unlike those tools, whose output starts empty and is sized by the
  // first run, no run pays for the result's allocation (docs/benchmarks.md says what that
  // changes).
  const auto prepare_start = std::chrono::steady_clock::now();
  const json no_input;
  const json& input = message.contains("input") ? message.at("input") : no_input;
  // The errors of reading the input name the message's line.
  auto input_failure = [&](std::vector<cotangent::Error> errors) {
    for (cotangent::Error& e : errors) {
      e.file = source;
      e.line = line;
    }
    return failure(id, cotangent::to_string(errors));
  };
  auto runs = runs_of(input);
  if (!runs.ok()) return input_failure(runs.errors());
  auto args = eval.arguments(function, input);
  if (!args.ok()) return input_failure(args.errors());
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
  const cotangent::CompiledFunction& compiled = c->second;
  // The result's memory is allocated here, so its size is checked here, as the compiled code
  // checks its own tensors.
  for (const cotangent::TensorRef& leaf : compiled.result_leaves()) {
    if (auto e = check_tensor_size("the result of " + function, leaf.shape)) {
      return failure(id, cotangent::to_string({*e}));
    }
  }
  std::vector<cotangent::Value> arg_leaves;
  for (const cotangent::Value& a : args.value()) leaf_values(a, arg_leaves);
  std::vector<cotangent::TensorRef> arg_views;
  arg_views.reserve(arg_leaves.size());
  for (const cotangent::Value& leaf : arg_leaves) {
    arg_views.push_back({leaf.dtype(), leaf.shape(), leaf.raw_data()});
  }
  cotangent::Value result = compiled.zero_result();
  // The result's leaves, each its own value: a scalar's element lives inside its Value, so the
  // views point into these (which no longer move) and the result is rebuilt from them after.
  std::vector<cotangent::Value> leaves;
  leaf_values(result, leaves);
  std::vector<cotangent::MutableTensorRef> leaf_refs;
  leaf_refs.reserve(leaves.size());
  for (cotangent::Value& leaf : leaves) {
    leaf_refs.push_back({leaf.dtype(), leaf.shape(), leaf.raw_mut()});
  }
  const auto prepare_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - prepare_start)
                              .count();
  // GradBench's Runs: one timing per call; the output of the last.
  std::string run_error;
  const std::vector<int64_t> ns = timed_runs(runs.value().min_runs, runs.value().min_seconds, [&] {
    auto r = compiled.call(arg_views, leaf_refs);
    if (!r.ok()) run_error = r.message();
    return r.ok();
  });
  if (!run_error.empty()) return failure(id, run_error);
  size_t k = 0;
  result = with_leaves(result, leaves, k);
  json timings = json::array({{{"name", "prepare"}, {"nanoseconds", prepare_ns}}});
  for (int64_t t : ns) timings.push_back({{"name", "evaluate"}, {"nanoseconds", t}});
  json output = eval.output ? eval.output(function, args.value(), result) : to_json(result);
  if (auto bad = find_non_finite(output)) {
    json response = failure(id, non_finite_error(*bad));
    response["timings"] = std::move(timings);
    return response;
  }
  return {{"id", id}, {"success", true}, {"output", std::move(output)}, {"timings", timings}};
}

}  // namespace cot::gradbench
