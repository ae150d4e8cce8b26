#include "opt/static_cost.h"

#include <algorithm>
#include <type_traits>

#include "index/fourier_motzkin.h"
#include "ir/match.h"
#include "ir/regions.h"
#include "ir/uses.h"
#include "prims/prim.h"

namespace cot::opt {
namespace {

bool any_real(const ir::Function& f, const std::vector<ir::Atom>& args) {
  for (const auto& a : args) {
    const Type t = ir::atom_type(f, a);
    if (!t.is_tuple && is_real(t.elem)) return true;
  }
  return false;
}

bool result_real(const ir::Function& f, const ir::Stmt& s) {
  for (ir::VarId v : s.results) {
    if (f.type_of(v).is_real_valued()) return true;
  }
  return false;
}

bool block_may_fail(const ir::Function& f, const ir::Block& b) {
  for (const auto& s : b.stmts) {
    if (may_fail(f, s)) return true;
  }
  return false;
}

bool size_may_fail(const SizeExpr& e) {
  return e.poisoned() || !e.as_linear();
}

bool type_mentions(const Type& t, const std::vector<std::string>& names) {
  if (t.is_tuple) {
    for (const auto& e : t.elems) {
      if (type_mentions(e, names)) return true;
    }
    return false;
  }
  for (const auto& d : t.shape) {
    for (const auto& v : d.vars()) {
      if (std::find(names.begin(), names.end(), v) != names.end()) return true;
    }
  }
  return false;
}

bool size_mentions(const SizeExpr& e, const std::vector<std::string>& names) {
  for (const auto& v : e.vars()) {
    if (std::find(names.begin(), names.end(), v) != names.end()) return true;
  }
  return false;
}

void atom_non_affine(const ir::Atom& a, ir::VarId v, bool& found) {
  if (a.is_var && a.var == v) found = true;
}

void pred_non_affine(const Pred& p, ir::VarId v, bool& found) {
  if (p.kind == Pred::Kind::Atom && p.atom == v) found = true;
  for (const auto& k : p.kids) pred_non_affine(k, v, found);
}

void block_non_affine(const ir::Block& b, ir::VarId v, bool& found);

void stmt_non_affine(const ir::Stmt& s, ir::VarId v, bool& found) {
  auto atoms = [&](const std::vector<ir::Atom>& as) {
    for (const auto& a : as) atom_non_affine(a, v, found);
  };
  auto none = [](const auto& /*op*/) {};
  ir::match(
      s.op, [&](const ir::PrimOp& o) { atoms(o.args); },
      [&](const ir::CallOp& o) { atoms(o.args); },
      [&](const ir::IndexOp& o) {
        atom_non_affine(o.tensor, v, found);
        for (const auto& ix : o.indices) {
          if (!ix.is_affine) atom_non_affine(ix.computed, v, found);
        }
      },
      [&](const ir::GuardOp& o) { pred_non_affine(o.pred, v, found); },
      [&](const ir::LoopOp& o) {
        atoms(o.init);
        if (!o.is_while) atom_non_affine(o.count, v, found);
      },
      [&](const ir::IfOp& o) { atom_non_affine(o.cond, v, found); },
      [&](const ir::TupleOp& o) { atoms(o.elems); },
      [&](const ir::ProjOp& o) { atom_non_affine(o.tuple, v, found); },
      [&](const ir::GenOp& o) { none(o); }, [&](const ir::ReduceOp& o) { none(o); },
      [&](const ir::AccumOp& o) { none(o); }, [&](const ir::SizeOp& o) { none(o); });
  ir::for_each_region(s, [&](const ir::Block& b) { block_non_affine(b, v, found); });
}

void block_non_affine(const ir::Block& b, ir::VarId v, bool& found) {
  for (const auto& s : b.stmts) {
    if (found) return;
    stmt_non_affine(s, v, found);
  }
  for (const auto& a : b.results) atom_non_affine(a, v, found);
}

}  // namespace

bool prim_costs(const ir::Function& f, const ir::PrimOp& p) {
  return prim_info(p.prim).cost != CostKind::Free && any_real(f, p.args);
}

bool is_cost_free(const ir::Function& f, const ir::Stmt& s) {
  auto regions_free = [&] {
    bool free = true;
    ir::for_each_region(s, [&](const ir::Block& b) { free = free && is_cost_free(f, b); });
    return free;
  };
  // A real reduction or scatter-add adds; everything else costs what its regions cost.
  auto adds_unless_integer = [&] { return !result_real(f, s) && regions_free(); };
  return ir::match(
      s.op, [&](const ir::PrimOp& o) { return !prim_costs(f, o); },
      [&](const ir::CallOp& /*o*/) { return false; },
      [&](const ir::ReduceOp& /*o*/) { return adds_unless_integer(); },
      [&](const ir::AccumOp& /*o*/) { return adds_unless_integer(); },
      [&](const ir::GenOp& /*o*/) { return regions_free(); },
      [&](const ir::GuardOp& /*o*/) { return regions_free(); },
      [&](const ir::LoopOp& /*o*/) { return regions_free(); },
      [&](const ir::IfOp& /*o*/) { return regions_free(); },
      [&](const ir::IndexOp& /*o*/) { return true; },
      [&](const ir::TupleOp& /*o*/) { return true; }, [&](const ir::ProjOp& /*o*/) { return true; },
      [&](const ir::SizeOp& /*o*/) { return true; });
}

bool is_cost_free(const ir::Function& f, const ir::Block& b) {
  for (const auto& s : b.stmts) {
    if (!is_cost_free(f, s)) return false;
  }
  return true;
}

bool may_fail(const ir::Function& f, const ir::Stmt& s) {
  auto extents_may_fail = [&](const std::vector<ir::IndexVar>& ivars) {
    for (const auto& iv : ivars) {
      if (size_may_fail(iv.extent)) return true;
    }
    return false;
  };
  return ir::match(
      s.op,
      [&](const ir::PrimOp& o) {
        switch (o.prim) {
          case Prim::Add:
          case Prim::Sub:
          case Prim::Mul:
          case Prim::Neg:
          case Prim::Abs:
          case Prim::Max:
          case Prim::Min:
            // Integer overflow; real arithmetic never fails.
            return !any_real(f, o.args);
          case Prim::FloorDiv:
          case Prim::Mod:
          case Prim::ExactDiv:
            return true;
          case Prim::ToI64:
            return any_real(f, o.args);
          default:
            return false;
        }
      },
      // Range checks; a callee's or a loop's body is not looked at.
      [&](const ir::IndexOp& /*o*/) { return true; }, [&](const ir::CallOp& /*o*/) { return true; },
      [&](const ir::LoopOp& /*o*/) { return true; },
      [&](const ir::GenOp& o) { return extents_may_fail(o.ivars) || block_may_fail(f, o.body); },
      [&](const ir::ReduceOp& o) {
        // Integer sums overflow; integer max/min of an empty range has no value.
        return extents_may_fail(o.ivars) || !result_real(f, s) || block_may_fail(f, o.body);
      },
      [&](const ir::AccumOp& /*o*/) { return true; },  // positions are range-checked
      [&](const ir::GuardOp& o) { return block_may_fail(f, o.body); },
      [&](const ir::IfOp& o) {
        return block_may_fail(f, o.then_branch) || block_may_fail(f, o.else_branch);
      },
      [&](const ir::SizeOp& o) { return size_may_fail(o.size); },
      [&](const ir::TupleOp& /*o*/) { return false; },
      [&](const ir::ProjOp& /*o*/) { return false; });
}

bool used_non_affinely(const ir::Block& b, ir::VarId v) {
  bool found = false;
  block_non_affine(b, v, found);
  return found;
}

bool mentions_sizes(const ir::Function& f, const ir::Stmt& s,
                    const std::vector<std::string>& names) {
  if (names.empty()) return false;
  for (ir::VarId v : s.results) {
    if (type_mentions(f.type_of(v), names)) return true;
  }
  bool found = false;
  ir::for_each_direct_size(s.op,
                           [&](const SizeExpr& e) { found = found || size_mentions(e, names); });
  if (found) return true;
  ir::for_each_region(s, [&](const ir::Block& b) {
    for (const auto& t : b.stmts) found = found || mentions_sizes(f, t, names);
  });
  return found;
}

bool read_in_range(const ir::Function& f, const ir::IndexOp& r, const IndexFacts& facts) {
  const Type t = ir::atom_type(f, r.tensor);
  for (size_t d = 0; d < r.indices.size(); ++d) {
    const auto& ix = r.indices[d];
    if (!ix.is_affine || d >= t.shape.size() || !facts.proves_in_range(f, ix.affine, t.shape[d])) {
      return false;
    }
  }
  return true;
}

std::vector<ir::VarId> stmt_uses(const ir::Stmt& s) {
  std::vector<ir::VarId> out;
  auto add = [&](ir::VarId v) { out.push_back(v); };
  ir::for_each_direct_use(s.op, add);
  ir::for_each_region(s, [&](const ir::Block& b) { ir::for_each_use(b, add); });
  return out;
}

bool repeats(const ir::Stmt& s) {
  if (s.as<ir::GenOp>() != nullptr || s.as<ir::ReduceOp>() != nullptr ||
      s.as<ir::AccumOp>() != nullptr || s.as<ir::LoopOp>() != nullptr) {
    return true;
  }
  bool found = false;
  ir::for_each_region(s, [&](const ir::Block& b) {
    for (const auto& t : b.stmts) found = found || repeats(t);
  });
  return found;
}

}  // namespace cot::opt
