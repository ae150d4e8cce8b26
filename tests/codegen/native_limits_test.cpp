// Tensors too large to build (issue 25, break 2): native code reports what the interpreter
// reports, at the same statement, with the same message, and never writes a result it could
// not allocate. The interpreter's tensor limit is lowered to a few elements here so that every
// way a shape can fail (over the limit, an element count that overflows, a generator's element
// shape, an accum's cells) is cheap to reach; one test keeps the red team's sizes.
#include <gtest/gtest.h>

#include <string>
#include <variant>
#include <vector>

#include "codegen/native.h"
#include "cotangent/cotangent.h"
#include "interp/interp_test_util.h"

namespace cot::interp::testing {
namespace COTANGENT_TEST_UNIT {

using ir::Builder;
using ir::IndexVar;
using ir::ReduceKind;

constexpr int64_t kSmallLimit = 10;

struct Call {
  std::string fn;
  std::vector<Value> args;
};

// Runs every call through the interpreter and through native code (compiled in one translation
// unit), both with tensors of at most `limit` elements: the same value, or the same error at the
// same span.
void expect_agreement(const ir::Program& p, const std::vector<Call>& calls, int64_t limit) {
  std::vector<codegen::NativeRequest> requests;
  for (const Call& c : calls) {
    auto sizes = bind_sizes(p, c.fn, c.args);
    ASSERT_TRUE(std::holds_alternative<std::vector<int64_t>>(sizes)) << c.fn;
    requests.push_back({&p, c.fn, std::get<std::vector<int64_t>>(sizes)});
  }
  codegen::NativeOptions native;
  native.max_tensor_elements = limit;
  native.threads = 1;
  auto compiled = codegen::compile_native(requests, native);
  ASSERT_TRUE(std::holds_alternative<std::vector<codegen::NativeFunction>>(compiled))
      << std::get<Diagnostic>(compiled).message;
  Options options;
  options.max_tensor_elements = limit;
  for (size_t k = 0; k < calls.size(); ++k) {
    Outcome want = run(p, calls[k].fn, calls[k].args, options);
    auto got =
        std::get<std::vector<codegen::NativeFunction>>(compiled)[k].call(calls[k].args, native);
    if (!want.ok()) {
      ASSERT_TRUE(std::holds_alternative<Diagnostic>(got))
          << calls[k].fn << ": native code succeeded where the interpreter failed with "
          << std::get<Diagnostic>(want.result).message;
      const Diagnostic& w = std::get<Diagnostic>(want.result);
      const Diagnostic& g = std::get<Diagnostic>(got);
      EXPECT_EQ(g.message, w.message) << calls[k].fn;
      EXPECT_TRUE(same_span(g.span, w.span)) << calls[k].fn << ": " << g.message;
      continue;
    }
    ASSERT_TRUE(std::holds_alternative<Value>(got))
        << calls[k].fn << ": native code failed: " << std::get<Diagnostic>(got).message;
    EXPECT_EQ(std::get<Value>(got).type_string(), want.value().type_string()) << calls[k].fn;
    EXPECT_EQ(elems(std::get<Value>(got)), elems(want.value())) << calls[k].fn;
  }
}

// for i: n, j: n. x[i]  at span(s).
VarId square(Builder& b, VarId x, uint32_t s) {
  VarId i = b.index_var("i"), j = b.index_var("j");
  return b.gen(
      {{i, sv("n")}, {j, sv("n")}}, [&] { return var(b.index(var(x), {at(i)})); }, span(s));
}

// The red team's sizes, scaled to the small limit: results, intermediates, tuples, the branches
// of an `if` and of a guard, accum, and tensor-valued sums.
ir::Program limit_program() {
  std::vector<ir::Function> fs;
  // def result(x: f64[n]) -> f64[n, n] { for i, j. x[i] }
  fs.push_back(make_function(
      "result", [](Builder& b) { return var(square(b, b.param("x", f64t({sv("n")})), 2)); }));
  // def intermediate(x: f64[n]) -> f64 { let t = for i, j. x[i]; t[0, 1] }
  fs.push_back(make_function("intermediate", [](Builder& b) {
    VarId t = square(b, b.param("x", f64t({sv("n")})), 2);
    return var(b.index(var(t), {at_const(0), at_const(1)}, span(3)));
  }));
  // def pair(x: f64[n]) -> (f64[n], f64[n, n]) { (x, for i, j. x[i]) }
  fs.push_back(make_function("pair", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    return var(b.tuple({var(x), var(square(b, x, 2))}));
  }));
  // def branch(x: f64[n], c: bool) -> f64[n, n] { if c then for i, j. x[i] else for ... }
  fs.push_back(make_function("branch", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId c = b.param("c", boolt());
    return var(b.if_(
        var(c), [&] { return std::vector<Atom>{var(square(b, x, 3))}; },
        [&] { return std::vector<Atom>{var(square(b, x, 4))}; }, span(5))[0]);
  }));
  // def guarded(x: f64[n], c: bool) -> f64[n, n] { [c] * (for i, j. x[i]) }: a false guard's
  // zeros are allocated at the guard, a true one's at the generator.
  fs.push_back(make_function("guarded", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId c = b.param("c", boolt());
    return var(b.guard(
        Pred::atom_of(c), [&] { return std::vector<Atom>{var(square(b, x, 3))}; }, span(4))[0]);
  }));
  // def scatter(x: f64[n]) -> f64[n, n] { accum[n, n] i. (i, i, x[i]) }
  fs.push_back(make_function("scatter", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId i = b.index_var("i");
    return var(b.accum(
        {sv("n"), sv("n")}, {{i, sv("n")}},
        [&] {
          return std::vector<Atom>{var(i), var(i), var(b.index(var(x), {at(i)}))};
        },
        span(2)));
  }));
  // def rows(x: f64[n]) -> f64[n, n] { sum k: n. for i, j. x[i] }
  fs.push_back(make_function("rows", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    VarId k = b.index_var("k");
    return var(b.reduce(
        ReduceKind::Sum, {{k, sv("n")}}, [&] { return var(square(b, x, 3)); }, span(2)));
  }));
  // def same(x: f64[n, n], c: bool) -> f64[n, n] { if c then x else x }: an argument over the
  // limit passes through (the interpreter builds nothing), natively copied into the result.
  fs.push_back(make_function("same", [](Builder& b) {
    VarId x = b.param("x", f64t({sv("n"), sv("n")}));
    VarId c = b.param("c", boolt());
    return var(b.if_(
        var(c), [&] { return std::vector<Atom>{var(x)}; },
        [&] { return std::vector<Atom>{var(x)}; }, span(5))[0]);
  }));
  return program_of(std::move(fs));
}

