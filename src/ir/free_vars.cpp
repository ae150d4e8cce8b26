#include "ir/free_vars.h"

#include "ir/binders.h"
#include "ir/uses.h"

namespace cot::ir {
namespace {

// What a block or statement binds, as a set.
template <typename Node>
void collect_bound(const Node& node, VarSet& out) {
  for_each_binder(node, [&](VarId v) { out.insert(v); });
}

// What `node` (a block or a statement) uses and does not bind itself.
template <typename Node>
VarSet unbound_uses(const Node& node) {
  VarSet bound;
  collect_bound(node, bound);
  VarSet out;
  for_each_use(node, [&](VarId v) {
    if (!bound.count(v)) out.insert(v);
  });
  return out;
}

}  // namespace

VarSet free_vars(const Block& block) {
  return unbound_uses(block);
}

VarSet stmt_reads(const Stmt& s) {
  return unbound_uses(s);
}

bool reads_any(const Stmt& s, const VarSet& set) {
  if (set.empty()) return false;
  // Most statements read nothing in the set: only those that do need the variables bound
  // inside them (an inner variable in the set is not a read).
  bool any = false;
  for_each_use(s, [&](VarId v) { any = any || set.count(v) != 0; });
  if (!any) return false;
  VarSet bound;
  collect_bound(s, bound);
  bool free_read = false;
  for_each_use(
      s, [&](VarId v) { free_read = free_read || (set.count(v) != 0 && bound.count(v) == 0); });
  return free_read;
}

}  // namespace cot::ir
