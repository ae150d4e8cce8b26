// Residual sharing between the gathers and scatters of one linear gen or sum (docs/design.md
// §7.4, shared residuals).
//
// Reverse mode copies the body of a linear gen or sum once per gather or scatter (one per read
// of a tangent in it), and each copy recomputes the primal body at the gathered position. When
// there are several copies, the primal values the linear statements read that cost something to
// compute and depend on the index variables (an invariant one is hoisted by the optimizer) are
// materialized, `let R = for i. p(i)`, and the copies read R at their positions (the statements
// that computed them become dead). The tables are built in evaluation order, each reading the
// tables before it, so each costly statement is computed once per position, where the copies
// each recomputed the ones they needed: sharing does not add work.
// Values are taken at the top level of the body and inside guards there (nested to any depth)
// whose predicates read no value a linear statement binds: a value under guards `[g1] * {...
// [g2] * {... p}}` is materialized as `for i. [g1] * {... [g2] * {... p}}`, a strong zero
// where a predicate fails. Semantics are kept: the primal gen or sum evaluated p at every
// position where its guards hold (and nowhere else R evaluates it), and each copy reads R only
// at positions of the range, inside its copy of the same guards.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "ad/tangent.h"
#include "ad/transpose.h"
#include "ad/transpose_internal.h"
#include "ir/clone.h"
#include "ir/uses.h"

namespace cot::ad {

using transpose_detail::ivars_of;
using transpose_detail::regions_of;

namespace {

// Whether a statement costs nothing under the cost model (reads, index arithmetic,
// comparisons, data movement), given which of the variables it reads are cost-free to get.
bool costs_nothing(const ir::Function& f, const ir::Stmt& s) {
  if (s.as<ir::IndexOp>() || s.as<ir::SizeOp>() || s.as<ir::TupleOp>() || s.as<ir::ProjOp>()) {
    return true;
  }
  if (s.as<ir::PrimOp>()) {
    for (ir::VarId r : s.results) {
      if (is_real(f.type_of(r).elem)) return false;
    }
    return true;
  }
  if (s.as<ir::GuardOp>() || s.as<ir::IfOp>() || s.as<ir::GenOp>()) {
    for (const ir::Block* blk : regions_of(s)) {
      for (const auto& inner : blk->stmts) {
        if (!costs_nothing(f, inner)) return false;
      }
    }
    return true;
  }
  return false;
}

// A shared value is named by where it is: the positions of the guards on the way to it, each
// in its enclosing block, then its own position.
using Where = std::vector<size_t>;

// The values of one gen's or sum's body worth sharing, and the tables that materialize them.
class SharedValues {
 public:
  SharedValues(ir::Builder& b, const VarSet& tangent, const std::vector<ir::IndexVar>& ivars)
      : b_(b), f_(b.function()), tangent_(tangent), ivars_(ivars) {
    for (const auto& iv : ivars) varying_.insert(iv.var);
  }

  // Classifies the body as open() does, descending into guards on primal predicates, and
  // finds the primal values the linear statements read; false when none is worth sharing.
  bool find(const ir::Block& body) {
    scan(body, {});
    // Evaluation order (a value reads only values before it, outside or in its guards).
    std::sort(shared_.begin(), shared_.end());
    return !shared_.empty();
  }
  // The body with every shared value read from its table, the tables emitted before.
  ir::Block materialize(const ir::Block& body);

 private:
  void scan(const ir::Block& blk, const Where& guards);
  void classify_primal(const ir::Stmt& st);
  bool is_primal_pred(const Pred& pred) const;
  ir::Block value_block(const ir::Block& body, const Where& w);
  ir::Block value_at_level(const Where& w, size_t k, const ir::Block& blk);
  ir::VarId emit_table(const ir::Block& computed, Span span);

