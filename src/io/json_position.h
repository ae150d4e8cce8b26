// Byte positions inside JSON text. nlohmann::json's DOM does not keep positions, so error
// messages about a value find where it is by walking the (already validated) text again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cotangent::io {

// Deeper nesting than this is rejected before parsing: real inputs are a few levels deep, and
// a deep document could exhaust the stack of any recursive code that walks it.
inline constexpr int kMaxJsonDepth = 256;

// Offset of the first bracket that opens level max_depth + 1 (outside strings), or kNoOffset.
size_t find_excess_nesting(std::string_view text, int max_depth = kMaxJsonDepth);

// Offset of the character a parser error at 1-based byte `byte` refers to (the last one read);
// at the end of input, just after the last non-blank character.
size_t parse_error_offset(std::string_view text, size_t byte);

// Offset of the top-level value (after a byte-order mark and blanks).
size_t json_root_offset(std::string_view text);

struct JsonMember {
  std::string key;  // decoded
  size_t key_offset = 0;
  size_t value_offset = 0;
};
// The members of the object at `offset` in document order (duplicates included). `text` must
// be valid JSON; returns an empty list if `offset` is not an object.
std::vector<JsonMember> json_object_members(std::string_view text, size_t offset);

// Offset of element indices[0] of the array at `offset`, then element indices[1] of that, and
// so on; kNoOffset if the path does not exist. `text` must be valid JSON.
size_t json_element_offset(std::string_view text, size_t offset, std::span<const int64_t> indices);

}  // namespace cotangent::io
