#include "opt/unswitch.h"

#include <algorithm>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/binders.h"
#include "ir/clone.h"
#include "ir/printer.h"
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

// Bodies larger than this (statements, nested ones included) are not copied, nor regions with
// more paying conditions than this (each split doubles the code; the copies split again).
constexpr size_t kMaxCopiedStmts = 2000;
constexpr size_t kMaxConditions = 3;

// The body of a region statement R and the variables that vary per point or iteration; nullptr
// for statements that are not regions unswitching splits.
const Block* region_body(const Stmt& s, VarSet& variant) {
  auto add = [&](const std::vector<ir::IndexVar>& ivars) {
    for (const auto& iv : ivars) variant.insert(iv.var);
  };
  if (const auto* g = s.as<ir::GenOp>()) {
    add(g->ivars);
    return &g->body;
  }
  if (const auto* r = s.as<ir::ReduceOp>()) {
    add(r->ivars);
    return &r->body;
  }
  if (const auto* a = s.as<ir::AccumOp>()) {
    add(a->ivars);
    return &a->body;
  }
  if (const auto* l = s.as<ir::LoopOp>(); l != nullptr && !l->is_while && !l->saves_states) {
    variant.insert(l->state.begin(), l->state.end());
    if (l->iter >= 0) variant.insert(l->iter);
    return &l->body;
  }
  return nullptr;
}

// Every variable bound inside the block (statement results, index variables, loop states and
// counters, nested regions included); counts the statements and notes saving loops.
struct Inside {
  VarSet bound;
  size_t stmts = 0;
  bool saving_loop = false;
};
void collect_inside(const Block& b, Inside& in) {
  for (const auto& s : b.stmts) {
    ++in.stmts;
    in.bound.insert(s.results.begin(), s.results.end());
    ir::for_each_direct_binder(s.op, [&](VarId v) { in.bound.insert(v); });
    if (const auto* l = s.as<ir::LoopOp>(); l != nullptr && l->saves_states) in.saving_loop = true;
    ir::for_each_region(s, [&](const Block& r) { collect_inside(r, in); });
  }
}

bool uses_any(const Stmt& s, const VarSet& vars) {
  for (VarId v : stmt_uses(s)) {
    if (vars.count(v) != 0) return true;
  }
  return false;
}

// Whether a top-level statement of `branch` costs work and depends on nothing in `variant`
// (statements of the branch that do are added to a local copy). Loops never move, so they do
// not count.
bool has_invariant_work(const ir::Function& f, const Block& branch, VarSet variant) {
  for (const auto& s : branch.stmts) {
    if (s.as<ir::LoopOp>() != nullptr || uses_any(s, variant)) {
      variant.insert(s.results.begin(), s.results.end());
      continue;
    }
    if (!is_cost_free(f, s)) return true;
  }
  return false;
}

// The conditions of the ifs in `b` (a block of R's body, directly or through gen/reduce/accum
// bodies and branches of ifs on invariant conditions) that are bound outside R and have a
// branch with invariant work, in order of appearance; `variant` grows with what varies in R as
// the walk goes.
void paying_conditions(const ir::Function& f, const Block& b, VarSet& variant, const VarSet& inside,
                       std::vector<VarId>& found) {
  for (const auto& s : b.stmts) {
    if (s.as<ir::LoopOp>() != nullptr || uses_any(s, variant)) {
      variant.insert(s.results.begin(), s.results.end());
    }
    if (const auto* i = s.as<ir::IfOp>()) {
      if (!i->cond.is_var || variant.count(i->cond.var) != 0) continue;
      const VarId p = i->cond.var;
      if (inside.count(p) == 0 && std::find(found.begin(), found.end(), p) == found.end() &&
          (has_invariant_work(f, i->then_branch, variant) ||
           has_invariant_work(f, i->else_branch, variant))) {
        found.push_back(p);
      }
      for (const Block* br : {&i->then_branch, &i->else_branch}) {
        paying_conditions(f, *br, variant, inside, found);
      }
      continue;
    }
    const std::vector<ir::IndexVar>* ivars = nullptr;
    const Block* body = nullptr;
    if (const auto* g = s.as<ir::GenOp>()) {
      ivars = &g->ivars;
      body = &g->body;
    } else if (const auto* r = s.as<ir::ReduceOp>()) {
      ivars = &r->ivars;
      body = &r->body;
    } else if (const auto* a = s.as<ir::AccumOp>()) {
      ivars = &a->ivars;
      body = &a->body;
    }
    if (body == nullptr) continue;
    for (const auto& iv : *ivars) variant.insert(iv.var);
    paying_conditions(f, *body, variant, inside, found);
  }
}

