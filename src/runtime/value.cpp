#include "cotangent/value.h"

#include <cstdlib>
#include <limits>

#include "runtime/runtime.h"

namespace cotangent {

namespace detail {
void* allocate_block(std::size_t bytes) {
  // Small tensors (the interpreter makes many) take plain malloc; large ones the runtime's
  // huge-page blocks, which take a signed size and refuse what no machine has.
  if (bytes < static_cast<std::size_t>(cot_rt::kHugeBlock))
    return std::malloc(bytes > 0 ? bytes : 1);
  if (bytes > static_cast<std::size_t>(std::numeric_limits<int64_t>::max())) return nullptr;
  return cot_rt::alloc_block(static_cast<int64_t>(bytes));
}
void free_block(void* p) noexcept {
  std::free(p);
}
}  // namespace detail

const char* dtype_name(DType t) {
  switch (t) {
    case DType::F64:
      return "f64";
    case DType::F32:
      return "f32";
    case DType::I64:
      return "i64";
    case DType::Bool:
      return "bool";
  }
  return "?";
}

Value Value::f64(double x) {
  Value v;
  v.dtype_ = DType::F64;
  v.sf64_ = x;
  return v;
}

Value Value::f32(float x) {
  Value v;
  v.dtype_ = DType::F32;
  v.sf32_ = x;
  return v;
}

Value Value::i64(int64_t x) {
  Value v;
  v.dtype_ = DType::I64;
  v.si64_ = x;
  return v;
}

Value Value::boolean(bool b) {
  Value v;
  v.dtype_ = DType::Bool;
  v.sbool_ = b ? 1 : 0;
  return v;
}

bool Value::checked_numel(const std::vector<int64_t>& shape, int64_t* out) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return false;
  }
  if (out) *out = n;
  return true;
}

Value Value::zeros(DType t, std::vector<int64_t> shape) {
  Value v;
  v.dtype_ = t;
  if (shape.empty()) return v;  // a scalar zero, stored inline
  int64_t n = 0;
  // An invalid shape gets no elements rather than an exception; callers check it first.
  if (!checked_numel(shape, &n)) n = 0;
  auto storage = std::make_shared<Storage>();
  const auto count = static_cast<size_t>(n);
  switch (t) {
    case DType::F64:
      storage->f64.assign(count, 0.0);
      break;
    case DType::F32:
      storage->f32.assign(count, 0.0f);
      break;
    case DType::I64:
      storage->i64.assign(count, 0);
      break;
    case DType::Bool:
      storage->b.assign(count, 0);
      break;
  }
  v.shape_ = std::move(shape);
  v.storage_ = std::move(storage);
  return v;
}

Value Value::without_storage(DType t, std::vector<int64_t> shape) {
  Value v;
  v.dtype_ = t;
  v.shape_ = std::move(shape);
  v.storage_ = std::make_shared<Storage>();
  return v;
}

Value Value::tuple(std::vector<Value> elems) {
  Value v;
  v.is_tuple_ = true;
  v.elems_ = std::move(elems);
  return v;
}

int64_t Value::numel() const {
  if (is_tuple_) return 0;
  int64_t n = 0;
  return checked_numel(shape_, &n) ? n : 0;
}

double Value::as_f64() const {
  if (is_tuple_ || numel() < 1) return std::numeric_limits<double>::quiet_NaN();
  return element_as_f64(0);
}

int64_t Value::as_i64() const {
  if (is_tuple_) return 0;
  if (dtype_ == DType::I64) {
    auto d = i64_data();
    return d.empty() ? 0 : d[0];
  }
  if (dtype_ == DType::Bool) {
    auto d = bool_data();
    return d.empty() ? 0 : d[0] != 0;
  }
  return 0;  // not an integer value
}

bool Value::as_bool() const {
  if (is_tuple_ || numel() < 1) return false;
  return element_as_f64(0) != 0;
}

