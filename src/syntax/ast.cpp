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

}  // namespace cot::ast
