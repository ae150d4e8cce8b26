// Errors of the C++ API as the Python package's exceptions (python/cotangent/_errors.py):
// CompileError for a module or derivative that fails to build, EvaluationError for a call that
// fails, each carrying the first error's position, message and help, and every error.
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include "cotangent/error.h"

namespace cotangent::python {

enum class ErrorClass { Compile, Evaluation };

// Raises the exception (sets it and throws pybind11::error_already_set).
[[noreturn]] void raise_errors(ErrorClass cls, const std::vector<Error>& errors);

// The value of a Result, or its errors raised as `cls`.
template <class T>
T take(Result<T>&& r, ErrorClass cls) {
  if (!r.ok()) raise_errors(cls, r.errors());
  return std::move(r).value();
}

}  // namespace cotangent::python
