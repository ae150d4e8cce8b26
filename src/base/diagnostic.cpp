#include "base/diagnostic.h"

#include <algorithm>

namespace cot {
namespace {

// Source lines longer than this are shown as a window around the caret.
constexpr size_t kMaxShown = 100;

void render_location(const SourceManager& sm, Span span, const std::string& kind,
                     const std::string& message, std::string& out) {
  if (!span.valid() || span.file > sm.size()) {
    out += kind + ": " + message + "\n";
    return;
  }
  const SourceFile& f = sm.file(span.file);
  auto [line, col] = f.line_col(span.begin);
  out += f.name + ":" + std::to_string(line) + ":" + std::to_string(col) + ": " + kind + ": " +
         message + "\n";
  std::string_view text = f.line_text(line);
  auto [eline, ecol] = f.line_col(std::max(span.begin, span.end > 0 ? span.end - 1 : 0));
  size_t col0 = static_cast<size_t>(col - 1);  // 0-based caret position in `text`
  size_t width = eline == line && ecol >= col ? static_cast<size_t>(ecol - col + 1) : 1;
  // A long line (a generated program on one line) is shown as a window around the caret, so
  // that each message stays a few lines long.
  std::string prefix, suffix;
  if (text.size() > kMaxShown) {
    size_t first = col0 > kMaxShown / 2 ? col0 - kMaxShown / 2 : 0;
    first = std::min(first, text.size() - kMaxShown);
    if (first > 0) prefix = "...";
    if (first + kMaxShown < text.size()) suffix = "...";
    text = text.substr(first, kMaxShown);
    col0 -= std::min(col0, first);
  }
  out += "  " + prefix;
  out += text;
  out += suffix + "\n  " + std::string(prefix.size(), ' ');
  // Keep tabs so the caret lines up under the source character.
  for (size_t c = 0; c < col0 && c < text.size(); ++c) out += text[c] == '\t' ? '\t' : ' ';
  width = std::min(width, std::max<size_t>(1, text.size() - std::min(col0, text.size())));
  out += '^';
  for (size_t i = 1; i < width; ++i) out += '~';
  out += "\n";
}

}  // namespace

std::string render(const SourceManager& sm, const Diagnostic& d) {
  std::string out;
  render_location(sm, d.span, "error", d.message, out);
  for (const auto& [span, msg] : d.notes) render_location(sm, span, "note", msg, out);
  if (!d.help.empty()) out += "  help: " + d.help + "\n";
  return out;
}

std::string render(const SourceManager& sm, const std::vector<Diagnostic>& ds) {
  std::string out;
  for (const auto& d : ds) out += render(sm, d);
  return out;
}

}  // namespace cot
