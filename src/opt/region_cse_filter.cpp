// Region CSE's quick test (region_cse_internal.h, `may_share`): whether a later region computes
// a candidate's value at all, decided by value numbers before a try copies the function, places
// the probes and runs CSE over all of it. On the derivatives of large programs nearly every
// candidate fails (HT's Jacobian: a hundred per search, every round), and a failed try cost a
// copy and a CSE of thousands of statements (docs/design.md §8.1, "region-cse tests its
// candidates by value numbers first").
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "opt/alpha_equal.h"
#include "opt/region_cse_internal.h"

namespace cot::opt::region_cse_detail {

namespace {

// The value numbers of the statements of `b` and of its nested blocks.
void collect_numbers(const ir::Block& b, const std::vector<size_t>& vn,
                     std::unordered_set<size_t>& out) {
  for (const ir::Stmt& s : b.stmts) {
    for (ir::VarId r : s.results) out.insert(vn[static_cast<size_t>(r)]);
    ir::for_each_region(s, [&](const ir::Block& inner) { collect_numbers(inner, vn, out); });
  }
}

}  // namespace

bool may_share(const ir::Function& f, const std::vector<size_t>& vn, const Candidate& c) {
  // The walks below are those of the probing, which take mutable IR because the probing
  // changes its copy; here they only read.
  ir::Function& g = const_cast<ir::Function&>(f);
  auto [block, a] = find_stmt(g.body, c.region);
  if (block == nullptr) return false;
  auto at = locate(f, g.body, c);
  if (!at || at->chain.results.empty() || !at->chain.results[0].is_var) return false;
  const ir::VarId value = at->chain.results[0].var;
  // A probe placed in a later region (place_probes) is the chain with R's index variables
  // renamed to the region's; CSE merges a statement of that region into it only if their value
  // numbers are equal.
  for (size_t k = a + 1; k < block->stmts.size(); ++k) {
    bool found = false;
    for_each_index_region(
        block->stmts[k], [&](ir::Stmt& r, const std::vector<ir::IndexVar>& outer) {
          if (found) return;
          const auto maps = mappings(at->ivars, outer, *ir::index_vars_of(r));
          if (maps.empty()) return;
          std::unordered_set<size_t> there;
          collect_numbers(*ir::index_body_of(r), vn, there);
          for (const auto& to : maps) {
            std::unordered_map<ir::VarId, ir::VarId> renamed;
            for (size_t i = 0; i < at->ivars.size(); ++i) renamed[at->ivars[i].var] = to[i];
            const FreeHash free = [&](ir::VarId v) {
              if (auto it = renamed.find(v); it != renamed.end()) return free_var_hash(it->second);
              return v >= 0 && static_cast<size_t>(v) < vn.size() ? vn[static_cast<size_t>(v)]
                                                                  : free_var_hash(v);
            };
            if (there.count(alpha_hash_of_result(f, at->chain, value, free)) != 0) {
              found = true;
              return;
            }
          }
        });
    if (found) return true;
  }
  return false;
}

}  // namespace cot::opt::region_cse_detail
