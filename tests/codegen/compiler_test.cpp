// Compiling and loading generated code: the on-disk cache (hits, keys), concurrent compiles of
// one function by two processes, compiler failures as errors, and a GCC 12 miscompile the
// default flags avoid. Then the cache's trust model and repairs (docs/design.md §10, the
// compile cache): no directory or object another user could have written is loaded, a damaged
// entry is rebuilt, temporaries of failed and killed compiles are removed, the key covers the
// include-path variables and what -march=native resolves to, and a cache that cannot be
// written is an error with the OS's reason (the red team's breaks 4, 5, 6 and 11, issue 25).
#include "codegen/compiler.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "codegen/cache_dir.h"

#ifndef COTANGENT_BINARY
#define COTANGENT_BINARY "cotangent"
#endif

namespace cot::codegen {
namespace COTANGENT_TEST_UNIT {

namespace fs = std::filesystem;

// A fresh, empty directory for one test, removed when the test ends.
class TempDir {
 public:
  explicit TempDir(const std::string& name)
      : path_(fs::temp_directory_path() /
              ("cotangent-test-" + name + "-" + std::to_string(getpid()))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
    // The cache refuses a directory others can write (docs/design.md §10), whatever the umask.
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::replace);
  }
  ~TempDir() {
    std::error_code ec;
    fs::permissions(path_, fs::perms::owner_all, fs::perm_options::replace, ec);
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// GCC 12.2 with -march=native on an AVX-512 machine stores 0.25 at out[3] (basic-block
// vectorization with 64-byte vectors); the default flags must compute 0.
const char* const kGuardedStores = R"(
#include <cstdint>
#include <cstring>
extern "C" void guarded(double* out) {
  double buf[8];
  double c = 1.0 / 4.0;
  for (int64_t j = 0; j < 4; ++j) {
    double a = 0.0;
    if (2 - j >= 0) {
      double b = 0.0;
      if (1 + j > 0) b = c;
      a = b;
    }
    buf[j] = a;
  }
  std::memcpy(out, buf, 32);
}
)";

TEST(NativeCompiler, default_flags_compile_guarded_stores_correctly) {
  TempDir dir("guarded");
  CompilerOptions o;
  o.cache_dir = dir.str();
  auto r = compile_and_load(kGuardedStores, o);
  ASSERT_TRUE(std::holds_alternative<CompileResult>(r)) << std::get<CompileError>(r).message;
  auto f =
      reinterpret_cast<void (*)(double*)>(std::get<CompileResult>(r).object->symbol("guarded"));
  ASSERT_NE(f, nullptr);
  double out[4] = {9, 9, 9, 9};
  f(out);
  EXPECT_EQ(out[0], 0.25);
  EXPECT_EQ(out[2], 0.25);
  EXPECT_EQ(out[3], 0.0);
}

const char* const kAnswer = R"(extern "C" int answer() { return 42; })";

TEST(NativeCompiler, second_compile_of_the_same_source_is_a_cache_hit) {
  TempDir dir("hit");
  CompilerOptions o;
  o.cache_dir = dir.str();
  auto first = compile_and_load(kAnswer, o);
  ASSERT_TRUE(std::holds_alternative<CompileResult>(first))
      << std::get<CompileError>(first).message;
  EXPECT_FALSE(std::get<CompileResult>(first).cache_hit);
  auto second = compile_and_load(kAnswer, o);
  ASSERT_TRUE(std::holds_alternative<CompileResult>(second));
  EXPECT_TRUE(std::get<CompileResult>(second).cache_hit);
  EXPECT_EQ(std::get<CompileResult>(first).key, std::get<CompileResult>(second).key);
  auto f = reinterpret_cast<int (*)()>(std::get<CompileResult>(second).object->symbol("answer"));
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f(), 42);
  // The object and its source are in the cache, under the key; no temporary file is left.
  int objects = 0, others = 0;
  for (const auto& e : fs::directory_iterator(o.cache_dir)) {
    const std::string n = e.path().filename().string();
    if (n == std::get<CompileResult>(first).key + ".so") {
      ++objects;
    } else if (n != std::get<CompileResult>(first).key + ".cpp") {
      ++others;
    }
  }
  EXPECT_EQ(objects, 1);
  EXPECT_EQ(others, 0);
}

TEST(NativeCompiler, key_depends_on_source_flags_compiler_and_version) {
  const std::string k = cache_key("a", "c++", {"-O3"}, "gcc 12");
  EXPECT_NE(k, cache_key("b", "c++", {"-O3"}, "gcc 12"));
  EXPECT_NE(k, cache_key("a", "c++", {"-O2"}, "gcc 12"));
  EXPECT_NE(k, cache_key("a", "clang++", {"-O3"}, "gcc 12"));
  EXPECT_NE(k, cache_key("a", "c++", {"-O3"}, "gcc 13"));
  EXPECT_EQ(k, cache_key("a", "c++", {"-O3"}, "gcc 12"));
  EXPECT_EQ(k.size(), 32u);
}

TEST(NativeCompiler, threads_compiling_the_same_source_at_once_all_succeed) {
  TempDir dir("threads");
  CompilerOptions o;
  o.cache_dir = dir.str();
  const std::string source = std::string(kAnswer) + "\n// threads\n";
  std::string errors[4];
  int answers[4] = {};
  std::vector<std::thread> ts;
  ts.reserve(4);
  for (int k = 0; k < 4; ++k) {
    ts.emplace_back([&, k] {
      auto r = compile_and_load(source, o);
      if (auto* e = std::get_if<CompileError>(&r)) {
        errors[k] = e->message;
        return;
      }
      auto f = reinterpret_cast<int (*)()>(std::get<CompileResult>(r).object->symbol("answer"));
      answers[k] = f != nullptr ? f() : -1;
    });
  }
  for (auto& t : ts) t.join();
  for (int k = 0; k < 4; ++k) {
    EXPECT_EQ(errors[k], "") << k;
    EXPECT_EQ(answers[k], 42) << k;
  }
}

// Two `cotangent run` processes compile the same function into one empty cache at once.
TEST(NativeCompiler, two_processes_compiling_one_function_both_succeed) {
  TempDir tmp("processes");
  const std::string dir = tmp.str();
  const std::string cot = (fs::path(dir) / "m.cot").string();
  const std::string in = (fs::path(dir) / "in.json").string();
  std::ofstream(cot) << "def f(x: f64[n]) -> f64 { sum i. x[i] * x[i] }\n";
  std::ofstream(in) << "{\"x\": [1, 2, 3]}\n";
  const std::string cmd = "COTANGENT_CACHE_DIR=" + dir + "/cache " + COTANGENT_BINARY + " run " +
                          cot + " f --input " + in + " --backend native";
  FILE* a = popen((cmd + " 2>&1").c_str(), "r");
  FILE* b = popen((cmd + " 2>&1").c_str(), "r");
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  auto drain = [](FILE* p) {
    std::string out;
    char buf[256];
    while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
    return out;
  };
  const std::string out_a = drain(a), out_b = drain(b);
  EXPECT_EQ(pclose(a), 0) << out_a;
  EXPECT_EQ(pclose(b), 0) << out_b;
  EXPECT_EQ(out_a, "{\"result\": 14}\n");
  EXPECT_EQ(out_b, "{\"result\": 14}\n");
}

TEST(NativeCompiler, a_compiler_failure_is_an_error_with_the_compiler_output) {
  TempDir dir("failure");
  CompilerOptions o;
  o.cache_dir = dir.str();
  auto r = compile_and_load("this is not C++", o);
  ASSERT_TRUE(std::holds_alternative<CompileError>(r));
  const std::string& e = std::get<CompileError>(r).message;
  EXPECT_NE(e.find("failed on the generated code"), std::string::npos) << e;
  EXPECT_NE(e.find("error"), std::string::npos) << e;
}

TEST(NativeCompiler, an_unusable_cache_directory_is_an_error) {
  TempDir dir("notadir");
  CompilerOptions o;
  const std::string file = dir.str() + "/file";
  std::ofstream(file) << "x";
  o.cache_dir = file + "/cache";
  auto r = compile_and_load(kAnswer, o);
  ASSERT_TRUE(std::holds_alternative<CompileError>(r));
  const CompileError& e = std::get<CompileError>(r);
  EXPECT_EQ(e.kind, CompileError::Kind::cache);
  EXPECT_NE(e.message.find("cannot create the compile cache directory " + o.cache_dir),
            std::string::npos)
      << e.message;
  EXPECT_NE(e.message.find("Not a directory"), std::string::npos) << e.message;
  EXPECT_NE(e.help.find("COTANGENT_CACHE_DIR"), std::string::npos) << e.help;
}

// Sets (or unsets, with nullopt) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

const char* const kImpostor = R"(extern "C" int answer() { return 7; })";

// Compiles and loads `source` into `dir` and calls its answer(): the result or the error.
// Each runs in a child process: a process that loaded `<key>.so` once gets that object back
// from `dlopen` by its name, so a second load in one process would not show what the cache
// did.
struct Answer {
  int value = -1;
  bool cache_hit = false;
  std::string key;
  std::optional<CompileError> error;
  bool crashed = false;
};

// `prepare` runs in the child first (to drop privileges or limit file sizes).
template <class Prepare>
Answer answer_of(const std::string& source, const std::string& dir, Prepare prepare) {
  int fds[2];
  Answer a;
  if (pipe(fds) != 0) {
    a.crashed = true;
    return a;
  }
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    prepare();
    CompilerOptions o;
    o.cache_dir = dir;
    auto r = compile_and_load(source, o);
    std::string out;
    if (auto* e = std::get_if<CompileError>(&r)) {
      out = "E" + std::to_string(static_cast<int>(e->kind)) + "\n" + e->message + "\x1f" + e->help;
    } else {
      const CompileResult& c = std::get<CompileResult>(r);
      auto f = reinterpret_cast<int (*)()>(c.object->symbol("answer"));
      out = "R" + std::to_string(f != nullptr ? f() : -1) + " " + (c.cache_hit ? "1" : "0") + " " +
            c.key;
    }
    const char* p = out.data();
    size_t left = out.size();
    while (left > 0) {
      const ssize_t n = write(fds[1], p, left);
      if (n <= 0) _exit(2);
      p += n;
      left -= static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string out;
  char buf[512];
  ssize_t n = 0;
  while ((n = read(fds[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || out.empty()) {
    a.crashed = true;
    a.error = CompileError{CompileError::Kind::internal, "the child crashed: " + out, ""};
    return a;
  }
  if (out[0] == 'E') {
    const size_t nl = out.find('\n'), sep = out.find('\x1f');
    a.error = CompileError{static_cast<CompileError::Kind>(std::stoi(out.substr(1, nl - 1))),
                           out.substr(nl + 1, sep - nl - 1), out.substr(sep + 1)};
    return a;
  }
  std::istringstream in(out.substr(1));
  int hit = 0;
  in >> a.value >> hit >> a.key;
  a.cache_hit = hit != 0;
  return a;
}

Answer answer_of(const std::string& source, const std::string& dir) {
  return answer_of(source, dir, [] {});
}

int file_mode(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 ? static_cast<int>(st.st_mode & 07777) : -1;
}

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// ---- break 4: the directory and the objects are trusted only if they are the user's ----

TEST(CompileCache, without_home_the_cache_is_never_in_the_shared_temporary_directory) {
  ScopedEnv a("COTANGENT_CACHE_DIR", std::nullopt), b("XDG_CACHE_HOME", std::nullopt),
      c("HOME", std::nullopt);
  const std::string dir = default_cache_dir();
  // The red team's reproduction: $TMPDIR/cotangent-<uid>, which anyone could create first.
  EXPECT_EQ(dir.find(fs::temp_directory_path().string()), std::string::npos) << dir;
  EXPECT_EQ(dir.find("/tmp"), std::string::npos) << dir;
  if (!dir.empty()) {
    EXPECT_EQ(dir.substr(dir.size() - 17), "/.cache/cotangent") << dir;
  }
}

TEST(CompileCache, a_relative_xdg_cache_home_is_ignored) {
  ScopedEnv a("COTANGENT_CACHE_DIR", std::nullopt), b("XDG_CACHE_HOME", "relative/cache"),
      c("HOME", "/home/someone");
  EXPECT_EQ(default_cache_dir(), "/home/someone/.cache/cotangent");
}

TEST(CompileCache, a_directory_writable_by_group_or_others_is_refused) {
  for (const int mode : {0770, 0707, 0777, 01777}) {
    TempDir dir("groupw");
    ASSERT_EQ(chmod(dir.str().c_str(), mode), 0);
    const Answer a = answer_of(kAnswer, dir.str());
    ASSERT_TRUE(a.error.has_value()) << std::oct << mode;
    EXPECT_EQ(a.error->kind, CompileError::Kind::cache);
    EXPECT_NE(a.error->message.find("is writable by group or others"), std::string::npos)
        << a.error->message;
    EXPECT_NE(a.error->message.find(dir.str()), std::string::npos) << a.error->message;
    EXPECT_NE(a.error->help.find("chmod go-w"), std::string::npos) << a.error->help;
    // Nothing was written into it.
    EXPECT_TRUE(names_in(dir.str()).empty()) << std::oct << mode;
  }
}

TEST(CompileCache, a_planted_object_in_a_world_writable_directory_is_never_loaded) {
  // The red team's attack: another user creates the directory first and plants an object
  // under the key. Here the directory is world-writable and holds the impostor under the
  // answer's key: the compile must refuse it rather than return 7.
  TempDir dir("planted");
  const Answer first = answer_of(kAnswer, dir.str());
  ASSERT_FALSE(first.error) << first.error->message;
  TempDir other("impostor");
  const Answer impostor = answer_of(kImpostor, other.str());
  ASSERT_FALSE(impostor.error) << impostor.error->message;
  fs::copy_file(other.file(impostor.key + ".so"), dir.file(first.key + ".so"),
                fs::copy_options::overwrite_existing);
  ASSERT_EQ(chmod(dir.str().c_str(), 0777), 0);
  const Answer a = answer_of(kAnswer, dir.str());
  ASSERT_TRUE(a.error.has_value());
  EXPECT_NE(a.error->message.find("writable by group or others"), std::string::npos);
  EXPECT_EQ(a.value, -1);
}

TEST(CompileCache, a_directory_of_another_user_is_refused) {
  // As root, a directory given to nobody; otherwise "/", which belongs to root.
  TempDir dir("owner");
  std::string path = "/";
  if (geteuid() == 0) {
    ASSERT_EQ(chown(dir.str().c_str(), 65534, 65534), 0);
    path = dir.str();
  }
  const Answer a = answer_of(kAnswer, path);
  ASSERT_TRUE(a.error.has_value());
  EXPECT_EQ(a.error->kind, CompileError::Kind::cache);
  EXPECT_NE(a.error->message.find("belongs to uid"), std::string::npos) << a.error->message;
  EXPECT_NE(a.error->message.find("not to you"), std::string::npos) << a.error->message;
  EXPECT_NE(a.error->help.find("COTANGENT_CACHE_DIR"), std::string::npos);
}

TEST(CompileCache, a_created_directory_is_private) {
  TempDir dir("created");
  const std::string cache = dir.file("a/b/cache");
  const mode_t old = umask(0);  // the mode must not depend on the umask
  const Answer a = answer_of(kAnswer, cache);
  umask(old);
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_EQ(a.value, 42);
  EXPECT_EQ(file_mode(cache), 0700);
  EXPECT_EQ(file_mode(dir.file("a/b")), 0700);
  EXPECT_EQ(file_mode(cache + "/" + a.key + ".so"), 0600);
  EXPECT_EQ(file_mode(cache + "/" + a.key + ".cpp"), 0600);
}

TEST(CompileCache, an_object_writable_by_others_is_not_loaded_but_rebuilt) {
  TempDir dir("objmode");
  const Answer first = answer_of(kAnswer, dir.str());
  ASSERT_FALSE(first.error) << first.error->message;
  TempDir other("objmode-impostor");
  const Answer impostor = answer_of(kImpostor, other.str());
  ASSERT_FALSE(impostor.error) << impostor.error->message;
  // Someone who could write the object replaced it: it is refused and rebuilt.
  const std::string so = dir.file(first.key + ".so");
  fs::copy_file(other.file(impostor.key + ".so"), so, fs::copy_options::overwrite_existing);
  ASSERT_EQ(chmod(so.c_str(), 0666), 0);
  const Answer a = answer_of(kAnswer, dir.str());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_FALSE(a.cache_hit);
  EXPECT_EQ(a.value, 42);
  EXPECT_EQ(file_mode(so), 0600);
  const Answer again = answer_of(kAnswer, dir.str());
  EXPECT_TRUE(again.cache_hit);
  EXPECT_EQ(again.value, 42);
}

TEST(CompileCache, an_object_of_another_user_is_not_loaded_but_rebuilt) {
  if (geteuid() != 0) GTEST_SKIP() << "giving a file to another user needs root";
  TempDir dir("objowner");
  const Answer first = answer_of(kAnswer, dir.str());
  ASSERT_FALSE(first.error) << first.error->message;
  TempDir other("objowner-impostor");
  const Answer impostor = answer_of(kImpostor, other.str());
  ASSERT_FALSE(impostor.error) << impostor.error->message;
  const std::string so = dir.file(first.key + ".so");
  fs::copy_file(other.file(impostor.key + ".so"), so, fs::copy_options::overwrite_existing);
  ASSERT_EQ(chown(so.c_str(), 65534, 65534), 0);
  ASSERT_EQ(chmod(so.c_str(), 0644), 0);
  const Answer a = answer_of(kAnswer, dir.str());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_FALSE(a.cache_hit);
  EXPECT_EQ(a.value, 42);
}

TEST(CompileCache, a_symbolic_link_in_place_of_an_object_is_not_followed) {
  TempDir dir("symlink");
  const Answer first = answer_of(kAnswer, dir.str());
  ASSERT_FALSE(first.error) << first.error->message;
  TempDir other("symlink-impostor");
  const Answer impostor = answer_of(kImpostor, other.str());
  ASSERT_FALSE(impostor.error) << impostor.error->message;
  const std::string so = dir.file(first.key + ".so");
  fs::remove(so);
  fs::create_symlink(other.file(impostor.key + ".so"), so);
  const Answer a = answer_of(kAnswer, dir.str());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_FALSE(a.cache_hit);
  EXPECT_EQ(a.value, 42);
  EXPECT_FALSE(fs::is_symlink(so));
}

// ---- break 5: a damaged entry is rebuilt; temporaries are removed ----

TEST(CompileCache, a_truncated_or_garbage_object_is_rebuilt) {
  TempDir dir("damaged");
  const Answer first = answer_of(kAnswer, dir.str());
  ASSERT_FALSE(first.error) << first.error->message;
  const std::string so = dir.file(first.key + ".so");
  const auto full = fs::file_size(so);
  // Cut at half, at the last byte, inside the header, to nothing; and not ELF at all.
  for (const std::uintmax_t size : {full / 2, full - 1, std::uintmax_t{10}, std::uintmax_t{0}}) {
    fs::resize_file(so, size);
    const Answer a = answer_of(kAnswer, dir.str());
    ASSERT_FALSE(a.error) << size << ": " << a.error->message;
    EXPECT_FALSE(a.cache_hit) << size;
    EXPECT_EQ(a.value, 42) << size;
    EXPECT_EQ(fs::file_size(so), full) << size;
    const Answer again = answer_of(kAnswer, dir.str());
    EXPECT_TRUE(again.cache_hit) << size;
    EXPECT_EQ(again.value, 42) << size;
  }
  std::ofstream(so, std::ios::trunc) << "#!/bin/sh\necho not an object\n";
  const Answer a = answer_of(kAnswer, dir.str());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_FALSE(a.cache_hit);
  EXPECT_EQ(a.value, 42);
}

TEST(CompileCache, a_failed_compile_leaves_only_the_source_for_reading) {
  TempDir dir("failed");
  CompilerOptions o;
  o.cache_dir = dir.str();
  auto r = compile_and_load("this is not C++", o);
  ASSERT_TRUE(std::holds_alternative<CompileError>(r));
  const CompileError& e = std::get<CompileError>(r);
  EXPECT_EQ(e.kind, CompileError::Kind::internal);
  const std::vector<std::string> names = names_in(dir.str());
  ASSERT_EQ(names.size(), 1u);
  EXPECT_EQ(names[0].size(), 36u);
  EXPECT_EQ(names[0].substr(32), ".cpp");
  EXPECT_NE(e.message.find(dir.file(names[0])), std::string::npos) << e.message;
  // A second failure of the same source leaves no more.
  compile_and_load("this is not C++", o);
  EXPECT_EQ(names_in(dir.str()).size(), 1u);
}

TEST(CompileCache, temporaries_are_recognized) {
  const std::string key = "0123456789abcdef0123456789abcdef";
  EXPECT_TRUE(is_cache_temporary(key + ".tmp-123-9f3a.cpp"));
  EXPECT_TRUE(is_cache_temporary(key + ".tmp-123-9f3a.so"));
  EXPECT_TRUE(is_cache_temporary(key + ".4567-abc.log"));  // an older version's
  EXPECT_TRUE(is_cache_temporary(key + ".4567-abc.cpp"));
  EXPECT_TRUE(is_cache_temporary("version-4567-abc.txt"));
  EXPECT_FALSE(is_cache_temporary(key + ".so"));
  EXPECT_FALSE(is_cache_temporary(key + ".cpp"));
  EXPECT_FALSE(is_cache_temporary("notes.txt"));
  EXPECT_FALSE(is_cache_temporary("0123456789ABCDEF0123456789abcdef.tmp-1-a.so"));
}

TEST(CompileCache, stale_temporaries_of_killed_compiles_are_swept) {
  TempDir dir("sweep");
  const std::string key = "0123456789abcdef0123456789abcdef";
  const std::vector<std::string> stale{key + ".tmp-123-9f3a.cpp", key + ".tmp-123-9f3a.so",
                                       key + ".4567-abc.log", "version-4567-abc.txt"};
  const std::string fresh = key + ".tmp-999-beef.cpp";
  for (const std::string& n : stale) std::ofstream(dir.file(n)) << "x";
  std::ofstream(dir.file(fresh)) << "x";
  std::ofstream(dir.file("notes.txt")) << "x";
  const auto two_hours_ago = fs::file_time_type::clock::now() - std::chrono::hours(2);
  for (const std::string& n : stale) fs::last_write_time(dir.file(n), two_hours_ago);
  fs::last_write_time(dir.file("notes.txt"), two_hours_ago);
  // A compile that misses the cache sweeps.
  const Answer a = answer_of(kAnswer, dir.str());
  ASSERT_FALSE(a.error) << a.error->message;
  for (const std::string& n : stale) EXPECT_FALSE(fs::exists(dir.file(n))) << n;
  EXPECT_TRUE(fs::exists(dir.file(fresh)));
  EXPECT_TRUE(fs::exists(dir.file("notes.txt")));
}

// ---- break 6: the key covers what changes the object ----

TEST(CompileCache, the_identity_changes_with_the_include_path_variables) {
  const std::string plain = Compiler().identity();
  for (const char* name : {"CPATH", "CPLUS_INCLUDE_PATH", "C_INCLUDE_PATH"}) {
    ScopedEnv set(name, "/somewhere/include");
    const std::string with = Compiler().identity();
    EXPECT_NE(with, plain) << name;
    EXPECT_NE(with.find(std::string(name) + "=/somewhere/include"), std::string::npos) << name;
  }
  EXPECT_EQ(Compiler().identity(), plain);
}

TEST(CompileCache, the_identity_resolves_march_native_to_this_host) {
  const std::string id = Compiler().identity();
  // GCC's compiler proper gets -march=<cpu>, clang's -target-cpu <cpu>.
  const size_t gcc = id.find("\"-march=");
  const bool resolved =
      (gcc != std::string::npos && id.compare(gcc, 15, "\"-march=native\"") != 0) ||
      id.find("-target-cpu") != std::string::npos;
  EXPECT_TRUE(resolved) << id;
}

TEST(CompileCache, a_header_shadowed_through_cpath_does_not_stay_in_the_cache) {
  // The red team's reproduction: a <cmath> on CPATH changed exp, and the cached object kept
  // the change after the variable was gone.
  TempDir dir("cpath");
  TempDir headers("cpath-headers");
  std::ofstream(headers.file("cmath"))
      << "#pragma once\nnamespace std { inline double exp(double) { return 42.0; } }\n";
  const std::string source =
      "#include <cmath>\nextern \"C\" int answer() { return static_cast<int>(std::exp(0.0)); }\n";
  {
    ScopedEnv set("CPATH", headers.str());
    const Answer shadowed = answer_of(source, dir.str());
    ASSERT_FALSE(shadowed.error) << shadowed.error->message;
    EXPECT_EQ(shadowed.value, 42);
  }
  const Answer a = answer_of(source, dir.str());
  ASSERT_FALSE(a.error) << a.error->message;
  EXPECT_FALSE(a.cache_hit);
  EXPECT_EQ(a.value, 1);
}

// ---- break 11: an unwritable or full cache is an error with the OS's reason ----

TEST(CompileCache, an_unwritable_cache_is_an_error_with_the_reason) {
  TempDir dir("unwritable");
  const bool root = geteuid() == 0;
  // Root writes anywhere: the child becomes nobody, who owns the directory but cannot write it.
  if (root) {
    ASSERT_EQ(chown(dir.str().c_str(), 65534, 65534), 0);
  }
  ASSERT_EQ(chmod(dir.str().c_str(), 0500), 0);
  const Answer a = answer_of(kAnswer, dir.str(), [&] {
    if (root && (setgid(65534) != 0 || setuid(65534) != 0)) _exit(3);
  });
  ASSERT_TRUE(a.error.has_value());
  const std::string& e = a.error->message;
  EXPECT_EQ(a.error->kind, CompileError::Kind::cache) << e;
  EXPECT_EQ(e.rfind("cannot create", 0), 0u) << e;
  EXPECT_NE(e.find("in the compile cache " + dir.str()), std::string::npos) << e;
  EXPECT_NE(e.find("Permission denied"), std::string::npos) << e;
  EXPECT_NE(a.error->help.find("COTANGENT_CACHE_DIR"), std::string::npos) << a.error->help;
}

TEST(CompileCache, a_cache_that_cannot_take_the_source_is_an_error_with_the_reason) {
  // A file-size limit stands in for a full disk: the write fails with EFBIG instead of ENOSPC.
  TempDir dir("full");
  const Answer a = answer_of(kAnswer, dir.str(), [] {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{16, 16};
    setrlimit(RLIMIT_FSIZE, &limit);
  });
  ASSERT_TRUE(a.error.has_value());
  const std::string& e = a.error->message;
  EXPECT_EQ(a.error->kind, CompileError::Kind::cache) << e;
  EXPECT_EQ(e.rfind("cannot write", 0), 0u) << e;
  EXPECT_NE(e.find(dir.str()), std::string::npos) << e;
  EXPECT_NE(e.find("File too large"), std::string::npos) << e;
  // The partial source was removed.
  EXPECT_TRUE(names_in(dir.str()).empty());
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::codegen
