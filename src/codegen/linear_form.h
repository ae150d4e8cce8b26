// i64 loop-IR expressions as linear forms sum coef[v] * v + c over locals v, for the passes
// that reason about loop indices (partition_loops: tests of one index; recompute_tables: the
// offsets of reads). What a local stands for is the caller's: itself, or a form it knows.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "codegen/loop_ir.h"

namespace cot::codegen {

struct LinearForm {
  std::map<LocalId, int64_t> coef;  // no zero coefficients
  int64_t c = 0;
};

// a + sign * b, or nullopt on overflow.
std::optional<LinearForm> add_forms(LinearForm a, const LinearForm& b, int64_t sign);

using LocalForm = std::function<std::optional<LinearForm>(LocalId)>;

// Literals, locals (through `of_local`), +, -, negation and products with a constant; nullopt
// for anything else, a non-i64 value, or overflow.
std::optional<LinearForm> linear_form(const ExprP& e, const LocalForm& of_local);
// The same for prim(args) (a checked integer operation's value).
std::optional<LinearForm> linear_form(Prim p, const std::vector<ExprP>& args,
                                      const LocalForm& of_local);

}  // namespace cot::codegen
