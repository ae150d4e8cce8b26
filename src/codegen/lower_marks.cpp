// Lowering: strong zeros kept in tensors and masks (docs/language.md §5.6).
#include <string>

#include "codegen/lowerer.h"

namespace cot::codegen::lowering {

bool Lowerer::needs_marks(ir::VarId v) const {
  return flow_.may_have_elems(v) && flow_.may_be_read(v) && is_real(f_.type_of(v).elem) &&
         zeros_.mark_preds.count(v) == 0;
}

bool Lowerer::marks_unread(ir::VarId v) const {
  return flow_.may_have_elems(v) && (!flow_.may_be_read(v) || zeros_.mark_preds.count(v) != 0);
}

bool Lowerer::may_be_strong(const ExprP& m) const {
  if (!m) return false;
  if (auto c = as_i64(m)) return *c == kStrongZero;
  if (m->kind == Expr::Kind::Local && zeros_.never_strong.count(m->local) != 0) return false;
  if (m->kind == Expr::Kind::Prim && m->prim == Prim::Select && m->args.size() == 3) {
    return may_be_strong(m->args[1]) || may_be_strong(m->args[2]);
  }
  return true;
}

ExprP Lowerer::declare_mask(const ExprP& m, const std::string& hint) {
  ExprP l = declare(m, hint);
  if (!may_be_strong(m) && l->kind == Expr::Kind::Local) zeros_.never_strong.insert(l->local);
  return l;
}

ExprP Lowerer::strong_byte(const ExprP& m) const {
  return may_be_strong(m) ? mask_is(m, kStrongZero) : lit_bool(false);
}

ExprP Lowerer::element_mask(const Val& t, const ExprP& off) const {
  ExprP m;
  if (t.mask_pointer >= 0) {
    m = select(load(Scalar::Bool, t.mask_pointer, off), lit_i64(kStrongZero), lit_i64(0));
  }
  if (may_be_strong(t.mask)) {
    m = select(mask_is(t.mask, kStrongZero), lit_i64(kStrongZero), m ? m : lit_i64(0));
  }
  return m;
}

[[noreturn]] void Lowerer::lost_marks(LocalId where) const {
  const std::string name = where >= 0 && static_cast<size_t>(where) < out_.locals.size()
                               ? out_.locals[static_cast<size_t>(where)].name
                               : "?";
  throw Unsupported{"a strong zero would be stored in " + name +
                    ", which keeps no mask (ir/strong_zero_flow.cpp missed a way it flows)"};
}

ExprP Lowerer::zero_of(Scalar t) {
  switch (t) {
    case Scalar::I64:
      return lit_i64(0);
    case Scalar::Bool:
      return lit_bool(false);
    default:
      return lit_real(0, t);
  }
}

}  // namespace cot::codegen::lowering
