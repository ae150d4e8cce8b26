#include "opt/licm.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/printer.h"
#include "ir/regions.h"
#include "ir/rewriter.h"
#include "ir/uses.h"
#include "opt/dynamic_sizes.h"
#include "opt/guard_projection.h"
#include "opt/static_cost.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

using ir::Atom;
using ir::Block;
using ir::Stmt;
using ir::VarId;

// A saving loop binds its count as a dynamic size that its stacks' types name: it stays where
// it is, as does any statement binding a dynamic size (region-cse's reads of a shared
// trajectory bind the count of the loop they replace). A plain loop (for or while) is a value like
// any other: invariant, it moves out, under a guard on the region running at least once unless it
// provably does.
bool is_saving_loop(const Stmt& s) {
  const auto* l = s.as<ir::LoopOp>();
  return l != nullptr && l->saves_states;
}

// The body of a region statement whose invariants may move out, with the variables that vary
// per point or iteration and the condition that it runs at least once.
struct Region {
  Block* body = nullptr;
  std::vector<VarId> variant;
  // Whether it provably runs at least once; else `nonempty`, when it can be stated, is a
  // predicate that holds exactly when it runs at least once.
  bool runs = false;
  std::optional<Pred> nonempty;
  // The index variables (or the counter) with their ranges as constraints `e >= 0`; false
  // when a range is not affine.
  std::vector<VarId> indices;
  std::vector<Affine> ranges;
  bool affine_ranges = true;
  // What holds where the region statement is (and where a hoisted statement would run).
  IndexFacts outside;
};

// Whether the statement may fail where `facts` hold: a read whose affine indices are provably
// in range cannot (a read moved out of a region that may run zero times then needs no guard).
bool may_fail_at(const ir::Function& f, const Stmt& s, const IndexFacts& facts) {
  if (const auto* r = s.as<ir::IndexOp>()) return !read_in_range(f, *r, facts);
  return may_fail(f, s);
}

std::optional<Region> region_of(const ir::Function& f, Stmt& s, const ir::Scope& scope) {
  const IndexFacts& facts = scope.facts();
  // Whether e - 1 >= 0 follows from the enclosing ranges and guards.
  auto proved_positive = [&](const Affine& e1) { return facts.proves(e1); };
  Region r;
  r.outside = facts;
  const std::vector<ir::IndexVar>* ivars = nullptr;
  if (auto* g = s.as<ir::GenOp>()) {
    r.body = &g->body;
    ivars = &g->ivars;
  } else if (auto* red = s.as<ir::ReduceOp>()) {
    r.body = &red->body;
    ivars = &red->ivars;
  } else if (auto* a = s.as<ir::AccumOp>()) {
    r.body = &a->body;
    ivars = &a->ivars;
  } else if (auto* l = s.as<ir::LoopOp>(); l != nullptr && !l->is_while) {
    r.body = &l->body;
    r.variant = l->state;
    if (l->iter >= 0) {
      r.variant.push_back(l->iter);
      r.indices.push_back(l->iter);
      // 0 <= iter <= count - 1
      Affine c =
          l->count.is_var ? Affine::var(l->count.var) : Affine::constant(l->count.lit.integer);
      auto c1 = Affine::add(c, Affine::constant(-1));
      auto up = c1 ? Affine::sub(*c1, Affine::var(l->iter)) : std::nullopt;
      if (up) {
        r.ranges.push_back(Affine::var(l->iter));
        r.ranges.push_back(*up);
      } else {
        r.affine_ranges = false;
      }
    } else {
      r.affine_ranges = false;
    }
    if (!l->count.is_var) {
      r.runs = l->count.lit.integer >= 1;
      if (!r.runs) r.nonempty = Pred::falsity();
    } else {
      // count >= 1, i.e. count - 1 >= 0
      if (auto c = Affine::add(Affine::var(l->count.var), Affine::constant(-1))) {
        r.runs = proved_positive(*c);
        if (!r.runs) r.nonempty = Pred::ge0(*c);
      }
    }
    return r;
  } else {
    return std::nullopt;
  }
  std::vector<Pred> conds;
  bool stateable = true;
  for (const auto& iv : *ivars) {
    r.variant.push_back(iv.var);
    r.indices.push_back(iv.var);
    if (!add_range_constraints(f, iv.var, iv.extent, r.ranges)) r.affine_ranges = false;
    if (auto c = iv.extent.as_constant()) {
      if (*c < 1) conds.push_back(Pred::falsity());
      continue;
    }
    auto e = size_affine(f, iv.extent);
    auto e1 = e ? Affine::add(*e, Affine::constant(-1)) : std::nullopt;
    if (!e1) {
      stateable = false;
      continue;
    }
    if (proved_positive(*e1)) continue;
    conds.push_back(Pred::ge0(*e1));
  }
  if (conds.empty()) {
    r.runs = stateable;
  } else if (stateable) {
    r.nonempty = Pred::conj(std::move(conds));
  }
  return r;
}

