#include "base/source.h"

#include <algorithm>
#include <limits>

namespace cot {

Span Span::cover(Span a, Span b) {
  if (!a.valid()) return b;
  if (!b.valid() || a.file != b.file) return a;
  return Span{a.file, std::min(a.begin, b.begin), std::max(a.end, b.end)};
}

SourceFile::SourceFile(std::string n, std::string t) : name(std::move(n)), text(std::move(t)) {
  // The mark is invisible: dropping it keeps the columns of the first line what an editor shows.
  if (text.starts_with("\xEF\xBB\xBF")) text.erase(0, 3);
  line_starts.push_back(0);
  // Offsets past 32 bits cannot be spans; the lexer refuses such a text (kMaxSourceBytes).
  const size_t end = std::min<size_t>(text.size(), std::numeric_limits<uint32_t>::max());
  for (size_t i = 0; i < end; ++i) {
    const char c = text[i];
    if (c == '\n' || (c == '\r' && (i + 1 >= text.size() || text[i + 1] != '\n'))) {
      line_starts.push_back(static_cast<uint32_t>(i + 1));
    }
  }
}

std::pair<int, int> SourceFile::line_col(uint32_t offset) const {
  auto it = std::upper_bound(line_starts.begin(), line_starts.end(), offset);
  int line = static_cast<int>(it - line_starts.begin());  // 1-based
  int col = static_cast<int>(offset - line_starts[line - 1]) + 1;
  return {line, col};
}

std::string_view SourceFile::line_text(int line) const {
  if (line < 1 || static_cast<size_t>(line) > line_starts.size()) return {};
  uint32_t b = line_starts[line - 1];
  uint32_t e = static_cast<size_t>(line) < line_starts.size() ? line_starts[line] - 1
                                                              : static_cast<uint32_t>(text.size());
  std::string_view v(text);
  v = v.substr(b, e - b);
  if (!v.empty() && v.back() == '\r') v.remove_suffix(1);
  return v;
}

uint32_t SourceManager::add(std::string name, std::string text) {
  files_.push_back(std::make_unique<SourceFile>(std::move(name), std::move(text)));
  return static_cast<uint32_t>(files_.size());
}

}  // namespace cot
