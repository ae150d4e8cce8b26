// Positional operations: tensor reads (elements and slices, every index range-checked) and the
// scatter-add `accum`.
#include <optional>
#include <string>
#include <vector>

#include "interp/machine.h"
#include "interp/tensor_ops.h"
#include "runtime/size_checks.h"

namespace cot::interp {

using cotangent::DType;
using cotangent::Value;

bool Machine::eval_index_expr(const ir::IndexExpr& e, Span span, int64_t& out) {
  if (!e.is_affine) return read_i64(e.computed, span, "a computed index", out);
  // Evaluated here rather than by Affine::eval: this is the interpreter's hottest path, and a
  // direct loop avoids a std::function call per term.
  int64_t acc = e.affine.constant_term();
  for (const auto& [v, c] : e.affine.terms()) {
    const Value& x = frame_->at(v);
    if (!x.is_scalar() || x.dtype() != DType::I64) {
      bad_read_ = v;
      return check_reads(span);
    }
    int64_t term = 0;
    if (__builtin_mul_overflow(c, x.as_i64(), &term) || __builtin_add_overflow(acc, term, &acc)) {
      return fail(span, "integer overflow in the index " +
                            e.affine.to_string([this](int32_t x) { return var_name(x); }));
    }
  }
  out = acc;
  return true;
}

bool Machine::run_index(const ir::Stmt& s, const ir::IndexOp& op) {
  if (!op.tensor.is_var) return internal(s.span, "indexing a literal");
  const Value& t = frame_->at(op.tensor.var);
  const size_t k = op.indices.size();
  if (t.is_tuple() || k > static_cast<size_t>(t.rank())) {
    return internal(s.span, std::to_string(k) + " indices into a value of type " + t.type_string());
  }
  const std::vector<int64_t>& shape = t.shape();
  int64_t offset = 0;
  for (size_t d = 0; d < k; ++d) {
    int64_t i = 0;
    if (!eval_index_expr(op.indices[d], s.span, i)) return false;
    if (i < 0 || i >= shape[d]) {
      return fail(s.span, "index " + std::to_string(i) + " is out of range for dimension " +
                              std::to_string(d) + " of " + var_name(op.tensor.var) +
                              ", which has shape " + shape_string(shape));
    }
    offset = offset * shape[d] + i;  // below numel(shape), so it cannot overflow
  }
  // A stored strong zero is read back as one (docs/language.md §5.6).
  const uint8_t whole = frame_->mask(op.tensor.var);
  const MarksP& marks = frame_->marks_of(op.tensor.var);
  if (k == 0) {
    frame_->bind_masked(s.results[0], t, whole, marks);
    return true;
  }
  if (k == shape.size()) {
    frame_->bind_masked(s.results[0], scalar_element(t, offset),
                        element_mask(whole, marks.get(), offset));
    return true;
  }
  // A slice: the trailing dimensions, copied (storage is immutable, so a copy is always safe).
  const std::vector<int64_t> rest(shape.begin() + static_cast<ptrdiff_t>(k), shape.end());
  const int64_t count = *element_count(rest);
  frame_->bind_masked(s.results[0], copy_range(t, offset * count, rest),
                      whole == Frame::kStrongZero ? whole : 0,
                      slice_marks(marks.get(), offset * count, count));
  return true;
}

bool Machine::run_accum(const ir::Stmt& s, const ir::AccumOp& op) {
  const Type& type = frame_->fn->type_of(s.results[0]);
  const size_t r = op.shape.size();
  if (type.is_tuple || !is_numeric(type.elem) || r == 0 || type.rank() < r ||
      op.body.results.size() != r + 1) {
    return internal(s.span, "malformed accum of type " + type.to_string());
  }
  std::vector<int64_t> shape, extents;
  if (!eval_shape(type, s.span, shape) || !eval_extents(op.ivars, s.span, true, extents)) {
    return false;
  }
  for (size_t d = 0; d < r; ++d) {
    int64_t want = 0;
    if (!eval_size(op.shape[d], s.span, want)) return false;
    if (want != shape[d]) {
      return internal(s.span, "the accum's shape disagrees with its type " + type.to_string());
    }
  }
  const std::vector<int64_t> inner_shape(shape.begin() + static_cast<ptrdiff_t>(r), shape.end());
  if (auto why = size_error(SizeRule::Accum, shape, r, options_.max_tensor_elements)) {
    return fail(s.span, *why);
  }
  const std::optional<int64_t> inner = element_count(inner_shape);
  const std::optional<int64_t> cells = element_count(std::span<const int64_t>(shape.data(), r));
  Value out;
  if (!alloc(type.elem, shape, s.span, out)) return false;
  const DType dtype = out.dtype();
  Buffer buf(out);
  // Cost: contributions to one cell form a sum, so all but the first live one cost additions.
  const bool counting = cost_ != nullptr && is_real(type.elem);
  std::vector<uint8_t> touched(counting && *inner > 0 ? static_cast<size_t>(*cells) : 0, 0);
  // A cell is a sum of its contributions: a strong zero when some was one and none was live.
  std::optional<SumMarks> sum_marks;
  if (is_real(type.elem)) sum_marks.emplace(*cells * *inner);
  const ir::Atom& res = op.body.results[r];
  Value scratch;
  bool ok = for_each_point(op.ivars, extents, [&] {
    if (!run_block(op.body)) return false;
    const bool masked = is_masked(res);
    int64_t cell = 0;
    for (size_t d = 0; d < r; ++d) {
      int64_t i = 0;
      if (!read_i64(op.body.results[d], s.span, "an accum index", i)) return false;
      if (i < 0 || i >= shape[d]) {
        if (masked) return true;  // a strong zero goes nowhere, not even out of range
        return fail(s.span, "index " + std::to_string(i) + " is out of range for dimension " +
                                std::to_string(d) + " of the accumulated tensor, which has shape " +
                                shape_string(shape));
      }
      cell = cell * shape[d] + i;
    }
    const MarksP& res_marks = marks_of(res);
    if (sum_marks) sum_marks->term(cell * *inner, *inner, mask_of(res), res_marks.get());
    if (masked) return true;  // adds nothing
    const Value& v = value_of(res, scratch);
    if (v.is_tuple() || v.dtype() != dtype || v.shape() != inner_shape) {
      return internal(s.span, "an accum body yields " + v.type_string() + " where " +
                                  type_string(type.elem, inner_shape) + " was expected");
    }
    if (!buf.combine(cell * *inner, v, ir::ReduceKind::Sum, res_marks.get())) {
      return fail(s.span, "integer overflow in an accum of i64 values");
    }
    if (counting && *inner > 0) {
      auto c = static_cast<size_t>(cell);
      if (touched[c]) {
        cost_->add += *inner;
      } else {
        touched[c] = 1;
      }
    }
    return true;
  });
  if (!ok) return false;
  frame_->bind_masked(s.results[0], std::move(out), 0, sum_marks ? sum_marks->finish() : nullptr);
  return true;
}

}  // namespace cot::interp
