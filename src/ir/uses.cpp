#include "ir/uses.h"

#include "ir/match.h"
#include "ir/regions.h"

namespace cot::ir {
namespace {

void atom_use(const Atom& a, const std::function<void(VarId)>& use) {
  if (a.is_var) use(a.var);
}

void affine_use(const Affine& a, const std::function<void(VarId)>& use) {
  for (const auto& [v, c] : a.terms()) use(v);
}

void pred_use(const Pred& p, const std::function<void(VarId)>& use) {
  std::vector<int32_t> vs;
  p.collect_vars(vs);
  for (auto v : vs) use(v);
}

}  // namespace

void for_each_direct_use(const Op& op, const std::function<void(VarId)>& use) {
  auto atoms = [&](const std::vector<Atom>& as) {
    for (const auto& a : as) atom_use(a, use);
  };
  // Generators, reductions, scatter-adds and size reads read nothing directly (extents are size
  // expressions over size-variable names; their bodies are regions).
  auto none = [](const auto& /*op*/) {};
  match(
      op, [&](const PrimOp& o) { atoms(o.args); }, [&](const CallOp& o) { atoms(o.args); },
      [&](const IndexOp& o) {
        atom_use(o.tensor, use);
        for (const auto& ix : o.indices) {
          if (ix.is_affine) {
            affine_use(ix.affine, use);
          } else {
            atom_use(ix.computed, use);
          }
        }
      },
      [&](const GuardOp& o) { pred_use(o.pred, use); },
      [&](const LoopOp& o) {
        atoms(o.init);
        if (!o.is_while) atom_use(o.count, use);
      },
      [&](const IfOp& o) { atom_use(o.cond, use); }, [&](const TupleOp& o) { atoms(o.elems); },
      [&](const ProjOp& o) { atom_use(o.tuple, use); }, [&](const GenOp& o) { none(o); },
      [&](const ReduceOp& o) { none(o); }, [&](const AccumOp& o) { none(o); },
      [&](const SizeOp& o) { none(o); });
}

void for_each_use(const Stmt& s, const std::function<void(VarId)>& use) {
  for_each_direct_use(s.op, use);
  for_each_region(s, [&](const Block& b) { for_each_use(b, use); });
}

void for_each_use(const Block& block, const std::function<void(VarId)>& use) {
  for (const auto& s : block.stmts) for_each_use(s, use);
  for (const auto& a : block.results) atom_use(a, use);
}

void for_each_call(const Block& block, const std::function<void(const std::string&)>& callee) {
  for (const auto& s : block.stmts) {
    if (const auto* c = s.as<CallOp>()) callee(c->callee);
    for_each_region(s, [&](const Block& b) { for_each_call(b, callee); });
  }
}

void for_each_direct_size(const Op& op, const std::function<void(const SizeExpr&)>& size) {
  auto extents = [&](const std::vector<IndexVar>& ivars) {
    for (const auto& iv : ivars) size(iv.extent);
  };
  auto none = [](const auto& /*op*/) {};
  match(
      op, [&](const GenOp& o) { extents(o.ivars); }, [&](const ReduceOp& o) { extents(o.ivars); },
      [&](const AccumOp& o) {
        for (const auto& d : o.shape) size(d);
        extents(o.ivars);
      },
      [&](const SizeOp& o) { size(o.size); }, [&](const PrimOp& o) { none(o); },
      [&](const CallOp& o) { none(o); }, [&](const IndexOp& o) { none(o); },
      [&](const GuardOp& o) { none(o); }, [&](const LoopOp& o) { none(o); },
      [&](const IfOp& o) { none(o); }, [&](const TupleOp& o) { none(o); },
      [&](const ProjOp& o) { none(o); });
}

namespace {

void for_each_size(const Block& block, const std::function<void(const SizeExpr&)>& size) {
  for (const auto& s : block.stmts) {
    for_each_direct_size(s.op, size);
    for_each_region(s, [&](const Block& b) { for_each_size(b, size); });
  }
}

}  // namespace

std::vector<int> use_counts(const Function& f) {
  std::vector<int> counts(f.vars.size(), 0);
  auto count = [&](VarId v) {
    if (v >= 0 && static_cast<size_t>(v) < counts.size()) ++counts[static_cast<size_t>(v)];
  };
  for_each_use(f.body, count);
  // A dynamic size (the iteration count T of a saving loop, SizeVar::param == -1) is read
  // through its name wherever an operation evaluates a size expression that mentions it: such
  // a mention is a use of T's variable, so that T is not taken for dead while an extent needs
  // it. (Types alone do not count: the stacks' types name T but are bound with it.)
  bool dynamic = false;
  for (const auto& sv : f.size_vars) dynamic = dynamic || sv.param == -1;
  if (dynamic) {
    for_each_size(f.body, [&](const SizeExpr& e) {
      for (const auto& name : e.vars()) {
        for (const auto& sv : f.size_vars) {
          if (sv.param == -1 && sv.name == name) count(sv.var);
        }
      }
    });
  }
  return counts;
}

}  // namespace cot::ir
