// The compile cache's directory and the trust placed in it (docs/design.md §10, the compile
// cache). Code is loaded only from a directory the user owns and nobody else can write, and
// only objects the user owns and nobody else can write; every access after the check goes
// through the directory's open descriptor, so a path swapped after the check cannot redirect
// it. Objects are checked to be complete before they are loaded, and temporaries of compiles
// that died are swept.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <variant>

#include "codegen/compile_error.h"
#include "codegen/unique_fd.h"

namespace cot::codegen {

// $COTANGENT_CACHE_DIR, else $XDG_CACHE_HOME/cotangent (if absolute), else
// $HOME/.cache/cotangent, else the home directory the password database gives the user plus
// /.cache/cotangent; empty when there is none. Never a shared temporary directory.
std::string default_cache_dir();

// Whether `name` is a temporary file of a compile (or of an older version's): the sweep
// removes these once they are stale.
bool is_cache_temporary(const std::string& name);

class CacheDir {
 public:
  // Opens the directory `path`, creating it and missing parents with mode 0700. An error
  // unless it is a directory owned by the user that group and others cannot write.
  static std::variant<CacheDir, CompileError> open(const std::string& path);

  // The directory as resolved (symbolic links followed), for messages.
  const std::string& path() const { return path_; }
  int fd() const { return fd_.get(); }
  std::string display_path(const std::string& name) const { return path_ + "/" + name; }
  // The path `dlopen` is given for `name`: through the open descriptor
  // (/proc/self/fd/N/name), else, without /proc, the resolved path.
  std::string load_path(const std::string& name) const;

  // The object `name`, opened without following links, if it may be loaded: a regular file
  // owned by the user, not writable by group or others, and a complete shared object.
  // Otherwise why not ("absent" when there is no such file).
  std::variant<UniqueFd, std::string> open_object(const std::string& name) const;
  // Makes the compiler's output `name` loadable: mode 0600, on disk (fsync), and checked as
  // open_object checks it. Empty, or what is wrong.
  std::string seal_object(const std::string& name) const;

  // The text of `name` (at most `limit` bytes), if it may be trusted as open_object trusts an
  // object: a regular file owned by the user, not writable by group or others. nullopt
  // otherwise.
  std::optional<std::string> read_text(const std::string& name, size_t limit) const;
  // Creates `name`, which must not exist, holding `text` (mode 0600).
  std::optional<CompileError> write_new(const std::string& name, const std::string& text) const;
  // Renames `from` to `to` within the directory, replacing `to` atomically.
  std::optional<CompileError> rename(const std::string& from, const std::string& to) const;
  void remove(const std::string& name) const;
  // Removes temporaries (is_cache_temporary) not modified for `age`: what compiles that were
  // killed left. Returns how many it removed.
  int sweep_temporaries(std::chrono::seconds age) const;
  // Bytes the directory's file system has free for the user (or UINT64_MAX if unknown).
  uint64_t free_bytes() const;

  // An error that names the directory and the OS's reason (`errno_value`).
  CompileError write_error(const std::string& what, int errno_value) const;

 private:
  CacheDir(UniqueFd fd, std::string path) : fd_(std::move(fd)), path_(std::move(path)) {}
  UniqueFd fd_;
  std::string path_;
};

}  // namespace cot::codegen
