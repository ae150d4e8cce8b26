#include "opt/loop_batch.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "ir/clone.h"
#include "ir/free_vars.h"
#include "ir/regions.h"
#include "ir/scope.h"
#include "opt/bindings.h"
#include "opt/static_cost.h"

namespace cot::opt {
namespace {

using ir::Block;
using ir::Stmt;
using ir::VarId;

// At most this many loops are batched per run of the pass (a guard against a bug looping).
constexpr int kMaxBatches = 4096;
// How deep `ordinary` follows definitions.
constexpr int kMaxDepth = 8;

bool has_guard(const Block& b) {
  return std::any_of(b.stmts.begin(), b.stmts.end(), [](const Stmt& s) {
    if (s.as<ir::GuardOp>() != nullptr) return true;
    bool inner = false;
    ir::for_each_region(s, [&](const Block& r) { inner = inner || has_guard(r); });
    return inner;
  });
}

// Whether evaluating `b` (in `scope`) provably raises no error: every read in range at
// affine indices, and nothing else that may fail (integer arithmetic that may overflow, calls,
// loops, scatters).
bool cannot_fail(const ir::Function& f, const Block& b, ir::Scope& scope) {
  const IndexFacts facts = scope.facts();
  for (const auto& s : b.stmts) {
    if (const auto* r = s.as<ir::IndexOp>()) {
      if (!read_in_range(f, *r, facts)) return false;
    } else if (const auto* iv = ir::index_vars_of(s)) {
      // The extents (a statement with the same ranges and an empty body), then the body.
      Stmt ranges = s;
      if (auto* g = ranges.as<ir::GenOp>()) g->body = Block{};
      if (auto* red = ranges.as<ir::ReduceOp>()) red->body = Block{};
      if (s.as<ir::ReduceOp>() != nullptr && !is_real(f.type_of(s.results[0]).elem)) return false;
      if (may_fail(f, ranges)) return false;
      ScopeFrame fr;
      fr.kind = ScopeFrame::Kind::Index;
      fr.ivars = *iv;
      scope.push(fr);
      const bool ok = cannot_fail(f, *ir::index_body_of(s), scope);
      scope.pop();
      if (!ok) return false;
    } else if (const auto* i = s.as<ir::IfOp>()) {
      if (!cannot_fail(f, i->then_branch, scope) || !cannot_fail(f, i->else_branch, scope)) {
        return false;
      }
    } else if (s.as<ir::GuardOp>() != nullptr || s.as<ir::LoopOp>() != nullptr ||
               s.as<ir::AccumOp>() != nullptr || s.as<ir::CallOp>() != nullptr || may_fail(f, s)) {
      return false;
    }
  }
  return true;
}

// The statement binding each variable of f.
void collect_defs(const Block& b, std::unordered_map<VarId, const Stmt*>& defs) {
  for (const auto& s : b.stmts) {
    for (VarId r : s.results) defs[r] = &s;
    ir::for_each_region(s, [&](const Block& r) { collect_defs(r, defs); });
  }
}

// Whether an atom's value is certainly not a strong zero (docs/language.md §5.6): a literal, a
// parameter, a read, a generator, a size, an index or loop variable, or arithmetic on such
// values. A loop state kept in a tensor loses its mask, so only such states may be batched.
bool ordinary(const ir::Function& f, const std::unordered_map<VarId, const Stmt*>& defs,
              const std::unordered_set<VarId>& given, const ir::Atom& a, int depth = 0) {
  if (!a.is_var || given.count(a.var) != 0) return true;
  if (std::find(f.params.begin(), f.params.end(), a.var) != f.params.end()) return true;
  if (!is_real(f.type_of(a.var).elem) || !f.type_of(a.var).is_scalar()) {
    return !f.type_of(a.var).is_tuple;  // integers, booleans and tensors carry no mask
  }
  auto it = defs.find(a.var);
  if (it == defs.end() || depth > kMaxDepth) return false;
  const Stmt& s = *it->second;
  if (s.as<ir::IndexOp>() != nullptr || s.as<ir::SizeOp>() != nullptr) return true;
  if (const auto* p = s.as<ir::PrimOp>()) {
    return std::all_of(p->args.begin(), p->args.end(),
                       [&](const ir::Atom& x) { return ordinary(f, defs, given, x, depth + 1); });
  }
  if (const auto* i = s.as<ir::IfOp>()) {
    const size_t k = static_cast<size_t>(std::find(s.results.begin(), s.results.end(), a.var) -
                                         s.results.begin());
    return ordinary(f, defs, given, i->then_branch.results[k], depth + 1) &&
           ordinary(f, defs, given, i->else_branch.results[k], depth + 1);
  }
  return false;
}

// Where a loop can be batched: R = block->stmts[r], L = the statement l of R's body.
struct Site {
  Block* block = nullptr;
  size_t r = 0;
  size_t l = 0;
  std::vector<bool> prelude;        // statements of R's body before L that L reads
  std::vector<bool> step_prelude;   // those L's body reads (copied into every step)
  std::vector<size_t> count_chain;  // statements of R's body computing the trip count
};

// The trip count of a loop in R's body as an affine expression over what is bound outside R,
// with the statements of the body before `end` that compute it (i64 sums and differences of
// sizes and constants, as `m - 1`, which cannot overflow: sizes are far below 2^62); nullopt
// when it is computed otherwise or from values of R's points.
std::optional<Affine> count_value(const ir::Function& f, const Block& body, size_t end,
                                  const std::unordered_set<VarId>& inside, const ir::Atom& a,
                                  std::vector<size_t>& chain, int depth = 0) {
  constexpr int64_t kSmall = int64_t{1} << 31;
  if (!a.is_var) {
    if (a.lit.type != Scalar::I64 || a.lit.integer > kSmall || a.lit.integer < -kSmall) {
      return std::nullopt;
    }
    return Affine::constant(a.lit.integer);
  }
  if (inside.count(a.var) == 0) return Affine::var(a.var);
  if (depth > kMaxDepth) return std::nullopt;
  for (size_t k = 0; k < end; ++k) {
    const Stmt& s = body.stmts[k];
    if (s.results.size() != 1 || s.results[0] != a.var) continue;
    std::optional<Affine> out;
    if (const auto* sz = s.as<ir::SizeOp>()) {
      if (sz->size.as_linear()) out = size_affine(f, sz->size);
    } else if (const auto* p = s.as<ir::PrimOp>(); p != nullptr &&
                                                   (p->prim == Prim::Add || p->prim == Prim::Sub) &&
                                                   p->args.size() == 2) {
      auto x = count_value(f, body, k, inside, p->args[0], chain, depth + 1);
      auto y = count_value(f, body, k, inside, p->args[1], chain, depth + 1);
      if (x && y) out = p->prim == Prim::Add ? Affine::add(*x, *y) : Affine::sub(*x, *y);
    }
    if (out) chain.push_back(k);
    return out;
  }
  return std::nullopt;
}

// The statements of `body` before `end` that produce `need`, transitively.
std::vector<bool> producers(const Block& body, size_t end, ir::VarSet need) {
  std::vector<bool> out(end, false);
  for (size_t k = end; k-- > 0;) {
    const Stmt& s = body.stmts[k];
    if (std::none_of(s.results.begin(), s.results.end(),
                     [&](VarId v) { return need.count(v) != 0; })) {
      continue;
    }
    out[k] = true;
    for (VarId u : stmt_uses(s)) need.insert(u);
  }
  return out;
}

std::optional<Site> batchable(const ir::Function& f,
                              const std::unordered_map<VarId, const Stmt*>& defs, Block& block,
                              size_t r, size_t l, ir::Scope& scope) {
  Stmt& rs = block.stmts[r];
  const Block& body = *ir::index_body_of(rs);
  const Stmt& ls = body.stmts[l];
  const auto* loop = ls.as<ir::LoopOp>();
  if (loop == nullptr || loop->is_while || loop->saves_states || loop->state.size() != 1 ||
      ls.results.size() != 1 || f.type_of(loop->state[0]).is_tuple) {
    return std::nullopt;
  }
  std::unordered_set<VarId> inside;
  collect_bound(rs, inside);
  for (const auto& iv : *ir::index_vars_of(rs)) inside.insert(iv.var);
  std::vector<size_t> chain;
  const auto count = count_value(f, body, l, inside, loop->count, chain);
  if (!count) return std::nullopt;
  std::sort(chain.begin(), chain.end());
  chain.erase(std::unique(chain.begin(), chain.end()), chain.end());

  ir::VarSet step_reads = ir::free_vars(loop->body);
  step_reads.erase(loop->state[0]);
  step_reads.erase(loop->iter);
  ir::VarSet all_reads = step_reads;
  for (const auto& a : loop->init) {
    if (a.is_var) all_reads.insert(a.var);
  }
  Site site{&block, r, l, producers(body, l, all_reads), producers(body, l, step_reads), chain};
  // What the rest of R's body reads: a costly prelude value it reads too would be computed
  // twice (in the initial state's generator and in R).
  std::unordered_set<VarId> read_by_rest;
  for (size_t k = 0; k < body.stmts.size(); ++k) {
    if ((k < l && site.prelude[k]) || k == l) continue;
    for (VarId u : stmt_uses(body.stmts[k])) read_by_rest.insert(u);
  }
  for (const auto& a : body.results) {
    if (a.is_var) read_by_rest.insert(a.var);
  }
  for (size_t k = 0; k < l; ++k) {
    if (!site.prelude[k]) continue;
    const Stmt& s = body.stmts[k];
    if (s.results.size() != 1 || f.type_of(s.results[0]).is_tuple) return std::nullopt;
    const bool cost_free = is_cost_free(f, s);
    if (!cost_free && (site.step_prelude[k] || read_by_rest.count(s.results[0]) != 0)) {
      return std::nullopt;
    }
  }
  // The batched loop runs every point's prelude first (in the initial state's generator, in
  // the points' order), then the steps of all points: nothing but the prelude may fail, so the
  // first error is the one the points in order would raise. No strong zero may reach the state
  // (a tensor keeps no masks).
  Block prelude;
  Block others;  // the rest of R's body
  for (size_t k = 0; k < body.stmts.size(); ++k) {
    const bool in_chain = std::find(chain.begin(), chain.end(), k) != chain.end();
    if (k < l && site.prelude[k]) {
      prelude.stmts.push_back(body.stmts[k]);
    } else if (k != l && !in_chain) {
      others.stmts.push_back(body.stmts[k]);
    }
  }
  if (has_guard(prelude) || has_guard(loop->body) ||
      (!cannot_fail(f, prelude, scope) && !cannot_fail(f, others, scope))) {
    return std::nullopt;
  }
  // Inside the body: 0 <= t < count.
  ScopeFrame step;
  step.kind = ScopeFrame::Kind::Guard;
  auto last = Affine::sub(*count, Affine::var(loop->iter));
  if (last) last = Affine::add(*last, Affine::constant(-1));
  if (!last) return std::nullopt;
  step.pred = Pred::conj({Pred::ge0(Affine::var(loop->iter)), Pred::ge0(*last)});
  scope.push(step);
  const bool body_ok = cannot_fail(f, loop->body, scope);
  scope.pop();
  if (!body_ok) return std::nullopt;
  std::unordered_set<VarId> given{loop->state[0], loop->iter};
  for (const auto& iv : *ir::index_vars_of(rs)) given.insert(iv.var);
  if (!ordinary(f, defs, given, loop->init[0]) ||
      !ordinary(f, defs, given, loop->body.results[0])) {
    return std::nullopt;
  }
  return site;
}

bool find_site(const ir::Function& f, const std::unordered_map<VarId, const Stmt*>& defs, Block& b,
               ir::Scope& scope, Site& out) {
  for (size_t r = 0; r < b.stmts.size(); ++r) {
    Stmt& s = b.stmts[r];
    if (ir::index_vars_of(s) != nullptr && s.results.size() == 1) {
      ScopeFrame fr;
      fr.kind = ScopeFrame::Kind::Index;
      fr.ivars = *ir::index_vars_of(s);
      scope.push(fr);
      const Block& body = *ir::index_body_of(s);
      for (size_t l = 0; l < body.stmts.size(); ++l) {
        if (body.stmts[l].as<ir::LoopOp>() == nullptr) continue;
        if (auto site = batchable(f, defs, b, r, l, scope)) {
          scope.pop();
          out = std::move(*site);
          return true;
        }
      }
      scope.pop();
    }
    bool found = false;
    ir::for_each_region_in(s, [&](const ScopeFrame& fr, Block& inner) {
      if (found) return;
      scope.push(fr);
      found = find_site(f, defs, inner, scope, out);
      scope.pop();
    });
    if (found) return true;
  }
  return false;
}

std::optional<Site> first_site(ir::Function& g) {
  std::unordered_map<VarId, const Stmt*> defs;
  collect_defs(g.body, defs);
  ir::Scope scope(g);
  Site site;
  if (!find_site(g, defs, g.body, scope, site)) return std::nullopt;
  return site;
}

// A read at the top of the per-point step of a tensor from outside R, at a position that moves
// with both the point and the step (A[i, t]), and the step's slice of its table (once made).
struct MovingRead {
  size_t at;  // statement of the per-point step
  VarId slice = -1;
};

// The parts of a site's loop that batching places apart: R's body before the loop, whole (for
// the initial state) and the part every step reads; the loop's body, what all points of a step
// share and what is per point; and the per-point step's moving reads.
struct LoopParts {
  Block prelude;
  Block step_prelude;
  Block shared_step;
  Block point_step;
  std::vector<MovingRead> moving;
};

// The prelude of the site's loop in R's body `body`, whole and the part every step reads.
void split_prelude(const Site& site, const Block& body, LoopParts& parts) {
  for (size_t k = 0; k < site.l; ++k) {
    if (site.prelude[k]) parts.prelude.stmts.push_back(body.stmts[k]);
    if (site.step_prelude[k]) parts.step_prelude.stmts.push_back(body.stmts[k]);
  }
}

// The loop's body split into the statements that vary only with the step (read once per step)
// and those that vary with the point; returns the variables that vary with the point.
ir::VarSet split_step(const ir::LoopOp& loop, const std::vector<ir::IndexVar>& ivars,
                      LoopParts& parts) {
  ir::VarSet per_point(ivars.size());
  for (const auto& iv : ivars) per_point.insert(iv.var);
  for (const auto& s : parts.prelude.stmts) per_point.insert(s.results.begin(), s.results.end());
  per_point.insert(loop.state[0]);
  for (const auto& s : loop.body.stmts) {
    const auto uses = stmt_uses(s);
    const bool varies =
        std::any_of(uses.begin(), uses.end(), [&](VarId v) { return per_point.count(v) != 0; });
    if (varies) {
      per_point.insert(s.results.begin(), s.results.end());
      parts.point_step.stmts.push_back(s);
    } else {
      parts.shared_step.stmts.push_back(s);
    }
  }
  parts.point_step.results = loop.body.results;
  return per_point;
}

// The moving reads of the per-point step: the loop reads a slice of a table of them per step
// instead (Xt = X[t]; Xt[i]), so reverse mode scatters each step's slice of the cotangent
// (transpose.h's stepped reads) rather than carrying a dense cotangent of A.
std::vector<MovingRead> moving_reads(const Stmt& rs, const ir::LoopOp& loop,
                                     const std::vector<ir::IndexVar>& ivars,
                                     const Block& point_step, const ir::VarSet& per_point) {
  std::unordered_set<VarId> point_vars(per_point.begin(), per_point.end());
  ir::VarSet outer_bound;
  collect_bound(rs, outer_bound);
  for (const auto& iv : ivars) outer_bound.insert(iv.var);
  std::vector<MovingRead> moving;
  for (size_t k = 0; k < point_step.stmts.size(); ++k) {
    const auto* r = point_step.stmts[k].as<ir::IndexOp>();
    if (r == nullptr || !r->tensor.is_var || outer_bound.count(r->tensor.var) != 0) continue;
    bool on_point = false;
    bool on_step = false;
    bool affine_only = true;
    for (const auto& ix : r->indices) {
      if (!ix.is_affine) affine_only = false;
      for (const auto& term : ix.affine.terms()) {
        const VarId v = term.first;
        if (v == loop.iter) on_step = true;
        const bool is_ivar = std::any_of(ivars.begin(), ivars.end(),
                                         [&](const ir::IndexVar& iv) { return iv.var == v; });
        if (is_ivar) on_point = true;
        if (!is_ivar && v != loop.iter && outer_bound.count(v) != 0) affine_only = false;
        if (!is_ivar && point_vars.count(v) != 0) affine_only = false;
      }
    }
    if (affine_only && on_point && on_step) moving.push_back({k, -1});
  }
  return moving;
}

// Writes the statements that run a site's loop batched over R's points (`ivars`), at the
// builder's position: its trip count, the moving reads' tables, the initial states and the
// batched loop.
class BatchedLoopWriter {
 public:
  BatchedLoopWriter(ir::Function& g, ir::Builder& bld, const std::vector<ir::IndexVar>& ivars,
                    const ir::LoopOp& loop, const Span& span)
      : g_(g), bld_(bld), ivars_(ivars), loop_(loop), span_(span) {}

