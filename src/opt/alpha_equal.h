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
#include <functional>
#include <vector>

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
// The hash alpha_hash gives a variable free in the statement: its id's.
size_t free_var_hash(ir::VarId v);
// The same hash, with each variable free in `s` (bound outside it) hashed by `free` instead of
// by its id: with value numbers (region_cse_filter.cpp), statements equal once CSE has merged
// their operands hash alike. Statements alpha-equal with the same free variables still do.
using FreeHash = std::function<size_t(ir::VarId)>;
size_t alpha_hash(const ir::Function& f, const ir::Stmt& s, const FreeHash& free);
// The hash, so computed, of the variable `v` that a statement of the block `b` binds (as a
// statement reading it would see it if `b`'s statements were in its region).
size_t alpha_hash_of_result(const ir::Function& f, const ir::Block& b, ir::VarId v,
                            const FreeHash& free);
// Value numbers: for every variable of f, the hash of what computes it (the statement binding
// it, its free operands by their own numbers), or free_var_hash for a variable no statement
// binds (parameters, index variables, loop states). Statements CSE would merge once their
// operands are merged have equal numbers; unequal numbers mean CSE cannot merge them.
std::vector<size_t> value_numbers(const ir::Function& f);
// Whether p is a primitive whose two operands may be swapped (+, *, max, min, ==, !=, &&, ||).
bool is_commutative(Prim p);

using ir::for_each_region;

}  // namespace cot::opt
