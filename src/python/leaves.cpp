#include "python/leaves.h"

#include <cmath>
#include <cstring>
#include <utility>

#include "interp/tensor_ops.h"

namespace py = pybind11;

namespace cotangent::python {

namespace {

py::dtype dtype_of(DType t) {
  switch (t) {
    case DType::F64:
      return py::dtype::of<double>();
    case DType::F32:
      return py::dtype::of<float>();
    case DType::I64:
      return py::dtype::of<int64_t>();
    case DType::Bool:
      return py::dtype::of<bool>();
  }
  return py::dtype::of<double>();
}

size_t dtype_size(DType t) {
  switch (t) {
    case DType::F64:
    case DType::I64:
      return 8;
    case DType::F32:
      return 4;
    case DType::Bool:
      return 1;
  }
  return 8;
}

// The array's elements are exactly the leaf's: same kind and width, this machine's byte order.
bool same_dtype(const py::dtype& d, DType t) {
  const char kind = t == DType::Bool ? 'b' : t == DType::I64 ? 'i' : 'f';
  return d.kind() == kind && static_cast<size_t>(d.itemsize()) == dtype_size(t) &&
         d.byteorder() != '>';
}

std::string type_name(py::handle obj) {
  return py::str(py::type::handle_of(obj).attr("__name__"));
}

std::string shape_text(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t k = 0; k < a.ndim(); ++k) {
    s += (k ? ", " : "") + std::to_string(a.shape(k));
  }
  return s + (a.ndim() == 1 ? ",)" : ")");
}

std::string rank_text(int rank) {
  return rank == 0 ? "a scalar" : "rank " + std::to_string(rank);
}

// An array of the leaf's dtype, C-contiguous and aligned: `a` itself, or a converted copy
// (kept alive in `keep`) when NumPy converts safely; a TypeError otherwise.
py::array leaf_array(py::array a, DType t, const std::string& what, const std::string& spelling,
                     std::vector<py::object>& keep) {
  const bool same = same_dtype(a.dtype(), t);
  const int flags = py::detail::array_proxy(a.ptr())->flags;
  const bool in_place = (flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) != 0 &&
                        (flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_) != 0;
  if (same && in_place) return a;
  py::module_ np = py::module_::import("numpy");
  if (!same && !np.attr("can_cast")(a.dtype(), dtype_of(t), "safe").cast<bool>()) {
    throw py::type_error(what + " is " + spelling + "; given an array of dtype " +
                         std::string(py::str(a.dtype())) + ", which does not convert to " +
                         dtype_name(t) +
                         " without losing values (convert it first, e.g. x.astype(np." +
                         std::string(py::str(dtype_of(t))) + "))");
  }
  // np.array(copy=True): a new array, so aligned too (ascontiguousarray returns a contiguous but
  // unaligned array as it is).
  py::array copy = np.attr("array")(a, py::arg("dtype") = dtype_of(t), py::arg("order") = "C",
                                    py::arg("copy") = true);
  keep.push_back(copy);
  return copy;
}

// np.asarray(obj) for what is not an array yet (NumPy scalars, lists, objects with __array__
// such as a torch tensor on the CPU); what NumPy refuses is a TypeError or ValueError, as NumPy
// raised it, naming the parameter; anything else (KeyboardInterrupt, MemoryError) passes through.
py::array as_array(py::handle obj, const std::string& what, const std::string& spelling) {
  try {
    return py::module_::import("numpy").attr("asarray")(obj);
  } catch (py::error_already_set& e) {
    const bool value_error = e.matches(PyExc_ValueError);
    if (!value_error && !e.matches(PyExc_TypeError)) throw;
    const std::string text = what + " is " + spelling + "; given a " + type_name(obj) +
                             " that is not an array: " + std::string(e.what());
    if (value_error) throw py::value_error(text);  // a ragged list, say
    throw py::type_error(text);
  }
}

// A Python number into a real slot: an f32 parameter takes it rounded (Python numbers have no
// width), but not one beyond f32's range, which would become inf.
void set_real(ScalarSlot& slot, DType t, double v, py::handle obj, const std::string& what,
              const std::string& spelling) {
  if (t == DType::F64) {
    slot.f64 = v;
    return;
  }
  slot.f32 = cot::interp::to_f32(v);
  if (std::isfinite(v) && !std::isfinite(slot.f32)) {
    throw py::value_error(what + " is " + spelling + "; given " +
                          std::string(py::str(py::repr(obj))) + ", which f32 cannot hold");
  }
}

void collect_scalar(py::handle obj, DType t, const std::string& what, const std::string& spelling,
                    ArgumentLeaves& out) {
  ScalarSlot& slot = out.scalars.emplace_back();
  const bool real = t == DType::F64 || t == DType::F32;
  auto wrong = [&](const std::string& given) {
    return py::type_error(what + " is " + spelling + "; given " + given);
  };
  if (PyBool_Check(obj.ptr())) {
    if (t != DType::Bool) throw wrong("a bool");
    slot.b = obj.ptr() == Py_True ? 1 : 0;
  } else if (PyLong_Check(obj.ptr())) {
    if (t == DType::Bool) throw wrong("an int");
    if (t == DType::I64) {
      int overflow = 0;
      const long long v = PyLong_AsLongLongAndOverflow(obj.ptr(), &overflow);
      if (overflow != 0) throw py::value_error(what + " is i64; given an int out of its range");
      slot.i64 = v;
    } else {
      const double v = PyLong_AsDouble(obj.ptr());
      if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        throw py::value_error(what + " is " + spelling + "; given an int too large for it");
      }
      set_real(slot, t, v, obj, what, spelling);
    }
  } else if (PyFloat_Check(obj.ptr())) {
    if (!real) throw wrong("a float");
    set_real(slot, t, PyFloat_AS_DOUBLE(obj.ptr()), obj, what, spelling);
  } else {
    // NumPy scalars and 0-d arrays.
    if (!py::isinstance<py::array>(obj) && !py::hasattr(obj, "dtype")) throw wrong(type_name(obj));
    py::array a = as_array(obj, what, spelling);
    if (a.ndim() != 0) {
      throw py::value_error(what + " is " + spelling + " (a scalar); given an array of shape " +
                            shape_text(a));
    }
    std::vector<py::object> keep;
    py::array c = leaf_array(a, t, what, spelling, keep);
    std::memcpy(slot.of(t), c.data(), dtype_size(t));
  }
  out.data.push_back(slot.of(t));
  out.dtypes.push_back(t);
  out.shape_key.push_back(0);
}