  // The trip count, computed before R by a copy of the statements `chain` of R's body.
  ir::Atom trip_count(const Block& chain) {
    ir::CloneMap count_map;
    ir::Atom count = loop_.count;
    append_copy(chain, count_map);
    if (count.is_var && count_map.atoms.count(count.var) != 0) {
      count = count_map.atoms.at(count.var);
    }
    return count;
  }

  // T = max(count, 0), the tables' first extent, and per moving read its table; the read
  // becomes the point's element of the step's slice, read in the shared step.
  void step_tables(const ir::Atom& count, LoopParts& parts) {
    const std::string t_name = bld_.fresh_size_name("T");
    const VarId t = bld_.named(bld_.prim(Prim::Max, {count, ir::Atom::i64(0)}, span_), t_name);
    g_.size_vars.push_back(ir::SizeVar{t_name, t, -1, {}, 0});
    for (auto& m : parts.moving) {
      Stmt& read_stmt = parts.point_step.stmts[m.at];
      const auto read = *read_stmt.as<ir::IndexOp>();
      const VarId table = step_table(read, read_stmt.span, t_name);
      // In the loop: the step's slice, and the point's element of it.
      m.slice = g_.new_var(g_.vars[static_cast<size_t>(read.tensor.var)].name + "_step", [&] {
        Type st = g_.type_of(table);
        st.shape.erase(st.shape.begin());
        return st;
      }());
      parts.shared_step.stmts.push_back(
          Stmt{{m.slice},
               ir::IndexOp{ir::Atom::of(table), {ir::affine_index(Affine::var(loop_.iter))}},
               read_stmt.span});
      ir::IndexOp element{ir::Atom::of(m.slice), {}};
      for (const auto& iv : ivars_)
        element.indices.push_back(ir::affine_index(Affine::var(iv.var)));
      read_stmt.op = std::move(element);
    }
  }

