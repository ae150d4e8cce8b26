// The loop-IR passes (docs/design.md §10): what runs on a lowered function before C++ is
// emitted, in order, by name, as the Core IR's pipeline (opt/pipeline.h) runs its passes. Each
// is a pure function from a loop function to one that computes the same values and fails at
// the same site with the same values; `--dump-after NAME` prints the loop IR after it.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/loop_ir.h"

namespace cot::codegen {

struct LoopPass {
  std::string_view name;  // as given to --dump-after
  LoopFunction (*run)(LoopFunction fn);
  std::string_view summary;  // one line, for --help and docs
};

// Every loop-IR pass, in the order optimize_loops runs them.
const std::vector<LoopPass>& loop_passes();
bool is_loop_pass_name(std::string_view name);

// What to print while the passes run: after the pass named `after` ("all": after every pass),
// `print` gets the pass's name, the function's name and its loop IR as text
// (loop_ir_printer.h). Nothing when `print` is empty.
struct LoopDump {
  std::string after;
  std::function<void(const std::string& pass, const std::string& fn, const std::string& text)>
      print;
};

// `lf` (the lowering of the function `fn_name`) through every loop pass in order.
LoopFunction optimize_loops(LoopFunction lf, const std::string& fn_name, const LoopDump& dump = {});

}  // namespace cot::codegen
