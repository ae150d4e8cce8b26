// The compile cache by request (codegen/manifest.h, docs/design.md §10): a module loaded again
// from the same text finds what it compiled before for the same shapes, without preparing,
// deriving or generating code, and runs it to the same values and the same errors; other
// text, shapes or a damaged manifest compile again.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

namespace fs = std::filesystem;

const char* const kSource = R"(
def loss(x: f64[n], w: f64[n]) -> f64 {
  sum i. w[i] * x[i] * x[i]
}
def pick(x: f64[n], i: i64) -> f64 {
  x[i]
}
)";

Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}

// The elements of f's result on `args` (a scalar's one).
std::vector<double> run(const CompiledFunction& f, const std::vector<Value>& args) {
  auto r = f.call(args);
  EXPECT_TRUE(r.ok()) << r.message();
  if (!r.ok()) return {};
  if (r.value().shape().empty()) return {r.value().as_f64()};
  const auto d = r.value().f64_data();
  return {d.begin(), d.end()};
}

Module load(const std::string& text = kSource) {
  auto m = Module::from_string(text, "cached.cot");
  EXPECT_TRUE(m.ok()) << m.message();
  return std::move(m).value();
}

class CompiledByRequest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "cot-by-request-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    options_.cache_dir = dir_;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::vector<CompiledFunction> compile(const Module& m, const std::vector<CompileRequest>& r) {
    auto c = m.compile(r, options_);
    EXPECT_TRUE(c.ok()) << c.message();
    return c.ok() ? std::move(c).value() : std::vector<CompiledFunction>{};
  }
  std::vector<fs::path> manifests() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(dir_)) {
      if (e.path().extension() == ".json") out.push_back(e.path());
    }
    return out;
  }

  std::string dir_;
  CompileOptions options_;
};

std::vector<CompileRequest> loss_and_gradient(size_t n) {
  std::vector<double> ones(n, 1.0);
  return {{"loss", std::nullopt, {}, {vec(ones), vec(ones)}},
          {"loss", DerivativeKind::Grad, {"x"}, {vec(ones), vec(ones)}}};
}

TEST_F(CompiledByRequest, a_new_module_of_the_same_text_finds_what_was_compiled) {
  auto first = compile(load(), loss_and_gradient(3));
  ASSERT_EQ(first.size(), 2u);
  EXPECT_FALSE(first[0].found_by_request());
  EXPECT_EQ(manifests().size(), 1u);
  auto again = compile(load(), loss_and_gradient(3));
  ASSERT_EQ(again.size(), 2u);
  for (const CompiledFunction& f : again) {
    EXPECT_TRUE(f.found_by_request());
    EXPECT_TRUE(f.cache_hit());
    EXPECT_EQ(f.source(), first[0].source());
  }
  const Value x = vec({1, -2, 3}), w = vec({0.5, 2, -1});
  for (size_t k = 0; k < 2; ++k) EXPECT_EQ(run(first[k], {x, w}), run(again[k], {x, w}));
  // loss = 0.5 + 8 - 9, its gradient 2 w x.
  EXPECT_EQ(run(again[0], {x, w}), (std::vector<double>{0.5 * 1 + 2 * 4 - 9}));
  EXPECT_EQ(run(again[1], {x, w}), (std::vector<double>{1, -8, -6}));
  EXPECT_EQ(again[1].input_leaves().size(), 2u);
  EXPECT_EQ(again[1].result_leaves()[0].shape, (std::vector<int64_t>{3}));
}

TEST_F(CompiledByRequest, other_shapes_or_text_compile_again) {
  compile(load(), loss_and_gradient(3));
  auto longer = compile(load(), loss_and_gradient(4));
  ASSERT_EQ(longer.size(), 2u);
  EXPECT_FALSE(longer[0].found_by_request());
  EXPECT_EQ(run(longer[1], {vec({1, 1, 1, 2}), vec({1, 1, 1, 1})}),
            (std::vector<double>{2, 2, 2, 4}));
  auto edited = compile(load(std::string(kSource) + "# a comment\n"), loss_and_gradient(3));
  ASSERT_EQ(edited.size(), 2u);
  EXPECT_FALSE(edited[0].found_by_request());
  // Another derivative of the same function is another request.
  std::vector<double> ones(3, 1.0);
  auto wrt_w = compile(load(), {{"loss", DerivativeKind::Grad, {"w"}, {vec(ones), vec(ones)}}});
  ASSERT_EQ(wrt_w.size(), 1u);
  EXPECT_FALSE(wrt_w[0].found_by_request());
  EXPECT_EQ(run(wrt_w[0], {vec({1, 2, 3}), vec(ones)}), (std::vector<double>{1, 4, 9}));
  EXPECT_EQ(manifests().size(), 4u);
}

// Requests are written field by field with lengths: `wrt = {"x w"}` (no such parameter) is
// not `wrt = {"x", "w"}` compiled before (a review found the two keyed alike).
TEST_F(CompiledByRequest, requests_that_differ_never_read_alike) {
  std::vector<double> ones(3, 1.0);
  auto request = [&](std::vector<std::string> wrt) {
    return std::vector<CompileRequest>{
        {"loss", DerivativeKind::Grad, std::move(wrt), {vec(ones), vec(ones)}}};
  };
  EXPECT_FALSE(load().compile(request({"x w"}), options_).ok());
  ASSERT_EQ(compile(load(), request({"x", "w"})).size(), 1u);
  auto again = load().compile(request({"x w"}), options_);
  ASSERT_FALSE(again.ok());
  EXPECT_NE(again.message().find("x w"), std::string::npos) << again.message();
}

