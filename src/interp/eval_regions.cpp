// Operations with nested regions: generators, reductions, guards (strong zeros), loops and
// conditionals. Generators write straight into their result's storage; reductions accumulate
// in place, left to right.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "interp/machine.h"
#include "interp/tensor_ops.h"
#include "runtime/size_checks.h"

namespace cot::interp {

using cotangent::DType;
using cotangent::Value;

bool Machine::run_gen(const ir::Stmt& s, const ir::GenOp& op) {
  const Type& type = frame_->fn->type_of(s.results[0]);
  const size_t r = op.ivars.size();
  if (type.is_tuple || r == 0 || type.rank() < r || op.body.results.size() != 1) {
    return internal(s.span, "malformed generator of type " + type.to_string());
  }
  std::vector<int64_t> shape, extents;
  if (!eval_shape(type, s.span, shape) || !eval_extents(op.ivars, s.span, false, extents)) {
    return false;
  }
  for (size_t d = 0; d < r; ++d) {
    if (extents[d] != shape[d]) {
      return internal(s.span, "the generator's extents disagree with its type " + type.to_string() +
                                  " = " + shape_string(shape));
    }
  }
  const std::vector<int64_t> inner_shape(shape.begin() + static_cast<ptrdiff_t>(r), shape.end());
  if (auto why = size_error(SizeRule::Generator, shape, r, options_.max_tensor_elements)) {
    return fail(s.span, *why);
  }
  const int64_t inner = *element_count(inner_shape);
  Value out;
  if (!alloc(type.elem, shape, s.span, out)) return false;
  const DType dtype = out.dtype();
  Buffer buf(out);
  int64_t offset = 0;
  Value scratch;
  MarksBuilder marks;  // the strong zeros the body yields stay strong zeros (marks.h)
  const ir::Atom& res = op.body.results[0];
  bool ok = for_each_point(op.ivars, extents, [&] {
    if (!run_block(op.body)) return false;
    const Value& v = value_of(res, scratch);
    if (v.is_tuple() || v.dtype() != dtype || v.shape() != inner_shape) {
      return internal(s.span, "a generator body yields " + v.type_string() + " where " +
                                  type_string(type.elem, inner_shape) + " was expected");
    }
    buf.put(offset, v);
    if (is_real(type.elem)) marks.put(offset, inner, mask_of(res), marks_of(res).get());
    offset += inner;
    return true;
  });
  if (!ok) return false;
  frame_->bind_masked(s.results[0], std::move(out), 0, marks.finish(out.numel()));
  return true;
}

bool Machine::run_reduce(const ir::Stmt& s, const ir::ReduceOp& op) {
  const Type& type = frame_->fn->type_of(s.results[0]);
  if (type.is_tuple || !is_numeric(type.elem) || op.body.results.size() != 1) {
    return internal(s.span, "malformed reduction of type " + type.to_string());
  }
  std::vector<int64_t> extents;
  if (!eval_extents(op.ivars, s.span, true, extents)) return false;
  return type.is_scalar() ? run_reduce_scalar(s, op, type.elem, extents)
                          : run_reduce_tensor(s, op, type, extents);
}

namespace {

// The mask of a reduction's result (Frame::masked): a sum with no live term is free to add; a
// strong zero if some term was one.
uint8_t sum_mask(bool is_sum, int64_t live, bool strong) {
  if (!is_sum || live > 0) return 0;
  return strong ? Frame::kStrongZero : Frame::kEmptySum;
}

}  // namespace

bool Machine::run_reduce_scalar(const ir::Stmt& s, const ir::ReduceOp& op, Scalar elem,
                                const std::vector<int64_t>& extents) {
  const bool is_sum = op.kind == ir::ReduceKind::Sum;
  const double start = is_sum                           ? 0.0
                       : op.kind == ir::ReduceKind::Max ? -std::numeric_limits<double>::infinity()
                                                        : std::numeric_limits<double>::infinity();
  double acc64 = start;
  float acc32 = static_cast<float>(start);
  int64_t acci = 0;
  bool have = false;    // an i64 max/min has seen a term
  int64_t live = 0;     // terms that are not strong zeros
  bool strong = false;  // some term is a strong zero (not only empty sums)
  const DType dtype = dtype_of(elem);
  const ir::Atom& res = op.body.results[0];
  Value scratch;
  bool ok = for_each_point(op.ivars, extents, [&] {
    if (!run_block(op.body)) return false;
    const bool masked = is_masked(res);
    if (!masked) ++live;
    strong = strong || is_strong_zero(res);
    if (is_sum && masked) return true;  // adding a strong zero changes nothing
    const Value& v = value_of(res, scratch);
    if (!v.is_scalar() || v.dtype() != dtype) {
      return internal(s.span, std::string("the body of a ") + ast::to_string(op.kind) + " yields " +
                                  v.type_string() + " where " + to_string(elem) + " was expected");
    }
    switch (dtype) {
      case DType::F64:
        combine_real(acc64, v.as_f64(), op.kind);
        break;
      case DType::F32:
        combine_real(acc32, v.f32_data()[0], op.kind);
        break;
      case DType::I64: {
        const int64_t x = v.as_i64();
        if (is_sum) {
          if (__builtin_add_overflow(acci, x, &acci)) {
            return fail(s.span, "integer overflow in a sum of i64 values");
          }
        } else if (!have || (op.kind == ir::ReduceKind::Max ? x > acci : x < acci)) {
          acci = x;
        }
        have = true;
        break;
      }
      case DType::Bool:
        break;
    }
    return true;
  });
  if (!ok) return false;
  if (dtype == DType::I64 && !is_sum && !have) {
    return fail(s.span, std::string(ast::to_string(op.kind)) +
                            " over an empty range of integers has no value");
  }
  if (cost_ != nullptr && is_real(elem) && live > 0) {
    (is_sum ? cost_->add : cost_->call) += live - 1;
  }
  Value result = dtype == DType::F64   ? Value::f64(acc64)
                 : dtype == DType::F32 ? Value::f32(acc32)
                                       : Value::i64(acci);
  // A sum with no live term is free to add, so sums of sums cost what the joint sum costs
  // ([Bernstein20] rule 4.30: nested sums under one guard are costed jointly); it is a strong
  // zero when some term was one, else (an empty range) an ordinary 0 as a factor.
  frame_->bind_masked(s.results[0], std::move(result), sum_mask(is_sum, live, strong));
  return true;
}

bool Machine::run_reduce_tensor(const ir::Stmt& s, const ir::ReduceOp& op, const Type& type,
                                const std::vector<int64_t>& extents) {
  const bool is_sum = op.kind == ir::ReduceKind::Sum;
  std::vector<int64_t> shape;
  Value acc;
  if (!eval_shape(type, s.span, shape) || !alloc(type.elem, shape, s.span, acc)) return false;
  Buffer buf(acc);
  if (is_real(type.elem) && !is_sum) {
    buf.fill_real(op.kind == ir::ReduceKind::Max ? -std::numeric_limits<double>::infinity()
                                                 : std::numeric_limits<double>::infinity());
  }
  const DType dtype = acc.dtype();
  const ir::ReduceKind how = op.kind;
  const ir::Atom& res = op.body.results[0];
  bool have = false;
  int64_t live = 0;
  bool strong = false;
  // Element by element, a sum is a strong zero where some term was one and none was live.
  std::optional<SumMarks> sum_marks;
  if (is_sum && is_real(type.elem)) sum_marks.emplace(acc.numel());
  Value scratch;
  bool ok = for_each_point(op.ivars, extents, [&] {
    if (!run_block(op.body)) return false;
    const bool masked = is_masked(res);
    if (!masked) ++live;
    strong = strong || is_strong_zero(res);
    const MarksP& res_marks = marks_of(res);
    if (sum_marks) sum_marks->term(0, acc.numel(), mask_of(res), res_marks.get());
    if (is_sum && masked) return true;
    const Value& v = value_of(res, scratch);
    if (v.is_tuple() || v.dtype() != dtype || v.shape() != shape) {
      return internal(s.span, std::string("the body of a ") + ast::to_string(op.kind) + " yields " +
                                  v.type_string() + " where " + type.to_string() + " = " +
                                  shape_string(shape) + " was expected");
    }
    if (dtype == DType::I64 && !is_sum && !have) {
      buf.put(0, v);  // an integer max/min starts from its first term
    } else if (!buf.combine(0, v, how, is_sum ? res_marks.get() : nullptr)) {
      return fail(s.span, "integer overflow in a sum of i64 values");
    }
    have = true;
    return true;
  });
  if (!ok) return false;
  if (dtype == DType::I64 && !is_sum && !have && acc.numel() > 0) {
    return fail(s.span, std::string(ast::to_string(op.kind)) +
                            " over an empty range of integers has no value");
  }
  if (cost_ != nullptr && is_real(type.elem) && live > 0) {
    (is_sum ? cost_->add : cost_->call) += (live - 1) * acc.numel();
  }
  frame_->bind_masked(s.results[0], std::move(acc), sum_mask(is_sum, live, strong),
                      sum_marks ? sum_marks->finish() : nullptr);
  return true;
}

bool Machine::run_guard(const ir::Stmt& s, const ir::GuardOp& op) {
  std::optional<bool> holds = op.pred.eval([this](int32_t v) { return int_slot(v); },
                                           [this](int32_t v) { return bool_slot(v); });
  if (!check_reads(s.span)) return false;
  if (!holds) {
    return fail(s.span, "integer overflow while evaluating the predicate " +
                            op.pred.to_string([this](int32_t v) { return var_name(v); }));
  }
  if (!*holds) {
    // A strong zero: the body is not evaluated, so it can neither fail nor cost anything.
    for (ir::VarId v : s.results) {
      Value z;
      if (!zeros_of(frame_->fn->type_of(v), s.span, z)) return false;
      frame_->bind(v, std::move(z), true);
    }
    return true;
  }
  if (op.body.results.size() != s.results.size()) {
    return internal(s.span, "a guard body yields a different number of values than it binds");
  }
  if (!run_block(op.body)) return false;
  Value scratch;
  // Nested guards: a strong zero under a true guard is still one.
  for (size_t k = 0; k < s.results.size(); ++k)
    bind_like(s.results[k], op.body.results[k], scratch);
  return true;
}

namespace {

// The values of one state variable of a saving loop at the start of every iteration, appended
// element by element as the loop runs (O(T) time and memory in the number of iterations T;
// values of a state are not kept alive, only their elements) and stacked into one tensor of
// shape [T] ++ the state's shape when it ends.
class StateStack {
 public:
  StateStack(DType dtype, std::vector<int64_t> shape, int64_t numel)
      : dtype_(dtype), shape_(std::move(shape)), numel_(numel) {}

  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t numel() const { return numel_; }

