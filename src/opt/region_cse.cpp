#include "opt/region_cse.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <set>
#include <type_traits>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "ir/clone.h"
#include "ir/printer.h"
#include "ir/regions.h"
#include "ir/rewriter.h"
#include "ir/uses.h"
#include "opt/alpha_equal.h"
#include "opt/bindings.h"
#include "opt/cse.h"
#include "opt/dce.h"
#include "opt/guard_projection.h"
#include "opt/static_cost.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

using ir::Block;
using ir::Stmt;
using ir::VarId;

// At most this many mappings of R's index variables to a later region's are probed.
constexpr size_t kMaxMappings = 4;
// At most this many complete assignments are looked at when searching for them.
constexpr int kMaxLeaves = 64;

// The statements of `b` and of its nested regions.
size_t statement_count(const Block& b) {
  size_t n = b.stmts.size();
  for (const Stmt& s : b.stmts)
    ir::for_each_region(s, [&](const Block& r) { n += statement_count(r); });
  return n;
}

// The statement binding `v` and its block, anywhere in `b`; {nullptr, 0} when none does.
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

// When the value of `s` is a strong zero (whose additions the cost model does not charge, and
// which stays one through products), as conditions under which it is not: empty for a value
// that never is one; nullopt when it may be one otherwise (a sum of terms that may be strong
// zeros), which a read cannot reproduce. A sum whose term is a guard on an affine predicate is
// a strong zero exactly where no point of its range passes the guard: the predicate and the
// ranges with the summed variables projected away (Fourier-Motzkin), under the ranges of the
// index variables `around` it.
std::optional<std::vector<Pred>> not_strong_zero_when(
    const ir::Function& f, const Stmt& s, const std::vector<ir::IndexVar>& around = {}) {
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

// Injective mappings of `from` onto the index variables in scope at a later region's body, with
// equal extents, that use at least one of the region's own (`own`; the others are `outer`, of
// the regions around it), so each mapping has one deepest region to place its copy in. At most
// kMaxMappings, each as the list of variables in `from`'s order.
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

void for_each_index_region(
    Stmt& s, const std::function<void(Stmt&, const std::vector<ir::IndexVar>&)>& visit) {
  std::vector<ir::IndexVar> outer;
  for_each_index_region(s, outer, visit);
}

void for_each_index_region(
    const Stmt& s,
    const std::function<void(const Stmt&, const std::vector<ir::IndexVar>&)>& visit) {
  for_each_index_region(const_cast<Stmt&>(s),
                        [&](Stmt& t, const std::vector<ir::IndexVar>& outer) { visit(t, outer); });
}

void collect_signatures(const Block& b, std::vector<std::pair<size_t, int>>& out) {
  for (const auto& s : b.stmts) {
    out.push_back(signature(s));
    ir::for_each_region(s, [&](const Block& r) { collect_signatures(r, out); });
  }
}

// `result = tensor[at]`, under [conds] when they are not empty.
Stmt make_read(ir::Function& g, VarId result, VarId tensor, const std::vector<VarId>& at,
               const std::vector<Pred>& conds, const Span& span) {
  ir::IndexOp read{ir::Atom::of(tensor), {}};
  for (VarId v : at) read.indices.push_back(ir::IndexExpr{true, Affine::var(v), {}});
  if (conds.empty()) return Stmt{{result}, std::move(read), span};
  const VarId tmp = g.new_var(g.vars[static_cast<size_t>(result)].name, g.type_of(result));
  Block body;
  body.stmts.push_back(Stmt{{tmp}, std::move(read), span});
  body.results.push_back(ir::Atom::of(tmp));
  return Stmt{{result}, ir::GuardOp{Pred::conj(conds), std::move(body)}, span};
}

// A value `value` at the top of the body of the region statement binding `region`, or, when
// `inner` is set, at the top of the body of the gen or reduce binding `inner` at the top of
// that body (a value per point of both regions: R's index variables, then inner's).
struct Candidate {
  VarId region = -1;
  VarId value = -1;
  VarId inner = -1;
  // Set when the value is at the top of the body of a guard at the top of inner's body (a
  // triangular sum's term): the guard's result.
  VarId guard = -1;
};

// Where a candidate's value is: R's statement, the inner region's (or null) and the value's
// block and position; and the chain computing it, as a block yielding it (the value's slice,
// and for a nested value the cost-free statements of R's body it reads). nullopt when the
// value cannot be computed from cost-free statements and index variables alone.
struct Located {
  Stmt* region = nullptr;
  Stmt* inner = nullptr;
  Block* block = nullptr;
  size_t q = 0;
  std::vector<ir::IndexVar> ivars;  // R's, then inner's
  Block chain;
  Pred pred = Pred::truth();  // the guard's, when the value is under one
};

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

// Whether every statement of f that reads `v` is where the constraints `cs` provably hold:
// under the ranges, guards and loop counters on the way to it (Fourier-Motzkin).
class UsesWhereHolds : public ir::Visitor<UsesWhereHolds> {
 public:
  UsesWhereHolds(const ir::Function& f, const std::vector<Affine>& cs, VarId v)
      : Visitor(f), cs_(cs), v_(v) {}

  bool ok = true;

  void visit_block(const Block& b) {
    for (const auto& s : b.stmts) {
      if (!ok) return;
      visit(s);
    }
    for (const auto& r : b.results) ok = ok && !(r.is_var && r.var == v_);
  }

  void visit(const Stmt& s) {
    bool reads = false;
    ir::for_each_direct_use(s.op, [&](VarId x) { reads = reads || x == v_; });
    if (reads) {
      for (const auto& c : cs_) ok = ok && scope().facts().proves(c);
    }
    visit_regions(s);
  }

 private:
  const std::vector<Affine>& cs_;
  VarId v_;
};

bool uses_where_holds(const ir::Function& f, const Pred& pred, VarId v) {
  std::vector<Affine> cs;
  std::vector<Pred> atoms;
  if (!split_conjunction(pred, cs, atoms) || !atoms.empty()) return false;
  UsesWhereHolds walk(f, cs, v);
  walk.visit_function();
  return walk.ok;
}

// A copy of v's slice at the top of a later region, with R's index variables mapped to the
// region's.
struct Probe {
  VarId copy = -1;        // the copy of v
  std::vector<VarId> at;  // the region's index variables, in R's order
};

// Copies of `slice` (R's value, R = block->stmts[a] over `ivars`) at the top of every later region
// of the block over the same ranges, one per mapping of R's index variables onto the region's.
std::vector<Probe> place_probes(ir::Function& g, Block& block, size_t a,
                                const std::vector<ir::IndexVar>& ivars, const Block& slice) {
  std::vector<Probe> probes;
  for (size_t k = a + 1; k < block.stmts.size(); ++k) {
    for_each_index_region(block.stmts[k], [&](Stmt& r, const std::vector<ir::IndexVar>& outer) {
      for (const auto& at : mappings(ivars, outer, *ir::index_vars_of(r))) {
        ir::CloneMap map;
        for (size_t i = 0; i < ivars.size(); ++i) map.atoms[ivars[i].var] = ir::Atom::of(at[i]);
        Block copy = ir::clone_block(g, slice, g, map);
        probes.push_back({copy.results[0].var, at});
        Block& body = *ir::index_body_of(r);
        body.stmts.insert(body.stmts.begin(), std::make_move_iterator(copy.stmts.begin()),
                          std::make_move_iterator(copy.stmts.end()));
      }
    });
  }
  return probes;
}

// R's value of candidate c in g and the chain computing it, with copies of the chain placed at
// the top of every later region over the same ranges; nullopt when the value cannot be computed
// from cost-free statements or `accept` refuses the chain (given R's statement).
struct Probed {
  std::vector<ir::IndexVar> ivars;
  Block slice;
  std::vector<Probe> probes;
};
std::optional<Probed> probe(
    ir::Function& g, const Candidate& c,
    const std::function<bool(const Block& slice, const Stmt& region,
                             const std::vector<ir::IndexVar>& ivars)>& accept = nullptr) {
  auto [block, a] = find_stmt(g.body, c.region);
  if (block == nullptr) return std::nullopt;
  auto at = locate(g, g.body, c);
  if (!at) return std::nullopt;
  Probed out{at->ivars, std::move(at->chain), {}};
  if (accept && !accept(out.slice, block->stmts[a], out.ivars)) return std::nullopt;
  out.probes = place_probes(g, *block, a, out.ivars, out.slice);
  return out;
}

// f with candidate c shared; nullopt when no later region computes its value again.
std::optional<ir::Function> try_share(const ir::Program& program, const ir::Function& f,
                                      const Candidate& c) {
  ir::Function g = f;
  const auto probed = probe(g, c);
  if (!probed) return std::nullopt;
  const std::vector<ir::IndexVar>& ivars = probed->ivars;
  const std::vector<Probe>& probes = probed->probes;
  // The guard's predicate, when the value is under one (read before CSE rewrites g).
  Pred pred = Pred::truth();
  if (c.guard >= 0) {
    auto at = locate(g, g.body, c);
    if (!at) return std::nullopt;
    pred = at->pred;
  }
  ir::Function h = eliminate_common_subexpressions(program, std::move(g)).function;
  const std::vector<int> uses = ir::use_counts(h);
  std::vector<Probe> used;
  for (const auto& p : probes) {
    if (uses[static_cast<size_t>(p.copy)] > 0) used.push_back(p);
  }
  if (used.empty()) return std::nullopt;
  if (c.guard >= 0) {
    // H is a strong zero where the guard fails: every use of a copy must be where the guard,
    // at the copy's position, provably holds.
    for (const auto& p : used) {
      std::unordered_map<VarId, VarId> to;
      for (size_t i = 0; i < ivars.size(); ++i) to[ivars[i].var] = p.at[i];
      const Pred there = pred.rename([&](int32_t v) {
        auto it = to.find(v);
        return it == to.end() ? v : it->second;
      });
      if (!uses_where_holds(h, there, p.copy)) return std::nullopt;
    }
  }

  // Materialize v from R's body as it is after CSE.
  auto at = locate(h, h.body, c);
  if (!at || at->ivars.size() != ivars.size()) return std::nullopt;
  Block& rbody = *at->block;
  const size_t q = at->q;
  auto conds = not_strong_zero_when(h, rbody.stmts[q], at->ivars);
  if (!conds) return std::nullopt;
  Block chain = std::move(at->chain);
  const Span span = rbody.stmts[q].span;

  ir::GenOp gen;
  ir::CloneMap map;
  std::vector<SizeExpr> shape;
  std::vector<VarId> h_ivars;
  for (const auto& iv : ivars) {
    const VarId fresh =
        h.new_var(h.vars[static_cast<size_t>(iv.var)].name, Type::scalar(Scalar::I64));
    gen.ivars.push_back(ir::IndexVar{fresh, iv.extent});
    map.atoms[iv.var] = ir::Atom::of(fresh);
    shape.push_back(iv.extent);
    h_ivars.push_back(iv.var);
  }
  gen.body = ir::clone_block(h, chain, h, map);
  const Type vt = h.type_of(c.value);
  for (const auto& d : vt.shape) shape.push_back(d);
  const VarId hv = h.new_var("shared", Type::tensor(vt.elem, std::move(shape)));

  if (at->pred.kind != Pred::Kind::True) {
    // Computed where R computed it: under the guard, a strong zero elsewhere.
    ir::GuardOp guarded{at->pred, std::move(gen.body)};
    const VarId inner_value = h.new_var(h.vars[static_cast<size_t>(c.value)].name, vt);
    Block gb;
    gb.stmts.push_back(Stmt{{inner_value}, std::move(guarded), span});
    gb.results.push_back(ir::Atom::of(inner_value));
    // The guard reads R's index variables: in H's body they are H's own.
    substitute_uses(gb, [&] {
      Substitution sub;
      for (size_t i = 0; i < ivars.size(); ++i) sub[ivars[i].var] = map.atoms.at(ivars[i].var);
      return sub;
    }());
    gen.body = std::move(gb);
  }
  rbody.stmts[q] = make_read(h, c.value, hv, h_ivars, *conds, span);
  for (const auto& p : used) {
    auto [pb, pk] = find_stmt(h.body, p.copy);
    if (pb == nullptr) return std::nullopt;
    // The conditions (a guarded sum's) name R's index variables: at the copy, the region's.
    std::unordered_map<VarId, VarId> to;
    for (size_t i = 0; i < ivars.size(); ++i) to[ivars[i].var] = p.at[i];
    std::vector<Pred> there;
    for (const auto& cond : *conds) {
      there.push_back(cond.rename([&](int32_t v) {
        auto it = to.find(v);
        return it == to.end() ? v : it->second;
      }));
    }
    pb->stmts[pk] = make_read(h, p.copy, hv, p.at, there, span);
  }
  auto [rb, rk] = find_stmt(h.body, c.region);
  rb->stmts.insert(rb->stmts.begin() + static_cast<std::ptrdiff_t>(rk),
                   Stmt{{hv}, std::move(gen), span});
  return h;
}

// Whether two loops compute the same states: equal once neither saves.
bool same_loop(const ir::Function& f, const Stmt& a, const Stmt& b) {
  auto plain = [](const Stmt& s) {
    Stmt p = s;
    auto* l = p.as<ir::LoopOp>();
    if (l->saves_states) {
      l->saves_states = false;
      p.results.resize(l->state.size());
    }
    return p;
  };
  return a.as<ir::LoopOp>() != nullptr && b.as<ir::LoopOp>() != nullptr &&
         alpha_equal(f, plain(a), plain(b));
}

// The saving loops in `b` (nested too) that compute what the plain loop `probe` does.
void saving_copies(const ir::Function& f, const Block& b, const Stmt& probe,
                   std::vector<VarId>& out) {
  for (const auto& s : b.stmts) {
    const auto* l = s.as<ir::LoopOp>();
    if (l != nullptr && l->saves_states && same_loop(f, probe, s)) out.push_back(s.results[0]);
    ir::for_each_region(s, [&](const Block& r) { saving_copies(f, r, probe, out); });
  }
}

// Reads `stack[e...]` anywhere in b, as `table[at..., e...]` when `rewrite` is set; returns how
// many there are.
int read_through(Block& b, VarId stack, VarId table, const std::vector<VarId>& at, bool rewrite) {
  int n = 0;
  for (auto& s : b.stmts) {
    if (auto* r = s.as<ir::IndexOp>(); r != nullptr && r->tensor.is_var && r->tensor.var == stack) {
      ++n;
      if (rewrite) {
        r->tensor = ir::Atom::of(table);
        std::vector<ir::IndexExpr> idx;
        idx.reserve(at.size());
        for (VarId x : at) idx.push_back(ir::affine_index(Affine::var(x)));
        r->indices.insert(r->indices.begin(), idx.begin(), idx.end());
      }
    }
    ir::for_each_region(s, [&](Block& r) { n += read_through(r, stack, table, at, rewrite); });
  }
  return n;
}

// f with the plain loop v of candidate c shared with the saving loops that later regions run at
// the same points (the gathers of a gradient run the loop of a sum's body again to save its
// states for their reverse pass, and the primal runs it for its final state):
//      let y = sum i. { ...; loop p = e for t < m { body } }
//      let g = for j. { ...; let (y2, T, ps) = loop p = e for t < m saving { body }; ... }
//  ==> let Tn = max(m, 0)
//      let H = for i. { ...; let (y1, T1, ps1) = loop ... saving { body };
//                       for k: Tn + 1. if k < T1 then ps1[k] else y1 }
//      let y = sum i. { ...; H[i, Tn] }
//      let g = for j. { ...; let T = max(m, 0); let ps = for k: T. H[j, k]
//                       let y2 = H[j, Tn]; ... }
// H holds every point's trajectory, the states at the start of each iteration and the final
// one, so the loop runs once per point instead of once per region. The count must not vary
// with the point (the table's rows have one length). H runs the loop where R ran it, at the
// same points, so no op and no error is added; the copies only read.
std::optional<ir::Function> try_share_trajectory(const ir::Program& program, const ir::Function& f,
                                                 const Candidate& c) {
  if (c.inner >= 0 || c.guard >= 0) return std::nullopt;
  // Only a plain loop can be (checked before copying the function, which costs the most).
  {
    auto [vb, vk] = find_stmt(f.body, c.value);
    const auto* l = vb == nullptr ? nullptr : vb->stmts[vk].as<ir::LoopOp>();
    if (l == nullptr || l->saves_states || l->is_while) return std::nullopt;
  }
  ir::Function g = f;
  const auto probed =
      probe(g, c, [&](const Block& slice, const Stmt& region, const std::vector<ir::IndexVar>& iv) {
        const Stmt& v = slice.stmts.back();
        const auto* l = v.as<ir::LoopOp>();
        if (l == nullptr || l->saves_states || l->is_while || l->state.size() != 1 ||
            v.results.size() != 1 || v.results[0] != c.value) {
          return false;
        }
        if (!l->count.is_var) return true;
        // Bound outside R's body: the same for every point.
        std::unordered_set<VarId> bound;
        collect_bound(*ir::index_body_of(region), bound);
        for (const auto& x : iv) bound.insert(x.var);
        return bound.count(l->count.var) == 0;
      });
  if (!probed) return std::nullopt;
  const std::vector<ir::IndexVar>& ivars = probed->ivars;
  const std::vector<Probe>& probes = probed->probes;
  const auto* loop = probed->slice.stmts.back().as<ir::LoopOp>();
  const ir::Atom count = loop->count;
  // CSE makes the saving loops read what the copies' slices compute.
  ir::Function h = eliminate_common_subexpressions(program, std::move(g)).function;
  std::vector<Probe> matches;  // the saving loops' final states, with their points
  for (const auto& p : probes) {
    auto [pb, pk] = find_stmt(h.body, p.copy);
    if (pb == nullptr) continue;
    std::vector<VarId> found;
    saving_copies(h, *pb, pb->stmts[pk], found);
    for (VarId y : found) matches.push_back({y, p.at});
  }
  if (matches.empty()) return std::nullopt;

  auto located = locate(h, h.body, c);
  if (!located || located->ivars.size() != ivars.size()) return std::nullopt;
  const Span span = located->block->stmts[located->q].span;
  Block chain = std::move(located->chain);
  const Type state_type = h.type_of(c.value);
  if (state_type.is_tuple) return std::nullopt;

  ir::Builder bld(h);
  const std::string tn_name = bld.fresh_size_name("T");
  VarId tn = -1;
  VarId hv = -1;
  Block made = bld.region([&] {
    tn = bld.named(bld.prim(Prim::Max, {count, ir::Atom::i64(0)}, span), tn_name);
    h.size_vars.push_back(ir::SizeVar{tn_name, tn, -1, {}, 0});
    ir::CloneMap map;
    std::vector<ir::IndexVar> hiv;
    for (const auto& iv : ivars) {
      const VarId fresh = bld.index_var(h.vars[static_cast<size_t>(iv.var)].name);
      hiv.push_back(ir::IndexVar{fresh, iv.extent});
      map.atoms[iv.var] = ir::Atom::of(fresh);
    }
    hv = bld.gen(
        hiv,
        [&] {
          Block body = ir::clone_block(h, chain, h, map);
          Stmt run = std::move(body.stmts.back());
          body.stmts.pop_back();
          for (auto& st : body.stmts) bld.append(std::move(st));
          // The loop, saving: its final state, count and stack.
          const std::string t_name = bld.fresh_size_name("T");
          const VarId t = h.new_var(t_name, Type::scalar(Scalar::I64));
          h.size_vars.push_back(ir::SizeVar{t_name, t, -1, {}, 0});
          std::vector<SizeExpr> stack_shape{SizeExpr::var(t_name)};
          for (const auto& d : state_type.shape) stack_shape.push_back(d);
          const VarId stack = h.new_var(h.vars[static_cast<size_t>(loop->state[0])].name + "_saved",
                                        Type::tensor(state_type.elem, std::move(stack_shape)));
          const VarId last = run.results[0];
          run.as<ir::LoopOp>()->saves_states = true;
          run.results = {last, t, stack};
          bld.append(std::move(run));
          const VarId k = bld.index_var("k");
          return ir::Atom::of(bld.gen(
              {ir::IndexVar{k, SizeExpr::var(tn_name) + SizeExpr::constant(1)}},
              [&] {
                const VarId before_end = bld.prim(Prim::Lt, {ir::Atom::of(k), ir::Atom::of(t)});
                return ir::Atom::of(bld.if_(
                    ir::Atom::of(before_end),
                    [&] {
                      return std::vector<ir::Atom>{ir::Atom::of(
                          bld.index(ir::Atom::of(stack), {ir::affine_index(Affine::var(k))}))};
                    },
                    [&] { return std::vector<ir::Atom>{ir::Atom::of(last)}; })[0]);
              },
              span));
        },
        span);
    h.vars[static_cast<size_t>(hv)].name = "trajectory";
    return std::vector<ir::Atom>{};
  });

  // Reads of H at the points `at`: the final state, and the whole stack.
  auto final_read = [&](VarId result, const std::vector<VarId>& at) {
    ir::IndexOp read{ir::Atom::of(hv), {}};
    for (VarId x : at) read.indices.push_back(ir::affine_index(Affine::var(x)));
    read.indices.push_back(ir::affine_index(Affine::var(tn)));
    return Stmt{{result}, std::move(read), span};
  };
  std::vector<VarId> r_at;
  for (const auto& iv : located->ivars) r_at.push_back(iv.var);
  located->block->stmts[located->q] = final_read(c.value, r_at);
  for (const auto& m : matches) {
    auto [mb, mk] = find_stmt(h.body, m.copy);
    if (mb == nullptr) return std::nullopt;
    Stmt saving = std::move(mb->stmts[mk]);
    const auto& l = *saving.as<ir::LoopOp>();
    const VarId t = saving.results[1];
    const VarId stack = saving.results[2];
    std::vector<Stmt> reads;
    reads.push_back(Stmt{{t}, ir::PrimOp{Prim::Max, {l.count, ir::Atom::i64(0)}}, saving.span});
    const auto sv = std::find_if(h.size_vars.begin(), h.size_vars.end(),
                                 [&](const ir::SizeVar& s) { return s.param == -1 && s.var == t; });
    if (sv == h.size_vars.end()) return std::nullopt;
    const VarId k = h.new_var("k", Type::scalar(Scalar::I64));
    ir::IndexOp row{ir::Atom::of(hv), {}};
    for (VarId x : m.at) row.indices.push_back(ir::affine_index(Affine::var(x)));
    row.indices.push_back(ir::affine_index(Affine::var(k)));
    const VarId elem = h.new_var(h.vars[static_cast<size_t>(stack)].name, state_type);
    Block copy_body;
    copy_body.stmts.push_back(Stmt{{elem}, std::move(row), saving.span});
    copy_body.results.push_back(ir::Atom::of(elem));
    reads.push_back(
        Stmt{{stack},
             ir::GenOp{{ir::IndexVar{k, SizeExpr::var(sv->name)}}, std::move(copy_body)},
             saving.span});
    reads.push_back(final_read(saving.results[0], m.at));
    mb->stmts.erase(mb->stmts.begin() + static_cast<std::ptrdiff_t>(mk));
    mb->stmts.insert(mb->stmts.begin() + static_cast<std::ptrdiff_t>(mk),
                     std::make_move_iterator(reads.begin()), std::make_move_iterator(reads.end()));
    // Where the stack is only read element by element, its elements are read from H (the copy
    // then dies).
    if (read_through(h.body, stack, hv, m.at, false) ==
        ir::use_counts(h)[static_cast<size_t>(stack)]) {
      read_through(h.body, stack, hv, m.at, true);
    }
  }
  auto [rb, rk] = find_stmt(h.body, c.region);
  if (rb == nullptr) return std::nullopt;
  rb->stmts.insert(rb->stmts.begin() + static_cast<std::ptrdiff_t>(rk),
                   std::make_move_iterator(made.stmts.begin()),
                   std::make_move_iterator(made.stmts.end()));
  return h;
}

// Candidates tried and not shared, each with the number of shares made before it was tried.
// Trying one copies and rescans the whole function, and a share changes only the regions it
// touches, so the pass does not try a failed candidate again after each share; before it stops
// it tries once more those that failed before the last share (a share may have made them
// shareable), so it stops only where the unremembering search (the postcondition's) finds
// nothing to share. (Shares may come in another order than without the memo.)
using CandidateKey = std::array<VarId, 4>;
using FailedCandidates = std::map<CandidateKey, size_t>;

CandidateKey key_of(const Candidate& c) {
  return {c.region, c.value, c.inner, c.guard};
}

// The first candidate of f that can be shared (skipping those in `failed`, which gets those
// that fail, tagged with `shares`), applied.
std::optional<ir::Function> share_one(const ir::Program& program, const ir::Function& f,
                                      Candidate* which = nullptr,
                                      FailedCandidates* failed = nullptr, size_t shares = 0,
                                      RegionCseStats* stats = nullptr,
                                      std::set<CandidateKey>* seen = nullptr) {
  std::vector<Candidate> cands;
  find_candidates(f, f.body, cands);
  for (const auto& c : cands) {
    if (failed != nullptr && failed->count(key_of(c))) continue;
    if (stats != nullptr) {
      ++stats->tried;
      if (seen != nullptr && seen->insert(key_of(c)).second) ++stats->distinct;
    }
    auto g = try_share(program, f, c);
    if (!g) g = try_share_trajectory(program, f, c);
    if (g) {
      if (which != nullptr) *which = c;
      return g;
    }
    if (failed != nullptr) failed->emplace(key_of(c), shares);
  }
  return std::nullopt;
}

}  // namespace