// A scalar's single element is the inline field; a tensor's elements are in the storage.
std::span<const double> Value::f64_data() const {
  if (is_tuple_ || dtype_ != DType::F64) return {};
  return storage_ ? std::span<const double>(storage_->f64) : std::span<const double>(&sf64_, 1);
}
std::span<const float> Value::f32_data() const {
  if (is_tuple_ || dtype_ != DType::F32) return {};
  return storage_ ? std::span<const float>(storage_->f32) : std::span<const float>(&sf32_, 1);
}
std::span<const int64_t> Value::i64_data() const {
  if (is_tuple_ || dtype_ != DType::I64) return {};
  return storage_ ? std::span<const int64_t>(storage_->i64) : std::span<const int64_t>(&si64_, 1);
}
std::span<const uint8_t> Value::bool_data() const {
  if (is_tuple_ || dtype_ != DType::Bool) return {};
  return storage_ ? std::span<const uint8_t>(storage_->b) : std::span<const uint8_t>(&sbool_, 1);
}
std::span<double> Value::f64_mut() {
  if (is_tuple_ || dtype_ != DType::F64) return {};
  return storage_ ? std::span<double>(storage_->f64) : std::span<double>(&sf64_, 1);
}
std::span<float> Value::f32_mut() {
  if (is_tuple_ || dtype_ != DType::F32) return {};
  return storage_ ? std::span<float>(storage_->f32) : std::span<float>(&sf32_, 1);
}
std::span<int64_t> Value::i64_mut() {
  if (is_tuple_ || dtype_ != DType::I64) return {};
  return storage_ ? std::span<int64_t>(storage_->i64) : std::span<int64_t>(&si64_, 1);
}
std::span<uint8_t> Value::bool_mut() {
  if (is_tuple_ || dtype_ != DType::Bool) return {};
  return storage_ ? std::span<uint8_t>(storage_->b) : std::span<uint8_t>(&sbool_, 1);
}

const void* Value::raw_data() const {
  switch (dtype_) {
    case DType::F64:
      return f64_data().data();
    case DType::F32:
      return f32_data().data();
    case DType::I64:
      return i64_data().data();
    case DType::Bool:
      return bool_data().data();
  }
  return nullptr;
}

void* Value::raw_mut() {
  switch (dtype_) {
    case DType::F64:
      return f64_mut().data();
    case DType::F32:
      return f32_mut().data();
    case DType::I64:
      return i64_mut().data();
    case DType::Bool:
      return bool_mut().data();
  }
  return nullptr;
}

double Value::element_as_f64(int64_t k) const {
  auto at = [k](auto span) -> double {
    if (k < 0 || static_cast<size_t>(k) >= span.size()) {
      return std::numeric_limits<double>::quiet_NaN();
    }
    return static_cast<double>(span[static_cast<size_t>(k)]);
  };
  switch (dtype_) {
    case DType::F64:
      return at(f64_data());
    case DType::F32:
      return at(f32_data());
    case DType::I64:
      return at(i64_data());
    case DType::Bool:
      return at(bool_data());
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::string Value::type_string() const {
  std::string s;
  if (is_tuple_) {
    s = "(";
    for (size_t i = 0; i < elems_.size(); ++i) {
      if (i > 0) s += ", ";
      s += elems_[i].type_string();
    }
    return s + ")";
  }
  s = dtype_name(dtype_);
  if (shape_.empty()) return s;
  s += "[";
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(shape_[i]);
  }
  return s + "]";
}

bool Value::well_formed() const {
  if (is_tuple_) {
    for (const auto& e : elems_) {
      if (!e.well_formed()) return false;
    }
    return true;
  }
  int64_t n = 0;
  if (!checked_numel(shape_, &n)) return false;
  size_t have = 0;
  switch (dtype_) {
    case DType::F64:
      have = f64_data().size();
      break;
    case DType::F32:
      have = f32_data().size();
      break;
    case DType::I64:
      have = i64_data().size();
      break;
    case DType::Bool:
      have = bool_data().size();
      break;
  }
  return static_cast<int64_t>(have) == n;
}

}  // namespace cotangent
