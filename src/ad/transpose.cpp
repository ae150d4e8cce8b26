#include "ad/transpose.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <unordered_set>

#include "ir/clone.h"
#include "ad/tangent.h"
#include "index/eliminate_sums.h"
#include "ir/size_affine.h"
#include "ir/uses.h"
#include "prims/prim.h"

namespace cot::ad {

// A read of a variable inside nested regions: the chain of region statements from the
// statement being transposed down to the statement that reads it.
struct Transposer::Path {
  std::vector<const ir::Stmt*> stmts;  // original region statements, outermost first
  std::vector<int> region;             // which region of each (if: 0 then, 1 else)
  std::vector<size_t> pos;             // pos[k]: position of stmts[k] in its block (k >= 1)
  long final_pos = -1;  // position of the reader in the innermost block; -1: a result
  enum class Kind { Whole, Affine, Computed } kind = Kind::Whole;
  // Whole: the other readers of v in the same innermost block (same chain), whose
  // contributions are added at each point of one copy of the chain.
  std::vector<long> also;
};

Transposer::~Transposer() = default;

namespace {

std::vector<const ir::Block*> regions_of(const ir::Stmt& s) {
  if (const auto* g = s.as<ir::GenOp>()) return {&g->body};
  if (const auto* r = s.as<ir::ReduceOp>()) return {&r->body};
  if (const auto* a = s.as<ir::AccumOp>()) return {&a->body};
  if (const auto* g = s.as<ir::GuardOp>()) return {&g->body};
  if (const auto* i = s.as<ir::IfOp>()) return {&i->then_branch, &i->else_branch};
  return {};
}

const std::vector<ir::IndexVar>* ivars_of(const ir::Stmt& s) {
  if (const auto* g = s.as<ir::GenOp>()) return &g->ivars;
  if (const auto* r = s.as<ir::ReduceOp>()) return &r->ivars;
  if (const auto* a = s.as<ir::AccumOp>()) return &a->ivars;
  return nullptr;
}

bool is_literal(const ir::Atom& a, double x) {
  return !a.is_var && is_real(a.lit.type) && a.lit.real == x;
}

}  // namespace

std::unique_ptr<Transposer::Level> Transposer::open(
    ir::Block block, std::vector<std::optional<ir::Atom>> ct_results) {
  auto lv = std::make_unique<Level>();
  ir::Function& f = b_.function();
  lv->position.assign(block.stmts.size(), -1);
  std::vector<ir::Stmt> extra;  // statements a split adds after a linear loop
  for (size_t i = 0; i < block.stmts.size(); ++i) {
    ir::Stmt& s = block.stmts[i];
    if (!reads_any(s, tangent_)) {
      b_.append(std::move(s));
      continue;
    }
    if (const auto* l = s.as<ir::LoopOp>()) {
      std::vector<bool> flags = loop_state_activity(f, *l, tangent_);
      bool mixed = false;
      for (bool t : flags) mixed = mixed || !t;
      if (mixed) {
        std::vector<ir::Stmt> parts = split_loop(b_, s, flags, tangent_, policy_);
        for (size_t k = 1; k < parts.size(); ++k) extra.push_back(std::move(parts[k]));
        s = std::move(parts[0]);
      }
      for (ir::VarId r : s.results) {
        if (has_tangent(f.type_of(r))) tangent_.insert(r);
      }
    } else {
      propagate_stmt(f, s, tangent_);
    }
    lv->position[i] = static_cast<long>(lv->stmts.size());
    lv->reads.push_back(stmt_reads(s));
    lv->stmts.push_back(std::move(s));
    for (auto& x : extra) {
      for (ir::VarId r : x.results) tangent_.insert(r);
      lv->reads.push_back(stmt_reads(x));
      lv->stmts.push_back(std::move(x));
    }
    extra.clear();
  }
  lv->results = std::move(block.results);
  lv->ct_results = std::move(ct_results);
  lv->ct_results.resize(lv->results.size());
  return lv;
}

std::optional<ir::Atom> Transposer::ct(Level& lv, ir::VarId v) {
  if (auto it = lv.memo.find(v); it != lv.memo.end()) return it->second;
  std::vector<ir::Atom> parts;
  for (size_t idx = 0; idx < lv.stmts.size(); ++idx) {
    if (!lv.reads[idx].count(v)) continue;
    if (auto c = contribution(lv, idx, v)) parts.push_back(*c);
  }
  for (size_t k = 0; k < lv.results.size(); ++k) {
    if (lv.results[k].is_var && lv.results[k].var == v && lv.ct_results[k]) {
      parts.push_back(*lv.ct_results[k]);
    }
  }
  std::optional<ir::Atom> out;
  for (const auto& p : parts) out = out ? add_values(b_, *out, p) : p;
  lv.memo[v] = out;
  return out;
}

const std::vector<std::optional<ir::Atom>>& Transposer::result_cts(Level& lv, size_t idx) {
  if (auto it = lv.result_cts.find(idx); it != lv.result_cts.end()) return it->second;
  std::vector<std::optional<ir::Atom>> cts;
  const std::vector<ir::VarId> results = lv.stmts[idx].results;
  cts.reserve(results.size());
  for (ir::VarId r : results) cts.push_back(ct(lv, r));
  return lv.result_cts[idx] = std::move(cts);
}

std::optional<ir::Atom> Transposer::contribution(Level& lv, size_t idx, ir::VarId v) {
  const ir::Stmt& s = lv.stmts[idx];
  if (s.as<ir::LoopOp>()) {
    const LoopCts& lc = loop_cts(lv, idx);
    std::optional<ir::Atom> out;
    const auto& op = *lv.stmts[idx].as<ir::LoopOp>();
    for (size_t j = 0; j < op.init.size(); ++j) {
      if (op.init[j].is_var && op.init[j].var == v && lc.init[j]) {
        out = out ? add_values(b_, *out, *lc.init[j]) : *lc.init[j];
      }
    }
    if (auto it = lc.free.find(v); it != lc.free.end() && it->second) {
      out = out ? add_values(b_, *out, *it->second) : *it->second;
    }
    return out;
  }
  if (!regions_of(s).empty()) return region_contribution(lv, idx, v);
  const auto cts = result_cts(lv, idx);
  const ir::Stmt& st = lv.stmts[idx];
  if (cts.empty() || !cts[0]) return std::nullopt;
  if (st.as<ir::PrimOp>()) return prim_contribution(st, v, *cts[0]);
  if (st.as<ir::IndexOp>()) return index_contribution(st, v, *cts[0]);
  if (const auto* t = st.as<ir::TupleOp>()) {
    std::optional<ir::Atom> out;
    for (size_t k = 0; k < t->elems.size(); ++k) {
      if (!t->elems[k].is_var || t->elems[k].var != v) continue;
      ir::Atom c = ir::Atom::of(b_.proj(*cts[0], static_cast<int>(k)));
      out = out ? add_values(b_, *out, c) : c;
    }
    return out;
  }
  if (const auto* p = st.as<ir::ProjOp>()) {
    const Type tt = b_.function().type_of(v);
    std::vector<ir::Atom> elems;
    for (size_t k = 0; k < tt.elems.size(); ++k) {
      elems.push_back(static_cast<int>(k) == p->index ? *cts[0] : zeros(b_, tt.elems[k]));
    }
    return ir::Atom::of(b_.tuple(std::move(elems)));
  }
  throw std::logic_error("ad: cannot transpose a statement that reads a tangent");
}

std::optional<ir::Atom> Transposer::prim_contribution(const ir::Stmt& s, ir::VarId v, ir::Atom ct) {
  const auto& op = *s.as<ir::PrimOp>();
  const PrimInfo& info = prim_info(op.prim);
  const Type vt = b_.function().type_of(v);
  std::optional<ir::Atom> out;
  for (size_t k = 0; k < op.args.size(); ++k) {
    if (!op.args[k].is_var || op.args[k].var != v) continue;
    if (!info.linear[k]) {
      throw std::logic_error("ad: the linear part applies " + std::string(info.name) +
                             " to a tangent in a non-linear position");
    }
    ir::Atom part = ct;
    if (op.prim == Prim::ToF64 || op.prim == Prim::ToF32) {
      if (b_.type_of(ct).elem != vt.elem) {
        part = ir::Atom::of(b_.prim(vt.elem == Scalar::F32 ? Prim::ToF32 : Prim::ToF64, {ct}));
      }
    } else {
      ir::Atom p =
          rules_.partial(b_, op.prim, static_cast<int>(k), op.args, ir::Atom::of(s.results[0]));
      if (is_literal(p, 0.0)) continue;
      if (is_literal(p, -1.0)) {
        part = ir::Atom::of(b_.prim(Prim::Neg, {ct}));
      } else if (!is_literal(p, 1.0)) {
        part = ir::Atom::of(b_.prim(Prim::Mul, {p, ct}));
      }
    }
    out = out ? ir::Atom::of(b_.prim(Prim::Add, {*out, part})) : part;
  }
  return out;
}

// `w = v[e]` outside any region being transposed: a one-hot tensor of v's shape,
// `for j. [e == j_prefix] * ct[j_rest]`.
std::optional<ir::Atom> Transposer::index_contribution(const ir::Stmt& s, ir::VarId v,
                                                       ir::Atom ct) {
  const auto& op = *s.as<ir::IndexOp>();
  if (!op.tensor.is_var || op.tensor.var != v) {
    throw std::logic_error("ad: a tangent used as an index");
  }
  const Type vt = b_.function().type_of(v);
  std::vector<ir::IndexVar> ivars;
  std::vector<ir::VarId> js;
  for (const auto& d : vt.shape) {
    js.push_back(b_.index_var("j"));
    ivars.push_back(ir::IndexVar{js.back(), d});
  }
  return ir::Atom::of(b_.gen(std::move(ivars), [&] {
    std::vector<Pred> eqs;
    for (size_t k = 0; k < op.indices.size(); ++k) {
      const auto& ix = op.indices[k];
      if (ix.is_affine) {
        auto d = Affine::sub(ix.affine, Affine::var(js[k]));
        if (!d) throw std::logic_error("ad: index overflow");
        eqs.push_back(Pred::eq0(*d));
      } else {
        eqs.push_back(Pred::atom_of(b_.prim(Prim::Eq, {ix.computed, ir::Atom::of(js[k])})));
      }
    }
    std::vector<ir::VarId> rest(js.begin() + static_cast<long>(op.indices.size()), js.end());
    return ir::Atom::of(b_.guard(Pred::conj(std::move(eqs)), [&] {
      return std::vector<ir::Atom>{rest.empty() ? ct : ir::Atom::of(b_.index(ct, index_at(rest)))};
    })[0]);
  }));
}

namespace {

// Calls `emit` for every read of v inside the regions of `st`: the chain of region statements
// (with the region taken in each and their positions), the reader's position in the innermost
// block (-1: a result of that block) and its kind (0 whole use, 1 affine read, 2 computed).
using PathFn = std::function<void(const std::vector<const ir::Stmt*>&, const std::vector<int>&,
                                  const std::vector<size_t>&, long, int)>;

void find_paths(const ir::Stmt& st, ir::VarId v, std::vector<const ir::Stmt*> stmts,
                const std::vector<int>& region, const std::vector<size_t>& pos,
                const PathFn& emit) {
  stmts.push_back(&st);
  auto regs = regions_of(st);
  for (size_t r = 0; r < regs.size(); ++r) {
    const ir::Block& blk = *regs[r];
    if (!free_vars(blk).count(v)) continue;
    auto reg = region;
    reg.push_back(static_cast<int>(r));
    for (size_t p = 0; p < blk.stmts.size(); ++p) {
      const ir::Stmt& inner = blk.stmts[p];
      if (!stmt_reads(inner).count(v)) continue;
      auto ps = pos;
      ps.push_back(p);
      if (!regions_of(inner).empty()) {
        find_paths(inner, v, stmts, reg, ps, emit);
        continue;
      }
      int kind = 0;  // whole
      if (const auto* ix = inner.as<ir::IndexOp>()) {
        if (ix->tensor.is_var && ix->tensor.var == v) {
          kind = 1;
          for (const auto& e : ix->indices) {
            if (!e.is_affine) kind = 2;
          }
        }
      }
      emit(stmts, reg, pos, static_cast<long>(p), kind);
    }
    for (const auto& res : blk.results) {
      if (res.is_var && res.var == v) {
        emit(stmts, reg, pos, -1, 0);
        break;
      }
    }
  }
}

}  // namespace

std::optional<ir::Atom> Transposer::region_contribution(Level& lv, size_t idx, ir::VarId v) {
  const auto cts = result_cts(lv, idx);
  bool any = false;
  for (const auto& c : cts) any = any || c.has_value();
  if (!any) return std::nullopt;
  const ir::Stmt& s = lv.stmts[idx];
  std::vector<Path> paths;
  find_paths(s, v, {}, {}, {0},
             [&](const std::vector<const ir::Stmt*>& stmts, const std::vector<int>& region,
                 const std::vector<size_t>& pos, long final_pos, int kind) {
               Path p;
               p.stmts = stmts;
               p.region = region;
               p.pos = pos;
               p.final_pos = final_pos;
               p.kind = static_cast<Path::Kind>(kind);
               paths.push_back(std::move(p));
             });
  // Readers that take v whole along the same chain of regions share one copy of the chain
  // (each copy runs the primal and the transposed body again, loops included, and the copies of
  // nested regions multiply): their contributions, tensors of v's shape, are added per point.
  for (size_t a = 0; a < paths.size(); ++a) {
    if (paths[a].kind != Path::Kind::Whole) continue;
    for (size_t b = a + 1; b < paths.size();) {
      if (paths[b].kind == Path::Kind::Whole && paths[b].stmts == paths[a].stmts &&
          paths[b].region == paths[a].region && paths[b].pos == paths[a].pos) {
        paths[a].also.push_back(paths[b].final_pos);
        paths.erase(paths.begin() + static_cast<long>(b));
      } else {
        ++b;
      }
    }
  }
  const ir::Block* body = shared_residuals(lv, idx);
  std::optional<ir::Atom> out;
  for (const auto& p : paths) {
    auto c =
        p.kind == Path::Kind::Computed ? scatter(s, cts, p, v, body) : gather(s, cts, p, v, body);
    if (c) out = out ? add_values(b_, *out, *c) : *c;
  }
  return out;
}

namespace {

// Whether a statement costs nothing under the cost model (reads, index arithmetic,
// comparisons, data movement), given which of the variables it reads are cost-free to get.
bool costs_nothing(const ir::Function& f, const ir::Stmt& s) {
  if (s.as<ir::IndexOp>() || s.as<ir::SizeOp>() || s.as<ir::TupleOp>() || s.as<ir::ProjOp>()) {
    return true;
  }
  if (s.as<ir::PrimOp>()) {
    for (ir::VarId r : s.results) {
      if (is_real(f.type_of(r).elem)) return false;
    }
    return true;
  }
  if (s.as<ir::GuardOp>() || s.as<ir::IfOp>() || s.as<ir::GenOp>()) {
    for (const ir::Block* blk : regions_of(s)) {
      for (const auto& inner : blk->stmts) {
        if (!costs_nothing(f, inner)) return false;
      }
    }
    return true;
  }
  return false;
}

}  // namespace

// Reverse mode copies the body of a linear gen or sum once per gather or scatter (one per read
// of a tangent in it), and each copy recomputes the primal body at the gathered position. When
// there are several copies, the primal values the linear statements read that cost something to
// compute and depend on the index variables (an invariant one is hoisted by the optimizer) are
// materialized, `let R = for i. p(i)`, and the copies read R at their positions (the statements
// that computed them become dead). The tables are built in evaluation order, each reading the
// tables before it, so each costly statement is computed once per position, where the copies
// each recomputed the ones they needed: sharing does not add work.
// Values are taken at the top level of the body and inside guards there (nested to any depth)
// whose predicates read no value a linear statement binds: a value under guards `[g1] * {...
// [g2] * {... p}}` is materialized as `for i. [g1] * {... [g2] * {... p}}`, a strong zero
// where a predicate fails. Semantics are kept: the primal gen or sum evaluated p at every
// position where its guards hold (and nowhere else R evaluates it), and each copy reads R only
// at positions of the range, inside its copy of the same guards.
const ir::Block* Transposer::shared_residuals(Level& lv, size_t idx) {
  if (auto it = lv.residual_bodies.find(idx); it != lv.residual_bodies.end()) {
    return it->second ? &*it->second : nullptr;
  }
  std::optional<ir::Block>& out = lv.residual_bodies[idx];
  const ir::Stmt& s = lv.stmts[idx];
  if (!s.as<ir::GenOp>() && !s.as<ir::ReduceOp>()) return nullptr;
  const std::vector<ir::IndexVar>& ivars = *ivars_of(s);
  const ir::Block& body = *regions_of(s)[0];
  if (ivars.empty()) return nullptr;
  ir::Function& f = b_.function();

  // How many copies of the body the reverse pass makes per position: one per read, and a read
  // under an inner gen or sum copies it once per inner position of the read (counted as two).
  // The readers of v whole along one chain share a copy (region_contribution).
  size_t copies = 0;
  for (ir::VarId v : free_vars(body)) {
    if (!tangent_.count(v)) continue;
    std::set<std::tuple<std::vector<const ir::Stmt*>, std::vector<int>, std::vector<size_t>>>
        whole_chains;
    find_paths(s, v, {}, {}, {0},
               [&](const std::vector<const ir::Stmt*>& stmts, const std::vector<int>& region,
                   const std::vector<size_t>& pos, long, int kind) {
                 if (kind == 0 && !whole_chains.emplace(stmts, region, pos).second) return;
                 bool inner = false;
                 for (size_t k = 1; k < stmts.size(); ++k) {
                   const auto* iv = ivars_of(*stmts[k]);
                   inner = inner || (iv && !iv->empty());
                 }
                 copies += inner ? 2 : 1;
               });
  }
  if (copies < 2) return nullptr;

  // Classify the body as open() does, descending into guards on primal predicates; find the
  // primal values the linear statements read. A value is named by `where`: the positions of
  // the guards on the way to it, each in its enclosing block, then its own position.
  using Where = std::vector<size_t>;
  VarSet tangent = tangent_;
  VarSet varying, bound, free_cost;
  for (const auto& iv : ivars) varying.insert(iv.var);
  std::map<Where, std::vector<size_t>> primal_of;  // block (its guards' positions) -> primal stmts
  std::vector<Where> shared;                       // the values materialized
  auto primal_pred = [&](const Pred& pred) {
    std::vector<int32_t> vs;
    pred.collect_vars(vs);
    for (int32_t x : vs) {
      if (tangent.count(x)) return false;
    }
    return true;
  };
  std::function<void(const ir::Block&, const Where&)> scan = [&](const ir::Block& blk,
                                                                 const Where& guards) {
    VarSet read_by_linear;
    std::vector<size_t>& primal = primal_of[guards];
    for (size_t p = 0; p < blk.stmts.size(); ++p) {
      const ir::Stmt& st = blk.stmts[p];
      const VarSet reads = stmt_reads(st);
      if (reads_any(st, tangent)) {
        if (const auto* g = st.as<ir::GuardOp>(); g && primal_pred(g->pred)) {
          Where inner = guards;
          inner.push_back(p);
          scan(g->body, inner);
        }
        if (st.as<ir::LoopOp>()) {
          // open() marks every real result of a linear loop (its primal state too).
          for (ir::VarId r : st.results) {
            if (has_tangent(f.type_of(r))) tangent.insert(r);
          }
        } else {
          propagate_stmt(f, st, tangent);
        }
        // Whatever reads a value a linear statement binds is not primal here.
        for (ir::VarId r : st.results) tangent.insert(r);
        read_by_linear.insert(reads.begin(), reads.end());
        continue;
      }
      primal.push_back(p);
      bool dep = false, free_ = costs_nothing(f, st);
      for (ir::VarId x : reads) {
        dep = dep || varying.count(x);
        // A value bound in the body that costs something makes this one cost too.
        if (bound.count(x) && !free_cost.count(x)) free_ = false;
      }
      for (ir::VarId r : st.results) {
        bound.insert(r);
        if (dep) varying.insert(r);
        if (free_) free_cost.insert(r);
      }
    }
    for (const auto& r : blk.results) {
      if (r.is_var) read_by_linear.insert(r.var);
    }
    for (size_t p : primal) {
      const ir::Stmt& st = blk.stmts[p];
      if (st.results.size() != 1) continue;
      const ir::VarId r = st.results[0];
      const Type t = f.type_of(r);
      if (!read_by_linear.count(r) || !varying.count(r) || free_cost.count(r)) continue;
      if (!t.is_scalar() || !(is_real(t.elem) || t.elem == Scalar::I64)) continue;
      Where w = guards;
      w.push_back(p);
      shared.push_back(std::move(w));
    }
  };
  scan(body, {});
  if (shared.empty()) return nullptr;
  // Evaluation order (a value reads only values before it, outside or in its guards).
  std::sort(shared.begin(), shared.end());

  std::vector<ir::IndexExpr> at;
  at.reserve(ivars.size());
  for (const auto& iv : ivars) at.push_back(ir::affine_index(Affine::var(iv.var)));
  std::map<Where, ir::VarId> table_of;  // the values materialized so far
  // The block computing the value at `w`: at each level, the primal statements it needs (a value
  // materialized before is read from its table), then the guard to the next level (same
  // predicate, the rest inside).
  auto value_block = [&](const Where& w) {
    std::function<ir::Block(size_t, const ir::Block&)> level = [&](size_t k, const ir::Block& blk) {
      ir::Block lb;
      VarSet needed;
      std::optional<ir::Stmt> guard;
      if (k + 1 == w.size()) {
        const ir::VarId v = blk.stmts[w[k]].results[0];
        needed.insert(v);
        lb.results = {ir::Atom::of(v)};
      } else {
        const ir::Stmt& gs = blk.stmts[w[k]];
        const auto& g = *gs.as<ir::GuardOp>();
        ir::Block inner = level(k + 1, g.body);
        const ir::VarId v = inner.results[0].var;
        const ir::VarId r = f.new_var(f.vars[static_cast<size_t>(v)].name, f.type_of(v));
        guard.emplace();
        guard->results = {r};
        guard->op = ir::GuardOp{g.pred, std::move(inner)};
        guard->span = gs.span;
        needed = stmt_reads(*guard);
        lb.results = {ir::Atom::of(r)};
      }
      Where prefix(w.begin(), w.begin() + static_cast<long>(k));
      const std::vector<size_t>& primal = primal_of.at(prefix);
      std::vector<ir::Stmt> taken;
      for (auto it = primal.rbegin(); it != primal.rend(); ++it) {
        ir::Stmt st = blk.stmts[*it];
        bool need = false;
        for (ir::VarId r : st.results) need = need || needed.count(r);
        if (!need) continue;
        prefix.push_back(*it);
        if (auto t = table_of.find(prefix); t != table_of.end()) {
          st.op = ir::IndexOp{ir::Atom::of(t->second), at};
        }
        prefix.pop_back();
        const VarSet reads = stmt_reads(st);
        needed.insert(reads.begin(), reads.end());
        taken.push_back(std::move(st));
      }
      for (auto it = taken.rbegin(); it != taken.rend(); ++it) lb.stmts.push_back(std::move(*it));
      if (guard) lb.stmts.push_back(std::move(*guard));
      return lb;
    };
    return level(0, body);
  };

  out = body;
  for (const Where& w : shared) {
    const ir::Block computed = value_block(w);
    ir::Block* blk = &*out;
    for (size_t k = 0; k + 1 < w.size(); ++k) {
      blk = &std::get<ir::GuardOp>(blk->stmts[w[k]].op).body;
    }
    ir::Stmt& st = blk->stmts[w.back()];
    std::vector<ir::IndexVar> fresh;
    ir::CloneMap map;
    for (const auto& iv : ivars) {
      fresh.push_back(
          ir::IndexVar{b_.index_var(f.vars[static_cast<size_t>(iv.var)].name), iv.extent});
      map.atoms[iv.var] = ir::Atom::of(fresh.back().var);
    }
    const ir::VarId r = b_.gen(
        fresh,
        [&] {
          ir::Block copy = ir::clone_block(f, computed, f, map);
          for (auto& c : copy.stmts) b_.append(std::move(c));
          return copy.results[0];
        },
        st.span);
    b_.named(r, f.vars[static_cast<size_t>(st.results[0])].name);
    table_of[w] = r;
    st.op = ir::IndexOp{ir::Atom::of(r), at};
  }
  return &*out;
}

namespace {

// An i64 atom with the value of an affine expression.
ir::Atom emit_affine(ir::Builder& b, const Affine& a) {
  ir::Atom acc = ir::Atom::i64(a.constant_term());
  bool first = a.constant_term() == 0;
  for (const auto& [v, c] : a.terms()) {
    ir::Atom term = c == 1 ? ir::Atom::of(v)
                           : ir::Atom::of(b.prim(Prim::Mul, {ir::Atom::i64(c), ir::Atom::of(v)}));
    acc = first ? term : ir::Atom::of(b.prim(Prim::Add, {acc, term}));
    first = false;
  }
  return acc;
}

std::optional<Affine> substitute_all(const Affine& a,
                                     const std::unordered_map<ir::VarId, Affine>& by) {
  Affine out = a;
  for (const auto& [v, c] : a.terms()) {
    (void)c;
    auto it = by.find(v);
    if (it == by.end()) continue;
    auto s = out.substitute(v, it->second);
    if (!s) return std::nullopt;
    out = *s;
  }
  return out;
}

}  // namespace

// One read of v inside region statement s, as a gather over v's positions j:
//   for j. sum (kept i). [conditions] * c(i)
// where the equalities `index(i) == j` have been solved for the summed variables they pin.
std::optional<ir::Atom> Transposer::gather(const ir::Stmt& s,
                                           const std::vector<std::optional<ir::Atom>>& cts,
                                           const Path& path, ir::VarId v, const ir::Block* body0) {
  ir::Function& f = b_.function();
  const Type vt = f.type_of(v);
  // A reader that takes v whole (a loop whose body reads it, a tuple, a result) contributes a
  // tensor of v's shape at each point of the path: those are summed over the path's points,
  // not gathered per position of v (which would rerun the path, a loop's reverse pass
  // included, once per position).
  const bool whole = (path.final_pos < 0 || path.kind == Path::Kind::Whole) && vt.is_tensor();
  std::vector<ir::IndexVar> jvars;
  std::vector<ir::VarId> js;
  for (const auto& d : vt.shape) {
    if (whole) break;
    js.push_back(b_.index_var("j"));
    jvars.push_back(ir::IndexVar{js.back(), d});
  }
  // The summation variables along the path and the equalities of the read.
  std::vector<SummedVar> summed;
  std::unordered_map<ir::VarId, size_t> level_of;
  bool solvable = true;
  for (size_t k = 0; k < path.stmts.size(); ++k) {
    if (const auto* iv = ivars_of(*path.stmts[k])) {
      for (const auto& x : *iv) {
        auto ext = ir::size_affine(f, x.extent);
        if (!ext) solvable = false;
        summed.push_back(SummedVar{x.var, ext ? *ext : Affine::constant(0)});
        level_of[x.var] = k;
      }
    }
  }
  std::vector<Affine> eqs;
  size_t nidx = 0;
  if (path.kind == Path::Kind::Affine) {
    const ir::Block& innermost =
        *regions_of(*path.stmts.back())[static_cast<size_t>(path.region.back())];
    const auto& ix = *innermost.stmts[static_cast<size_t>(path.final_pos)].as<ir::IndexOp>();
    nidx = ix.indices.size();
    for (size_t k = 0; k < nidx; ++k) {
      auto d = Affine::sub(ix.indices[k].affine, Affine::var(js[k]));
      if (!d) return std::nullopt;
      eqs.push_back(*d);
    }
  }
  // An index may mention variables computed inside the regions (a callee's size variable,
  // inlined): the equalities can then only be tested where the read happens, after the copy of
  // its block, so nothing is solved for this read (correct, without the sparsity).
  bool at_read = false;
  {
    VarSet local;
    for (const ir::Stmt* st : path.stmts) {
      for (const ir::Block* blk : regions_of(*st)) {
        VarSet fv = free_vars(*blk);
        ir::for_each_use(*blk, [&](ir::VarId x) {
          if (!fv.count(x)) local.insert(x);
        });
      }
    }
    for (const auto& e : eqs) {
      for (const auto& [x, c] : e.terms()) {
        (void)c;
        if (local.count(x) && !level_of.count(x)) at_read = true;
      }
    }
  }
  SumElimination elim;
  std::optional<SumElimination> solved =
      solvable && !at_read ? eliminate_sums(summed, eqs) : std::nullopt;
  // The levels are emitted outside in, so a variable's value may mention kept variables of its
  // own level or outer ones only: `h[i + 2 * k]` in `for i. sum k` solves i = j - 2k, which the
  // copy of i's level could not evaluate. Such a variable stays summed (free to the solver),
  // which then solves the inner one: k = (j - i) / 2 where j - i is even.
  std::vector<ir::VarId> forced;  // kept summed by this rule, over their ranges
  for (std::vector<SummedVar> rest = summed; solved && !solved->empty;) {
    const SolvedVar* inverted = nullptr;
    for (const auto& sv : solved->solved) {
      for (ir::VarId u : solved->kept) {
        if (sv.numerator.mentions(u) && level_of.at(u) > level_of.at(sv.var)) inverted = &sv;
      }
    }
    if (inverted == nullptr) break;
    const ir::VarId outer = inverted->var;
    forced.push_back(outer);
    std::erase_if(rest, [&](const SummedVar& x) { return x.var == outer; });
    solved = eliminate_sums(rest, eqs);
    if (solved && !solved->empty) {
      // The forced ones are summed over their ranges again, in level order among the kept.
      solved->kept.insert(solved->kept.end(), forced.begin(), forced.end());
      auto position = [&](ir::VarId x) {
        return std::find_if(summed.begin(), summed.end(),
                            [&](const SummedVar& y) { return y.var == x; }) -
               summed.begin();
      };
      std::sort(solved->kept.begin(), solved->kept.end(),
                [&](ir::VarId a, ir::VarId b) { return position(a) < position(b); });
    }
  }
  if (solved) {
    elim = std::move(*solved);
  } else {
    for (const auto& sv : summed) elim.kept.push_back(sv.var);
    if (!at_read) {
      for (const auto& e : eqs) elim.conditions.push_back(Pred::eq0(e));
    }
  }
  if (elim.empty) return std::nullopt;
  std::unordered_map<ir::VarId, const SolvedVar*> solved_of;
  for (const auto& sv : elim.solved) solved_of[sv.var] = &sv;
  // Each condition goes to the outermost level where all its variables are bound.
  auto cond_level = [&](const Pred& p) -> long {
    std::vector<int32_t> vs;
    p.collect_vars(vs);
    long lvl = -1;
    for (int32_t x : vs) {
      if (auto it = level_of.find(x); it != level_of.end())
        lvl = std::max(lvl, static_cast<long>(it->second));
    }
    return lvl;
  };
  std::vector<std::pair<long, Pred>> conds;
  for (const auto& c : elim.conditions) conds.emplace_back(cond_level(c), c);
  std::vector<std::pair<long, std::pair<Affine, int64_t>>> divs;
  for (const auto& d : elim.divisible) divs.emplace_back(cond_level(Pred::eq0(d.first)), d);

  std::unordered_map<ir::VarId, Affine> binding;  // original summed variable -> affine in fresh
  // Ranges of the variables bound so far (the targets j, then kept summation variables), under
  // which Fourier-Motzkin drops implied range conditions.
  std::vector<SummedVar> ranges;
  for (size_t k = 0; k < js.size(); ++k) {
    if (auto e = ir::size_affine(f, vt.shape[k])) ranges.push_back(SummedVar{js[k], *e});
  }
  auto guard_for = [&](long lvl) {
    std::vector<Pred> affine_ps, ps;
    for (const auto& [l, p] : conds) {
      if (l != lvl) continue;
      affine_ps.push_back(p.rename([&](int32_t x) {
        auto it = binding.find(x);
        return it != binding.end() && it->second.terms().size() == 1 ? it->second.terms()[0].first
                                                                     : x;
      }));
    }
    if (!affine_ps.empty()) ps.push_back(simplify_conjunction(affine_ps, ranges));
    for (const auto& [l, d] : divs) {
      if (l != lvl) continue;
      auto e = substitute_all(d.first, binding);
      if (!e) throw std::logic_error("ad: index overflow");
      ir::Atom val = emit_affine(b_, *e);
      ir::Atom m = ir::Atom::of(b_.prim(Prim::Mod, {val, ir::Atom::i64(d.second)}));
      ps.push_back(Pred::atom_of(b_.prim(Prim::Eq, {m, ir::Atom::i64(0)})));
    }
    return Pred::conj(std::move(ps));
  };
  const Scalar elem = vt.elem;
  auto zero = [&] { return whole ? zeros(b_, vt) : ir::Atom::real(0.0, elem); };

  // Descends one level: `st` is the region statement at this level (the original for k = 0,
  // else its copy), `st_cts` the cotangents of its results.
  std::function<ir::Atom(size_t, const ir::Stmt&, std::vector<std::optional<ir::Atom>>)> descend;
  auto finish_level = [&](size_t k, Level& lvl) -> ir::Atom {
    if (k + 1 < path.stmts.size()) {
      long at = lvl.position.at(path.pos[k + 1]);
      if (at < 0) return zero();
      const auto next_cts = result_cts(lvl, static_cast<size_t>(at));
      bool any = false;
      for (const auto& c : next_cts) any = any || c.has_value();
      if (!any) return zero();
      return descend(k + 1, lvl.stmts[static_cast<size_t>(at)], next_cts);
    }
    std::optional<ir::Atom> c;
    std::vector<ir::VarId> rest;
    if (path.final_pos < 0 || path.kind == Path::Kind::Whole) {
      auto whole_part = [&](long final_pos) -> std::optional<ir::Atom> {
        if (final_pos >= 0) {
          long at = lvl.position.at(static_cast<size_t>(final_pos));
          return at < 0 ? std::nullopt : contribution(lvl, static_cast<size_t>(at), v);
        }
        // v may be yielded more than once (`if c then (t, t) else (x, x)`): every result
        // that is v contributes.
        std::optional<ir::Atom> sum;
        for (size_t r = 0; r < lvl.results.size(); ++r) {
          if (!lvl.results[r].is_var || lvl.results[r].var != v || !lvl.ct_results[r]) continue;
          sum = sum ? add_values(b_, *sum, *lvl.ct_results[r]) : *lvl.ct_results[r];
        }
        return sum;
      };
      c = whole_part(path.final_pos);
      for (long other : path.also) {
        if (auto part = whole_part(other)) c = c ? add_values(b_, *c, *part) : *part;
      }
      rest = js;
    } else {
      long at = lvl.position.at(static_cast<size_t>(path.final_pos));
      if (at >= 0) c = ct(lvl, lvl.stmts[static_cast<size_t>(at)].results[0]);
      rest.assign(js.begin() + static_cast<long>(nidx), js.end());
      if (c && at_read) {
        std::vector<Pred> here;
        const auto& read = *lvl.stmts[static_cast<size_t>(at)].as<ir::IndexOp>();
        for (size_t q = 0; q < nidx; ++q) {
          const auto& ix = read.indices[q];
          if (!ix.is_affine) {
            here.push_back(Pred::atom_of(b_.prim(Prim::Eq, {ix.computed, ir::Atom::of(js[q])})));
            continue;
          }
          auto d = Affine::sub(ix.affine, Affine::var(js[q]));
          if (!d) throw std::logic_error("ad: index overflow");
          here.push_back(Pred::eq0(*d));
        }
        const ir::Atom value = *c;
        c = ir::Atom::of(b_.guard(Pred::conj(std::move(here)), [&] {
          return std::vector<ir::Atom>{
              rest.empty() ? value : ir::Atom::of(b_.index(value, index_at(rest)))};
        })[0]);
        return *c;
      }
    }
    if (!c) return zero();
    return rest.empty() ? *c : ir::Atom::of(b_.index(*c, index_at(rest)));
  };
  descend = [&](size_t k, const ir::Stmt& st,
                std::vector<std::optional<ir::Atom>> st_cts) -> ir::Atom {
    const ir::Block& region =
        k == 0 && body0 ? *body0 : *regions_of(st)[static_cast<size_t>(path.region[k])];
    const auto* cur_ivars = ivars_of(st);
    const auto* orig_ivars = ivars_of(*path.stmts[k]);
    std::vector<ir::IndexVar> kept;
    if (cur_ivars) {
      for (size_t q = 0; q < cur_ivars->size(); ++q) {
        const ir::VarId o = (*orig_ivars)[q].var;
        if (solved_of.count(o)) continue;
        ir::VarId fresh = b_.index_var(f.vars[static_cast<size_t>(o)].name);
        kept.push_back(ir::IndexVar{fresh, (*cur_ivars)[q].extent});
        binding[o] = Affine::var(fresh);
        if (auto e = ir::size_affine(f, (*cur_ivars)[q].extent))
          ranges.push_back(SummedVar{fresh, *e});
      }
    }
    auto inner = [&]() -> ir::Atom {
      ir::CloneMap map;
      std::vector<ir::IndexExpr> at;  // the position of this level's element
      if (cur_ivars) {
        for (size_t q = 0; q < cur_ivars->size(); ++q) {
          const ir::VarId o = (*orig_ivars)[q].var, c = (*cur_ivars)[q].var;
          auto it = solved_of.find(o);
          if (it == solved_of.end()) {
            const ir::VarId fresh = binding.at(o).terms()[0].first;
            map.atoms[c] = ir::Atom::of(fresh);
            at.push_back(ir::affine_index(Affine::var(fresh)));
            continue;
          }
          auto num = substitute_all(it->second->numerator, binding);
          if (!num) throw std::logic_error("ad: index overflow");
          ir::Atom val = emit_affine(b_, *num);
          if (it->second->divisor != 1) {
            val = ir::Atom::of(b_.prim(Prim::FloorDiv, {val, ir::Atom::i64(it->second->divisor)}));
            map.atoms[c] = val;
            at.push_back(ir::computed_index(val));
          } else {
            map.atoms[c] = val;
            map.affine[c] = *num;
            at.push_back(ir::affine_index(*num));
          }
          binding[o] = *num;  // (divisor > 1: only used through atoms)
        }
      }
      auto body = [&]() -> ir::Atom {
        ir::Block copy = ir::clone_block(f, region, f, map);
        std::vector<std::optional<ir::Atom>> rcts(copy.results.size());
        if (st.as<ir::GenOp>()) {
          if (st_cts[0]) rcts[0] = ir::Atom::of(b_.index(*st_cts[0], at));
        } else if (st.as<ir::ReduceOp>()) {
          rcts[0] = st_cts[0];
        } else if (st.as<ir::AccumOp>()) {
          // The value's cotangent is the result's at the positions the body yields (emitted
          // with the primal statements by open()).
        } else {
          rcts = st_cts;
        }
        const bool accum = st.as<ir::AccumOp>() != nullptr;
        auto lvl = open(std::move(copy), accum ? std::vector<std::optional<ir::Atom>>{} : rcts);
        if (accum && st_cts[0]) {
          std::vector<ir::IndexExpr> positions;
          for (size_t r = 0; r + 1 < lvl->results.size(); ++r) {
            positions.push_back(ir::computed_index(lvl->results[r]));
          }
          lvl->ct_results.back() = ir::Atom::of(b_.index(*st_cts[0], positions));
        }
        return finish_level(k, *lvl);
      };
      Pred g = guard_for(static_cast<long>(k));
      if (g.kind == Pred::Kind::False) return zero();
      if (g.kind == Pred::Kind::True) return body();
      return ir::Atom::of(b_.guard(g, [&] { return std::vector<ir::Atom>{body()}; })[0]);
    };
    if (const auto* i = st.as<ir::IfOp>()) {
      const bool then = path.region[k] == 0;
      return ir::Atom::of(b_.if_(
          i->cond, [&] { return std::vector<ir::Atom>{then ? inner() : zero()}; },
          [&] { return std::vector<ir::Atom>{then ? zero() : inner()}; })[0]);
    }
    if (const auto* g = st.as<ir::GuardOp>()) {
      return ir::Atom::of(b_.guard(g->pred, [&] { return std::vector<ir::Atom>{inner()}; })[0]);
    }
    if (kept.empty()) return inner();
    return ir::Atom::of(b_.reduce(ast::ReduceKind::Sum, kept, inner));
  };
  auto element = [&]() -> ir::Atom {
    Pred top = guard_for(-1);
    if (top.kind == Pred::Kind::False) return zero();
    if (top.kind == Pred::Kind::True) return descend(0, s, cts);
    return ir::Atom::of(
        b_.guard(top, [&] { return std::vector<ir::Atom>{descend(0, s, cts)}; })[0]);
  };
  if (js.empty()) return element();
  return ir::Atom::of(b_.gen(jvars, element));
}

// One read of v with a computed index inside region statement s, as a scatter-add:
//   accum[shape(v)] i. (index(i), c(i))
std::optional<ir::Atom> Transposer::scatter(const ir::Stmt& s,
                                            const std::vector<std::optional<ir::Atom>>& cts,
                                            const Path& path, ir::VarId v, const ir::Block* body0) {
  ir::Function& f = b_.function();
  const Type vt = f.type_of(v);
  const ir::Block& innermost =
      *regions_of(*path.stmts.back())[static_cast<size_t>(path.region.back())];
  const size_t nidx =
      innermost.stmts[static_cast<size_t>(path.final_pos)].as<ir::IndexOp>()->indices.size();
  std::vector<SizeExpr> pre(vt.shape.begin(), vt.shape.begin() + static_cast<long>(nidx));
  std::vector<SizeExpr> rest(vt.shape.begin() + static_cast<long>(nidx), vt.shape.end());
  const Type vtype = Type::tensor(vt.elem, rest);
  // Every index variable along the path becomes an index variable of the accum.
  std::vector<ir::IndexVar> all;
  std::vector<std::vector<ir::VarId>> fresh(path.stmts.size());
  for (size_t k = 0; k < path.stmts.size(); ++k) {
    if (const auto* iv = ivars_of(*path.stmts[k])) {
      for (const auto& x : *iv) {
        fresh[k].push_back(b_.index_var(f.vars[static_cast<size_t>(x.var)].name));
        all.push_back(ir::IndexVar{fresh[k].back(), x.extent});
      }
    }
  }
  auto zeros_out = [&] {
    std::vector<ir::Atom> out(nidx, ir::Atom::i64(0));
    out.push_back(zeros(b_, vtype));
    return out;
  };
  std::function<std::vector<ir::Atom>(size_t, const ir::Stmt&,
                                      std::vector<std::optional<ir::Atom>>)>
      descend;
  descend = [&](size_t k, const ir::Stmt& st,
                std::vector<std::optional<ir::Atom>> st_cts) -> std::vector<ir::Atom> {
    const ir::Block& region =
        k == 0 && body0 ? *body0 : *regions_of(st)[static_cast<size_t>(path.region[k])];
    const auto* cur = ivars_of(st);
    auto inner = [&]() -> std::vector<ir::Atom> {
      ir::CloneMap map;
      std::vector<ir::IndexExpr> at;
      if (cur) {
        for (size_t q = 0; q < cur->size(); ++q) {
          map.atoms[(*cur)[q].var] = ir::Atom::of(fresh[k][q]);
          at.push_back(ir::affine_index(Affine::var(fresh[k][q])));
        }
      }
      ir::Block copy = ir::clone_block(f, region, f, map);
      std::vector<std::optional<ir::Atom>> rcts(copy.results.size());
      const bool accum = st.as<ir::AccumOp>() != nullptr;
      if (st.as<ir::GenOp>()) {
        if (st_cts[0]) rcts[0] = ir::Atom::of(b_.index(*st_cts[0], at));
      } else if (st.as<ir::ReduceOp>()) {
        rcts[0] = st_cts[0];
      } else if (!accum) {
        rcts = st_cts;
      }
      auto lvl = open(std::move(copy), accum ? std::vector<std::optional<ir::Atom>>{} : rcts);
      if (accum && st_cts[0]) {
        std::vector<ir::IndexExpr> positions;
        for (size_t r = 0; r + 1 < lvl->results.size(); ++r) {
          positions.push_back(ir::computed_index(lvl->results[r]));
        }
        lvl->ct_results.back() = ir::Atom::of(b_.index(*st_cts[0], positions));
      }
      if (k + 1 < path.stmts.size()) {
        long p = lvl->position.at(path.pos[k + 1]);
        if (p < 0) return zeros_out();
        const auto next_cts = result_cts(*lvl, static_cast<size_t>(p));
        return descend(k + 1, lvl->stmts[static_cast<size_t>(p)], next_cts);
      }
      long p = lvl->position.at(static_cast<size_t>(path.final_pos));
      if (p < 0) return zeros_out();
      const ir::Stmt& read = lvl->stmts[static_cast<size_t>(p)];
      std::vector<ir::Atom> out;
      for (const auto& ix : read.as<ir::IndexOp>()->indices) {
        out.push_back(ix.is_affine ? emit_affine(b_, ix.affine) : ix.computed);
      }
      auto c = ct(*lvl, read.results[0]);
      out.push_back(c ? *c : zeros(b_, vtype));
      return out;
    };
    if (const auto* i = st.as<ir::IfOp>()) {
      // The read runs only on one branch: a guard on that branch's condition, so that the
      // other branch's contribution is a strong zero, which goes nowhere. A placeholder
      // position there would be range-checked, and no position is in range of an empty
      // tensor (gmm's l at d = 1).
      const bool then = path.region[k] == 0;
      const Pred on = i->cond.is_var                ? Pred::atom_of(i->cond.var, !then)
                      : i->cond.lit.boolean == then ? Pred::truth()
                                                    : Pred::falsity();
      if (on.kind == Pred::Kind::False) return zeros_out();
      if (on.kind == Pred::Kind::True) return inner();
      auto r = b_.guard(on, inner);
      std::vector<ir::Atom> out;
      out.reserve(r.size());
      for (ir::VarId x : r) out.push_back(ir::Atom::of(x));
      return out;
    }
    if (const auto* g = st.as<ir::GuardOp>()) {
      auto r = b_.guard(g->pred, inner);
      std::vector<ir::Atom> out;
      out.reserve(r.size());
      for (ir::VarId x : r) out.push_back(ir::Atom::of(x));
      return out;
    }
    return inner();
  };
  // Its errors (a position out of range) point at the read it transposes.
  const Span read_span = innermost.stmts[static_cast<size_t>(path.final_pos)].span;
  return ir::Atom::of(b_.accum(
      pre, all, [&] { return descend(0, s, cts); }, read_span));
}

namespace {

// The statements of a loop's body that read tangent tensor x one element (or slice) per
// iteration at a position that moves with it, as a scan reads its xs: x[t], A[i, t + 1]. They
// must be all of the body's uses of x, at its top level, with affine indices over the counter
// and what is bound outside the body, the counter among them. Empty when x is used otherwise.
std::vector<size_t> stepped_reads(const ir::Function& f, const ir::LoopOp& op, ir::VarId x) {
  if (op.is_while || f.type_of(x).is_tuple || f.type_of(x).shape.empty()) return {};
  // What varies per iteration besides the counter: the state and the body's values.
  std::unordered_set<ir::VarId> local(op.state.begin(), op.state.end());
  for (const auto& s : op.body.stmts) local.insert(s.results.begin(), s.results.end());
  std::vector<size_t> reads;
  for (size_t k = 0; k < op.body.stmts.size(); ++k) {
    const auto* r = op.body.stmts[k].as<ir::IndexOp>();
    if (r == nullptr || !r->tensor.is_var || r->tensor.var != x) continue;
    bool moves = false;
    for (const auto& ix : r->indices) {
      if (!ix.is_affine) return {};
      for (const auto& [v, c] : ix.affine.terms()) {
        (void)c;
        if (v == op.iter) moves = true;
        if (local.count(v) != 0) return {};
      }
    }
    if (!moves) return {};
    reads.push_back(k);
  }
  int uses = 0;
  ir::for_each_use(op.body, [&](ir::VarId v) { uses += v == x ? 1 : 0; });
  if (reads.empty() || uses != static_cast<int>(reads.size())) return {};
  return reads;
}

}  // namespace

// A linear loop `ds = loop ds = init for k < T { body }` transposes to a loop that runs the
// iterations backwards, carrying the state's cotangent and the cotangents of the tangents the
// body reads from outside (summed over iterations).
const Transposer::LoopCts& Transposer::loop_cts(Level& lv, size_t idx) {
  if (auto it = lv.loops.find(idx); it != lv.loops.end()) return *it->second;
  if (const auto* l = lv.stmts[idx].as<ir::LoopOp>(); l && l->saves_states) {
    // The linear loop itself is not emitted, but its count T' names the type of its stacks,
    // which the cotangents of the stacks are gathered over: bind T' (== T) first.
    ir::Stmt bind;
    bind.results = {lv.stmts[idx].results[l->state.size()]};
    bind.op = ir::PrimOp{Prim::Add, {l->count, ir::Atom::i64(0)}};
    bind.span = lv.stmts[idx].span;
    b_.append(std::move(bind));
  }
  const auto cts = result_cts(lv, idx);
  const ir::Stmt& s = lv.stmts[idx];
  const auto& op = *s.as<ir::LoopOp>();
  if (std::none_of(cts.begin(), cts.end(), [](const auto& c) { return c.has_value(); })) {
    // A linear map of a zero cotangent is zero: no reverse loop (a symbolic zero, as JAX's).
    auto lc = std::make_unique<LoopCts>();
    lc->init.assign(op.state.size(), std::nullopt);
    return *(lv.loops[idx] = std::move(lc));
  }
  if (op.is_while) throw std::logic_error("ad: a linear while-loop (unzip makes for-loops)");
  ir::Function& f = b_.function();
  std::vector<ir::VarId> free;
  for (ir::VarId x : free_vars(op.body)) {
    if (tangent_.count(x)) free.push_back(x);
  }
  std::sort(free.begin(), free.end());
  // A tensor the body reads at a position that moves with the iteration is not carried (a
  // dense cotangent updated at one position per step): each step's cotangent of the read is a
  // state of the reverse loop, which saves it, and is scattered after the loop (the cotangent
  // of a scan's xs is its transpose's ys, as in JAX).
  std::vector<ir::VarId> carried;
  std::vector<std::pair<ir::VarId, size_t>> stepped;  // (tensor, read statement of the body)
  for (ir::VarId x : free) {
    auto reads = stepped_reads(f, op, x);
    if (reads.empty()) carried.push_back(x);
    for (size_t k : reads) stepped.emplace_back(x, k);
  }
  std::vector<ir::Atom> init;
  for (size_t j = 0; j < op.state.size(); ++j) {
    init.push_back(cts[j] ? *cts[j] : zeros(b_, f.type_of(op.state[j])));
  }
  for (ir::VarId x : carried) init.push_back(zeros(b_, f.type_of(x)));
  for (const auto& [x, k] : stepped) {
    init.push_back(zeros(b_, f.type_of(op.body.stmts[k].results[0])));
  }
  const size_t n = op.state.size();
  const size_t nc = carried.size();
  auto body = [&](const std::vector<ir::VarId>& state, ir::VarId kk) {
    ir::Atom last = ir::Atom::of(b_.prim(Prim::Sub, {op.count, ir::Atom::i64(1)}));
    ir::Atom k = ir::Atom::of(b_.prim(Prim::Sub, {last, ir::Atom::of(kk)}));
    ir::CloneMap map;
    map.atoms[op.iter] = k;
    std::vector<ir::VarId> holders;
    for (size_t j = 0; j < n; ++j) {
      holders.push_back(
          f.new_var(f.vars[static_cast<size_t>(op.state[j])].name, f.type_of(op.state[j])));
      map.atoms[op.state[j]] = ir::Atom::of(holders.back());
      tangent_.insert(holders.back());
    }
    ir::Block copy = ir::clone_block(f, op.body, f, map);
    std::vector<std::optional<ir::Atom>> rcts;
    for (size_t j = 0; j < n; ++j) rcts.push_back(ir::Atom::of(state[j]));
    auto lvl = open(std::move(copy), rcts);
    std::vector<ir::Atom> next;
    for (size_t j = 0; j < n; ++j) {
      auto c = ct(*lvl, holders[j]);
      // A saving loop's stack holds the state at the start of each iteration.
      if (op.saves_states && cts[n + 1 + j]) {
        ir::Atom at = ir::Atom::of(b_.index(*cts[n + 1 + j], {ir::computed_index(k)}, s.span));
        c = c ? add_values(b_, *c, at) : at;
      }
      next.push_back(c ? *c : zeros(b_, f.type_of(op.state[j])));
    }
    for (size_t q = 0; q < nc; ++q) {
      auto c = ct(*lvl, carried[q]);
      next.push_back(c ? add_values(b_, ir::Atom::of(state[n + q]), *c)
                       : ir::Atom::of(state[n + q]));
    }
    for (const auto& [x, r] : stepped) {
      const ir::VarId read = op.body.stmts[r].results[0];
      auto c = ct(*lvl, map.atoms.at(read).var);
      next.push_back(c ? *c : zeros(b_, f.type_of(read)));
    }
    return next;
  };
  auto lc = std::make_unique<LoopCts>();
  if (stepped.empty()) {
    auto out = b_.loop_for(init, op.count, body, {}, "kk", s.span);
    for (size_t j = 0; j < n; ++j) lc->init.push_back(ir::Atom::of(out[j]));
    for (size_t q = 0; q < nc; ++q) lc->free[carried[q]] = ir::Atom::of(out[n + q]);
    return *(lv.loops[idx] = std::move(lc));
  }
  auto out = b_.loop_for_saving(init, op.count, body, {}, "kk", s.span);
  for (size_t j = 0; j < n; ++j) lc->init.push_back(ir::Atom::of(out.final_state[j]));
  for (size_t q = 0; q < nc; ++q) lc->free[carried[q]] = ir::Atom::of(out.final_state[n + q]);
  // Reverse step q computed the cotangent of forward step T - 1 - q's read; the stack holds
  // it at q + 1 (the state at the start of the next step), the final state for the last.
  const ir::Atom count = ir::Atom::of(out.count);
  for (size_t e = 0; e < stepped.size(); ++e) {
    const auto [x, r] = stepped[e];
    const auto& read = *op.body.stmts[r].as<ir::IndexOp>();
    const Type xt = f.type_of(x);
    const std::vector<SizeExpr> pre(xt.shape.begin(),
                                    xt.shape.begin() + static_cast<long>(read.indices.size()));
    const ir::VarId stack = out.stacks[n + nc + e];
    const ir::Atom fin = ir::Atom::of(out.final_state[n + nc + e]);
    const ir::VarId q = b_.index_var("q");
    const ir::
        Atom scattered = ir::Atom::of(b_
                                          .accum(
                                              pre, {ir::IndexVar{q, SizeExpr::var(out.size_name)}},
                                              [&] {
                                                const ir::Atom last = ir::Atom::of(
                                                    b_.prim(Prim::Sub, {count, ir::Atom::i64(1)}));
                                                const ir::VarId step =
                                                    b_.prim(Prim::Sub, {last, ir::Atom::of(q)});
                                                std::vector<ir::Atom> res;
                                                for (const auto& ix : read.indices) {
                                                  auto at = ix.affine.substitute(op.iter,
                                                                                 Affine::var(step));
                                                  if (!at)
                                                    throw std::logic_error(
                                                        "ad: a stepped read's index overflows");
                                                  res.push_back(emit_affine(b_, *at));
                                                }
                                                const ir::Atom after = ir::Atom::of(
                                                    b_.prim(Prim::Add,
                                                            {ir::Atom::of(q), ir::Atom::i64(1)}));
                                                const ir::Atom saved =
                                                    ir::Atom::of(b_.prim(Prim::Lt, {after, count}));
                                                res.push_back(ir::Atom::of(b_.if_(
                                                    saved,
                                                    [&] {
                                                      return std::vector<ir::Atom>{ir::Atom::of(
                                                          b_.index(ir::Atom::of(stack),
                                                                   {ir::computed_index(after)}))};
                                                    },
                                                    [&] {
                                                      return std::vector<ir::Atom>{fin};
                                                    })[0]));
                                                return res;
                                              },
                                              s.span));
    auto& slot = lc->free[x];
    slot = slot ? add_values(b_, *slot, scattered) : scattered;
  }
  return *(lv.loops[idx] = std::move(lc));
}

}  // namespace cot::ad