// Which top-level statements of a region body move out: `plain` as they are, `guarded` into a
// guard on the region running at least once.
struct Plan {
  std::vector<bool> plain, guarded;
  std::vector<size_t> group;  // guarded: the index of the first statement of its group
  bool any() const {
    return std::find(plain.begin(), plain.end(), true) != plain.end() ||
           std::find(guarded.begin(), guarded.end(), true) != guarded.end();
  }
};

Plan plan_hoist(const ir::Function& f, const Region& r) {
  const Block& body = *r.body;
  const size_t n = body.stmts.size();
  Plan plan{std::vector<bool>(n, false), std::vector<bool>(n, false), {}};
  std::unordered_set<VarId> variant(r.variant.begin(), r.variant.end());
  std::unordered_set<VarId> in_guard;
  // Dynamic sizes bound in the body (by saving loops) vary too.
  std::vector<std::string> dynamic;
  for (const auto& s : body.stmts) append_dynamic_sizes_bound_by(f, s, dynamic);
  const bool may_guard = r.nonempty.has_value() && r.nonempty->kind != Pred::Kind::False;
  for (size_t k = 0; k < n; ++k) {
    const Stmt& s = body.stmts[k];
    bool is_variant = is_saving_loop(s) || s.results.empty() ||
                      std::any_of(s.results.begin(), s.results.end(),
                                  [&](VarId v) { return is_dynamic_size(f, v); });
    bool needs_guard = false;
    if (!is_variant) {
      for (VarId v : stmt_uses(s)) {
        if (variant.count(v) != 0) is_variant = true;
        if (in_guard.count(v) != 0) needs_guard = true;
      }
      if (!is_variant && mentions_sizes(f, s, dynamic)) is_variant = true;
    }
    if (!is_variant && !needs_guard && !r.runs) {
      needs_guard = !is_cost_free(f, s) || may_fail_at(f, s, r.outside);
    }
    if (!is_variant && needs_guard && !may_guard) is_variant = true;
    if (is_variant) {
      for (VarId v : s.results) variant.insert(v);
    } else if (needs_guard) {
      plan.guarded[k] = true;
      for (VarId v : s.results) in_guard.insert(v);
    } else {
      plan.plain[k] = true;
    }
  }
  // Guarded statements whose results nothing left in the body needs are dead: leave them.
  std::unordered_set<VarId> needed;
  for (size_t k = 0; k < n; ++k) {
    if (plan.plain[k] || plan.guarded[k]) continue;
    for (VarId v : stmt_uses(body.stmts[k])) needed.insert(v);
  }
  for (const auto& a : body.results) {
    if (a.is_var) needed.insert(a.var);
  }
  // Guarded statements form groups that read each other's results; a group whose results
  // nothing left in the body reads is dead: it stays.
  std::vector<size_t> group(n);
  for (size_t k = 0; k < n; ++k) group[k] = k;
  auto root = [&](size_t k) {
    while (group[k] != k) k = group[k] = group[group[k]];
    return k;
  };
  std::unordered_map<VarId, size_t> bound_by;
  for (size_t k = 0; k < n; ++k) {
    if (!plan.guarded[k]) continue;
    for (VarId v : stmt_uses(body.stmts[k])) {
      if (auto it = bound_by.find(v); it != bound_by.end()) group[root(k)] = root(it->second);
    }
    for (VarId v : body.stmts[k].results) bound_by[v] = k;
  }
  std::unordered_set<size_t> live;
  for (size_t k = 0; k < n; ++k) {
    if (!plan.guarded[k]) continue;
    for (VarId v : body.stmts[k].results) {
      if (needed.count(v) != 0) live.insert(root(k));
    }
  }
  plan.group.assign(n, 0);
  for (size_t k = 0; k < n; ++k) {
    if (!plan.guarded[k]) continue;
    if (live.count(root(k)) == 0) {
      plan.guarded[k] = false;
    } else {
      plan.group[k] = root(k);
    }
  }
  return plan;
}