Value filled(std::vector<int64_t> shape) {
  Value v = Value::zeros(DType::F64, std::move(shape));
  double k = 1;
  for (double& e : v.f64_mut()) e = k++;
  return v;
}

TEST(NativeLimits, tensors_over_the_limit_fail_where_the_interpreter_fails) {
  const ir::Program p = limit_program();
  const Value x4 = filled({4}), x3 = filled({3});
  const Value yes = Value::boolean(true), no = Value::boolean(false);
  expect_agreement(p,
                   {{"result", {x4}},
                    {"result", {x3}},
                    {"intermediate", {x4}},
                    {"intermediate", {x3}},
                    {"pair", {x4}},
                    {"branch", {x4, yes}},
                    {"branch", {x4, no}},
                    {"guarded", {x4, yes}},
                    {"guarded", {x4, no}},
                    {"guarded", {x3, no}},
                    {"scatter", {x4}},
                    {"rows", {x4}},
                    {"same", {filled({4, 4}), yes}}},
                   kSmallLimit);
  // The message the interpreter gives (and native code now with it).
  Options options;
  options.max_tensor_elements = kSmallLimit;
  EXPECT_EQ(run(p, "result", {x4}, options).error().message,
            "a tensor of shape [4, 4] has 16 elements, more than the limit of 10");
}

