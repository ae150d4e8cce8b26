// Lowering: scatter-adds (AccumOp).
#include <utility>
#include <vector>

#include "codegen/lowerer.h"

namespace cot::codegen::lowering {

void Lowerer::lower_accum(const ir::Stmt& s, const ir::AccumOp& op) {
  const ir::VarId v = s.results[0];
  const Type& t = f_.type_of(v);
  // The interpreter's order: the extents, then the tensor's size.
  std::vector<ExprP> ext = extents(op.ivars, s.span, true);
  const size_t r = op.shape.size();
  Val dst = alloc_for(v, s.span, interp::SizeRule::Accum, r);
  if (static_size_error(dst.dims, interp::SizeRule::Accum, r)) {
    bind(v, dst);  // it has failed: what follows is never reached
    return;
  }
  emit(Fill{dst.pointer, dst.offset, dst.numel(), zero_of(t.elem)});
  std::vector<ExprP> inner_dims(dst.dims.begin() + static_cast<ptrdiff_t>(r), dst.dims.end());
  Val inner;
  inner.dims = inner_dims;
  ExprP inner_n = inner.numel();
  const int overflow = message_site(s.span, "integer overflow in an accum of i64 values");
  // A cell is a sum of its contributions (interp/eval_index.cpp): element marks as a sum's.
  const LocalId live_marks = start_marks(dst, c_hint(v));
  // Contributions where a guard fails go nowhere: skip those points (unless they mark).
  if (const Pred* guard = live_marks < 0 ? single_guard(op.body, r) : nullptr;
      guard != nullptr && may_tighten(*guard, op.ivars, ext)) {
    scope_.tighten = guard;
    scope_.tighten_strong = -1;
  }
  ++scope_.loop_depth;
  for_points(op.ivars, ext, PointLoops::Ordered, [&](const ExprP&) {
    std::vector<Val> res = lower_block(op.body, nullptr);
    const Val& x = res.at(r);
    Body add = nested([&] {
      std::vector<ExprP> idx;
      for (size_t d = 0; d < r; ++d) {
        ExprP i = res[d].scalar;
        check_index(i, dst, d, s.span, Site::Kind::AccumIndex, "");
        idx.push_back(i);
      }
      ExprP rel = flat_offset(dst, idx);
      ExprP off = add_i64(dst.offset, rel);
      if (live_marks >= 0) {
        add_marked(dst, off, rel, x, live_marks);
      } else if (x.is_tensor()) {
        emit(Combine{ir::ReduceKind::Sum, dst.pointer, off, x.pointer, x.offset, inner_n,
                     t.elem == Scalar::I64 ? overflow : -1});
      } else if (t.elem == Scalar::I64) {
        ExprP sum = int_op(Prim::Add, load(t.elem, dst.pointer, off), x.scalar, overflow);
        emit(Store{dst.pointer, off, sum});
      } else {
        emit(Store{dst.pointer, off, prim(Prim::Add, {load(t.elem, dst.pointer, off), x.scalar})});
      }
    });
    if (x.mask && !as_i64(x.mask)) {
      emit(If{mask_is(x.mask, 0), std::move(add), {}});  // a masked value goes nowhere
    } else if (!x.mask || *as_i64(x.mask) == 0) {
      for (Stmt& st : add) bodies_.back()->push_back(std::move(st));
    }
    if (live_marks >= 0 && may_be_strong(x.mask)) {
      // A strong zero marks its cell, when the cell exists (else it goes nowhere).
      ExprP in_range = lit_bool(true);
      std::vector<ExprP> idx;
      for (size_t d = 0; d < r; ++d) {
        ExprP i = res[d].scalar;
        in_range =
            and_(in_range, and_(prim(Prim::Ge, {i, lit_i64(0)}), prim(Prim::Lt, {i, dst.dims[d]})));
        idx.push_back(i);
      }
      zeros_.marks_set.insert(dst.mask_pointer);
      Body mark = nested([&] {
        emit(Fill{dst.mask_pointer, add_i64(dst.offset, flat_offset(dst, idx)), inner_n,
                  lit_bool(true)});
      });
      emit(If{and_(mask_is(x.mask, kStrongZero), in_range), std::move(mark), {}});
    }
  });
  --scope_.loop_depth;
  finish_marks(dst, live_marks);
  bind(v, dst);
}

}  // namespace cot::codegen::lowering