// A guard of a region body whose body has costly statements that do not vary in the region:
// they move before the region under `pred`, which holds exactly when the guard's body runs at
// least once (the region's ranges and the guard's predicate, the index variables projected
// away), so they run once when the original ran them at least once.
struct GuardPlan {
  size_t guard = 0;         // the guard statement's index in the region body
  std::vector<bool> moves;  // per statement of the guard's body
  Pred pred;
};

std::optional<GuardPlan> plan_guard_hoist(const ir::Function& f, const Region& r,
                                          const ir::Scope& scope) {
  if (!r.affine_ranges) return std::nullopt;
  const Block& body = *r.body;
  std::unordered_set<VarId> variant(r.variant.begin(), r.variant.end());
  std::vector<std::string> dynamic;
  for (const auto& s : body.stmts) {
    for (VarId v : s.results) variant.insert(v);
    append_dynamic_sizes_bound_by(f, s, dynamic);
  }
  for (size_t gi = 0; gi < body.stmts.size(); ++gi) {
    const auto* g = body.stmts[gi].as<ir::GuardOp>();
    if (g == nullptr) continue;
    std::vector<Affine> cs = r.ranges;
    std::vector<Pred> atoms;
    if (!split_conjunction(g->pred, cs, atoms)) continue;
    std::vector<int32_t> pvars;
    g->pred.collect_vars(pvars);
    const bool outside_only = std::all_of(pvars.begin(), pvars.end(), [&](VarId v) {
      return variant.count(v) == 0 ||
             std::find(r.indices.begin(), r.indices.end(), v) != r.indices.end();
    });
    if (!outside_only) continue;
    const Block& gb = g->body;
    const size_t n = gb.stmts.size();
    // A saving loop in the guard's body binds a dynamic size that later statements may name.
    std::vector<std::string> inner_dynamic = dynamic;
    for (const auto& s : gb.stmts) append_dynamic_sizes_bound_by(f, s, inner_dynamic);
    std::vector<bool> inv(n, false);
    std::unordered_set<VarId> inner_variant = variant;
    for (size_t k = 0; k < n; ++k) {
      const Stmt& s = gb.stmts[k];
      bool ok = !is_saving_loop(s) && !s.results.empty() && !mentions_sizes(f, s, inner_dynamic);
      for (VarId v : s.results) ok = ok && !f.type_of(v).is_tuple;
      for (VarId v : stmt_uses(s)) ok = ok && inner_variant.count(v) == 0;
      if (ok) {
        inv[k] = true;
      } else {
        for (VarId v : s.results) inner_variant.insert(v);
      }
    }
    // Only what the guard's body still needs moves; something costly that repeats work (a
    // region) must: scalar work under a guard is left where it is (a one-hot [j == 0] * e runs
    // once anyway, and the printed derivatives keep [UrbanSmagt]'s index structure).
    std::unordered_set<VarId> needed;
    for (const auto& a : gb.results) {
      if (a.is_var) needed.insert(a.var);
    }
    std::vector<bool> moves(n, false);
    bool costly = false;
    for (size_t k = n; k-- > 0;) {
      const Stmt& s = gb.stmts[k];
      const bool live = std::any_of(s.results.begin(), s.results.end(),
                                    [&](VarId v) { return needed.count(v) != 0; });
      if (!live) continue;
      for (VarId v : stmt_uses(s)) needed.insert(v);
      if (inv[k]) {
        moves[k] = true;
        costly = costly || (repeats(s) && !is_cost_free(f, s));
      }
    }
    if (!costly) continue;
    auto proj = project_constraints(
        std::move(cs), r.indices, scope.facts(), [](VarId) { return false; },
        [&](VarId v) { return variant.count(v) != 0; });
    if (!proj) continue;  // never runs, or not exact
    std::vector<Pred> conds = std::move(atoms);
    conds.insert(conds.end(), proj->outer.begin(), proj->outer.end());
    return GuardPlan{gi, std::move(moves), Pred::conj(std::move(conds))};
  }
  return std::nullopt;
}

