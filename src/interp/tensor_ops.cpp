#include "interp/tensor_ops.h"

#include <cmath>
#include <limits>

namespace cot::interp {

using cotangent::DType;
using cotangent::Value;

float to_f32(double x) {
  constexpr double kMax = std::numeric_limits<float>::max();
  if (std::isnan(x)) return std::numeric_limits<float>::quiet_NaN();
  if (std::fabs(x) <= kMax) return static_cast<float>(x);
  // Beyond the largest float: round to nearest (ties to even) gives inf from halfway to the next
  // power of two onwards (the halfway point itself rounds to inf), else the largest float.
  constexpr double kHalfway = kMax + 0x1p103;
  float r = std::fabs(x) >= kHalfway ? std::numeric_limits<float>::infinity()
                                     : std::numeric_limits<float>::max();
  return x < 0 ? -r : r;
}

Value scalar_element(const Value& t, int64_t k) {
  auto i = static_cast<size_t>(k);
  switch (t.dtype()) {
    case DType::F64:
      return Value::f64(t.f64_data()[i]);
    case DType::F32:
      return Value::f32(t.f32_data()[i]);
    case DType::I64:
      return Value::i64(t.i64_data()[i]);
    case DType::Bool:
      return Value::boolean(t.bool_data()[i] != 0);
  }
  return Value();
}

namespace {

template <class T>
void copy_span(std::span<const T> from, size_t offset, std::span<T> to) {
  for (size_t k = 0; k < to.size(); ++k) to[k] = from[offset + k];
}

}  // namespace

Value copy_range(const Value& src, int64_t from, const std::vector<int64_t>& shape) {
  if (shape.empty()) return scalar_element(src, from);
  Value out = Value::zeros(src.dtype(), shape);
  auto off = static_cast<size_t>(from);
  switch (src.dtype()) {
    case DType::F64:
      copy_span(src.f64_data(), off, out.f64_mut());
      break;
    case DType::F32:
      copy_span(src.f32_data(), off, out.f32_mut());
      break;
    case DType::I64:
      copy_span(src.i64_data(), off, out.i64_mut());
      break;
    case DType::Bool:
      copy_span(src.bool_data(), off, out.bool_mut());
      break;
  }
  return out;
}

Buffer::Buffer(Value& fresh) : dtype_(fresh.dtype()) {
  switch (dtype_) {
    case DType::F64:
      f64_ = fresh.f64_mut();
      break;
    case DType::F32:
      f32_ = fresh.f32_mut();
      break;
    case DType::I64:
      i64_ = fresh.i64_mut();
      break;
    case DType::Bool:
      b_ = fresh.bool_mut();
      break;
  }
}

void Buffer::fill_real(double x) {
  for (double& e : f64_) e = x;
  for (float& e : f32_) e = to_f32(x);
}

void Buffer::put(int64_t offset, const Value& v) {
  auto off = static_cast<size_t>(offset);
  switch (dtype_) {
    case DType::F64:
      copy_span(v.f64_data(), 0, f64_.subspan(off, static_cast<size_t>(v.numel())));
      break;
    case DType::F32:
      copy_span(v.f32_data(), 0, f32_.subspan(off, static_cast<size_t>(v.numel())));
      break;
    case DType::I64:
      copy_span(v.i64_data(), 0, i64_.subspan(off, static_cast<size_t>(v.numel())));
      break;
    case DType::Bool:
      copy_span(v.bool_data(), 0, b_.subspan(off, static_cast<size_t>(v.numel())));
      break;
  }
}

namespace {

template <class T>
void combine_all(std::span<T> acc, std::span<const T> v, ir::ReduceKind how, const Marks* skip) {
  if (skip != nullptr && !skip->elems.empty()) {
    for (size_t k = 0; k < v.size(); ++k) {
      if (skip->elems[k] == 0) combine_real(acc[k], v[k], how);
    }
    return;
  }
  for (size_t k = 0; k < v.size(); ++k) combine_real(acc[k], v[k], how);
}

}  // namespace

bool Buffer::combine(int64_t offset, const Value& v, ir::ReduceKind how, const Marks* skip) {
  auto off = static_cast<size_t>(offset);
  auto n = static_cast<size_t>(v.numel());
  switch (dtype_) {
    case DType::F64:
      combine_all(f64_.subspan(off, n), v.f64_data(), how, skip);
      return true;
    case DType::F32:
      combine_all(f32_.subspan(off, n), v.f32_data(), how, skip);
      return true;
    case DType::I64: {
      auto acc = i64_.subspan(off, n);
      auto xs = v.i64_data();
      for (size_t k = 0; k < n; ++k) {
        switch (how) {
          case ir::ReduceKind::Sum:
            if (__builtin_add_overflow(acc[k], xs[k], &acc[k])) return false;
            break;
          case ir::ReduceKind::Max:
            if (xs[k] > acc[k]) acc[k] = xs[k];
            break;
          case ir::ReduceKind::Min:
            if (xs[k] < acc[k]) acc[k] = xs[k];
            break;
        }
      }
      return true;
    }
    case DType::Bool:
      return false;  // callers reject bool reductions before combining
  }
  return false;
}

}  // namespace cot::interp
