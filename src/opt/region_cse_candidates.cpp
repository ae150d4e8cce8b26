// Region CSE's candidates (docs/design.md §8, region_cse.h): which values of a region's body a
// later region may compute again, and where one is with the chain of statements computing it.
#include <algorithm>
#include <functional>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/regions.h"
#include "opt/bindings.h"
#include "opt/guard_projection.h"
#include "opt/region_cse_internal.h"
#include "opt/static_cost.h"

namespace cot::opt::region_cse_detail {

using ir::Block;
using ir::Stmt;
using ir::VarId;

namespace {

// At most this many mappings of R's index variables to a later region's are probed.
constexpr size_t kMaxMappings = 4;
// At most this many complete assignments are looked at when searching for them.
constexpr int kMaxLeaves = 64;

// What a statement does, coarsely: equal statements have equal signatures (a cheap filter
// before probing).
std::pair<size_t, int> signature(const Stmt& s) {
  int detail = -1;
  if (const auto* p = s.as<ir::PrimOp>()) detail = static_cast<int>(p->prim);
  if (const auto* r = s.as<ir::ReduceOp>()) detail = static_cast<int>(r->kind);
  return {s.op.index(), detail};
}

// Costly single-valued operations whose value can be stored in a tensor and read back (a plain
// loop with one state too: a recurrence per point, as Horner's rule per data point).
bool materializable(const ir::Function& f, const Stmt& s) {
  if (s.results.size() != 1 || f.type_of(s.results[0]).is_tuple) return false;
  const auto* loop = s.as<ir::LoopOp>();
  if (s.as<ir::PrimOp>() == nullptr && s.as<ir::ReduceOp>() == nullptr &&
      s.as<ir::GenOp>() == nullptr && s.as<ir::IfOp>() == nullptr &&
      (loop == nullptr || loop->saves_states)) {
    return false;
  }
  return !is_cost_free(f, s);
}

// Whether the atom (a block's result) may be a strong zero: bound in `b` by a guard, a
// projection or a sum (one bound outside the block is not looked at).
bool may_be_strong_zero(const Block& b, const ir::Atom& res) {
  if (!res.is_var) return false;
  const Stmt* def = nullptr;
  for (const auto& s : b.stmts) {
    if (std::find(s.results.begin(), s.results.end(), res.var) != s.results.end()) def = &s;
  }
  return def == nullptr || def->as<ir::GuardOp>() != nullptr || def->as<ir::ProjOp>() != nullptr ||
         def->as<ir::ReduceOp>() != nullptr;
}

// The statements of `body` before `end` that produce `need` (variables bound there),
// transitively, in order; nullopt when one costs or is a loop. `need` keeps what they read from
// outside `body`.
std::optional<std::vector<size_t>> producers(const ir::Function& f, const Block& body, size_t end,
                                             std::unordered_set<VarId>& need) {
  std::vector<size_t> out;
  for (size_t k = end; k-- > 0;) {
    const Stmt& s = body.stmts[k];
    if (std::none_of(s.results.begin(), s.results.end(),
                     [&](VarId v) { return need.count(v) > 0; })) {
      continue;
    }
    if (!is_cost_free(f, s) || s.as<ir::LoopOp>() != nullptr) return std::nullopt;
    out.push_back(k);
    for (VarId v : s.results) need.erase(v);
    for (VarId v : free_uses(s)) need.insert(v);
  }
  std::reverse(out.begin(), out.end());
  return out;
}

// The statements of `body` before q that statement q reads, transitively, in order; nullopt
// when one of them costs (H would compute it again) or is a loop. `uses` gets every variable
// the slice and statement q read from outside it.
std::optional<std::vector<size_t>> slice_of(const ir::Function& f, const Block& body, size_t q,
                                            std::unordered_set<VarId>& uses) {
  auto fu = free_uses(body.stmts[q]);
  uses = std::unordered_set<VarId>(fu.begin(), fu.end());
  return producers(f, body, q, uses);
}

// The slice of statement q with q itself, as a block yielding q's value.
Block slice_block(const Block& body, const std::vector<size_t>& slice, size_t q) {
  Block b;
  for (size_t k : slice) b.stmts.push_back(body.stmts[k]);
  b.stmts.push_back(body.stmts[q]);
  b.results.push_back(ir::Atom::of(body.stmts[q].results[0]));
  return b;
}

// Calls visit(region statement, index variables of the regions around it) for every gen or
// reduce nested anywhere in `s`, s included, innermost first (so a visit may change the
// statement's body). The regions around are those between `s` and the region, on the path of
// nested blocks (bodies, branches, guards) that leads to it.
void for_each_index_region(
    Stmt& s, std::vector<ir::IndexVar>& outer,
    const std::function<void(Stmt&, const std::vector<ir::IndexVar>&)>& visit) {
  const auto* own = ir::index_vars_of(s);
  if (own != nullptr) outer.insert(outer.end(), own->begin(), own->end());
  ir::for_each_region(s, [&](Block& r) {
    for (Stmt& t : r.stmts) for_each_index_region(t, outer, visit);
  });
  if (own != nullptr) {
    outer.resize(outer.size() - own->size());
    visit(s, outer);
  }
}

// The same, for a walk that only reads.
void for_each_index_region(
    const Stmt& s,
    const std::function<void(const Stmt&, const std::vector<ir::IndexVar>&)>& visit) {
  region_cse_detail::for_each_index_region(
      const_cast<Stmt&>(s),
      [&](Stmt& t, const std::vector<ir::IndexVar>& outer) { visit(t, outer); });
}

void collect_signatures(const Block& b, std::vector<std::pair<size_t, int>>& out) {
  for (const auto& s : b.stmts) {
    out.push_back(signature(s));
    ir::for_each_region(s, [&](const Block& r) { collect_signatures(r, out); });
  }
}

}  // namespace

std::pair<Block*, size_t> find_stmt(Block& b, VarId v) {
  for (size_t k = 0; k < b.stmts.size(); ++k) {
    Stmt& s = b.stmts[k];
    if (std::find(s.results.begin(), s.results.end(), v) != s.results.end()) return {&b, k};
    std::pair<Block*, size_t> found{nullptr, 0};
    ir::for_each_region(s, [&](Block& r) {
      if (found.first == nullptr) found = find_stmt(r, v);
    });
    if (found.first != nullptr) return found;
  }
  return {nullptr, 0};
}
std::pair<const Block*, size_t> find_stmt(const Block& b, VarId v) {
  return find_stmt(const_cast<Block&>(b), v);  // finds without changing anything
}

std::optional<std::vector<Pred>> not_strong_zero_when(const ir::Function& f, const Stmt& s,
                                                      const std::vector<ir::IndexVar>& around) {
  const auto* r = s.as<ir::ReduceOp>();
  if (r == nullptr || r->kind != ir::ReduceKind::Sum) return std::vector<Pred>{};
  if (r->body.results.size() != 1) return std::nullopt;
  const ir::Atom& res = r->body.results[0];
  IndexFacts facts;
  facts.add_sizes(f);
  for (const auto& iv : around) facts.add_range(f, iv.var, iv.extent);
  if (may_be_strong_zero(r->body, res)) {
    const Stmt* def = nullptr;
    for (const auto& b : r->body.stmts) {
      if (std::find(b.results.begin(), b.results.end(), res.var) != b.results.end()) def = &b;
    }
    const auto* g = def != nullptr ? def->as<ir::GuardOp>() : nullptr;
    if (g == nullptr || g->body.results.size() != 1 ||
        may_be_strong_zero(g->body, g->body.results[0])) {
      return std::nullopt;
    }
    std::vector<Affine> cs;
    std::vector<Pred> atoms;
    if (!split_conjunction(g->pred, cs, atoms) || !atoms.empty()) return std::nullopt;
    std::vector<VarId> summed;
    for (const auto& iv : r->ivars) {
      if (!add_range_constraints(f, iv.var, iv.extent, cs)) return std::nullopt;
      summed.push_back(iv.var);
    }
    std::unordered_set<VarId> bound;
    collect_bound(s, bound);
    auto proj = project_constraints(
        std::move(cs), summed, facts, [](VarId) { return false; },
        [&](VarId v) { return bound.count(v) != 0; });
    if (!proj) return std::nullopt;
    return proj->outer;
  }
  std::vector<Pred> conds;
  for (const auto& iv : r->ivars) {
    if (auto c = iv.extent.as_constant()) {
      if (*c >= 1) continue;
      return std::nullopt;
    }
    auto a = size_affine(f, iv.extent);
    auto e1 = a ? Affine::add(*a, Affine::constant(-1)) : std::nullopt;
    if (!e1) return std::nullopt;
    if (!facts.proves(*e1)) conds.push_back(Pred::ge0(*e1));
  }
  return conds;
}

std::vector<std::vector<VarId>> mappings(const std::vector<ir::IndexVar>& from,
                                         const std::vector<ir::IndexVar>& outer,
                                         const std::vector<ir::IndexVar>& own) {
  std::vector<const ir::IndexVar*> to;
  to.reserve(outer.size() + own.size());
  for (const auto& iv : outer) to.push_back(&iv);
  for (const auto& iv : own) to.push_back(&iv);
  std::vector<std::vector<VarId>> out;
  std::vector<VarId> cur;
  std::vector<bool> taken(to.size(), false);
  int own_used = 0;
  int leaves = 0;  // bounds the search when many variables share an extent
  std::function<void(size_t)> go = [&](size_t k) {
    if (out.size() >= kMaxMappings || leaves > kMaxLeaves) return;
    if (k == from.size()) {
      ++leaves;
      if (own_used > 0) out.push_back(cur);
      return;
    }
    for (size_t j = 0; j < to.size(); ++j) {
      if (taken[j] || !(to[j]->extent == from[k].extent)) continue;
      const bool is_own = j >= outer.size();
      taken[j] = true;
      own_used += is_own ? 1 : 0;
      cur.push_back(to[j]->var);
      go(k + 1);
      cur.pop_back();
      own_used -= is_own ? 1 : 0;
      taken[j] = false;
    }
  };
  go(0);
  return out;
}

void for_each_index_region(
    Stmt& s, const std::function<void(Stmt&, const std::vector<ir::IndexVar>&)>& visit) {
  std::vector<ir::IndexVar> outer;
  for_each_index_region(s, outer, visit);
}

std::optional<Located> locate(const ir::Function& f, Block& top, const Candidate& c) {
  Located at;
  auto [rblock, ra] = find_stmt(top, c.region);
  if (rblock == nullptr || ir::index_vars_of(rblock->stmts[ra]) == nullptr) return std::nullopt;
  at.region = &rblock->stmts[ra];
  at.ivars = *ir::index_vars_of(*at.region);
  Block& rbody = *ir::index_body_of(*at.region);
  size_t inner_pos = 0;
  if (c.inner >= 0) {
    auto [ib, ia] = find_stmt(rbody, c.inner);
    if (ib != &rbody || ir::index_vars_of(ib->stmts[ia]) == nullptr) return std::nullopt;
    at.inner = &ib->stmts[ia];
    inner_pos = ia;
    const auto& iv = *ir::index_vars_of(*at.inner);
    at.ivars.insert(at.ivars.end(), iv.begin(), iv.end());
  }
  Block* ibody = at.inner != nullptr ? ir::index_body_of(*at.inner) : &rbody;
  size_t guard_pos = 0;
  Block* vbody = ibody;
  if (c.guard >= 0) {
    auto [gb, ga] = find_stmt(*ibody, c.guard);
    if (gb != ibody) return std::nullopt;
    auto* g = gb->stmts[ga].as<ir::GuardOp>();
    if (g == nullptr) return std::nullopt;
    guard_pos = ga;
    at.pred = g->pred;
    vbody = &g->body;
  }
  auto [vb, q] = find_stmt(*vbody, c.value);
  if (vb != vbody) return std::nullopt;
  at.block = vb;
  at.q = q;
  std::unordered_set<VarId> uses;
  auto sl = slice_of(f, *vbody, q, uses);
  if (!sl) return std::nullopt;
  Block chain = slice_block(*vbody, *sl, q);
  if (c.guard >= 0) {
    // The guard's predicate may read only index variables and what is bound outside R.
    std::unordered_set<VarId> bound;
    collect_bound(*at.region, bound);
    for (const auto& iv : at.ivars) bound.erase(iv.var);
    std::vector<int32_t> pvars;
    at.pred.collect_vars(pvars);
    for (int32_t v : pvars) {
      if (bound.count(v) != 0) return std::nullopt;
    }
    auto before = producers(f, *ibody, guard_pos, uses);
    if (!before) return std::nullopt;
    Block full;
    for (size_t k : *before) full.stmts.push_back(ibody->stmts[k]);
    for (auto& st : chain.stmts) full.stmts.push_back(std::move(st));
    full.results = std::move(chain.results);
    chain = std::move(full);
  }
  if (at.inner != nullptr) {
    auto outer = producers(f, rbody, inner_pos, uses);
    if (!outer) return std::nullopt;
    Block full;
    for (size_t k : *outer) full.stmts.push_back(rbody.stmts[k]);
    for (auto& st : chain.stmts) full.stmts.push_back(std::move(st));
    full.results = std::move(chain.results);
    chain = std::move(full);
  }
  at.chain = std::move(chain);
  return at;
}

void find_candidates(const ir::Function& f, const Block& b, std::vector<Candidate>& out) {
  for (size_t a = 0; a < b.stmts.size(); ++a) {
    const Stmt& s = b.stmts[a];
    ir::for_each_region(s, [&](const Block& r) { find_candidates(f, r, out); });
    const auto* iv = ir::index_vars_of(s);
    if (iv == nullptr || s.results.size() != 1) continue;
    // Later regions over the same ranges, and what they compute.
    bool any_region = false;
    std::vector<std::pair<size_t, int>> later;
    for (size_t k = a + 1; k < b.stmts.size(); ++k) {
      for_each_index_region(b.stmts[k], [&](const Stmt& r, const std::vector<ir::IndexVar>& outer) {
        if (mappings(*iv, outer, *ir::index_vars_of(r)).empty()) return;
        any_region = true;
        collect_signatures(*ir::index_body_of(r), later);
      });
    }
    // Whether the value at q of `body` is one to share: costly, a strong zero only where a read
    // can say so (under the ranges `around`), computed by a later region (`sigs`), from
    // cost-free statements, and varying in `vary` (else code motion's business).
    auto candidate = [&](const Block& body, size_t q, const std::vector<ir::IndexVar>& around,
                         const std::vector<ir::IndexVar>& vary,
                         const std::vector<std::pair<size_t, int>>& sigs) {
      const Stmt& v = body.stmts[q];
      if (!materializable(f, v) || !not_strong_zero_when(f, v, around)) return false;
      if (std::find(sigs.begin(), sigs.end(), signature(v)) == sigs.end()) return false;
      std::unordered_set<VarId> uses;
      if (!slice_of(f, body, q, uses)) return false;
      return std::any_of(vary.begin(), vary.end(),
                         [&](const ir::IndexVar& x) { return uses.count(x.var) > 0; });
    };
    if (any_region) {
      const Block& body = *ir::index_body_of(s);
      for (size_t q = 0; q < body.stmts.size(); ++q) {
        if (candidate(body, q, *iv, *iv, later))
          out.push_back({s.results[0], body.stmts[q].results[0]});
      }
    }
    // Values of a gen or reduce at the top of R's body, per point of both (a row's terms,
    // exp(t[i] * x[j]) in sum i. log(sum j. ...), that the gathers of the gradient recompute),
    // also under a guard at the top of its body (a triangle's terms).
    for (const auto& inner : ir::index_body_of(s)->stmts) {
      const auto* iv2 = ir::index_vars_of(inner);
      if (iv2 == nullptr || inner.results.size() != 1) continue;
      std::vector<ir::IndexVar> both = *iv;
      both.insert(both.end(), iv2->begin(), iv2->end());
      std::vector<std::pair<size_t, int>> later2;
      for (size_t k = a + 1; k < b.stmts.size(); ++k) {
        for_each_index_region(b.stmts[k],
                              [&](const Stmt& r, const std::vector<ir::IndexVar>& outer) {
                                if (mappings(both, outer, *ir::index_vars_of(r)).empty()) return;
                                collect_signatures(*ir::index_body_of(r), later2);
                              });
      }
      if (later2.empty()) continue;
      const Block& ibody = *ir::index_body_of(inner);
      for (size_t q = 0; q < ibody.stmts.size(); ++q) {
        if (candidate(ibody, q, both, *iv2, later2)) {
          out.push_back({s.results[0], ibody.stmts[q].results[0], inner.results[0]});
        }
        const auto* g = ibody.stmts[q].as<ir::GuardOp>();
        if (g == nullptr || ibody.stmts[q].results.size() != 1) continue;
        for (size_t r = 0; r < g->body.stmts.size(); ++r) {
          if (candidate(g->body, r, both, *iv2, later2)) {
            out.push_back({s.results[0], g->body.stmts[r].results[0], inner.results[0],
                           ibody.stmts[q].results[0]});
          }
        }
      }
    }
  }
}

}  // namespace cot::opt::region_cse_detail
