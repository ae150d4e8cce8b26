#include "ir/uses.h"

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
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, PrimOp> || std::is_same_v<T, CallOp>) {
          for (const auto& a : o.args) atom_use(a, use);
        } else if constexpr (std::is_same_v<T, IndexOp>) {
          atom_use(o.tensor, use);
          for (const auto& ix : o.indices) {
            if (ix.is_affine)
              affine_use(ix.affine, use);
            else
              atom_use(ix.computed, use);
          }
        } else if constexpr (std::is_same_v<T, GuardOp>) {
          pred_use(o.pred, use);
        } else if constexpr (std::is_same_v<T, LoopOp>) {
          for (const auto& a : o.init) atom_use(a, use);
          if (!o.is_while) atom_use(o.count, use);
        } else if constexpr (std::is_same_v<T, IfOp>) {
          atom_use(o.cond, use);
        } else if constexpr (std::is_same_v<T, TupleOp>) {
          for (const auto& a : o.elems) atom_use(a, use);
        } else if constexpr (std::is_same_v<T, ProjOp>) {
          atom_use(o.tuple, use);
        }
        // GenOp, ReduceOp, AccumOp, SizeOp read nothing directly (extents are size
        // expressions over size-variable names).
      },
      op);
}

void for_each_use(const Block& block, const std::function<void(VarId)>& use) {
  for (const auto& s : block.stmts) {
    for_each_direct_use(s.op, use);
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, GenOp> || std::is_same_v<T, ReduceOp> ||
                        std::is_same_v<T, GuardOp> || std::is_same_v<T, AccumOp>) {
            for_each_use(o.body, use);
          } else if constexpr (std::is_same_v<T, LoopOp>) {
            if (o.is_while) for_each_use(o.cond, use);
            for_each_use(o.body, use);
          } else if constexpr (std::is_same_v<T, IfOp>) {
            for_each_use(o.then_branch, use);
            for_each_use(o.else_branch, use);
          }
        },
        s.op);
  }
  for (const auto& a : block.results) atom_use(a, use);
}

std::vector<int> use_counts(const Function& f) {
  std::vector<int> counts(f.vars.size(), 0);
  for_each_use(f.body, [&](VarId v) {
    if (v >= 0 && static_cast<size_t>(v) < counts.size()) ++counts[static_cast<size_t>(v)];
  });
  return counts;
}

}  // namespace cot::ir
