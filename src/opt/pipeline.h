// The optimizer's named pipeline (docs/design.md §8): the passes in order, each a pure function
// with a postcondition, run to a fixed point at an optimization level. After every pass the IR
// verifier and the pass's postcondition run; a failure names the pass and is a compiler bug.
//
// Levels: 0 runs nothing (the program as the checker or AD built it; the reference); 1 runs the
// local clean-ups that never move work between regions (algebraic simplification, common
// subexpressions, dead code); 2 runs the whole pipeline.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

inline constexpr int kMaxLevel = 2;

struct PipelineOptions {
  int level = kMaxLevel;
  // Calls `dump` after every run of the pass named `dump_after` ("all": after every pass), with
  // the program the function belongs to (for printing calls).
  std::string dump_after;
  std::function<void(std::string_view pass, const ir::Program& program, const ir::Function& f)>
      dump;
  // Rounds of the whole pipeline; it stops earlier when no pass of a round reports a change.
  int max_rounds = 4;
  // Checking mode, for tests (and COTANGENT_CHECK_PASSES=1 in the library): the
  // function is printed before and after every pass, and a pass that reported no change but
  // returned a function that prints differently is an error naming it (pass.h, PassResult).
  bool check_change_reports = false;
  // Whether the postconditions marked costly run (pass.h); the library turns them on with
  // COTANGENT_CHECK_PASSES=1. Those not marked always run.
  bool check_costly_postconditions = true;
};

struct PipelineError {
  std::string function;
  std::string pass;
  std::string message;
};

// Every pass of the pipeline, in the order a round runs them.
const std::vector<Pass>& pipeline_passes();
bool is_pass_name(std::string_view name);

// `f` (a function of `program`) optimized at options.level by `passes` (tests give their own).
std::variant<ir::Function, PipelineError> optimize_function(
    const ir::Program& program, const ir::Function& f, const PipelineOptions& options,
    const std::vector<Pass>& passes = pipeline_passes());

// `program` with every function `select` accepts optimized (in order, each against the program
// as optimized so far, so callers inline optimized callees).
std::variant<ir::Program, PipelineError> optimize_program(
    ir::Program program, const PipelineOptions& options,
    const std::function<bool(const ir::Function&)>& select);

// The same, but a function whose optimization fails is left as it was and its error recorded,
// and the others are optimized (so one broken function fails alone, docs/design.md §8.1).
struct OptimizedProgram {
  ir::Program program;
  std::vector<PipelineError> failed;
};
OptimizedProgram optimize_each(ir::Program program, const PipelineOptions& options,
                               const std::function<bool(const ir::Function&)>& select);

}  // namespace cot::opt
