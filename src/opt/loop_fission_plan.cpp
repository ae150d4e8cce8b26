// Loop fission's plan (loop_fission.h, loop_fission_internal.h): the invariant statements of
// the last level of a path, their groups, and the roots materialized with the guards that keep
// H computed only where the original computed the chain.
#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/regions.h"
#include "opt/bindings.h"
#include "opt/dynamic_sizes.h"
#include "opt/guard_projection.h"
#include "opt/loop_fission_internal.h"
#include "opt/static_cost.h"

namespace cot::opt::loop_fission_detail {
namespace {

using ir::Block;
using ir::Stmt;
using ir::VarId;

// Whether some read of `row` in `s` lies in a region (nested in s, or s itself) that repeats
// it: a gen or reduce one of whose index variables the read's indices do not use, or a loop.
// Each element of the row is then read again per point of that region: a row of a
// contraction, as the centered point xc in sum r. sum c. Q[r, c] * xc[c].
bool reread(const Stmt& s, VarId row, std::vector<VarId>& scope, bool in_loop) {
  if (const auto* x = s.as<ir::IndexOp>();
      x != nullptr && x->tensor.is_var && x->tensor.var == row) {
    if (in_loop) return true;
    for (VarId v : scope) {
      const bool used = std::any_of(
          x->indices.begin(), x->indices.end(),
          [&](const ir::IndexExpr& ix) { return !ix.is_affine || ix.affine.mentions(v); });
      if (!used) return true;
    }
  }
  const std::vector<ir::IndexVar>* ivars = nullptr;
  if (const auto* g = s.as<ir::GenOp>()) ivars = &g->ivars;
  if (const auto* r = s.as<ir::ReduceOp>()) ivars = &r->ivars;
  if (const auto* a = s.as<ir::AccumOp>()) ivars = &a->ivars;
  const size_t depth = scope.size();
  if (ivars != nullptr) {
    for (const auto& iv : *ivars) scope.push_back(iv.var);
  }
  const bool loop = in_loop || s.as<ir::LoopOp>() != nullptr;
  bool found = false;
  ir::for_each_region(s, [&](const Block& inner) {
    for (const auto& t : inner.stmts) found = found || reread(t, row, scope, loop);
  });
  scope.resize(depth);
  return found;
}

std::optional<Affine> minus_one(const ir::Function& f, const SizeExpr& e) {
  auto a = size_affine(f, e);
  if (!a) return std::nullopt;
  return Affine::add(*a, Affine::constant(-1));
}

// Whether the value a statement binds may be a strong zero (the interpreter's cost model does
// not charge additions of strong zeros, so a read that replaces one could cost more): guards,
// projections, and sums with no live term. A sum whose terms cannot be strong zeros is one
// exactly when its range is empty; `when_empty` then collects the conditions (extent >= 1) the
// facts do not prove.
enum class Mask { Never, WhenEmpty, Maybe };

Mask mask_of(const ir::Function& f, const Stmt& s, const IndexFacts& facts,
             std::vector<Pred>* when_empty) {
  if (s.as<ir::GuardOp>() != nullptr || s.as<ir::ProjOp>() != nullptr) return Mask::Maybe;
  const auto* r = s.as<ir::ReduceOp>();
  if (r == nullptr || r->kind != ir::ReduceKind::Sum) return Mask::Never;
  if (r->body.results.size() != 1) return Mask::Maybe;
  const ir::Atom& res = r->body.results[0];
  if (res.is_var) {
    const Stmt* def = nullptr;
    for (const auto& b : r->body.stmts) {
      if (std::find(b.results.begin(), b.results.end(), res.var) != b.results.end()) def = &b;
    }
    if (def == nullptr || mask_of(f, *def, facts, nullptr) != Mask::Never) return Mask::Maybe;
  }
  std::vector<Pred> conds;
  for (const auto& iv : r->ivars) {
    if (auto c = iv.extent.as_constant()) {
      if (*c >= 1) continue;
      return Mask::Maybe;
    }
    auto e1 = minus_one(f, iv.extent);
    if (!e1) return Mask::Maybe;
    if (!facts.proves(*e1)) conds.push_back(Pred::ge0(*e1));
  }
  if (conds.empty()) return Mask::Never;
  if (when_empty == nullptr) return Mask::Maybe;
  *when_empty = std::move(conds);
  return Mask::WhenEmpty;
}

// Plans the last level of a path (plan_fission) for one function.
class Planner {
 public:
  explicit Planner(const ir::Function& f) : f_(f) {}

