#include "opt/if_merge.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/clone.h"
#include "ir/regions.h"
#include "opt/fold_literal_choices.h"
#include "opt/static_cost.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

using ir::Atom;
using ir::Block;
using ir::Stmt;
using ir::VarId;
using VarSet = std::unordered_set<VarId>;

// The dependent statements copied into both branches: at most this many, nested included.
constexpr size_t kMaxCopiedStmts = 200;

const ir::IfOp* if_on_var(const Stmt& s) {
  const auto* i = s.as<ir::IfOp>();
  return i != nullptr && i->cond.is_var ? i : nullptr;
}

bool uses_any(const Stmt& s, const VarSet& vars) {
  for (VarId v : stmt_uses(s)) {
    if (vars.count(v) != 0) return true;
  }
  return false;
}

// Statements, nested ones included; sets `saving` when one is a saving loop.
size_t count_stmts(const Block& b, bool& saving) {
  size_t n = 0;
  for (const auto& s : b.stmts) {
    ++n;
    if (const auto* l = s.as<ir::LoopOp>(); l != nullptr && l->saves_states) saving = true;
    ir::for_each_region(s, [&](const Block& r) { n += count_stmts(r, saving); });
  }
  return n;
}

// Variables bound at the top level of a block.
VarSet bound_at_top(const Block& b) {
  VarSet out;
  for (const auto& s : b.stmts) out.insert(s.results.begin(), s.results.end());
  return out;
}

// How two ifs on one condition at positions i < j of a block merge: which statements between
// them depend on the first (copied into the branches); nullopt when they do not merge.
struct MergePlan {
  std::vector<bool> dependent;  // per statement between i and j
};
std::optional<MergePlan> plan_merge(const ir::Function& f, const Block& b, size_t i, size_t j) {
  MergePlan plan;
  VarSet from_first(b.stmts[i].results.begin(), b.stmts[i].results.end());
  Block copied;  // for counting
  bool any_dependent = false, dependent_may_fail = false, moved_past_may_fail = false;
  bool first_may_fail = may_fail(f, b.stmts[i]);
  for (size_t k = i + 1; k < j; ++k) {
    const Stmt& s = b.stmts[k];
    const bool dep = uses_any(s, from_first);
    plan.dependent.push_back(dep);
    if (dep) {
      from_first.insert(s.results.begin(), s.results.end());
      copied.stmts.push_back(s);
      any_dependent = true;
      dependent_may_fail = dependent_may_fail || may_fail(f, s);
    } else if (may_fail(f, s)) {
      // S1 and the dependent statements before it now run after it.
      moved_past_may_fail = true;
    }
  }
  if ((first_may_fail || dependent_may_fail) && moved_past_may_fail) return std::nullopt;
  if (any_dependent) {
    bool saving = false;
    if (count_stmts(copied, saving) > kMaxCopiedStmts || saving) return std::nullopt;
  }
  return plan;
}

class IfMerger {
 public:
  IfMerger(ir::Function& f, bool check_only) : f_(f), check_only_(check_only) {}

  void run() { block(f_.body, {}); }
  const std::optional<std::string>& found() const { return found_; }

 private:
  // An earlier `if c` whose results are known inside later branches on c.
  struct KnownIf {
    VarId cond;
    const Stmt* stmt;
  };

  bool fire(const std::string& what) {
    if (!found_) found_ = what;
    return !check_only_;
  }

  void block(Block& b, std::vector<KnownIf> known) {
    merge_pairs(b);
    absorb_operations(b);
    for (auto& s : b.stmts) {
      if (auto* i = s.as<ir::IfOp>(); i != nullptr && i->cond.is_var) {
        branch(i->then_branch, i->cond.var, true, known);
        branch(i->else_branch, i->cond.var, false, known);
        known.push_back(KnownIf{i->cond.var, &s});
        continue;
      }
      ir::for_each_region(s, [&](Block& r) { block(r, known); });
    }
  }