class Hoister : public ir::Rewriter<Hoister> {
 public:
  explicit Hoister(ir::Function& f) : Rewriter(f), f_(f) {}

  // Whether a statement moved.
  bool changed() const { return changed_; }

  // Every statement, after its regions: a region statement's invariants move before it.
  void visit(Stmt& s, ir::StmtList& out) {
    rewrite_regions(s);
    hoist(s, out);
    out.push_back(std::move(s));
  }

 private:
  void hoist(Stmt& s, std::vector<Stmt>& out) {
    auto r = region_of(f_, s, scope());
    if (!r) return;
    // A guard emptied of its invariants may be invariant itself: plain hoisting again.
    hoist_plain(s, *r, out);
    while (auto gp = plan_guard_hoist(f_, *r, scope())) {
      hoist_from_guard(s, *r, *gp, out);
      hoist_plain(s, *r, out);
    }
  }

  // The planned statements of a guard in the region body move before the region, into a
  // guard on `pred` (or bare when it is true); the guard's body reads their results.
  void hoist_from_guard(const Stmt& s, const Region& r, const GuardPlan& gp,
                        std::vector<Stmt>& out) {
    Block& gb = r.body->stmts[gp.guard].as<ir::GuardOp>()->body;
    changed_ = true;  // a plan moves at least one statement
    std::vector<Stmt> keep, moved;
    for (size_t k = 0; k < gb.stmts.size(); ++k) {
      (gp.moves[k] ? moved : keep).push_back(std::move(gb.stmts[k]));
    }
    gb.stmts = std::move(keep);
    if (gp.pred.kind == Pred::Kind::True) {
      for (auto& m : moved) out.push_back(std::move(m));
      return;
    }
    std::unordered_set<VarId> used;
    ir::for_each_use(gb, [&](VarId v) { used.insert(v); });
    ir::GuardOp guard;
    guard.pred = gp.pred;
    std::vector<VarId> results;
    Substitution rename;
    for (auto& m : moved) {
      for (VarId v : m.results) {
        if (used.count(v) == 0) continue;
        // Copied before new_var grows the table.
        std::string name = f_.vars[static_cast<size_t>(v)].name;
        Type t = f_.vars[static_cast<size_t>(v)].type;
        VarId outer = f_.new_var(std::move(name), std::move(t));
        guard.body.results.push_back(Atom::of(v));
        results.push_back(outer);
        rename[v] = Atom::of(outer);
      }
      guard.body.stmts.push_back(std::move(m));
    }
    out.push_back(Stmt{std::move(results), std::move(guard), s.span});
    substitute_uses(gb, rename);
  }

