#include "opt/loop_fission.h"

#include <algorithm>
#include <set>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/clone.h"
#include "ir/printer.h"
#include "ir/regions.h"
#include "ir/rewriter.h"
#include "ir/uses.h"
#include "opt/bindings.h"
#include "opt/dynamic_sizes.h"
#include "opt/guard_projection.h"
#include "opt/static_cost.h"

namespace cot::opt {
namespace {

// ---- Loop fission (rules 5.6/5.7) ----------------------------------------------------------
//
// R is a gen, reduce or accum statement; Q1 ... Qn (n >= 0) a path of gen/reduce statements,
// each directly in the previous body (R's first). A statement of Qn's body (R's when n = 0)
// is invariant when it depends, besides what is bound outside R, only on the index variables
// of R, Q1..Qn and on invariant statements of that body or cost-free invariant statements of
// the bodies above it on the path, and not on some index variable of R whose extent is not 1.
// Each costly chain of them moves before R, materialized as
//   let H = [the ranges H does not cover are not empty] * for I. { chain; root }
// (I: the index variables of the path the chain depends on) and its root becomes H[I]. See
// let_lift.h for the roots, the copies and what is left alone.

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

// Every read row[J] in s becomes H[I, J], where `row_read` is the read H[I] that binds row.
void read_through(Stmt& s, VarId row, const ir::IndexOp& row_read) {
  if (auto* x = s.as<ir::IndexOp>(); x != nullptr && x->tensor.is_var && x->tensor.var == row) {
    std::vector<ir::IndexExpr> indices = row_read.indices;
    indices.insert(indices.end(), x->indices.begin(), x->indices.end());
    x->tensor = row_read.tensor;
    x->indices = std::move(indices);
  }
  ir::for_each_region(s, [&](Block& b) {
    for (auto& t : b.stmts) read_through(t, row, row_read);
  });
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

// One level of the path R, Q1, ..., Qn: a body and the index variables of the statement whose
// body it is (R's for level 0); `q` is the index in the body of the statement opening the next
// level.
struct Level {
  Block* body = nullptr;
  std::vector<ir::IndexVar> ivars;
  size_t q = 0;
  std::optional<Pred> guard;  // a guard's body: its predicate (no index variables)
};

// What R binds and what holds outside it.
struct RegionCtx {
  std::unordered_set<VarId> bound;   // everything bound inside R
  std::vector<std::string> dynamic;  // dynamic sizes bound inside R
  std::vector<VarId> repeating;      // R's index variables whose extent is not 1
  // R is a counted loop: count - 1 (>= 0 exactly when it runs).
  std::optional<Affine> count_minus_one;
  IndexFacts outside;              // facts before R
  std::vector<ScopeFrame> frames;  // frames inside R's body
};

// The plan for the last level of a path.
struct FissionPlan {
  std::vector<size_t> roots;  // statements whose values are materialized, in order
  std::vector<bool> moves;    // statements that leave the body (members and copies)
  std::vector<bool> live;     // dead ones that read what moves are dropped with it
  std::vector<std::vector<ir::IndexVar>> hivars;  // per root: the index variables of H
  std::vector<Pred> guard;                        // per root: when H is computed
  std::vector<Pred> inner_guard;                  // per root: which points of H are computed
  std::vector<std::optional<Pred>> read_guard;    // per root: a strong zero kept at the read
  // per root: extents of R that are not affine (a quotient, a product of sizes), which H's
  // guard tests as computed values, `let e = size(extent); let c = e >= 1`, placed before H
  std::vector<std::vector<SizeExpr>> computed_nonempty;
  bool any() const { return !roots.empty(); }
};

class Fission : public ir::Rewriter<Fission> {
 public:
  Fission(const ir::Program& program, ir::Function& f, bool dry)
      : Rewriter(f), program_(program), f_(f), dry_(dry) {}

  bool changed = false;
  std::optional<std::string> found;  // dry: the first chain the pass would hoist

  // Every statement, after its regions: a region statement's chains move before it.
  void visit(Stmt& s, ir::StmtList& out) {
    if (!found) rewrite_regions(s);
    if (!found) region(s, out);
    out.push_back(std::move(s));
  }

 private:
  void region(Stmt& r, std::vector<Stmt>& out) {
    Block* body = nullptr;
    const std::vector<ir::IndexVar>* ivars = nullptr;
    if (auto* g = r.as<ir::GenOp>()) {
      body = &g->body;
      ivars = &g->ivars;
    } else if (auto* red = r.as<ir::ReduceOp>()) {
      body = &red->body;
      ivars = &red->ivars;
    } else if (auto* a = r.as<ir::AccumOp>()) {
      body = &a->body;
      ivars = &a->ivars;
    } else if (auto* l = r.as<ir::LoopOp>(); l != nullptr && !l->is_while) {
      return counted_loop(r, *l, out);
    } else {
      return;
    }
    RegionCtx ctx;
    ctx.outside = scope().facts();
    for (const auto& iv : *ivars) {
      auto c = iv.extent.as_constant();
      if (c && *c < 1) return;  // never runs
      if (!c || *c != 1) ctx.repeating.push_back(iv.var);
    }
    if (ctx.repeating.empty()) return;  // nothing is repeated
    collect_bound(r, ctx.bound);
    for (const auto& sv : f_.size_vars) {
      if (sv.param == -1 && ctx.bound.count(sv.var) != 0) ctx.dynamic.push_back(sv.name);
    }
    ctx.frames = scope().frames();
    ScopeFrame rf;
    rf.kind = ScopeFrame::Kind::Index;
    rf.ivars = *ivars;
    ctx.frames.push_back(rf);
    std::vector<Level> path{Level{body, *ivars, 0, std::nullopt}};
    level(ctx, path, out);
    if (!found) descend_from(ctx, path, out);
  }

  // R a counted loop: its body runs count times with the same values of what does not depend
  // on the state or the counter, so a chain of a gen/reduce/guard nested in it that does not
  // is materialized before it, under [count >= 1] (H then is computed only when the original
  // computed the chain at least once). A chain directly in the body is licm's.
  void counted_loop(Stmt& r, ir::LoopOp& l, std::vector<Stmt>& out) {
    RegionCtx ctx;
    if (!l.count.is_var) {
      if (l.count.lit.integer <= 1) return;  // never runs, or nothing is repeated
      ctx.count_minus_one = Affine::constant(l.count.lit.integer - 1);
    } else {
      ctx.count_minus_one = Affine::add(Affine::var(l.count.var), Affine::constant(-1));
      if (!ctx.count_minus_one) return;
    }
    ctx.outside = scope().facts();
    collect_bound(r, ctx.bound);
    for (const auto& sv : f_.size_vars) {
      if (sv.param == -1 && ctx.bound.count(sv.var) != 0) ctx.dynamic.push_back(sv.name);
    }
    ctx.frames = scope().frames();
    ScopeFrame rf;
    rf.kind = ScopeFrame::Kind::ForBody;
    rf.iter = l.iter;
    rf.count = l.count;
    ctx.frames.push_back(rf);
    std::vector<Level> path{Level{&l.body, {}, 0, std::nullopt}};
    descend_from(ctx, path, out);
  }

  // Opens every gen/reduce statement, guard and branch of an if on a condition bound outside R
  // of the last level of the path as the next level (a branch is a guard on the condition).
  void descend_from(RegionCtx& ctx, std::vector<Level>& path, std::vector<Stmt>& out) {
    for (size_t i = 0; i < path.back().body->stmts.size() && !found; ++i) {
      Stmt& q = path.back().body->stmts[i];
      if (auto* iff = q.as<ir::IfOp>();
          iff != nullptr && iff->cond.is_var && ctx.bound.count(iff->cond.var) == 0) {
        descend_into(ctx, path, out, i,
                     Level{&iff->then_branch, {}, 0, Pred::atom_of(iff->cond.var)});
        if (!found) {
          descend_into(ctx, path, out, i,
                       Level{&iff->else_branch, {}, 0, Pred::atom_of(iff->cond.var, true)});
        }
        continue;
      }
      Level next;
      if (auto* g = q.as<ir::GenOp>()) {
        next = Level{&g->body, g->ivars, 0, std::nullopt};
      } else if (auto* red = q.as<ir::ReduceOp>()) {
        next = Level{&red->body, red->ivars, 0, std::nullopt};
      } else if (auto* gd = q.as<ir::GuardOp>(); gd != nullptr && projectable(ctx, gd->pred)) {
        next = Level{&gd->body, {}, 0, gd->pred};
      } else {
        continue;
      }
      descend_into(ctx, path, out, i, std::move(next));
    }
  }

  void descend_into(RegionCtx& ctx, std::vector<Level>& path, std::vector<Stmt>& out, size_t i,
                    Level next) {
    bool usable = true;
    for (const auto& iv : next.ivars) {
      auto c = iv.extent.as_constant();
      if ((c && *c < 1) || size_mentions(iv.extent, ctx.dynamic)) usable = false;
    }
    if (!usable) return;  // never runs, or H's shape would name a size bound in R
    path.back().q = i;
    path.push_back(std::move(next));
    ScopeFrame fr;
    if (path.back().guard) {
      fr.kind = ScopeFrame::Kind::Guard;
      fr.pred = *path.back().guard;
    } else {
      fr.kind = ScopeFrame::Kind::Index;
      fr.ivars = path.back().ivars;
    }
    ctx.frames.push_back(fr);
    level(ctx, path, out);
    if (!found) descend_from(ctx, path, out);
    ctx.frames.pop_back();
    path.pop_back();
  }

  // Whether a guard's predicate can be projected (project): a conjunction of affine
  // constraints and of boolean atoms bound outside R.
  static bool projectable(const RegionCtx& ctx, const Pred& p) {
    std::vector<Affine> affine;
    std::vector<Pred> atoms;
    return split_conjunction(p, affine, atoms) &&
           std::all_of(atoms.begin(), atoms.end(),
                       [&](const Pred& a) { return ctx.bound.count(a.atom) == 0; });
  }

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

  static bool size_mentions(const SizeExpr& e, const std::vector<std::string>& names) {
    for (const auto& v : e.vars()) {
      if (std::find(names.begin(), names.end(), v) != names.end()) return true;
    }
    return false;
  }

  bool binds_dynamic_size(const Stmt& s) const {
    for (VarId v : s.results) {
      if (is_dynamic_size(f_, v)) return true;
    }
    return false;
  }

  // The statements of the last level of `path` that fission moves, and how.
  FissionPlan plan(const RegionCtx& ctx, const std::vector<Level>& path) {
    const size_t n = path.size() - 1;
    const Block& body = *path[n].body;
    const size_t count = body.stmts.size();
    std::unordered_set<VarId> path_ivars;
    // Available copies: cost-free statements of the outer levels, before the path's statement,
    // that depend only on what is outside R, the path's index variables and each other.
    std::unordered_map<VarId, std::set<VarId>> avail;
    auto uses_ok = [&](const std::vector<VarId>& uses,
                       const std::unordered_map<VarId, std::set<VarId>>& inner,
                       std::set<VarId>& deps) {
      for (VarId v : uses) {
        if (path_ivars.count(v) != 0) {
          deps.insert(v);
        } else if (auto it = avail.find(v); it != avail.end()) {
          deps.insert(it->second.begin(), it->second.end());
        } else if (auto jt = inner.find(v); jt != inner.end()) {
          deps.insert(jt->second.begin(), jt->second.end());
        } else if (ctx.bound.count(v) != 0) {
          return false;
        }
      }
      return true;
    };
    const std::unordered_map<VarId, std::set<VarId>> none;
    for (size_t k = 0; k < n; ++k) {
      for (const auto& iv : path[k].ivars) path_ivars.insert(iv.var);
      for (size_t i = 0; i < path[k].q; ++i) {
        const Stmt& s = path[k].body->stmts[i];
        if (s.as<ir::LoopOp>() != nullptr || !is_cost_free(f_, s) || binds_dynamic_size(s) ||
            mentions_sizes(f_, s, ctx.dynamic)) {
          continue;
        }
        std::set<VarId> deps;
        if (!uses_ok(free_uses(s), none, deps)) continue;
        for (VarId v : s.results) avail[v] = deps;
      }
    }
    for (const auto& iv : path[n].ivars) path_ivars.insert(iv.var);

    std::unordered_map<VarId, size_t> def;
    for (size_t i = 0; i < count; ++i) {
      for (VarId v : body.stmts[i].results) def[v] = i;
    }
    std::vector<std::vector<VarId>> uses(count);
    std::vector<std::vector<size_t>> users(count);
    for (size_t i = 0; i < count; ++i) {
      uses[i] = free_uses(body.stmts[i]);
      for (VarId v : uses[i]) {
        if (auto it = def.find(v); it != def.end()) users[it->second].push_back(i);
      }
    }
    std::vector<bool> result_used(count, false);
    for (const auto& a : body.results) {
      if (a.is_var) {
        if (auto it = def.find(a.var); it != def.end()) result_used[it->second] = true;
      }
    }
    // Dead statements (the AD leaves some before dead-code elimination runs) need nothing.
    std::vector<bool> live(count, false);
    for (size_t i = count; i-- > 0;) {
      live[i] = result_used[i] || binds_dynamic_size(body.stmts[i]);
      for (size_t u : users[i]) live[i] = live[i] || live[u];
    }
    for (auto& us : users) {
      std::erase_if(us, [&](size_t u) { return !live[u]; });
    }
    IndexFacts site = facts_of(f_, ctx.frames);

    std::unordered_set<size_t> excluded;
    for (;;) {
      // The invariant statements, with the path index variables they depend on.
      std::vector<bool> in(count, false), costly(count, false);
      std::vector<std::set<VarId>> deps(count);
      std::unordered_map<VarId, std::set<VarId>> inner;
      for (size_t i = 0; i < count; ++i) {
        const Stmt& s = body.stmts[i];
        if (excluded.count(i) != 0 || !live[i] || s.results.size() != 1 ||
            s.as<ir::LoopOp>() != nullptr || f_.type_of(s.results[0]).is_tuple ||
            binds_dynamic_size(s) || mentions_sizes(f_, s, ctx.dynamic) ||
            !uses_ok(uses[i], inner, deps[i]) ||
            (!ctx.repeating.empty() && !row_of_a_contraction(body, i, result_used[i]) &&
             std::all_of(ctx.repeating.begin(), ctx.repeating.end(),
                         [&](VarId v) { return deps[i].count(v) != 0; }))) {
          continue;
        }
        in[i] = true;
        costly[i] = !is_cost_free(f_, s);
        inner[s.results[0]] = deps[i];
      }
      // Groups, users before definitions: a costly statement needed by what stays in the body
      // or by two groups is the root of its own group (materialized); one needed by one group
      // joins it. Cost-free statements are copied into every group that needs them, and stay
      // when the body still needs them.
      std::vector<long> group(count, -1);
      std::vector<std::set<size_t>> groups_of(count);
      std::vector<bool> kept(count, true), root(count, false);
      for (size_t i = count; i-- > 0;) {
        if (!in[i]) continue;
        bool staying = result_used[i];
        std::set<size_t> gs;
        for (size_t u : users[i]) {
          if (!in[u]) {
            staying = true;
          } else if (costly[u]) {
            if (group[u] >= 0) {
              gs.insert(static_cast<size_t>(group[u]));
            } else {
              staying = true;
            }
          } else {
            if (kept[u]) staying = true;
            gs.insert(groups_of[u].begin(), groups_of[u].end());
          }
        }
        if (costly[i]) {
          if (staying || gs.size() >= 2) {
            root[i] = true;
            group[i] = static_cast<long>(i);
          } else if (gs.size() == 1) {
            group[i] = static_cast<long>(*gs.begin());
          }
        } else {
          kept[i] = staying || gs.empty();
          groups_of[i] = std::move(gs);
        }
      }
      FissionPlan p;
      bool redo = false;
      for (size_t i = 0; i < count && !redo; ++i) {
        if (!root[i]) continue;
        // H needs an index; the read must keep a strong zero the root could be; H must be
        // computed only when the root was (R and the levels H does not range over run).
        std::vector<ir::IndexVar> hivars;
        std::vector<Pred> guard;
        std::vector<SizeExpr> computed;
        bool ok = !deps[i].empty();
        for (size_t k = 0; k <= n && ok; ++k) {
          for (const auto& iv : path[k].ivars) {
            if (deps[i].count(iv.var) != 0) {
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
          auto proj = project(ctx, path, deps[i]);
          ok = proj.has_value() && computed.empty();
          if (ok) {
            guard = std::move(proj->outer);
            inner = std::move(proj->inner);
          }
        }
        std::vector<Pred> when_empty;
        Mask m = ok ? mask_of(f_, body.stmts[i], site, &when_empty) : Mask::Maybe;
        if (!ok || m == Mask::Maybe || fusible(body, i, users[i], site)) {
          excluded.insert(i);
          redo = true;
          break;
        }
        p.roots.push_back(i);
        p.hivars.push_back(std::move(hivars));
        p.guard.push_back(Pred::conj(std::move(guard)));
        p.inner_guard.push_back(Pred::conj(std::move(inner)));
        p.computed_nonempty.push_back(std::move(computed));
        p.read_guard.push_back(m == Mask::WhenEmpty
                                   ? std::optional<Pred>(Pred::conj(std::move(when_empty)))
                                   : std::nullopt);
      }
      if (redo) continue;
      p.moves.assign(count, false);
      p.live = live;
      for (size_t i = 0; i < count; ++i) {
        if (!in[i]) continue;
        p.moves[i] = costly[i] ? (group[i] >= 0 && !root[i]) : !kept[i];
      }
      return p;
    }
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

  void level(RegionCtx& ctx, std::vector<Level>& path, std::vector<Stmt>& out) {
    FissionPlan p = plan(ctx, path);
    if (!p.any()) return;
    const size_t n = path.size() - 1;
    Block& body = *path[n].body;
    if (dry_) {
      found = "the statement `" + ir::print_stmt(program_, f_, body.stmts[p.roots[0]]) +
              "` does not depend on the region it repeats in";
      return;
    }
    // Where the statements a chain may read are bound: (level, index).
    std::unordered_map<VarId, std::pair<size_t, size_t>> where;
    for (size_t k = 0; k <= n; ++k) {
      const size_t end = k < n ? path[k].q : path[k].body->stmts.size();
      for (size_t i = 0; i < end; ++i) {
        for (VarId v : path[k].body->stmts[i].results) where[v] = {k, i};
      }
    }
    for (size_t g = 0; g < p.roots.size(); ++g) {
      const size_t ri = p.roots[g];
      // The chain: everything the root reads inside R, transitively (earlier roots are reads
      // of their H by now).
      std::set<std::pair<size_t, size_t>> chain;
      std::vector<std::pair<size_t, size_t>> todo{{n, ri}};
      while (!todo.empty()) {
        auto at = todo.back();
        todo.pop_back();
        if (!chain.insert(at).second) continue;
        for (VarId v : free_uses(path[at.first].body->stmts[at.second])) {
          if (auto it = where.find(v); it != where.end()) todo.push_back(it->second);
        }
      }
      Block tmp;
      for (const auto& [k, i] : chain) tmp.stmts.push_back(path[k].body->stmts[i]);
      const VarId rv = body.stmts[ri].results[0];
      tmp.results.push_back(ir::Atom::of(rv));
      const Span span = body.stmts[ri].span;
      // Copied before new_var grows the table.
      const std::string name = f_.vars[static_cast<size_t>(rv)].name;
      const Type rt = f_.type_of(rv);
      ir::CloneMap map;
      std::vector<ir::IndexVar> fresh;
      std::vector<SizeExpr> shape;
      for (const auto& iv : p.hivars[g]) {
        std::string iname = f_.vars[static_cast<size_t>(iv.var)].name;
        VarId nv = f_.new_var(std::move(iname), Type::scalar(Scalar::I64));
        map.atoms[iv.var] = ir::Atom::of(nv);
        fresh.push_back(ir::IndexVar{nv, iv.extent});
        shape.push_back(iv.extent);
      }
      shape.insert(shape.end(), rt.shape.begin(), rt.shape.end());
      const Type ht = Type::tensor(rt.elem, shape);
      ir::GenOp gen;
      gen.ivars = std::move(fresh);
      gen.body = ir::clone_block(f_, tmp, f_, map);
      if (p.inner_guard[g].kind != Pred::Kind::True) {
        // Only the points the original computed: the others are never read.
        std::unordered_map<VarId, VarId> rename;
        for (size_t d = 0; d < p.hivars[g].size(); ++d) {
          rename[p.hivars[g][d].var] = gen.ivars[d].var;
        }
        ir::GuardOp inner;
        inner.pred = p.inner_guard[g].rename([&](int32_t v) {
          auto it = rename.find(v);
          return it == rename.end() ? v : it->second;
        });
        inner.body = std::move(gen.body);
        VarId e = f_.new_var(name, rt);
        gen.body = Block{};
        gen.body.stmts.push_back(Stmt{{e}, std::move(inner), span});
        gen.body.results.push_back(ir::Atom::of(e));
      }
      VarId h = f_.new_var(name, ht);
      Stmt hs{{h}, std::move(gen), span};
      Pred when = p.guard[g];
      for (const auto& extent : p.computed_nonempty[g]) {
        const VarId e = f_.new_var("extent", Type::scalar(Scalar::I64));
        out.push_back(Stmt{{e}, ir::SizeOp{extent}, span});
        const VarId c = f_.new_var("nonempty", Type::scalar(Scalar::Bool));
        out.push_back(Stmt{{c}, ir::PrimOp{Prim::Ge, {ir::Atom::of(e), ir::Atom::i64(1)}}, span});
        when = Pred::conj({when, Pred::atom_of(c)});
      }
      if (when.kind == Pred::Kind::True) {
        out.push_back(std::move(hs));
      } else {
        VarId outer = f_.new_var(name, ht);
        ir::GuardOp guard;
        guard.pred = when;
        guard.body.stmts.push_back(std::move(hs));
        guard.body.results.push_back(ir::Atom::of(h));
        out.push_back(Stmt{{outer}, std::move(guard), span});
        h = outer;
      }
      ir::IndexOp read;
      read.tensor = ir::Atom::of(h);
      for (const auto& iv : p.hivars[g]) {
        read.indices.push_back(ir::IndexExpr{true, Affine::var(iv.var), {}});
      }
      if (p.read_guard[g]) {
        VarId inner = f_.new_var(name, rt);
        ir::GuardOp guard;
        guard.pred = *p.read_guard[g];
        guard.body.stmts.push_back(Stmt{{inner}, std::move(read), span});
        guard.body.results.push_back(ir::Atom::of(inner));
        body.stmts[ri].op = std::move(guard);
      } else {
        const bool row = body.stmts[ri].as<ir::GenOp>() != nullptr;
        if (row) {
          // The row's elements read H directly (the row read dies), so that fusion sees each
          // element of H read per point of the region that rereads it and leaves H a table.
          for (size_t k = ri + 1; k < body.stmts.size(); ++k) {
            read_through(body.stmts[k], body.stmts[ri].results[0], read);
          }
        }
        body.stmts[ri].op = std::move(read);
      }
      changed = true;
    }
    // Dead statements that read what moved go with it (dead-code elimination would remove
    // them anyway); the other dead ones stay.
    std::unordered_set<VarId> gone;
    std::vector<Stmt> keep;
    keep.reserve(body.stmts.size());
    for (size_t i = 0; i < body.stmts.size(); ++i) {
      bool drop = p.moves[i];
      if (!drop && !p.live[i]) {
        for (VarId v : free_uses(body.stmts[i])) drop = drop || gone.count(v) != 0;
      }
      if (drop) {
        gone.insert(body.stmts[i].results.begin(), body.stmts[i].results.end());
      } else {
        keep.push_back(std::move(body.stmts[i]));
      }
    }
    body.stmts = std::move(keep);
  }

  const ir::Program& program_;
  ir::Function& f_;
  bool dry_;
};

}  // namespace

std::optional<ir::Function> loop_fission(const ir::Program& program, const ir::Function& f) {
  ir::Function g = f;
  Fission fission(program, g, /*dry=*/false);
  fission.rewrite();
  if (!fission.changed) return std::nullopt;
  return g;
}

std::optional<std::string> loop_fission_candidate(const ir::Program& program,
                                                  const ir::Function& f) {
  ir::Function g = f;  // the walk takes mutable blocks; a dry run changes nothing
  Fission fission(program, g, /*dry=*/true);
  fission.rewrite();
  return fission.found;
}

}  // namespace cot::opt
