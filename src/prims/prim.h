// The primitive table: everything the compiler knows about a scalar primitive lives in one
// entry of prims/prim_table.cpp (name, arity, type rule, evaluation, cost, spelling). Derivative
// rules join the same entries, as in Enzyme's InstructionDerivatives.td and JAX's registries.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "prims/scalar.h"

namespace cot {

enum class Prim : uint8_t {
  // arithmetic (f64, f32; Add/Sub/Mul/Neg/Abs/Max/Min also i64)
  Add,
  Sub,
  Mul,
  Div,
  Neg,
  Pow,
  // i64 only: floor division, the matching modulus, exact division (`/` on sizes)
  FloorDiv,
  Mod,
  ExactDiv,
  // elementwise real functions
  Exp,
  Log,
  Sin,
  Cos,
  Tan,
  Tanh,
  Sqrt,
  Abs,
  Sigmoid,
  Log1p,
  Expm1,
  Lgamma,
  Digamma,   // lgamma's derivative
  Trigamma,  // digamma's derivative
  Atan2,
  Max,
  Min,
  // comparisons (numeric; Eq/Ne also bool) -> bool
  Lt,
  Le,
  Gt,
  Ge,
  Eq,
  Ne,
  // logic
  And,
  Or,
  Not,
  // select(c, a, b): a when c else b (both already evaluated)
  Select,
  // conversions
  ToF64,
  ToF32,
  ToI64,
  // identity with zero derivative
  StopGradient,
  kCount
};

// What a primitive costs under the cost model (docs/language.md §10, [Bernstein20] §4.3).
enum class CostKind : uint8_t { Free, Add, Mul, Call };

// How the type of the result follows from the operands'.
enum class TypeRule : uint8_t {
  SameNumeric,  // all operands one numeric type (reals; i64 where allowed), result that type
  SameReal,     // all operands one real type, result that type
  IntOnly,      // i64 operands, i64 result
  Compare,      // same numeric (or bool for Eq/Ne) operands, bool result
  Logic,        // bool operands, bool result
  Select,       // bool, then two operands of one type, result that type
  ConvertF64,
  ConvertF32,
  ConvertI64,
  SameAny,  // one operand of any scalar type, result that type (StopGradient)
};

// How source writes it.
enum class Spelling : uint8_t { Infix, Prefix, Function };

struct PrimInfo {
  Prim prim;
  std::string_view name;    // function name in source and IR dumps ("exp", "add", ...)
  std::string_view symbol;  // infix/prefix symbol ("+", "-", "!") or the function name
  Spelling spelling;
  int arity;
  TypeRule type_rule;
  bool allows_int;  // SameNumeric: whether i64 operands are allowed
  CostKind cost;    // on real operands; integer and boolean work is index arithmetic (free)
  double (*eval_f64)(const double* args);  // null for non-real-valued primitives
  float (*eval_f32)(const float* args);
  std::string_view nondiff_note;  // the documented choice where it is not differentiable
  // The derivative rule, as data written in the language itself: partials[i] is the partial
  // derivative of the result with respect to operand i, an expression over the operands `x`,
  // `y`, `z` and the result `r` (Enzyme's InstructionDerivatives.td in the form of our own
  // source). The tangent is the sum of partials[i] times the operand tangents; for linear
  // primitives the same partials give the transpose. Empty: the operand has no derivative
  // (integers, comparisons, stop_gradient, the condition of select).
  std::array<std::string_view, 3> partials;
  // linear[i]: the primitive is linear in operand i when the others are fixed (add, sub, mul,
  // the numerator of div, neg, the branches of select, real conversions). Its partial with
  // respect to such an operand does not mention that operand, so the transpose rule is the
  // same data: the cotangent of operand i is partials[i] times the result's cotangent
  // (converted to the operand's type for f32/f64). Reverse mode only ever transposes these.
  std::array<bool, 3> linear;
};

const PrimInfo& prim_info(Prim p);
std::optional<Prim> prim_by_name(std::string_view name);  // function-spelled primitives only

// The result type of applying p to operands of these scalar types, or nullopt with `why` set.
std::optional<Scalar> prim_result_type(Prim p, std::span<const Scalar> operands, std::string* why);

// Integer evaluation (i64 results): nullopt with `why` set on overflow or division by zero.
std::optional<int64_t> eval_prim_i64(Prim p, std::span<const int64_t> args, std::string* why);
// "a * b", "-a" or "name(a, b)" with these i64 operands, as source spells the application (for
// messages about integer arithmetic that failed).
std::string spell_application(Prim p, std::span<const int64_t> args);
// Comparisons on numbers and logic on booleans.
bool eval_prim_compare_f64(Prim p, double a, double b);
bool eval_prim_compare_i64(Prim p, int64_t a, int64_t b);
bool eval_prim_logic(Prim p, std::span<const bool> args);
// `i64(x)` of a real: truncation toward zero; nullopt with `why` set for NaN, infinities and
// values outside the i64 range, which would be undefined behaviour in C++.
std::optional<int64_t> convert_real_to_i64(double x, std::string* why);

}  // namespace cot
