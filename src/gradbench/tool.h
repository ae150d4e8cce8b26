// The tool side of GradBench's JSON-lines protocol (design.md §14):
// `start`, `define` (load the eval's program from examples/gradbench), `evaluate` (the eval's
// input to arguments, compiled code for their shapes, the Runs loop, the eval's output shape)
// and `analysis`. One response per message; bad messages, failing programs, sizes over the
// tensor limit, running out of memory and outputs with NaN or infinity (which JSON cannot
// carry) give `success: false` with the error, never an exception. serve.h reads the messages.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "cotangent/cotangent.h"

namespace cot::gradbench {

struct ToolOptions {
  std::string dir;  // where NAME.cot of each eval is
  int threads = 1;  // for parallel loops (GradBench's single-threaded comparisons: 1)
};

class Tool {
 public:
  explicit Tool(ToolOptions options) : options_(std::move(options)) {}
  // `source` and `line` say where the message came from ("<stdin>", its line number), for
  // errors about its input; the defaults leave them out.
  nlohmann::json respond(const nlohmann::json& message, const std::string& source = {},
                         int line = 0);

 private:
  nlohmann::json define(const nlohmann::json& id, const nlohmann::json& message);
  nlohmann::json evaluate(const nlohmann::json& id, const nlohmann::json& message,
                          const std::string& source, int line);

  ToolOptions options_;
  std::map<std::string, cotangent::Module> modules_;  // defined, by module name
  // Compiled once per module, function and argument shapes; compiling is not timed.
  std::map<std::string, cotangent::CompiledFunction> compiled_;
};

}  // namespace cot::gradbench
