// An optimizer pass (docs/design.md §8): a pure function from one function of a program to a
// new function that computes the same values, reporting whether it changed anything, with a
// postcondition that says what normal form the pass leaves behind. The pipeline (pipeline.h)
// runs passes by name, verifies the IR after each one and checks its postcondition; a broken
// invariant is a compiler bug, never a user error.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "ir/ir.h"

namespace cot::opt {

// What a pass made of a function, and whether it changed it. `changed` is set where the pass
// rewrites (a flag its rewrites raise, never a comparison of printed forms); false promises
// that `function` is the input as it was, so a round of passes that all report false is the
// fixed point and the pipeline stops (docs/design.md §8). `true` may be conservative: a pass
// that rewrote something into an equal form may say so, and costs the pipeline a round.
struct PassResult {
  ir::Function function;
  bool changed = false;
};

// Rewrites `f` (a function of `program`, which the pass may read for callees) into a new
// function with the same name, parameters, size variables and result type.
using PassFn = PassResult (*)(const ir::Program& program, const ir::Function& f);
// What must hold after the pass: nullopt when it holds, else a description of what does not.
using PostconditionFn = std::optional<std::string> (*)(const ir::Program& program,
                                                       const ir::Function& f);

struct Pass {
  std::string_view name;  // as given to --dump-after
  int min_level;          // runs at --opt=min_level and above
  PassFn run;
  PostconditionFn postcondition;
  std::string_view summary;  // one line, for --help and docs
  // A postcondition that repeats the pass's own search (region-cse's runs it again, without the
  // pass's memo) costs as much as the pass: it runs only in checking mode
  // (PipelineOptions::check_costly_postconditions), which the tests turn on.
  bool costly_postcondition = false;
};

}  // namespace cot::opt
