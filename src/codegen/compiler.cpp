#include "codegen/compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <sstream>

extern char** environ;

namespace cot::codegen {

namespace {

// A compile that has not touched its temporaries for this long was killed: they are swept.
constexpr std::chrono::seconds kStaleTemporary{3600};
// Below this much free space, a compiler failure is taken for a full cache file system.
constexpr uint64_t kFullFileSystem = 64ull << 20;
// The compiler's output kept in an error message.
constexpr size_t kLogLimit = 4000;
// The largest file besides objects read from the cache (a manifest, a generated source).
constexpr size_t kMaxEntryBytes = size_t{256} << 20;

std::string default_compiler() {
  if (const char* c = std::getenv("COTANGENT_CXX"); c != nullptr && *c != 0) return c;
  if (const char* c = std::getenv("CXX"); c != nullptr && *c != 0) return c;
  return "c++";
}

// A compiler named by a relative path is made absolute: compiles run in the cache directory.
std::string absolute_compiler(const std::string& compiler) {
  if (compiler.find('/') == std::string::npos || compiler[0] == '/') return compiler;
  std::error_code ec;
  const auto abs = std::filesystem::absolute(compiler, ec);
  return ec ? compiler : abs.string();
}

struct RunResult {
  int spawn_error = 0;  // errno when the program could not be started
  int exit_code = -1;   // -1 when it did not exit normally
  int signal = 0;       // the signal that ended it, when one did
  std::string output;   // stdout and stderr, the first `limit` bytes
};

// Runs argv in the directory `dir_fd` (or `dir_path` when dir_fd < 0) with stdin from
// /dev/null and stdout and stderr captured through a pipe (no log file to leave behind).
RunResult run(const std::vector<std::string>& argv, int dir_fd, const char* dir_path,
              char* const* envp, size_t limit) {
  RunResult r;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    r.spawn_error = errno;
    return r;
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  if (dir_fd >= 0) {
    posix_spawn_file_actions_addfchdir_np(&actions, dir_fd);
  } else if (dir_path != nullptr) {
    posix_spawn_file_actions_addchdir_np(&actions, dir_path);
  }
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), envp);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    r.spawn_error = rc;
    return r;
  }
  char buf[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (r.output.size() < limit) {
      r.output.append(buf, std::min(static_cast<size_t>(n), limit - r.output.size()));
    }
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return r;
  }
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
  return r;
}

// A fresh suffix for temporary files: process id and random bits.
std::string unique_suffix() {
  std::random_device rd;
  std::ostringstream s;
  s << getpid() << "-" << std::hex << rd() << rd();
  return s.str();
}

// The environment with LC_ALL=C, so the compiler's report does not change with the locale.
std::vector<std::string> c_locale_environment() {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "LC_ALL=", 7) != 0) env.emplace_back(*e);
  }
  env.emplace_back("LC_ALL=C");
  return env;
}

std::string probe_identity(const std::string& compiler, const std::vector<std::string>& flags) {
  std::vector<std::string> env = c_locale_environment();
  std::vector<char*> envp;
  envp.reserve(env.size() + 1);
  for (std::string& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  // -### prints the version and the compiler proper's command line, where GCC and clang have
  // resolved -march=native into this host's CPU and features; run in / because clang names
  // the working directory there.
  std::vector<std::string> argv{compiler};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-E", "-###", "-x", "c++", "/dev/null"});
  const size_t limit = 1 << 20;
  RunResult probe = run(argv, -1, "/", envp.data(), limit);
  std::string id = "-### exit " + std::to_string(probe.exit_code) + ":\n" + probe.output;
  if (probe.exit_code != 0) {
    RunResult version = run({compiler, "--version"}, -1, "/", envp.data(), limit);
    id += "--version exit " + std::to_string(version.exit_code) + ":\n" + version.output;
  }
  for (const std::string& name : compiler_environment_variables()) {
    const char* v = std::getenv(name.c_str());
    id += v == nullptr ? name + " unset\n" : name + "=" + v + "\n";
  }
  return id;
}

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

// Loads the checked object `name` of `dir`; null and `why` on failure.
void* load(const CacheDir& dir, const std::string& name, std::string& why) {
  // Never unloaded (RTLD_NODELETE): OpenMP worker threads the code started may still sit in
  // the runtime it pulled in after the last call returns.
  void* handle = dlopen(dir.load_path(name).c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* e = dlerror();
    why = e != nullptr ? e : "unknown error";
  }
  return handle;
}

}  // namespace

