#include "syntax/ast.h"

namespace cot::ast {

const char* to_string(BinOp op) {
  switch (op) {
    case BinOp::Or:
      return "||";
    case BinOp::And:
      return "&&";
    case BinOp::Eq:
      return "==";
    case BinOp::Ne:
      return "!=";
    case BinOp::Lt:
      return "<";
    case BinOp::Le:
      return "<=";
    case BinOp::Gt:
      return ">";
    case BinOp::Ge:
      return ">=";
    case BinOp::Add:
      return "+";
    case BinOp::Sub:
      return "-";
    case BinOp::Mul:
      return "*";
    case BinOp::Div:
      return "/";
    case BinOp::FloorDiv:
      return "//";
    case BinOp::Mod:
      return "%";
    case BinOp::Pow:
      return "^";
  }
  return "?";
}

const char* to_string(UnOp op) {
  switch (op) {
    case UnOp::Neg:
      return "-";
    case UnOp::Not:
      return "!";
  }
  return "?";
}

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
