// The transpose of a read at computed indices inside regions (docs/design.md §7.4): one read
// `v[e(i)]` inside region statement s, as a scatter-add over every index variable along the path,
//   accum[shape(v)] i. (e(i), c(i))
// where c(i) copies the regions down to the read at the point i and runs their reverse pass.
#include <stdexcept>

#include "ad/tangent.h"
#include "ad/transpose.h"
#include "ad/transpose_internal.h"
#include "ir/clone.h"

namespace cot::ad {

using transpose_detail::emit_affine;
using transpose_detail::ivars_of;
using transpose_detail::regions_of;

using Cts = std::vector<std::optional<ir::Atom>>;

class Transposer::Scatter {
 public:
  Scatter(Transposer& t, const Path& path, ir::VarId v, const ir::Block* body0);
  std::optional<ir::Atom> emit(const ir::Stmt& s, const Cts& cts);

 private:
  std::vector<ir::Atom> descend(size_t k, const ir::Stmt& st, const Cts& st_cts);
  std::vector<ir::Atom> point_of_level(size_t k, const ir::Stmt& st, const Cts& st_cts);
  std::vector<ir::Atom> position_and_value(Level& lvl);
  std::vector<ir::Atom> zeros_out();

  Transposer& t_;
  ir::Builder& b_;
  ir::Function& f_;
  const Path& path_;
  const ir::VarId v_;
  const ir::Block* body0_;
  const ir::Stmt& read_;                       // the read in the original innermost region
  size_t nidx_;                                // how many indices the read has
  Type value_type_;                            // the type of the element (or slice) the read takes
  std::vector<ir::IndexVar> all_;              // the accum's index variables, level by level
  std::vector<std::vector<ir::VarId>> fresh_;  // per level of the path: its index variables'
};

std::optional<ir::Atom> Transposer::scatter(const ir::Stmt& s, const Cts& cts, const Path& path,
                                            ir::VarId v, const ir::Block* body) {
  return Scatter(*this, path, v, body).emit(s, cts);
}

Transposer::Scatter::Scatter(Transposer& t, const Path& path, ir::VarId v, const ir::Block* body0)
    : t_(t),
      b_(t.b_),
      f_(t.b_.function()),
      path_(path),
      v_(v),
      body0_(body0),
      read_(path.reader()),
      nidx_(read_.as<ir::IndexOp>()->indices.size()) {
  const Type vt = f_.type_of(v_);
  std::vector<SizeExpr> rest(vt.shape.begin() + static_cast<long>(nidx_), vt.shape.end());
  value_type_ = Type::tensor(vt.elem, rest);
}

std::optional<ir::Atom> Transposer::Scatter::emit(const ir::Stmt& s, const Cts& cts) {
  const Type vt = f_.type_of(v_);
  std::vector<SizeExpr> pre(vt.shape.begin(), vt.shape.begin() + static_cast<long>(nidx_));
  // Every index variable along the path becomes an index variable of the accum.
  fresh_.resize(path_.stmts.size());
  for (size_t k = 0; k < path_.stmts.size(); ++k) {
    if (const auto* iv = ivars_of(*path_.stmts[k])) {
      for (const auto& x : *iv) {
        fresh_[k].push_back(b_.index_var(f_.vars[static_cast<size_t>(x.var)].name));
        all_.push_back(ir::IndexVar{fresh_[k].back(), x.extent});
      }
    }
  }
  // Its errors (a position out of range) point at the read it transposes.
  return ir::Atom::of(b_.accum(
      pre, all_, [&] { return descend(0, s, cts); }, read_.span));
}

// A placeholder position and a zero value: nothing is added.
std::vector<ir::Atom> Transposer::Scatter::zeros_out() {
  std::vector<ir::Atom> out(nidx_, ir::Atom::i64(0));
  out.push_back(zeros(b_, value_type_));
  return out;
}

// Level k of the path (`st` the original region statement for k = 0, else its copy): a guard
// level keeps its guard, an if level guards on the read's branch.
std::vector<ir::Atom> Transposer::Scatter::descend(size_t k, const ir::Stmt& st,
                                                   const Cts& st_cts) {
  auto point = [&] { return point_of_level(k, st, st_cts); };
  auto atoms = [](const std::vector<ir::VarId>& vars) {
    std::vector<ir::Atom> out;
    out.reserve(vars.size());
    for (ir::VarId x : vars) out.push_back(ir::Atom::of(x));
    return out;
  };
  if (const auto* i = st.as<ir::IfOp>()) {
    // The read runs only on one branch: a guard on that branch's condition, so that the
    // other branch's contribution is a strong zero, which goes nowhere. A placeholder
    // position there would be range-checked, and no position is in range of an empty
    // tensor (gmm's l at d = 1).
    const bool then = path_.region[k] == 0;
    Pred on = Pred::falsity();
    if (i->cond.is_var) {
      on = Pred::atom_of(i->cond.var, !then);
    } else if (i->cond.lit.boolean == then) {
      on = Pred::truth();
    }
    if (on.kind == Pred::Kind::False) return zeros_out();
    if (on.kind == Pred::Kind::True) return point();
    return atoms(b_.guard(on, point));
  }
  if (const auto* g = st.as<ir::GuardOp>()) return atoms(b_.guard(g->pred, point));
  return point();
}

// One point of level k (its index variables are the accum's): the copy of its region opened
// there, then the next level, or the read's position and cotangent at the innermost one.
std::vector<ir::Atom> Transposer::Scatter::point_of_level(size_t k, const ir::Stmt& st,
                                                          const Cts& st_cts) {
  const ir::Block& region =
      k == 0 && body0_ ? *body0_ : *regions_of(st)[static_cast<size_t>(path_.region[k])];
  const auto* cur = ivars_of(st);
  ir::CloneMap map;
  std::vector<ir::IndexExpr> at;
  if (cur) {
    for (size_t q = 0; q < cur->size(); ++q) {
      map.atoms[(*cur)[q].var] = ir::Atom::of(fresh_[k][q]);
      at.push_back(ir::affine_index(Affine::var(fresh_[k][q])));
    }
  }
  ir::Block copy = ir::clone_block(f_, region, f_, map);
  auto lvl = t_.open_region_copy(st, std::move(copy), st_cts, at);
  if (k + 1 < path_.stmts.size()) {
    long p = lvl->position.at(path_.pos[k + 1]);
    if (p < 0) return zeros_out();
    const auto next_cts = t_.result_cts(*lvl, static_cast<size_t>(p));
    return descend(k + 1, lvl->stmts[static_cast<size_t>(p)], next_cts);
  }
  return position_and_value(*lvl);
}

// The read's position (its indices, emitted in the copy) and the cotangent of its result.
std::vector<ir::Atom> Transposer::Scatter::position_and_value(Level& lvl) {
  long p = lvl.position.at(static_cast<size_t>(path_.final_pos));
  if (p < 0) return zeros_out();
  const ir::Stmt& read = lvl.stmts[static_cast<size_t>(p)];
  std::vector<ir::Atom> out;
  for (const auto& ix : read.as<ir::IndexOp>()->indices) {
    out.push_back(ix.is_affine ? emit_affine(b_, ix.affine) : ix.computed);
  }
  auto c = t_.ct(lvl, read.results[0]);
  out.push_back(c ? *c : zeros(b_, value_type_));
  return out;
}

}  // namespace cot::ad
