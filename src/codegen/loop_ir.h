// The loop IR (design.md §10): what Core IR lowers to before C++ is emitted. Imperative and
// explicit about memory: scalar locals, pointer locals into buffers, counted and open loops,
// stores, and checks that fail with a numbered site. Every tensor lives in a buffer that one
// Alloc creates (the memory plan gives static-sized buffers an offset in one arena; others come
// from the heap), or in a caller's argument or result. Shapes are concrete, except the trip
// counts of loops whose count is only known at run time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include "base/source.h"
#include "ir/ir.h"
#include "prims/prim.h"
#include "runtime/size_checks.h"

namespace cot::codegen {

using LocalId = int32_t;

struct Local {
  std::string name;
  Scalar type = Scalar::F64;
  bool is_pointer = false;  // a pointer to elements of `type`
  bool is_mask = false;     // a strong-zero mask (uint8_t: 0 ordinary, 1 strong zero, 2 empty sum)
};

// A side-effect-free scalar expression (loads read buffers no statement writes while the
// expression lives). Built through the smart constructors in lower_expr.h, which fold literals.
struct Expr;
using ExprP = std::shared_ptr<const Expr>;
struct Expr {
  enum class Kind : uint8_t {
    Lit,     // lit
    Local,   // local
    Load,    // local (a pointer) [args[0]]
    Prim,    // prim(args): real arithmetic, comparisons, logic, select, conversions, and i64
             // arithmetic proven not to overflow
    MaskIs,  // args[0] (a mask) == lit.integer
  };
  Kind kind = Kind::Lit;
  Scalar type = Scalar::F64;  // the value's type (Bool for comparisons and MaskIs)
  ir::Literal lit;
  LocalId local = -1;
  Prim prim = Prim::Add;
  std::vector<ExprP> args;
};

// Why a check fails: what the host needs to word the interpreter's message. The generated code
// reports the site's number and up to kMaxSiteValues integers (operands, indices, counts).
struct Site {
  enum class Kind : uint8_t {
    Message,         // `message` as is (site 0 of every function: out of memory)
    IndexRange,      // values: index, dimension size; `message` is the tensor's name, `dim` the
                     // dimension, `shape` its shape (a -1 entry is a run-time size: value 2+k)
    IntPrim,         // values: the operands of `prim` on i64 (the host re-evaluates for the words)
    RealToI64,       // values: the bits of the f64 operand
    WhileLimit,      // values: the limit
    AccumIndex,      // values: index, dimension size; `dim`, `shape` as IndexRange
    SavedStates,     // values: iterations; `message` is the state's name
    TensorLimit,     // a tensor that cannot be built (interp::size_error under `size_rule`,
                     // `dim` index dims, `limit`): `shape` its dims, a -1 entry a run-time dim
                     // (the values, in order)
    NegativeExtent,  // values: the extent; `message` is "EXTENT of index NAME"
    Overflow,        // `message` as is (an index or predicate whose arithmetic overflowed)
  };
  Kind kind = Kind::Message;
  Span span;
  std::string message;
  std::string help;
  Prim prim = Prim::Add;
  int dim = 0;
  std::vector<int64_t> shape;
  interp::SizeRule size_rule = interp::SizeRule::Tensor;  // TensorLimit
  int64_t limit = 0;                                      // TensorLimit: elements per tensor
};
inline constexpr int kMaxSiteValues = 8;

struct Stmt;
using Body = std::vector<Stmt>;

// T local = value;  (a declaration: the local's scope is the rest of the enclosing body)
struct Declare {
  LocalId local;
  ExprP value;  // null: declared with the type's zero
};
struct Assign {
  LocalId local;
  ExprP value;
};
// pointer[index] = value
struct Store {
  LocalId pointer;
  ExprP index;
  ExprP value;
};
// Declares `local` = prim(args) on i64, or fails with `site` (reporting the operands) when it
// overflows or divides by zero; ToI64 converts an f64 operand.
struct CheckedInt {
  LocalId local;
  Prim prim;
  std::vector<ExprP> args;
  int site;
};
struct For {
  LocalId var;  // declared by the loop
  ExprP begin, end;
  Body body;
  bool parallel = false;  // iterations are independent (OpenMP across threads)
  // Iterations are independent (a generator's points), though on one thread unless parallel:
  // a long flat body runs in vector lanes (`omp simd`).
  bool independent = false;
  // A parallel loop's buffers come from a per-thread arena of this many bytes (plan_memory).
  int64_t thread_arena_bytes = 0;
  int arena = 0;  // plan_memory: the arena its body's buffers use (0: the function's)
  // Iterations are independent and touch consecutive elements: vectorize it (`omp simd`).
  bool simd = false;
  // Set by the lowering on the outermost loop of a real scalar sum's points: the sum accumulates
  // into this local, in the interpreter's order (so it may be regrouped, docs/language.md §7).
  // The long-sums pass (long_sums.h) decides from it which loops of the nest add in vector
  // lanes, interchange-sums (interchange_sums.h) which sums run inside a generator's points.
  // -1: not such a loop.
  LocalId sum_of = -1;
  // With sum_of: a term can be masked (the sum's `live` and `strong` flags, declared before
  // the loop, record which); such a sum keeps its order (no lanes).
  bool sum_masked = false;
  // A long real sum into this local is the loop's only carried value, and the body cannot
  // fail: it may run in vector lanes, reassociated (`omp simd reduction`); -1: in order.
  LocalId sum_into = -1;
};
// for (;;) { body }, left by Break.
struct Forever {
  Body body;
};
struct Break {};
struct If {
  ExprP cond;
  Body then_body, else_body;
};
// Fails with `site`, reporting `values`.
struct Fail {
  int site;
  std::vector<ExprP> values;
};
// Declares `pointer` to a fresh buffer of `count` elements of the pointer's type: from the
// arena when `count` is a literal (the memory plan fills `arena_offset`), else from the heap,
// freed when the enclosing body ends; `on_stack`, a small array local to the enclosing body
// (`count` a literal), which the C++ compiler knows aliases nothing. The contents are
// unspecified.
struct Alloc {
  LocalId pointer;
  ExprP count;
  int64_t arena_offset = -1;  // bytes, set by plan_memory; -1: from the heap
  int arena = 0;              // 0: the function's arena; k: the k-th parallel loop's
  bool on_stack = false;
};
// Declares `pointer` = base + offset (a view into another buffer).
struct View {
  LocalId pointer;
  LocalId base;
  ExprP offset;
};
// Copies `count` elements src[src_offset ...] to dst[dst_offset ...] (never overlapping).
struct Copy {
  LocalId dst;
  ExprP dst_offset;
  LocalId src;
  ExprP src_offset;
  ExprP count;
};
// dst[offset ... offset + count) = value
struct Fill {
  LocalId dst;
  ExprP offset, count;
  ExprP value;
};
// dst[k] = dst[k] (+ | max | min) src[k] for k < count; an i64 sum fails with `site` on
// overflow.
struct Combine {
  ir::ReduceKind how;
  LocalId dst;
  ExprP dst_offset;
  LocalId src;
  ExprP src_offset;
  ExprP count;
  int site = -1;
};
// Exchanges two pointer locals (a loop's current and next state buffers).
struct Swap {
  LocalId a, b;
};
// A growable buffer for the saved states of a while-loop: Grow makes room for `count` elements
// (doubling), keeping the contents; `pointer` is declared by StackInit.
struct StackInit {
  LocalId pointer;
};
struct StackGrow {
  LocalId pointer;
  ExprP count;
};

using StmtOp = std::variant<Declare, Assign, Store, CheckedInt, For, Forever, Break, If, Fail,
                            Alloc, View, Copy, Fill, Combine, Swap, StackInit, StackGrow>;
struct Stmt {
  StmtOp op;
};

// One leaf of the entry point's arguments or result: a pointer to `count` elements.
struct Port {
  LocalId pointer;
  Scalar type;
  int64_t count;  // -1: known at run time; 0 also for a result that cannot be built
  // A result whose shape cannot be built (interp::size_error) is only ever written after a
  // check that fails, so the host gives it no memory; unless a value that exists is copied into
  // it (an argument over the tensor limit passed through), which needs the memory.
  bool cannot_build = false;
  bool copied_into = false;
};

struct LoopFunction {
  std::string name;
  std::vector<Local> locals;
  std::vector<Port> inputs, outputs;
  Body body;
  std::vector<Site> sites;
  int64_t arena_bytes = 0;  // set by plan_memory
  bool uses_parallel = false;
  bool uses_heap = false;

  LocalId new_local(std::string hint, Scalar type, bool pointer = false, bool mask = false) {
    locals.push_back(Local{std::move(hint), type, pointer, mask});
    return static_cast<LocalId>(locals.size() - 1);
  }
};

}  // namespace cot::codegen