  // The statements of the last level of `path` that fission moves, and how. A root that cannot
  // be materialized is excluded from the invariant statements and the groups are formed again.
  FissionPlan plan(const RegionCtx& ctx, const std::vector<Level>& path) const {
    const Block& body = *path.back().body;
    const size_t count = body.stmts.size();
    const PathDeps pd = path_deps(ctx, path);
    const BodyGraph bg = body_graph(body);
    const IndexFacts site = facts_of(f_, ctx.frames);
    std::unordered_set<size_t> excluded;
    for (;;) {
      const Invariants inv = invariants(ctx, body, bg, pd, excluded);
      const Groups gr = groups(bg, inv);
      FissionPlan p;
      bool redo = false;
      for (size_t i = 0; i < count && !redo; ++i) {
        if (!gr.root[i]) continue;
        if (!plan_root(ctx, path, i, inv.deps[i], bg.users[i], site, p)) {
          excluded.insert(i);
          redo = true;
        }
      }
      if (redo) continue;
      p.moves.assign(count, false);
      p.live = bg.live;
      for (size_t i = 0; i < count; ++i) {
        if (!inv.in[i]) continue;
        p.moves[i] = inv.costly[i] ? (gr.group[i] >= 0 && !gr.root[i]) : !gr.kept[i];
      }
      return p;
    }
  }

 private:
  // The points of H (over the path's index variables `keep`) at which the original evaluates
  // the chain at least once: the path's ranges and guard predicates with its other index
  // variables projected away (guard_projection.h). Conditions that the facts before R and H's
  // ranges prove are dropped; the others are split into those over H's index variables (the
  // guard inside H) and the rest (the guard around it).
  std::optional<ProjectedGuard> project(const RegionCtx& ctx, const std::vector<Level>& path,
                                        const std::set<VarId>& keep) const {
    std::vector<Affine> cs;
    std::vector<Pred> atoms;
    std::vector<VarId> eliminated;
    IndexFacts known = ctx.outside;
    if (ctx.count_minus_one) cs.push_back(*ctx.count_minus_one);
    for (const auto& level : path) {
      if (level.guard && !split_conjunction(*level.guard, cs, atoms)) return std::nullopt;
      for (const auto& iv : level.ivars) {
        if (!add_range_constraints(f_, iv.var, iv.extent, cs)) return std::nullopt;
        if (keep.count(iv.var) != 0) {
          known.add_range(f_, iv.var, iv.extent);
        } else {
          eliminated.push_back(iv.var);
        }
      }
    }
    auto out = project_constraints(
        std::move(cs), eliminated, known, [&](VarId v) { return keep.count(v) != 0; },
        [&](VarId v) { return ctx.bound.count(v) != 0; });
    if (out) out->outer.insert(out->outer.begin(), atoms.begin(), atoms.end());
    return out;
  }

  bool binds_dynamic_size(const Stmt& s) const {
    for (VarId v : s.results) {
      if (is_dynamic_size(f_, v)) return true;
    }
    return false;
  }

  // The path's index variables, and the copies available to a chain: cost-free statements of
  // the outer levels, before the path's statement, that depend only on what is outside R, the
  // path's index variables and each other (each with the index variables it depends on).
  struct PathDeps {
    std::unordered_set<VarId> path_ivars;
    std::unordered_map<VarId, std::set<VarId>> avail;
  };

