// The transpose of a read inside regions (docs/design.md §7.4): one read of v inside region
// statement s, at affine indices or of v whole, as a gather over v's positions j:
//   for j. sum (kept i). [conditions] * c(i)
// where the equalities `index(i) == j` have been solved for the summed variables they pin
// (index/eliminate_sums.h), and c(i) copies the regions down to the read at the point i and
// runs their reverse pass.
//
// The steps, in the order Gather::emit takes them: the targets j (make_targets); the summation
// variables along the path and the read's equalities (collect_summed_vars,
// collect_read_equalities); solving them (solve_read, keep_outer_levels_summed); the level at
// which each remaining condition is tested (place_conditions); then the emission, outside in,
// one level of the path at a time (descend, point_of_level, transpose_level_copy, finish_level).
#include <algorithm>
#include <stdexcept>

#include "ad/tangent.h"
#include "ad/transpose.h"
#include "ad/transpose_internal.h"
#include "index/eliminate_sums.h"
#include "ir/clone.h"
#include "ir/size_affine.h"
#include "ir/uses.h"
#include "prims/prim.h"

namespace cot::ad {

using transpose_detail::emit_affine;
using transpose_detail::ivars_of;
using transpose_detail::regions_of;
using transpose_detail::substitute_all;

using Cts = std::vector<std::optional<ir::Atom>>;

class Transposer::Gather {
 public:
  // `body0`: the block copied for the first level of the path (see Transposer::gather).
  Gather(Transposer& t, const ir::Stmt& s, const Path& path, ir::VarId v, const ir::Block* body0)
      : t_(t),
        b_(t.b_),
        f_(t.b_.function()),
        s_(s),
        path_(path),
        v_(v),
        body0_(body0),
        vt_(f_.type_of(v)),
        // A reader that takes v whole (a loop whose body reads it, a tuple, a result)
        // contributes a tensor of v's shape at each point of the path: those are summed over
        // the path's points, not gathered per position of v (which would rerun the path, a
        // loop's reverse pass included, once per position).
        whole_((path.final_pos < 0 || path.kind == Path::Kind::Whole) && vt_.is_tensor()) {}

  std::optional<ir::Atom> emit(const Cts& cts);

 private:
  void make_targets();
  bool collect_summed_vars();
  bool collect_read_equalities();
  bool index_reads_region_values() const;
  bool solve_read(bool solvable);
  void keep_outer_levels_summed(std::optional<SumElimination>& solved);
  void place_conditions();
  long level_of_condition(const Pred& p) const;
  Pred guard_at_level(long lvl);
  ir::Atom zero();

  ir::Atom element(const Cts& cts);
  ir::Atom descend(size_t k, const ir::Stmt& st, const Cts& st_cts);
  std::vector<ir::IndexVar> bind_kept_vars(size_t k, const ir::Stmt& st);
  ir::Atom point_of_level(size_t k, const ir::Stmt& st, const Cts& st_cts);
  std::vector<ir::IndexExpr> bind_solved_vars(size_t k, const ir::Stmt& st, ir::CloneMap& map);
  ir::Atom transpose_level_copy(size_t k, const ir::Stmt& st, const Cts& st_cts, ir::CloneMap& map,
                                const std::vector<ir::IndexExpr>& at);
  ir::Atom finish_level(size_t k, Level& lvl);
  std::optional<ir::Atom> whole_contribution(Level& lvl, long final_pos);
  ir::Atom read_at_computed_position(Level& lvl, size_t at, ir::Atom c,
                                     const std::vector<ir::VarId>& rest);

  Transposer& t_;
  ir::Builder& b_;
  ir::Function& f_;
  const ir::Stmt& s_;
  const Path& path_;
  const ir::VarId v_;
  const ir::Block* body0_;
  const Type vt_;
  const bool whole_;

