// Output fission (pass "output-fission"): a generator that computes a costly per-point value v
// and yields a generator over it,
//      X = for J. { S; for I. E }          (E reads v, bound by S, only as v[a...])
// becomes
//      P = for J. { S; v }
//      X = for J, I. { S'; E[v[a...] := P[J, a...]] }
// where S' is what of S is cheap to compute per point (cost-free scalar statements that depend
// on nothing costly: index arithmetic, reads of single elements). S runs once per point of J,
// as before, and each element of X is now cheap, so fusion can compute it where X is read.
// That is what a forward-mode Jacobian needs: its columns come out as X = for j. jvp(f)(x, e_j)
// and the Jacobian's layout reads them transposed (for o, j. X[j, o]), a copy whose reads
// stride over whole columns (29% of HT's Jacobian). The rewrite is tried on a copy and kept only
// when fusion then removes X (X's one use is such a read); otherwise P would only add memory.
// As with loop fission, S now runs for every point of J before any of E: a program that fails
// still fails, but when both fail it may report S's error first where E's came first before.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult split_outputs(const ir::Program& program, const ir::Function& f);
// No generator left that the rewrite applies to and fusion would then remove.
std::optional<std::string> output_fission_postcondition(const ir::Program& program,
                                                        const ir::Function& f);

}  // namespace cot::opt
