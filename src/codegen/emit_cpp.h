// The C++ emitter: loop IR to source the system compiler turns into native code. Each loop
// function becomes
//
//   extern "C" int NAME(const void* const* inputs, void* const* outputs, cot_ctx* ctx);
//
// inputs and outputs hold one pointer per tensor or scalar leaf of the arguments and the result
// (row-major elements; bool as one byte); it returns 0, or site + 1 with the site's values in
// ctx (runtime/runtime.h). Parallel loops become OpenMP loops that report the failure of the
// earliest iteration, as the sequential order would.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "codegen/loop_ir.h"

namespace cot::codegen {

// The C++ type of a tensor element of type t (bool as uint8_t, as cotangent::Value stores it).
const char* c_elem_type(Scalar t);

// The generated code's run time: prims/scalar_math.h and runtime/runtime.h.
extern const std::string_view kRuntimeText;

// extern "C" for the functions a JIT-compiled object exports; internal (static) for the loop
// function of a standalone source, which only its wrapper calls.
enum class Linkage { ExternC, Internal };

std::string emit_function(const LoopFunction& fn, Linkage linkage = Linkage::ExternC);
// The run time followed by the functions.
std::string emit_translation_unit(const std::vector<const LoopFunction*>& fns,
                                  Linkage linkage = Linkage::ExternC);

}  // namespace cot::codegen