  // The initial state of every point: `for I. { prelude; init }`.
  VarId initial_states(const Block& prelude) {
    ir::CloneMap init_map;
    const auto init_ivars = fresh_ivars(init_map);
    return bld_.gen(
        init_ivars,
        [&] {
          append_copy(prelude, init_map);
          return init_map.atoms.count(loop_.init[0].var) != 0 && loop_.init[0].is_var
                     ? init_map.atoms.at(loop_.init[0].var)
                     : loop_.init[0];
        },
        span_);
  }

  // The loop over the states of all points, `loop S = init for t < count { shared step;
  // for I. { step prelude; per-point step at S[I] } }`; returns its final states.
  VarId batched_loop(VarId init, const ir::Atom& count, const LoopParts& parts) {
    auto out = bld_.loop_for(
        {ir::Atom::of(init)}, count,
        [&](const std::vector<VarId>& st, VarId iter) {
          ir::CloneMap map;
          map.atoms[loop_.iter] = ir::Atom::of(iter);
          append_copy(parts.shared_step, map);
          const auto point_ivars = fresh_ivars(map);
          const VarId next = bld_.gen(
              point_ivars,
              [&] {
                append_copy(parts.step_prelude, map);
                std::vector<ir::IndexExpr> at;
                at.reserve(point_ivars.size());
                for (const auto& iv : point_ivars) {
                  at.push_back(ir::affine_index(Affine::var(iv.var)));
                }
                map.atoms[loop_.state[0]] =
                    ir::Atom::of(bld_.index(ir::Atom::of(st[0]), at, span_));
                const auto rest = append_copy(parts.point_step, map);
                return rest[0];
              },
              span_);
          return std::vector<ir::Atom>{ir::Atom::of(next)};
        },
        {g_.vars[static_cast<size_t>(loop_.state[0])].name},
        g_.vars[static_cast<size_t>(loop_.iter)].name, span_);
    return out[0];
  }

