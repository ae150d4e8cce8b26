// The C++ API of native code (issue 5 item 6): Module::compile once, then call many times on
// values or, without copies, on the caller's memory; the views are checked; run-time errors
// carry source positions; the native backend through EvalOptions.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

const char* const kSource = R"(
def sumsq(x: f64[n]) -> f64 {
  sum i. x[i] * x[i]
}
def scale(x: f64[n], a: f64) -> f64[n] {
  for i. a * x[i]
}
def pick(x: f64[n], i: i64) -> f64 {
  x[i]
}
def split(x: f64[n]) -> (f64, (f64[n], i64)) {
  (sum i. x[i], (for i. 2.0 * x[i], n))
}
)";

Value vec(const std::vector<double>& xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}

Module load() {
  auto m = Module::from_string(kSource, "api.cot");
  EXPECT_TRUE(m.ok()) << m.message();
  return std::move(m).value();
}

TEST(CompiledFunction, compiles_once_and_calls_many_times_on_values) {
  Module m = load();
  auto c = m.compile({{"sumsq", std::nullopt, {}, {vec({1, 2, 3})}},
                      {"sumsq", DerivativeKind::Grad, {}, {vec({1, 2, 3})}}});
  ASSERT_TRUE(c.ok()) << c.message();
  ASSERT_EQ(c.value().size(), 2u);
  for (double t = 0; t < 5; t += 1) {
    auto v = c.value()[0].call({vec({t, t + 1, t + 2})});
    ASSERT_TRUE(v.ok()) << v.message();
    EXPECT_EQ(v.value().as_f64(), t * t + (t + 1) * (t + 1) + (t + 2) * (t + 2));
    auto g = c.value()[1].call({vec({t, 2 * t, 3})});
    ASSERT_TRUE(g.ok()) << g.message();
    const auto grad = g.value().f64_data();
    EXPECT_EQ(grad[0], 2 * t);
    EXPECT_EQ(grad[1], 4 * t);
    EXPECT_EQ(grad[2], 6.0);
  }
  EXPECT_FALSE(c.value()[0].source().empty());
}

TEST(CompiledFunction, calls_on_the_callers_memory_without_copies) {
  Module m = load();
  auto c = m.compile({{"scale", std::nullopt, {}, {vec({1, 2, 3, 4}), Value::f64(2)}}});
  ASSERT_TRUE(c.ok()) << c.message();
  const CompiledFunction& f = c.value()[0];
  ASSERT_EQ(f.input_leaves().size(), 2u);
  EXPECT_EQ(f.input_leaves()[0].shape, (std::vector<int64_t>{4}));
  EXPECT_TRUE(f.input_leaves()[1].shape.empty());
  ASSERT_EQ(f.result_leaves().size(), 1u);
  std::vector<double> x = {1, 2, 3, 4}, out(4, -1.0);
  double a = 0.5;
  for (int k = 0; k < 3; ++k) {
    x[0] = k;
    auto r = f.call({{DType::F64, {4}, x.data()}, {DType::F64, {}, &a}},
                    {{DType::F64, {4}, out.data()}});
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(out[0], 0.5 * k);
    EXPECT_EQ(out[3], 2.0);
  }
}

TEST(CompiledFunction, zero_result_is_memory_of_the_result_shape_to_run_into) {
  Module m = load();
  auto c = m.compile({{"split", std::nullopt, {}, {vec({1, 2, 3})}}});
  ASSERT_TRUE(c.ok()) << c.message();
  const CompiledFunction& f = c.value()[0];
  Value r = f.zero_result();
  // The function's tuple structure, its leaves of the compiled dtypes and shapes, all zero.
  ASSERT_TRUE(r.is_tuple());
  ASSERT_EQ(r.elems().size(), 2u);
  EXPECT_EQ(r.type_string(), "(f64, (f64[3], i64))");
  EXPECT_EQ(r.elems()[0].as_f64(), 0.0);
  for (double e : r.elems()[1].elems()[0].f64_data()) EXPECT_EQ(e, 0.0);
  // Its tensors are fresh storage: a call through views writes them.
  Value sum = r.elems()[0], twice = r.elems()[1].elems()[0], count = r.elems()[1].elems()[1];
  std::vector<double> x = {1, 2, 3};
  auto ok = f.call({{DType::F64, {3}, x.data()}}, {{DType::F64, {}, sum.raw_mut()},
                                                   {DType::F64, {3}, twice.raw_mut()},
                                                   {DType::I64, {}, count.raw_mut()}});
  ASSERT_TRUE(ok.ok()) << ok.message();
  EXPECT_EQ(sum.as_f64(), 6.0);
  EXPECT_EQ(count.as_i64(), 3);
  const auto written = r.elems()[1].elems()[0].f64_data();  // shared with `twice`
  EXPECT_EQ(std::vector<double>(written.begin(), written.end()), (std::vector<double>{2, 4, 6}));
  // Scalars live inside their Value: the copies hold them, and the result is rebuilt from them.
  EXPECT_EQ(r.elems()[0].as_f64(), 0.0);
  const Value result = Value::tuple({sum, Value::tuple({twice, count})});
  EXPECT_EQ(result.elems()[0].as_f64(), 6.0);
  EXPECT_EQ(result.elems()[1].elems()[0].f64_data()[2], 6.0);
  // Each call gives fresh memory.
  EXPECT_EQ(f.zero_result().elems()[1].elems()[0].f64_data()[0], 0.0);
}

