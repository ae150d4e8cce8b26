#include "io/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
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

std::string normal_absolute(const std::string& path) {
  std::error_code ec;
  std::string full = std::filesystem::absolute(path, ec).lexically_normal().string();
  return ec ? path : full;
}

// The descriptor N that /dev/fd/N or /proc/self/fd/N (the targets of /dev/stdout and
// /dev/stderr) names, or -1.
int descriptor_named(const std::string& full) {
  const std::string pid = std::to_string(::getpid());
  for (const std::string& prefix :
       {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
        std::string("/proc/thread-self/fd/"), "/proc/" + pid + "/fd/"}) {
    if (full.rfind(prefix, 0) != 0 || full.size() == prefix.size() ||
        full.size() > prefix.size() + 9)
      continue;
    const std::string digits = full.substr(prefix.size());
    if (digits.find_first_not_of("0123456789") == std::string::npos) return std::stoi(digits);
  }
  return -1;
}

// Where the bytes go: the file that `path`'s symbolic links end at, replaced so that the links
// stay. A chain through /dev/fd/N or /proc/self/fd/N (/dev/stdout, /dev/stderr) names one of
// this process's descriptors: the bytes are written to it, where the shell's redirection points,
// at its offset, as if written to standard output; renaming over the file would take it from
// under the redirection. Any other path under /proc is opened and written in place.
struct Target {
  std::string path;
  int descriptor = -1;
  bool in_place = false;
};

Target resolve(const std::string& path) {
  Target t{path};
  for (int hop = 0; hop < 40; ++hop) {  // the kernel's limit; a longer chain fails at open
    const std::string full = normal_absolute(t.path);
    t.descriptor = descriptor_named(full);
    if (t.descriptor >= 0 || full.rfind("/proc/", 0) == 0) {
      t.in_place = true;
      return t;
    }
    struct stat st {};
    if (::lstat(t.path.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return t;
    std::string link(4096, '\0');
    const ssize_t n = ::readlink(t.path.c_str(), link.data(), link.size());
    if (n <= 0 || static_cast<size_t>(n) >= link.size()) return t;
    link.resize(static_cast<size_t>(n));
    t.path = link[0] == '/' ? link : directory_of(t.path) + "/" + link;
  }
  return t;
}

}  // namespace

AtomicFile::AtomicFile(std::string path) : path_(std::move(path)) {
  if (path_.empty()) {
    failed_ = true;
    failure_ = "cannot write a file with an empty name";
    help_ = "name the file to write";
    return;
  }
  const Target t = resolve(path_);
  target_ = t.path;
  struct stat st {};
  const bool exists = ::stat(target_.c_str(), &st) == 0;
  if (exists && S_ISDIR(st.st_mode)) {
    failed_ = true;
    failure_ = "cannot write the file: it is a directory";
    help_ = "name a file to write, not a directory";
    return;
  }
  if (t.descriptor >= 0) {
    fd_ = ::fcntl(t.descriptor, F_DUPFD_CLOEXEC, 0);
    if (fd_ < 0) fail("cannot write to descriptor " + std::to_string(t.descriptor), errno);
    return;
  }
  if (t.in_place || (exists && !S_ISREG(st.st_mode))) {
    // A device, a pipe or a descriptor's file cannot be replaced by renaming: write to it.
    fd_ = ::open(target_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0666);
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
    temp_ = dir == "/" ? std::string("/") : dir + "/";
    temp_ += ".";
    temp_ += base;
    temp_ += suffix;
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
  // Every file is written and closed before any is renamed, so a failure to write (a full disk,
  // a quota) leaves them all as they were. A rename that fails after another succeeded (rare: a
  // directory made read-only in between) leaves the earlier files replaced.
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
