#include "python/errors.h"

#include <string>

namespace py = pybind11;

namespace cotangent::python {

void raise_errors(ErrorClass cls, const std::vector<Error>& errors) {
  py::module_ mod = py::module_::import("cotangent._errors");
  py::object type = mod.attr(cls == ErrorClass::Compile ? "CompileError" : "EvaluationError");
  py::list all;
  for (const Error& e : errors) {
    all.append(py::make_tuple(e.file, e.line, e.column, e.message, e.help, e.rendered));
  }
  std::string text = to_string(errors);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  py::object exc = type(text, all);
  PyErr_SetObject(type.ptr(), exc.ptr());
  throw py::error_already_set();
}

}  // namespace cotangent::python