  // A branch of `if c` taken when c == value: c and the known results of earlier ifs on c
  // become what they are there; then the ifs and selects that became constant fold.
  void branch(Block& br, VarId c, bool value, const std::vector<KnownIf>& known) {
    Substitution there{{c, Atom::boolean(value)}};
    for (const auto& k : known) {
      if (k.cond != c) continue;
      const auto& op = *k.stmt->as<ir::IfOp>();
      const Block& taken = value ? op.then_branch : op.else_branch;
      const VarSet local = bound_at_top(taken);
      for (size_t r = 0; r < k.stmt->results.size(); ++r) {
        const Atom& a = taken.results[r];
        if (!a.is_var || local.count(a.var) == 0) there[k.stmt->results[r]] = a;
      }
    }
    VarSet names;
    for (const auto& [v, a] : there) names.insert(v);
    bool reads = false;
    for (const auto& s : br.stmts) reads = reads || uses_any(s, names);
    for (const auto& a : br.results) reads = reads || (a.is_var && names.count(a.var) != 0);
    if (reads && fire("a branch of an if on " + f_.vars[static_cast<size_t>(c)].name +
                      " reads a value known there")) {
      substitute_uses(br, there);
      Substitution folded;
      fold_literal_choices(br, folded, FoldSelects::Yes);
      for (auto& [from, to] : folded) {
        while (to.is_var) {
          auto it = folded.find(to.var);
          if (it == folded.end()) break;
          to = it->second;
        }
      }
      if (!folded.empty()) substitute_uses(br, folded);
    }
    // Inside the branch, the ifs on c were folded; the known ifs still hold for other conditions.
    block(br, known);
  }