  void reserve(int64_t iterations) {
    const auto n = static_cast<size_t>(iterations * numel_);
    switch (dtype_) {
      case DType::F64:
        f64_.reserve(n);
        break;
      case DType::F32:
        f32_.reserve(n);
        break;
      case DType::I64:
        i64_.reserve(n);
        break;
      case DType::Bool:
        b_.reserve(n);
        break;
    }
  }
  // Appends a value of this stack's dtype and shape (checked by the caller).
  void push(const Value& v) {
    switch (dtype_) {
      case DType::F64:
        append(f64_, v.f64_data());
        break;
      case DType::F32:
        append(f32_, v.f32_data());
        break;
      case DType::I64:
        append(i64_, v.i64_data());
        break;
      case DType::Bool:
        append(b_, v.bool_data());
        break;
    }
  }
  // Moves the elements into `out`, a fresh tensor of shape [T] ++ shape() (T the pushes).
  void stack_into(Value& out) {
    switch (dtype_) {
      case DType::F64:
        copy_out(f64_, out.f64_mut());
        break;
      case DType::F32:
        copy_out(f32_, out.f32_mut());
        break;
      case DType::I64:
        copy_out(i64_, out.i64_mut());
        break;
      case DType::Bool:
        copy_out(b_, out.bool_mut());
        break;
    }
  }

