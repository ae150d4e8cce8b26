// Static questions the fusion, push-out, sinking and code-motion passes ask about Core IR under
// the cost model (docs/language.md §10): does a block do any real arithmetic, can a statement fail
// at run time, is an index provably inside a range. Every answer is conservative: "free", "cannot
// fail" and "proved" are said only when they hold on every input.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "index/affine.h"
#include "index/predicate.h"
#include "ir/index_facts.h"
#include "ir/ir.h"
#include "ir/regions.h"
#include "ir/size_affine.h"

namespace cot::opt {

// Whether a primitive application costs an operation: a primitive whose cost kind is not Free
// applied to at least one real operand (integer and boolean work is index arithmetic).
bool prim_costs(const ir::Function& f, const ir::PrimOp& p);

// No real addition, multiplication or call anywhere in the statement or block (nested regions
// included): reads, guards, index and integer arithmetic, comparisons, conversions, tuples and
// size operations are free. Real reductions and real scatter-adds cost; calls are assumed to
// cost (their bodies are not looked at).
bool is_cost_free(const ir::Function& f, const ir::Stmt& s);
bool is_cost_free(const ir::Function& f, const ir::Block& b);

// Whether evaluating the statement (nested regions included) can raise a run-time error:
// reads (range checks), integer arithmetic (overflow, division by zero), conversions of reals to
// i64, integer reductions, calls, loops and size evaluations with quotients. Real arithmetic,
// comparisons, logic, select, real conversions, tuples and projections cannot.
bool may_fail(const ir::Function& f, const ir::Stmt& s);

using ir::size_affine;  // ir/size_affine.h

using ir::facts_of;
using ir::IndexFacts;  // ir/index_facts.h

// Whether every index of the read is affine and provably in range where `facts` hold (then the
// read cannot fail).
bool read_in_range(const ir::Function& f, const ir::IndexOp& r, const IndexFacts& facts);

// The region that opened a block, as the passes see it when they walk the region tree.
using ScopeFrame = ir::RegionFrame;

// Whether `v` occurs in `b` (nested regions included) anywhere but inside affine index
// expressions and affine predicate constraints: as an operand, a computed index, a result, ...
bool used_non_affinely(const ir::Block& b, ir::VarId v);

// Whether the statement (its result types, extents, shapes and size reads, nested regions
// included) names one of the given size variables.
bool mentions_sizes(const ir::Function& f, const ir::Stmt& s,
                    const std::vector<std::string>& names);

// Every variable the statement reads (nested regions included), including those it binds
// itself inside its regions.
std::vector<ir::VarId> stmt_uses(const ir::Stmt& s);

// Whether the statement is or holds a region that repeats its body (gen, reduce, accum, loop):
// work that grows with sizes, where a statement without one does constant work.
bool repeats(const ir::Stmt& s);

}  // namespace cot::opt