  ir::Builder& b_;
  ir::Function& f_;
  VarSet tangent_;  // the tangents, and whatever reads a value a linear statement binds
  const std::vector<ir::IndexVar>& ivars_;
  VarSet varying_, bound_, free_cost_;
  std::map<Where, std::vector<size_t>> primal_of_;  // block (its guards) -> primal stmts
  std::vector<Where> shared_;                       // the values materialized
  std::map<Where, ir::VarId> table_of_;             // the values materialized so far
  std::vector<ir::IndexExpr> at_;                   // a table's element at the body's point
};

bool SharedValues::is_primal_pred(const Pred& pred) const {
  std::vector<int32_t> vs;
  pred.collect_vars(vs);
  for (int32_t x : vs) {
    if (tangent_.count(x)) return false;
  }
  return true;
}

void SharedValues::scan(const ir::Block& blk, const Where& guards) {
  VarSet read_by_linear;
  std::vector<size_t>& primal = primal_of_[guards];
  for (size_t p = 0; p < blk.stmts.size(); ++p) {
    const ir::Stmt& st = blk.stmts[p];
    const VarSet reads = stmt_reads(st);
    if (!reads_any(st, tangent_)) {
      primal.push_back(p);
      classify_primal(st);
      continue;
    }
    if (const auto* g = st.as<ir::GuardOp>(); g && is_primal_pred(g->pred)) {
      Where inner = guards;
      inner.push_back(p);
      scan(g->body, inner);
    }
    if (st.as<ir::LoopOp>()) {
      // open() marks every real result of a linear loop (its primal state too).
      for (ir::VarId r : st.results) {
        if (has_tangent(f_.type_of(r))) tangent_.insert(r);
      }
    } else {
      propagate_stmt(f_, st, tangent_);
    }
    // Whatever reads a value a linear statement binds is not primal here.
    for (ir::VarId r : st.results) tangent_.insert(r);
    read_by_linear.insert(reads.begin(), reads.end());
  }
  for (const auto& r : blk.results) {
    if (r.is_var) read_by_linear.insert(r.var);
  }
  // Shared: the real or i64 scalars a linear statement reads that vary with the point and cost.
  for (size_t p : primal) {
    const ir::Stmt& st = blk.stmts[p];
    if (st.results.size() != 1) continue;
    const ir::VarId r = st.results[0];
    const Type t = f_.type_of(r);
    if (!read_by_linear.count(r) || !varying_.count(r) || free_cost_.count(r)) continue;
    if (!t.is_scalar() || !(is_real(t.elem) || t.elem == Scalar::I64)) continue;
    Where w = guards;
    w.push_back(p);
    shared_.push_back(std::move(w));
  }
}

// Whether a primal statement's results vary with the point and cost something.
void SharedValues::classify_primal(const ir::Stmt& st) {
  bool dep = false, free_ = costs_nothing(f_, st);
  for (ir::VarId x : stmt_reads(st)) {
    dep = dep || varying_.count(x);
    // A value bound in the body that costs something makes this one cost too.
    if (bound_.count(x) && !free_cost_.count(x)) free_ = false;
  }
  for (ir::VarId r : st.results) {
    bound_.insert(r);
    if (dep) varying_.insert(r);
    if (free_) free_cost_.insert(r);
  }
}

ir::Block SharedValues::materialize(const ir::Block& body) {
  at_.reserve(ivars_.size());
  for (const auto& iv : ivars_) at_.push_back(ir::affine_index(Affine::var(iv.var)));
  ir::Block out = body;
  for (const Where& w : shared_) {
    const ir::Block computed = value_block(body, w);
    ir::Block* blk = &out;
    for (size_t k = 0; k + 1 < w.size(); ++k) {
      blk = &std::get<ir::GuardOp>(blk->stmts[w[k]].op).body;
    }
    ir::Stmt& st = blk->stmts[w.back()];
    const ir::VarId r = emit_table(computed, st.span);
    b_.named(r, f_.vars[static_cast<size_t>(st.results[0])].name);
    table_of_[w] = r;
    st.op = ir::IndexOp{ir::Atom::of(r), at_};
  }
  return out;
}

// `for i. computed(i)`, over fresh index variables.
ir::VarId SharedValues::emit_table(const ir::Block& computed, Span span) {
  std::vector<ir::IndexVar> fresh;
  ir::CloneMap map;
  for (const auto& iv : ivars_) {
    fresh.push_back(
        ir::IndexVar{b_.index_var(f_.vars[static_cast<size_t>(iv.var)].name), iv.extent});
    map.atoms[iv.var] = ir::Atom::of(fresh.back().var);
  }
  return b_.gen(
      fresh,
      [&] {
        ir::Block copy = ir::clone_block(f_, computed, f_, map);
        for (auto& c : copy.stmts) b_.append(std::move(c));
        return copy.results[0];
      },
      span);
}

// The block computing the value at `w`.
ir::Block SharedValues::value_block(const ir::Block& body, const Where& w) {
  return value_at_level(w, 0, body);
}

// Level k of value_block: the primal statements of `blk` it needs (a value materialized before
// is read from its table), then the guard to the next level (same predicate, the rest inside).
ir::Block SharedValues::value_at_level(const Where& w, size_t k, const ir::Block& blk) {
  ir::Block lb;
  VarSet needed;
  std::optional<ir::Stmt> guard;
  if (k + 1 == w.size()) {
    const ir::VarId v = blk.stmts[w[k]].results[0];
    needed.insert(v);
    lb.results = {ir::Atom::of(v)};
  } else {
    const ir::Stmt& gs = blk.stmts[w[k]];
    const auto& g = *gs.as<ir::GuardOp>();
    ir::Block inner = value_at_level(w, k + 1, g.body);
    const ir::VarId v = inner.results[0].var;
    const ir::VarId r = f_.new_var(f_.vars[static_cast<size_t>(v)].name, f_.type_of(v));
    guard.emplace();
    guard->results = {r};
    guard->op = ir::GuardOp{g.pred, std::move(inner)};
    guard->span = gs.span;
    needed = stmt_reads(*guard);
    lb.results = {ir::Atom::of(r)};
  }
  Where prefix(w.begin(), w.begin() + static_cast<long>(k));
  const std::vector<size_t>& primal = primal_of_.at(prefix);
  std::vector<ir::Stmt> taken;
  for (auto it = primal.rbegin(); it != primal.rend(); ++it) {
    ir::Stmt st = blk.stmts[*it];
    bool need = false;
    for (ir::VarId r : st.results) need = need || needed.count(r);
    if (!need) continue;
    prefix.push_back(*it);
    if (auto t = table_of_.find(prefix); t != table_of_.end()) {
      st.op = ir::IndexOp{ir::Atom::of(t->second), at_};
    }
    prefix.pop_back();
    const VarSet reads = stmt_reads(st);
    needed.insert(reads.begin(), reads.end());
    taken.push_back(std::move(st));
  }
  for (auto it = taken.rbegin(); it != taken.rend(); ++it) lb.stmts.push_back(std::move(*it));
  if (guard) lb.stmts.push_back(std::move(*guard));
  return lb;
}

}  // namespace

// How many copies of the body of `s` the reverse pass makes per position: one per read, and a
// read under an inner gen or sum copies it once per inner position of the read (counted as
// two). The readers of v whole along one chain share a copy (region_contribution).
size_t Transposer::body_copies(const ir::Stmt& s, const ir::Block& body) const {
  size_t copies = 0;
  for (ir::VarId v : free_vars(body)) {
    if (!tangent_.count(v)) continue;
    std::set<std::tuple<std::vector<const ir::Stmt*>, std::vector<int>, std::vector<size_t>>>
        whole_chains;
    for (const Path& p : Path::reads_in(s, v)) {
      if (p.kind == Path::Kind::Whole && !whole_chains.emplace(p.stmts, p.region, p.pos).second) {
        continue;
      }
      bool inner = false;
      for (size_t k = 1; k < p.stmts.size(); ++k) {
        const auto* iv = ivars_of(*p.stmts[k]);
        inner = inner || (iv && !iv->empty());
      }
      copies += inner ? 2 : 1;
    }
  }
  return copies;
}

const ir::Block* Transposer::shared_residuals(Level& lv, size_t idx) {
  if (auto it = lv.residual_bodies.find(idx); it != lv.residual_bodies.end()) {
    return it->second ? &*it->second : nullptr;
  }
  std::optional<ir::Block>& out = lv.residual_bodies[idx];
  const ir::Stmt& s = lv.stmts[idx];
  if (!s.as<ir::GenOp>() && !s.as<ir::ReduceOp>()) return nullptr;
  const std::vector<ir::IndexVar>& ivars = *ivars_of(s);
  const ir::Block& body = *regions_of(s)[0];
  if (ivars.empty()) return nullptr;
  if (body_copies(s, body) < 2) return nullptr;
  SharedValues values(b_, tangent_, ivars);
  if (!values.find(body)) return nullptr;
  out = values.materialize(body);
  return &*out;
}

}  // namespace cot::ad
