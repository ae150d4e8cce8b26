#include "opt/licm.h"

#include <algorithm>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/printer.h"
#include "ir/uses.h"
#include "opt/static_cost.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

using ir::Atom;
using ir::Block;
using ir::Stmt;
using ir::VarId;

// The body of a region statement whose invariants may move out, with the variables that vary
// per point or iteration and the condition that it runs at least once.
struct Region {
  Block* body = nullptr;
  std::vector<VarId> variant;
  // Whether it provably runs at least once; else `nonempty`, when it can be stated, is a
  // predicate that holds exactly when it runs at least once.
  bool runs = false;
  std::optional<Pred> nonempty;
};

std::optional<Region> region_of(const ir::Function& f, Stmt& s,
                                const std::vector<ScopeFrame>& frames) {
  std::optional<IndexFacts> facts;
  // Whether e - 1 >= 0 follows from the enclosing ranges and guards.
  auto proved_positive = [&](const Affine& e1) {
    if (!facts) facts = facts_of(f, frames);
    return facts->proves(e1);
  };
  Region r;
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
    if (l->iter >= 0) r.variant.push_back(l->iter);
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
  for (const auto& s : body.stmts) {
    for (VarId v : s.results) {
      for (const auto& sv : f.size_vars) {
        if (sv.param == -1 && sv.var == v) dynamic.push_back(sv.name);
      }
    }
  }
  const bool may_guard = r.nonempty.has_value() && r.nonempty->kind != Pred::Kind::False;
  for (size_t k = 0; k < n; ++k) {
    const Stmt& s = body.stmts[k];
    bool is_variant = s.as<ir::LoopOp>() != nullptr || s.results.empty();
    bool needs_guard = false;
    if (!is_variant) {
      for (VarId v : stmt_uses(s)) {
        if (variant.count(v) != 0) is_variant = true;
        if (in_guard.count(v) != 0) needs_guard = true;
      }
      if (!is_variant && mentions_sizes(f, s, dynamic)) is_variant = true;
    }
    if (!is_variant && !needs_guard && !r.runs) {
      needs_guard = !is_cost_free(f, s) || may_fail(f, s);
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

class Hoister {
 public:
  explicit Hoister(ir::Function& f) : f_(f), frames_(1) {}

  void block(Block& b) {
    std::vector<Stmt> out;
    out.reserve(b.stmts.size());
    for (auto& slot : b.stmts) {
      Stmt s = std::move(slot);
      for_each_region_frame(s, [&](const ScopeFrame& fr, Block& body) {
        frames_.push_back(fr);
        block(body);
        frames_.pop_back();
      });
      hoist(s, out);
      out.push_back(std::move(s));
    }
    b.stmts = std::move(out);
  }

 private:
  void hoist(Stmt& s, std::vector<Stmt>& out) {
    auto r = region_of(f_, s, frames_);
    if (!r) return;
    Plan plan = plan_hoist(f_, *r);
    if (!plan.any()) return;
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
  std::vector<ScopeFrame> frames_;
};

std::optional<std::string> check_block(const ir::Program& program, ir::Function& f, Block& b,
                                       std::vector<ScopeFrame>& frames) {
  for (auto& s : b.stmts) {
    if (auto r = region_of(f, s, frames)) {
      Plan plan = plan_hoist(f, *r);
      for (size_t k = 0; k < plan.plain.size(); ++k) {
        if (plan.plain[k] || plan.guarded[k]) {
          return "the statement " + ir::print_stmt(program, f, r->body->stmts[k]) +
                 " is invariant in " + ir::print_stmt(program, f, s);
        }
      }
    }
    std::optional<std::string> found;
    for_each_region_frame(s, [&](const ScopeFrame& fr, Block& body) {
      frames.push_back(fr);
      if (!found) found = check_block(program, f, body, frames);
      frames.pop_back();
    });
    if (found) return found;
  }
  return std::nullopt;
}

}  // namespace

ir::Function hoist_invariants(const ir::Program& program, const ir::Function& f) {
  (void)program;
  ir::Function out = f;
  Hoister(out).block(out.body);
  return out;
}

std::optional<std::string> licm_postcondition(const ir::Program& program, const ir::Function& f) {
  ir::Function copy = f;
  std::vector<ScopeFrame> frames(1);
  return check_block(program, copy, copy.body, frames);
}

}  // namespace cot::opt
