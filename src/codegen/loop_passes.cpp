#include "codegen/loop_passes.h"

#include <utility>

#include "codegen/fuse_loops.h"
#include "codegen/interchange_sums.h"
#include "codegen/long_sums.h"
#include "codegen/loop_ir_printer.h"
#include "codegen/memory_plan.h"
#include "codegen/partition_loops.h"
#include "codegen/recompute_tables.h"
#include "codegen/split_windows.h"

namespace cot::codegen {

namespace {

LoopFunction planned(LoopFunction fn) {
  plan_memory(fn);
  return fn;
}

}  // namespace

const std::vector<LoopPass>& loop_passes() {
  // The order: the schedule decisions on the loops as lowered first (which generators of sums
  // run the sums outside their points; where the generator loops left split at a window's
  // borders, and the pieces of a split generator interchanged together; then which of the sums
  // left add in vector lanes); then
  // recomputing cheap tables removes producers, fusion then joins the sibling loops left,
  // partitioning splits the fused loops' boundary tests off, and the memory plan sees the final
  // statement order.
  static const std::vector<LoopPass> kPasses = {
      {"interchange-sums", interchange_sums,
       "run a generator of long real sums with the sum's loops outside the generator's points, "
       "accumulating a block of outputs"},
      {"split-windows", split_windows,
       "split a generator loop where the max and min bounds of its inner loops change side, and "
       "simplify each piece under its index range"},
      {"interchange-split-sums", interchange_split_sums,
       "interchange-sums for the pieces of a generator split-windows cut, sharing one block"},
      {"long-sums", mark_long_sums,
       "let the flat innermost loops of a long real sum whose terms are never masked add in "
       "vector lanes"},
      {"recompute-tables", recompute_tables,
       "compute a large table of a few operations per element at its reads instead of storing it"},
      {"fuse-loops", fuse_loops,
       "run sibling generator loops over one range as one loop when the second reads the first's "
       "elements only where they were written"},
      {"partition-loops", partition_loops,
       "peel boundary iterations off an innermost loop so its steady state tests nothing"},
      {"plan-memory", planned, "give every buffer of literal size an offset in an arena"},
  };
  return kPasses;
}

bool is_loop_pass_name(std::string_view name) {
  for (const LoopPass& p : loop_passes()) {
    if (p.name == name) return true;
  }
  return false;
}

LoopFunction optimize_loops(LoopFunction lf, const std::string& fn_name, const LoopDump& dump) {
  for (const LoopPass& pass : loop_passes()) {
    lf = pass.run(std::move(lf));
    if (dump.print && (dump.after == pass.name || dump.after == "all")) {
      dump.print(std::string(pass.name), fn_name, print_loop_function(lf));
    }
  }
  return lf;
}

}  // namespace cot::codegen
