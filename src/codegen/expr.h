// Smart constructors for loop-IR expressions: literals fold, so sizes and offsets known at
// compile time (shapes are concrete) become constants, and masks that cannot be strong zeros
// vanish from the generated code.
#pragma once

#include <cstdint>
#include <optional>

#include "codegen/loop_ir.h"

namespace cot::codegen {

ExprP lit_i64(int64_t v);
ExprP lit_real(double v, Scalar t = Scalar::F64);
ExprP lit_bool(bool b);
ExprP lit_of(const ir::Literal& l);
ExprP local(const LoopFunction& fn, LocalId id);
ExprP load(Scalar type, LocalId pointer, ExprP index);
// prim(args) with the result type the primitive table gives; i64 arithmetic here must not
// overflow (the caller has proven it, or uses CheckedInt). Folds literal operands.
ExprP prim(Prim p, std::vector<ExprP> args);
ExprP mask_is(ExprP mask, int64_t value);

// i64 helpers that fold: a + b, a * b, a - b, max(a, 0).
ExprP add_i64(ExprP a, ExprP b);
ExprP mul_i64(ExprP a, ExprP b);
ExprP sub_i64(ExprP a, ExprP b);
ExprP and_(ExprP a, ExprP b);
ExprP or_(ExprP a, ExprP b);
ExprP not_(ExprP a);
ExprP select(ExprP c, ExprP a, ExprP b);

// `e` with its operands replaced by `args` (a rewrite of them), folding what the new operands
// decide (and, or, not, a select on a literal: a test became a literal); anything else keeps its
// node and type.
ExprP with_operands(const ExprP& e, std::vector<ExprP> args);

std::optional<int64_t> as_i64(const ExprP& e);
std::optional<bool> as_bool(const ExprP& e);

}  // namespace cot::codegen
