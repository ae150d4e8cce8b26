// Producer-consumer fusion (pass "fuse", design.md §8): a read X[a1..ak] of a tensor bound
// by a generator X = for i1..ik. e becomes e[i := a], the body copied at the read (a read with
// fewer indices becomes a generator over the remaining index variables; a read with more indices
// reads the copied body's value). This also fuses reductions with their producers:
// sum i. X[i] * Y[i] reads the elements where they are computed.
//
// Fusion is applied only when the cost model says it duplicates no work and the read is
// provably in bounds ([Bernstein20] rule 5.21 needs the access to be in bounds; a read out of
// range must still fail):
//  (a) the producer's body is cost-free (static_cost.h) and does constant work per element (no
//      nested generator, reduction, scatter or loop), e.g. diag(x) = for i, j. [i == j] * x[i]:
//      it is fused into every read;
//  (b) X has exactly one use, that read; no loop body or while condition lies between X's
//      definition and the read; and the read's affine indices determine every index variable of
//      the regions between them (full column rank), so each element is computed at most once.
// A producer all of whose reads were fused is removed.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult fuse_producers(const ir::Program& program, const ir::Function& f);
// No read remains that rules (a) or (b) would fuse.
std::optional<std::string> fuse_postcondition(const ir::Program& program, const ir::Function& f);

// The fusion engine, shared with gen-pushout (rule 5.21): rewrites f in place until no read
// can be fused, with rule (a) only when `only_cost_free`. Returns whether anything changed.
bool fuse_reads(ir::Function& f, bool only_cost_free);
// The first read that fuse_reads would fuse, described, or nullopt.
std::optional<std::string> find_fusible_read(const ir::Program& program, const ir::Function& f,
                                             bool only_cost_free);

}  // namespace cot::opt
