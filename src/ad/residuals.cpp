#include "ad/residuals.h"

#include <algorithm>

#include "ir/builder.h"
#include "ir/clone.h"
#include "ir/regions.h"
#include "prims/prim.h"

namespace cot::ad {

namespace {

// Whether `s` applies a costly elementwise function (cost kind Call) to reals, nested regions
// included except loops' (whose trip count is their own business).
bool applies_call(const ir::Function& f, const ir::Stmt& s) {
  if (const auto* p = s.as<ir::PrimOp>()) {
    return prim_info(p->prim).cost == CostKind::Call && has_tangent(f.type_of(s.results[0]));
  }
  if (s.as<ir::LoopOp>() != nullptr) return false;
  bool found = false;
  ir::for_each_region(s, [&](const ir::Block& r) {
    found = found || std::any_of(r.stmts.begin(), r.stmts.end(),
                                 [&](const ir::Stmt& t) { return applies_call(f, t); });
  });
  return found;
}

// Whether a value of type `t` is no larger than some state of `states`: a real scalar, or a
// real tensor whose extents (sizes of parameters only, so known before the loop starts) are
// among one state's extents.
bool small_as_a_state(const ir::Function& f, const Type& t, const std::vector<Type>& states) {
  if (t.is_tuple || !has_tangent(t)) return false;
  if (t.is_scalar()) return true;
  for (const auto& e : t.shape) {
    for (const auto& name : e.vars()) {
      const bool param_size =
          std::any_of(f.size_vars.begin(), f.size_vars.end(),
                      [&](const ir::SizeVar& sv) { return sv.name == name && sv.param >= 0; });
      if (!param_size) return false;
    }
  }
  return std::any_of(states.begin(), states.end(), [&](const Type& st) {
    if (st.is_tuple) return false;
    std::vector<SizeExpr> left = st.shape;
    for (const auto& e : t.shape) {
      auto it = std::find(left.begin(), left.end(), e);
      if (it == left.end()) return false;
      left.erase(it);
    }
    return true;
  });
}

}  // namespace

ir::Block expose_costly_values(ir::Function& f, const ir::Block& body, VarSet& tangent,
                               const std::vector<Type>& primal_states) {
  ir::Block out;
  out.results = body.results;
  VarSet& t = tangent;
  for (const auto& st : body.stmts) {
    if (!reads_any(st, t)) {
      out.stmts.push_back(st);
      continue;
    }
    propagate_stmt(f, st, t);
    const auto* g = st.as<ir::GenOp>();
    std::vector<SizeExpr> extents;
    if (g != nullptr) {
      for (const auto& iv : g->ivars) extents.push_back(iv.extent);
    }
    if (g == nullptr || st.results.size() != 1 ||
        !small_as_a_state(f, Type::tensor(Scalar::F64, extents), primal_states)) {
      out.stmts.push_back(st);
      continue;
    }
    // The gen body's primal statements (those not depending on a tangent), and among them the
    // costly scalar ones.
    ir::Stmt split = st;
    auto& gbody = split.as<ir::GenOp>()->body;
    // propagate_stmt marked the gen body's tangents in t already: no copy needed.
    VarSet& inner = t;
    std::vector<bool> primal(gbody.stmts.size(), false);
    for (size_t i = 0; i < gbody.stmts.size(); ++i) {
      if (reads_any(gbody.stmts[i], inner)) {
        propagate_stmt(f, gbody.stmts[i], inner);
      } else {
        primal[i] = true;
      }
    }
    for (size_t i = 0; i < gbody.stmts.size(); ++i) {
      const ir::Stmt& c = gbody.stmts[i];
      const auto* p = c.as<ir::PrimOp>();
      if (!primal[i] || p == nullptr || prim_info(p->prim).cost != CostKind::Call) continue;
      const Type ct = f.type_of(c.results[0]);
      if (!ct.is_scalar() || !has_tangent(ct)) continue;
      // The statements of the gen body that c depends on, in order. All must be primal: a
      // statement that carries tangents too (a combined loop) may bind a primal value.
      VarSet need = stmt_reads(c);
      std::vector<bool> in_slice(i, false);
      bool all_primal = true;
      for (size_t j = i; j-- > 0;) {
        const auto& d = gbody.stmts[j];
        if (std::none_of(d.results.begin(), d.results.end(),
                         [&](ir::VarId v) { return need.count(v) != 0; })) {
          continue;
        }
        in_slice[j] = true;
        all_primal = all_primal && primal[j];
        const VarSet reads = stmt_reads(d);
        need.insert(reads.begin(), reads.end());
      }
      if (!all_primal) continue;
      ir::Block slice;
      for (size_t j = 0; j < i; ++j) {
        if (in_slice[j]) slice.stmts.push_back(gbody.stmts[j]);
      }
      slice.stmts.push_back(c);
      slice.results = {ir::Atom::of(c.results[0])};
      ir::CloneMap map;
      ir::GenOp r;
      std::vector<ir::IndexExpr> at;
      for (const auto& iv : g->ivars) {
        const ir::VarId fresh =
            f.new_var(f.vars[static_cast<size_t>(iv.var)].name, Type::scalar(Scalar::I64));
        r.ivars.push_back(ir::IndexVar{fresh, iv.extent});
        map.atoms[iv.var] = ir::Atom::of(fresh);
        at.push_back(ir::affine_index(Affine::var(iv.var)));
      }
      r.body = ir::clone_block(f, slice, f, map);
      ir::Stmt rs;
      rs.span = c.span;
      rs.results = {f.new_var("residual", Type::tensor(ct.elem, extents))};
      rs.op = std::move(r);
      // c becomes a read of the new gen at the gen's point.
      ir::Stmt read;
      read.span = c.span;
      read.results = c.results;
      read.op = ir::IndexOp{ir::Atom::of(rs.results[0]), std::move(at)};
      gbody.stmts[i] = std::move(read);
      out.stmts.push_back(std::move(rs));
    }
    out.stmts.push_back(std::move(split));
  }
  return out;
}

std::vector<size_t> costly_residuals(const ir::Function& f, const ir::Block& body, VarSet& tangent,
                                     const std::vector<Type>& primal_states) {
  std::vector<bool> is_tangent(body.stmts.size(), false);
  VarSet needed;
  for (size_t i = 0; i < body.stmts.size(); ++i) {
    const auto& st = body.stmts[i];
    if (!reads_any(st, tangent)) continue;
    is_tangent[i] = true;
    propagate_stmt(f, st, tangent);
    const VarSet reads = stmt_reads(st);
    needed.insert(reads.begin(), reads.end());
  }
  std::vector<size_t> saved;
  for (size_t i = body.stmts.size(); i-- > 0;) {
    const auto& st = body.stmts[i];
    if (is_tangent[i]) continue;
    const bool is_needed = std::any_of(st.results.begin(), st.results.end(),
                                       [&](ir::VarId v) { return needed.count(v) != 0; });
    if (!is_needed) continue;
    const bool costly = st.results.size() == 1 && st.as<ir::LoopOp>() == nullptr &&
                        (st.as<ir::PrimOp>() != nullptr || st.as<ir::GenOp>() != nullptr) &&
                        applies_call(f, st) &&
                        small_as_a_state(f, f.type_of(st.results[0]), primal_states);
    if (costly) {
      saved.push_back(i);
      continue;
    }
    const VarSet reads = stmt_reads(st);
    needed.insert(reads.begin(), reads.end());
  }
  std::reverse(saved.begin(), saved.end());
  return saved;
}

}  // namespace cot::ad
