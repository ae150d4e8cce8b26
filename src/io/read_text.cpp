#include "io/read_text.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "io/located_error.h"

namespace cotangent::io {
namespace {

Error too_large(const std::string& shown, const TextRules& rules) {
  return file_error(shown,
                    "the file is larger than " + byte_size_text(rules.max_bytes) +
                        ", the largest " + std::string(rules.kind) + " accepted",
                    std::string(rules.too_large_help));
}

// `text` holds the bytes read so far; the NUL is at `at`. The error points at it, so that a file
// that is text up to a stray NUL shows where it is.
Error has_nul(const std::string& text, size_t at, const std::string& shown,
              const TextRules& rules) {
  // The line is shown up to the NUL: the bytes after it may be binary.
  return error_at(std::string_view(text).substr(0, at), shown, at,
                  "the " + std::string(rules.kind) + " contains a NUL byte: it is not text",
                  "check the path; a " + std::string(rules.kind) + " is UTF-8 text");
}

}  // namespace

std::string byte_size_text(size_t bytes) {
  constexpr size_t kMiB = size_t{1} << 20;
  constexpr size_t kGiB = size_t{1} << 30;
  if (bytes >= kGiB && bytes % kGiB == 0) return std::to_string(bytes / kGiB) + " GiB";
  if (bytes >= kMiB && bytes % kMiB == 0) return std::to_string(bytes / kMiB) + " MiB";
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

Result<std::string> read_text_stream(std::istream& in, const std::string& shown,
                                     const TextRules& rules) {
  // Chunks, not istreambuf_iterator: the read stops one byte past the limit, and each chunk is
  // searched for a NUL as it arrives.
  constexpr size_t kChunk = size_t{1} << 16;
  std::string text;
  while (in) {
    const size_t room = rules.max_bytes + 1 - text.size();  // one more byte tells "too long"
    const size_t want = std::min(kChunk, room);
    const size_t old = text.size();
    text.resize(old + want);
    in.read(text.data() + old, static_cast<std::streamsize>(want));
    const size_t got = static_cast<size_t>(in.gcount());
    text.resize(old + got);
    if (rules.refuse_nul) {
      if (const void* p = std::memchr(text.data() + old, '\0', got)) {
        return has_nul(text, static_cast<size_t>(static_cast<const char*>(p) - text.data()), shown,
                       rules);
      }
    }
    if (text.size() > rules.max_bytes) return too_large(shown, rules);
    if (got < want) break;
  }
  if (in.bad()) return file_error(shown, "cannot read the file", "check that it is readable");
  return text;
}

Result<std::string> read_text_file(const std::string& path, const std::string& shown,
                                   const TextRules& rules) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (std::filesystem::is_directory(st)) {
    return file_error(shown, shown + " is a directory", "name a file");
  }
  // A regular file's size is known before reading it; other files (pipes, devices) are read up
  // to the limit.
  if (std::filesystem::is_regular_file(st)) {
    const uintmax_t size = std::filesystem::file_size(path, ec);
    if (!ec && size > rules.max_bytes) return too_large(shown, rules);
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return file_error(shown, "cannot read " + shown, "check that the file exists and is readable");
  }
  return read_text_stream(in, shown, rules);
}

}  // namespace cotangent::io