TEST(CompiledFunction, views_of_other_shapes_or_counts_are_errors) {
  Module m = load();
  auto c = m.compile({{"scale", std::nullopt, {}, {vec({1, 2, 3, 4}), Value::f64(2)}}});
  ASSERT_TRUE(c.ok()) << c.message();
  const CompiledFunction& f = c.value()[0];
  std::vector<double> x(5), out(5);
  double a = 1;
  auto wrong =
      f.call({{DType::F64, {5}, x.data()}, {DType::F64, {}, &a}}, {{DType::F64, {5}, out.data()}});
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.message().find("f64[5] where the function was compiled for f64[4]"),
            std::string::npos)
      << wrong.message();
  auto few = f.call({{DType::F64, {4}, x.data()}}, {{DType::F64, {4}, out.data()}});
  ASSERT_FALSE(few.ok());
  EXPECT_NE(few.message().find("takes 2 argument views"), std::string::npos) << few.message();
  auto null =
      f.call({{DType::F64, {4}, nullptr}, {DType::F64, {}, &a}}, {{DType::F64, {4}, out.data()}});
  ASSERT_FALSE(null.ok());
  EXPECT_NE(null.message().find("null data pointer"), std::string::npos) << null.message();
  auto values = f.call({vec({1, 2}), Value::f64(1)});
  ASSERT_FALSE(values.ok());
  EXPECT_NE(values.message().find("compiled for f64[4]"), std::string::npos);
}

TEST(CompiledFunction, run_time_errors_have_positions_and_the_interpreters_words) {
  Module m = load();
  auto c = m.compile({{"pick", std::nullopt, {}, {vec({1, 2, 3}), Value::i64(0)}}});
  ASSERT_TRUE(c.ok()) << c.message();
  auto ok = c.value()[0].call({vec({1, 2, 3}), Value::i64(2)});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok.value().as_f64(), 3.0);
  auto bad = c.value()[0].call({vec({1, 2, 3}), Value::i64(7)});
  ASSERT_FALSE(bad.ok());
  auto interp = m.evaluate("pick", {vec({1, 2, 3}), Value::i64(7)});
  ASSERT_FALSE(interp.ok());
  EXPECT_EQ(bad.message(), interp.message());
  EXPECT_EQ(bad.errors()[0].line, 9);
  EXPECT_EQ(bad.errors()[0].file, "api.cot");
}

TEST(CompiledFunction, compile_errors_name_the_function_or_the_argument) {
  Module m = load();
  auto none = m.compile({{"nothing", std::nullopt, {}, {}}});
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.message().find("no function named `nothing`"), std::string::npos);
  auto args = m.compile({{"sumsq", std::nullopt, {}, {Value::f64(1)}}});
  ASSERT_FALSE(args.ok());
  EXPECT_NE(args.message().find("parameter x expects f64[n]"), std::string::npos) << args.message();
}

TEST(CompiledFunction, evaluate_and_value_and_grad_run_natively_when_asked) {
  Module m = load();
  EvalOptions native;
  native.backend = Backend::Native;
  native.threads = 1;
  auto v = m.evaluate("sumsq", {vec({1, 2})}, native);
  ASSERT_TRUE(v.ok()) << v.message();
  EXPECT_EQ(v.value().as_f64(), 5.0);
  auto g = m.value_and_grad("sumsq", {vec({1, 2})}, {}, native);
  ASSERT_TRUE(g.ok()) << g.message();
  EXPECT_EQ(g.value().value.as_f64(), 5.0);
  EXPECT_EQ(g.value().grad[0].value.f64_data()[1], 4.0);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
