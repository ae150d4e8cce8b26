// Values that cross the API: dense row-major tensors (rank 0 is a scalar) of f64, f32, i64 or
// bool, and tuples of values. Copies are shallow: a tensor's storage is shared and immutable
// once built (only the code that creates a tensor writes into it).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <vector>

namespace cotangent {

namespace detail {
// Allocates tensor storage: large blocks as compiled code allocates its arrays
// (runtime/runtime.h), on transparent huge pages, so that a fresh large tensor is cheap to fill.
void* allocate_block(std::size_t bytes);
void free_block(void* p) noexcept;

template <class T>
struct BlockAllocator {
  using value_type = T;
  BlockAllocator() = default;
  template <class U>
  BlockAllocator(const BlockAllocator<U>& /*other*/) {}  // NOLINT(google-explicit-constructor)
  T* allocate(std::size_t n) {
    void* p = allocate_block(n * sizeof(T));
    if (p == nullptr) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t /*n*/) noexcept { free_block(p); }
  template <class U>
  friend bool operator==(const BlockAllocator& /*a*/, const BlockAllocator<U>& /*b*/) {
    return true;  // stateless: any one frees what another allocated
  }
};
}  // namespace detail

enum class DType : uint8_t { F64, F32, I64, Bool };
const char* dtype_name(DType t);  // "f64", ...

class Value {
 public:
  Value() = default;  // the f64 scalar 0
  static Value f64(double x);
  static Value f32(float x);
  static Value i64(int64_t x);
  static Value boolean(bool b);
  // A tensor of zeros (false) with fresh storage; rank 0 gives a scalar zero. The shape must
  // pass checked_numel(); otherwise the value keeps the shape but has no elements.
  static Value zeros(DType t, std::vector<int64_t> shape);
  // A tensor of `shape` with no storage (not well_formed() unless it has no elements): the leaf
  // of CompiledFunction::zero_result() for a result the function fails before writing (a shape
  // with more elements than a tensor may hold).
  static Value without_storage(DType t, std::vector<int64_t> shape);
  static Value tuple(std::vector<Value> elems);

  bool is_tuple() const { return is_tuple_; }
  bool is_scalar() const { return !is_tuple_ && shape_.empty(); }
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int64_t rank() const { return static_cast<int64_t>(shape_.size()); }
  // Product of the shape (1 for a scalar; 0 for a tuple or a shape checked_numel rejects).
  int64_t numel() const;
  // The element count of a shape: false when a dimension is negative or the product overflows
  // int64_t. Callers check shapes from outside with it before zeros().
  static bool checked_numel(const std::vector<int64_t>& shape, int64_t* out);
  // Every tensor in it has a valid shape and the storage that shape needs. Values that fail
  // this (built by zeros() from an invalid shape) are refused by evaluation and I/O.
  bool well_formed() const;
  const std::vector<Value>& elems() const { return elems_; }

  // Scalar access (any rank-0 value of the matching type).
  double as_f64() const;  // f64 or f32
  int64_t as_i64() const;
  bool as_bool() const;

  // Element access for every rank (a scalar has one element). Writers are only for storage the
  // caller has just created with zeros().
  std::span<const double> f64_data() const;
  std::span<const float> f32_data() const;
  std::span<const int64_t> i64_data() const;
  std::span<const uint8_t> bool_data() const;
  std::span<double> f64_mut();
  std::span<float> f32_mut();
  std::span<int64_t> i64_mut();
  std::span<uint8_t> bool_mut();
  // The elements of any dtype as raw memory (row-major; bool as one byte each), for passing a
  // tensor to compiled code without a copy (TensorRef); null for a tuple or an empty tensor.
  const void* raw_data() const;
  void* raw_mut();

  // Element k (flat, row-major) as a double (bools as 0/1), for any dtype.
  double element_as_f64(int64_t k) const;

  // "f64[2, 3]", "(f64, i64[4])".
  std::string type_string() const;

 private:
  struct Storage {
    std::vector<double, detail::BlockAllocator<double>> f64;
    std::vector<float, detail::BlockAllocator<float>> f32;
    std::vector<int64_t, detail::BlockAllocator<int64_t>> i64;
    std::vector<uint8_t, detail::BlockAllocator<uint8_t>> b;
  };
  bool is_tuple_ = false;
  DType dtype_ = DType::F64;
  std::vector<int64_t> shape_;
  // Scalars are stored inline so that the interpreter does not allocate per scalar.
  double sf64_ = 0;
  float sf32_ = 0;
  int64_t si64_ = 0;
  uint8_t sbool_ = 0;
  std::shared_ptr<Storage> storage_;  // tensors of rank >= 1
  std::vector<Value> elems_;          // tuples
};

}  // namespace cotangent
