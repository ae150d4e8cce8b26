// Sinking into guards (pass "sink"): a statement whose results are used only inside one guard
// body, or one branch of one `if`, of the same block moves into that body (before its first
// use), so it is computed only where the guard holds or the branch is taken. This is what makes
// guarded transposed code cost only its true points: in
//   t79 = t71[j, k]; t82 = [j == k] * { ...; t79 }
// the read moves under the bracket. Statements never move into gen, reduce or accum bodies (that
// would repeat their work) nor into loops; loop statements themselves never move.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult sink_into_guards(const ir::Program& program, const ir::Function& f);
// No statement (other than a loop) whose only uses are in a single guard body or a single if
// branch of the same block.
std::optional<std::string> sink_postcondition(const ir::Program& program, const ir::Function& f);

}  // namespace cot::opt