void collect_tensor(py::handle obj, const ValueKind& kind, const std::string& what,
                    ArgumentLeaves& out) {
  py::array a;
  if (py::isinstance<py::array>(obj)) {
    a = py::reinterpret_borrow<py::array>(obj);
  } else if (PyList_Check(obj.ptr()) || PyTuple_Check(obj.ptr())) {
    // Python numbers have no width: a list of floats fits an f32 tensor as a float fits an
    // f32 scalar. Their kind must still fit (floats are not integers).
    a = as_array(obj, what, kind.spelling);
    const char k = a.dtype().kind();
    const bool real = kind.dtype == DType::F32 || kind.dtype == DType::F64;
    if ((real && (k == 'f' || k == 'i')) || (kind.dtype == DType::I64 && k == 'i')) {
      a = a.attr("astype")(dtype_of(kind.dtype));
    }
    out.keep.push_back(a);
  } else if (py::hasattr(obj, "__array__") || py::hasattr(obj, "__array_interface__")) {
    a = as_array(obj, what, kind.spelling);  // a view where NumPy can make one
    out.keep.push_back(a);
  } else {
    throw py::type_error(what + " is " + kind.spelling + ": expected a NumPy array; given " +
                         type_name(obj));
  }
  if (a.ndim() != kind.rank) {
    throw py::value_error(what + " is " + kind.spelling + " (" + rank_text(kind.rank) +
                          "); given an array of shape " + shape_text(a));
  }
  py::array c = leaf_array(a, kind.dtype, what, kind.spelling, out.keep);
  out.data.push_back(c.data());
  out.dtypes.push_back(kind.dtype);
  out.shape_key.push_back(kind.rank);
  for (py::ssize_t k = 0; k < c.ndim(); ++k) out.shape_key.push_back(c.shape(k));
}

}  // namespace

void* ScalarSlot::of(DType t) {
  switch (t) {
    case DType::F64:
      return &f64;
    case DType::F32:
      return &f32;
    case DType::I64:
      return &i64;
    case DType::Bool:
      return &b;
  }
  return &f64;
}

ArgumentLeaves::ArgumentLeaves(size_t leaves) {
  data.reserve(leaves);
  dtypes.reserve(leaves);
  shape_key.reserve(leaves * 3);
  scalars.reserve(leaves);
  owner.reserve(leaves);
}

void collect_argument(py::handle obj, const ValueKind& kind, const std::string& what,
                      ArgumentLeaves& out) {
  if (kind.is_tuple) {
    if (!PyTuple_Check(obj.ptr())) {
      throw py::type_error(what + " is a tuple " + kind.spelling + "; given " + type_name(obj));
    }
    auto t = py::reinterpret_borrow<py::tuple>(obj);
    if (t.size() != kind.elems.size()) {
      throw py::value_error(what + " is a tuple " + kind.spelling + " of " +
                            std::to_string(kind.elems.size()) + " elements; given " +
                            std::to_string(t.size()));
    }
    for (size_t k = 0; k < kind.elems.size(); ++k) {
      collect_argument(t[k], kind.elems[k], what + ", element " + std::to_string(k) + ",", out);
    }
    return;
  }
  if (kind.rank == 0) {
    collect_scalar(obj, kind.dtype, what, kind.spelling, out);
  } else {
    collect_tensor(obj, kind, what, out);
  }
}

