// The tool's message loop (docs/design.md §14): GradBench's messages, one JSON object per line,
// from a stream, and one response per line to another. Every line that is not blank gets a
// response, whatever it holds: a line that is too long, is not JSON, nests too deeply or is
// not an object answers `success: false` with an error that names its line, and the next line
// is served.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

#include "gradbench/tool.h"
#include "io/json_parse.h"

namespace cot::gradbench {

// A message longer than this is refused without being stored (the rest of its line is
// skipped): the limit of the CLI's JSON inputs. GradBench's largest default messages (lse's
// 1.28 million reals, ht's 100,000 points) are under 30 MB.
inline constexpr size_t kMaxMessageBytes = cotangent::io::kMaxJsonBytes;

struct ServeOptions {
  std::string source = "<stdin>";  // names the input stream in errors
  size_t max_message_bytes = kMaxMessageBytes;
};

// Answers every message of `in` on `out`, each response flushed as it is written. Returns 0 at
// the end of `in`, and 1 when a response cannot be written (after saying so on `diagnostics`):
// an eval that cannot hear the tool cannot go on.
int serve(Tool& tool, std::istream& in, std::ostream& out, std::ostream& diagnostics,
          const ServeOptions& options = {});

}  // namespace cot::gradbench
