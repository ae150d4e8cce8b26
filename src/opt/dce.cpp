#include "opt/dce.h"

#include <algorithm>
#include <unordered_set>
#include <vector>

#include "ir/printer.h"
#include "ir/uses.h"
#include "opt/alpha_equal.h"
#include "opt/dynamic_sizes.h"
#include "opt/static_cost.h"

namespace cot::opt {
namespace {

using ir::VarId;

class Dce {
 public:
  explicit Dce(ir::Function& f) : f_(f) {}

  // One sweep over the region tree; true when it changed something.
  bool sweep() {
    uses_ = ir::use_counts(f_);
    // Computed dynamic sizes are used by name in types, which use_counts does not see.
    for (VarId v : computed_dynamic_sizes(f_)) ++uses_[static_cast<size_t>(v)];
    changed_ = false;
    block(f_.body);
    return changed_;
  }

 private:
  bool used(VarId v) const { return uses_[static_cast<size_t>(v)] > 0; }
  void unuse(VarId v) {
    if (v >= 0 && static_cast<size_t>(v) < uses_.size() && uses_[static_cast<size_t>(v)] > 0) {
      --uses_[static_cast<size_t>(v)];
    }
  }
  void unuse(const ir::Atom& a) {
    if (a.is_var) unuse(a.var);
  }
  void unuse_stmt(const ir::Stmt& s) {
    ir::for_each_direct_use(s.op, [&](VarId v) { unuse(v); });
    for_each_region(s,
                    [&](const ir::Block& b) { ir::for_each_use(b, [&](VarId v) { unuse(v); }); });
  }
  bool dead(const ir::Stmt& s) const {
    return std::none_of(s.results.begin(), s.results.end(), [&](VarId v) { return used(v); });
  }

  void block(ir::Block& b) {
    std::vector<bool> drop(b.stmts.size(), false);
    std::vector<std::vector<ir::Stmt>> before(b.stmts.size());  // statements to insert
    for (size_t k = b.stmts.size(); k-- > 0;) {
      ir::Stmt& s = b.stmts[k];
      if (dead(s)) {
        unuse_stmt(s);
        drop[k] = true;
        changed_ = true;
        if (const auto* l = s.as<ir::LoopOp>(); l != nullptr && l->saves_states) {
          const VarId t = s.results[l->state.size()];
          std::erase_if(f_.size_vars,
                        [&](const ir::SizeVar& sv) { return sv.param == -1 && sv.var == t; });
        }
        continue;
      }
      trim(s, before[k]);
      for_each_region(s, [&](ir::Block& r) { block(r); });
    }
    const bool inserts = std::any_of(before.begin(), before.end(),
                                     [](const std::vector<ir::Stmt>& v) { return !v.empty(); });
    if (!inserts && std::find(drop.begin(), drop.end(), true) == drop.end()) return;
    std::vector<ir::Stmt> out;
    out.reserve(b.stmts.size());
    for (size_t k = 0; k < b.stmts.size(); ++k) {
      for (auto& st : before[k]) out.push_back(std::move(st));
      if (!drop[k]) out.push_back(std::move(b.stmts[k]));
    }
    b.stmts = std::move(out);
  }

  // Drops unused results of guards and ifs, and dead state of loops (a saving loop's with its
  // stack); statements to put before s go to `before`.
  void trim(ir::Stmt& s, std::vector<ir::Stmt>& before) {
    if (auto* g = s.as<ir::GuardOp>()) {
      drop_results(s, {&g->body});
    } else if (auto* i = s.as<ir::IfOp>()) {
      drop_results(s, {&i->then_branch, &i->else_branch});
    } else if (auto* l = s.as<ir::LoopOp>()) {
      trim_loop(s, *l);
      if (l->saves_states) stop_saving(s, *l, before);
    }
  }

  // A saving loop whose stacks nothing reads saves for nobody: it becomes a plain loop (a
  // reverse pass that needed none of its states, such as the loop of a comparison's operand,
  // whose cotangent is zero, or one whose body's partials do not read the state). When its
  // count T is read (by the reverse loop), a counted loop's T is max(count, 0), bound before
  // it, and the loop dies if nothing reads its final state. A while loop whose T is read, and
  // a loop whose T a type or extent still names, keep saving.
  void stop_saving(ir::Stmt& s, ir::LoopOp& l, std::vector<ir::Stmt>& before) {
    const size_t n = l.state.size();
    for (size_t k = n + 1; k < s.results.size(); ++k) {
      if (used(s.results[k])) return;
    }
    const VarId t = s.results[n];
    const bool count_read = used(t);
    if (count_read && l.is_while) return;
    auto sv = std::find_if(f_.size_vars.begin(), f_.size_vars.end(),
                           [&](const ir::SizeVar& v) { return v.param == -1 && v.var == t; });
    if (sv == f_.size_vars.end()) return;
    std::vector<VarId> saved(s.results.begin() + static_cast<ptrdiff_t>(n), s.results.end());
    s.results.resize(n);
    l.saves_states = false;
    if (names_size(f_.body, sv->name)) {
      s.results.insert(s.results.end(), saved.begin(), saved.end());
      l.saves_states = true;
      return;
    }
    if (count_read) {
      before.push_back(ir::Stmt{{t}, ir::PrimOp{Prim::Max, {l.count, ir::Atom::i64(0)}}, s.span});
    }
    f_.size_vars.erase(sv);
    changed_ = true;
  }

