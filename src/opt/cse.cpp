#include "opt/cse.h"

#include <algorithm>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/printer.h"
#include "opt/alpha_equal.h"
#include "opt/dynamic_sizes.h"
#include "opt/erase_marked.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

// Walks the region tree in program order with a scoped table of the statements that dominate
// the current point, keyed by alpha_hash. In `check` mode it only looks for a statement equal
// to a dominating one (the postcondition); otherwise it merges such statements.
class Cse {
 public:
  Cse(ir::Function& f, bool check) : f_(f), check_(check) {}

  void block(ir::Block& b) {
    const size_t mark = scope_.size();
    std::vector<bool> drop(b.stmts.size(), false);
    for (size_t k = 0; k < b.stmts.size(); ++k) {
      ir::Stmt& s = b.stmts[k];
      if (!check_) substitute(s);
      for_each_region(s, [&](ir::Block& r) { block(r); });
      const size_t h = alpha_hash(f_, s);
      const ir::Stmt* same = nullptr;
      auto it = table_.find(h);
      if (it != table_.end()) {
        for (const ir::Stmt* c : it->second) {
          if (alpha_equal(f_, *c, s)) {
            same = c;
            break;
          }
        }
      }
      // A statement binding a dynamic size stays: types name that size, not the variable.
      if (same != nullptr && std::any_of(s.results.begin(), s.results.end(),
                                         [&](ir::VarId v) { return is_dynamic_size(f_, v); })) {
        same = nullptr;
      }
      if (same != nullptr) {
        if (check_) {
          if (!violation_) violation_ = std::make_pair(same, &s);
          continue;
        }
        for (size_t r = 0; r < s.results.size(); ++r) {
          subst_[s.results[r]] = ir::Atom::of(same->results[r]);
        }
        drop[k] = true;
        changed_ = true;
        continue;
      }
      table_[h].push_back(&s);
      scope_.push_back(h);
    }
    // Leave the scope before the block's statements move.
    while (scope_.size() > mark) {
      auto& bucket = table_[scope_.back()];
      bucket.pop_back();
      if (bucket.empty()) table_.erase(scope_.back());
      scope_.pop_back();
    }
    if (check_) return;
    substitute_results(b, subst_);
    erase_marked(b, drop);
  }

  const std::optional<std::pair<const ir::Stmt*, const ir::Stmt*>>& violation() const {
    return violation_;
  }
  // Whether a statement was merged into a dominating one (the renaming follows from those).
  bool changed() const { return changed_; }

 private:
  void substitute(ir::Stmt& s) { substitute_uses(s, subst_); }

  ir::Function& f_;
  bool check_;
  Substitution subst_;
  std::unordered_map<size_t, std::vector<const ir::Stmt*>> table_;
  std::vector<size_t> scope_;  // hashes of the entries added, innermost last
  std::optional<std::pair<const ir::Stmt*, const ir::Stmt*>> violation_;
  bool changed_ = false;
};

}  // namespace

PassResult eliminate_common_subexpressions(const ir::Program& program, const ir::Function& f) {
  return eliminate_common_subexpressions(program, ir::Function(f));
}

PassResult eliminate_common_subexpressions(const ir::Program&, ir::Function&& f) {
  ir::Function g = std::move(f);
  Cse cse(g, /*check=*/false);
  cse.block(g.body);
  const bool changed = cse.changed();
  return {std::move(g), changed};
}

std::optional<std::string> cse_postcondition(const ir::Program& program, const ir::Function& f) {
  ir::Function g = f;  // the walk takes a mutable function; check mode changes nothing
  Cse c(g, /*check=*/true);
  c.block(g.body);
  if (!c.violation()) return std::nullopt;
  return "the statement `" + ir::print_stmt(program, g, *c.violation()->second) +
         "` computes what the dominating `" + ir::print_stmt(program, g, *c.violation()->first) +
         "` computes";
}

}  // namespace cot::opt
