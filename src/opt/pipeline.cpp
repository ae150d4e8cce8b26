#include "opt/pipeline.h"

#include <cstdint>
#include <exception>
#include <optional>
#include <string>

#include "ir/printer.h"
#include "ir/verifier.h"
#include "opt/cse.h"
#include "opt/dce.h"
#include "opt/dynamic_sizes.h"
#include "opt/fuse.h"
#include "opt/gen_pushout.h"
#include "opt/if_merge.h"
#include "opt/inline.h"
#include "opt/iverson.h"
#include "opt/let_lift.h"
#include "opt/licm.h"
#include "opt/loop_batch.h"
#include "opt/loop_normalize.h"
#include "opt/output_fission.h"
#include "opt/pair_elim.h"
#include "opt/partial_eval.h"
#include "opt/region_cse.h"
#include "opt/scatter.h"
#include "opt/simplify.h"
#include "opt/sink.h"
#include "opt/transposed_cse.h"
#include "opt/unswitch.h"

namespace cot::opt {

const std::vector<Pass>& pipeline_passes() {
  // The order of one round. Inlining first, so every later pass sees one region tree; the
  // normal forms of [Bernstein20] §5 next; then fusion, which exposes brackets to simplify and
  // statements to sink into guards; code motion; and the clean-ups last, which remove what
  // the others left dead. Rounds repeat until one changes nothing.
  static const std::vector<Pass> kPasses = {
      {"inline", 2, inline_functions, no_inlinable_calls,
       "replace calls by the callee's body, transitively"},
      {"let-lift", 2, let_lift, let_lift_postcondition,
       "flatten nested generators and sums into one region ([Bernstein20] 5.1-5.10, 5.27)",
       /*costly_postcondition=*/true},
      {"pair-elim", 2, eliminate_pairs, pair_elim_postcondition,
       "project tuples built in the function to their elements ([Bernstein20] 5.11-5.20)"},
      {"simplify", 1, simplify_algebra, simplify_postcondition,
       "fold constants, drop algebraic identities, propagate strong zeros"},
      {"partial-eval", 2, partially_evaluate, partial_eval_postcondition,
       "evaluate what is known at compile time: loops of 0 or 1 trips, constant ifs "
       "([HuotShaikhha])"},
      {"gen-pushout", 2, push_out_generators, gen_pushout_postcondition,
       "move guards inside generators and reads inside guards ([Bernstein20] 5.21-5.23)"},
      {"output-fission", 2, split_outputs, output_fission_postcondition,
       "materialize a generator's costly per-point value so its elements can be fused",
       /*costly_postcondition=*/true},
      {"fuse", 2, fuse_producers, fuse_postcondition,
       "replace reads of a generator by its body where no work is duplicated"},
      {"iverson", 2, simplify_brackets, iverson_postcondition,
       "merge brackets, eliminate sums over equalities, tighten ranges, drop empty regions"},
      {"scatter", 2, scatter_sums, scatter_postcondition,
       "turn a generator's sum of one-hot terms of its index into a scatter-add (a gather in "
       "O(k n) into an accum in O(n))"},
      {"loop-batch", 2, batch_loops, loop_batch_postcondition,
       "run a loop in a region's body once, with a state per point (vmap of a scan)"},
      {"sink", 2, sink_into_guards, sink_postcondition,
       "move statements used only under a bracket into it"},
      {"unswitch", 2, unswitch_loops, unswitch_postcondition,
       "split a region that branches on an outer condition into one copy per branch"},
      {"licm", 2, hoist_invariants, licm_postcondition,
       "hoist loop-invariant statements out of generators, reductions and loops"},
      {"loop-normalize", 2, normalize_loops, loop_normalize_postcondition,
       "drop invariant loop state, unroll loops of 0 or 1 trips ([Shaikhha22])"},
      {"if-merge", 2, merge_ifs, if_merge_postcondition,
       "merge the ifs of a block on one condition; fold branches on a condition already known"},
      {"cse", 1, eliminate_common_subexpressions, cse_postcondition,
       "share statements equal up to renaming that another dominates"},
      {"transposed-cse", 2, share_transposed_generators, transposed_cse_postcondition,
       "share a generator equal to a dominating one up to the order of its indices"},
      {"region-cse", 2, share_across_regions, region_cse_postcondition,
       "materialize a per-point value that sibling regions over the same ranges recompute",
       /*costly_postcondition=*/true},
      {"dce", 1, eliminate_dead_code, dce_postcondition,
       "remove statements, results and loop state nothing uses"},
  };
  return kPasses;
}

bool is_pass_name(std::string_view name) {
  for (const auto& p : pipeline_passes()) {
    if (p.name == name) return true;
  }
  return false;
}

namespace {

// Checking mode (PipelineOptions::check_change_reports): a pass that reported no change must
// have returned the function it was given, compared by printed form. A report of a change
// whose print is identical (a pass that rewrote something into an equal form) is accepted: it
// only costs the pipeline a round. The print of the current function is kept while passes
// report no change, so checking prints the function about once per pass.
class ChangeReportCheck {
 public:
  ChangeReportCheck(const ir::Program& program, bool on) : program_(program), on_(on) {}

