#include "opt/bindings.h"

#include "ir/binders.h"
#include "opt/static_cost.h"

namespace cot::opt {

void collect_bound(const ir::Stmt& s, std::unordered_set<ir::VarId>& out) {
  ir::for_each_binder(s, [&](ir::VarId v) { out.insert(v); });
}

void collect_bound(const ir::Block& b, std::unordered_set<ir::VarId>& out) {
  ir::for_each_binder(b, [&](ir::VarId v) { out.insert(v); });
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
