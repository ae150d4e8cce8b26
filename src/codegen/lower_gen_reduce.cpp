// Lowering: generators (GenOp) and reductions (ReduceOp), with their strong-zero marks.
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"

namespace cot::codegen::lowering {

void Lowerer::lower_gen(const ir::Stmt& s, const ir::GenOp& op) {
  const ir::VarId v = s.results[0];
  std::vector<ExprP> ext = extents(op.ivars, s.span, false);
  const size_t r = op.ivars.size();
  Val dst = alloc_for(v, s.span, interp::SizeRule::Generator, r);
  if (static_size_error(dst.dims, interp::SizeRule::Generator, r)) {
    bind(v, dst);  // it has failed: what follows is never reached
    return;
  }
  std::vector<ExprP> inner_dims(dst.dims.begin() + static_cast<ptrdiff_t>(r), dst.dims.end());
  Val inner = dst;
  inner.dims = inner_dims;
  ExprP inner_n = inner.numel();
  // Inside another loop the points still run independently, on one thread (in vector lanes
  // when the body allows): the outermost loop alone forks.
  const bool parallel = scope_.loop_depth == 0;
  if (parallel) out_.uses_parallel = true;
  ++scope_.loop_depth;
  for_points(op.ivars, ext, parallel ? PointLoops::Parallel : PointLoops::Independent,
             [&](const ExprP& point) {
               Val slot = view(dst, add_i64(dst.offset, mul_i64(point, inner_n)), inner_dims);
               std::vector<Val> dests{slot};
               lower_block(op.body, &dests);
             });
  --scope_.loop_depth;
  // Every element written with a mark that folded to "not a strong zero": the marks are all
  // 0, and reads need not load them.
  if (dst.mask_pointer >= 0 && zeros_.marks_set.count(dst.mask_pointer) == 0 &&
      pending_free_marks(v)) {
    dst.mask_pointer = -1;
  }
  attach_mark_pred(v, dst);
  bind(v, dst);
}

bool Lowerer::pending_free_marks(ir::VarId v) const {
  return env_.own_buffer.count(v) != 0;
}

void Lowerer::attach_mark_pred(ir::VarId v, Val& x) const {
  auto it = zeros_.mark_preds.find(v);
  if (it != zeros_.mark_preds.end()) x.mark_pred = std::make_shared<const MarkPred>(it->second);
}

void Lowerer::lower_reduce(const ir::Stmt& s, const ir::ReduceOp& op) {
  const ir::VarId v = s.results[0];
  const Type& t = f_.type_of(v);
  const bool is_sum = op.kind == ir::ReduceKind::Sum;
  const std::string hint = c_hint(v);
  // Masks of the terms: `live` counts terms that are not masked, `strong` whether one was a
  // strong zero; only kept when a term can be masked.
  LocalId live = -1, strong = -1, have = -1;
  std::vector<ExprP> ext = extents(op.ivars, s.span, true);
  ExprP points = lit_i64(1);
  for (const ExprP& e : ext) {
    points = mul_i64(points, select(prim(Prim::Gt, {e, lit_i64(0)}), lit_i64(1), lit_i64(0)));
  }
  auto start_flags = [&] {
    live = mutable_local(hint + "_live", Scalar::Bool, lit_bool(false));
    strong = mutable_local(hint + "_strong", Scalar::Bool, lit_bool(false));
  };
  const bool int_extreme = t.elem == Scalar::I64 && !is_sum;
  const int overflow = message_site(s.span, "integer overflow in a sum of i64 values");
  if (t.is_scalar()) {
    ExprP start = reduction_start(op.kind, t.elem);
    LocalId acc = mutable_local(hint, t.elem, start);
    if (int_extreme) have = mutable_local(hint + "_have", Scalar::Bool, lit_bool(false));
    bool masked_terms = false;
    Body flags_decl = nested(start_flags);
    const Pred* guard = is_sum ? single_guard(op.body, 0) : nullptr;
    if (guard != nullptr && may_tighten(*guard, op.ivars, ext)) {
      scope_.tighten = guard;
      scope_.tighten_strong = strong;
      masked_terms = true;  // skipped points are strong zeros
    }
    ++scope_.loop_depth;
    const size_t loops_at = bodies_.back()->size();
    for_points(op.ivars, ext, PointLoops::Ordered, [&](const ExprP&) {
      std::vector<Val> res = lower_block(op.body, nullptr);
      const Val& x = res.at(0);
      ExprP acc_e = local(out_, acc);
      Body combine = nested([&] {
        if (t.elem == Scalar::I64) {
          if (is_sum) {
            emit(Assign{acc, int_op(Prim::Add, acc_e, x.scalar, overflow)});
          } else {
            Prim cmp = op.kind == ir::ReduceKind::Max ? Prim::Gt : Prim::Lt;
            emit(Assign{acc, select(or_(not_(local(out_, have)), prim(cmp, {x.scalar, acc_e})),
                                    x.scalar, acc_e)});
            emit(Assign{have, lit_bool(true)});
          }
        } else {
          emit(Assign{acc, real_combine(op.kind, acc_e, x.scalar)});
        }
      });
      add_term(x, is_sum, masked_terms, live, strong, std::move(combine));
    });
    --scope_.loop_depth;
    if (is_sum && t.elem != Scalar::I64) {
      // A real sum: the loop-IR passes may interchange its loops with a generator's
      // (interchange_sums.h) or, when its terms are never masked, run them in lanes
      // (long_sums.h).
      Body& b = *bodies_.back();
      for (size_t k = loops_at; k < b.size(); ++k) {
        if (auto* f = std::get_if<For>(&b[k].op)) {
          f->sum_of = acc;
          f->sum_masked = masked_terms;
        }
      }
    }
    if (masked_terms) {
      // The flags must be declared before the loop: move their declarations in front of it.
      Body& b = *bodies_.back();
      auto at = std::find_if(b.begin(), b.end(), [&](const Stmt& st) {
        const auto* d = std::get_if<Declare>(&st.op);
        return d != nullptr && d->local == acc;
      });
      b.insert(at, flags_decl.begin(), flags_decl.end());
    }
    if (int_extreme) {
      fail_unless(local(out_, have),
                  message_site(s.span, std::string(ast::to_string(op.kind)) +
                                           " over an empty range of integers has no value"));
    }
    ExprP mask;
    if (is_sum) mask = sum_mask(masked_terms, live, strong, points);
    bind(v,
         scalar_val(local(out_, acc), t.elem, mask ? declare_mask(mask, hint + "_mask") : nullptr));
    return;
  }
  // A tensor-valued reduction accumulates elementwise into its destination.
  Val dst = alloc_for(v, s.span);
  if (static_size_error(dst.dims, interp::SizeRule::Tensor, 0)) {
    bind(v, dst);  // it has failed: what follows is never reached
    return;
  }
  if (t.elem != Scalar::I64 || is_sum) {
    ExprP start = reduction_start(op.kind, t.elem);
    emit(Fill{dst.pointer, dst.offset, dst.numel(), start});
  } else {
    have = mutable_local(hint + "_have", Scalar::Bool, lit_bool(false));
  }
  bool masked_terms = false;
  Body flags_decl = nested(start_flags);
  const size_t flags_at = bodies_.back()->size();
  // Element marks: the sum is a strong zero where a term was one and none was live.
  const LocalId live_marks = start_marks(dst, hint);
  const Pred* guard = is_sum && live_marks < 0 ? single_guard(op.body, 0) : nullptr;
  if (guard != nullptr && may_tighten(*guard, op.ivars, ext)) {
    scope_.tighten = guard;
    scope_.tighten_strong = strong;
    masked_terms = true;
  }
  ++scope_.loop_depth;
  for_points(op.ivars, ext, PointLoops::Ordered, [&](const ExprP&) {
    std::vector<Val> res = lower_block(op.body, nullptr);
    const Val& x = res.at(0);
    Body combine = nested([&] {
      if (live_marks >= 0) {
        add_marked(dst, dst.offset, lit_i64(0), x, live_marks);
      } else if (have >= 0) {
        Body first = nested([&] { copy(dst, x); });
        Body rest = nested([&] {
          emit(Combine{op.kind, dst.pointer, dst.offset, x.pointer, x.offset, dst.numel(), -1});
        });
        emit(If{local(out_, have), std::move(rest), std::move(first)});
        emit(Assign{have, lit_bool(true)});
      } else {
        emit(Combine{op.kind, dst.pointer, dst.offset, x.pointer, x.offset, dst.numel(),
                     t.elem == Scalar::I64 ? overflow : -1});
      }
    });
    add_term(x, is_sum, masked_terms, live, strong, std::move(combine));
    if (live_marks >= 0) mark_strong(dst, dst.offset, dst.numel(), x.mask, lit_bool(true));
  });
  --scope_.loop_depth;
  if (masked_terms) {
    Body& b = *bodies_.back();
    b.insert(b.begin() + static_cast<ptrdiff_t>(flags_at), flags_decl.begin(), flags_decl.end());
  }
  finish_marks(dst, live_marks);
  if (have >= 0) {
    ExprP nonempty = prim(Prim::Gt, {dst.numel(), lit_i64(0)});
    fail_unless(or_(local(out_, have), not_(nonempty)),
                message_site(s.span, std::string(ast::to_string(op.kind)) +
                                         " over an empty range of integers has no value"));
  }
  Val out = dst;
  if (is_sum) out.mask = declare_mask(sum_mask(masked_terms, live, strong, points), hint + "_mask");
  bind(v, out);
}

LocalId Lowerer::start_marks(const Val& dst, const std::string& hint) {
  if (dst.mask_pointer < 0) return -1;
  emit(Fill{dst.mask_pointer, dst.offset, dst.numel(), lit_bool(false)});
  Val live = alloc_tensor(Scalar::Bool, dst.dims, Span{}, hint + "_live");
  emit(Fill{live.pointer, lit_i64(0), dst.numel(), lit_bool(false)});
  return live.pointer;
}

void Lowerer::add_marked(const Val& dst, const ExprP& at, const ExprP& rel, const Val& x,
                         LocalId live_marks) {
  auto add_one = [&](const ExprP& d, const ExprP& r, const ExprP& value, const ExprP& marked) {
    Body add = nested([&] {
      emit(Store{dst.pointer, d, prim(Prim::Add, {load(dst.type, dst.pointer, d), value})});
      emit(Store{live_marks, r, lit_bool(true)});
    });
    if (as_bool(marked) == false) {
      for (Stmt& st : add) bodies_.back()->push_back(std::move(st));
      return;
    }
    zeros_.marks_set.insert(dst.mask_pointer);
    Body mark = nested([&] { emit(Store{dst.mask_pointer, d, lit_bool(true)}); });
    emit(If{marked, std::move(mark), std::move(add)});
  };
  if (!x.is_tensor()) {
    add_one(at, rel, x.scalar, lit_bool(false));  // its mask is the whole term's
    return;
  }
  for_elements(x.numel(), "e", [&](const ExprP& e) {
    const ExprP xo = add_i64(x.offset, e);
    add_one(add_i64(at, e), add_i64(rel, e), load(x.type, x.pointer, xo),
            x.mask_pointer >= 0 ? load(Scalar::Bool, x.mask_pointer, xo) : lit_bool(false));
  });
}

void Lowerer::mark_strong(const Val& dst, const ExprP& at, const ExprP& n, const ExprP& mask,
                          const ExprP& cond) {
  if (!may_be_strong(mask)) return;
  zeros_.marks_set.insert(dst.mask_pointer);
  Body all = nested([&] { emit(Fill{dst.mask_pointer, at, n, lit_bool(true)}); });
  emit(If{and_(mask_is(mask, kStrongZero), cond), std::move(all), {}});
}

void Lowerer::finish_marks(const Val& dst, LocalId live_marks) {
  if (live_marks < 0) return;
  for_elements(dst.numel(), "e", [&](const ExprP& e) {
    const ExprP d = add_i64(dst.offset, e);
    emit(Store{
        dst.mask_pointer, d,
        and_(load(Scalar::Bool, dst.mask_pointer, d), not_(load(Scalar::Bool, live_marks, e)))});
  });
}

void Lowerer::add_term(const Val& x, bool is_sum, bool& masked_terms, LocalId live, LocalId strong,
                       Body combine) {
  if (x.mask && as_i64(x.mask) != int64_t{0}) {  // the term may be masked
    masked_terms = true;
    ExprP is_live = mask_is(x.mask, 0), is_strong = mask_is(x.mask, kStrongZero);
    if (as_bool(is_live) != false) emit(Assign{live, or_(local(out_, live), is_live)});
    if (as_bool(is_strong) != false) emit(Assign{strong, or_(local(out_, strong), is_strong)});
    if (is_sum) {
      if (!as_i64(x.mask)) emit(If{is_live, std::move(combine), {}});
      return;  // a masked term adds nothing
    }
  } else if (masked_terms) {
    // Flags kept for skipped points (tightened bounds): this term is live.
    emit(Assign{live, lit_bool(true)});
  }
  for (Stmt& st : combine) bodies_.back()->push_back(std::move(st));
}

ExprP Lowerer::reduction_start(ir::ReduceKind how, Scalar elem) {
  if (elem == Scalar::I64) return lit_i64(0);
  if (how == ir::ReduceKind::Sum) return lit_real(0, elem);
  const double inf = std::numeric_limits<double>::infinity();
  return lit_real(how == ir::ReduceKind::Max ? -inf : inf, elem);
}

ExprP Lowerer::real_combine(ir::ReduceKind how, ExprP acc, ExprP x) {
  switch (how) {
    case ir::ReduceKind::Sum:
      return prim(Prim::Add, {std::move(acc), std::move(x)});
    case ir::ReduceKind::Max:
      return prim(Prim::Max, {std::move(acc), std::move(x)});  // emitted as max_combine
    case ir::ReduceKind::Min:
      return prim(Prim::Min, {std::move(acc), std::move(x)});
  }
  return acc;
}

ExprP Lowerer::sum_mask(bool masked_terms, LocalId live, LocalId strong, const ExprP& points) {
  if (!masked_terms) {
    return select(prim(Prim::Gt, {points, lit_i64(0)}), lit_i64(0), lit_i64(kEmptySum));
  }
  return select(local(out_, live), lit_i64(0),
                select(local(out_, strong), lit_i64(kStrongZero), lit_i64(kEmptySum)));
}

}  // namespace cot::codegen::lowering
