// Python values as the leaves compiled code reads and writes, and back: NumPy arrays are seen
// without a copy when they already have the parameter's dtype and are C-contiguous and
// aligned; other layouts, safe dtype conversions (int64 -> f64, f32 -> f64, ...) and Python
// lists are converted once. Python numbers are stored in the call's own scalar slots.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace cotangent::python {

// Room for one scalar leaf of any dtype.
struct ScalarSlot {
  double f64 = 0;
  float f32 = 0;
  int64_t i64 = 0;
  uint8_t b = 0;
  void* of(DType t);
};

// The arguments of one call, as leaves (tuples depth first).
struct ArgumentLeaves {
  explicit ArgumentLeaves(size_t leaves);
  std::vector<const void*> data;
  std::vector<DType> dtypes;
  std::vector<int64_t> shape_key;   // every leaf's rank then dimensions: the compile cache's key
  std::vector<ScalarSlot> scalars;  // one per leaf, reserved: pointers into it stay valid
  std::vector<size_t> owner;        // per leaf: the parameter it belongs to
  const std::vector<std::string>* what = nullptr;  // per parameter: its name in messages
  std::vector<pybind11::object> keep;              // arrays converted for this call
};

// Appends the leaves of `obj`, an argument of kind `kind`, to `out`; `what` names it in
// messages ("parameter `w` of `loss`"). Throws TypeError or ValueError naming the parameter.
void collect_argument(pybind11::handle obj, const ValueKind& kind, const std::string& what,
                      ArgumentLeaves& out);

// The leaves as the C++ API's views (for compiling: shapes from the key).
std::vector<TensorRef> leaf_refs(const ArgumentLeaves& leaves);

// Memory for the result leaves of a call: NumPy arrays allocated here, or the caller's `out`.
struct ResultLeaves {
  std::vector<void*> data;
  std::vector<pybind11::object> arrays;  // per leaf: the array, or None for a scalar slot
  std::vector<ScalarSlot> scalars;
};

// Allocates (or takes from `out`, when it is not None) memory for results of the leaf dtypes
// and shapes `leaves`, structured as `kind`. Throws TypeError or ValueError for an `out` that
// does not fit (wrong structure, dtype or shape; not C-contiguous or not writeable).
// An `out` array may not overlap an argument (compiled code may read an argument after writing
// a result).
// A leaf that does not need memory (CompiledFunction::result_leaves_need_memory) gets none.
ResultLeaves result_memory(const ValueKind& kind, const std::vector<TensorRef>& leaves,
                           const std::vector<bool>& need_memory, pybind11::handle out,
                           const ArgumentLeaves& args);
// The Python value of a result: arrays for tensors, numbers for scalars, tuples for tuples.
pybind11::object result_object(const ValueKind& kind, ResultLeaves& r);

// Between Python and the C++ API's values (the interpreter's path): copies.
std::vector<Value> to_values(const std::vector<ValueKind>& params, const ArgumentLeaves& leaves);
pybind11::object from_value(const Value& v);

}  // namespace cotangent::python