// Element counts that overflow int64: (2^16 + 1)^4 > 2^63. A trailing 0 does not rescue the
// count (the interpreter multiplies left to right), and a generator of no points whose element
// shape overflows fails on its element shape.
ir::Program overflow_program() {
  std::vector<ir::Function> fs;
  auto fourfold = [](Builder& b, VarId x, std::vector<IndexVar> extra, uint32_t s) {
    VarId i = b.index_var("i"), j = b.index_var("j"), k = b.index_var("k"), l = b.index_var("l");
    std::vector<IndexVar> ivars{{i, sv("n")}, {j, sv("n")}, {k, sv("n")}, {l, sv("n")}};
    ivars.insert(ivars.end(), extra.begin(), extra.end());
    return b.gen(
        ivars, [&] { return var(b.index(var(x), {at(i)})); }, span(s));
  };
  // def big(x: f64[n]) -> f64[n, n, n, n] { for i, j, k, l. x[i] }
  fs.push_back(make_function(
      "big", [&](Builder& b) { return var(fourfold(b, b.param("x", f64t({sv("n")})), {}, 2)); }));
  // def big0(x: f64[n], y: f64[m]) -> f64[n, n, n, n, m] { for i, j, k, l, g: m. x[i] }
  fs.push_back(make_function("big0", [&](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    b.param("y", f64t({sv("m")}));
    return var(fourfold(b, x, {{b.index_var("g"), sv("m")}}, 2));
  }));
  // def none(x: f64[n], y: f64[m]) -> f64[m, n, n, n, n] { for g: m. for i, j, k, l. x[i] }
  fs.push_back(make_function("none", [&](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    b.param("y", f64t({sv("m")}));
    VarId g = b.index_var("g");
    return var(b.gen(
        {{g, sv("m")}}, [&] { return var(fourfold(b, x, {}, 3)); }, span(2)));
  }));
  // def fused(x: f64[n], y: f64[m]) -> f64[m, n, n, n, n] { for g: m, i, j, k, l. x[i] }: what
  // fusion makes of `none`, with its error (its element shape follows g). It gave [] before.
  fs.push_back(make_function("fused", [&](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    b.param("y", f64t({sv("m")}));
    VarId g = b.index_var("g");
    VarId i = b.index_var("i"), j = b.index_var("j"), k = b.index_var("k"), l = b.index_var("l");
    return var(b.gen(
        {{g, sv("m")}, {i, sv("n")}, {j, sv("n")}, {k, sv("n")}, {l, sv("n")}},
        [&] { return var(b.index(var(x), {at(i)})); }, span(2)));
  }));
  // def fused_inner(x: f64[n], y: f64[m]) -> f64[n, m, n, n, n, n] { for i, g: m, a, b, c, d.
  // x[a] }: the inner level's element shape overflows behind the 0 of m (nested, the inner
  // generator fails on it n times over).
  fs.push_back(make_function("fused_inner", [&](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    b.param("y", f64t({sv("m")}));
    VarId g = b.index_var("g");
    VarId i = b.index_var("i"), j = b.index_var("j"), k = b.index_var("k"), l = b.index_var("l");
    VarId o = b.index_var("o");
    return var(b.gen(
        {{o, sv("n")}, {g, sv("m")}, {i, sv("n")}, {j, sv("n")}, {k, sv("n")}, {l, sv("n")}},
        [&] { return var(b.index(var(x), {at(i)})); }, span(2)));
  }));
  // def nested_zero(x: f64[n], y: f64[m]) -> f64[m, m, n, n, n, n] { for g: m. for h: m.
  // for i, j, k, l. x[i] }: m = 0, so the generator over h, whose element shape overflows,
  // never runs: an empty result.
  fs.push_back(make_function("nested_zero", [&](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    b.param("y", f64t({sv("m")}));
    VarId g = b.index_var("g"), h = b.index_var("h");
    return var(b.gen(
        {{g, sv("m")}},
        [&] {
          return var(b.gen(
              {{h, sv("m")}}, [&] { return var(fourfold(b, x, {}, 4)); }, span(3)));
        },
        span(2)));
  }));
  // def fused_zero(...) { for g: m, h: m, i, j, k, l. x[i] }: what fusion makes of
  // nested_zero, with its result (it failed on the element shape after h before).
  fs.push_back(make_function("fused_zero", [&](Builder& b) {
    VarId x = b.param("x", f64t({sv("n")}));
    b.param("y", f64t({sv("m")}));
    VarId g = b.index_var("g"), h = b.index_var("h");
    VarId i = b.index_var("i"), j = b.index_var("j"), k = b.index_var("k"), l = b.index_var("l");
    return var(b.gen(
        {{g, sv("m")}, {h, sv("m")}, {i, sv("n")}, {j, sv("n")}, {k, sv("n")}, {l, sv("n")}},
        [&] { return var(b.index(var(x), {at(i)})); }, span(2)));
  }));
  return program_of(std::move(fs));
}

