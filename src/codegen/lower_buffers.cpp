// Lowering: buffers and views of tensors, and writing a value into a destination slot.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"
#include "runtime/tensor_shapes.h"

namespace cot::codegen::lowering {

Val Lowerer::alloc_tensor(Scalar elem, std::vector<ExprP> dims, Span span, const std::string& hint,
                          interp::SizeRule rule, size_t index_rank, bool deferred, bool marks) {
  Val x;
  x.kind = Val::Kind::Tensor;
  x.type = elem;
  x.dims = std::move(dims);
  x.offset = lit_i64(0);
  const bool cannot_build = static_size_error(x.dims, rule, index_rank).has_value();
  if (deferred && cannot_build) {
    x.check_at_writer = true;
  } else {
    check_size(x.dims, rule, index_rank, span);
  }
  ExprP n = lit_i64(1);
  if (cannot_build) {
    // Never written when it has failed; a deferred slot a value that exists is copied into
    // (an argument over the tensor limit, passed through an `if`) takes its memory from the
    // heap, where it costs address space only until it is written. Only an argument (or a
    // slice of one) can exist over the limit, so a slot larger than every argument needs
    // none: asking the heap for it would fail at entry with "out of memory" before the
    // statement could report the interpreter's error.
    std::vector<int64_t> shape;
    for (const ExprP& d : x.dims) shape.push_back(*as_i64(d));
    auto count = interp::element_count(shape);
    const bool an_argument_fits =
        count && std::any_of(out_.inputs.begin(), out_.inputs.end(),
                             [&](const Port& p) { return p.count >= *count; });
    n = deferred && an_argument_fits ? local(out_, mutable_local("n", Scalar::I64, lit_i64(*count)))
                                     : lit_i64(0);
  } else {
    for (const ExprP& d : x.dims) n = mul_i64(n, d);
    if (!as_i64(n)) n = declare(n, "n");
  }
  if (!as_i64(n)) out_.uses_heap = true;
  x.pointer = out_.new_local(hint, elem, true);
  emit(Alloc{.pointer = x.pointer, .count = n});
  if (marks) {
    x.mask_pointer = out_.new_local(hint + "_marks", Scalar::Bool, true);
    emit(Alloc{.pointer = x.mask_pointer, .count = n});
  }
  return x;
}

Val Lowerer::alloc_for(ir::VarId v, Span span, interp::SizeRule rule, size_t index_rank,
                       bool deferred) {
  auto it = env_.pending_dest.find(v);
  if (it != env_.pending_dest.end()) {
    Val d = it->second;
    env_.pending_dest.erase(it);
    // A destination that keeps marks, for a value with none: its writer writes no marks, and
    // the final assign (not in place for the marks) clears them.
    if (!needs_marks(v)) d.mask_pointer = -1;
    d.drops_marks = d.drops_marks || marks_unread(v);
    if (d.check_at_writer && !deferred) {
      check_size(d.dims, rule, index_rank, span);
      d.check_at_writer = false;
    } else if (!deferred) {
      // Checked as a tensor already; a generator's element shape or an accum's cells may
      // still fail (a result of shape [0, 2^40, 2^40]). A slot of a parent that passed cannot.
      if (auto why = static_size_error(d.dims, rule, index_rank)) fail(message_site(span, *why));
    }
    return d;
  }
  const Type& t = f_.type_of(v);
  env_.own_buffer.insert(v);
  Val x = alloc_tensor(t.elem, shape_of(t, span), span, c_hint(v), rule, index_rank, deferred,
                       needs_marks(v));
  x.drops_marks = marks_unread(v);
  return x;
}

Val Lowerer::view(const Val& t, ExprP offset, std::vector<ExprP> dims) const {
  Val x;
  x.kind = Val::Kind::Tensor;
  x.type = t.type;
  x.pointer = t.pointer;
  x.mask_pointer = t.mask_pointer;
  x.drops_marks = t.drops_marks;
  x.offset = std::move(offset);
  x.dims = std::move(dims);
  return x;
}

Val Lowerer::make_slot(const Type& t, Span span, const std::string& hint, bool masked, bool marks) {
  Val x;
  if (t.is_tuple) {
    x.kind = Val::Kind::Tuple;
    for (const Type& e : t.elems) x.elems.push_back(make_slot(e, span, hint, masked, marks));
  } else if (t.is_tensor()) {
    x = alloc_tensor(t.elem, shape_of(t, span), span, hint, interp::SizeRule::Tensor, 0, true,
                     marks && is_real(t.elem));
  } else {
    x = scalar_val(local(out_, mutable_local(hint, t.elem, nullptr)), t.elem);
  }
  if (masked && (!x.is_tensor() || is_real(x.type))) add_mask_local(x, hint);
  return x;
}

void Lowerer::add_mask_local(Val& x, const std::string& hint) {
  x.mask = local(out_, mutable_local(hint + "_mask", Scalar::I64, lit_i64(0), true));
}

void Lowerer::assign(const Val& slot, const Val& v) {
  switch (slot.kind) {
    case Val::Kind::Scalar:
      emit(Assign{slot.scalar->local, v.scalar});
      break;
    case Val::Kind::Tensor:
      if (!v.is_tensor()) {
        emit(Store{slot.pointer, slot.offset, v.scalar});  // a rank-0 port or slot
        if (slot.mask_pointer >= 0) {
          ExprP b = strong_byte(v.mask);
          if (as_bool(b) != false) zeros_.marks_set.insert(slot.mask_pointer);
          emit(Store{slot.mask_pointer, slot.offset, std::move(b)});
        } else if (!slot.drops_marks && !slot.mask && may_be_strong(v.mask)) {
          lost_marks(slot.pointer);
        }
      } else {
        if (!(v.pointer == slot.pointer && v.offset == slot.offset)) {
          if (static_size_error(slot.dims, interp::SizeRule::Tensor, 0)) {
            for (Port& p : out_.outputs) {
              p.copied_into = p.copied_into || p.pointer == slot.pointer;
            }
          }
          copy(slot, v);  // not written in place
        }
        assign_marks(slot, v);
      }
      break;
    case Val::Kind::Tuple:
      for (size_t k = 0; k < slot.elems.size(); ++k) assign(slot.elems[k], v.elems.at(k));
      break;
  }
  if (slot.mask) emit(Assign{slot.mask->local, v.mask ? v.mask : lit_i64(0)});
}

void Lowerer::copy(const Val& dst, const Val& src) {
  emit(Copy{dst.pointer, dst.offset, src.pointer, src.offset, dst.numel()});
}

void Lowerer::assign_marks(const Val& slot, const Val& v) {
  if (slot.mask_pointer < 0) {
    if (!slot.drops_marks && (v.mask_pointer >= 0 || (!slot.mask && may_be_strong(v.mask)))) {
      lost_marks(slot.pointer);
    }
    return;
  }
  if (!(v.mask_pointer == slot.mask_pointer && v.offset == slot.offset)) {
    if (v.mask_pointer >= 0) {
      if (zeros_.marks_set.count(v.mask_pointer) != 0) zeros_.marks_set.insert(slot.mask_pointer);
      emit(Copy{slot.mask_pointer, slot.offset, v.mask_pointer, v.offset, slot.numel()});
    } else {
      emit(Fill{slot.mask_pointer, slot.offset, slot.numel(), lit_bool(false)});
    }
  }
  if (!slot.mask && may_be_strong(v.mask)) {
    zeros_.marks_set.insert(slot.mask_pointer);
    Body all = nested([&] {
      emit(Fill{slot.mask_pointer, slot.offset, slot.numel(), lit_bool(true)});
    });
    emit(If{mask_is(v.mask, kStrongZero), std::move(all), {}});
  }
}

void Lowerer::assign_zero(const Val& slot, Span span) {
  switch (slot.kind) {
    case Val::Kind::Scalar:
      emit(Assign{slot.scalar->local, zero_of(slot.type)});
      break;
    case Val::Kind::Tensor:
      if (slot.check_at_writer) check_size(slot.dims, interp::SizeRule::Tensor, 0, span);
      if (!static_size_error(slot.dims, interp::SizeRule::Tensor, 0)) {
        emit(Fill{slot.pointer, slot.offset, slot.numel(), zero_of(slot.type)});
        // Every element a strong zero: the slot's own mask says so, else its marks.
        if (slot.mask_pointer >= 0 && !slot.mask) {
          zeros_.marks_set.insert(slot.mask_pointer);
          emit(Fill{slot.mask_pointer, slot.offset, slot.numel(), lit_bool(true)});
        } else if (slot.mask_pointer < 0 && !slot.mask && !slot.drops_marks && is_real(slot.type)) {
          lost_marks(slot.pointer);
        }
      }
      break;
    case Val::Kind::Tuple:
      for (const Val& e : slot.elems) assign_zero(e, span);
      break;
  }
  if (slot.mask) emit(Assign{slot.mask->local, lit_i64(kStrongZero)});
}

}  // namespace cot::codegen::lowering
