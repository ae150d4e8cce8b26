#include "io/located_error.h"

#include <algorithm>

namespace cotangent::io {
namespace {

// Source lines longer than this are shown as a window around the column, so that a JSON file
// written on one huge line does not produce a huge message.
constexpr size_t kMaxShown = 100;

std::string_view line_at(std::string_view text, size_t begin) {
  size_t end = text.find('\n', begin);
  if (end == std::string_view::npos) end = text.size();
  std::string_view line = text.substr(begin, end - begin);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

void render_source_line(std::string_view line, int column, std::string& out) {
  size_t col0 = static_cast<size_t>(column - 1);  // 0-based caret position in `line`
  size_t first = 0;
  std::string prefix, suffix;
  if (line.size() > kMaxShown) {
    first = col0 > kMaxShown / 2 ? col0 - kMaxShown / 2 : 0;
    first = std::min(first, line.size() - std::min(line.size(), kMaxShown));
    if (first > 0) prefix = "...";
    if (first + kMaxShown < line.size()) suffix = "...";
    line = line.substr(first, kMaxShown);
  }
  out += "  " + prefix;
  out += line;
  out += suffix + "\n  " + std::string(prefix.size(), ' ');
  // Keep tabs so that the caret lines up under the character.
  for (size_t i = first; i < col0 && i - first < line.size(); ++i) {
    out += line[i - first] == '\t' ? '\t' : ' ';
  }
  out += "^\n";
}

}  // namespace

TextPosition position_of(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  TextPosition p;
  size_t line_begin = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++p.line;
      line_begin = i + 1;
    }
  }
  p.column = static_cast<int>(offset - line_begin) + 1;
  return p;
}

Error error_at(std::string_view text, const std::string& file, size_t offset, std::string message,
               std::string help) {
  if (offset == kNoOffset) return file_error(file, std::move(message), std::move(help));
  offset = std::min(offset, text.size());
  Error e;
  e.file = file;
  TextPosition p = position_of(text, offset);
  e.line = p.line;
  e.column = p.column;
  e.message = std::move(message);
  e.help = std::move(help);
  e.rendered = (file.empty() ? std::string("<input>") : file) + ":" + std::to_string(e.line) + ":" +
               std::to_string(e.column) + ": error: " + e.message + "\n";
  size_t line_begin = offset - static_cast<size_t>(e.column - 1);
  render_source_line(line_at(text, line_begin), e.column, e.rendered);
  if (!e.help.empty()) e.rendered += "  help: " + e.help + "\n";
  return e;
}

Error file_error(const std::string& file, std::string message, std::string help) {
  Error e;
  e.file = file;
  e.message = std::move(message);
  e.help = std::move(help);
  e.rendered = (file.empty() ? std::string() : file + ": ") + "error: " + e.message + "\n";
  if (!e.help.empty()) e.rendered += "  help: " + e.help + "\n";
  return e;
}

}  // namespace cotangent::io
