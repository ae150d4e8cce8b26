#include "opt/transposed_cse.h"

#include <algorithm>
#include <numeric>
#include <span>
#include <utility>
#include <vector>

#include "ir/printer.h"
#include "ir/uses.h"
#include "opt/alpha_equal.h"
#include "opt/dynamic_sizes.h"
#include "opt/erase_marked.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

constexpr size_t kMaxRank = 4;  // at most 4! = 24 orders tried per pair

// A generator of scalars (its result's rank is its number of indices), not a dynamic size.
const ir::GenOp* scalar_generator(const ir::Function& f, const ir::Stmt& s) {
  const auto* g = s.as<ir::GenOp>();
  if (g == nullptr || s.results.size() != 1 || g->ivars.empty() || g->ivars.size() > kMaxRank) {
    return nullptr;
  }
  const Type& t = f.type_of(s.results[0]);
  if (t.is_tuple || t.shape.size() != g->ivars.size() || is_dynamic_size(f, s.results[0])) {
    return nullptr;
  }
  return g;
}

// Whether b's body equals a's with b's index k renamed to a's index p[k].
bool equal_permuted(const ir::Function& f, const ir::GenOp& a, const ir::GenOp& b,
                    const std::vector<size_t>& p) {
  for (size_t k = 0; k < p.size(); ++k) {
    if (!(b.ivars[k].extent == a.ivars[p[k]].extent)) return false;
  }
  Substitution rename;
  for (size_t k = 0; k < p.size(); ++k) rename[b.ivars[k].var] = ir::Atom::of(a.ivars[p[k]].var);
  ir::Block renamed = b.body;
  substitute_uses(renamed, rename);
  return alpha_equal_blocks(f, a.body, renamed);
}

// Calls fn on every read of `v` in `stmts` (nested regions included).
template <class Stmts, class Fn>
void for_each_read(Stmts& stmts, ir::VarId v, Fn&& fn) {
  for (auto& s : stmts) {
    if (auto* ix = s.template as<ir::IndexOp>();
        ix != nullptr && ix->tensor.is_var && ix->tensor.var == v) {
      fn(*ix);
    }
    ir::for_each_region(s, [&](auto& r) { for_each_read(r.stmts, v, fn); });
  }
}

class TransposedCse {
 public:
  TransposedCse(ir::Function& f, bool check) : f_(f), check_(check), uses_(ir::use_counts(f)) {
    count_element_reads(f.body);
  }

  void block(ir::Block& b) {
    const size_t mark = scope_.size();
    std::vector<bool> drop(b.stmts.size(), false);
    for (size_t k = 0; k < b.stmts.size(); ++k) {
      ir::Stmt& s = b.stmts[k];
      ir::for_each_region(s, [&](ir::Block& r) { block(r); });
      const ir::GenOp* g = scalar_generator(f_, s);
      if (g == nullptr) continue;
      if (element_reads_only(b, k) && share(b, k, *g)) {
        drop[k] = true;
        changed_ = true;
        continue;
      }
      scope_.push_back(&s);
    }
    scope_.resize(mark);  // before the block's statements move
    if (check_) return;
    erase_marked(b, drop);
  }

  const std::optional<std::pair<const ir::Stmt*, const ir::Stmt*>>& violation() const {
    return violation_;
  }
  // Whether a generator was shared (its reads redirected and it dropped).
  bool changed() const { return changed_; }

 private:
  // Every use of statement k's result is a read of one element.
  bool element_reads_only(const ir::Block& b, size_t k) const {
    const auto v = static_cast<size_t>(b.stmts[k].results[0]);
    return element_reads_.at(v) > 0 && element_reads_.at(v) == uses_.at(v);
  }
  void count_element_reads(const ir::Block& b) {
    element_reads_.resize(uses_.size(), 0);
    for (const ir::Stmt& s : b.stmts) {
      if (const auto* ix = s.as<ir::IndexOp>(); ix != nullptr && ix->tensor.is_var) {
        const Type& t = f_.type_of(ix->tensor.var);
        if (!t.is_tuple && ix->indices.size() == t.shape.size()) {
          ++element_reads_.at(static_cast<size_t>(ix->tensor.var));
        }
      }
      ir::for_each_region(s, [&](const ir::Block& r) { count_element_reads(r); });
    }
  }

  // Finds a dominating generator equal to statement k's up to a non-identity order of the
  // indices; rewrites the reads of k's result into reads of it.
  bool share(ir::Block& b, size_t k, const ir::GenOp& g) {
    const ir::Stmt& s = b.stmts[k];
    const Type& t = f_.type_of(s.results[0]);
    for (const ir::Stmt* c : scope_) {
      const ir::GenOp& a = *c->as<ir::GenOp>();
      if (a.ivars.size() != g.ivars.size() || a.body.stmts.size() != g.body.stmts.size() ||
          f_.type_of(c->results[0]).elem != t.elem) {
        continue;  // (a cheap filter before the renamed copies)
      }
      std::vector<size_t> p(g.ivars.size());
      std::iota(p.begin(), p.end(), size_t{0});
      while (std::next_permutation(p.begin(), p.end())) {  // skips the identity
        if (!equal_permuted(f_, a, g, p)) continue;
        if (check_) {
          if (!violation_) violation_ = std::make_pair(c, &s);
          return false;
        }
        const ir::VarId from = s.results[0], to = c->results[0];
        auto later = std::span(b.stmts).subspan(k + 1);
        for_each_read(later, from, [&](ir::IndexOp& ix) {
          std::vector<ir::IndexExpr> moved(ix.indices.size());
          for (size_t d = 0; d < p.size(); ++d) moved[p[d]] = std::move(ix.indices[d]);
          ix.indices = std::move(moved);
          ix.tensor = ir::Atom::of(to);
        });
        for (std::vector<int>* counts : {&uses_, &element_reads_}) {
          counts->at(static_cast<size_t>(to)) += counts->at(static_cast<size_t>(from));
          counts->at(static_cast<size_t>(from)) = 0;
        }
        return true;
      }
    }
    return false;
  }

  ir::Function& f_;
  bool check_;
  std::vector<int> uses_;
  std::vector<int> element_reads_;      // reads of one whole element, per variable
  std::vector<const ir::Stmt*> scope_;  // dominating generators, innermost last
  std::optional<std::pair<const ir::Stmt*, const ir::Stmt*>> violation_;
  bool changed_ = false;
};

}  // namespace

PassResult share_transposed_generators(const ir::Program&, const ir::Function& f) {
  ir::Function g = f;
  TransposedCse cse(g, /*check=*/false);
  cse.block(g.body);
  const bool changed = cse.changed();
  return {std::move(g), changed};
}

std::optional<std::string> transposed_cse_postcondition(const ir::Program& program,
                                                        const ir::Function& f) {
  ir::Function g = f;  // the walk takes a mutable function; check mode changes nothing
  TransposedCse c(g, /*check=*/true);
  c.block(g.body);
  if (!c.violation()) return std::nullopt;
  return "the generator `" + ir::print_stmt(program, g, *c.violation()->second) +
         "` is the dominating `" + ir::print_stmt(program, g, *c.violation()->first) +
         "` with its indices in another order";
}

}  // namespace cot::opt
