// Ahead-of-time code (`cotangent emit`): a loop function lowered with run-time sizes, written as
// a standalone .h/.cpp pair with a C ABI that needs nothing from Cotangent:
//
//   int NAME(const int64_t* sizes, const double* in0_x, ..., double* out0, ...,
//            int threads, char* message, size_t message_size);
//
// sizes holds the size variables bound by the parameters (in the order the header lists);
// every argument and result is a pointer to its row-major elements (bool as one byte), results
// allocated by the caller, none overlapping an argument. Returns 0, or a nonzero code with a
// message `file:line:col: error: ...` written to `message`. The argument pointers are named
// inK_LABEL and the results outK by position, so that no program's names can collide with a
// keyword, a macro or the ABI's own names; the rest of the source has internal linkage.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "codegen/loop_ir.h"

namespace cot::codegen {

struct StandaloneSignature {
  std::string name;         // the C function (invalid_c_name() accepts it)
  std::string declaration;  // the function as source declares it, for the header's comment
  std::vector<std::string> size_names;
  struct Leaf {
    std::string name;  // a label for the header: "x", "x.0" (a tuple's component), "result"
    Scalar type = Scalar::F64;
    std::string elements;  // "n * m", "1"
  };
  std::vector<Leaf> inputs, outputs;
  std::vector<std::string> site_locations;  // "file:line:col: " per site ("" when unknown)
};

struct StandaloneSource {
  std::string header, source;
};

// Why `name` cannot be the C function of a standalone source: not an identifier, a keyword of C
// or C++, a name reserved to the implementation, or a name of the generated run time (which are
// cot_X and COT_X; the names `cotangent emit` gives, cot_OP_FN, are allowed). Nothing when it
// can. Library names (`free`, `exp`) are the caller's to avoid.
std::optional<std::string> invalid_c_name(const std::string& name);

StandaloneSource emit_standalone(const LoopFunction& fn, const StandaloneSignature& sig);

}  // namespace cot::codegen
