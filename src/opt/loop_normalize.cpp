#include "opt/loop_normalize.h"

#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/clone.h"
#include "ir/printer.h"
#include "opt/alpha_equal.h"
#include "opt/bindings.h"
#include "opt/substitute.h"

namespace cot::opt {
namespace {

using ir::Atom;
using ir::VarId;

// Whether state component k never changes: the body yields the state itself or its init.
bool invariant_component(const ir::LoopOp& l, size_t k) {
  const Atom& next = l.body.results[k];
  return next == Atom::of(l.state[k]) || next == l.init[k];
}

// The one-hot pattern of (f).4 in a for-loop: the `if` statement's index in the body and e0.
struct OneHot {
  size_t if_index = 0;
  Atom e0;
};

std::optional<OneHot> one_hot(const ir::Stmt& s) {
  const auto* l = s.as<ir::LoopOp>();
  if (l == nullptr || l->is_while || l->saves_states || l->iter < 0) return std::nullopt;
  std::unordered_set<VarId> inside;
  collect_bound(s, inside);
  // c = (t == e0) or (e0 == t), e0 loop-invariant.
  std::unordered_map<VarId, Atom> hot;  // c -> e0
  for (const auto& st : l->body.stmts) {
    const auto* p = st.as<ir::PrimOp>();
    if (p == nullptr || p->prim != Prim::Eq || p->args.size() != 2) continue;
    for (int side = 0; side < 2; ++side) {
      const Atom& t = p->args[static_cast<size_t>(side)];
      const Atom& e0 = p->args[static_cast<size_t>(1 - side)];
      if (t == Atom::of(l->iter) && (!e0.is_var || inside.count(e0.var) == 0)) {
        hot.emplace(st.results[0], e0);
        break;
      }
    }
  }
  if (hot.empty()) return std::nullopt;
  for (size_t q = 0; q < l->body.stmts.size(); ++q) {
    const auto* i = l->body.stmts[q].as<ir::IfOp>();
    if (i == nullptr || !i->cond.is_var || hot.count(i->cond.var) == 0) continue;
    const auto& results = l->body.stmts[q].results;
    bool ok = true, changes = false;
    for (size_t k = 0; k < l->state.size() && ok; ++k) {
      const Atom& next = l->body.results[k];
      if (next == Atom::of(l->state[k])) continue;
      ok = false;
      for (size_t j = 0; j < results.size(); ++j) {
        if (next == Atom::of(results[j]) && i->else_branch.results[j] == Atom::of(l->state[k])) {
          ok = changes = true;
          break;
        }
      }
    }
    if (ok && changes) return OneHot{q, hot.at(i->cond.var)};
  }
  return std::nullopt;
}

class LoopNormalize {
 public:
  explicit LoopNormalize(ir::Function& f) : f_(f) {}

  // Whether a rule applied (state dropped, a loop replaced); the renaming follows from those.
  bool changed() const { return changed_; }

  void block(ir::Block& b) {
    std::vector<ir::Stmt> out;
    out.reserve(b.stmts.size());
    for (auto& s : b.stmts) {
      substitute(s);
      // Dropping invariant state can make nested loops invariant (their initial value becomes
      // what their body yields) and normalizing nested loops can make the body yield its state:
      // once before and once after the regions.
      if (auto* l = s.as<ir::LoopOp>(); l != nullptr && !l->saves_states) {
        drop_invariant_state(s, *l);
      }
      for_each_region(s, [&](ir::Block& r) { block(r); });
      if (auto* sz = s.as<ir::SizeOp>()) {
        if (auto c = sz->size.as_constant()) constants_[s.results[0]] = *c;
      }
      if (auto* l = s.as<ir::LoopOp>(); l != nullptr && !l->saves_states) {
        drop_invariant_state(s, *l);
        if (l->state.empty()) {  // every result now reads its initial value
          changed_ = true;
          continue;
        }
        if (!l->is_while) {
          const std::optional<int64_t> count = constant(l->count);
          if (count && *count <= 0) {
            changed_ = true;
            for (size_t k = 0; k < s.results.size(); ++k) subst_[s.results[k]] = l->init[k];
            continue;
          }
          if (count && *count == 1) {
            changed_ = true;
            unroll_once(s, *l, Atom::i64(0), out);
            continue;
          }
          if (auto hot = one_hot(s)) {
            changed_ = true;
            collapse(s, *hot, out);
            continue;
          }
        }
      }
      out.push_back(std::move(s));
    }
    b.stmts = std::move(out);
    substitute_results(b, subst_);
  }

 private:
  void substitute(ir::Stmt& s) { substitute_uses(s, subst_); }

  std::optional<int64_t> constant(const Atom& a) const {
    if (!a.is_var)
      return a.lit.type == Scalar::I64 ? std::optional<int64_t>(a.lit.integer) : std::nullopt;
    auto it = constants_.find(a.var);
    return it == constants_.end() ? std::nullopt : std::optional<int64_t>(it->second);
  }

  // (f).3 per component.
  void drop_invariant_state(ir::Stmt& s, ir::LoopOp& l) {
    Substitution inner;
    for (size_t k = l.state.size(); k-- > 0;) {
      if (!invariant_component(l, k)) continue;
      changed_ = true;
      inner[l.state[k]] = l.init[k];
      subst_[s.results[k]] = l.init[k];
      const auto at = static_cast<ptrdiff_t>(k);
      l.init.erase(l.init.begin() + at);
      l.state.erase(l.state.begin() + at);
      l.body.results.erase(l.body.results.begin() + at);
      s.results.erase(s.results.begin() + at);
    }
    if (inner.empty()) return;
    if (l.is_while) substitute_uses(l.cond, inner);
    substitute_uses(l.body, inner);
  }

