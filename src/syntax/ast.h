// The surface syntax tree, exactly as written (no desugaring). Small node structs held in a
// variant, in the spirit of Halide's IR nodes; the checker turns it into Core IR.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/operator_kinds.h"
#include "base/source.h"

namespace cot::ast {

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

enum class ScalarKind { F64, F32, I64, Bool };

// `f64`, `f64[n, m + 1]`, `(f64, i64[k])`. Dimensions are size expressions, kept as Exprs.
struct TypeAst {
  Span span;
  bool is_tuple = false;
  ScalarKind elem = ScalarKind::F64;  // when !is_tuple
  std::vector<ExprPtr> dims;          // when !is_tuple; empty for a scalar
  std::vector<TypeAst> elems;         // when is_tuple
};

// `x`, `_`, `(a, (b, _))`.
struct Pattern {
  enum class Kind { Name, Wildcard, Tuple };
  Span span;
  Kind kind = Kind::Name;
  std::string name;            // Kind::Name
  std::vector<Pattern> elems;  // Kind::Tuple
};

// An index binder of `for`, `sum`, `max`, `min`, `accum`: `i` or `i: extent`.
struct Binder {
  Span span;  // the name
  std::string name;
  ExprPtr extent;  // null when inferred
};

enum class UnOp { Neg, Not };
enum class BinOp { Or, And, Eq, Ne, Lt, Le, Gt, Ge, Add, Sub, Mul, Div, FloorDiv, Mod, Pow };

const char* to_string(BinOp op);
const char* to_string(UnOp op);

// What is called: a function name, or a derivative operator applied to another FnRef.
struct FnRef {
  Span span;
  std::string name;                               // function name when !deriv
  std::optional<DerivKind> deriv;                 // set for grad(...), jvp(...), ...
  std::unique_ptr<FnRef> inner;                   // the differentiated function when deriv
  std::vector<std::pair<std::string, Span>> wrt;  // active parameter names (may be empty)
};

struct IntLit {
  int64_t value = 0;
};
struct RealLit {
  double value = 0;
};
struct BoolLit {
  bool value = false;
};
struct Name {
  std::string name;
};
struct Unary {
  UnOp op;
  ExprPtr operand;
};
struct Binary {
  BinOp op;
  ExprPtr lhs, rhs;
  Span op_span;
};
// Calls of user functions, prelude functions, built-ins (`exp`, `max(a, b)`, `f64(e)`,
// `size(x, 0)`) and derivative operators.
struct Call {
  FnRef callee;
  std::vector<ExprPtr> args;
};
struct Index {
  ExprPtr base;
  std::vector<ExprPtr> indices;
};
struct Tuple {
  std::vector<ExprPtr> elems;
};
struct Let {
  Span span;
  Pattern pattern;
  ExprPtr value;
};
struct Block {
  std::vector<Let> lets;
  ExprPtr result;
};
struct Iverson {
  ExprPtr cond;
};
struct For {
  std::vector<Binder> binders;
  ExprPtr body;
};
struct Reduce {
  ReduceKind kind;
  std::vector<Binder> binders;
  ExprPtr body;
};
// `loop state = init for iter < count { body }` or `loop state = init while cond { body }`.
struct Loop {
  Pattern state;
  ExprPtr init;
  std::string iter;  // for-form only
  Span iter_span;
  ExprPtr count;  // for-form only
  ExprPtr cond;   // while-form only
  ExprPtr body;   // a Block expression
};
struct If {
  ExprPtr cond, then_branch, else_branch;
};
// Extension for printing the adjoint of computed-index reads (docs/language.md §12.6):
// `accum[d1, ..., dk] i, j. (k1, ..., kk, value)` sums each value into position (k1..kk).
struct Accum {
  std::vector<ExprPtr> shape;
  std::vector<Binder> binders;
  ExprPtr body;
};

struct Expr {
  Span span;
  std::variant<IntLit, RealLit, BoolLit, Name, Unary, Binary, Call, Index, Tuple, Block, Iverson,
               For, Reduce, Loop, If, Accum>
      node;

  template <class T>
  const T* as() const {
    return std::get_if<T>(&node);
  }
  template <class T>
  T* as() {
    return std::get_if<T>(&node);
  }
};

struct Param {
  Span span;  // the name
  std::string name;
  TypeAst type;
};

struct FnDef {
  Span span;  // the whole definition
  Span name_span;
  std::string name;
  std::vector<Param> params;
  TypeAst ret;
  ExprPtr body;  // a Block expression
};

struct Module {
  uint32_t file = 0;
  std::vector<FnDef> defs;
};

template <class T>
ExprPtr make_expr(Span span, T node) {
  auto e = std::make_unique<Expr>();
  e->span = span;
  e->node = std::move(node);
  return e;
}

}  // namespace cot::ast