  // Before a pass runs on `cur`.
  void before(const ir::Function& cur) {
    if (on_ && !printed_) printed_ = ir::print_function(program_, cur);
  }
  // After it returned `r`: what is wrong, when it reported no change but prints differently.
  std::optional<std::string> after(const PassResult& r) {
    if (!on_) return std::nullopt;
    if (r.changed) {
      printed_.reset();
      return std::nullopt;
    }
    if (ir::print_function(program_, r.function) == *printed_) return std::nullopt;
    return "the pass reported no change, but the function it returned prints differently";
  }
  // The pipeline changed the function itself (dropped dynamic sizes).
  void forget() { printed_.reset(); }

 private:
  const ir::Program& program_;
  bool on_;
  std::optional<std::string> printed_;
};

}  // namespace

std::variant<ir::Function, PipelineError> optimize_function(const ir::Program& program,
                                                            const ir::Function& f,
                                                            const PipelineOptions& options,
                                                            const std::vector<Pass>& passes) {
  if (options.level <= 0) return f;
  ir::Function cur = f;
  const Pass* running = nullptr;
  ChangeReportCheck check(program, options.check_change_reports);
  // A pass is a pure function of the function it is given: one that changed nothing is not run
  // again until another pass has changed the function (in the round that confirms the fixed
  // point, the passes after the last change are not run again). `version` counts the changes;
  // `unchanged_at[k]` is the version pass k last left as it was (-1: none).
  int64_t version = 0;
  std::vector<int64_t> unchanged_at(passes.size(), -1);
  try {
    for (int round = 0; round < options.max_rounds; ++round) {
      // The fixed point: a round in which no pass changed the function.
      bool round_changed = false;
      for (size_t k = 0; k < passes.size(); ++k) {
        const Pass& pass = passes[k];
        if (pass.min_level > options.level || unchanged_at[k] == version) continue;
        running = &pass;
        check.before(cur);
        PassResult r = pass.run(program, cur);
        if (auto lie = check.after(r)) return PipelineError{f.name, std::string(pass.name), *lie};
        cur = std::move(r.function);
        const bool pruned = prune_dynamic_sizes(cur);
        if (pruned) check.forget();
        round_changed = round_changed || r.changed || pruned;
        if (r.changed || pruned) ++version;
        if (!r.changed && !pruned) unchanged_at[k] = version;
        // The verifier checks f against the program's callees, which passes do not change.
        auto broken = ir::verify_function(program, cur);
        if (!broken.empty()) {
          return PipelineError{f.name, std::string(pass.name),
                               "the IR does not verify: " + broken.front().message};
        }
        if (pass.postcondition != nullptr &&
            (!pass.costly_postcondition || options.check_costly_postconditions)) {
          if (auto post = pass.postcondition(program, cur)) {
            return PipelineError{f.name, std::string(pass.name),
                                 "the postcondition does not hold: " + *post};
          }
        }
        if (options.dump && (options.dump_after == pass.name || options.dump_after == "all")) {
          options.dump(pass.name, program, cur);
        }
      }
      running = nullptr;
      if (!round_changed) break;
    }
  } catch (const std::exception& e) {
    return PipelineError{f.name, running != nullptr ? std::string(running->name) : "pipeline",
                         e.what()};
  }
  return cur;
}

OptimizedProgram optimize_each(ir::Program program, const PipelineOptions& options,
                               const std::function<bool(const ir::Function&)>& select) {
  OptimizedProgram out;
  if (options.level > 0) {
    for (size_t k = 0; k < program.functions.size(); ++k) {
      const ir::Function& f = program.functions[k];
      if (!select(f) || (f.body.stmts.empty() && f.body.results.empty())) continue;
      auto r = optimize_function(program, f, options);
      if (auto* e = std::get_if<PipelineError>(&r)) {
        out.failed.push_back(std::move(*e));
        continue;
      }
      program.functions[k] = std::move(std::get<ir::Function>(r));
    }
  }
  out.program = std::move(program);
  return out;
}

std::variant<ir::Program, PipelineError> optimize_program(
    ir::Program program, const PipelineOptions& options,
    const std::function<bool(const ir::Function&)>& select) {
  OptimizedProgram r = optimize_each(std::move(program), options, select);
  if (!r.failed.empty()) return r.failed.front();
  return std::move(r.program);
}

}  // namespace cot::opt
