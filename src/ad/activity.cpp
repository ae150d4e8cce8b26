#include "ad/activity.h"

#include "ir/regions.h"

namespace cot::ad {

bool has_tangent(const Type& t) {
  if (t.is_tuple) {
    for (const auto& e : t.elems) {
      if (has_tangent(e)) return true;
    }
    return false;
  }
  return is_real(t.elem);
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