  // Whether `uses` are only what is outside R, the path's index variables, available copies and
  // statements of `inner`; `deps` gets the path index variables they depend on.
  static bool uses_ok(const RegionCtx& ctx, const PathDeps& pd, const std::vector<VarId>& uses,
                      const std::unordered_map<VarId, std::set<VarId>>& inner,
                      std::set<VarId>& deps) {
    for (VarId v : uses) {
      if (pd.path_ivars.count(v) != 0) {
        deps.insert(v);
      } else if (auto it = pd.avail.find(v); it != pd.avail.end()) {
        deps.insert(it->second.begin(), it->second.end());
      } else if (auto jt = inner.find(v); jt != inner.end()) {
        deps.insert(jt->second.begin(), jt->second.end());
      } else if (ctx.bound.count(v) != 0) {
        return false;
      }
    }
    return true;
  }

  PathDeps path_deps(const RegionCtx& ctx, const std::vector<Level>& path) const {
    const size_t n = path.size() - 1;
    PathDeps pd;
    const std::unordered_map<VarId, std::set<VarId>> none;
    for (size_t k = 0; k < n; ++k) {
      for (const auto& iv : path[k].ivars) pd.path_ivars.insert(iv.var);
      for (size_t i = 0; i < path[k].q; ++i) {
        const Stmt& s = path[k].body->stmts[i];
        if (s.as<ir::LoopOp>() != nullptr || !is_cost_free(f_, s) || binds_dynamic_size(s) ||
            mentions_sizes(f_, s, ctx.dynamic)) {
          continue;
        }
        std::set<VarId> deps;
        if (!uses_ok(ctx, pd, free_uses(s), none, deps)) continue;
        for (VarId v : s.results) pd.avail[v] = deps;
      }
    }
    for (const auto& iv : path[n].ivars) pd.path_ivars.insert(iv.var);
    return pd;
  }

  // What the statements of the last level's body read and which live statements read them.
  struct BodyGraph {
    std::vector<std::vector<VarId>> uses;    // per statement: what it reads
    std::vector<std::vector<size_t>> users;  // per statement: the live statements reading it
    std::vector<bool> result_used;           // per statement: whether the body's result is it
    std::vector<bool> live;
  };

  BodyGraph body_graph(const Block& body) const {
    const size_t count = body.stmts.size();
    BodyGraph bg;
    std::unordered_map<VarId, size_t> def;
    for (size_t i = 0; i < count; ++i) {
      for (VarId v : body.stmts[i].results) def[v] = i;
    }
    bg.uses.resize(count);
    bg.users.resize(count);
    for (size_t i = 0; i < count; ++i) {
      bg.uses[i] = free_uses(body.stmts[i]);
      for (VarId v : bg.uses[i]) {
        if (auto it = def.find(v); it != def.end()) bg.users[it->second].push_back(i);
      }
    }
    bg.result_used.assign(count, false);
    for (const auto& a : body.results) {
      if (a.is_var) {
        if (auto it = def.find(a.var); it != def.end()) bg.result_used[it->second] = true;
      }
    }
    // Dead statements (the AD leaves some before dead-code elimination runs) need nothing.
    bg.live.assign(count, false);
    for (size_t i = count; i-- > 0;) {
      bg.live[i] = bg.result_used[i] || binds_dynamic_size(body.stmts[i]);
      for (size_t u : bg.users[i]) bg.live[i] = bg.live[i] || bg.live[u];
    }
    for (auto& us : bg.users) {
      std::erase_if(us, [&](size_t u) { return !bg.live[u]; });
    }
    return bg;
  }

  // The invariant statements of the body (not `excluded`), whether each costs, and the path
  // index variables each depends on.
  struct Invariants {
    std::vector<bool> in;
    std::vector<bool> costly;
    std::vector<std::set<VarId>> deps;
  };

