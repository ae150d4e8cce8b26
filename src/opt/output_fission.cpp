#include "opt/output_fission.h"

#include <functional>
#include <string>
#include <unordered_set>
#include <utility>
#include <variant>
#include <vector>

#include "ir/clone.h"
#include "ir/regions.h"
#include "ir/uses.h"
#include "opt/fuse.h"
#include "opt/static_cost.h"

namespace cot::opt {
namespace {

using ir::Atom;
using ir::Block;
using ir::Stmt;
using ir::VarId;

// X = for J. { S; Y = for I. E; yield Y } with S not empty.
bool yields_gen_after_prefix(const Stmt& s) {
  const auto* g = s.as<ir::GenOp>();
  if (g == nullptr || s.results.size() != 1) return false;
  const Block& b = g->body;
  if (b.stmts.size() < 2 || b.results.size() != 1 || !b.results[0].is_var) return false;
  const Stmt& last = b.stmts.back();
  return last.as<ir::GenOp>() != nullptr && last.results.size() == 1 &&
         last.results[0] == b.results[0].var;
}

void collect_candidates(const Block& b, const std::vector<int>& uses, std::vector<VarId>& out) {
  for (const auto& s : b.stmts) {
    if (yields_gen_after_prefix(s) && uses[static_cast<size_t>(s.results[0])] == 1) {
      out.push_back(s.results[0]);
    }
    ir::for_each_region(s, [&](const Block& r) { collect_candidates(r, uses, out); });
  }
}

struct Site {
  Block* block = nullptr;
  size_t index = 0;
};

Site find_binding(Block& b, VarId x) {
  for (size_t k = 0; k < b.stmts.size(); ++k) {
    Stmt& s = b.stmts[k];
    if (s.results.size() == 1 && s.results[0] == x) return Site{&b, k};
    Site found;
    ir::for_each_region(s, [&](Block& r) {
      if (found.block == nullptr) found = find_binding(r, x);
    });
    if (found.block != nullptr) return found;
  }
  return Site{};
}

// Cheap to compute at every point of X: cost-free, binding scalars, with no generator,
// reduction, scatter or loop inside (guards and ifs of such statements are fine).
bool cheap(const ir::Function& f, const Stmt& s) {
  if (!is_cost_free(f, s)) return false;
  for (VarId r : s.results) {
    if (!f.type_of(r).is_scalar()) return false;
  }
  return !repeats(s);
}

// Rewrites every read v[a...] in b to p[J, a...]; false if v has any other use.
bool redirect_reads(Block& b, VarId v, VarId p, const std::vector<ir::IndexVar>& outer) {
  int reads = 0;
  std::function<void(Block&)> walk = [&](Block& blk) {
    for (auto& s : blk.stmts) {
      if (auto* ix = std::get_if<ir::IndexOp>(&s.op);
          ix && ix->tensor.is_var && ix->tensor.var == v) {
        std::vector<ir::IndexExpr> indices;
        indices.reserve(outer.size() + ix->indices.size());
        for (const auto& iv : outer)
          indices.push_back(ir::IndexExpr{true, Affine::var(iv.var), {}});
        indices.insert(indices.end(), ix->indices.begin(), ix->indices.end());
        ix->tensor = Atom::of(p);
        ix->indices = std::move(indices);
        ++reads;
      }
      ir::for_each_region(s, [&](Block& r) { walk(r); });
    }
  };
  walk(b);
  int left = 0;
  ir::for_each_use(b, [&](VarId u) { left += u == v ? 1 : 0; });
  return left == 0 && reads > 0;
}

// The rewrite of X (at `site`); false, with f unusable, when it does not apply.
bool split(ir::Function& f, Site site) {
  Stmt& x = site.block->stmts[site.index];
  auto& g = std::get<ir::GenOp>(x.op);
  Stmt inner = std::move(g.body.stmts.back());
  g.body.stmts.pop_back();
  auto& ig = std::get<ir::GenOp>(inner.op);
  // S's statements that are cheap and depend only on cheap ones (or on what is bound outside)
  // stay in X; the one costly value E reads is materialized over J.
  std::unordered_set<VarId> bound_in_s;
  for (const auto& s : g.body.stmts) bound_in_s.insert(s.results.begin(), s.results.end());
  std::unordered_set<VarId> copyable;
  for (const auto& s : g.body.stmts) {
    bool ok = cheap(f, s);
    for (VarId u : stmt_uses(s)) ok = ok && (bound_in_s.count(u) == 0 || copyable.count(u) != 0);
    if (ok) copyable.insert(s.results.begin(), s.results.end());
  }
  std::unordered_set<VarId> costly_read;
  ir::for_each_use(ig.body, [&](VarId u) {
    if (bound_in_s.count(u) != 0 && copyable.count(u) == 0) costly_read.insert(u);
  });
  if (costly_read.size() > 1) return false;
  std::optional<Stmt> pstmt;
  if (!costly_read.empty()) {
    // P = for J'. { copy of S; yield v }
    const VarId v = *costly_read.begin();
    const Type vt = f.type_of(v);  // a copy: new_var below grows f.vars
    if (vt.is_tuple) return false;
    ir::CloneMap map;
    ir::GenOp pgen;
    for (const auto& iv : g.ivars) {
      const VarId fresh = f.new_var(f.vars[static_cast<size_t>(iv.var)].name, f.type_of(iv.var));
      map.atoms[iv.var] = Atom::of(fresh);
      pgen.ivars.push_back(ir::IndexVar{fresh, iv.extent});
    }
    Block src;
    src.stmts = g.body.stmts;
    src.results.push_back(Atom::of(v));
    pgen.body = ir::clone_block(f, src, f, map);
    std::vector<SizeExpr> shape;
    for (const auto& iv : g.ivars) shape.push_back(iv.extent);
    shape.insert(shape.end(), vt.shape.begin(), vt.shape.end());
    const VarId p = f.new_var(f.vars[static_cast<size_t>(v)].name, Type::tensor(vt.elem, shape));
    if (!redirect_reads(ig.body, v, p, g.ivars)) return false;
    pstmt = Stmt{{p}, std::move(pgen), x.span};
  }

  // X = for J, I. { cheap part of S; E with v[a] read as P[J, a] }
  std::vector<Stmt> body;
  for (auto& s : g.body.stmts) {
    if (!s.results.empty() && copyable.count(s.results[0]) != 0) body.push_back(std::move(s));
  }
  for (auto& s : ig.body.stmts) body.push_back(std::move(s));
  g.body.stmts = std::move(body);
  g.body.results = std::move(ig.body.results);
  g.ivars.insert(g.ivars.end(), ig.ivars.begin(), ig.ivars.end());
  if (pstmt) {
    site.block->stmts.insert(site.block->stmts.begin() + static_cast<ptrdiff_t>(site.index),
                             std::move(*pstmt));
  }
  return true;
}

// f with every rewrite that pays kept (in `kept`, X's names), or nullopt when none does.
std::optional<ir::Function> try_splits(const ir::Function& f, bool first_only,
                                       std::vector<VarId>* kept) {
  std::vector<VarId> candidates;
  collect_candidates(f.body, ir::use_counts(f), candidates);
  if (candidates.empty()) return std::nullopt;
  ir::Function g = f;
  bool any = false;
  for (VarId x : candidates) {
    ir::Function tried = g;
    const Site site = find_binding(tried.body, x);
    // An earlier rewrite may have changed it.
    if (site.block == nullptr || !yields_gen_after_prefix(site.block->stmts[site.index]) ||
        ir::use_counts(tried)[static_cast<size_t>(x)] != 1 || !split(tried, site)) {
      continue;
    }
    ir::Function fused = tried;
    fuse_reads(fused, false);
    if (find_binding(fused.body, x).block != nullptr) continue;  // X stays: nothing gained
    g = std::move(tried);
    any = true;
    if (kept != nullptr) kept->push_back(x);
    if (first_only) break;
  }
  if (!any) return std::nullopt;
  return g;
}

}  // namespace

PassResult split_outputs(const ir::Program& program, const ir::Function& f) {
  (void)program;
  // Until no split pays: one rewrite can make another pay that did not before it (the
  // postcondition asks it of the function the pass returns; AdIdentity's seed 1403). Each kept
  // split flattens one level of generators nested in generators, so this ends.
  ir::Function out = f;
  bool changed = false;
  while (auto g = try_splits(out, false, nullptr)) {  // nullopt: no split pays
    out = std::move(*g);
    changed = true;
  }
  return {std::move(out), changed};
}

std::optional<std::string> output_fission_postcondition(const ir::Program& program,
                                                        const ir::Function& f) {
  (void)program;
  std::vector<VarId> kept;
  if (!try_splits(f, true, &kept)) return std::nullopt;
  return "the generator " + f.vars[static_cast<size_t>(kept[0])].name +
         " yields a generator over a costly per-point value that could be materialized";
}

}  // namespace cot::opt
