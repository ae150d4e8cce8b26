// Lowering: guards, ifs (and the predicates they test) and loops.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"

namespace cot::codegen::lowering {

std::vector<Val> Lowerer::slots_for(const ir::Stmt& s, bool masked) {
  std::vector<Val> slots;
  for (ir::VarId v : s.results) {
    const Type& t = f_.type_of(v);
    // A mask where the value may be a strong zero (docs/language.md §5.6).
    const bool mask = masked && flow_.may_be_whole(v);
    if (t.is_tensor()) {
      Val x = alloc_for(v, s.span, interp::SizeRule::Tensor, 0, true);
      if (mask && is_real(t.elem)) add_mask_local(x, c_hint(v));
      slots.push_back(std::move(x));
    } else {
      slots.push_back(make_slot(t, s.span, c_hint(v), mask, flow_.may_have_elems(v)));
    }
  }
  return slots;
}

void Lowerer::lower_guard(const ir::Stmt& s, const ir::GuardOp& op) {
  if (&op.pred == scope_.guard_true) {
    // The loops around it visit only points where it holds: the body's values,
    // unmasked unless the body masks them itself.
    bool scalars = true;
    for (ir::VarId v : s.results) scalars = scalars && f_.type_of(v).is_scalar();
    if (scalars) {
      scope_.guard_true = nullptr;
      const size_t known = scope_.facts.size();
      facts_of(op.pred, scope_.facts);
      std::vector<Val> res = lower_block(op.body, nullptr);
      scope_.facts.resize(known);
      for (size_t k = 0; k < s.results.size(); ++k) bind(s.results[k], res[k]);
      return;
    }
  }
  std::vector<Val> slots = slots_for(s, true);
  scope_.whole_pred = op.pred;
  ExprP holds = &op.pred == scope_.guard_true ? lit_bool(true) : pred(op.pred, s.span);
  const size_t known = scope_.facts.size();
  facts_of(op.pred, scope_.facts);
  Body then_body = nested([&] { lower_block(op.body, &slots); });
  scope_.facts.resize(known);
  Body else_body = nested([&] {
    for (const Val& sl : slots) assign_zero(sl, s.span);
  });
  if (auto c = as_bool(holds)) {
    for (Stmt& st : *c ? then_body : else_body) bodies_.back()->push_back(std::move(st));
  } else {
    emit(If{holds, std::move(then_body), std::move(else_body)});
  }
  for (size_t k = 0; k < s.results.size(); ++k) bind(s.results[k], slots[k]);
}

void Lowerer::lower_if(const ir::Stmt& s, const ir::IfOp& op) {
  std::vector<Val> slots = slots_for(s, true);
  ExprP c = atom(op.cond);
  // A condition this specialization decides (a test on sizes, as a Jacobian's
  // choice between forward and reverse mode) lowers only the branch taken: the
  // other would only cost compile time, and for a Jacobian it is most of the
  // code.
  if (auto known = as_bool(c)) {
    Body taken = nested([&] { lower_block(*known ? op.then_branch : op.else_branch, &slots); });
    for (Stmt& st : taken) bodies_.back()->push_back(std::move(st));
    for (size_t k = 0; k < s.results.size(); ++k) bind(s.results[k], slots[k]);
    return;
  }
  Body then_body = nested([&] { lower_block(op.then_branch, &slots); });
  Body else_body = nested([&] { lower_block(op.else_branch, &slots); });
  emit(If{c, std::move(then_body), std::move(else_body)});
  for (size_t k = 0; k < s.results.size(); ++k) bind(s.results[k], slots[k]);
}

ExprP Lowerer::pred(const Pred& p, Span span) {
  switch (p.kind) {
    case Pred::Kind::True:
      return lit_bool(true);
    case Pred::Kind::False:
      return lit_bool(false);
    case Pred::Kind::Atom: {
      ExprP a = atom(ir::Atom::of(p.atom));
      return p.negated ? not_(a) : a;
    }
    case Pred::Kind::Ge0:
    case Pred::Kind::Eq0: {
      Site st;
      st.kind = Site::Kind::Overflow;
      st.span = span;
      st.message = "integer overflow while evaluating the predicate " +
                   scope_.whole_pred.to_string([this](int32_t v) { return name_of(v); });
      ExprP a = affine_checked(p.expr, st);
      return prim(p.kind == Pred::Kind::Ge0 ? Prim::Ge : Prim::Eq, {a, lit_i64(0)});
    }
    case Pred::Kind::And:
    case Pred::Kind::Or: {
      const bool is_and = p.kind == Pred::Kind::And;
      // Pure when no conjunct needs statements: one expression.
      Body probe;
      std::vector<ExprP> parts;
      bool pure = true;
      {
        bodies_.push_back(&probe);
        for (const Pred& k : p.kids) parts.push_back(pred(k, span));
        bodies_.pop_back();
        pure = probe.empty();
      }
      if (pure) {
        ExprP acc = lit_bool(is_and);
        for (ExprP& e : parts) acc = is_and ? and_(acc, e) : or_(acc, e);
        return acc;
      }
      // Short-circuit with statements: r = kid0; if (r == is_and) r = kid1; ...
      LocalId r = mutable_local("holds", Scalar::Bool, lit_bool(is_and));
      for (const Pred& k : p.kids) {
        Body b = nested([&] { emit(Assign{r, pred(k, span)}); });
        emit(If{is_and ? local(out_, r) : not_(local(out_, r)), std::move(b), {}});
      }
      return local(out_, r);
    }
  }
  return lit_bool(false);
}

ExprP Lowerer::affine_checked(const Affine& a, const Site& st) {
  ExprP acc = lit_i64(a.constant_term());
  int over = -1;
  auto over_site = [&] {
    if (over < 0) over = site(st);
    return over;
  };
  for (const auto& [v, c] : a.terms()) {
    ExprP x = atom(ir::Atom::of(v));
    ExprP term = mul_i64(lit_i64(c), x);
    if (!as_i64(term) && !range(term)) term = int_op(Prim::Mul, lit_i64(c), x, over_site());
    ExprP sum = add_i64(acc, term);
    if (!as_i64(sum) && !range(sum)) sum = int_op(Prim::Add, acc, term, over_site());
    acc = sum;
  }
  return acc;
}

Lowerer::LoopState Lowerer::loop_state(const ir::Stmt& s, const ir::LoopOp& op,
                                       const std::vector<std::optional<PointUpdatePlan>>& updates) {
  const size_t n = op.state.size();
  std::vector<Val> cur(n), next(n);
  std::vector<Body> next_allocs(n);
  std::vector<size_t> next_at(n, 0);
  for (size_t k = 0; k < n; ++k) {
    const Type& t = f_.type_of(op.state[k]);
    const std::string hint = c_hint(op.state[k]);
    if (t.is_tuple) throw Unsupported{"a loop state of tuple type"};
    // A strong zero in the state stays one (docs/language.md §5.6): a mask local
    // where the value may be one, element marks where its elements may be.
    const bool marks = needs_marks(op.state[k]);
    if (t.is_tensor()) {
      cur[k] = alloc_tensor(t.elem, shape_of(t, s.span), s.span, hint, interp::SizeRule::Tensor, 0,
                            false, marks);
      auto alloc_next = [&] {
        next[k] = alloc_tensor(t.elem, cur[k].dims, s.span, hint + "_next",
                               interp::SizeRule::Tensor, 0, false, marks);
      };
      if (updates[k]) {
        next_at[k] = bodies_.back()->size();
        next_allocs[k] = nested(alloc_next);  // emitted there only if the step needs it
      } else {
        alloc_next();
      }
    } else {
      cur[k] = scalar_val(local(out_, mutable_local(hint, t.elem, nullptr)), t.elem);
    }
    if (flow_.may_be_whole(op.state[k]) && is_real(t.elem)) {
      add_mask_local(cur[k], hint);
      if (t.is_tensor()) add_mask_local(next[k], hint + "_next");
    }
  }
  return LoopState{std::move(cur), std::move(next), std::move(next_allocs), std::move(next_at)};
}

Lowerer::SavedStates Lowerer::saved_states(const ir::Stmt& s, const ir::LoopOp& op,
                                           const std::vector<Val>& cur, const ExprP& count) {
  const size_t n = op.state.size();
  SavedStates saved;
  std::vector<Val>& stacks = saved.stacks;
  std::vector<ExprP>& numels = saved.numels;
  std::vector<ExprP>& allowed = saved.allowed;
  stacks.resize(n);
  numels.resize(n);
  allowed.resize(n);
  saved.sites.assign(n, -1);
  for (size_t k = 0; k < n; ++k) {
    numels[k] = cur[k].is_tensor() ? declare(cur[k].numel(), "numel") : lit_i64(1);
    if (auto c = as_i64(numels[k])) {
      allowed[k] = lit_i64(*c > 0 ? in_.max_tensor_elements / *c : INT64_MAX);
    } else {
      // Only ahead of time: the state's shape is known at run time.
      LocalId a = out_.new_local("allowed", Scalar::I64);
      emit(CheckedInt{a,
                      Prim::FloorDiv,
                      {lit_i64(in_.max_tensor_elements), prim(Prim::Max, {numels[k], lit_i64(1)})},
                      0});
      allowed[k] = local(out_, a);
    }
    Site st;
    st.kind = Site::Kind::SavedStates;
    st.span = s.span;
    st.message = name_of(op.state[k]);
    st.shape = {in_.max_tensor_elements};
    saved.sites[k] = site(std::move(st));
    const Scalar elem = f_.type_of(op.state[k]).elem;
    stacks[k].kind = Val::Kind::Tensor;
    stacks[k].type = elem;
    stacks[k].offset = lit_i64(0);
    stacks[k].pointer = out_.new_local(c_hint(op.state[k]) + "_stack", elem, true);
    // The saved strong zeros: marks beside the stack, allocated and grown
    // alike.
    if (needs_marks(s.results[n + 1 + k])) {
      stacks[k].mask_pointer =
          out_.new_local(c_hint(op.state[k]) + "_stack_marks", Scalar::Bool, true);
    }
    stacks[k].drops_marks = marks_unread(s.results[n + 1 + k]);
    std::vector<LocalId> buffers{stacks[k].pointer};
    if (stacks[k].mask_pointer >= 0) buffers.push_back(stacks[k].mask_pointer);
    if (!op.is_while) {
      ExprP rows = select(prim(Prim::Lt, {count, allowed[k]}), count, allowed[k]);
      ExprP elems = mul_i64(rows, numels[k]);
      if (auto e = as_i64(elems)) {
        for (LocalId b : buffers) emit(Alloc{.pointer = b, .count = lit_i64(*e)});
      } else {
        out_.uses_heap = true;
        ExprP count_n = declare(elems, "n");
        for (LocalId b : buffers) emit(Alloc{.pointer = b, .count = count_n});
      }
    } else {
      out_.uses_heap = true;
      for (LocalId b : buffers) emit(StackInit{b});
    }
  }
  return saved;
}

void Lowerer::loop_step(const ir::LoopOp& op, const std::vector<Val>& cur,
                        const std::vector<Val>& next,
                        std::vector<std::optional<PointUpdatePlan>>& updates) {
  const size_t n = op.state.size();
  std::vector<Val> dests(n);
  for (size_t k = 0; k < n; ++k) {
    if (cur[k].is_tensor()) dests[k] = next[k];
  }
  // Scalars are staged in fresh locals first: the body may yield the state in
  // another order.
  std::vector<ir::VarId> placed;
  std::map<ir::VarId, int> uses;
  for (const ir::Atom& a : op.body.results) {
    if (a.is_var) ++uses[a.var];
  }
  auto placeable = [&](size_t k) {
    const ir::Atom& a = op.body.results[k];
    return cur[k].is_tensor() && a.is_var && uses[a.var] == 1 && defined_in(op.body, a.var) &&
           !(needs_marks(a.var) && next[k].mask_pointer < 0);
  };
  for (size_t k = 0; k < n; ++k) {
    if (placeable(k) && !updates[k]) {
      env_.pending_dest[op.body.results[k].var] = next[k];
      placed.push_back(op.body.results[k].var);
    }
  }
  for (const ir::Stmt& st : op.body.stmts) {
    bool done = false;
    for (size_t k = 0; k < n && !done; ++k) {
      if (!updates[k] || updates[k]->gen != &st) continue;
      const auto* gen = st.as<ir::GenOp>();
      done = lower_point_update(st, *gen, cur[k], next[k], *updates[k]);
      if (!done && placeable(k)) {
        // As any generator, into the next buffer.
        env_.pending_dest[op.body.results[k].var] = next[k];
        placed.push_back(op.body.results[k].var);
      }
    }
    if (!done) lower_stmt(st);
  }
  for (ir::VarId v : placed) env_.pending_dest.erase(v);
  std::vector<ExprP> staged(n), staged_masks(n);
  for (size_t k = 0; k < n; ++k) {
    Val r = atom_val(op.body.results[k]);
    if (updates[k] && updates[k]->mode == PointUpdatePlan::Mode::InPlace) {
      continue;  // stored below
    } else if (cur[k].is_tensor()) {
      assign(next[k], r);  // in place when the body wrote it there
    } else {
      LocalId l = out_.new_local(c_hint(op.state[k]) + "_next", cur[k].type);
      emit(Declare{l, r.scalar});
      staged[k] = local(out_, l);
      if (cur[k].mask) {
        staged_masks[k] = declare(r.mask ? r.mask : lit_i64(0), c_hint(op.state[k]) + "_next_mask");
      } else if (may_be_strong(r.mask)) {
        lost_marks(cur[k].scalar->local);
      }
    }
  }
  // The point updates: their changed slices stored in the state's own buffer, after every
  // read of the old state in the step.
  for (size_t k = 0; k < n; ++k) {
    if (updates[k] && updates[k]->mode != PointUpdatePlan::Mode::None) {
      store_point_update(*updates[k]->gen->as<ir::GenOp>(), cur[k], next[k], *updates[k]);
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (updates[k] && updates[k]->mode != PointUpdatePlan::Mode::None) continue;
    if (cur[k].is_tensor()) {
      emit(Swap{cur[k].pointer, next[k].pointer});
      if (cur[k].mask_pointer >= 0) emit(Swap{cur[k].mask_pointer, next[k].mask_pointer});
      if (cur[k].mask) emit(Assign{cur[k].mask->local, next[k].mask});
    } else {
      emit(Assign{cur[k].scalar->local, staged[k]});
      if (cur[k].mask) emit(Assign{cur[k].mask->local, staged_masks[k]});
    }
  }
}

void Lowerer::lower_loop(const ir::Stmt& s, const ir::LoopOp& op) {
  const size_t n = op.state.size();
  const bool saving = op.saves_states;
  std::vector<std::optional<PointUpdatePlan>> updates = find_point_updates(op);
  LoopState state = loop_state(s, op, updates);
  std::vector<Val>& cur = state.cur;
  const std::vector<Val>& next = state.next;
  for (size_t k = 0; k < n; ++k) {
    Val init = atom_val(op.init[k]);
    assign(cur[k], init);
    Val st = cur[k];
    bind(op.state[k], st);
  }
  LocalId iters = mutable_local("iterations", Scalar::I64, lit_i64(0));
  ExprP count;
  if (!op.is_while) {
    count = atom(op.count);
    count = declare(select(prim(Prim::Gt, {count, lit_i64(0)}), count, lit_i64(0)), "count");
  }
  SavedStates saved;
  if (saving) saved = saved_states(s, op, cur, count);
  std::vector<Val>& stacks = saved.stacks;
  const std::vector<ExprP>& numels = saved.numels;
  const std::vector<ExprP>& allowed = saved.allowed;
  const std::vector<int>& save_sites = saved.sites;
  auto save = [&](const ExprP& it) {
    for (size_t k = 0; k < n && saving; ++k) {
      if (as_i64(allowed[k]) != INT64_MAX) {
        fail_unless(prim(Prim::Lt, {it, allowed[k]}), save_sites[k], {add_i64(it, lit_i64(1))});
      }
      if (op.is_while) {
        ExprP grown = mul_i64(add_i64(it, lit_i64(1)), numels[k]);
        emit(StackGrow{stacks[k].pointer, grown});
        if (stacks[k].mask_pointer >= 0) emit(StackGrow{stacks[k].mask_pointer, grown});
      }
      ExprP at = mul_i64(it, numels[k]);
      Val row = view(stacks[k], at, cur[k].is_tensor() ? cur[k].dims : std::vector<ExprP>{});
      assign(row, cur[k]);
    }
  };
  auto step = [&] { loop_step(op, cur, next, updates); };
  ++scope_.loop_depth;
  if (!op.is_while) {
    LocalId it = out_.new_local(op.iter >= 0 ? c_hint(op.iter) : "it", Scalar::I64);
    if (auto c = as_i64(count); c && *c > 0) ints_.ranges[it] = Interval{0, *c - 1};
    if (auto r = range(count); r && r->second > 0) ints_.ranges[it] = Interval{0, r->second - 1};
    if (op.iter >= 0) bind(op.iter, scalar_val(local(out_, it), Scalar::I64));
    Body b = nested([&] {
      save(local(out_, it));
      step();
    });
    emit(For{it, lit_i64(0), count, std::move(b), false});
    emit(Assign{iters, count});
  } else {
    const int limit_site = [&] {
      Site st;
      st.kind = Site::Kind::WhileLimit;
      st.span = s.span;
      st.help =
          "if it should run longer, raise the limit with "
          "--max-iterations N (0: no limit; in "
          "the C++ API, EvalOptions::max_while_iterations; in Python, "
          "max_while_iterations=)";
      return site(std::move(st));
    }();
    Body b = nested([&] {
      std::vector<Val> c = lower_block(op.cond, nullptr);
      Body stop = nested([&] { emit(Break{}); });
      emit(If{not_(c.at(0).scalar), std::move(stop), {}});
      ExprP mw = local(out_, max_while_);
      fail_unless(or_(prim(Prim::Le, {mw, lit_i64(0)}), prim(Prim::Lt, {local(out_, iters), mw})),
                  limit_site, {mw});
      save(local(out_, iters));
      step();
      emit(Assign{iters, add_i64(local(out_, iters), lit_i64(1))});
    });
    emit(Forever{std::move(b)});
  }
  --scope_.loop_depth;
  // The next buffers the step used (a state updated in place needs none), where they would
  // have been allocated (last first, so the earlier positions still hold).
  Body& parent = *bodies_.back();
  for (size_t k = n; k-- > 0;) {
    if (!updates[k] || updates[k]->mode == PointUpdatePlan::Mode::InPlace) continue;
    Body& b = state.next_allocs[k];
    parent.insert(parent.begin() + static_cast<ptrdiff_t>(state.next_at[k]),
                  std::make_move_iterator(b.begin()), std::make_move_iterator(b.end()));
  }
  for (size_t k = 0; k < n; ++k) bind(s.results[k], cur[k]);
  if (saving) {
    ExprP T = local(out_, iters);
    bind(s.results[n], scalar_val(T, Scalar::I64));
    for (size_t k = 0; k < n; ++k) {
      Val st = stacks[k];
      st.dims = {T};
      if (cur[k].is_tensor()) st.dims.insert(st.dims.end(), cur[k].dims.begin(), cur[k].dims.end());
      bind(s.results[n + 1 + k], st);
    }
  }
}

}  // namespace cot::codegen::lowering