 private:
  // Fresh index variables over R's ranges, R's mapped to them in `map`.
  std::vector<ir::IndexVar> fresh_ivars(ir::CloneMap& map) {
    std::vector<ir::IndexVar> out;
    for (const auto& iv : ivars_) {
      const VarId v = bld_.index_var(g_.vars[static_cast<size_t>(iv.var)].name);
      out.push_back(ir::IndexVar{v, iv.extent});
      map.atoms[iv.var] = ir::Atom::of(v);
    }
    return out;
  }

  // Appends a copy of `src` at the builder's position; returns the copy's results.
  std::vector<ir::Atom> append_copy(const Block& src, ir::CloneMap& map) {
    Block copy = ir::clone_block(g_, src, g_, map);
    for (auto& s : copy.stmts) bld_.append(std::move(s));
    return copy.results;
  }

  // The table of a moving read, `for t: T, I. A[...]` (the read at step t and point I).
  VarId step_table(const ir::IndexOp& read, const Span& read_span, const std::string& t_name) {
    ir::CloneMap map;
    const VarId step = bld_.index_var(g_.vars[static_cast<size_t>(loop_.iter)].name);
    std::vector<ir::IndexVar> tiv{ir::IndexVar{step, SizeExpr::var(t_name)}};
    const auto piv = fresh_ivars(map);
    tiv.insert(tiv.end(), piv.begin(), piv.end());
    return bld_.gen(
        tiv,
        [&] {
          std::vector<ir::IndexExpr> at;
          for (const auto& ix : read.indices) {
            std::optional<Affine> a = ix.affine;
            for (const auto& iv : ivars_) {
              if (a) a = a->substitute(iv.var, Affine::var(map.atoms.at(iv.var).var));
            }
            if (a) a = a->substitute(loop_.iter, Affine::var(step));
            if (!a) throw std::logic_error("loop-batch: an index overflows");
            at.push_back(ir::affine_index(*a));
          }
          return ir::Atom::of(bld_.index(read.tensor, at, read_span));
        },
        span_);
  }

