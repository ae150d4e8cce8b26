// Alpha-equivalence of Core IR statements: whether two statements compute the same values,
// comparing their operations structurally up to a renaming of the variables they bind (index
// variables, loop states and counters, results of statements in their regions), so that
// `t9 = sum i. x[i]` and `t12 = sum k. x[k]` are equal. Free variables must be the same
// variables; literals compare by type and bits (-0 != 0, NaN == the same NaN). The operands of
// commutative primitives (+, *, max, min, ==, !=, &&, ||) compare in either order. Saving
// loops are never equal to anything (each binds its own dynamic size). A hash consistent with
// the equality lets CSE find candidates in constant time.
//
// Regions compare as dataflow graphs: two blocks are equal when their results are, each
// followed to the statement that defines it. So the order of independent statements does not
// matter (`x[i] * y[i]` and `y[j] * x[j]` read their operands in different orders), and a
// statement whose results the block does not use is ignored (it is dead work). Results of
// matched statements must have equal types. The compared statements' own results are not
// compared (callers decide what equal statements mean for them), but their types are.
#pragma once

#include <cstddef>

#include "ir/ir.h"
#include "ir/regions.h"

namespace cot::opt {

// Whether `a` and `b`, statements of `f`, are equal up to renaming of the variables they bind.
bool alpha_equal(const ir::Function& f, const ir::Stmt& a, const ir::Stmt& b);
// The same for two blocks of `f` (the variables each binds are matched in order; free variables
// must be identical).
bool alpha_equal_blocks(const ir::Function& f, const ir::Block& a, const ir::Block& b);
// A hash of a statement that alpha-equal statements share.
size_t alpha_hash(const ir::Function& f, const ir::Stmt& s);
// Whether p is a primitive whose two operands may be swapped (+, *, max, min, ==, !=, &&, ||).
bool is_commutative(Prim p);

using ir::for_each_region;

}  // namespace cot::opt