  Invariants invariants(const RegionCtx& ctx, const Block& body, const BodyGraph& bg,
                        const PathDeps& pd, const std::unordered_set<size_t>& excluded) const {
    const size_t count = body.stmts.size();
    Invariants inv{std::vector<bool>(count, false), std::vector<bool>(count, false),
                   std::vector<std::set<VarId>>(count)};
    std::unordered_map<VarId, std::set<VarId>> inner;
    for (size_t i = 0; i < count; ++i) {
      const Stmt& s = body.stmts[i];
      if (excluded.count(i) != 0 || !bg.live[i] || s.results.size() != 1 ||
          s.as<ir::LoopOp>() != nullptr || f_.type_of(s.results[0]).is_tuple ||
          binds_dynamic_size(s) || mentions_sizes(f_, s, ctx.dynamic) ||
          !uses_ok(ctx, pd, bg.uses[i], inner, inv.deps[i]) ||
          (!ctx.repeating.empty() && !row_of_a_contraction(body, i, bg.result_used[i]) &&
           std::all_of(ctx.repeating.begin(), ctx.repeating.end(),
                       [&](VarId v) { return inv.deps[i].count(v) != 0; }))) {
        continue;
      }
      inv.in[i] = true;
      inv.costly[i] = !is_cost_free(f_, s);
      inner[s.results[0]] = inv.deps[i];
    }
    return inv;
  }

  // The invariant statements in groups: a group's root (costly) is materialized, its other
  // members move with it, and `kept` cost-free statements stay in the body.
  struct Groups {
    std::vector<long> group;  // a costly statement's group (its root), or -1
    std::vector<bool> kept;
    std::vector<bool> root;
  };

  // Users before definitions: a costly statement needed by what stays in the body or by two
  // groups is the root of its own group (materialized); one needed by one group joins it.
  // Cost-free statements are copied into every group that needs them, and stay when the body
  // still needs them.
  static Groups groups(const BodyGraph& bg, const Invariants& inv) {
    const size_t count = inv.in.size();
    Groups gr{std::vector<long>(count, -1), std::vector<bool>(count, true),
              std::vector<bool>(count, false)};
    std::vector<std::set<size_t>> groups_of(count);
    for (size_t i = count; i-- > 0;) {
      if (!inv.in[i]) continue;
      bool staying = bg.result_used[i];
      std::set<size_t> gs;
      for (size_t u : bg.users[i]) {
        if (!inv.in[u]) {
          staying = true;
        } else if (inv.costly[u]) {
          if (gr.group[u] >= 0) {
            gs.insert(static_cast<size_t>(gr.group[u]));
          } else {
            staying = true;
          }
        } else {
          if (gr.kept[u]) staying = true;
          gs.insert(groups_of[u].begin(), groups_of[u].end());
        }
      }
      if (inv.costly[i]) {
        if (staying || gs.size() >= 2) {
          gr.root[i] = true;
          gr.group[i] = static_cast<long>(i);
        } else if (gs.size() == 1) {
          gr.group[i] = static_cast<long>(*gs.begin());
        }
      } else {
        gr.kept[i] = staying || gs.empty();
        groups_of[i] = std::move(gs);
      }
    }
    return gr;
  }

