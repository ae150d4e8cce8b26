#include "codegen/cache_dir.h"

#include <dirent.h>
#include <fcntl.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>

#include "codegen/elf_check.h"

namespace cot::codegen {

namespace {

const char* const kHelp =
    "set COTANGENT_CACHE_DIR to a directory of yours that only you can write (or run with "
    "--backend interp, which compiles nothing)";

// The home directory the password database gives the effective user, or empty.
std::string password_home() {
  long size = sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(size > 0 ? static_cast<size_t>(size) : 16384);
  passwd pw{};
  passwd* found = nullptr;
  if (getpwuid_r(geteuid(), &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr ||
      pw.pw_dir == nullptr || pw.pw_dir[0] != '/') {
    return "";
  }
  return pw.pw_dir;
}

std::string octal_mode(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

// Creates `path` and its missing parents with mode 0700 (the XDG base directory rule for
// directories it creates). Returns 0 or the errno of the step that failed; `created` says
// whether the last component was made here.
int make_directories(const std::string& path, bool& created) {
  if (mkdir(path.c_str(), 0700) == 0) {
    created = true;
    return 0;
  }
  if (errno == EEXIST) return 0;
  if (errno != ENOENT) return errno;
  const size_t slash = path.find_last_of('/', path.find_last_not_of('/'));
  if (slash == std::string::npos || slash == 0) return ENOENT;
  bool parent_created = false;
  if (const int e = make_directories(path.substr(0, slash), parent_created); e != 0) return e;
  if (mkdir(path.c_str(), 0700) == 0) {
    created = true;
    return 0;
  }
  return errno == EEXIST ? 0 : errno;
}

bool hex_digits(const std::string& s, size_t from, size_t to) {
  if (from >= to) return false;
  for (size_t i = from; i < to; ++i) {
    const char c = s[i];
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

}  // namespace

std::string default_cache_dir() {
  if (const char* d = std::getenv("COTANGENT_CACHE_DIR"); d != nullptr && *d != 0) return d;
  // The XDG base directory specification: a relative $XDG_CACHE_HOME is to be ignored.
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && x[0] == '/') {
    return std::string(x) + "/cotangent";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != 0) {
    return std::string(h) + "/.cache/cotangent";
  }
  // Without HOME, the user's home from the password database (as OpenSSH finds ~/.ssh); no
  // fallback to a shared temporary directory, where another user could create it first.
  const std::string home = password_home();
  return home.empty() ? "" : home + "/.cache/cotangent";
}

bool is_cache_temporary(const std::string& name) {
  // <key>.tmp-<pid>-<hex>.{cpp,so,json}; older versions wrote <key>.<pid>-<hex>.{cpp,so,log}
  // and version-<pid>-<hex>.txt.
  if (name.rfind("version-", 0) == 0) return ends_with(name, ".txt");
  if (name.size() < 34 || !hex_digits(name, 0, 32) || name[32] != '.') return false;
  if (!(ends_with(name, ".cpp") || ends_with(name, ".so") || ends_with(name, ".log") ||
        ends_with(name, ".json"))) {
    return false;
  }
  const size_t dash = name.find('-', 33);
  if (dash == std::string::npos) return false;
  const std::string pid = name.substr(33, dash - 33);
  return pid == "tmp" || (!pid.empty() && pid.find_first_not_of("0123456789") == std::string::npos);
}

std::variant<CacheDir, CompileError> CacheDir::open(const std::string& path) {
  auto fail = [&](const std::string& what) {
    return CompileError{CompileError::Kind::cache, what, kHelp};
  };
  bool created = false;
  if (const int e = make_directories(path, created); e != 0) {
    return fail("cannot create the compile cache directory " + path + ": " + std::strerror(e));
  }
  char resolved[PATH_MAX];
  if (realpath(path.c_str(), resolved) == nullptr) {
    return fail("cannot resolve the compile cache directory " + path + ": " + std::strerror(errno));
  }
  UniqueFd fd(::open(resolved, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    return fail("cannot open the compile cache directory " + std::string(resolved) + ": " +
                std::strerror(errno));
  }
  if (created) fchmod(fd.get(), 0700);  // whatever the umask took away
  // OpenSSH's StrictModes rule for the files it trusts, checked on the descriptor itself.
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) {
    return fail("cannot inspect the compile cache directory " + std::string(resolved) + ": " +
                std::strerror(errno));
  }
  if (st.st_uid != geteuid()) {
    return fail("the compile cache directory " + std::string(resolved) + " belongs to uid " +
                std::to_string(st.st_uid) + ", not to you (uid " + std::to_string(geteuid()) +
                "); code is loaded only from a directory of yours that nobody else can write");
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    CompileError e = fail("the compile cache directory " + std::string(resolved) +
                          " is writable by group or others (mode " + octal_mode(st.st_mode) +
                          "); code is loaded only from a directory nobody else can write");
    e.help = "run `chmod go-w " + std::string(resolved) + "`, or " + kHelp;
    return e;
  }
  return CacheDir(std::move(fd), resolved);
}

std::string CacheDir::load_path(const std::string& name) const {
  // Through the descriptor, so the directory loaded from is the one checked, whatever
  // happened to the path since.
  const std::string via_fd = "/proc/self/fd/" + std::to_string(fd_.get());
  struct stat st {};
  if (stat(via_fd.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return via_fd + "/" + name;
  return display_path(name);
}

std::variant<UniqueFd, std::string> CacheDir::open_object(const std::string& name) const {
  UniqueFd fd(openat(fd_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) {
    if (errno == ENOENT) return std::string("absent");
    return std::string(errno == ELOOP ? "it is a symbolic link" : std::strerror(errno));
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return std::string(std::strerror(errno));
  if (!S_ISREG(st.st_mode)) return std::string("it is not a regular file");
  if (st.st_uid != geteuid()) {
    return "it belongs to uid " + std::to_string(st.st_uid) + ", not to you";
  }
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    return "it is writable by group or others (mode " + octal_mode(st.st_mode) + ")";
  }
  std::string problem = elf_shared_object_problem(fd.get(), static_cast<uint64_t>(st.st_size));
  if (!problem.empty()) return problem;
  return fd;
}

std::optional<std::string> CacheDir::read_text(const std::string& name, size_t limit) const {
  UniqueFd fd(openat(fd_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  struct stat st {};
  if (fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
      (st.st_mode & (S_IWGRP | S_IWOTH)) != 0 || static_cast<uint64_t>(st.st_size) > limit) {
    return std::nullopt;
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return std::nullopt;
    got += static_cast<size_t>(n);
  }
  return text;
}

std::string CacheDir::seal_object(const std::string& name) const {
  UniqueFd fd(openat(fd_.get(), name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return std::strerror(errno);
  if (fchmod(fd.get(), 0600) != 0 || fsync(fd.get()) != 0) return std::strerror(errno);
  auto opened = open_object(name);
  if (auto* why = std::get_if<std::string>(&opened)) return *why;
  return "";
}

CompileError CacheDir::write_error(const std::string& what, int errno_value) const {
  return CompileError{
      CompileError::Kind::cache,
      "cannot " + what + " in the compile cache " + path_ + ": " + std::strerror(errno_value),
      "make room or make the directory writable, or " + std::string(kHelp)};
}

std::optional<CompileError> CacheDir::write_new(const std::string& name,
                                                const std::string& text) const {
  UniqueFd fd(
      openat(fd_.get(), name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
  if (!fd.valid()) return write_error("create " + name, errno);
  const char* p = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd.get(), p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : ENOSPC;
      remove(name);
      return write_error("write " + name, e);
    }
    p += n;
    left -= static_cast<size_t>(n);
  }
  // close reports what a delayed write could not do (NFS, quotas).
  if (::close(fd.release()) != 0) {
    const int e = errno;
    remove(name);
    return write_error("write " + name, e);
  }
  return std::nullopt;
}

std::optional<CompileError> CacheDir::rename(const std::string& from, const std::string& to) const {
  if (renameat(fd_.get(), from.c_str(), fd_.get(), to.c_str()) != 0) {
    return write_error("move " + from + " to " + to, errno);
  }
  return std::nullopt;
}

void CacheDir::remove(const std::string& name) const {
  unlinkat(fd_.get(), name.c_str(), 0);
}

int CacheDir::sweep_temporaries(std::chrono::seconds age) const {
  const int copy = fcntl(fd_.get(), F_DUPFD_CLOEXEC, 0);
  if (copy < 0) return 0;
  DIR* d = fdopendir(copy);
  if (d == nullptr) {
    ::close(copy);
    return 0;
  }
  const time_t cutoff = std::time(nullptr) - static_cast<time_t>(age.count());
  std::vector<std::string> stale;
  while (dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (!is_cache_temporary(name)) continue;
    struct stat st {};
    if (fstatat(fd_.get(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    if (S_ISREG(st.st_mode) && st.st_mtime < cutoff) stale.push_back(name);
  }
  closedir(d);
  int removed = 0;
  for (const std::string& name : stale) {
    if (unlinkat(fd_.get(), name.c_str(), 0) == 0) ++removed;
  }
  return removed;
}

uint64_t CacheDir::free_bytes() const {
  struct statvfs s {};
  if (fstatvfs(fd_.get(), &s) != 0) return UINT64_MAX;
  return static_cast<uint64_t>(s.f_bavail) * s.f_frsize;
}

}  // namespace cot::codegen
