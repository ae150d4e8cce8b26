#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <utility>
#include <vector>

#include "cotangent/io.h"
#include "io/located_error.h"

namespace cotangent::io {
namespace {

std::string directory_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string base_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// The file a symbolic link names, so that writing through the link replaces that file and keeps
// the link; `path` itself when it is not a link or names nothing yet.
std::string resolved(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return path;
  char* real = ::realpath(path.c_str(), nullptr);
  if (real == nullptr) return path;  // a dangling link: the rename replaces the link
  std::string out(real);
  std::free(real);
  return out;
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)), target_(resolved(path_)) {
  struct stat st {};
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    failed_ = true;
    failure_ = "cannot write the file: it is a directory";
    help_ = "name a file to write, not a directory";
    return;
  }
  if (exists && !S_ISREG(st.st_mode)) {
    // A device or pipe cannot be replaced by renaming: write to it directly.
    fd_ = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd_ < 0) fail("cannot open the file for writing", errno);
    return;
  }
  // A hidden name beside the file (the same file system, so the rename is atomic), unique by
  // the process and a random number; O_EXCL refuses a name that exists already.
  const std::string dir = directory_of(target_);
  const std::string base = base_of(target_).substr(0, 100);
  std::random_device random;
  for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
    char suffix[64];
    std::snprintf(suffix, sizeof suffix, ".%ld.%08x.tmp", static_cast<long>(::getpid()),
                  static_cast<unsigned>(random()));
    temp_ = (dir == "/" ? "/" : dir + "/") + "." + base + suffix;
    fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  if (fd_ < 0) {
    const int error = errno;
    temp_.clear();
    fail("cannot create a temporary file in " + dir + " to write the file", error);
    help_ = "write to a directory you may create files in; the file is written there first";
    return;
  }
  // Replacing a file keeps its permissions (a new file gets the default ones).
  if (exists && ::fchmod(fd_, st.st_mode & 07777) != 0) {
    fail("cannot give the new file the permissions of the old one", errno);
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!temp_.empty()) ::unlink(temp_.c_str());
}

void AtomicFile::fail(std::string what, int error) {
  if (failed_) return;
  failed_ = true;
  failure_ = std::move(what) + ": " + std::strerror(error);
  if (error == ENOSPC || error == EDQUOT) help_ = "free some space on the disk, then run again";
}

void AtomicFile::write(std::string_view bytes) {
  while (!failed_ && !bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      // write() returns 0 only for a request of 0 bytes, which this loop never makes.
      fail("cannot write the file", n < 0 ? errno : EIO);
      return;
    }
    bytes.remove_prefix(static_cast<size_t>(n));
  }
}

Result<bool> AtomicFile::finish() {
  if (fd_ >= 0) {
    // A file system may report a failed write only when the file is closed (NFS, quotas).
    if (::close(fd_) != 0) fail("cannot write the file", errno);
    fd_ = -1;
  }
  if (failed_) {
    std::string help = help_;
    if (!temp_.empty()) help += (help.empty() ? "" : "; ") + std::string("the file is unchanged");
    return file_error(path_, failure_, help);
  }
  return true;
}

Result<bool> AtomicFile::commit() {
  if (failed_ || fd_ >= 0) {
    auto finished = finish();
    if (!finished) return finished;
  }
  if (temp_.empty()) return true;
  if (::rename(temp_.c_str(), target_.c_str()) != 0) {
    fail("cannot replace the file by its new contents", errno);
    return file_error(path_, failure_, "the file is unchanged");
  }
  temp_.clear();
  return true;
}

}  // namespace cotangent::io

namespace cotangent {

Result<bool> write_files(const std::vector<FileText>& files) {
  std::vector<std::unique_ptr<io::AtomicFile>> out;
  out.reserve(files.size());
  for (const FileText& f : files) {
    out.push_back(std::make_unique<io::AtomicFile>(f.path));
    out.back()->write(f.text);
  }
  // Every file is written and closed before any is renamed: a failure leaves them all as they were.
  for (auto& f : out) {
    auto finished = f->finish();
    if (!finished) return finished;
  }
  for (auto& f : out) {
    auto committed = f->commit();
    if (!committed) return committed;
  }
  return true;
}

}  // namespace cotangent
