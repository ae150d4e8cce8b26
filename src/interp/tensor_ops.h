// Element-level helpers of the interpreter: exact scalar conversions, and a mutable view of a
// freshly allocated tensor used to write generator results and accumulate reductions in place
// (no per-element allocation). Dtypes and shapes, shared with the native backend, are in
// runtime/tensor_shapes.h.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cotangent/value.h"
#include "interp/marks.h"
#include "ir/ir.h"
#include "ir/type.h"
#include "prims/scalar_math.h"
#include "runtime/tensor_shapes.h"

namespace cot::interp {

// IEEE round-to-nearest conversion (overflow gives +-inf), without the undefined behaviour of a
// plain cast of an out-of-range double.
float to_f32(double x);

// Element k (flat, row-major) of a tensor as a scalar value of the same dtype.
cotangent::Value scalar_element(const cotangent::Value& t, int64_t k);
// Elements [from, from + numel(shape)) of `src` copied into a new tensor of `shape`.
cotangent::Value copy_range(const cotangent::Value& src, int64_t from,
                            const std::vector<int64_t>& shape);

// Writable elements of a tensor its creator has just allocated with Value::zeros.
class Buffer {
 public:
  explicit Buffer(cotangent::Value& fresh);

  cotangent::DType dtype() const { return dtype_; }
  // Fills every element with x (reals only).
  void fill_real(double x);
  // Stores every element of `v` (same dtype) at offset, offset + 1, ...
  void put(int64_t offset, const cotangent::Value& v);
  // acc[offset + k] = acc[offset + k] (+ | max | min) v[k], same dtype, as combine_real
  // below for reals, except at the elements `skip` marks (strong zeros a sum skips). Returns
  // false on i64 overflow.
  bool combine(int64_t offset, const cotangent::Value& v, ir::ReduceKind how,
               const Marks* skip = nullptr);

 private:
  cotangent::DType dtype_;
  std::span<double> f64_;
  std::span<float> f32_;
  std::span<int64_t> i64_;
  std::span<uint8_t> b_;
};

// acc (+ | max | min) x on reals. max/min propagate NaN (a NaN operand replaces the
// accumulator, and a NaN accumulator is never replaced, since every comparison with it is
// false) and strict comparisons keep the first of equal operands.
template <class T>
void combine_real(T& acc, T x, ir::ReduceKind how) {
  switch (how) {
    case ir::ReduceKind::Sum:
      acc = acc + x;
      break;
    case ir::ReduceKind::Max:
      acc = cot_rt::max_combine(acc, x);
      break;
    case ir::ReduceKind::Min:
      acc = cot_rt::min_combine(acc, x);
      break;
  }
}

}  // namespace cot::interp
