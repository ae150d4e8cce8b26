#include "io/located_error.h"

#include <algorithm>

namespace cotangent::io {
namespace {

// Source lines longer than this are shown as a window around the column, so that a JSON file
// written on one huge line does not produce a huge message.
constexpr size_t kMaxShown = 100;

// The line from `begin` to its end (LF, CR or CRLF), without the line break.
std::string_view line_at(std::string_view text, size_t begin) {
  size_t end = text.find_first_of("\r\n", begin);
  if (end == std::string_view::npos) end = text.size();
  return text.substr(begin, end - begin);
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
  // A leading UTF-8 byte-order mark is invisible: columns of the first line start after it.
  size_t line_begin = text.starts_with("\xEF\xBB\xBF") && offset >= 3 ? 3 : 0;
  // LF, CRLF and a lone CR each end a line, as for source files.
  for (size_t i = 0; i < offset; ++i) {
    const char c = text[i];
    if (c == '\n' || (c == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n'))) {
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
