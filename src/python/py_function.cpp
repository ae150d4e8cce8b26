#include "python/py_function.h"

#include <atomic>
#include <utility>

#include "python/errors.h"
#include "python/leaves.h"

namespace py = pybind11;

namespace cotangent::python {

namespace {

// Process state (a fact about this process, like its pid), not program state.
std::atomic<bool>& forked_child() {
  static std::atomic<bool> forked{false};
  return forked;
}

}  // namespace

void mark_forked_child() {
  forked_child().store(true);
}

size_t ShapeKeyHash::operator()(const std::vector<int64_t>& key) const noexcept {
  size_t h = key.size();
  for (int64_t v : key) h = h * 1000003u ^ static_cast<size_t>(v);
  return h;
}

PyFunction::PyFunction(Function fn, CallOptions options)
    : PyFunction(std::move(fn), std::move(options), std::make_shared<CompileCache>()) {}

PyFunction::PyFunction(Function fn, CallOptions options, std::shared_ptr<CompileCache> cache)
    : fn_(std::move(fn)), options_(std::move(options)), cache_(std::move(cache)) {
  for (const auto& p : fn_.info().params) {
    what_.push_back("parameter `" + p.name + "` of `" + fn_.name() + "`");
    kinds_.push_back(p.kind);
    leaf_count_ += p.kind.leaf_count();
    if (p.name == "out") has_out_param_ = true;
  }
}

int PyFunction::threads() const {
  return forked_child().load() ? 1 : options_.threads;
}

std::string PyFunction::signature() const {
  std::string s = fn_.name() + "(";
  const auto& params = fn_.info().params;
  for (size_t k = 0; k < params.size(); ++k) {
    s += (k ? ", " : "") + params[k].name + ": " + params[k].type;
  }
  return s + ") -> " + fn_.info().result_type;
}

std::vector<py::handle> PyFunction::bind(const py::args& args, const py::kwargs& kwargs,
                                         py::handle* out) const {
  const auto& params = fn_.info().params;
  auto who = [&] { return fn_.name() + "()"; };  // built only for a message
  if (args.size() > params.size()) {
    throw py::type_error(who() + " takes " + std::to_string(params.size()) + " argument" +
                         (params.size() == 1 ? "" : "s") + " but " + std::to_string(args.size()) +
                         " were given");
  }
  std::vector<py::handle> bound(params.size());
  for (size_t k = 0; k < args.size(); ++k) bound[k] = args[k];
  for (auto [key, value] : kwargs) {
    const std::string name = py::str(key);
    if (name == "out" && !has_out_param_) {
      *out = value;
      continue;
    }
    size_t k = 0;
    while (k < params.size() && params[k].name != name) ++k;
    if (k == params.size()) {
      throw py::type_error(who() + " got an unexpected keyword argument '" + name +
                           "' (its parameters: " + signature() + ")");
    }
    if (bound[k]) throw py::type_error(who() + " got multiple values for argument '" + name + "'");
    bound[k] = value;
  }
  std::string missing;
  size_t n_missing = 0;
  for (size_t k = 0; k < params.size(); ++k) {
    if (bound[k]) continue;
    missing += (n_missing++ ? ", '" : "'") + params[k].name + "'";
  }
  if (n_missing > 0) {
    throw py::type_error(who() + " missing " + std::to_string(n_missing) + " required argument" +
                         (n_missing == 1 ? "" : "s") + ": " + missing + " (" + signature() + ")");
  }
  return bound;
}

ArgumentLeaves PyFunction::collect(const std::vector<py::handle>& bound) const {
  ArgumentLeaves leaves(leaf_count_);
  leaves.what = &what_;
  for (size_t k = 0; k < bound.size(); ++k) {
    collect_argument(bound[k], kinds_[k], what_[k], leaves);
    leaves.owner.resize(leaves.data.size(), k);
  }
  return leaves;  // moved: the scalar slots, and the pointers into them, stay where they are
}

std::shared_ptr<const CompileCache::Entry> PyFunction::compiled_for(ArgumentLeaves& leaves) const {
  // The thread count is part of the key: compiled code sizes its team for the count it was
  // compiled with (probing the system), and a call asking for another would probe again, at
  // the cost of starting threads, on every call.
  leaves.shape_key.push_back(threads());
  {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    auto it = cache_->entries.find(leaves.shape_key);
    if (it != cache_->entries.end()) return it->second;
  }
  const std::vector<TensorRef> refs = leaf_refs(leaves);
  CompileOptions co;
  co.threads = threads();
  co.max_while_iterations = options_.max_while_iterations;
  co.cache_dir = options_.cache_dir;
  Result<CompiledFunction> r = [&] {
    py::gil_scoped_release release;
    return fn_.compile(refs, co);
  }();
  CompiledFunction compiled = take(std::move(r), ErrorClass::Evaluation);
  auto entry = std::make_shared<const CompileCache::Entry>(CompileCache::Entry{
      compiled, compiled.result_leaves(), compiled.result_leaves_need_memory()});
  std::lock_guard<std::mutex> lock(cache_->mutex);
  return cache_->entries.emplace(leaves.shape_key, std::move(entry)).first->second;
}

py::object PyFunction::call(const py::args& args, const py::kwargs& kwargs) const {
  py::handle out = py::none();
  const std::vector<py::handle> bound = bind(args, kwargs, &out);
  ArgumentLeaves leaves = collect(bound);
  if (options_.backend == Backend::Interpreter) {
    if (!out.is_none()) {
      throw py::type_error("out= needs the native backend (the interpreter allocates its result)");
    }
    std::vector<Value> values = to_values(kinds_, leaves);
    EvalOptions eo;
    eo.backend = Backend::Interpreter;
    eo.max_while_iterations = options_.max_while_iterations;
    Result<Value> r = [&] {
      py::gil_scoped_release release;
      return fn_.evaluate(values, eo);
    }();
    return from_value(take(std::move(r), ErrorClass::Evaluation));
  }
  std::shared_ptr<const CompileCache::Entry> entry = compiled_for(leaves);
  ResultLeaves results =
      result_memory(fn_.info().result, entry->results, entry->results_need_memory, out, leaves);
  Result<bool> r = [&] {
    py::gil_scoped_release release;
    return entry->compiled.call_unchecked(leaves.data.data(), results.data.data(), threads(),
                                          options_.max_while_iterations);
  }();
  if (!r.ok()) raise_errors(ErrorClass::Evaluation, r.errors());
  return result_object(fn_.info().result, results);
}

py::dict PyFunction::cost(const py::args& args, const py::kwargs& kwargs) const {
  py::handle out = py::none();
  const std::vector<py::handle> bound = bind(args, kwargs, &out);
  if (!out.is_none()) throw py::type_error("cost() takes no out=");
  ArgumentLeaves leaves = collect(bound);
  std::vector<Value> values = to_values(kinds_, leaves);
  EvalOptions eo;
  eo.max_while_iterations = options_.max_while_iterations;
  Result<CostReport> r = [&] {
    py::gil_scoped_release release;
    return fn_.cost(values, eo);
  }();
  CostReport c = take(std::move(r), ErrorClass::Evaluation);
  py::dict d;
  d["ops"] = c.ops;
  d["add"] = c.add;
  d["mul"] = c.mul;
  d["call"] = c.call;
  return d;
}

PyFunction PyFunction::derivative(DerivativeKind kind, const std::vector<std::string>& wrt) const {
  std::string key = std::to_string(static_cast<int>(kind)) + "(";
  for (const auto& w : wrt) key += w + ",";
  {
    std::lock_guard<std::mutex> lock(cache_->mutex);
    auto it = cache_->derived.find(key);
    if (it != cache_->derived.end()) return it->second->with_options(options_);
  }
  Result<Function> r = [&] {
    py::gil_scoped_release release;
    return fn_.derivative(kind, wrt);
  }();
  auto built =
      std::make_shared<const PyFunction>(take(std::move(r), ErrorClass::Compile), options_);
  std::lock_guard<std::mutex> lock(cache_->mutex);
  return *cache_->derived.emplace(key, std::move(built)).first->second;
}

PyFunction PyFunction::with_options(const CallOptions& options) const {
  // Compiled code does not depend on the options (threads are chosen per call), except the
  // cache directory, which only says where to look.
  return PyFunction(fn_, options, cache_);
}

std::string PyFunction::source() const {
  return take(fn_.print(), ErrorClass::Compile);
}

size_t PyFunction::compiled_count() const {
  std::lock_guard<std::mutex> lock(cache_->mutex);
  return cache_->entries.size();
}

}  // namespace cotangent::python
