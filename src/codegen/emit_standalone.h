// Ahead-of-time code (`cotangent emit`): a loop function lowered with run-time sizes, written as
// a standalone .h/.cpp pair with a C ABI that needs nothing from Cotangent:
//
//   int NAME(const int64_t* sizes, const double* x, ..., double* result, ...,
//            int threads, char* message, size_t message_size);
//
// sizes holds the size variables bound by the parameters (in the order the header lists);
// every argument and result is a pointer to its row-major elements (bool as one byte), results
// allocated by the caller, none overlapping an argument. Returns 0, or a nonzero code with a
// message `file:line:col: error: ...` written to `message`.
#pragma once

#include <string>
#include <vector>

#include "codegen/loop_ir.h"

namespace cot::codegen {

struct StandaloneSignature {
  std::string name;         // the C function
  std::string declaration;  // the function as source declares it, for the header's comment
  std::vector<std::string> size_names;
  struct Leaf {
    std::string name;
    Scalar type = Scalar::F64;
    std::string elements;  // "n * m", "1"
  };
  std::vector<Leaf> inputs, outputs;
  std::vector<std::string> site_locations;  // "file:line:col: " per site ("" when unknown)
};

struct StandaloneSource {
  std::string header, source;
};

StandaloneSource emit_standalone(const LoopFunction& fn, const StandaloneSignature& sig);

}  // namespace cot::codegen