  void hoist_plain(Stmt& s, const Region& region, std::vector<Stmt>& out) {
    const Region* r = &region;
    Plan plan = plan_hoist(f_, *r);
    if (!plan.any()) return;
    changed_ = true;
    Block& body = *r->body;
    std::vector<Stmt> keep, guarded;
    for (size_t k = 0; k < body.stmts.size(); ++k) {
      if (plan.plain[k]) {
        out.push_back(std::move(body.stmts[k]));
      } else if (plan.guarded[k]) {
        guarded.push_back(std::move(body.stmts[k]));
      } else {
        keep.push_back(std::move(body.stmts[k]));
      }
    }
    body.stmts = std::move(keep);
    if (guarded.empty()) return;
    // One guard per group of guarded statements that read each other's results (so that a
    // group independent of an outer region's index can move out of that region too).
    std::vector<size_t> group;
    for (size_t k = 0; k < plan.guarded.size(); ++k) {
      if (plan.guarded[k]) group.push_back(plan.group[k]);
    }
    const size_t g = guarded.size();
    // The guarded statements' results the rest of the body reads become the guards' results.
    std::unordered_set<VarId> used;
    ir::for_each_use(body, [&](VarId v) { used.insert(v); });
    Substitution rename;
    for (size_t k = 0; k < g; ++k) {
      if (k > 0 && std::find(group.begin(), group.begin() + static_cast<ptrdiff_t>(k), group[k]) !=
                       group.begin() + static_cast<ptrdiff_t>(k)) {
        continue;  // its group was emitted with its first statement
      }
      ir::GuardOp guard;
      guard.pred = *r->nonempty;
      std::vector<VarId> results;
      for (size_t j = k; j < g; ++j) {
        if (group[j] != group[k]) continue;
        for (VarId v : guarded[j].results) {
          if (used.count(v) == 0) continue;
          // Copied before new_var grows the table.
          std::string name = f_.vars[static_cast<size_t>(v)].name;
          Type t = f_.vars[static_cast<size_t>(v)].type;
          VarId outer = f_.new_var(std::move(name), std::move(t));
          guard.body.results.push_back(Atom::of(v));
          results.push_back(outer);
          rename[v] = Atom::of(outer);
        }
        guard.body.stmts.push_back(std::move(guarded[j]));
      }
      out.push_back(Stmt{std::move(results), std::move(guard), s.span});
    }
    substitute_uses(body, rename);
  }

  ir::Function& f_;
  bool changed_ = false;
};

// Finds the first statement that hoisting would move (licm_postcondition), on a copy.
class InvariantFinder : public ir::Rewriter<InvariantFinder> {
 public:
  InvariantFinder(const ir::Program& program, ir::Function& f)
      : Rewriter(f), program_(program), f_(f) {}

  void visit(Stmt& s, ir::StmtList& out) {
    if (!found) found = describe(s);
    if (!found) rewrite_regions(s);
    out.push_back(std::move(s));
  }

  std::optional<std::string> found;

 private:
  std::optional<std::string> describe(Stmt& s) {
    auto r = region_of(f_, s, scope());
    if (!r) return std::nullopt;
    Plan plan = plan_hoist(f_, *r);
    for (size_t k = 0; k < plan.plain.size(); ++k) {
      if (plan.plain[k] || plan.guarded[k]) {
        return "the statement " + ir::print_stmt(program_, f_, r->body->stmts[k]) +
               " is invariant in " + ir::print_stmt(program_, f_, s);
      }
    }
    if (auto gp = plan_guard_hoist(f_, *r, scope())) {
      const auto& gb = r->body->stmts[gp->guard].as<ir::GuardOp>()->body;
      for (size_t k = 0; k < gp->moves.size(); ++k) {
        if (gp->moves[k]) {
          return "the statement " + ir::print_stmt(program_, f_, gb.stmts[k]) +
                 " of a guard is invariant in " + ir::print_stmt(program_, f_, s);
        }
      }
    }
    return std::nullopt;
  }

  const ir::Program& program_;
  ir::Function& f_;
};

}  // namespace

PassResult hoist_invariants(const ir::Program& program, const ir::Function& f) {
  (void)program;
  ir::Function out = f;
  Hoister hoister(out);
  hoister.rewrite();
  const bool changed = hoister.changed();
  return {std::move(out), changed};
}

std::optional<std::string> licm_postcondition(const ir::Program& program, const ir::Function& f) {
  ir::Function copy = f;
  InvariantFinder finder(program, copy);
  finder.rewrite();
  return finder.found;
}

}  // namespace cot::opt