TEST(NativeLimits, element_counts_that_overflow_fail_where_the_interpreter_fails) {
  const ir::Program p = overflow_program();
  const Value x = Value::zeros(DType::F64, {65537});
  const Value y0 = Value::zeros(DType::F64, {0});
  expect_agreement(p,
                   {{"big", {x}},
                    {"big0", {x, y0}},
                    {"none", {x, y0}},
                    {"fused", {x, y0}},
                    {"fused_inner", {x, y0}},
                    {"nested_zero", {x, y0}},
                    {"fused_zero", {x, y0}}},
                   int64_t{1} << 28);
  for (const char* fn : {"nested_zero", "fused_zero"}) {
    auto r = run(p, fn, {x, y0});
    ASSERT_TRUE(r.ok()) << fn << ": " << r.error().message;
    EXPECT_EQ(r.value().shape(), (std::vector<int64_t>{0, 0, 65537, 65537, 65537, 65537})) << fn;
  }
  EXPECT_EQ(run(p, "big0", {x, y0}).error().message,
            "cannot allocate a tensor of shape [65537, 65537, 65537, 65537, 0]: its element count "
            "overflows");
  EXPECT_EQ(run(p, "none", {x, y0}).error().message,
            "the element shape [65537, 65537, 65537, 65537] of a generator is too large");
  EXPECT_EQ(run(p, "fused", {x, y0}).error().message,
            "the element shape [65537, 65537, 65537, 65537] of a generator is too large");
  EXPECT_EQ(run(p, "fused_inner", {x, y0}).error().message,
            "the element shape [65537, 65537, 65537, 65537] of a generator is too large");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::interp::testing

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

// The red team's reproductions through the API, at the interpreter's real limit (2^28): a
// result of 7000^5 elements (the count overflows; native code wrote through null), the same
// with a trailing 0 dimension (native code printed null), and one of 800^3 (over the limit;
// native code allocated and filled 4 GB first).
TEST(NativeLimits, the_red_teams_results_fail_as_in_the_interpreter) {
  const char* src =
      R"(def f5(x: f64[n]) -> f64[n, n, n, n, n] { for a: n, b: n, c: n, d: n, e: n. x[a] }
def f5z(x: f64[n], y: f64[m]) -> f64[n, n, n, n, n, m] {
  for a: n, b: n, c: n, d: n, e: n, g: m. x[a] * y[g]
}
def f3(x: f64[n]) -> f64[n, n, n] { for a: n, b: n, c: n. x[a] }
)";
  auto m = Module::from_string(src, "big.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  const Value x7000 = Value::zeros(DType::F64, {7000});
  const Value x800 = Value::zeros(DType::F64, {800});
  const Value y0 = Value::zeros(DType::F64, {0});
  struct Case {
    const char* fn;
    std::vector<Value> args;
    const char* message;
  };
  const std::vector<Case> cases{
      {"f5",
       {x7000},
       "cannot allocate a tensor of shape [7000, 7000, 7000, 7000, 7000]: its element count "
       "overflows"},
      {"f5z",
       {x7000, y0},
       "cannot allocate a tensor of shape [7000, 7000, 7000, 7000, 7000, 0]: its element count "
       "overflows"},
      {"f3",
       {x800},
       "a tensor of shape [800, 800, 800] has 512000000 elements, more than the limit of "
       "268435456"}};
  EvalOptions native;
  native.backend = Backend::Native;
  native.threads = 1;
  for (const Case& c : cases) {
    auto want = m.value().evaluate(c.fn, c.args);
    ASSERT_FALSE(want.ok()) << c.fn;
    EXPECT_EQ(want.errors().at(0).message, c.message);
    auto got = m.value().evaluate(c.fn, c.args, native);
    ASSERT_FALSE(got.ok()) << c.fn << ": native code gave " << value_to_json(got.value());
    EXPECT_EQ(got.errors().at(0).message, c.message);
    EXPECT_EQ(got.message(), want.message()) << c.fn;
  }
  // The view form: zero_result gives the result that cannot be built no memory, and the call
  // reports the interpreter's error instead of writing.
  auto compiled = m.value().compile({{"f3", std::nullopt, {}, {x800}}}, CompileOptions{1, 0, {}});
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  Value out = compiled.value()[0].zero_result();
  EXPECT_EQ(out.type_string(), "f64[800, 800, 800]");
  EXPECT_EQ(out.raw_mut(), nullptr);
  auto r = compiled.value()[0].call({TensorRef{DType::F64, {800}, x800.raw_data()}},
                                    {MutableTensorRef{DType::F64, out.shape(), out.raw_mut()}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.errors().at(0).message, cases[2].message);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
