// Errors about input files (JSON, .npy), rendered like compiler diagnostics:
//   file:line:col: error: message
//     <source line>
//     ^
//     help: what to do
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "cotangent/error.h"

namespace cotangent::io {

inline constexpr size_t kNoOffset = static_cast<size_t>(-1);

// 1-based line and column (in bytes) of a byte offset; an offset at or past the end is placed
// just after the last character.
struct TextPosition {
  int line = 1;
  int column = 1;
};
TextPosition position_of(std::string_view text, size_t offset);

// An error at byte `offset` of `text`, or without a position when offset is kNoOffset.
Error error_at(std::string_view text, const std::string& file, size_t offset, std::string message,
               std::string help = {});
// An error about a whole file (no line or column).
Error file_error(const std::string& file, std::string message, std::string help = {});

}  // namespace cotangent::io
