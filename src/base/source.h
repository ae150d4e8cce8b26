// Source files and spans. A Span is a byte range in one file of a SourceManager; it is resolved
// to line:col only when a message is rendered, so spans stay small and cheap to copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cot {

struct Span {
  uint32_t file = 0;  // index into SourceManager::files(); 0 means "no file"
  uint32_t begin = 0;
  uint32_t end = 0;

  bool valid() const { return file != 0; }
  // The smallest span covering both (same file assumed; `a` wins otherwise).
  static Span cover(Span a, Span b);
};

// The largest source text accepted (docs/language.md §2): spans hold 32-bit offsets, every token
// costs memory, and a bound makes a wrong path such as /dev/zero an error, not memory exhausted.
// Real programs are a few hundred kilobytes at most.
inline constexpr size_t kMaxSourceBytes = size_t{16} << 20;

struct SourceFile {
  std::string name;
  std::string text;                   // without a leading UTF-8 byte-order mark
  std::vector<uint32_t> line_starts;  // byte offset of each line's first character

  // Lines end at LF, CRLF or a lone CR (old Mac files), as the lexer reads them.
  SourceFile(std::string name, std::string text);
  // 1-based line and column (columns count bytes) of a byte offset.
  std::pair<int, int> line_col(uint32_t offset) const;
  std::string_view line_text(int line) const;  // without the newline
};

// Owns the text of every file a module was built from (the prelude and the user's file).
// Shared by the module, its IR and its diagnostics so spans remain resolvable.
class SourceManager {
 public:
  // Returns the file id used in spans (ids start at 1).
  uint32_t add(std::string name, std::string text);
  const SourceFile& file(uint32_t id) const { return *files_.at(id - 1); }
  size_t size() const { return files_.size(); }

 private:
  std::vector<std::unique_ptr<SourceFile>> files_;
};

}  // namespace cot
