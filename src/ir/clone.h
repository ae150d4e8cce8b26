// Copying Core IR blocks between functions (or within one): the basis of inlining and of the
// AD passes, which copy primal code into derived functions. Every variable the block binds gets
// a fresh copy; free variables, size variables and index variables are mapped as the caller
// says.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/ir.h"

namespace cot::ir {

// How free variables and size variables of a block are mapped when it is copied.
struct CloneMap {
  // Free variables (used but not bound in the block) -> atoms in the destination function.
  // Every free variable must be mapped (throw std::logic_error otherwise: a compiler bug),
  // except when `from` and `to` are the same function object, where unmapped free variables
  // are kept as they are.
  std::unordered_map<ir::VarId, ir::Atom> atoms;
  // Variables to replace, inside affine index expressions and affine predicates, by an affine
  // expression over destination variables (used when the AD transposer solves an index
  // variable as `j - 1`). A variable here should also be in `atoms` for its non-affine uses.
  std::unordered_map<ir::VarId, Affine> affine;
  // Size variables by name -> size expressions of the destination (types, extents, shapes,
  // SizeOp). Names not in the map are kept.
  std::map<std::string, SizeExpr> sizes;
};

// Copies `src`, a block of function `from`, into function `to` with fresh variables for
// everything the block binds (statement results, index variables, loop states and counters,
// nested regions), names kept as hints, types substituted through map.sizes. Returns the copy;
// the caller appends its statements where it wants. After the call, map.atoms also maps every
// variable bound at the top level of src to its copy (so callers can find the copies of
// results); variables bound in nested regions are mapped too, and a variable the block binds is
// removed from map.affine. In an affine index or affine predicate, a free variable mapped to a
// variable is renamed, one in map.affine is substituted, and one mapped to an i64 literal is
// folded into the constant (x[i + 1] with i = 2 becomes the affine x[3]), so indices stay
// affine. Only when that arithmetic overflows does the index become a computed index (the
// predicate leaf a bool atom), computed by emitted i64 statements with checked arithmetic
// before the statement that reads it. A boolean predicate atom mapped to a literal folds to
// true or false.
// A saving loop's dynamic size variable (SizeVar with param == -1 in `from`) gets a fresh
// dynamic SizeVar in `to` (fresh unique name) and the stacks' types are renamed to it; the
// renaming is recorded in map.sizes.
ir::Block clone_block(const ir::Function& from, const ir::Block& src, ir::Function& to,
                      CloneMap& map);

// An extension point for passes built on copying (inline_calls): called for every CallOp
// statement met while copying, with the call's arguments already mapped into `to`. It may append
// statements to `out` (the block being built, where the call would go) and return the atoms
// that stand for the call's results; or nullopt, and the call is copied as it is.
using CallHook = std::function<std::optional<std::vector<ir::Atom>>(
    const ir::Stmt& call, const std::vector<ir::Atom>& args, ir::Block& out)>;
ir::Block clone_block(const ir::Function& from, const ir::Block& src, ir::Function& to,
                      CloneMap& map, const CallHook& on_call);

}  // namespace cot::ir
