#include "ad/activity.h"

#include "ir/binders.h"
#include "ir/regions.h"
#include "ir/uses.h"

namespace cot::ad {
namespace {

// What a block or statement binds, as a set.
template <typename Node>
void collect_bound(const Node& node, VarSet& out) {
  ir::for_each_binder(node, [&](ir::VarId v) { out.insert(v); });
}

}  // namespace

bool has_tangent(const Type& t) {
  if (t.is_tuple) {
    for (const auto& e : t.elems) {
      if (has_tangent(e)) return true;
    }
    return false;
  }
  return is_real(t.elem);
}

namespace {

// What `node` (a block or a statement) uses and does not bind itself.
template <typename Node>
VarSet unbound_uses(const Node& node) {
  VarSet bound;
  collect_bound(node, bound);
  VarSet out;
  ir::for_each_use(node, [&](ir::VarId v) {
    if (!bound.count(v)) out.insert(v);
  });
  return out;
}

}  // namespace

VarSet free_vars(const ir::Block& block) {
  return unbound_uses(block);
}

VarSet stmt_reads(const ir::Stmt& s) {
  return unbound_uses(s);
}

bool reads_any(const ir::Stmt& s, const VarSet& set) {
  if (set.empty()) return false;
  // Most statements read nothing in the set: only those that do need the variables bound
  // inside them (an inner variable in the set is not a read).
  bool any = false;
  ir::for_each_use(s, [&](ir::VarId v) { any = any || set.count(v) != 0; });
  if (!any) return false;
  VarSet bound;
  collect_bound(s, bound);
  bool free_read = false;
  ir::for_each_use(
      s, [&](ir::VarId v) { free_read = free_read || (set.count(v) != 0 && bound.count(v) == 0); });
  return free_read;
}

// The fixpoint grows `set` in place: activity is monotone, so what a pass with fewer active
// states marked in the body stays marked, and a loop met again (a nested loop, once per pass of
// the enclosing fixpoint) starts from the states already found active instead of from its
// inits alone. Copying the set per pass and restarting each nested loop from scratch made the
// analysis exponential in the nesting depth (a Hessian of three nested loops never finished).
std::vector<bool> loop_state_activity(const ir::Function& f, const ir::LoopOp& l, VarSet& set) {
  std::vector<bool> active(l.state.size(), false);
  for (size_t k = 0; k < l.state.size(); ++k) {
    const bool seeded = (l.init[k].is_var && set.count(l.init[k].var)) || set.count(l.state[k]);
    active[k] = seeded && has_tangent(f.type_of(l.state[k]));
    if (active[k]) set.insert(l.state[k]);
  }
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<bool> next = propagate(f, l.body, set);
    for (size_t k = 0; k < l.state.size(); ++k) {
      if (next[k] && !active[k] && has_tangent(f.type_of(l.state[k]))) {
        active[k] = true;
        set.insert(l.state[k]);
        changed = true;
      }
    }
  }
  return active;
}

void mark_loop_results(const ir::Stmt& s, const std::vector<bool>& active, VarSet& set) {
  const auto& l = *s.as<ir::LoopOp>();
  const size_t n = l.state.size();
  for (size_t k = 0; k < n; ++k) {
    if (!active[k]) continue;
    set.insert(s.results[k]);
    if (l.saves_states) set.insert(s.results[n + 1 + k]);  // its stack
  }
}

void propagate_stmt(const ir::Function& f, const ir::Stmt& s, VarSet& set) {
  if (const auto* l = s.as<ir::LoopOp>()) {
    mark_loop_results(s, loop_state_activity(f, *l, set), set);
    return;
  }
  // Regions: mark inner variables too, so nested statements can be classified later.
  ir::for_each_region(s, [&](const ir::Block& region) { propagate(f, region, set); });
  if (!reads_any(s, set)) return;
  for (ir::VarId r : s.results) {
    if (has_tangent(f.type_of(r))) set.insert(r);
  }
}

std::vector<bool> propagate(const ir::Function& f, const ir::Block& block, VarSet& set) {
  for (const auto& s : block.stmts) propagate_stmt(f, s, set);
  std::vector<bool> out;
  for (const auto& r : block.results) out.push_back(r.is_var && set.count(r.var) > 0);
  return out;
}

}  // namespace cot::ad
