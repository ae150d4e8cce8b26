#include "base/operator_kinds.h"

namespace cot::ast {

const char* to_string(ReduceKind k) {
  switch (k) {
    case ReduceKind::Sum:
      return "sum";
    case ReduceKind::Max:
      return "max";
    case ReduceKind::Min:
      return "min";
  }
  return "?";
}

const char* to_string(DerivKind k) {
  switch (k) {
    case DerivKind::Grad:
      return "grad";
    case DerivKind::ValueAndGrad:
      return "value_and_grad";
    case DerivKind::Jvp:
      return "jvp";
    case DerivKind::Vjp:
      return "vjp";
    case DerivKind::Jacobian:
      return "jacobian";
    case DerivKind::Hessian:
      return "hessian";
  }
  return "?";
}

std::optional<DerivKind> deriv_kind_from_name(std::string_view name) {
  for (DerivKind k : {DerivKind::Grad, DerivKind::ValueAndGrad, DerivKind::Jvp, DerivKind::Vjp,
                      DerivKind::Jacobian, DerivKind::Hessian}) {
    if (name == to_string(k)) return k;
  }
  return std::nullopt;
}

}  // namespace cot::ast
