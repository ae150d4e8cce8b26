#include "syntax/diagnostic.h"

#include <algorithm>

namespace cot {
namespace {

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
  out += "  ";
  out += text;
  out += "\n  ";
  // Keep tabs so the caret lines up under the source character.
  for (int c = 1; c < col && static_cast<size_t>(c - 1) < text.size(); ++c) {
    out += text[c - 1] == '\t' ? '\t' : ' ';
  }
  auto [eline, ecol] = f.line_col(std::max(span.begin, span.end > 0 ? span.end - 1 : 0));
  int width = (eline == line) ? std::max(1, ecol - col + 1) : 1;
  width = std::min<int>(width, static_cast<int>(std::max<size_t>(1, text.size() + 1 - col)));
  out += '^';
  for (int i = 1; i < width; ++i) out += '~';
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
