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
#include "opt/loop_fission_internal.h"
#include "opt/static_cost.h"

namespace cot::opt {
namespace {

using namespace loop_fission_detail;

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

  static bool size_mentions(const SizeExpr& e, const std::vector<std::string>& names) {
    for (const auto& v : e.vars()) {
      if (std::find(names.begin(), names.end(), v) != names.end()) return true;
    }
    return false;
  }

  void level(RegionCtx& ctx, std::vector<Level>& path, std::vector<Stmt>& out) {
    FissionPlan p = plan_fission(f_, ctx, path);
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
