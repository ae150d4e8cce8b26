// JSON text to nlohmann::json, with errors that carry the file, line and column of the problem.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "cotangent/error.h"

namespace cotangent::io {

// Parses `text` into `out`, or returns the error. Nesting deeper than kMaxJsonDepth is rejected
// before parsing so that nothing downstream recurses deeply.
std::optional<Error> parse_json(std::string_view text, const std::string& file,
                                nlohmann::json& out);

}  // namespace cotangent::io