std::vector<TensorRef> leaf_refs(const ArgumentLeaves& leaves) {
  std::vector<TensorRef> refs;
  size_t pos = 0;
  for (size_t k = 0; k < leaves.data.size(); ++k) {
    const auto rank = static_cast<size_t>(leaves.shape_key[pos++]);
    std::vector<int64_t> shape(leaves.shape_key.begin() + static_cast<ptrdiff_t>(pos),
                               leaves.shape_key.begin() + static_cast<ptrdiff_t>(pos + rank));
    pos += rank;
    refs.push_back(TensorRef{leaves.dtypes[k], std::move(shape), leaves.data[k]});
  }
  return refs;
}

namespace {

struct ResultBuilder {
  const std::vector<TensorRef>& leaves;
  const std::vector<bool>& need_memory;
  const ArgumentLeaves& args;
  const std::vector<TensorRef> arg_refs;
  ResultLeaves r;
  size_t next = 0;

  static bool overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
    const auto* alo = static_cast<const char*>(a);
    const auto* blo = static_cast<const char*>(b);
    return a_bytes > 0 && b_bytes > 0 && alo < blo + b_bytes && blo < alo + a_bytes;
  }

  // Compiled code may read an argument after writing a result, and writes each part of a
  // result on its own: an out array may share memory with neither.
  void check_overlap(const py::array& a, const std::string& where) {
    const auto bytes = static_cast<size_t>(a.nbytes());
    for (size_t k = 0; k < arg_refs.size(); ++k) {
      int64_t n = 0;
      if (!Value::checked_numel(arg_refs[k].shape, &n)) continue;
      if (overlap(a.data(), bytes, arg_refs[k].data,
                  static_cast<size_t>(n) * dtype_size(arg_refs[k].dtype))) {
        throw py::value_error(where + " overlaps the memory of " +
                              (args.what ? args.what->at(args.owner.at(k)) : "an argument") +
                              ": compiled code may read an argument after writing its result");
      }
    }
    for (size_t k = 0; k < r.arrays.size(); ++k) {
      if (r.arrays[k].is_none()) continue;
      auto other = py::reinterpret_borrow<py::array>(r.arrays[k]);
      if (overlap(a.data(), bytes, other.data(), static_cast<size_t>(other.nbytes()))) {
        throw py::value_error(where + " overlaps part " + std::to_string(k) +
                              " of out: each part of the result needs its own memory");
      }
    }
  }

  void leaf(py::handle out, const std::string& where) {
    const TensorRef& l = leaves.at(next++);
    if (!out.is_none()) {
      if (!py::isinstance<py::array>(out)) {
        throw py::type_error(where + " must be a NumPy array; given " + type_name(out));
      }
      auto a = py::reinterpret_borrow<py::array>(out);
      const int flags = py::detail::array_proxy(a.ptr())->flags;
      const std::vector<int64_t> shape(a.shape(), a.shape() + a.ndim());
      if (!same_dtype(a.dtype(), l.dtype) || shape != l.shape) {
        const std::string want = cot::interp::type_string(cot::interp::scalar_of(l.dtype), l.shape);
        throw py::value_error(where + " must be " + want + "; given an array of dtype " +
                              std::string(py::str(a.dtype())) + " and shape " + shape_text(a));
      }
      if ((flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_) == 0 ||
          (flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_) == 0) {
        throw py::value_error(where +
                              " must be C-contiguous and aligned (np.empty or np.zeros make one)");
      }
      if (!a.writeable()) throw py::value_error(where + " is read-only");
      check_overlap(a, where);
      r.data.push_back(a.mutable_data());
      r.arrays.push_back(a);
      r.scalars.emplace_back();
      return;
    }
    ScalarSlot& slot = r.scalars.emplace_back();
    if (l.shape.empty()) {
      r.data.push_back(slot.of(l.dtype));
      r.arrays.push_back(py::none());
      return;
    }
    int64_t n = 0;
    if (!need_memory.at(next - 1) || !Value::checked_numel(l.shape, &n)) {
      // A shape that cannot be built: the code fails with its error before it would write it.
      r.data.push_back(nullptr);
      r.arrays.push_back(py::none());
      return;
    }
    py::array a(dtype_of(l.dtype), l.shape);
    r.data.push_back(a.mutable_data());
    r.arrays.push_back(a);
  }

