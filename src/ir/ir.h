// Core IR ("Tensor SSA"): A-normal form with nested regions (design.md §4).
//
// A Function has typed parameters, size variables and a body Block. A Block is a list of
// statements, each binding fresh variables (single assignment) to one operation whose operands
// are atoms (variables or literals), and a list of result atoms. Regions (gen, reduce, guard,
// loop, if, accum bodies) are nested Blocks. Variables are dense integer ids into the function's
// variable table, so passes and the interpreter can index per-variable data by id.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "base/operator_kinds.h"
#include "base/source.h"
#include "index/affine.h"
#include "index/predicate.h"
#include "ir/size_expr.h"
#include "ir/type.h"
#include "prims/prim.h"

namespace cot::ir {

using VarId = int32_t;

struct Literal {
  Scalar type = Scalar::F64;
  double real = 0;      // F64, F32
  int64_t integer = 0;  // I64
  bool boolean = false;
  bool operator==(const Literal& o) const;
};

// An operand: a variable or a scalar literal.
struct Atom {
  bool is_var = true;
  VarId var = -1;
  Literal lit;

  static Atom of(VarId v) { return Atom{true, v, {}}; }
  static Atom real(double x, Scalar t = Scalar::F64) { return Atom{false, -1, {t, x, 0, false}}; }
  static Atom i64(int64_t x) { return Atom{false, -1, {Scalar::I64, 0, x, false}}; }
  static Atom boolean(bool b) { return Atom{false, -1, {Scalar::Bool, 0, 0, b}}; }
  bool operator==(const Atom& o) const {
    return is_var == o.is_var && (is_var ? var == o.var : lit == o.lit);
  }
  // The real literal x (the AD stage's 0 and ±1 partials).
  bool is_real_literal(double x) const { return !is_var && is_real(lit.type) && lit.real == x; }
};

// An index of a tensor read: affine in index and size variables, or a computed i64 atom.
struct IndexExpr {
  bool is_affine = true;
  Affine affine;
  Atom computed;
};

struct Stmt;

struct Block {
  std::vector<Stmt> stmts;
  std::vector<Atom> results;
};

// An index variable bound by gen, reduce or accum, ranging over [0, extent).
struct IndexVar {
  VarId var = -1;
  SizeExpr extent;
};

using ReduceKind = ast::ReduceKind;

// Scalar primitive from the primitive table.
struct PrimOp {
  Prim prim;
  std::vector<Atom> args;
};
// tensor[indices...]; fewer indices than the rank give a slice.
struct IndexOp {
  Atom tensor;
  std::vector<IndexExpr> indices;
};
// for ivars. body  (body yields one value; the result has shape extents ++ shape(value)).
struct GenOp {
  std::vector<IndexVar> ivars;
  Block body;
};
// sum/max/min ivars. body  (body yields one value, reduced elementwise).
struct ReduceOp {
  ReduceKind kind;
  std::vector<IndexVar> ivars;
  Block body;
};
// [pred] * body: the body's values when pred holds, else zeros of their types; the body is
// not evaluated when pred is false (a strong zero). Any number of results.
struct GuardOp {
  Pred pred;
  Block body;
};
// loop state = init for iter < count { body }  or  loop state = init while cond { body }.
// The state is flattened: one variable per leaf of the surface state; body yields the next
// state; the statement binds the final state.
struct LoopOp {
  std::vector<Atom> init;
  std::vector<VarId> state;
  bool is_while = false;
  VarId iter = -1;  // for-form: the iteration counter (i64)
  Atom count;       // for-form: the trip count (i64)
  Block cond;       // while-form: yields one bool, may read the state
  Block body;
  // A saving loop (made by AD's unzip for reverse mode, design.md §7.3): besides the final
  // state it binds the number of iterations it ran, T (an i64), and for each state variable the
  // stack of its values at the start of every iteration, a tensor of shape [T] ++ its shape.
  // Results: state.size() final values, then T, then state.size() stacks. T is a dynamic size
  // variable of the function (SizeVar with param == -1 and var == the T result), so the stacks'
  // types can name it.
  bool saves_states = false;
};
// if cond then a else b: only the taken branch runs. Both branches yield the same types.
struct IfOp {
  Atom cond;
  Block then_branch, else_branch;
};
// accum[shape] ivars. (k1, ..., kr, value): a pure scatter-add. Starts from zeros of shape
// shape ++ shape(value) and adds each value at position (k1..kr), r = shape.size().
struct AccumOp {
  std::vector<SizeExpr> shape;
  std::vector<IndexVar> ivars;
  Block body;  // results: r i64 atoms, then the value
};
struct TupleOp {
  std::vector<Atom> elems;
};
struct ProjOp {
  Atom tuple;
  int index = 0;
};
// The value of a size expression (size variables, `size(x, k)`, extents) as an i64.
struct SizeOp {
  SizeExpr size;
};
// Call of another function of the program (user, prelude or derived) by name.
struct CallOp {
  std::string callee;
  std::vector<Atom> args;
};

using Op = std::variant<PrimOp, IndexOp, GenOp, ReduceOp, GuardOp, LoopOp, IfOp, AccumOp, TupleOp,
                        ProjOp, SizeOp, CallOp>;

struct Stmt {
  // Exactly one except for LoopOp, IfOp, GuardOp (one per result; a saving loop has
  // 2 * state.size() + 1, see LoopOp).
  std::vector<VarId> results;
  Op op;
  Span span;  // the source construct it came from, for runtime errors

