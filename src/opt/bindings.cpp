#include "opt/bindings.h"

#include <type_traits>
#include <variant>

#include "ir/regions.h"
#include "opt/static_cost.h"

namespace cot::opt {

void collect_bound(const ir::Stmt& s, std::unordered_set<ir::VarId>& out) {
  out.insert(s.results.begin(), s.results.end());
  std::visit(
      [&](const auto& o) {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, ir::GenOp> || std::is_same_v<T, ir::ReduceOp> ||
                      std::is_same_v<T, ir::AccumOp>) {
          for (const auto& iv : o.ivars) out.insert(iv.var);
        } else if constexpr (std::is_same_v<T, ir::LoopOp>) {
          out.insert(o.state.begin(), o.state.end());
          if (o.iter >= 0) out.insert(o.iter);
        }
      },
      s.op);
  ir::for_each_region(s, [&](const ir::Block& r) { collect_bound(r, out); });
}

void collect_bound(const ir::Block& b, std::unordered_set<ir::VarId>& out) {
  for (const auto& s : b.stmts) collect_bound(s, out);
}

std::vector<ir::VarId> free_uses(const ir::Stmt& s) {
  std::unordered_set<ir::VarId> inner;
  collect_bound(s, inner);
  std::vector<ir::VarId> out;
  for (ir::VarId v : stmt_uses(s)) {
    if (inner.count(v) == 0) out.push_back(v);
  }
  return out;
}

}  // namespace cot::opt