  // A real primitive whose operands are all results of one if (or literals), one of them a
  // literal in some branch, moves into both branches, where simplify folds it: the merged
  // adjoint contributions `(a, b) = if c then {(A, 0.0)} else {(0.0, B)}; a + b` become
  // `if c then {A + 0.0} else {0.0 + B}`, then `if c then {A} else {B}`. Each branch evaluates
  // it once, as the statement did, so the op count never grows.
  void absorb_operations(Block& b) {
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      if (b.stmts[i].as<ir::IfOp>() == nullptr) continue;
      std::unordered_map<VarId, size_t> result_of;
      for (size_t r = 0; r < b.stmts[i].results.size(); ++r) result_of[b.stmts[i].results[r]] = r;
      for (size_t k = i + 1; k < b.stmts.size(); ++k) {
        const auto* p = b.stmts[k].as<ir::PrimOp>();
        if (p == nullptr || b.stmts[k].results.size() != 1 ||
            !f_.type_of(b.stmts[k].results[0]).is_scalar() ||
            !is_real(f_.type_of(b.stmts[k].results[0]).elem)) {
          continue;
        }
        const auto& op = *b.stmts[i].as<ir::IfOp>();
        bool ours = true, folds = false;
        for (const auto& a : p->args) {
          if (!a.is_var) continue;
          auto it = result_of.find(a.var);
          if (it == result_of.end()) {
            ours = false;
            break;
          }
          for (const Block* br : {&op.then_branch, &op.else_branch}) {
            folds = folds || !br->results[it->second].is_var;
          }
        }
        if (!ours || !folds || !fire("an operation on the results of an if folds in a branch")) {
          continue;
        }
        Stmt moved = std::move(b.stmts[k]);
        b.stmts.erase(b.stmts.begin() + static_cast<std::ptrdiff_t>(k));
        auto& target = *b.stmts[i].as<ir::IfOp>();
        for (Block* br : {&target.then_branch, &target.else_branch}) {
          ir::PrimOp copy = *moved.as<ir::PrimOp>();
          for (auto& a : copy.args) {
            if (a.is_var) a = br->results[result_of.at(a.var)];
          }
          // Copied before new_var grows the table.
          std::string name = f_.vars[static_cast<size_t>(moved.results[0])].name;
          Type type = f_.type_of(moved.results[0]);
          const VarId v = f_.new_var(std::move(name), std::move(type));
          br->stmts.push_back(Stmt{{v}, std::move(copy), moved.span});
          br->results.push_back(Atom::of(v));
        }
        result_of[moved.results[0]] = b.stmts[i].results.size();
        b.stmts[i].results.push_back(moved.results[0]);
        --k;  // the statement at k is the next one now
      }
    }
  }

  // Merges pairs of ifs on one condition in `b` until none merges.
  void merge_pairs(Block& b) {
    for (size_t i = 0; i < b.stmts.size(); ++i) {
      const auto* first = if_on_var(b.stmts[i]);
      if (first == nullptr) continue;
      size_t j = i + 1;
      while (j < b.stmts.size()) {
        const auto* second = if_on_var(b.stmts[j]);
        if (second != nullptr && second->cond.var == first->cond.var) break;
        ++j;
      }
      if (j == b.stmts.size()) continue;
      auto plan = plan_merge(f_, b, i, j);
      if (!plan) continue;
      if (!fire("two ifs on " + f_.vars[static_cast<size_t>(first->cond.var)].name +
                " in one block can merge")) {
        continue;
      }
      merge(b, i, j, *plan);
      i = static_cast<size_t>(-1);  // the merged if may merge again: rescan
    }
  }

  void merge(Block& b, size_t i, size_t j, const MergePlan& plan) {
    Stmt first = std::move(b.stmts[i]);
    Stmt second = std::move(b.stmts[j]);
    Block dependent;
    std::vector<Stmt> before;  // the statements between that stay before the merged if
    for (size_t k = i + 1; k < j; ++k) {
      if (plan.dependent[k - i - 1]) {
        dependent.stmts.push_back(std::move(b.stmts[k]));
      } else {
        before.push_back(std::move(b.stmts[k]));
      }
    }
    std::vector<VarId> dep_results;
    for (const auto& s : dependent.stmts) {
      for (VarId v : s.results) {
        dep_results.push_back(v);
        dependent.results.push_back(Atom::of(v));
      }
    }
    auto& op1 = *first.as<ir::IfOp>();
    auto& op2 = *second.as<ir::IfOp>();
    ir::IfOp merged{op1.cond, {}, {}};
    auto build = [&](Block& b1, Block& b2, Block& out) {
      // b1; a copy of the dependent statements reading b1's values; b2 reading both.
      ir::CloneMap map;
      for (size_t k = 0; k < first.results.size(); ++k) map.atoms[first.results[k]] = b1.results[k];
      Block copy = ir::clone_block(f_, dependent, f_, map);
      Substitution into_b2;
      for (size_t k = 0; k < first.results.size(); ++k) into_b2[first.results[k]] = b1.results[k];
      for (size_t k = 0; k < dep_results.size(); ++k) into_b2[dep_results[k]] = copy.results[k];
      substitute_uses(b2, into_b2);
      for (auto& s : b1.stmts) out.stmts.push_back(std::move(s));
      for (auto& s : copy.stmts) out.stmts.push_back(std::move(s));
      for (auto& s : b2.stmts) out.stmts.push_back(std::move(s));
      out.results = b1.results;
      out.results.insert(out.results.end(), copy.results.begin(), copy.results.end());
      out.results.insert(out.results.end(), b2.results.begin(), b2.results.end());
    };
    build(op1.then_branch, op2.then_branch, merged.then_branch);
    build(op1.else_branch, op2.else_branch, merged.else_branch);
    std::vector<VarId> results = first.results;
    results.insert(results.end(), dep_results.begin(), dep_results.end());
    results.insert(results.end(), second.results.begin(), second.results.end());

    std::vector<Stmt> out;
    out.reserve(b.stmts.size());
    for (size_t k = 0; k < i; ++k) out.push_back(std::move(b.stmts[k]));
    for (auto& s : before) out.push_back(std::move(s));
    out.push_back(Stmt{std::move(results), std::move(merged), second.span});
    for (size_t k = j + 1; k < b.stmts.size(); ++k) out.push_back(std::move(b.stmts[k]));
    b.stmts = std::move(out);
  }

  ir::Function& f_;
  bool check_only_;
  std::optional<std::string> found_;
};

}  // namespace

PassResult merge_ifs(const ir::Program& program, const ir::Function& f) {
  (void)program;
  ir::Function out = f;
  bool changed = false;
  // A rewrite can enable another in a block already visited (a branch's result that became a
  // literal, an operation moved into a branch): rounds until none fires. Outside check mode a
  // rule that fires (found) is applied.
  for (int round = 0; round < 8; ++round) {
    IfMerger merger(out, false);
    merger.run();
    if (!merger.found()) break;
    changed = true;
  }
  return {std::move(out), changed};
}

std::optional<std::string> if_merge_postcondition(const ir::Program& program,
                                                  const ir::Function& f) {
  (void)program;
  ir::Function copy = f;
  IfMerger checker(copy, true);
  checker.run();
  return checker.found();
}

}  // namespace cot::opt
