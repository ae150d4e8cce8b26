// The Core IR verifier (MLIR-style): checks every invariant of ir.h and returns what is broken.
// It runs after the checker and, in tests and debug builds, after every pass. A non-empty
// result is a compiler bug, never a user error.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace cot::ir {

struct VerifyError {
  std::string function;
  std::string message;  // includes the offending statement, printed
};

std::vector<VerifyError> verify(const Program& program);
std::vector<VerifyError> verify_function(const Program& program, const Function& f);

}  // namespace cot::ir
