// CompiledFunction: native code for one function at fixed shapes (codegen/native.h), called on
// values or, without copies, on the caller's memory.
#include <string>
#include <vector>

#include "api/internal.h"
#include "interp/tensor_ops.h"

namespace cotangent {

namespace {

std::vector<TensorRef> refs_of(const std::vector<cot::codegen::Leaf>& leaves) {
  std::vector<TensorRef> out;
  out.reserve(leaves.size());
  for (const cot::codegen::Leaf& l : leaves) {
    out.push_back(TensorRef{cot::interp::dtype_of(l.type), l.shape, nullptr});
  }
  return out;
}

// A view fits a leaf: same dtype and shape, and memory unless it has no elements.
std::optional<Error> check_view(const char* what, size_t k, DType dtype,
                                const std::vector<int64_t>& shape, const void* data,
                                const cot::codegen::Leaf& leaf) {
  const std::string want = cot::interp::type_string(leaf.type, leaf.shape);
  const std::string got = cot::interp::type_string(cot::interp::scalar_of(dtype), shape);
  if (cot::interp::scalar_of(dtype) != leaf.type || shape != leaf.shape) {
    return plain_error(std::string(what) + " " + std::to_string(k + 1) + " is " + got +
                           " where the function was compiled for " + want,
                       "compile the function again with arguments of these shapes");
  }
  // A result leaf that needs no memory (its shape cannot be built: the code fails before it
  // would write it) may come without.
  int64_t n = 0;
  if (data == nullptr && leaf.needs_memory && Value::checked_numel(shape, &n) && n > 0) {
    return plain_error(std::string(what) + " " + std::to_string(k + 1) + " (" + got +
                       ") has no memory (a null data pointer)");
  }
  return std::nullopt;
}

}  // namespace

Result<Value> CompiledFunction::call(const std::vector<Value>& args) const {
  for (size_t k = 0; k < args.size(); ++k) {
    if (!args[k].well_formed()) {
      return plain_error("argument " + std::to_string(k + 1) + " is not a valid value: its shape " +
                             args[k].type_string() +
                             " has a negative dimension, too many elements, or no storage",
                         "build tensors with Value::zeros and a shape of non-negative dimensions");
    }
  }
  auto r = impl_->native.call(args, impl_->options);
  if (auto* d = std::get_if<cot::Diagnostic>(&r)) return to_error(*impl_->sources, *d);
  return std::get<Value>(std::move(r));
}

Result<bool> CompiledFunction::call(const std::vector<TensorRef>& args,
                                    const std::vector<MutableTensorRef>& results) const {
  const auto& ins = impl_->native.inputs();
  const auto& outs = impl_->native.outputs();
  if (args.size() != ins.size() || results.size() != outs.size()) {
    return plain_error("the function takes " + std::to_string(ins.size()) + " argument views and " +
                       std::to_string(outs.size()) + " result views, given " +
                       std::to_string(args.size()) + " and " + std::to_string(results.size()));
  }
  std::vector<const void*> in_ptrs;
  std::vector<void*> out_ptrs;
  for (size_t k = 0; k < args.size(); ++k) {
    if (auto e =
            check_view("argument view", k, args[k].dtype, args[k].shape, args[k].data, ins[k])) {
      return *e;
    }
    in_ptrs.push_back(args[k].data);
  }
  for (size_t k = 0; k < results.size(); ++k) {
    const MutableTensorRef& r = results[k];
    if (auto e = check_view("result view", k, r.dtype, r.shape, r.data, outs[k])) return *e;
    out_ptrs.push_back(r.data);
  }
  std::vector<int64_t> values;
  int site = 0;
  if (impl_->native.call_raw(in_ptrs.data(), out_ptrs.data(), impl_->options, &values, &site) !=
      0) {
    return to_error(*impl_->sources, impl_->native.error(site, values));
  }
  return true;
}

Result<bool> CompiledFunction::call_unchecked(const void* const* inputs, void* const* outputs,
                                              int threads, int64_t max_while_iterations) const {
  std::vector<int64_t> values;  // filled only when the program fails
  int site = 0;
  const int team = threads >= 0 ? threads : impl_->options.threads;
  const int64_t limit =
      max_while_iterations >= 0 ? max_while_iterations : impl_->options.max_while_iterations;
  if (impl_->native.call_raw(inputs, outputs, team, limit, &values, &site) != 0) {
    return to_error(*impl_->sources, impl_->native.error(site, values));
  }
  return true;
}

std::vector<TensorRef> CompiledFunction::input_leaves() const {
  return refs_of(impl_->native.inputs());
}

std::vector<TensorRef> CompiledFunction::result_leaves() const {
  return refs_of(impl_->native.outputs());
}

std::vector<bool> CompiledFunction::result_leaves_need_memory() const {
  std::vector<bool> out;
  for (const cot::codegen::Leaf& l : impl_->native.outputs()) out.push_back(l.needs_memory);
  return out;
}

Value CompiledFunction::zero_result() const {
  return impl_->native.zero_result();
}

double CompiledFunction::compile_seconds() const {
  return impl_->native.compile_seconds();
}

bool CompiledFunction::cache_hit() const {
  return impl_->native.cache_hit();
}

bool CompiledFunction::found_by_request() const {
  return impl_->native.found_by_request();
}

const std::string& CompiledFunction::source() const {
  return impl_->native.source();
}

}  // namespace cotangent
