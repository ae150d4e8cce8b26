// The transpose of a linear loop (docs/design.md §7.4): a loop that runs the iterations
// backwards over the states the primal loop saved, carrying the state's cotangent and the
// cotangents of the tangents the body reads from outside; a tensor the body reads at positions
// that move with the counter gets each step's cotangent saved and scattered once after it.
#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "ad/tangent.h"
#include "ad/transpose.h"
#include "ad/transpose_internal.h"
#include "ir/clone.h"
#include "ir/uses.h"

namespace cot::ad {

using transpose_detail::emit_affine;

namespace {

// The statements of a loop's body that read tangent tensor x one element (or slice) per
// iteration at a position that moves with it, as a scan reads its xs: x[t], A[i, t + 1]. They
// must be all of the body's uses of x, at its top level, with affine indices over the counter
// and what is bound outside the body, the counter among them. Empty when x is used otherwise.
std::vector<size_t> stepped_reads(const ir::Function& f, const ir::LoopOp& op, ir::VarId x) {
  if (op.is_while || f.type_of(x).is_tuple || f.type_of(x).shape.empty()) return {};
  // What varies per iteration besides the counter: the state and the body's values.
  std::unordered_set<ir::VarId> local(op.state.begin(), op.state.end());
  for (const auto& s : op.body.stmts) local.insert(s.results.begin(), s.results.end());
  std::vector<size_t> reads;
  for (size_t k = 0; k < op.body.stmts.size(); ++k) {
    const auto* r = op.body.stmts[k].as<ir::IndexOp>();
    if (r == nullptr || !r->tensor.is_var || r->tensor.var != x) continue;
    bool moves = false;
    for (const auto& ix : r->indices) {
      if (!ix.is_affine) return {};
      for (const auto& [v, c] : ix.affine.terms()) {
        (void)c;
        if (v == op.iter) moves = true;
        if (local.count(v) != 0) return {};
      }
    }
    if (!moves) return {};
    reads.push_back(k);
  }
  int uses = 0;
  ir::for_each_use(op.body, [&](ir::VarId v) { uses += v == x ? 1 : 0; });
  if (reads.empty() || uses != static_cast<int>(reads.size())) return {};
  return reads;
}

// A saving linear loop is not emitted, but its count T' names the type of its stacks, which the
// cotangents of the stacks are gathered over: binds T' (== T).
void bind_linear_count(ir::Builder& b, const ir::Stmt& s, const ir::LoopOp& l) {
  ir::Stmt bind;
  bind.results = {s.results[l.state.size()]};
  bind.op = ir::PrimOp{Prim::Add, {l.count, ir::Atom::i64(0)}};
  bind.span = s.span;
  b.append(std::move(bind));
}

// The cotangent of tensor x (type xt) from a stepped read `x[e(t)]` of the body: the reverse
// loop saved each step's cotangent of the read, scattered at the positions the forward steps
// read. Reverse step q computed the cotangent of forward step T - 1 - q's read; the stack holds
// it at q + 1 (the state at the start of the next step), the final state for the last.
ir::Atom scatter_stepped_read(ir::Builder& b, const ir::LoopOp& op, const ir::IndexOp& read,
                              const Type& xt, const ir::Builder::SavingLoop& reverse,
                              ir::VarId stack, ir::VarId final_ct, Span span) {
  const std::vector<SizeExpr> pre(xt.shape.begin(),
                                  xt.shape.begin() + static_cast<long>(read.indices.size()));
  const ir::Atom count = ir::Atom::of(reverse.count);
  const ir::Atom fin = ir::Atom::of(final_ct);
  const ir::VarId q = b.index_var("q");
  auto position_and_value = [&] {
    const ir::Atom last = ir::Atom::of(b.prim(Prim::Sub, {count, ir::Atom::i64(1)}));
    const ir::VarId step = b.prim(Prim::Sub, {last, ir::Atom::of(q)});
    std::vector<ir::Atom> res;
    for (const auto& ix : read.indices) {
      auto at = ix.affine.substitute(op.iter, Affine::var(step));
      if (!at) throw std::logic_error("ad: a stepped read's index overflows");
      res.push_back(emit_affine(b, *at));
    }
    const ir::Atom after = ir::Atom::of(b.prim(Prim::Add, {ir::Atom::of(q), ir::Atom::i64(1)}));
    const ir::Atom saved = ir::Atom::of(b.prim(Prim::Lt, {after, count}));
    auto from_stack = [&] {
      return std::vector<ir::Atom>{
          ir::Atom::of(b.index(ir::Atom::of(stack), {ir::computed_index(after)}))};
    };
    auto from_final = [&] { return std::vector<ir::Atom>{fin}; };
    res.push_back(ir::Atom::of(b.if_(saved, from_stack, from_final)[0]));
    return res;
  };
  return ir::Atom::of(
      b.accum(pre, {ir::IndexVar{q, SizeExpr::var(reverse.size_name)}}, position_and_value, span));
}

}  // namespace

// A linear loop `ds = loop ds = init for k < T { body }` transposes to a loop that runs the
// iterations backwards, carrying the state's cotangent and the cotangents of the tangents the
// body reads from outside (summed over iterations).
const Transposer::LoopCts& Transposer::loop_cts(Level& lv, size_t idx) {
  if (auto it = lv.loops.find(idx); it != lv.loops.end()) return *it->second;
  if (const auto* l = lv.stmts[idx].as<ir::LoopOp>(); l && l->saves_states) {
    bind_linear_count(b_, lv.stmts[idx], *l);
  }
  const auto cts = result_cts(lv, idx);
  const ir::Stmt& s = lv.stmts[idx];
  const auto& op = *s.as<ir::LoopOp>();
  if (std::none_of(cts.begin(), cts.end(), [](const auto& c) { return c.has_value(); })) {
    // A linear map of a zero cotangent is zero: no reverse loop (a symbolic zero, as JAX's).
    auto lc = std::make_unique<LoopCts>();
    lc->init.assign(op.state.size(), std::nullopt);
    return *(lv.loops[idx] = std::move(lc));
  }
  if (op.is_while) throw std::logic_error("ad: a linear while-loop (unzip makes for-loops)");
  ir::Function& f = b_.function();
  std::vector<ir::VarId> free;
  for (ir::VarId x : free_vars(op.body)) {
    if (tangent_.count(x)) free.push_back(x);
  }
  std::sort(free.begin(), free.end());
  // A tensor the body reads at a position that moves with the iteration is not carried (a
  // dense cotangent updated at one position per step): each step's cotangent of the read is a
  // state of the reverse loop, which saves it, and is scattered after the loop (the cotangent
  // of a scan's xs is its transpose's ys, as in JAX).
  std::vector<ir::VarId> carried;
  std::vector<std::pair<ir::VarId, size_t>> stepped;  // (tensor, read statement of the body)
  for (ir::VarId x : free) {
    auto reads = stepped_reads(f, op, x);
    if (reads.empty()) carried.push_back(x);
    for (size_t k : reads) stepped.emplace_back(x, k);
  }
  std::vector<ir::Atom> init;
  for (size_t j = 0; j < op.state.size(); ++j) {
    init.push_back(cts[j] ? *cts[j] : zeros(b_, f.type_of(op.state[j])));
  }
  for (ir::VarId x : carried) init.push_back(zeros(b_, f.type_of(x)));
  for (const auto& [x, k] : stepped) {
    init.push_back(zeros(b_, f.type_of(op.body.stmts[k].results[0])));
  }
  const size_t n = op.state.size();
  const size_t nc = carried.size();
  auto body = [&](const std::vector<ir::VarId>& state, ir::VarId kk) {
    ir::Atom last = ir::Atom::of(b_.prim(Prim::Sub, {op.count, ir::Atom::i64(1)}));
    ir::Atom k = ir::Atom::of(b_.prim(Prim::Sub, {last, ir::Atom::of(kk)}));
    ir::CloneMap map;
    map.atoms[op.iter] = k;
    std::vector<ir::VarId> holders;
    for (size_t j = 0; j < n; ++j) {
      holders.push_back(
          f.new_var(f.vars[static_cast<size_t>(op.state[j])].name, f.type_of(op.state[j])));
      map.atoms[op.state[j]] = ir::Atom::of(holders.back());
      tangent_.insert(holders.back());
    }
    ir::Block copy = ir::clone_block(f, op.body, f, map);
    std::vector<std::optional<ir::Atom>> rcts;
    for (size_t j = 0; j < n; ++j) rcts.push_back(ir::Atom::of(state[j]));
    auto lvl = open(std::move(copy), rcts);
    std::vector<ir::Atom> next;
    for (size_t j = 0; j < n; ++j) {
      auto c = ct(*lvl, holders[j]);
      // A saving loop's stack holds the state at the start of each iteration.
      if (op.saves_states && cts[n + 1 + j]) {
        ir::Atom at = ir::Atom::of(b_.index(*cts[n + 1 + j], {ir::computed_index(k)}, s.span));
        c = c ? add_values(b_, *c, at) : at;
      }
      next.push_back(c ? *c : zeros(b_, f.type_of(op.state[j])));
    }
    for (size_t q = 0; q < nc; ++q) {
      auto c = ct(*lvl, carried[q]);
      next.push_back(c ? add_values(b_, ir::Atom::of(state[n + q]), *c)
                       : ir::Atom::of(state[n + q]));
    }
    for (const auto& [x, r] : stepped) {
      const ir::VarId read = op.body.stmts[r].results[0];
      auto c = ct(*lvl, map.atoms.at(read).var);
      next.push_back(c ? *c : zeros(b_, f.type_of(read)));
    }
    return next;
  };
  auto lc = std::make_unique<LoopCts>();
  if (stepped.empty()) {
    auto out = b_.loop_for(init, op.count, body, {}, "kk", s.span);
    for (size_t j = 0; j < n; ++j) lc->init.push_back(ir::Atom::of(out[j]));
    for (size_t q = 0; q < nc; ++q) lc->free[carried[q]] = ir::Atom::of(out[n + q]);
    return *(lv.loops[idx] = std::move(lc));
  }
  auto out = b_.loop_for_saving(init, op.count, body, {}, "kk", s.span);
  for (size_t j = 0; j < n; ++j) lc->init.push_back(ir::Atom::of(out.final_state[j]));
  for (size_t q = 0; q < nc; ++q) lc->free[carried[q]] = ir::Atom::of(out.final_state[n + q]);
  for (size_t e = 0; e < stepped.size(); ++e) {
    const auto [x, r] = stepped[e];
    const ir::Atom scattered =
        scatter_stepped_read(b_, op, *op.body.stmts[r].as<ir::IndexOp>(), f.type_of(x), out,
                             out.stacks[n + nc + e], out.final_state[n + nc + e], s.span);
    auto& slot = lc->free[x];
    slot = slot ? add_values(b_, *slot, scattered) : scattered;
  }
  return *(lv.loops[idx] = std::move(lc));
}

// What a linear loop contributes to v: the cotangents of the initial states that are v, and
// v's cotangent as a tangent the body reads from outside.
std::optional<ir::Atom> Transposer::loop_contribution(Level& lv, size_t idx, ir::VarId v) {
  const LoopCts& lc = loop_cts(lv, idx);
  std::optional<ir::Atom> out;
  const auto& op = *lv.stmts[idx].as<ir::LoopOp>();
  for (size_t j = 0; j < op.init.size(); ++j) {
    if (op.init[j].is_var && op.init[j].var == v && lc.init[j]) {
      out = out ? add_values(b_, *out, *lc.init[j]) : *lc.init[j];
    }
  }
  if (auto it = lc.free.find(v); it != lc.free.end() && it->second) {
    out = out ? add_values(b_, *out, *it->second) : *it->second;
  }
  return out;
}

}  // namespace cot::ad