std::vector<std::string> default_flags() {
  // -mno-avx512f: GCC 12.2's basic-block vectorizer miscompiles guarded stores with 64-byte
  // vectors (tests/codegen/compiler_test.cpp has the reproducer; docs/design.md).
  return {"-std=c++20",   "-O3",      "-march=native",
          "-mno-avx512f", "-fopenmp", "-ffp-contract=off",
          "-fPIC",        "-shared",  "-w"};
}

const std::vector<std::string>& compiler_environment_variables() {
  static const std::vector<std::string> names{
      "CPATH",         "C_INCLUDE_PATH",  "CPLUS_INCLUDE_PATH",  "LIBRARY_PATH",
      "COMPILER_PATH", "GCC_EXEC_PREFIX", "CCC_OVERRIDE_OPTIONS"};
  return names;
}

SharedObject::~SharedObject() {
  if (handle_ != nullptr) dlclose(handle_);
}

void* SharedObject::symbol(const std::string& name) const {
  return dlsym(handle_, name.c_str());
}

std::string cache_key(const std::string& source, const std::string& compiler,
                      const std::vector<std::string>& flags, const std::string& identity) {
  std::string all = compiler + "\n" + identity + "\n";
  for (const std::string& f : flags) all += f + "\n";
  all += source;
  // Two 64-bit FNV-1a hashes with different offsets: 128 bits name the entry.
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx",
                static_cast<unsigned long long>(fnv1a(all, 0xcbf29ce484222325ULL)),
                static_cast<unsigned long long>(fnv1a(all, 0x84222325cbf29ce4ULL)));
  return buf;
}

Compiler::Compiler(CompilerOptions options)
    : compiler_(
          absolute_compiler(options.compiler.empty() ? default_compiler() : options.compiler)),
      flags_(options.flags.empty() ? default_flags() : std::move(options.flags)),
      cache_dir_(options.cache_dir.empty() ? default_cache_dir() : std::move(options.cache_dir)) {}

const std::string& Compiler::identity() const {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!identity_) identity_ = probe_identity(compiler_, flags_);
  return *identity_;
}

std::variant<CompileResult, CompileError> Compiler::compile_and_load(
    const std::string& source) const {
  const auto start = std::chrono::steady_clock::now();
  if (cache_dir_.empty()) {
    return CompileError{CompileError::Kind::cache,
                        "no directory for the compile cache: COTANGENT_CACHE_DIR, "
                        "XDG_CACHE_HOME and HOME are unset and the user has no home directory",
                        "set COTANGENT_CACHE_DIR to a directory of yours that only you can "
                        "write (or run with --backend interp, which compiles nothing)"};
  }
  auto opened = CacheDir::open(cache_dir_);
  if (auto* e = std::get_if<CompileError>(&opened)) return *e;
  const CacheDir& dir = std::get<CacheDir>(opened);
  CompileResult result;
  result.key = cache_key(source, compiler_, flags_, identity());
  const std::string object = result.key + ".so";
  auto finish = [&](void* handle) {
    result.object = std::make_shared<SharedObject>(handle, dir.display_path(object));
    result.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return result;
  };
  // A cached object is loaded only if it passes the checks; a damaged one (cut short, not
  // loadable, not the user's) is rebuilt and replaced.
  std::string why;
  if (std::holds_alternative<UniqueFd>(dir.open_object(object))) {
    if (void* handle = load(dir, object, why)) {
      result.cache_hit = true;
      return finish(handle);
    }
  }
  dir.sweep_temporaries(kStaleTemporary);
  const std::string tmp = result.key + ".tmp-" + unique_suffix();
  if (auto e = dir.write_new(tmp + ".cpp", source)) return *e;
  std::vector<std::string> argv{compiler_};
  argv.insert(argv.end(), flags_.begin(), flags_.end());
  argv.insert(argv.end(), {tmp + ".cpp", "-o", tmp + ".so"});
  RunResult compiled = run(argv, dir.fd(), nullptr, environ, kLogLimit);
  if (compiled.spawn_error != 0) {
    dir.remove(tmp + ".cpp");
    return CompileError{
        CompileError::Kind::toolchain,
        "cannot run the C++ compiler `" + compiler_ + "`: " + std::strerror(compiled.spawn_error),
        "install a C++ compiler or name one in COTANGENT_CXX (or run with "
        "--backend interp, which compiles nothing)"};
  }
  if (compiled.signal != 0) {
    // Killed (the out-of-memory killer, a limit, a user): the toolchain's trouble, not the code's.
    dir.remove(tmp + ".so");
    dir.remove(tmp + ".cpp");
    return CompileError{CompileError::Kind::toolchain,
                        "the C++ compiler `" + compiler_ + "` was ended by signal " +
                            std::to_string(compiled.signal) + " (" + strsignal(compiled.signal) +
                            ") while compiling",
                        "it may have run out of memory; try again, or run with --backend interp, "
                        "which compiles nothing"};
  }
  if (compiled.exit_code != 0) {
    dir.remove(tmp + ".so");
    // No diagnostic about the source, little space left: the assembler or linker could not
    // write the object.
    const bool about_source = compiled.output.find(tmp + ".cpp:") != std::string::npos;
    if (!about_source && dir.free_bytes() < kFullFileSystem) {
      dir.remove(tmp + ".cpp");
      return dir.write_error("write the compiled object " + object, ENOSPC);
    }
    // The source stays, under the entry's name, for reading.
    const std::string kept = result.key + ".cpp";
    const bool keeps_source = !dir.rename(tmp + ".cpp", kept);
    if (!keeps_source) dir.remove(tmp + ".cpp");
    std::string log = compiled.output;
    if (log.size() >= kLogLimit) log += "\n...";
    return CompileError{CompileError::Kind::internal,
                        "the C++ compiler (" + compiler_ + ") failed on the generated code" +
                            (keeps_source ? " " + dir.display_path(kept) : std::string()) +
                            " (exit " + std::to_string(compiled.exit_code) + "):\n" + log,
                        ""};
  }
  // Published by rename only once complete and on disk: readers never see a partial object.
  if (const std::string bad = dir.seal_object(tmp + ".so"); !bad.empty()) {
    dir.remove(tmp + ".so");
    dir.remove(tmp + ".cpp");
    if (dir.free_bytes() < kFullFileSystem) {
      return dir.write_error("write the compiled object " + object, ENOSPC);
    }
    return CompileError{CompileError::Kind::internal,
                        "the C++ compiler (" + compiler_ +
                            ") wrote an object that cannot be "
                            "loaded: " +
                            bad,
                        ""};
  }
  if (auto e = dir.rename(tmp + ".so", object)) {
    dir.remove(tmp + ".so");
    dir.remove(tmp + ".cpp");
    return *e;
  }
  if (dir.rename(tmp + ".cpp", result.key + ".cpp")) dir.remove(tmp + ".cpp");
  void* handle = load(dir, object, why);
  if (handle == nullptr) {
    return CompileError{CompileError::Kind::internal,
                        "cannot load the compiled code " + dir.display_path(object) + ": " + why,
                        ""};
  }
  return finish(handle);
}