  // Whether a statement of b binds a value whose type names the size, or ranges over it.
  bool names_size(const ir::Block& b, const std::string& name) const {
    return std::any_of(b.stmts.begin(), b.stmts.end(),
                       [&](const ir::Stmt& s) { return mentions_sizes(f_, s, {name}); });
  }

  void drop_results(ir::Stmt& s, const std::vector<ir::Block*>& bodies) {
    for (size_t r = s.results.size(); r-- > 0;) {
      if (used(s.results[r])) continue;
      s.results.erase(s.results.begin() + static_cast<ptrdiff_t>(r));
      for (ir::Block* b : bodies) {
        unuse(b->results[r]);
        b->results.erase(b->results.begin() + static_cast<ptrdiff_t>(r));
      }
      changed_ = true;
    }
  }

  // The variables of `b` needed to compute its results `roots` (a backward slice; everything
  // a needed statement reads, in its regions too, is needed).
  static std::unordered_set<VarId> needed(const ir::Block& b, const std::vector<ir::Atom>& roots) {
    std::unordered_set<VarId> need;
    for (const auto& a : roots) {
      if (a.is_var) need.insert(a.var);
    }
    for (size_t k = b.stmts.size(); k-- > 0;) {
      const ir::Stmt& s = b.stmts[k];
      if (std::none_of(s.results.begin(), s.results.end(),
                       [&](VarId v) { return need.count(v) > 0; })) {
        continue;
      }
      ir::for_each_direct_use(s.op, [&](VarId v) { need.insert(v); });
      for_each_region(
          s, [&](const ir::Block& r) { ir::for_each_use(r, [&](VarId v) { need.insert(v); }); });
    }
    return need;
  }

  // A state variable is live when its final value or its stack (a saving loop's) is used, or
  // a live one's update or the condition reads it.
  void trim_loop(ir::Stmt& s, ir::LoopOp& l) {
    const size_t n = l.state.size();
    std::vector<bool> live(n, false);
    for (size_t k = 0; k < n; ++k) {
      live[k] = used(s.results[k]) || (l.saves_states && used(s.results[n + 1 + k]));
    }
    if (l.is_while) {
      std::unordered_set<VarId> in_cond;
      ir::for_each_use(l.cond, [&](VarId v) { in_cond.insert(v); });
      for (size_t k = 0; k < n; ++k) live[k] = live[k] || in_cond.count(l.state[k]) > 0;
    }
    for (bool grew = true; grew;) {
      grew = false;
      std::vector<ir::Atom> roots;
      for (size_t k = 0; k < n; ++k) {
        if (live[k]) roots.push_back(l.body.results[k]);
      }
      const auto need = needed(l.body, roots);
      for (size_t k = 0; k < n; ++k) {
        if (!live[k] && need.count(l.state[k]) > 0) live[k] = grew = true;
      }
    }
    if (std::all_of(live.begin(), live.end(), [](bool b) { return b; })) return;
    for (size_t k = n; k-- > 0;) {
      if (live[k]) continue;
      const auto at = static_cast<ptrdiff_t>(k);
      if (l.saves_states) {
        s.results.erase(s.results.begin() + static_cast<ptrdiff_t>(l.state.size() + 1 + k));
      }
      unuse(l.init[k]);
      unuse(l.body.results[k]);
      l.init.erase(l.init.begin() + at);
      l.state.erase(l.state.begin() + at);
      l.body.results.erase(l.body.results.begin() + at);
      s.results.erase(s.results.begin() + at);
    }
    changed_ = true;
  }

  ir::Function& f_;
  std::vector<int> uses_;
  bool changed_ = false;
};

// The first statement (in program order) none of whose results is used.
const ir::Stmt* first_dead(const ir::Block& b, const std::vector<int>& uses) {
  return ir::find_stmt(b, [&](const ir::Stmt& s) {
    return std::none_of(s.results.begin(), s.results.end(),
                        [&](VarId v) { return uses[static_cast<size_t>(v)] > 0; });
  });
}

}  // namespace

PassResult eliminate_dead_code(const ir::Program&, const ir::Function& f) {
  ir::Function g = f;
  Dce dce(g);
  bool changed = false;
  while (dce.sweep()) changed = true;
  return {std::move(g), changed};
}

std::optional<std::string> dce_postcondition(const ir::Program& program, const ir::Function& f) {
  std::vector<int> uses = ir::use_counts(f);
  for (VarId v : computed_dynamic_sizes(f)) ++uses[static_cast<size_t>(v)];  // named by types
  const ir::Stmt* s = first_dead(f.body, uses);
  if (s == nullptr) return std::nullopt;
  return "the statement `" + ir::print_stmt(program, f, *s) + "` has no used result";
}

}  // namespace cot::opt
