#include "opt/dynamic_sizes.h"

#include <unordered_set>

#include "ir/regions.h"

namespace cot::opt {
namespace {

void collect_results(const ir::Block& b, std::unordered_set<ir::VarId>& out) {
  ir::for_each_stmt(b, [&](const ir::Stmt& s) { out.insert(s.results.begin(), s.results.end()); });
}

// The dynamic trip counts of saving loops: the result after a saving loop's states.
void collect_saving_counts(const ir::Block& b, std::unordered_set<ir::VarId>& out) {
  ir::for_each_stmt(b, [&](const ir::Stmt& s) {
    if (const auto* l = s.as<ir::LoopOp>(); l != nullptr && l->saves_states) {
      const size_t n = l->state.size();
      if (s.results.size() > n) out.insert(s.results[n]);
    }
  });
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

bool prune_dynamic_sizes(ir::Function& f) {
  bool any = false;
  for (const auto& sv : f.size_vars) any = any || sv.param < 0;
  if (!any) return false;
  std::unordered_set<ir::VarId> bound;
  collect_results(f.body, bound);
  return std::erase_if(f.size_vars, [&](const ir::SizeVar& sv) {
           return sv.param < 0 && bound.count(sv.var) == 0;
         }) > 0;
}

}  // namespace cot::opt
