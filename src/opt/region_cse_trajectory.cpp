// Region CSE's sharing of a plain loop's trajectory (docs/design.md §8, region_cse.h): a loop
// that R runs for its final state and later regions run again as saving loops is run once per
// point, into a table of its states that all of them read.
#include <algorithm>
#include <iterator>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

#include "ir/builder.h"
#include "ir/clone.h"
#include "ir/regions.h"
#include "ir/uses.h"
#include "opt/alpha_equal.h"
#include "opt/bindings.h"
#include "opt/cse.h"
#include "opt/region_cse_internal.h"

namespace cot::opt::region_cse_detail {

using ir::Block;
using ir::Stmt;
using ir::VarId;

namespace {

// Whether two loops compute the same states: equal once neither saves.
bool same_loop(const ir::Function& f, const Stmt& a, const Stmt& b) {
  auto plain = [](const Stmt& s) {
    Stmt p = s;
    auto* l = p.as<ir::LoopOp>();
    if (l->saves_states) {
      l->saves_states = false;
      p.results.resize(l->state.size());
    }
    return p;
  };
  return a.as<ir::LoopOp>() != nullptr && b.as<ir::LoopOp>() != nullptr &&
         alpha_equal(f, plain(a), plain(b));
}

// The saving loops in `b` (nested too) that compute what the plain loop `probe` does.
void saving_copies(const ir::Function& f, const Block& b, const Stmt& probe,
                   std::vector<VarId>& out) {
  for (const auto& s : b.stmts) {
    const auto* l = s.as<ir::LoopOp>();
    if (l != nullptr && l->saves_states && same_loop(f, probe, s)) out.push_back(s.results[0]);
    ir::for_each_region(s, [&](const Block& r) { saving_copies(f, r, probe, out); });
  }
}

// Reads `stack[e...]` anywhere in b, as `table[at..., e...]` when `rewrite` is set; returns how
// many there are.
int read_through(Block& b, VarId stack, VarId table, const std::vector<VarId>& at, bool rewrite) {
  int n = 0;
  for (auto& s : b.stmts) {
    if (auto* r = s.as<ir::IndexOp>(); r != nullptr && r->tensor.is_var && r->tensor.var == stack) {
      ++n;
      if (rewrite) {
        r->tensor = ir::Atom::of(table);
        std::vector<ir::IndexExpr> idx;
        idx.reserve(at.size());
        for (VarId x : at) idx.push_back(ir::affine_index(Affine::var(x)));
        r->indices.insert(r->indices.begin(), idx.begin(), idx.end());
      }
    }
    ir::for_each_region(s, [&](Block& r) { n += read_through(r, stack, table, at, rewrite); });
  }
  return n;
}

// Whether `v` is bound by a plain loop (neither saving nor a while loop), the only kind whose
// trajectory is shared; checked before copying the function, which costs the most.
bool is_plain_loop(const ir::Function& f, VarId v) {
  auto [vb, vk] = find_stmt(f.body, v);
  const auto* l = vb == nullptr ? nullptr : vb->stmts[vk].as<ir::LoopOp>();
  return l != nullptr && !l->saves_states && !l->is_while;
}

// Whether the chain `slice` of R (`region`, over `ivars`) ends in a plain loop binding `value`
// with one state, whose trip count is the same at every point of R (the table's rows have one
// length).
bool loop_with_one_trip_count(const Block& slice, const Stmt& region,
                              const std::vector<ir::IndexVar>& ivars, VarId value) {
  const Stmt& v = slice.stmts.back();
  const auto* l = v.as<ir::LoopOp>();
  if (l == nullptr || l->saves_states || l->is_while || l->state.size() != 1 ||
      v.results.size() != 1 || v.results[0] != value) {
    return false;
  }
  if (!l->count.is_var) return true;
  // Bound outside R's body: the same for every point.
  std::unordered_set<VarId> bound;
  collect_bound(*ir::index_body_of(region), bound);
  for (const auto& x : ivars) bound.insert(x.var);
  return bound.count(l->count.var) == 0;
}

// The saving loops of h that compute what the probes' copies of the loop do, each with the
// point (the region's index variables) of the probe it was found beside.
std::vector<Probe> saving_loops_beside(const ir::Function& h, const std::vector<Probe>& probes) {
  std::vector<Probe> matches;
  for (const auto& p : probes) {
    auto [pb, pk] = find_stmt(h.body, p.copy);
    if (pb == nullptr) continue;
    std::vector<VarId> found;
    saving_copies(h, *pb, pb->stmts[pk], found);
    for (VarId y : found) matches.push_back({y, p.at});
  }
  return matches;
}

// The table H of every point's trajectory: the statements computing it (`let Tn = max(count,
// 0); let H = for I. ...`, to be put before R), H, and Tn, the row of the final state.
struct Trajectory {
  Block made;
  VarId table = -1;
  VarId final_row = -1;
  Span span;
};

// H's body at one point (the chain's variables mapped by `map`): the chain, its loop made
// saving, and the row of its states `for k: Tn + 1. if k < T then ps[k] else y`.
ir::Atom trajectory_at_point(ir::Builder& bld, ir::Function& h, const Block& chain,
                             ir::CloneMap& map, const ir::LoopOp& loop, const Type& state_type,
                             const std::string& tn_name, const Span& span) {
  Block body = ir::clone_block(h, chain, h, map);
  Stmt run = std::move(body.stmts.back());
  body.stmts.pop_back();
  for (auto& st : body.stmts) bld.append(std::move(st));
  // The loop, saving: its final state, count and stack.
  const std::string t_name = bld.fresh_size_name("T");
  const VarId t = h.new_var(t_name, Type::scalar(Scalar::I64));
  h.size_vars.push_back(ir::SizeVar{t_name, t, -1, {}, 0});
  std::vector<SizeExpr> stack_shape{SizeExpr::var(t_name)};
  for (const auto& d : state_type.shape) stack_shape.push_back(d);
  const VarId stack = h.new_var(h.vars[static_cast<size_t>(loop.state[0])].name + "_saved",
                                Type::tensor(state_type.elem, std::move(stack_shape)));
  const VarId last = run.results[0];
  run.as<ir::LoopOp>()->saves_states = true;
  run.results = {last, t, stack};
  bld.append(std::move(run));
  const VarId k = bld.index_var("k");
  return ir::Atom::of(bld.gen(
      {ir::IndexVar{k, SizeExpr::var(tn_name) + SizeExpr::constant(1)}},
      [&] {
        const VarId before_end = bld.prim(Prim::Lt, {ir::Atom::of(k), ir::Atom::of(t)});
        return ir::Atom::of(bld.if_(
            ir::Atom::of(before_end),
            [&] {
              return std::vector<ir::Atom>{
                  ir::Atom::of(bld.index(ir::Atom::of(stack), {ir::affine_index(Affine::var(k))}))};
            },
            [&] { return std::vector<ir::Atom>{ir::Atom::of(last)}; })[0]);
      },
      span));
}

// H over R's points `ivars`, computed by `chain` (the loop `loop` last).
Trajectory build_trajectory(ir::Function& h, const Block& chain,
                            const std::vector<ir::IndexVar>& ivars, const ir::LoopOp& loop,
                            const Type& state_type, const Span& span) {
  ir::Builder bld(h);
  const std::string tn_name = bld.fresh_size_name("T");
  Trajectory out;
  out.span = span;
  out.made = bld.region([&] {
    out.final_row = bld.named(bld.prim(Prim::Max, {loop.count, ir::Atom::i64(0)}, span), tn_name);
    h.size_vars.push_back(ir::SizeVar{tn_name, out.final_row, -1, {}, 0});
    ir::CloneMap map;
    std::vector<ir::IndexVar> hiv;
    for (const auto& iv : ivars) {
      const VarId fresh = bld.index_var(h.vars[static_cast<size_t>(iv.var)].name);
      hiv.push_back(ir::IndexVar{fresh, iv.extent});
      map.atoms[iv.var] = ir::Atom::of(fresh);
    }
    out.table = bld.gen(
        hiv,
        [&] { return trajectory_at_point(bld, h, chain, map, loop, state_type, tn_name, span); },
        span);
    h.vars[static_cast<size_t>(out.table)].name = "trajectory";
    return std::vector<ir::Atom>{};
  });
  return out;
}

// `result = H[at..., Tn]`: the final state at the point `at`.
Stmt final_state_read(const Trajectory& t, VarId result, const std::vector<VarId>& at) {
  ir::IndexOp read{ir::Atom::of(t.table), {}};
  for (VarId x : at) read.indices.push_back(ir::affine_index(Affine::var(x)));
  read.indices.push_back(ir::affine_index(Affine::var(t.final_row)));
  return Stmt{{result}, std::move(read), t.span};
}

// The saving loop m.copy of h replaced by reads of H at its point m.at: its count
// `T = max(count, 0)`, its stack `for k: T. H[J, k]` and its final state H[J, Tn]; false when
// the loop or its count's size variable is not found.
bool read_saving_loop_from(ir::Function& h, const Trajectory& table, const Probe& m,
                           const Type& state_type) {
  auto [mb, mk] = find_stmt(h.body, m.copy);
  if (mb == nullptr) return false;
  Stmt saving = std::move(mb->stmts[mk]);
  const auto& l = *saving.as<ir::LoopOp>();
  const VarId t = saving.results[1];
  const VarId stack = saving.results[2];
  std::vector<Stmt> reads;
  reads.push_back(Stmt{{t}, ir::PrimOp{Prim::Max, {l.count, ir::Atom::i64(0)}}, saving.span});
  const auto sv = std::find_if(h.size_vars.begin(), h.size_vars.end(),
                               [&](const ir::SizeVar& s) { return s.param == -1 && s.var == t; });
  if (sv == h.size_vars.end()) return false;
  const VarId k = h.new_var("k", Type::scalar(Scalar::I64));
  ir::IndexOp row{ir::Atom::of(table.table), {}};
  for (VarId x : m.at) row.indices.push_back(ir::affine_index(Affine::var(x)));
  row.indices.push_back(ir::affine_index(Affine::var(k)));
  const VarId elem = h.new_var(h.vars[static_cast<size_t>(stack)].name, state_type);
  Block copy_body;
  copy_body.stmts.push_back(Stmt{{elem}, std::move(row), saving.span});
  copy_body.results.push_back(ir::Atom::of(elem));
  reads.push_back(Stmt{{stack},
                       ir::GenOp{{ir::IndexVar{k, SizeExpr::var(sv->name)}}, std::move(copy_body)},
                       saving.span});
  reads.push_back(final_state_read(table, saving.results[0], m.at));
  mb->stmts.erase(mb->stmts.begin() + static_cast<std::ptrdiff_t>(mk));
  mb->stmts.insert(mb->stmts.begin() + static_cast<std::ptrdiff_t>(mk),
                   std::make_move_iterator(reads.begin()), std::make_move_iterator(reads.end()));
  // Where the stack is only read element by element, its elements are read from H (the copy
  // then dies).
  if (read_through(h.body, stack, table.table, m.at, false) ==
      ir::use_counts(h)[static_cast<size_t>(stack)]) {
    read_through(h.body, stack, table.table, m.at, true);
  }
  return true;
}

}  // namespace

// f with the plain loop v of candidate c shared with the saving loops that later regions run at
// the same points (the gathers of a gradient run the loop of a sum's body again to save its
// states for their reverse pass, and the primal runs it for its final state):
//      let y = sum i. { ...; loop p = e for t < m { body } }
//      let g = for j. { ...; let (y2, T, ps) = loop p = e for t < m saving { body }; ... }
//  ==> let Tn = max(m, 0)
//      let H = for i. { ...; let (y1, T1, ps1) = loop ... saving { body };
//                       for k: Tn + 1. if k < T1 then ps1[k] else y1 }
//      let y = sum i. { ...; H[i, Tn] }
//      let g = for j. { ...; let T = max(m, 0); let ps = for k: T. H[j, k]
//                       let y2 = H[j, Tn]; ... }
// H holds every point's trajectory, the states at the start of each iteration and the final
// one, so the loop runs once per point instead of once per region. The count must not vary
// with the point (the table's rows have one length). H runs the loop where R ran it, at the
// same points, so no op and no error is added; the copies only read.
std::optional<ir::Function> try_share_trajectory(const ir::Program& program, const ir::Function& f,
                                                 const Candidate& c) {
  if (c.inner >= 0 || c.guard >= 0 || !is_plain_loop(f, c.value)) return std::nullopt;
  ir::Function g = f;
  const auto probed =
      probe(g, c, [&](const Block& slice, const Stmt& region, const std::vector<ir::IndexVar>& iv) {
        return loop_with_one_trip_count(slice, region, iv, c.value);
      });
  if (!probed) return std::nullopt;
  const ir::LoopOp& loop = *probed->slice.stmts.back().as<ir::LoopOp>();
  // CSE makes the saving loops read what the copies' slices compute.
  ir::Function h = eliminate_common_subexpressions(program, std::move(g)).function;
  const std::vector<Probe> matches = saving_loops_beside(h, probed->probes);
  if (matches.empty()) return std::nullopt;

  auto located = locate(h, h.body, c);
  if (!located || located->ivars.size() != probed->ivars.size()) return std::nullopt;
  const Span span = located->block->stmts[located->q].span;
  const Type state_type = h.type_of(c.value);
  if (state_type.is_tuple) return std::nullopt;
  Trajectory table = build_trajectory(h, located->chain, probed->ivars, loop, state_type, span);

  std::vector<VarId> r_at;
  for (const auto& iv : located->ivars) r_at.push_back(iv.var);
  located->block->stmts[located->q] = final_state_read(table, c.value, r_at);
  for (const auto& m : matches) {
    if (!read_saving_loop_from(h, table, m, state_type)) return std::nullopt;
  }
  auto [rb, rk] = find_stmt(h.body, c.region);
  if (rb == nullptr) return std::nullopt;
  rb->stmts.insert(rb->stmts.begin() + static_cast<std::ptrdiff_t>(rk),
                   std::make_move_iterator(table.made.stmts.begin()),
                   std::make_move_iterator(table.made.stmts.end()));
  return h;
}

}  // namespace cot::opt::region_cse_detail
