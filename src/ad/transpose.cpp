// The transposer's dispatch (transpose.h): the cotangent of a variable as the sum of the
// contributions of its readers, and the rules for the statements without regions (primitives,
// reads outside regions, tuples, projections). Reads inside regions go to gather or scatter
// (transpose_gather.cpp, transpose_scatter.cpp), loops to loop_cts (transpose_loop.cpp).
#include "ad/transpose.h"

#include <stdexcept>

#include "ad/tangent.h"
#include "ad/transpose_internal.h"
#include "ir/match.h"
#include "ir/uses.h"
#include "prims/prim.h"

namespace cot::ad {

using transpose_detail::regions_of;

Transposer::~Transposer() = default;

namespace transpose_detail {

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

}  // namespace transpose_detail

namespace {}  // namespace

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

// Each reader's rule, by the kind of its statement (the table in transpose.h).
std::optional<ir::Atom> Transposer::contribution(Level& lv, size_t idx, ir::VarId v) {
  const ir::Stmt& s = lv.stmts[idx];
  using R = std::optional<ir::Atom>;
  // The cotangent of a statement's first (a leaf's only) result; nullopt: zero.
  auto result_ct = [&]() -> R {
    const auto cts = result_cts(lv, idx);
    return cts.empty() ? std::nullopt : cts[0];
  };
  auto in_regions = [&](const auto& /*op*/) -> R { return region_contribution(lv, idx, v); };
  // A size or a call reading a tangent is not linear Core IR: unzip and inlining leave none.
  auto not_linear = [&](const auto& /*op*/) -> R {
    if (!result_ct()) return std::nullopt;
    throw std::logic_error("ad: cannot transpose a statement that reads a tangent");
  };
  return ir::match(
      s.op,
      [&](const ir::PrimOp& /*op*/) -> R {
        const R c = result_ct();
        return c ? prim_contribution(s, v, *c) : std::nullopt;
      },
      [&](const ir::IndexOp& /*op*/) -> R {
        const R c = result_ct();
        return c ? index_contribution(s, v, *c) : std::nullopt;
      },
      [&](const ir::TupleOp& op) -> R {
        const R c = result_ct();
        return c ? tuple_contribution(op, v, *c) : std::nullopt;
      },
      [&](const ir::ProjOp& op) -> R {
        const R c = result_ct();
        return c ? proj_contribution(op, v, *c) : std::nullopt;
      },
      [&](const ir::GenOp& op) { return in_regions(op); },
      [&](const ir::ReduceOp& op) { return in_regions(op); },
      [&](const ir::AccumOp& op) { return in_regions(op); },
      [&](const ir::GuardOp& op) { return in_regions(op); },
      [&](const ir::IfOp& op) { return in_regions(op); },
      [&](const ir::LoopOp& /*op*/) { return loop_contribution(lv, idx, v); },
      [&](const ir::SizeOp& op) { return not_linear(op); },
      [&](const ir::CallOp& op) { return not_linear(op); });
}

// `w = (.., v, ..)`: the projections of w's cotangent at v's positions.
std::optional<ir::Atom> Transposer::tuple_contribution(const ir::TupleOp& op, ir::VarId v,
                                                       ir::Atom ct) {
  std::optional<ir::Atom> out;
  for (size_t k = 0; k < op.elems.size(); ++k) {
    if (!op.elems[k].is_var || op.elems[k].var != v) continue;
    ir::Atom c = ir::Atom::of(b_.proj(ct, static_cast<int>(k)));
    out = out ? add_values(b_, *out, c) : c;
  }
  return out;
}

// `w = v.k`: a tuple of zeros with w's cotangent at k.
std::optional<ir::Atom> Transposer::proj_contribution(const ir::ProjOp& op, ir::VarId v,
                                                      ir::Atom ct) {
  const Type tt = b_.function().type_of(v);
  std::vector<ir::Atom> elems;
  for (size_t k = 0; k < tt.elems.size(); ++k) {
    elems.push_back(static_cast<int>(k) == op.index ? ct : zeros(b_, tt.elems[k]));
  }
  return ir::Atom::of(b_.tuple(std::move(elems)));
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
      if (p.is_real_literal(0.0)) continue;
      if (p.is_real_literal(-1.0)) {
        part = ir::Atom::of(b_.prim(Prim::Neg, {ct}));
      } else if (!p.is_real_literal(1.0)) {
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

std::vector<Transposer::Path> Transposer::Path::reads_in(const ir::Stmt& s, ir::VarId v) {
  std::vector<Path> out;
  Path chain;
  chain.pos = {0};
  collect_reads(s, v, std::move(chain), out);
  return out;
}

const ir::Stmt& Transposer::Path::reader() const {
  const ir::Block& innermost = *regions_of(*stmts.back())[static_cast<size_t>(region.back())];
  return innermost.stmts[static_cast<size_t>(final_pos)];
}

// `chain`: the region statements above st, the regions taken and their positions.
void Transposer::Path::collect_reads(const ir::Stmt& st, ir::VarId v, Path chain,
                                     std::vector<Path>& out) {
  chain.stmts.push_back(&st);
  auto regs = regions_of(st);
  for (size_t r = 0; r < regs.size(); ++r) {
    const ir::Block& blk = *regs[r];
    if (!free_vars(blk).count(v)) continue;
    Path in_region = chain;
    in_region.region.push_back(static_cast<int>(r));
    for (size_t p = 0; p < blk.stmts.size(); ++p) {
      const ir::Stmt& inner = blk.stmts[p];
      if (!stmt_reads(inner).count(v)) continue;
      if (!regions_of(inner).empty()) {
        Path deeper = in_region;
        deeper.pos.push_back(p);
        collect_reads(inner, v, std::move(deeper), out);
        continue;
      }
      Path read = in_region;
      read.final_pos = static_cast<long>(p);
      if (const auto* ix = inner.as<ir::IndexOp>()) {
        if (ix->tensor.is_var && ix->tensor.var == v) {
          read.kind = Kind::Affine;
          for (const auto& e : ix->indices) {
            if (!e.is_affine) read.kind = Kind::Computed;
          }
        }
      }
      out.push_back(std::move(read));
    }
    for (const auto& res : blk.results) {
      if (res.is_var && res.var == v) {
        Path result = in_region;
        result.final_pos = -1;
        out.push_back(std::move(result));
        break;
      }
    }
  }
}

// A read inside the regions of a gen, sum, accum, guard or if: a gather per read at affine
// indices or of v whole, a scatter-add per read at computed indices (docs/design.md §7.4).
std::optional<ir::Atom> Transposer::region_contribution(Level& lv, size_t idx, ir::VarId v) {
  const auto cts = result_cts(lv, idx);
  bool any = false;
  for (const auto& c : cts) any = any || c.has_value();
  if (!any) return std::nullopt;
  const ir::Stmt& s = lv.stmts[idx];
  std::vector<Path> paths = Path::reads_in(s, v);
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

// A copy of a region of `st` (its index variables renamed to the point `at`), opened with the
// cotangents of its results: a gen's element of st's cotangent, a sum's whole cotangent, a guard's
// or an if's own; an accum's value gets st's cotangent at the positions the copy yields.
std::unique_ptr<Transposer::Level> Transposer::open_region_copy(
    const ir::Stmt& st, ir::Block copy, const std::vector<std::optional<ir::Atom>>& st_cts,
    const std::vector<ir::IndexExpr>& at) {
  std::vector<std::optional<ir::Atom>> rcts(copy.results.size());
  const bool accum = st.as<ir::AccumOp>() != nullptr;
  if (st.as<ir::GenOp>()) {
    if (st_cts[0]) rcts[0] = ir::Atom::of(b_.index(*st_cts[0], at));
  } else if (st.as<ir::ReduceOp>()) {
    rcts[0] = st_cts[0];
  } else if (!accum) {
    rcts = st_cts;
  }
  // The accum's positions are computed by its body's primal statements, emitted by open().
  auto lvl = open(std::move(copy), accum ? std::vector<std::optional<ir::Atom>>{} : rcts);
  if (accum && st_cts[0]) {
    std::vector<ir::IndexExpr> positions;
    for (size_t r = 0; r + 1 < lvl->results.size(); ++r) {
      positions.push_back(ir::computed_index(lvl->results[r]));
    }
    lvl->ct_results.back() = ir::Atom::of(b_.index(*st_cts[0], positions));
  }
  return lvl;
}

}  // namespace cot::ad
