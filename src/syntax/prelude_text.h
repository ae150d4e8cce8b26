// The prelude's source text, compiled into the front end (generated from prelude/prelude.cot by
// tools/embed_prelude.cmake), so that no data file is needed at run time.
#pragma once

#include <string_view>

namespace cot {
extern const std::string_view kPreludeText;
}  // namespace cot
