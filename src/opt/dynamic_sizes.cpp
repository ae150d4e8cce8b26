#include "opt/dynamic_sizes.h"

#include <type_traits>
#include <unordered_set>

namespace cot::opt {
namespace {

void collect_results(const ir::Block& b, std::unordered_set<ir::VarId>& out) {
  for (const auto& s : b.stmts) {
    out.insert(s.results.begin(), s.results.end());
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, ir::GenOp> || std::is_same_v<T, ir::ReduceOp> ||
                        std::is_same_v<T, ir::GuardOp> || std::is_same_v<T, ir::AccumOp>) {
            collect_results(o.body, out);
          } else if constexpr (std::is_same_v<T, ir::LoopOp>) {
            collect_results(o.cond, out);
            collect_results(o.body, out);
          } else if constexpr (std::is_same_v<T, ir::IfOp>) {
            collect_results(o.then_branch, out);
            collect_results(o.else_branch, out);
          }
        },
        s.op);
  }
}

void collect_saving_counts(const ir::Block& b, std::unordered_set<ir::VarId>& out) {
  for (const auto& s : b.stmts) {
    if (const auto* l = s.as<ir::LoopOp>(); l != nullptr && l->saves_states) {
      const size_t n = l->state.size();
      if (s.results.size() > n) out.insert(s.results[n]);
    }
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, ir::GenOp> || std::is_same_v<T, ir::ReduceOp> ||
                        std::is_same_v<T, ir::GuardOp> || std::is_same_v<T, ir::AccumOp>) {
            collect_saving_counts(o.body, out);
          } else if constexpr (std::is_same_v<T, ir::LoopOp>) {
            collect_saving_counts(o.cond, out);
            collect_saving_counts(o.body, out);
          } else if constexpr (std::is_same_v<T, ir::IfOp>) {
            collect_saving_counts(o.then_branch, out);
            collect_saving_counts(o.else_branch, out);
          }
        },
        s.op);
  }
}

}  // namespace

bool is_dynamic_size(const ir::Function& f, ir::VarId v) {
  for (const auto& sv : f.size_vars) {
    if (sv.param < 0 && sv.var == v) return true;
  }
  return false;
}

void append_dynamic_sizes_bound_by(const ir::Function& f, const ir::Stmt& s,
                                   std::vector<std::string>& names) {
  for (ir::VarId v : s.results) {
    for (const auto& sv : f.size_vars) {
      if (sv.param < 0 && sv.var == v) names.push_back(sv.name);
    }
  }
}

std::unordered_set<ir::VarId> computed_dynamic_sizes(const ir::Function& f) {
  std::unordered_set<ir::VarId> out;
  bool any = false;
  for (const auto& sv : f.size_vars) any = any || sv.param < 0;
  if (!any) return out;
  std::unordered_set<ir::VarId> counts;
  collect_saving_counts(f.body, counts);
  for (const auto& sv : f.size_vars) {
    if (sv.param < 0 && counts.count(sv.var) == 0) out.insert(sv.var);
  }
  return out;
}

void prune_dynamic_sizes(ir::Function& f) {
  bool any = false;
  for (const auto& sv : f.size_vars) any = any || sv.param < 0;
  if (!any) return;
  std::unordered_set<ir::VarId> bound;
  collect_results(f.body, bound);
  std::erase_if(f.size_vars,
                [&](const ir::SizeVar& sv) { return sv.param < 0 && bound.count(sv.var) == 0; });
}

}  // namespace cot::opt
