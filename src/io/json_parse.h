// JSON text to nlohmann::json, with errors that carry the file, line and column of the problem.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "cotangent/error.h"
#include "io/read_text.h"

namespace cotangent::io {

// The largest JSON input read (docs/language.md §9): about 50 million numbers. Larger tensors are
// read from .npy files, which need no parsing and no DOM.
inline constexpr size_t kMaxJsonBytes = size_t{1} << 30;

// How a JSON input file or standard input is read (read_text.h): at most kMaxJsonBytes, and no
// NUL byte (JSON text has none).
TextRules json_text_rules();

// Parses `text` into `out`, or returns the error. Nesting deeper than kMaxJsonDepth is rejected
// before parsing so that nothing downstream recurses deeply; text longer than kMaxJsonBytes is
// rejected too.
std::optional<Error> parse_json(std::string_view text, const std::string& file,
                                nlohmann::json& out);

}  // namespace cotangent::io
