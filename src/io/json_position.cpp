#include "io/json_position.h"

#include <nlohmann/json.hpp>

#include "io/located_error.h"

namespace cotangent::io {
namespace {

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

size_t skip_blanks(std::string_view text, size_t i) {
  while (i < text.size() && is_blank(text[i])) ++i;
  return i;
}

// `i` is at an opening quote; returns the offset just after the closing one.
size_t skip_string(std::string_view text, size_t i) {
  for (++i; i < text.size(); ++i) {
    if (text[i] == '\\') {
      ++i;
    } else if (text[i] == '"') {
      return i + 1;
    }
  }
  return text.size();
}

// Offset just after the value starting at `i`. Iterative, so it cannot overflow the stack.
size_t skip_value(std::string_view text, size_t i) {
  if (i >= text.size()) return text.size();
  char c = text[i];
  if (c == '"') return skip_string(text, i);
  if (c != '[' && c != '{') {
    while (i < text.size() && !is_blank(text[i]) && text[i] != ',' && text[i] != ']' &&
           text[i] != '}') {
      ++i;
    }
    return i;
  }
  int depth = 0;
  while (i < text.size()) {
    c = text[i];
    if (c == '"') {
      i = skip_string(text, i);
      continue;
    }
    if (c == '[' || c == '{') ++depth;
    if (c == ']' || c == '}') {
      if (--depth == 0) return i + 1;
    }
    ++i;
  }
  return text.size();
}

std::string decode_key(std::string_view token) {
  if (token.find('\\') == std::string_view::npos && token.size() >= 2) {
    return std::string(token.substr(1, token.size() - 2));
  }
  try {
    return nlohmann::json::parse(token).get<std::string>();
  } catch (const nlohmann::json::exception&) {
    return std::string(token);
  }
}

}  // namespace

size_t find_excess_nesting(std::string_view text, int max_depth) {
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') {
      i = skip_string(text, i) - 1;
    } else if (c == '[' || c == '{') {
      if (++depth > max_depth) return i;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return kNoOffset;
}

size_t parse_error_offset(std::string_view text, size_t byte) {
  if (byte >= 1 && byte - 1 < text.size()) return byte - 1;
  size_t end = text.size();
  while (end > 0 && is_blank(text[end - 1])) --end;
  return end;
}

size_t json_root_offset(std::string_view text) {
  size_t i = text.starts_with("\xEF\xBB\xBF") ? 3 : 0;
  return skip_blanks(text, i);
}

std::vector<JsonMember> json_object_members(std::string_view text, size_t offset) {
  std::vector<JsonMember> members;
  if (offset >= text.size() || text[offset] != '{') return members;
  size_t i = skip_blanks(text, offset + 1);
  while (i < text.size() && text[i] == '"') {
    JsonMember m;
    m.key_offset = i;
    size_t key_end = skip_string(text, i);
    m.key = decode_key(text.substr(i, key_end - i));
    i = skip_blanks(text, key_end);
    if (i >= text.size() || text[i] != ':') break;
    m.value_offset = skip_blanks(text, i + 1);
    i = skip_blanks(text, skip_value(text, m.value_offset));
    members.push_back(std::move(m));
    if (i >= text.size() || text[i] != ',') break;
    i = skip_blanks(text, i + 1);
  }
  return members;
}

size_t json_element_offset(std::string_view text, size_t offset, std::span<const int64_t> indices) {
  for (int64_t index : indices) {
    if (offset >= text.size() || text[offset] != '[' || index < 0) return kNoOffset;
    size_t i = skip_blanks(text, offset + 1);
    if (i < text.size() && text[i] == ']') return kNoOffset;
    for (int64_t k = 0; k < index; ++k) {
      i = skip_blanks(text, skip_value(text, i));
      if (i >= text.size() || text[i] != ',') return kNoOffset;
      i = skip_blanks(text, i + 1);
    }
    offset = i;
  }
  return offset;
}

}  // namespace cotangent::io
