// The extension module `cotangent._cotangent`: Module and Function for the Python package
// (python/cotangent/__init__.py adds the transforms, the exceptions and the SciPy helpers).
// docs/python.md is the reference.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "python/errors.h"
#include "python/py_function.h"

namespace py = pybind11;

namespace cotangent::python {

namespace {

Backend parse_backend(const std::string& name) {
  if (name == "native") return Backend::Native;
  if (name == "interp" || name == "interpreter") return Backend::Interpreter;
  throw py::value_error("backend must be \"native\" or \"interp\"; given \"" + name + "\"");
}

const char* backend_name(Backend b) {
  return b == Backend::Native ? "native" : "interp";
}

DerivativeKind parse_kind(const std::string& name) {
  static const std::map<std::string, DerivativeKind> kinds = {
      {"grad", DerivativeKind::Grad},         {"value_and_grad", DerivativeKind::ValueAndGrad},
      {"jvp", DerivativeKind::Jvp},           {"vjp", DerivativeKind::Vjp},
      {"jacobian", DerivativeKind::Jacobian}, {"hessian", DerivativeKind::Hessian}};
  auto it = kinds.find(name);
  if (it == kinds.end()) throw py::value_error("no derivative operator named " + name);
  return it->second;
}

CallOptions call_options(const std::string& backend, int threads, int64_t max_while,
                         const std::string& cache_dir) {
  if (threads < 0) throw py::value_error("threads must be 0 (all cores) or more");
  if (max_while < 0) throw py::value_error("max_while_iterations must be 0 (no limit) or more");
  CallOptions o;
  o.backend = parse_backend(backend);
  o.threads = threads;
  o.max_while_iterations = max_while;
  o.cache_dir = cache_dir;
  return o;
}

// A loaded module: its functions by name, each one PyFunction (so one compile cache) however
// often it is looked up.
class PyModule {
 public:
  PyModule(Module m, CallOptions options, std::string name)
      : module_(std::move(m)), options_(std::move(options)), name_(std::move(name)) {}

  // The same Python object each time (`m.f is m.f`), found without building anything.
  py::object get(const std::string& fn) {
    auto it = functions_.find(fn);
    if (it != functions_.end()) return it->second;
    Result<Function> r = module_.get(fn);
    if (!r.ok()) raise_errors(ErrorClass::Compile, r.errors());
    return functions_.emplace(fn, py::cast(PyFunction(std::move(r).value(), options_)))
        .first->second;
  }
  bool has(const std::string& fn) const {
    return functions_.count(fn) != 0 || module_.function(fn).ok();
  }
  std::vector<std::string> functions(bool prelude) const { return module_.function_names(prelude); }
  const std::string& name() const { return name_; }
  int opt_level() const { return module_.opt_level(); }
  const CallOptions& options() const { return options_; }

 private:
  Module module_;
  CallOptions options_;
  std::string name_;
  std::map<std::string, py::object> functions_;  // touched only with the GIL held
};

PyModule load_module(Result<Module> r, CallOptions options, std::string name) {
  if (!r.ok()) raise_errors(ErrorClass::Compile, r.errors());
  return PyModule(std::move(r).value(), std::move(options), std::move(name));
}

LoadOptions load_options(std::optional<int> opt) {
  LoadOptions lo;
  if (opt) {
    if (*opt < 0 || *opt > 2)
      throw py::value_error("opt must be 0, 1 or 2; given " + std::to_string(*opt));
    lo.opt_level = *opt;
  }
  return lo;
}

}  // namespace

}  // namespace cotangent::python

