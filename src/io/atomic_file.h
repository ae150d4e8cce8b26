// A file written whole or not at all (docs/design.md §11, "Writing files"): the bytes go to a
// temporary file in the same directory, every write is checked and so is closing, and only then
// is the temporary renamed over the file. A failure at any step leaves the previous file as it
// was and removes the temporary. Paths that are not regular files (a terminal, /dev/stdout, a
// pipe) are written in place, with the same checks.
#pragma once

#include <string>
#include <string_view>

#include "cotangent/error.h"

namespace cotangent::io {

class AtomicFile {
 public:
  // Opens the temporary beside `path` (or `path` itself when it is not a regular file). A
  // failure is remembered and reported by finish().
  explicit AtomicFile(std::string path);
  ~AtomicFile();  // removes the temporary unless commit() renamed it
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // No failure so far.
  bool ok() const { return !failed_; }
  // Appends bytes; after a failure, does nothing (finish() reports the first failure).
  void write(std::string_view bytes);
  // Closes the temporary and reports the first failure of opening, writing or closing.
  Result<bool> finish();
  // Renames the finished temporary over the file.
  Result<bool> commit();

 private:
  void fail(std::string what, int error);

  std::string path_;    // as the caller named it, for messages
  std::string target_;  // the file replaced (a symbolic link resolved)
  std::string temp_;    // empty when writing the target in place
  int fd_ = -1;
  bool failed_ = false;
  std::string failure_;  // what failed, with the system's reason
  std::string help_;
};

}  // namespace cotangent::io
