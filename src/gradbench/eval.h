// A GradBench eval as the tool sees it (design.md §14): which
// function of the eval's program answers each of the eval's function names, how the eval's
// JSON input becomes the arguments, and how the result becomes the output shape the eval's
// validator expects. One file per eval (hello.cpp, ...); evals.cpp lists them.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace cot::gradbench {

struct Eval {
  std::string name;  // the module: examples/gradbench/NAME.cot
  // The program's function that answers each of the eval's functions (derivatives are
  // functions of the program too, written with its derivative operators).
  std::map<std::string, std::string> functions;
  // The arguments of `function` for the eval's input (an error names what is wrong in it).
  std::function<cotangent::Result<std::vector<cotangent::Value>>(const std::string& function,
                                                                 const nlohmann::json& input)>
      arguments;
  // The output the eval expects from `function`'s result on `args` (the arguments built from
  // the input: ba places its blocks by them); unset: to_json (json_values.h).
  std::function<nlohmann::json(const std::string& function,
                               const std::vector<cotangent::Value>& args,
                               const cotangent::Value& result)>
      output;
};

// The evals the tool implements, by module name.
const std::map<std::string, Eval>& evals();

Eval hello_eval();
Eval gmm_eval();
Eval ba_eval();
Eval ht_eval();
Eval lstm_eval();
Eval lse_eval();
Eval llsq_eval();
Eval kmeans_eval();
Eval ode_eval();
Eval det_eval();
Eval particle_eval();
Eval saddle_eval();

}  // namespace cot::gradbench