  void walk(const ValueKind& kind, py::handle out, const std::string& where) {
    if (!kind.is_tuple) {
      leaf(out, where);
      return;
    }
    if (!out.is_none() && !PyTuple_Check(out.ptr())) {
      throw py::type_error(where + " must be a tuple of " + std::to_string(kind.elems.size()) +
                           " (arrays, or None where a part is allocated); given " + type_name(out));
    }
    if (!out.is_none() && py::len(out) != kind.elems.size()) {
      throw py::value_error(where + " must be a tuple of " + std::to_string(kind.elems.size()) +
                            "; given " + std::to_string(py::len(out)));
    }
    for (size_t k = 0; k < kind.elems.size(); ++k) {
      walk(kind.elems[k], out.is_none() ? py::handle(Py_None) : py::handle(out[py::int_(k)]),
           where + "[" + std::to_string(k) + "]");
    }
  }
};

py::object scalar_object(DType t, const void* p) {
  switch (t) {
    case DType::F64:
      return py::float_(*static_cast<const double*>(p));
    case DType::F32:
      return py::float_(*static_cast<const float*>(p));
    case DType::I64:
      return py::int_(*static_cast<const int64_t*>(p));
    case DType::Bool:
      return py::bool_(*static_cast<const uint8_t*>(p) != 0);
  }
  return py::none();
}

py::object result_walk(const ValueKind& kind, ResultLeaves& r, size_t& next) {
  if (kind.is_tuple) {
    py::tuple t(kind.elems.size());
    for (size_t k = 0; k < kind.elems.size(); ++k) t[k] = result_walk(kind.elems[k], r, next);
    return t;
  }
  const size_t k = next++;
  if (!r.arrays[k].is_none()) return r.arrays[k];
  if (kind.rank == 0) return scalar_object(kind.dtype, r.data[k]);
  return py::none();
}

}  // namespace

ResultLeaves result_memory(const ValueKind& kind, const std::vector<TensorRef>& leaves,
                           const std::vector<bool>& need_memory, py::handle out,
                           const ArgumentLeaves& args) {
  ResultBuilder b{
      leaves, need_memory, args, out.is_none() ? std::vector<TensorRef>{} : leaf_refs(args), {}};
  b.r.data.reserve(leaves.size());
  b.r.arrays.reserve(leaves.size());
  b.r.scalars.reserve(leaves.size());
  b.walk(kind, out, "out");
  return std::move(b.r);
}

py::object result_object(const ValueKind& kind, ResultLeaves& r) {
  size_t next = 0;
  return result_walk(kind, r, next);
}

std::vector<Value> to_values(const std::vector<ValueKind>& params, const ArgumentLeaves& leaves) {
  const std::vector<TensorRef> refs = leaf_refs(leaves);
  size_t next = 0;
  auto build = [&](auto&& self, const ValueKind& kind) -> Value {
    if (kind.is_tuple) {
      std::vector<Value> elems;
      for (const auto& e : kind.elems) elems.push_back(self(self, e));
      return Value::tuple(std::move(elems));
    }
    const TensorRef& l = refs.at(next++);
    if (l.shape.empty()) {
      switch (l.dtype) {
        case DType::F64:
          return Value::f64(*static_cast<const double*>(l.data));
        case DType::F32:
          return Value::f32(*static_cast<const float*>(l.data));
        case DType::I64:
          return Value::i64(*static_cast<const int64_t*>(l.data));
        case DType::Bool:
          return Value::boolean(*static_cast<const uint8_t*>(l.data) != 0);
      }
    }
    Value v = Value::zeros(l.dtype, l.shape);
    const int64_t n = v.numel();
    if (n > 0 && v.raw_mut() != nullptr) {
      std::memcpy(v.raw_mut(), l.data, static_cast<size_t>(n) * dtype_size(l.dtype));
    }
    return v;
  };
  std::vector<Value> out;
  out.reserve(params.size());
  for (const auto& p : params) out.push_back(build(build, p));
  return out;
}

py::object from_value(const Value& v) {
  if (v.is_tuple()) {
    py::tuple t(v.elems().size());
    for (size_t k = 0; k < v.elems().size(); ++k) t[k] = from_value(v.elems()[k]);
    return t;
  }
  if (v.is_scalar()) {
    switch (v.dtype()) {
      case DType::F64:
      case DType::F32:
        return py::float_(v.as_f64());
      case DType::I64:
        return py::int_(v.as_i64());
      case DType::Bool:
        return py::bool_(v.as_bool());
    }
  }
  py::array a(dtype_of(v.dtype()), v.shape());
  const int64_t n = v.numel();
  if (n > 0 && v.raw_data() != nullptr) {
    std::memcpy(a.mutable_data(), v.raw_data(), static_cast<size_t>(n) * dtype_size(v.dtype()));
  }
  return a;
}

}  // namespace cotangent::python