PYBIND11_MODULE(_cotangent, m) {
  using namespace cotangent;          // NOLINT(google-build-using-namespace)
  using namespace cotangent::python;  // NOLINT(google-build-using-namespace)
  m.doc() = "Cotangent's compiler and runtime (use the package `cotangent`)";

  py::class_<PyFunction>(m, "Function")
      .def("__call__", &PyFunction::call)
      .def("cost", &PyFunction::cost)
      .def("source", &PyFunction::source)
      .def("_derivative",
           [](const PyFunction& f, const std::string& kind, const std::vector<std::string>& wrt) {
             return f.derivative(parse_kind(kind), wrt);
           })
      .def(
          "with_options",
          [](const PyFunction& f, const std::optional<std::string>& backend,
             std::optional<int> threads, std::optional<int64_t> max_while_iterations) {
            const CallOptions& o = f.options();
            return f.with_options(
                call_options(backend.value_or(backend_name(o.backend)), threads.value_or(o.threads),
                             max_while_iterations.value_or(o.max_while_iterations), o.cache_dir));
          },
          py::kw_only(), py::arg("backend") = py::none(), py::arg("threads") = py::none(),
          py::arg("max_while_iterations") = py::none())
      .def_property_readonly("name", [](const PyFunction& f) { return f.function().name(); })
      .def_property_readonly("parameters",
                             [](const PyFunction& f) {
                               std::vector<std::pair<std::string, std::string>> out;
                               for (const auto& p : f.function().info().params) {
                                 out.emplace_back(p.name, p.type);
                               }
                               return out;
                             })
      .def_property_readonly("result_type",
                             [](const PyFunction& f) { return f.function().info().result_type; })
      .def_property_readonly("signature", &PyFunction::signature)
      .def_property_readonly("backend",
                             [](const PyFunction& f) { return backend_name(f.options().backend); })
      .def_property_readonly("threads", [](const PyFunction& f) { return f.options().threads; })
      .def_property_readonly("compiled_count", &PyFunction::compiled_count)
      .def("__repr__",
           [](const PyFunction& f) { return "<cotangent.Function " + f.signature() + ">"; });

  py::class_<PyModule>(m, "Module")
      .def("__getattr__",
           [](PyModule& mod, const std::string& name) {
             if (!mod.has(name)) {
               std::string names;
               for (const auto& n : mod.functions(false)) names += (names.empty() ? "" : ", ") + n;
               throw py::attribute_error("module " + mod.name() + " has no function named `" +
                                         name + "` (it defines: " + names + ")");
             }
             return mod.get(name);
           })
      .def("__getitem__",
           [](PyModule& mod, const std::string& name) {
             if (!mod.has(name)) throw py::key_error(name);
             return mod.get(name);
           })
      .def("__contains__", &PyModule::has)
      .def("functions", &PyModule::functions, py::arg("prelude") = false)
      .def("__dir__",
           [](const PyModule& mod) {
             std::vector<std::string> names = mod.functions(false);
             for (const char* n : {"functions", "name", "opt_level"}) names.emplace_back(n);
             return names;
           })
      .def_property_readonly("name", &PyModule::name)
      .def_property_readonly("opt_level", &PyModule::opt_level)
      .def("__repr__", [](const PyModule& mod) { return "<cotangent.Module " + mod.name() + ">"; });

  m.def("_after_fork_in_child", &mark_forked_child,
        "calls run on one thread from now on (os.register_at_fork's after_in_child)");
  m.def(
      "load",
      [](const std::string& path, const std::string& backend, int threads, std::optional<int> opt,
         int64_t max_while_iterations, const std::string& cache_dir) {
        CallOptions o = call_options(backend, threads, max_while_iterations, cache_dir);
        LoadOptions lo = load_options(opt);
        Result<Module> r = [&] {
          py::gil_scoped_release release;
          return Module::from_file(path, lo);
        }();
        return load_module(std::move(r), std::move(o), path);
      },
      py::arg("path"), py::kw_only(), py::arg("backend") = "native", py::arg("threads") = 0,
      py::arg("opt") = py::none(), py::arg("max_while_iterations") = 100'000'000,
      py::arg("cache_dir") = "");
  m.def(
      "loads",
      [](const std::string& source, const std::string& name, const std::string& backend,
         int threads, std::optional<int> opt, int64_t max_while_iterations,
         const std::string& cache_dir) {
        CallOptions o = call_options(backend, threads, max_while_iterations, cache_dir);
        LoadOptions lo = load_options(opt);
        Result<Module> r = [&] {
          py::gil_scoped_release release;
          return Module::from_string(source, name, lo);
        }();
        return load_module(std::move(r), std::move(o), name);
      },
      py::arg("source"), py::arg("name") = "<string>", py::kw_only(), py::arg("backend") = "native",
      py::arg("threads") = 0, py::arg("opt") = py::none(),
      py::arg("max_while_iterations") = 100'000'000, py::arg("cache_dir") = "");
}