  // Adds root i of the body (depending on the path index variables `deps`, read by `users`) to
  // `p`: H's index variables, when H is computed and which of its points, and the guard its read
  // keeps. False when it cannot be materialized: H needs an index; the read must keep a strong
  // zero the root could be; H must be computed only when the root was (R and the levels H does
  // not range over run); and a generator that fusion would copy to its read is left to it.
  bool plan_root(const RegionCtx& ctx, const std::vector<Level>& path, size_t i,
                 const std::set<VarId>& deps, const std::vector<size_t>& users,
                 const IndexFacts& site, FissionPlan& p) const {
    const size_t n = path.size() - 1;
    const Block& body = *path[n].body;
    std::vector<ir::IndexVar> hivars;
    std::vector<Pred> guard;
    std::vector<SizeExpr> computed;
    bool ok = !deps.empty();
    for (size_t k = 0; k <= n && ok; ++k) {
      for (const auto& iv : path[k].ivars) {
        if (deps.count(iv.var) != 0) {
          hivars.push_back(iv);
          continue;
        }
        if (iv.extent.as_constant()) continue;  // >= 1: levels of extent < 1 are skipped
        auto e1 = minus_one(f_, iv.extent);
        if (e1) {
          if (!ctx.outside.proves(*e1)) guard.push_back(Pred::ge0(*e1));
        } else if (k == 0 && !ctx.count_minus_one && !iv.extent.poisoned()) {
          // R evaluates its own extents where it stands, so evaluating this one before it
          // adds no error; an inner level's extent is evaluated only when R runs.
          computed.push_back(iv.extent);
        } else {
          ok = false;
        }
      }
    }
    if (ok && ctx.count_minus_one && !ctx.outside.proves(*ctx.count_minus_one)) {
      guard.push_back(Pred::ge0(*ctx.count_minus_one));
    }
    std::vector<Pred> inner;
    if (ok && std::any_of(path.begin(), path.end(), [](const Level& l) { return l.guard; })) {
      // Under a guard: H covers the points at which some point of the path passes the
      // guards (the projection), which the range conditions above do not say.
      guard.clear();
      auto proj = project(ctx, path, deps);
      ok = proj.has_value() && computed.empty();
      if (ok) {
        guard = std::move(proj->outer);
        inner = std::move(proj->inner);
      }
    }
    std::vector<Pred> when_empty;
    Mask m = ok ? mask_of(f_, body.stmts[i], site, &when_empty) : Mask::Maybe;
    if (!ok || m == Mask::Maybe || fusible(body, i, users, site)) return false;
    p.roots.push_back(i);
    p.hivars.push_back(std::move(hivars));
    p.guard.push_back(Pred::conj(std::move(guard)));
    p.inner_guard.push_back(Pred::conj(std::move(inner)));
    p.computed_nonempty.push_back(std::move(computed));
    p.read_guard.push_back(m == Mask::WhenEmpty
                               ? std::optional<Pred>(Pred::conj(std::move(when_empty)))
                               : std::nullopt);
    return true;
  }

  // A generator (not the body's result) that the body reads again per point of a region nested
  // in it is materialized even when it depends on every index variable of the path:
  // [Bernstein20] (5.6)/(5.7) in full, so that its elements are reads of a table, where reverse
  // mode's gathers find them, and not rows recomputed per point of a gather.
  static bool row_of_a_contraction(const Block& body, size_t i, bool result_used) {
    const Stmt& s = body.stmts[i];
    if (s.as<ir::GenOp>() == nullptr || result_used) return false;
    std::vector<VarId> scope;
    for (size_t k = i + 1; k < body.stmts.size(); ++k) {
      if (reread(body.stmts[k], s.results[0], scope, false)) return true;
    }
    return false;
  }

  // A generator the body reads once, in bounds, right where it is: fusion copies its body to
  // the read (one element per instance instead of all of them), after which the chain that
  // remains is hoisted; materializing it here would keep the whole generator per point.
  bool fusible(const Block& body, size_t i, const std::vector<size_t>& users,
               const IndexFacts& site) const {
    const auto* g = body.stmts[i].as<ir::GenOp>();
    if (g == nullptr || users.size() != 1) return false;
    const auto* read = body.stmts[users[0]].as<ir::IndexOp>();
    if (read == nullptr || !read->tensor.is_var || read->tensor.var != body.stmts[i].results[0] ||
        read->indices.size() > g->ivars.size()) {
      return false;
    }
    for (size_t d = 0; d < read->indices.size(); ++d) {
      const auto& ix = read->indices[d];
      if (!ix.is_affine || !site.proves_in_range(f_, ix.affine, g->ivars[d].extent)) return false;
    }
    return true;
  }

  const ir::Function& f_;
};

}  // namespace

FissionPlan plan_fission(const ir::Function& f, const RegionCtx& ctx,
                         const std::vector<Level>& path) {
  return Planner(f).plan(ctx, path);
}

}  // namespace cot::opt::loop_fission_detail
