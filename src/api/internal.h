// Shared by the API's implementation files: errors from diagnostics, and what a compiled
// function holds.
#pragma once

#include <memory>

#include "codegen/native.h"
#include "cotangent/cotangent.h"
#include "syntax/diagnostic.h"
#include "syntax/source.h"

namespace cotangent {

// A diagnostic as an API error, with its position and rendered text.
Error to_error(const cot::SourceManager& sm, const cot::Diagnostic& d);

struct CompiledFunction::Impl {
  cot::codegen::NativeFunction native;
  cot::codegen::NativeOptions options;
  std::shared_ptr<cot::SourceManager> sources;  // for the positions of run-time errors
};

}  // namespace cotangent
