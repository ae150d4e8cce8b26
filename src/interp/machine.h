// The interpreter's machine: runs Core IR blocks over a Frame, checks every index, shape and
// integer operation, and counts real operations under the cost model when asked. Errors are
// values: the first failure is recorded (with the span of the statement that failed) and every
// method returns false from then on, so no exception or partial result escapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "base/diagnostic.h"
#include "cotangent/value.h"
#include "interp/environment.h"
#include "interp/interpreter.h"
#include "ir/ir.h"

namespace cot::interp {

// A value's mask byte and marks (environment.h, marks.h), carried across a call.
struct MaskAndMarks {
  uint8_t mask = 0;
  MarksP marks;
};

class Machine {
 public:
  Machine(const ir::Program& program, CostCounts* cost, const Options& options)
      : program_(program), cost_(cost), options_(options) {}

  // Runs `fn` on `args`. `call_span` is the calling statement's span, or invalid for the entry
  // point, in which case argument errors point at the parameters' declarations.
  // `arg_marks` (when not null) are the arguments' strong-zero marks, and `result_marks` gets
  // the result's: a call keeps them as inlining it would (docs/language.md §5.6).
  bool call(const ir::Function& fn, const std::vector<cotangent::Value>& args, Span call_span,
            cotangent::Value& result, const std::vector<MaskAndMarks>* arg_marks = nullptr,
            MaskAndMarks* result_marks = nullptr);

  // Binds `args` to the parameters of `fn` (the entry point's checks) and copies the size
  // variables' values into `sizes`, without running the body.
  bool bind_sizes(const ir::Function& fn, const std::vector<cotangent::Value>& args,
                  std::vector<int64_t>& sizes);

  Diagnostic take_error() { return std::move(*error_); }

 private:
  // --- calls (interpreter.cpp) and parameters (parameters.cpp) ---
  bool bind_params(const ir::Function& fn, const std::vector<cotangent::Value>& args,
                   Span call_span, const std::vector<MaskAndMarks>* arg_marks = nullptr);
  bool check_result(const ir::Function& fn, const cotangent::Value& result);
  bool derivative_unsupported(const ir::Function& fn, Span span);
  // Every VarId the function mentions is a valid slot (checked once per function, var_ids.cpp),
  // so the hot paths can index frames without bounds checks even on malformed IR.
  bool check_var_ids(const ir::Function& fn);

  // --- statements (interpreter.cpp) ---
  bool run_block(const ir::Block& b);
  bool run_stmt(const ir::Stmt& s);
  bool run_tuple(const ir::Stmt& s, const ir::TupleOp& op);
  bool run_proj(const ir::Stmt& s, const ir::ProjOp& op);
  bool run_size(const ir::Stmt& s, const ir::SizeOp& op);
  bool run_call(const ir::Stmt& s, const ir::CallOp& op);
  // eval_prim.cpp
  bool run_prim(const ir::Stmt& s, const ir::PrimOp& op);
  void charge_prim(const ir::PrimOp& op, const PrimInfo& info);
  // Whether the primitive's result is a strong zero whatever its value (mask propagation).
  bool strong_zero_result(const ir::PrimOp& op) const;
  // eval_regions.cpp
  bool run_gen(const ir::Stmt& s, const ir::GenOp& op);
  bool run_reduce(const ir::Stmt& s, const ir::ReduceOp& op);
  bool run_reduce_scalar(const ir::Stmt& s, const ir::ReduceOp& op, Scalar elem,
                         const std::vector<int64_t>& extents);
  bool run_reduce_tensor(const ir::Stmt& s, const ir::ReduceOp& op, const Type& type,
                         const std::vector<int64_t>& extents);
  bool run_guard(const ir::Stmt& s, const ir::GuardOp& op);
  bool run_loop(const ir::Stmt& s, const ir::LoopOp& op);
  bool run_if(const ir::Stmt& s, const ir::IfOp& op);
  // eval_index.cpp
  bool run_index(const ir::Stmt& s, const ir::IndexOp& op);
  bool run_accum(const ir::Stmt& s, const ir::AccumOp& op);
  bool eval_index_expr(const ir::IndexExpr& e, Span span, int64_t& out);