PassResult share_across_regions(const ir::Program& program, const ir::Function& f) {
  RegionCseStats stats;
  return share_across_regions(program, f, stats);
}

PassResult share_across_regions(const ir::Program& program, const ir::Function& f,
                                RegionCseStats& stats) {
  stats = {};
  std::set<CandidateKey> seen;
  // Dead statements first: a dead v costs nothing once removed, so materializing it would.
  // After each share the probes nothing merged into are dead too.
  ir::Function cur = eliminate_dead_code(program, f).function;
  bool changed = false;
  // Each share removes a recomputed statement, so there are at most as many shares as
  // statements (a chain of 65 nested calls needs 65: a fixed bound left work the postcondition
  // then reported as a compiler error); the bound only guards against a bug looping.
  const size_t max_shares = statement_count(cur.body) + 1;
  FailedCandidates failed;
  for (size_t k = 0; k < max_shares; ++k) {
    auto next = share_one(program, cur, nullptr, &failed, k, &stats, &seen);
    if (!next) {
      // Those that failed before the last share are tried again on this function.
      const size_t before = failed.size();
      std::erase_if(failed, [&](const auto& entry) { return entry.second < k; });
      if (failed.size() == before) break;
      next = share_one(program, cur, nullptr, &failed, k, &stats, &seen);
      if (!next) break;
    }
    cur = eliminate_dead_code(program, *next).function;
    changed = true;
    ++stats.shared;
  }
  // Without a share the dead code removed first stays: dce's work, not this pass's.
  if (!changed) return {f, false};
  return {std::move(cur), true};
}

std::optional<std::string> region_cse_postcondition(const ir::Program& program,
                                                    const ir::Function& f) {
  // As the pass sees it: dead statements are not work to share.
  ir::Function g = eliminate_dead_code(program, f).function;
  Candidate c;
  if (!share_one(program, g, &c)) return std::nullopt;
  auto [b, k] = find_stmt(g.body, c.value);
  return "a later region computes again the value of `" + ir::print_stmt(program, g, b->stmts[k]) +
         "`";
}

}  // namespace cot::opt