  template <class T>
  const T* as() const {
    return std::get_if<T>(&op);
  }
  template <class T>
  T* as() {
    return std::get_if<T>(&op);
  }
};

struct VarInfo {
  std::string name;  // the source name or a generated hint; not unique
  Type type;
};

// Where a size variable is bound: the first parameter dimension that is exactly that variable,
// or (param == -1) a dynamic size: the value of the i64 variable `var`, bound at run time by
// the statement that defines it (the iteration count of a saving loop).
struct SizeVar {
  std::string name;
  VarId var = -1;         // the i64 variable holding its value in the body
  int param = 0;          // parameter index; -1 for a dynamic size
  std::vector<int> path;  // tuple path inside the parameter's type
  int dim = 0;            // dimension index
};

// How a derived function is obtained from another (docs/language.md §8).
struct Derivation {
  ast::DerivKind kind;
  std::string base;      // the function differentiated
  std::vector<int> wrt;  // active parameter indices of `base`
};

struct Function {
  std::string name;
  Span span;
  std::vector<VarId> params;
  std::vector<Span> param_spans;
  std::vector<SizeVar> size_vars;
  Type result_type;
  Block body;  // yields exactly one atom; empty for a derived function not yet built
  std::vector<VarInfo> vars;
  std::optional<Derivation> derivation;
  bool from_prelude = false;

  const Type& type_of(VarId v) const { return vars.at(static_cast<size_t>(v)).type; }
  VarId new_var(std::string name, Type type) {
    vars.push_back(VarInfo{std::move(name), std::move(type)});
    return static_cast<VarId>(vars.size() - 1);
  }
  Type param_type(size_t i) const { return type_of(params.at(i)); }
};

struct Program {
  std::shared_ptr<SourceManager> sources;
  std::vector<Function> functions;

  const Function* find(const std::string& name) const;
  Function* find(const std::string& name);
};

// The type of an atom in the given function.
Type atom_type(const Function& f, const Atom& a);

// `hint`, or `hint_2`, `hint_3`, ... : the first not in `taken`. Names the parameters a derived
// function adds (a jvp's `t_x`, a vjp's `ct`) so that they never repeat one of the base's
// (docs/language.md §8: derived functions are called by parameter name from the Python package).
std::string unique_name(const std::vector<std::string>& taken, const std::string& hint);
// The names of f's parameters, in order.
std::vector<std::string> param_names(const Function& f);

// A size-variable name for `f` that no size variable and no variable of `f` has: `hint`, else
// hint_2, hint_3, ... (the first free one).
std::string fresh_size_name(const Function& f, const std::string& hint);

}  // namespace cot::ir
