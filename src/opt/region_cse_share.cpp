// Region CSE's probes and its sharing of a value (docs/design.md §8, region_cse.h): copies of
// a candidate's chain at the top of the later regions, and, where CSE merges something of a
// region into its copy, the value materialized as H = for I. v and read by both.
#include <algorithm>
#include <functional>
#include <iterator>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/clone.h"
#include "ir/regions.h"
#include "ir/rewriter.h"
#include "ir/uses.h"
#include "opt/cse.h"
#include "opt/region_cse_internal.h"
#include "opt/substitute.h"

namespace cot::opt::region_cse_detail {

using ir::Block;
using ir::Stmt;
using ir::VarId;

namespace {

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

}  // namespace

std::optional<Probed> probe(
    ir::Function& g, const Candidate& c,
    const std::function<bool(const Block& slice, const Stmt& region,
                             const std::vector<ir::IndexVar>& ivars)>& accept) {
  auto [block, a] = find_stmt(g.body, c.region);
  if (block == nullptr) return std::nullopt;
  auto at = locate(g, g.body, c);
  if (!at) return std::nullopt;
  Probed out{at->ivars, std::move(at->chain), {}};
  if (accept && !accept(out.slice, block->stmts[a], out.ivars)) return std::nullopt;
  out.probes = place_probes(g, *block, a, out.ivars, out.slice);
  return out;
}

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

}  // namespace cot::opt::region_cse_detail