  // The body once, with the state bound to the initial values and the counter to `iter`; its
  // statements go to `out` and the loop's results read its results.
  ir::Block body_once(const ir::LoopOp& l, const Atom& iter) {
    ir::CloneMap map;
    for (size_t k = 0; k < l.state.size(); ++k) map.atoms[l.state[k]] = l.init[k];
    if (l.iter >= 0) map.atoms[l.iter] = iter;
    const ir::Block body = l.body;  // clone_block may grow f_.vars; read from a copy
    ir::Block once = ir::clone_block(f_, body, f_, map);
    last_map_ = std::move(map);
    return once;
  }

  void unroll_once(ir::Stmt& s, const ir::LoopOp& l, const Atom& iter, std::vector<ir::Stmt>& out) {
    ir::Block once = body_once(l, iter);
    block(once);  // the copy binds the state to its initial values: normalize it again
    for (auto& st : once.stmts) out.push_back(std::move(st));
    for (size_t k = 0; k < s.results.size(); ++k) subst_[s.results[k]] = once.results[k];
  }

  // (f).4.
  void collapse(ir::Stmt& s, const OneHot& hot, std::vector<ir::Stmt>& out) {
    const ir::LoopOp l = std::get<ir::LoopOp>(s.op);
    const VarId old_if =
        l.body.stmts[hot.if_index].results.empty() ? -1 : l.body.stmts[hot.if_index].results[0];
    ir::Block then_b = body_once(l, hot.e0);
    // Replace the copy of `if c then A else B` by A.
    if (old_if >= 0) {
      const Atom copy = last_map_.atoms.at(old_if);
      for (size_t q = 0; q < then_b.stmts.size(); ++q) {
        ir::Stmt& st = then_b.stmts[q];
        if (st.results.empty() || !copy.is_var || st.results[0] != copy.var) continue;
        auto& i = std::get<ir::IfOp>(st.op);
        Substitution by;
        for (size_t j = 0; j < st.results.size(); ++j) by[st.results[j]] = i.then_branch.results[j];
        std::vector<ir::Stmt> spliced = std::move(i.then_branch.stmts);
        then_b.stmts.erase(then_b.stmts.begin() + static_cast<ptrdiff_t>(q));
        then_b.stmts.insert(then_b.stmts.begin() + static_cast<ptrdiff_t>(q),
                            std::make_move_iterator(spliced.begin()),
                            std::make_move_iterator(spliced.end()));
        substitute_uses(then_b, by);
        break;
      }
    }
    block(then_b);
    const Type boolean = Type::scalar(Scalar::Bool);
    const VarId ge = f_.new_var("in_range", boolean);
    const VarId lt = f_.new_var("in_range", boolean);
    const VarId both = f_.new_var("in_range", boolean);
    out.push_back(ir::Stmt{{ge}, ir::PrimOp{Prim::Ge, {hot.e0, Atom::i64(0)}}, s.span});
    out.push_back(ir::Stmt{{lt}, ir::PrimOp{Prim::Lt, {hot.e0, l.count}}, s.span});
    out.push_back(ir::Stmt{{both}, ir::PrimOp{Prim::And, {Atom::of(ge), Atom::of(lt)}}, s.span});
    ir::Block else_b;
    else_b.results = l.init;
    out.push_back(ir::Stmt{s.results,
                           ir::IfOp{Atom::of(both), std::move(then_b), std::move(else_b)}, s.span});
  }

  ir::Function& f_;
  Substitution subst_;
  std::unordered_map<VarId, int64_t> constants_;
  ir::CloneMap last_map_;
  bool changed_ = false;
};

// The first loop normalization would change; `constants` collects the constant size reads seen
// before it (in program order), which give literal trip counts.
const ir::Stmt* first_unnormal(const ir::Block& b, std::unordered_map<VarId, int64_t>& constants) {
  return ir::find_stmt(b, [&](const ir::Stmt& s) {
    if (const auto* sz = s.as<ir::SizeOp>()) {
      if (auto c = sz->size.as_constant()) constants[s.results[0]] = *c;
    }
    const auto* l = s.as<ir::LoopOp>();
    if (l == nullptr || l->saves_states) return false;
    for (size_t k = 0; k < l->state.size(); ++k) {
      if (invariant_component(*l, k)) return true;
    }
    if (l->is_while) return false;
    std::optional<int64_t> count;
    if (!l->count.is_var) {
      count = l->count.lit.integer;
    } else if (auto it = constants.find(l->count.var); it != constants.end()) {
      count = it->second;
    }
    return (count && *count <= 1) || one_hot(s);
  });
}

}  // namespace

PassResult normalize_loops(const ir::Program&, const ir::Function& f) {
  ir::Function g = f;
  LoopNormalize normalize(g);
  normalize.block(g.body);
  const bool changed = normalize.changed();
  return {std::move(g), changed};
}

std::optional<std::string> loop_normalize_postcondition(const ir::Program& program,
                                                        const ir::Function& f) {
  std::unordered_map<VarId, int64_t> constants;
  const ir::Stmt* s = first_unnormal(f.body, constants);
  if (s == nullptr) return std::nullopt;
  return "the loop `" + ir::print_stmt(program, f, *s) + "` is not normalized";
}

}  // namespace cot::opt