  std::vector<ir::IndexVar> jvars_;  // the targets: v's positions (none when whole_)
  std::vector<ir::VarId> js_;
  std::vector<SummedVar> summed_;                   // the index variables along the path
  std::unordered_map<ir::VarId, size_t> level_of_;  // index variable -> its level in the path
  std::vector<Affine> eqs_;                         // the read's `index - j == 0`
  size_t nidx_ = 0;                                 // how many indices the read has
  bool at_read_ = false;  // the equalities are tested where the read happens, not solved
  SumElimination elim_;
  std::unordered_map<ir::VarId, const SolvedVar*> solved_of_;
  std::vector<std::pair<long, Pred>> conds_;                       // (level, condition)
  std::vector<std::pair<long, std::pair<Affine, int64_t>>> divs_;  // (level, divisibility)
  std::unordered_map<ir::VarId, Affine> binding_;  // original summed variable -> affine in fresh
  // Ranges of the variables bound so far (the targets j, then kept summation variables), under
  // which Fourier-Motzkin drops implied range conditions.
  std::vector<SummedVar> ranges_;
};

std::optional<ir::Atom> Transposer::gather(const ir::Stmt& s, const Cts& cts, const Path& path,
                                           ir::VarId v, const ir::Block* body) {
  return Gather(*this, s, path, v, body).emit(cts);
}

std::optional<ir::Atom> Transposer::Gather::emit(const Cts& cts) {
  make_targets();
  const bool solvable = collect_summed_vars();
  if (!collect_read_equalities()) return std::nullopt;
  at_read_ = index_reads_region_values();
  if (!solve_read(solvable)) return std::nullopt;
  place_conditions();
  for (size_t k = 0; k < js_.size(); ++k) {
    if (auto e = ir::size_affine(f_, vt_.shape[k])) ranges_.push_back(SummedVar{js_[k], *e});
  }
  if (js_.empty()) return element(cts);
  return ir::Atom::of(b_.gen(jvars_, [&] { return element(cts); }));
}

void Transposer::Gather::make_targets() {
  if (whole_) return;
  for (const auto& d : vt_.shape) {
    js_.push_back(b_.index_var("j"));
    jvars_.push_back(ir::IndexVar{js_.back(), d});
  }
}

// The summation variables along the path; false when an extent is not affine in sizes.
bool Transposer::Gather::collect_summed_vars() {
  bool solvable = true;
  for (size_t k = 0; k < path_.stmts.size(); ++k) {
    if (const auto* iv = ivars_of(*path_.stmts[k])) {
      for (const auto& x : *iv) {
        auto ext = ir::size_affine(f_, x.extent);
        if (!ext) solvable = false;
        summed_.push_back(SummedVar{x.var, ext ? *ext : Affine::constant(0)});
        level_of_[x.var] = k;
      }
    }
  }
  return solvable;
}

// An affine read's `index_k(i) - j_k == 0`; false on overflow (the read is then dropped).
bool Transposer::Gather::collect_read_equalities() {
  if (path_.kind != Path::Kind::Affine) return true;
  const auto& ix = *path_.reader().as<ir::IndexOp>();
  nidx_ = ix.indices.size();
  for (size_t k = 0; k < nidx_; ++k) {
    auto d = Affine::sub(ix.indices[k].affine, Affine::var(js_[k]));
    if (!d) return false;
    eqs_.push_back(*d);
  }
  return true;
}

// An index may mention variables computed inside the regions (a callee's size variable,
// inlined): the equalities can then only be tested where the read happens, after the copy of
// its block, so nothing is solved for this read (correct, without the sparsity).
bool Transposer::Gather::index_reads_region_values() const {
  VarSet local;
  for (const ir::Stmt* st : path_.stmts) {
    for (const ir::Block* blk : regions_of(*st)) {
      VarSet fv = free_vars(*blk);
      ir::for_each_use(*blk, [&](ir::VarId x) {
        if (!fv.count(x)) local.insert(x);
      });
    }
  }
  bool at_read = false;
  for (const auto& e : eqs_) {
    for (const auto& [x, c] : e.terms()) {
      (void)c;
      if (local.count(x) && !level_of_.count(x)) at_read = true;
    }
  }
  return at_read;
}

// Solves the equalities for the summed variables they pin; false when the gather is zero (a
// range is provably empty). Unsolved, every summed variable is kept and the equalities guard.
bool Transposer::Gather::solve_read(bool solvable) {
  std::optional<SumElimination> solved =
      solvable && !at_read_ ? eliminate_sums(summed_, eqs_) : std::nullopt;
  keep_outer_levels_summed(solved);
  if (solved) {
    elim_ = std::move(*solved);
  } else {
    for (const auto& sv : summed_) elim_.kept.push_back(sv.var);
    if (!at_read_) {
      for (const auto& e : eqs_) elim_.conditions.push_back(Pred::eq0(e));
    }
  }
  return !elim_.empty;
}

// The levels are emitted outside in, so a variable's value may mention kept variables of its
// own level or outer ones only: `h[i + 2 * k]` in `for i. sum k` solves i = j - 2k, which the
// copy of i's level could not evaluate. Such a variable stays summed (free to the solver),
// which then solves the inner one: k = (j - i) / 2 where j - i is even.
void Transposer::Gather::keep_outer_levels_summed(std::optional<SumElimination>& solved) {
  std::vector<ir::VarId> forced;  // kept summed by this rule, over their ranges
  for (std::vector<SummedVar> rest = summed_; solved && !solved->empty;) {
    const SolvedVar* inverted = nullptr;
    for (const auto& sv : solved->solved) {
      for (ir::VarId u : solved->kept) {
        if (sv.numerator.mentions(u) && level_of_.at(u) > level_of_.at(sv.var)) inverted = &sv;
      }
    }
    if (inverted == nullptr) break;
    const ir::VarId outer = inverted->var;
    forced.push_back(outer);
    std::erase_if(rest, [&](const SummedVar& x) { return x.var == outer; });
    solved = eliminate_sums(rest, eqs_);
    if (solved && !solved->empty) {
      // The forced ones are summed over their ranges again, in level order among the kept.
      solved->kept.insert(solved->kept.end(), forced.begin(), forced.end());
      auto position = [&](ir::VarId x) {
        return std::find_if(summed_.begin(), summed_.end(),
                            [&](const SummedVar& y) { return y.var == x; }) -
               summed_.begin();
      };
      std::sort(solved->kept.begin(), solved->kept.end(),
                [&](ir::VarId a, ir::VarId b) { return position(a) < position(b); });
    }
  }
}

// Each condition goes to the outermost level where all its variables are bound.
void Transposer::Gather::place_conditions() {
  for (const auto& sv : elim_.solved) solved_of_[sv.var] = &sv;
  for (const auto& c : elim_.conditions) conds_.emplace_back(level_of_condition(c), c);
  for (const auto& d : elim_.divisible) {
    divs_.emplace_back(level_of_condition(Pred::eq0(d.first)), d);
  }
}

long Transposer::Gather::level_of_condition(const Pred& p) const {
  std::vector<int32_t> vs;
  p.collect_vars(vs);
  long lvl = -1;
  for (int32_t x : vs) {
    if (auto it = level_of_.find(x); it != level_of_.end())
      lvl = std::max(lvl, static_cast<long>(it->second));
  }
  return lvl;
}

// The conjunction of the conditions placed at level `lvl` (-1: outside every level), over the
// variables bound so far.
Pred Transposer::Gather::guard_at_level(long lvl) {
  std::vector<Pred> affine_ps, ps;
  for (const auto& [l, p] : conds_) {
    if (l != lvl) continue;
    affine_ps.push_back(p.rename([&](int32_t x) {
      auto it = binding_.find(x);
      return it != binding_.end() && it->second.terms().size() == 1 ? it->second.terms()[0].first
                                                                    : x;
    }));
  }
  if (!affine_ps.empty()) ps.push_back(simplify_conjunction(affine_ps, ranges_));
  for (const auto& [l, d] : divs_) {
    if (l != lvl) continue;
    auto e = substitute_all(d.first, binding_);
    if (!e) throw std::logic_error("ad: index overflow");
    ir::Atom val = emit_affine(b_, *e);
    ir::Atom m = ir::Atom::of(b_.prim(Prim::Mod, {val, ir::Atom::i64(d.second)}));
    ps.push_back(Pred::atom_of(b_.prim(Prim::Eq, {m, ir::Atom::i64(0)})));
  }
  return Pred::conj(std::move(ps));
}

ir::Atom Transposer::Gather::zero() {
  return whole_ ? zeros(b_, vt_) : ir::Atom::real(0.0, vt_.elem);
}

// The gather's element at the targets j: the path's levels under the conditions on j alone.
ir::Atom Transposer::Gather::element(const Cts& cts) {
  Pred top = guard_at_level(-1);
  if (top.kind == Pred::Kind::False) return zero();
  if (top.kind == Pred::Kind::True) return descend(0, s_, cts);
  return ir::Atom::of(b_.guard(top, [&] { return std::vector<ir::Atom>{descend(0, s_, cts)}; })[0]);
}

// Level k of the path: `st` is the region statement there (the original for k = 0, else its
// copy), `st_cts` the cotangents of its results. A gen, sum or accum level sums over its kept
// index variables, a guard level keeps its guard, an if level takes the read's branch.
ir::Atom Transposer::Gather::descend(size_t k, const ir::Stmt& st, const Cts& st_cts) {
  const std::vector<ir::IndexVar> kept = bind_kept_vars(k, st);
  auto point = [&] { return point_of_level(k, st, st_cts); };
  if (const auto* i = st.as<ir::IfOp>()) {
    const bool then = path_.region[k] == 0;
    auto branch = [&](bool taken) { return std::vector<ir::Atom>{taken ? point() : zero()}; };
    return ir::Atom::of(b_.if_(
        i->cond, [&] { return branch(then); }, [&] { return branch(!then); })[0]);
  }
  if (const auto* g = st.as<ir::GuardOp>()) {
    return ir::Atom::of(b_.guard(g->pred, [&] { return std::vector<ir::Atom>{point()}; })[0]);
  }
  if (kept.empty()) return point();
  return ir::Atom::of(b_.reduce(ast::ReduceKind::Sum, kept, point));
}

// Fresh index variables for level k's variables the solver kept, summed over their ranges.
std::vector<ir::IndexVar> Transposer::Gather::bind_kept_vars(size_t k, const ir::Stmt& st) {
  const auto* cur_ivars = ivars_of(st);
  const auto* orig_ivars = ivars_of(*path_.stmts[k]);
  std::vector<ir::IndexVar> kept;
  if (!cur_ivars) return kept;
  for (size_t q = 0; q < cur_ivars->size(); ++q) {
    const ir::VarId o = (*orig_ivars)[q].var;
    if (solved_of_.count(o)) continue;
    ir::VarId fresh = b_.index_var(f_.vars[static_cast<size_t>(o)].name);
    kept.push_back(ir::IndexVar{fresh, (*cur_ivars)[q].extent});
    binding_[o] = Affine::var(fresh);
    if (auto e = ir::size_affine(f_, (*cur_ivars)[q].extent))
      ranges_.push_back(SummedVar{fresh, *e});
  }
  return kept;
}

// One point of level k: its index variables bound (kept ones to their fresh variables, solved
// ones to their values), then the copy of its region under the conditions placed at k.
ir::Atom Transposer::Gather::point_of_level(size_t k, const ir::Stmt& st, const Cts& st_cts) {
  ir::CloneMap map;
  const std::vector<ir::IndexExpr> at = bind_solved_vars(k, st, map);
  Pred g = guard_at_level(static_cast<long>(k));
  if (g.kind == Pred::Kind::False) return zero();
  if (g.kind == Pred::Kind::True) return transpose_level_copy(k, st, st_cts, map, at);
  return ir::Atom::of(b_.guard(
      g, [&] { return std::vector<ir::Atom>{transpose_level_copy(k, st, st_cts, map, at)}; })[0]);
}

// Maps level k's index variables to their values at this point (kept: the fresh variable;
// solved: the solution, emitted) and returns the point's position in st's result.
std::vector<ir::IndexExpr> Transposer::Gather::bind_solved_vars(size_t k, const ir::Stmt& st,
                                                                ir::CloneMap& map) {
  std::vector<ir::IndexExpr> at;
  const auto* cur_ivars = ivars_of(st);
  const auto* orig_ivars = ivars_of(*path_.stmts[k]);
  if (!cur_ivars) return at;
  for (size_t q = 0; q < cur_ivars->size(); ++q) {
    const ir::VarId o = (*orig_ivars)[q].var, c = (*cur_ivars)[q].var;
    auto it = solved_of_.find(o);
    if (it == solved_of_.end()) {
      const ir::VarId fresh = binding_.at(o).terms()[0].first;
      map.atoms[c] = ir::Atom::of(fresh);
      at.push_back(ir::affine_index(Affine::var(fresh)));
      continue;
    }
    auto num = substitute_all(it->second->numerator, binding_);
    if (!num) throw std::logic_error("ad: index overflow");
    ir::Atom val = emit_affine(b_, *num);
    if (it->second->divisor != 1) {
      val = ir::Atom::of(b_.prim(Prim::FloorDiv, {val, ir::Atom::i64(it->second->divisor)}));
      map.atoms[c] = val;
      at.push_back(ir::computed_index(val));
    } else {
      map.atoms[c] = val;
      map.affine[c] = *num;
      at.push_back(ir::affine_index(*num));
    }
    binding_[o] = *num;  // (divisor > 1: only used through atoms)
  }
  return at;
}

// Copies level k's region at the point and runs its reverse pass.
ir::Atom Transposer::Gather::transpose_level_copy(size_t k, const ir::Stmt& st, const Cts& st_cts,
                                                  ir::CloneMap& map,
                                                  const std::vector<ir::IndexExpr>& at) {
  const ir::Block& region =
      k == 0 && body0_ ? *body0_ : *regions_of(st)[static_cast<size_t>(path_.region[k])];
  ir::Block copy = ir::clone_block(f_, region, f_, map);
  auto lvl = t_.open_region_copy(st, std::move(copy), st_cts, at);
  return finish_level(k, *lvl);
}

// After level k's copy is open: descend to the next level of the path, or take the read's
// cotangent (at the innermost level).
ir::Atom Transposer::Gather::finish_level(size_t k, Level& lvl) {
  if (k + 1 < path_.stmts.size()) {
    long at = lvl.position.at(path_.pos[k + 1]);
    if (at < 0) return zero();
    const auto next_cts = t_.result_cts(lvl, static_cast<size_t>(at));
    bool any = false;
    for (const auto& c : next_cts) any = any || c.has_value();
    if (!any) return zero();
    return descend(k + 1, lvl.stmts[static_cast<size_t>(at)], next_cts);
  }
  std::optional<ir::Atom> c;
  std::vector<ir::VarId> rest;
  if (path_.final_pos < 0 || path_.kind == Path::Kind::Whole) {
    c = whole_contribution(lvl, path_.final_pos);
    for (long other : path_.also) {
      if (auto part = whole_contribution(lvl, other)) c = c ? add_values(b_, *c, *part) : *part;
    }
    rest = js_;
  } else {
    long at = lvl.position.at(static_cast<size_t>(path_.final_pos));
    if (at >= 0) c = t_.ct(lvl, lvl.stmts[static_cast<size_t>(at)].results[0]);
    rest.assign(js_.begin() + static_cast<long>(nidx_), js_.end());
    if (c && at_read_) return read_at_computed_position(lvl, static_cast<size_t>(at), *c, rest);
  }
  if (!c) return zero();
  return rest.empty() ? *c : ir::Atom::of(b_.index(*c, index_at(rest)));
}

// The contribution of a reader taking v whole at `final_pos` of the copy (-1: its results).
std::optional<ir::Atom> Transposer::Gather::whole_contribution(Level& lvl, long final_pos) {
  if (final_pos >= 0) {
    long at = lvl.position.at(static_cast<size_t>(final_pos));
    return at < 0 ? std::nullopt : t_.contribution(lvl, static_cast<size_t>(at), v_);
  }
  // v may be yielded more than once (`if c then (t, t) else (x, x)`): every result that is v
  // contributes.
  std::optional<ir::Atom> sum;
  for (size_t r = 0; r < lvl.results.size(); ++r) {
    if (!lvl.results[r].is_var || lvl.results[r].var != v_ || !lvl.ct_results[r]) continue;
    sum = sum ? add_values(b_, *sum, *lvl.ct_results[r]) : *lvl.ct_results[r];
  }
  return sum;
}

// The read's cotangent `c` where its equalities hold, tested at the read (at_read_).
ir::Atom Transposer::Gather::read_at_computed_position(Level& lvl, size_t at, ir::Atom c,
                                                       const std::vector<ir::VarId>& rest) {
  std::vector<Pred> here;
  const auto& read = *lvl.stmts[at].as<ir::IndexOp>();
  for (size_t q = 0; q < nidx_; ++q) {
    const auto& ix = read.indices[q];
    if (!ix.is_affine) {
      here.push_back(Pred::atom_of(b_.prim(Prim::Eq, {ix.computed, ir::Atom::of(js_[q])})));
      continue;
    }
    auto d = Affine::sub(ix.affine, Affine::var(js_[q]));
    if (!d) throw std::logic_error("ad: index overflow");
    here.push_back(Pred::eq0(*d));
  }
  return ir::Atom::of(b_.guard(Pred::conj(std::move(here)), [&] {
    return std::vector<ir::Atom>{rest.empty() ? c : ir::Atom::of(b_.index(c, index_at(rest)))};
  })[0]);
}

}  // namespace cot::ad