std::string Compiler::key_of(const std::string& text) const {
  return cache_key(text, compiler_, flags_, identity());
}

std::optional<CompileResult> Compiler::load_cached(const std::string& key) const {
  if (cache_dir_.empty()) return std::nullopt;
  const auto start = std::chrono::steady_clock::now();
  auto opened = CacheDir::open(cache_dir_);
  if (!std::holds_alternative<CacheDir>(opened)) return std::nullopt;
  const CacheDir& dir = std::get<CacheDir>(opened);
  const std::string object = key + ".so";
  if (!std::holds_alternative<UniqueFd>(dir.open_object(object))) return std::nullopt;
  std::string why;
  void* handle = load(dir, object, why);
  if (handle == nullptr) return std::nullopt;
  CompileResult result;
  result.key = key;
  result.cache_hit = true;
  result.object = std::make_shared<SharedObject>(handle, dir.display_path(object));
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

std::optional<std::string> Compiler::read_entry(const std::string& name) const {
  if (cache_dir_.empty()) return std::nullopt;
  auto opened = CacheDir::open(cache_dir_);
  if (!std::holds_alternative<CacheDir>(opened)) return std::nullopt;
  return std::get<CacheDir>(opened).read_text(name, kMaxEntryBytes);
}

void Compiler::write_entry(const std::string& name, const std::string& text) const {
  if (cache_dir_.empty()) return;
  auto opened = CacheDir::open(cache_dir_);
  if (!std::holds_alternative<CacheDir>(opened)) return;
  const CacheDir& dir = std::get<CacheDir>(opened);
  // <key>.tmp-<pid>-<hex>.<ext>, which the sweep recognizes as a temporary.
  const size_t dot = name.find('.');
  const std::string tmp = name.substr(0, dot) + ".tmp-" + unique_suffix() +
                          (dot == std::string::npos ? std::string() : name.substr(dot));
  if (dir.write_new(tmp, text)) {
    dir.remove(tmp);
    return;
  }
  if (dir.rename(tmp, name)) dir.remove(tmp);
}

std::variant<CompileResult, CompileError> compile_and_load(const std::string& source,
                                                           const CompilerOptions& options) {
  return Compiler(options).compile_and_load(source);
}

}  // namespace cot::codegen
