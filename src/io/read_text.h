// Reading a whole text file (a module's source, a JSON input) with a bound on its size, so that
// a wrong path (`/dev/zero`, a pipe that never ends, a multi-gigabyte file) is an error with a
// message rather than memory exhausted.
#pragma once

#include <cstddef>
#include <istream>
#include <string>
#include <string_view>

#include "cotangent/error.h"

namespace cotangent::io {

// What a read accepts, and how its errors speak of the file.
struct TextRules {
  size_t max_bytes = 0;
  std::string_view
      kind;  // "source file", "JSON input": "is larger than 16 MiB, the largest <kind>"
  std::string_view too_large_help;
  // Text of this kind never holds a NUL byte (JSON does not allow one, even escaped in
  // strings), so the first one ends the read: /dev/zero fails at once instead of at the cap.
  bool refuse_nul = true;
};

// The whole file at `path`; errors name the file as `shown`. A directory, a file that cannot be
// opened or read, one longer than rules.max_bytes or with a NUL byte is an error.
Result<std::string> read_text_file(const std::string& path, const std::string& shown,
                                   const TextRules& rules);
// The same for an open stream (standard input).
Result<std::string> read_text_stream(std::istream& in, const std::string& shown,
                                     const TextRules& rules);

// "16 MiB", "1 GiB", "100 bytes": a limit as messages state it.
std::string byte_size_text(size_t bytes);

}  // namespace cotangent::io
