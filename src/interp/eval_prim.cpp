// Scalar primitives: evaluation through the primitive table (reals in their own precision, i64
// overflow-checked), comparisons, logic, select and conversions, and their cost.
#include <cmath>
#include <span>
#include <string>

#include "interp/machine.h"
#include "interp/tensor_ops.h"

namespace cot::interp {

using cotangent::DType;
using cotangent::Value;

namespace {

// A scalar operand, read once from its atom.
struct Operand {
  Scalar type = Scalar::F64;
  double real = 0;  // F64, and F32 widened exactly
  float f32 = 0;    // F32
  int64_t i = 0;
  bool b = false;
};

Value make(const Operand& a) {
  switch (a.type) {
    case Scalar::F64:
      return Value::f64(a.real);
    case Scalar::F32:
      return Value::f32(a.f32);
    case Scalar::I64:
      return Value::i64(a.i);
    case Scalar::Bool:
      return Value::boolean(a.b);
  }
  return Value();
}

// The operand of a literal atom.
Operand literal_operand(const ir::Atom& at) {
  Operand o;
  o.type = at.lit.type;
  o.f32 = to_f32(at.lit.real);
  o.real = o.type == Scalar::F32 ? o.f32 : at.lit.real;
  o.i = at.lit.integer;
  o.b = at.lit.boolean;
  return o;
}

// The operand of a scalar value.
Operand value_operand(const Value& v) {
  Operand o;
  o.type = scalar_of(v.dtype());
  switch (v.dtype()) {
    case DType::F64:
      o.real = v.as_f64();
      break;
    case DType::F32:
      o.f32 = v.f32_data()[0];
      o.real = o.f32;
      break;
    case DType::I64:
      o.i = v.as_i64();
      break;
    case DType::Bool:
      o.b = v.as_bool();
      break;
  }
  return o;
}

// Why a primitive produced no value: an error of the program (an integer overflow, a real out
// of i64's range), or of the compiler (`internal`).
struct EvalError {
  std::string message;
  bool internal = false;
};

// An arithmetic primitive (same-typed numeric operands) on the `n` operands `a`, computing a
// `result_type` by the primitive table's evaluators; i64 arithmetic is overflow-checked.
std::optional<EvalError> eval_arithmetic(Prim prim, const PrimInfo& info, const Operand* a,
                                         size_t n, Scalar result_type, std::string& why,
                                         Value& result) {
  switch (result_type) {
    case Scalar::F64: {
      if (info.eval_f64 == nullptr) break;
      double xs[3] = {a[0].real, a[1].real, a[2].real};
      result = Value::f64(info.eval_f64(xs));
      return std::nullopt;
    }
    case Scalar::F32: {
      if (info.eval_f32 == nullptr) break;
      float xs[3] = {a[0].f32, a[1].f32, a[2].f32};
      result = Value::f32(info.eval_f32(xs));
      return std::nullopt;
    }
    case Scalar::I64: {
      int64_t xs[3] = {a[0].i, a[1].i, a[2].i};
      std::optional<int64_t> r = eval_prim_i64(prim, std::span<const int64_t>(xs, n), &why);
      if (!r) {
        if (why.empty()) why = "integer overflow in " + std::string(info.name);
        // Say which operands (ExactDiv's message already does).
        if (prim != Prim::ExactDiv) why += ": " + spell_application(prim, {xs, n});
        return EvalError{why};
      }
      result = Value::i64(*r);
      return std::nullopt;
    }
    case Scalar::Bool:
      break;
  }
  return EvalError{
      "primitive " + std::string(info.name) + " cannot be evaluated on " + to_string(result_type),
      true};
}

// The value of primitive `prim` on the `n` operands `a`, by its type rule: comparisons, logic,
// select, conversions, stop_gradient and arithmetic.
std::optional<EvalError> eval_scalar(Prim prim, const PrimInfo& info, const Operand* a, size_t n,
                                     Scalar result_type, std::string& why, Value& result) {
  switch (info.type_rule) {
    case TypeRule::Compare: {
      bool r = false;
      if (is_real(a[0].type)) {
        r = eval_prim_compare_f64(prim, a[0].real, a[1].real);
      } else if (a[0].type == Scalar::I64) {
        r = eval_prim_compare_i64(prim, a[0].i, a[1].i);
      } else {
        r = eval_prim_compare_i64(prim, a[0].b ? 1 : 0, a[1].b ? 1 : 0);
      }
      result = Value::boolean(r);
      break;
    }
    case TypeRule::Logic: {
      bool bs[3] = {a[0].b, a[1].b, a[2].b};
      result = Value::boolean(eval_prim_logic(prim, std::span<const bool>(bs, n)));
      break;
    }
    case TypeRule::Select:
      result = make(a[0].b ? a[1] : a[2]);
      break;
    case TypeRule::ConvertF64:
      result = Value::f64(a[0].type == Scalar::I64    ? static_cast<double>(a[0].i)
                          : a[0].type == Scalar::Bool ? (a[0].b ? 1.0 : 0.0)
                                                      : a[0].real);
      break;
    case TypeRule::ConvertF32:
      result = Value::f32(a[0].type == Scalar::I64    ? static_cast<float>(a[0].i)
                          : a[0].type == Scalar::Bool ? (a[0].b ? 1.0f : 0.0f)
                          : a[0].type == Scalar::F32  ? a[0].f32
                                                      : to_f32(a[0].real));
      break;
    case TypeRule::ConvertI64:
      if (is_real(a[0].type)) {
        std::optional<int64_t> i = convert_real_to_i64(a[0].real, &why);
        if (!i) return EvalError{why};
        result = Value::i64(*i);
      } else {
        result = Value::i64(a[0].type == Scalar::Bool ? (a[0].b ? 1 : 0) : a[0].i);
      }
      break;
    case TypeRule::SameAny:  // stop_gradient: the value itself
      result = make(a[0]);
      break;
    case TypeRule::SameNumeric:
    case TypeRule::SameReal:
    case TypeRule::IntOnly:
      return eval_arithmetic(prim, info, a, n, result_type, why, result);
  }
  return std::nullopt;
}

}  // namespace

bool Machine::run_prim(const ir::Stmt& s, const ir::PrimOp& op) {
  const PrimInfo& info = prim_info(op.prim);
  const size_t n = op.args.size();
  if (n > 3 || static_cast<int>(n) != info.arity) {
    return internal(s.span, "primitive " + std::string(info.name) + " takes " +
                                std::to_string(info.arity) + " operand(s), not " +
                                std::to_string(n));
  }
  Operand a[3];
  Scalar types[3] = {};
  bool any_real = false;
  for (size_t k = 0; k < n; ++k) {
    const ir::Atom& at = op.args[k];
    if (!at.is_var) {
      a[k] = literal_operand(at);
    } else {
      const Value& v = frame_->at(at.var);
      if (!v.is_scalar()) {
        return internal(s.span, "primitive " + std::string(info.name) +
                                    " applies to scalars, not to " + v.type_string());
      }
      a[k] = value_operand(v);
    }
    types[k] = a[k].type;
    any_real = any_real || is_real(a[k].type);
  }
  std::string why;
  std::optional<Scalar> result_type = prim_result_type(op.prim, std::span(types, n), &why);
  if (!result_type) return internal(s.span, "primitive " + std::string(info.name) + ": " + why);

  Value result;
  if (auto error = eval_scalar(op.prim, info, a, n, *result_type, why, result)) {
    return error->internal ? internal(s.span, error->message) : fail(s.span, error->message);
  }
  if (cost_ != nullptr && any_real) charge_prim(op, info);
  const bool strong = strong_zero_result(op);
  if (strong && is_real(*result_type)) {
    result = *result_type == Scalar::F32 ? Value::f32(0.0f) : Value::f64(0.0);
  }
  frame_->bind(s.results[0], std::move(result), strong && is_real(*result_type));
  return true;
}

// The cost of a primitive on reals (the interpreter's cost model).
void Machine::charge_prim(const ir::PrimOp& op, const PrimInfo& info) {
  switch (info.cost) {
    case CostKind::Free:
      break;
    case CostKind::Add: {
      // Rule 4.24: adding a strong zero is free.
      bool masked = false;
      for (const ir::Atom& x : op.args) masked = masked || is_masked(x);
      if (!masked) ++cost_->add;
      break;
    }
    case CostKind::Mul:
      ++cost_->mul;
      break;
    case CostKind::Call:
      ++cost_->call;
      break;
  }
}

// Mask propagation ([Bernstein20] §5.4, docs/language.md §5.6): a product with a strong zero, a
// strong zero divided by anything and its negation are strong zeros, 0 whatever the other
// operand (an ordinary 0 times inf or NaN is NaN). So the derivative of a guarded value is
// 0 where its guard fails, even where the unguarded value's derivative is infinite.
// A sum or difference of strong zeros (and literal zeros) is one too, so adding them stays
// free downstream (x + 0.0 is x, as simplify has it).
bool Machine::strong_zero_result(const ir::PrimOp& op) const {
  auto zero_or_strong = [&](const ir::Atom& x) {
    return is_strong_zero(x) || (!x.is_var && is_real(x.lit.type) && x.lit.real == 0.0);
  };
  return (op.prim == Prim::Mul && (is_strong_zero(op.args[0]) || is_strong_zero(op.args[1]))) ||
         ((op.prim == Prim::Div || op.prim == Prim::Neg) && is_strong_zero(op.args[0])) ||
         ((op.prim == Prim::Add || op.prim == Prim::Sub) &&
          (is_strong_zero(op.args[0]) || is_strong_zero(op.args[1])) &&
          zero_or_strong(op.args[0]) && zero_or_strong(op.args[1]));
}

}  // namespace cot::interp
