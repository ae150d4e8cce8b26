// The kinds of reduction (`sum`, `max`, `min`) and of derivative operator (`grad`, `jvp`, ...):
// named by the parser, kept as they are by the Core IR (ReduceOp, derivative calls). They live
// below both so that the IR does not depend on the syntax tree (docs/design.md §1); they keep
// the namespace ast, where they were first spelled, so that every user's spelling is unchanged.
#pragma once

#include <optional>
#include <string_view>

namespace cot::ast {

enum class ReduceKind { Sum, Max, Min };
enum class DerivKind { Grad, ValueAndGrad, Jvp, Vjp, Jacobian, Hessian };

const char* to_string(ReduceKind k);
const char* to_string(DerivKind k);
std::optional<DerivKind> deriv_kind_from_name(std::string_view name);

}  // namespace cot::ast