// The condition to unswitch the region statement `s` on, if any.
std::optional<VarId> unswitch_condition(const ir::Function& f, const Stmt& s) {
  VarSet variant;
  const Block* body = region_body(s, variant);
  if (body == nullptr) return std::nullopt;
  Inside in;
  collect_inside(*body, in);
  if (in.saving_loop || in.stmts > kMaxCopiedStmts) return std::nullopt;
  in.bound.insert(variant.begin(), variant.end());
  std::vector<VarId> found;
  paying_conditions(f, *body, variant, in.bound, found);
  if (found.empty() || found.size() > kMaxConditions) return std::nullopt;
  return found.front();
}

class Unswitcher {
 public:
  explicit Unswitcher(ir::Function& f) : f_(f) {}

  // Whether a region was split.
  bool changed() const { return changed_; }

  void block(Block& b) {
    std::vector<Stmt> out;
    out.reserve(b.stmts.size());
    for (auto& s : b.stmts) out.push_back(stmt(std::move(s)));
    b.stmts = std::move(out);
  }

 private:
  Stmt stmt(Stmt s) {
    if (auto split = unswitched(s)) return std::move(*split);
    ir::for_each_region(s, [&](Block& r) { block(r); });
    // Splitting a region inside may leave an if of copies that pays here.
    if (auto split = unswitched(s)) return std::move(*split);
    return s;
  }

  // `if p then R[p := true] else R[p := false]`, each copy unswitched again on the conditions
  // left in it; nullopt when R is not to be split.
  std::optional<Stmt> unswitched(const Stmt& s) {
    auto p = unswitch_condition(f_, s);
    if (!p) return std::nullopt;
    changed_ = true;
    ir::IfOp split{Atom::of(*p), specialized(s, *p, true), specialized(s, *p, false)};
    block(split.then_branch);
    block(split.else_branch);
    return Stmt{s.results, std::move(split), s.span};
  }

  // A copy of R (fresh variables) with p := value and the ifs that became constant folded.
  Block specialized(const Stmt& s, VarId p, bool value) {
    Block src;
    src.stmts.push_back(s);
    for (VarId v : s.results) src.results.push_back(Atom::of(v));
    ir::CloneMap map;
    map.atoms[p] = Atom::boolean(value);
    Block copy = ir::clone_block(f_, src, f_, map);
    Substitution renamed;
    fold_literal_choices(copy, renamed, FoldSelects::No);
    // Nested folded ifs rename to results of other folded ifs: resolve the chains.
    for (auto& [from, to] : renamed) {
      while (to.is_var) {
        auto it = renamed.find(to.var);
        if (it == renamed.end()) break;
        to = it->second;
      }
    }
    substitute_uses(copy, renamed);
    return copy;
  }

  ir::Function& f_;
  bool changed_ = false;
};

std::optional<std::string> check_block(const ir::Program& program, const ir::Function& f,
                                       const Block& b) {
  for (const auto& s : b.stmts) {
    if (auto p = unswitch_condition(f, s)) {
      return "the region " + ir::print_stmt(program, f, s) + " branches on " +
             f.vars[static_cast<size_t>(*p)].name + ", bound outside it, around invariant work";
    }
    std::optional<std::string> found;
    ir::for_each_region(s, [&](const Block& r) {
      if (!found) found = check_block(program, f, r);
    });
    if (found) return found;
  }
  return std::nullopt;
}

}  // namespace

PassResult unswitch_loops(const ir::Program& program, const ir::Function& f) {
  (void)program;
  ir::Function out = f;
  Unswitcher unswitcher(out);
  unswitcher.block(out.body);
  const bool changed = unswitcher.changed();
  return {std::move(out), changed};
}

std::optional<std::string> unswitch_postcondition(const ir::Program& program,
                                                  const ir::Function& f) {
  return check_block(program, f, f.body);
}

}  // namespace cot::opt
