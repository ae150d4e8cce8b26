// Compiling and loading generated code: the on-disk cache (hits, keys), concurrent compiles of
// one function by two processes, compiler failures as errors, and a GCC 12 miscompile the
// default flags avoid.
#include "codegen/compiler.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <variant>

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
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string str() const { return path_.string(); }

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
  ASSERT_TRUE(std::holds_alternative<CompileResult>(r)) << std::get<std::string>(r);
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
  ASSERT_TRUE(std::holds_alternative<CompileResult>(first)) << std::get<std::string>(first);
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
      if (auto* e = std::get_if<std::string>(&r)) {
        errors[k] = *e;
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
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  const std::string& e = std::get<std::string>(r);
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
  ASSERT_TRUE(std::holds_alternative<std::string>(r));
  EXPECT_NE(std::get<std::string>(r).find("COTANGENT_CACHE_DIR"), std::string::npos);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::codegen