  ir::Function& g_;
  ir::Builder& bld_;
  const std::vector<ir::IndexVar>& ivars_;
  const ir::LoopOp& loop_;
  Span span_;
};

// Removes the prelude statements of R's body that only the loop read (the initial state's
// generator computes them now).
void drop_dead_prelude(const Site& site, Block& body) {
  for (size_t k = site.l; k-- > 0;) {
    if (!site.prelude[k]) continue;
    std::unordered_set<VarId> live;
    for (size_t j = k + 1; j < body.stmts.size(); ++j) {
      for (VarId u : stmt_uses(body.stmts[j])) live.insert(u);
    }
    for (const auto& a : body.results) {
      if (a.is_var) live.insert(a.var);
    }
    const auto& res = body.stmts[k].results;
    if (std::none_of(res.begin(), res.end(), [&](VarId v) { return live.count(v) != 0; })) {
      body.stmts.erase(body.stmts.begin() + static_cast<std::ptrdiff_t>(k));
    }
  }
}

// g with the loop of `site` batched.
void batch(ir::Function& g, const Site& site) {
  Stmt& rs = site.block->stmts[site.r];
  Block& body = *ir::index_body_of(rs);
  const std::vector<ir::IndexVar> ivars = *ir::index_vars_of(rs);
  const Stmt loop_stmt = body.stmts[site.l];
  const auto& loop = *loop_stmt.as<ir::LoopOp>();
  const Span span = loop_stmt.span;

  LoopParts parts;
  split_prelude(site, body, parts);
  const ir::VarSet per_point = split_step(loop, ivars, parts);
  parts.moving = moving_reads(rs, loop, ivars, parts.point_step, per_point);

  ir::Builder bld(g);
  BatchedLoopWriter writer(g, bld, ivars, loop, span);
  Block chain;
  for (size_t k : site.count_chain) chain.stmts.push_back(body.stmts[k]);
  VarId batched = -1;
  Block made = bld.region([&] {
    const ir::Atom count = writer.trip_count(chain);
    if (!parts.moving.empty()) writer.step_tables(count, parts);
    const VarId init = writer.initial_states(parts.prelude);
    batched = writer.batched_loop(init, count, parts);
    return std::vector<ir::Atom>{};
  });

  // R reads its point's final state.
  ir::IndexOp read{ir::Atom::of(batched), {}};
  for (const auto& iv : ivars) read.indices.push_back(ir::affine_index(Affine::var(iv.var)));
  body.stmts[site.l] = Stmt{{loop_stmt.results[0]}, std::move(read), span};
  drop_dead_prelude(site, body);
  site.block->stmts.insert(site.block->stmts.begin() + static_cast<std::ptrdiff_t>(site.r),
                           std::make_move_iterator(made.stmts.begin()),
                           std::make_move_iterator(made.stmts.end()));
}

}  // namespace

PassResult batch_loops(const ir::Program& program, const ir::Function& f) {
  (void)program;
  ir::Function g = f;
  bool changed = false;
  for (int k = 0; k < kMaxBatches; ++k) {
    auto site = first_site(g);
    if (!site) break;
    batch(g, *site);
    changed = true;
  }
  if (!changed) return {f, false};
  return {std::move(g), true};
}

std::optional<std::string> loop_batch_postcondition(const ir::Program& program,
                                                    const ir::Function& f) {
  (void)program;
  ir::Function g = f;
  auto site = first_site(g);
  if (!site) return std::nullopt;
  return "a loop at the top of a region's body can still run batched over its points";
}

}  // namespace cot::opt