  // --- environment (interpreter.cpp) ---
  // The value of an atom; literals are materialized in `scratch`.
  const cotangent::Value& value_of(const ir::Atom& a, cotangent::Value& scratch) const;
  bool is_masked(const ir::Atom& a) const { return a.is_var && frame_->is_masked(a.var); }
  bool is_strong_zero(const ir::Atom& a) const { return a.is_var && frame_->is_strong_zero(a.var); }
  uint8_t mask_of(const ir::Atom& a) const { return a.is_var ? frame_->mask(a.var) : 0; }
  MarksP marks_of(const ir::Atom& a) const { return a.is_var ? frame_->marks_of(a.var) : nullptr; }
  MaskAndMarks mask_and_marks(const ir::Atom& a) const { return {mask_of(a), marks_of(a)}; }
  // Binds v to the value of atom a with its mask and marks.
  void bind_like(ir::VarId v, const ir::Atom& a, cotangent::Value& scratch) {
    MaskAndMarks m = mask_and_marks(a);
    frame_->bind_masked(v, value_of(a, scratch), m.mask, std::move(m.marks));
  }
  bool read_i64(const ir::Atom& a, Span span, const char* what, int64_t& out);
  bool read_bool(const ir::Atom& a, Span span, const char* what, bool& out);
  // Affine and predicate evaluation read i64 and bool slots through these; a slot of the wrong
  // type sets bad_read_ (reported by the caller) instead of failing inside a callback.
  int64_t int_slot(int32_t v);
  bool bool_slot(int32_t v);
  bool check_reads(Span span);
  std::string var_name(int32_t v) const;

  // --- sizes and shapes (interpreter.cpp) ---
  bool eval_size(const SizeExpr& e, Span span, int64_t& out);
  bool eval_shape(const Type& t, Span span, std::vector<int64_t>& out);
  // The extents of an index space; `allow_negative` maps negative extents to empty ranges
  // (reductions, scatters) instead of reporting them (generators, which build shapes).
  bool eval_extents(const std::vector<ir::IndexVar>& ivars, Span span, bool allow_negative,
                    std::vector<int64_t>& out);
  // A fresh zero tensor, within Options::max_tensor_elements.
  bool alloc(Scalar elem, const std::vector<int64_t>& shape, Span span, cotangent::Value& out);
  bool zeros_of(const Type& t, Span span, cotangent::Value& out);

  // Runs `body` at every point of the index space in row-major order, with the index variables
  // bound. `body` returns false to stop (after an error).
  template <class F>
  bool for_each_point(const std::vector<ir::IndexVar>& ivars, const std::vector<int64_t>& extents,
                      F&& body);

  bool fail(Span span, std::string message, std::string help = {});
  bool internal(Span span, const std::string& message) {
    return fail(span, "internal error: " + message);
  }

  const ir::Program& program_;
  CostCounts* cost_;
  Options options_;
  Frame* frame_ = nullptr;
  size_t depth_ = 0;
  static constexpr size_t kMaxCallDepth = 256;
  size_t block_depth_ = 0;
  static constexpr size_t kMaxBlockDepth = 2048;
  std::unordered_set<const ir::Function*> ids_checked_;
  int32_t bad_read_ = -1;
  std::optional<Diagnostic> error_;
};

template <class F>
bool Machine::for_each_point(const std::vector<ir::IndexVar>& ivars,
                             const std::vector<int64_t>& extents, F&& body) {
  const size_t r = ivars.size();
  for (int64_t e : extents) {
    if (e <= 0) return true;
  }
  if (r == 0) return body();
  if (r == 1) {  // the common case, without the odometer
    for (int64_t i = 0; i < extents[0]; ++i) {
      frame_->bind(ivars[0].var, cotangent::Value::i64(i));
      if (!body()) return false;
    }
    return true;
  }
  std::vector<int64_t> idx(r, 0);
  for (size_t d = 0; d < r; ++d) frame_->bind(ivars[d].var, cotangent::Value::i64(0));
  while (true) {
    if (!body()) return false;
    size_t d = r;
    while (d > 0) {
      --d;
      if (++idx[d] < extents[d]) {
        frame_->bind(ivars[d].var, cotangent::Value::i64(idx[d]));
        break;
      }
      idx[d] = 0;
      frame_->bind(ivars[d].var, cotangent::Value::i64(0));
      if (d == 0) return true;
    }
  }
}

}  // namespace cot::interp