TEST_F(CompiledByRequest, run_time_errors_keep_their_positions_and_words) {
  const std::vector<CompileRequest> r = {{"pick", std::nullopt, {}, {vec({1, 2}), Value::i64(0)}}};
  auto first = compile(load(), r);
  auto again = compile(load(), r);
  ASSERT_EQ(again.size(), 1u);
  ASSERT_TRUE(again[0].found_by_request());
  auto a = first[0].call({vec({1, 2}), Value::i64(5)});
  auto b = again[0].call({vec({1, 2}), Value::i64(5)});
  ASSERT_FALSE(a.ok());
  ASSERT_FALSE(b.ok());
  EXPECT_EQ(b.message(), a.message());
  EXPECT_EQ(b.errors()[0].file, "cached.cot");
  EXPECT_EQ(b.errors()[0].line, 6);
}

TEST_F(CompiledByRequest, a_damaged_or_untrusted_manifest_is_compiled_again) {
  compile(load(), loss_and_gradient(3));
  ASSERT_EQ(manifests().size(), 1u);
  const fs::path manifest = manifests()[0];
  const Value x = vec({1, 2, 3}), w = vec({1, 1, 1});
  // Cut short: not JSON.
  fs::resize_file(manifest, fs::file_size(manifest) / 2);
  auto cut = compile(load(), loss_and_gradient(3));
  ASSERT_EQ(cut.size(), 2u);
  EXPECT_FALSE(cut[0].found_by_request());
  EXPECT_EQ(run(cut[1], {x, w}), (std::vector<double>{2, 4, 6}));
  // Rewritten by the compile, then found.
  EXPECT_TRUE(compile(load(), loss_and_gradient(3))[0].found_by_request());
  // JSON of another shape.
  { std::ofstream(manifest) << R"({"object": "00", "functions": [{"name": 3}]})"; }
  EXPECT_FALSE(compile(load(), loss_and_gradient(3))[0].found_by_request());
  EXPECT_TRUE(compile(load(), loss_and_gradient(3))[0].found_by_request());
  // Writable by others: not trusted.
  ASSERT_EQ(chmod(manifest.c_str(), 0666), 0);
  auto open = compile(load(), loss_and_gradient(3));
  ASSERT_EQ(open.size(), 2u);
  EXPECT_FALSE(open[0].found_by_request());
  EXPECT_EQ(run(open[0], {x, w}), (std::vector<double>{14}));
}

TEST_F(CompiledByRequest, a_manifest_whose_object_is_gone_is_compiled_again) {
  compile(load(), loss_and_gradient(3));
  for (const auto& e : fs::directory_iterator(dir_)) {
    if (e.path().extension() == ".so") fs::remove(e.path());
  }
  auto again = compile(load(), loss_and_gradient(3));
  ASSERT_EQ(again.size(), 2u);
  EXPECT_FALSE(again[0].found_by_request());
  EXPECT_EQ(run(again[1], {vec({1, 2, 3}), vec({1, 1, 1})}), (std::vector<double>{2, 4, 6}));
}

// Module::evaluate and value_and_grad on the native backend go through the same cache: a new
// module of the same text runs from it.
TEST_F(CompiledByRequest, evaluate_and_value_and_grad_use_it_natively) {
  const char* before = std::getenv("COTANGENT_CACHE_DIR");
  const std::string saved = before != nullptr ? before : "";
  ASSERT_EQ(setenv("COTANGENT_CACHE_DIR", dir_.c_str(), 1), 0);
  EvalOptions native;
  native.backend = Backend::Native;
  const Value x = vec({1, 2, 3}), w = vec({2, 0, 1});
  for (int round = 0; round < 2; ++round) {
    Module m = load();
    auto v = m.evaluate("loss", {x, w}, native);
    ASSERT_TRUE(v.ok()) << v.message();
    EXPECT_EQ(v.value().as_f64(), 2.0 + 9.0);
    auto vg = m.value_and_grad("loss", {x, w}, {"w"}, native);
    ASSERT_TRUE(vg.ok()) << vg.message();
    EXPECT_EQ(vg.value().value.as_f64(), 11.0);
    ASSERT_EQ(vg.value().grad.size(), 1u);
    EXPECT_EQ(vg.value().grad[0].name, "w");
    const auto g = vg.value().grad[0].value.f64_data();
    EXPECT_EQ(std::vector<double>(g.begin(), g.end()), (std::vector<double>{1, 4, 9}));
    // One entry per request, written by the first round and found by the second.
    EXPECT_EQ(manifests().size(), 2u);
  }
  // Errors are the interpreter's, positioned, from the cache too.
  for (int round = 0; round < 2; ++round) {
    auto bad = load().evaluate("pick", {vec({1, 2}), Value::i64(-1)}, native);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.errors()[0].line, 6);
  }
  if (before != nullptr) {
    setenv("COTANGENT_CACHE_DIR", saved.c_str(), 1);
  } else {
    unsetenv("COTANGENT_CACHE_DIR");
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
