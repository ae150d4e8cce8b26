#include "codegen/compiler.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

extern char** environ;

namespace cot::codegen {

namespace fs = std::filesystem;

std::vector<std::string> default_flags() {
  // -mno-avx512f: GCC 12.2's basic-block vectorizer miscompiles guarded stores with 64-byte
  // vectors (tests/codegen/compiler_test.cpp has the reproducer; docs/design.md).
  return {"-std=c++20",   "-O3",      "-march=native",
          "-mno-avx512f", "-fopenmp", "-ffp-contract=off",
          "-fPIC",        "-shared",  "-w"};
}

std::string default_cache_dir() {
  if (const char* d = std::getenv("COTANGENT_CACHE_DIR"); d != nullptr && *d != 0) return d;
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != 0) {
    return (fs::path(x) / "cotangent").string();
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != 0) {
    return (fs::path(h) / ".cache" / "cotangent").string();
  }
  return (fs::temp_directory_path() / ("cotangent-" + std::to_string(getuid()))).string();
}

SharedObject::~SharedObject() {
  if (handle_ != nullptr) dlclose(handle_);
}

void* SharedObject::symbol(const std::string& name) const {
  return dlsym(handle_, name.c_str());
}

namespace {

std::string default_compiler() {
  if (const char* c = std::getenv("COTANGENT_CXX"); c != nullptr && *c != 0) return c;
  if (const char* c = std::getenv("CXX"); c != nullptr && *c != 0) return c;
  return "c++";
}

// Runs argv; stdout and stderr go to `log`. Returns the exit status (-1 if it could not run).
int run(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// A fresh suffix for temporary files: process id and random bits.
std::string unique_suffix() {
  std::random_device rd;
  std::ostringstream s;
  s << getpid() << "-" << std::hex << rd() << rd();
  return s.str();
}

// The compiler's `--version` text (part of the cache key).
std::string compiler_version(const std::string& compiler, const std::string& dir) {
  const std::string log = (fs::path(dir) / ("version-" + unique_suffix() + ".txt")).string();
  std::string v;
  if (run({compiler, "--version"}, log) == 0) v = read_file(log);
  std::error_code ec;
  fs::remove(log, ec);
  return v;
}

uint64_t fnv1a(const std::string& s, uint64_t h) {
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

}  // namespace

std::string cache_key(const std::string& source, const std::string& compiler,
                      const std::vector<std::string>& flags, const std::string& version) {
  std::string all = compiler + "\n" + version + "\n";
  for (const std::string& f : flags) all += f + "\n";
  all += source;
  // Two 64-bit FNV-1a hashes with different offsets: 128 bits name the entry.
  char buf[40];
  std::snprintf(buf, sizeof buf, "%016llx%016llx",
                static_cast<unsigned long long>(fnv1a(all, 0xcbf29ce484222325ULL)),
                static_cast<unsigned long long>(fnv1a(all, 0x84222325cbf29ce4ULL)));
  return buf;
}

std::variant<CompileResult, std::string> compile_and_load(const std::string& source,
                                                          const CompilerOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const std::string compiler = options.compiler.empty() ? default_compiler() : options.compiler;
  const std::vector<std::string> flags = options.flags.empty() ? default_flags() : options.flags;
  const std::string dir = options.cache_dir.empty() ? default_cache_dir() : options.cache_dir;
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir)) {
    return "cannot create the compile cache directory " + dir + ": " + ec.message() +
           " (set COTANGENT_CACHE_DIR to a writable directory)";
  }
  CompileResult result;
  result.key = cache_key(source, compiler, flags, compiler_version(compiler, dir));
  const std::string so = (fs::path(dir) / (result.key + ".so")).string();
  if (!fs::exists(so)) {
    const std::string tmp = (fs::path(dir) / (result.key + "." + unique_suffix())).string();
    {
      std::ofstream out(tmp + ".cpp", std::ios::binary);
      out << source;
      if (!out) return "cannot write the generated source " + tmp + ".cpp";
    }
    std::vector<std::string> argv{compiler};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {tmp + ".cpp", "-o", tmp + ".so"});
    const int rc = run(argv, tmp + ".log");
    if (rc != 0) {
      std::string log = read_file(tmp + ".log");
      if (log.size() > 4000) log = log.substr(0, 4000) + "\n...";
      fs::remove(tmp + ".so", ec);
      return "the C++ compiler (" + compiler + ") failed on the generated code " + tmp +
             ".cpp (exit " + std::to_string(rc) + "):\n" + log;
    }
    fs::remove(tmp + ".log", ec);
    // Publish atomically; keep the source beside the object for reading.
    fs::rename(tmp + ".cpp", (fs::path(dir) / (result.key + ".cpp")).string(), ec);
    fs::rename(tmp + ".so", so, ec);
    if (ec) return "cannot move the compiled code into the cache at " + so + ": " + ec.message();
  } else {
    result.cache_hit = true;
  }
  // Never unloaded (RTLD_NODELETE): OpenMP worker threads the code started may still sit in
  // the runtime it pulled in after the last call returns.
  void* handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* why = dlerror();
    return "cannot load the compiled code " + so + ": " + (why ? why : "unknown error");
  }
  result.object = std::make_shared<SharedObject>(handle, so);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace cot::codegen