 private:
  template <class T>
  static void append(std::vector<T>& to, std::span<const T> from) {
    to.insert(to.end(), from.begin(), from.end());
  }
  template <class T>
  static void copy_out(std::vector<T>& from, std::span<T> to) {
    std::copy(from.begin(), from.end(), to.begin());
    std::vector<T>().swap(from);  // free the staging memory
  }

  DType dtype_;
  std::vector<int64_t> shape_;
  int64_t numel_;
  std::vector<double> f64_;
  std::vector<float> f32_;
  std::vector<int64_t> i64_;
  std::vector<uint8_t> b_;
};

}  // namespace

// A saving loop (LoopOp::saves_states) also binds the number of iterations T and per state
// variable the stack of its values at the start of every iteration. Saving and stacking are
// data movement: they cost nothing in the op-count cost model.
bool Machine::run_loop(const ir::Stmt& s, const ir::LoopOp& op) {
  const size_t n = op.state.size();
  const bool saving = op.saves_states;
  if (op.init.size() != n || s.results.size() != (saving ? 2 * n + 1 : n) ||
      op.body.results.size() != n || (op.is_while && op.cond.results.size() != 1)) {
    return internal(s.span, "malformed loop");
  }
  std::vector<StateStack> stacks;
  if (saving) {
    for (size_t k = 0; k < n; ++k) {
      const Type& t = frame_->fn->type_of(op.state[k]);
      if (t.is_tuple) {
        return internal(s.span, "a saving loop's state has the tuple type " + t.to_string());
      }
      std::vector<int64_t> shape;
      if (!eval_shape(t, s.span, shape)) return false;
      const std::optional<int64_t> numel = element_count(shape);
      if (!numel) {
        return fail(s.span, "the state shape " + shape_string(shape) +
                                " of a saving loop is too large or negative");
      }
      stacks.emplace_back(dtype_of(t.elem), std::move(shape), *numel);
    }
  }
  int64_t iterations = 0;                                // bodies run so far
  std::vector<MarksBuilder> stack_marks(stacks.size());  // the saved strong zeros
  // Pushes the current state onto the stacks, within the tensor size limit.
  auto save = [&]() -> bool {
    for (size_t k = 0; k < stacks.size(); ++k) {
      StateStack& st = stacks[k];
      const Value& v = frame_->at(op.state[k]);
      if (v.is_tuple() || v.dtype() != st.dtype() || v.shape() != st.shape()) {
        return internal(s.span, "the saving loop's state " + var_name(op.state[k]) + " is " +
                                    v.type_string() + " where " +
                                    type_string(scalar_of(st.dtype()), st.shape()) +
                                    " was expected");
      }
      int64_t total = 0;
      if (__builtin_mul_overflow(iterations + 1, st.numel(), &total) ||
          total > options_.max_tensor_elements) {
        return fail(s.span, "the saved states of " + var_name(op.state[k]) + " in a loop of " +
                                std::to_string(iterations + 1) +
                                " or more iterations would make a tensor of more than the limit "
                                "of " +
                                std::to_string(options_.max_tensor_elements) + " elements");
      }
      st.push(v);
      if (is_real(scalar_of(st.dtype()))) {
        stack_marks[k].put(iterations * st.numel(), st.numel(), frame_->mask(op.state[k]),
                           frame_->marks_of(op.state[k]).get());
      }
    }
    return true;
  };
  Value scratch;
  // The state lives in the state variables' slots; the next state is staged in `next` because
  // the body may yield the state variables themselves in another order. A strong zero in the
  // state stays one (docs/language.md §5.6).
  std::vector<Value> next(n);
  std::vector<MaskAndMarks> next_marks(n);
  auto stage_from = [&](const std::vector<ir::Atom>& from) {
    for (size_t k = 0; k < n; ++k) {
      next[k] = value_of(from[k], scratch);
      next_marks[k] = mask_and_marks(from[k]);
    }
  };
  stage_from(op.init);
  auto advance = [&] {
    for (size_t k = 0; k < n; ++k) {
      frame_->bind_masked(op.state[k], std::move(next[k]), next_marks[k].mask,
                          std::move(next_marks[k].marks));
    }
  };
  auto stage = [&] { stage_from(op.body.results); };
  advance();
  if (!op.is_while) {
    int64_t count = 0;
    if (!read_i64(op.count, s.span, "the trip count of a loop", count)) return false;
    for (StateStack& st : stacks) {
      // Known in advance: stage the stack in one allocation when it fits the limit.
      int64_t total = 0;
      if (count > 0 && !__builtin_mul_overflow(count, st.numel(), &total) &&
          total <= options_.max_tensor_elements) {
        st.reserve(count);
      }
    }
    for (int64_t it = 0; it < count; ++it) {
      if (op.iter >= 0) frame_->bind(op.iter, Value::i64(it));
      if (saving && !save()) return false;
      if (!run_block(op.body)) return false;
      stage();
      advance();
      ++iterations;
    }
  } else {
    for (int64_t it = 0;; ++it) {
      bool go = false;
      if (!run_block(op.cond) || !read_bool(op.cond.results[0], s.span, "a loop condition", go)) {
        return false;
      }
      if (!go) break;
      if (options_.max_while_iterations > 0 && it >= options_.max_while_iterations) {
        return fail(s.span,
                    "the while loop did not finish within " +
                        std::to_string(options_.max_while_iterations) + " iterations",
                    "if it should run longer, raise the limit with --max-iterations N (0: no "
                    "limit; in the C++ API, EvalOptions::max_while_iterations; in Python, "
                    "max_while_iterations=)");
      }
      if (saving && !save()) return false;
      if (!run_block(op.body)) return false;
      stage();
      advance();
      ++iterations;
    }
  }
  for (size_t k = 0; k < n; ++k) {
    frame_->bind_masked(s.results[k], frame_->at(op.state[k]), frame_->mask(op.state[k]),
                        frame_->marks_of(op.state[k]));
  }
  if (saving) {
    frame_->bind(s.results[n], Value::i64(iterations));
    for (size_t k = 0; k < n; ++k) {
      std::vector<int64_t> shape{iterations};
      shape.insert(shape.end(), stacks[k].shape().begin(), stacks[k].shape().end());
      Value out;
      if (!alloc(scalar_of(stacks[k].dtype()), shape, s.span, out)) return false;
      stacks[k].stack_into(out);
      MarksP saved = stack_marks[k].finish(out.numel());
      frame_->bind_masked(s.results[n + 1 + k], std::move(out), 0, std::move(saved));
    }
  }
  return true;
}

bool Machine::run_if(const ir::Stmt& s, const ir::IfOp& op) {
  bool c = false;
  if (!read_bool(op.cond, s.span, "the condition of an if", c)) return false;
  const ir::Block& branch = c ? op.then_branch : op.else_branch;
  if (branch.results.size() != s.results.size()) {
    return internal(s.span, "an if branch yields a different number of values than it binds");
  }
  if (!run_block(branch)) return false;  // only the taken branch runs
  Value scratch;
  // A strong zero the taken branch yields stays one, as if the branch were inlined.
  for (size_t k = 0; k < s.results.size(); ++k) bind_like(s.results[k], branch.results[k], scratch);
  return true;
}

}  // namespace cot::interp
