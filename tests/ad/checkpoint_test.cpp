// The Checkpoint unzip policy (ad/unzip.h) gives the same gradients as saving every iteration,
// for for-loops and while-loops, with segments that do and do not divide the trip count.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <string>

#include "ad/ad_test_util.h"
#include "ad/derive.h"
#include "check/checker.h"
#include "interp/interpreter.h"
#include "syntax/parser.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

ir::Program compile(const std::string& src, const ad::DeriveOptions& options) {
  ir::Program prog = ad_test::compile(src, /*with_prelude=*/false);
  auto failed = ad::build_derivatives(prog, options);
  EXPECT_FALSE(failed.has_value()) << failed->message;
  return prog;
}

using ad_test::rho;

cotangent::Value vec(const std::vector<double>& xs) {
  auto v = cotangent::Value::zeros(cotangent::DType::F64, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}

const char* kProgram = R"(
def rnn(w: f64, x: f64[n]) -> f64 {
  let h = loop h = 0.5 for t < n { tanh(w * h + x[t]) }
  h * h
}
def grnn(w: f64, x: f64[n]) -> (f64, f64[n]) { grad(rnn)(w, x) }
def grow(a: f64, x: f64[n]) -> f64 {
  let (s, k) = loop (s, k) = (a, 0) while k < n { (sin(s) * x[k] + a, k + 1) }
  s
}
def ggrow(a: f64, x: f64[n]) -> (f64, f64[n]) { grad(grow)(a, x) }
)";

void expect_same(const cotangent::Value& a, const cotangent::Value& b) {
  ASSERT_EQ(a.elems().size(), b.elems().size());
  for (size_t k = 0; k < a.elems().size(); ++k) {
    auto x = a.elems()[k].f64_data(), y = b.elems()[k].f64_data();
    ASSERT_EQ(x.size(), y.size());
    for (size_t i = 0; i < x.size(); ++i) EXPECT_LE(rho(x[i], y[i]), 1e-13) << k << "," << i;
  }
}

TEST(AdCheckpoint, SameGradientsAsSavingEveryIteration) {
  ad::DeriveOptions every;
  for (int64_t k : {0, 1, 2, 3, 7}) {
    ad::DeriveOptions ck;
    ck.policy.loop_states = ad::UnzipPolicy::LoopStates::Checkpoint;
    ck.policy.checkpoint_every = k;
    ir::Program p1 = compile(kProgram, every), p2 = compile(kProgram, ck);
    for (size_t n : {0u, 1u, 5u, 9u}) {
      std::vector<double> xs;
      for (size_t i = 0; i < n; ++i) xs.push_back(0.3 * std::sin(1.0 + static_cast<double>(i)));
      for (const char* fn : {"grnn", "ggrow"}) {
        std::vector<cotangent::Value> args{cotangent::Value::f64(0.7), vec(xs)};
        auto r1 = interp::evaluate(p1, fn, args, nullptr, {});
        auto r2 = interp::evaluate(p2, fn, args, nullptr, {});
        ASSERT_TRUE(std::holds_alternative<cotangent::Value>(r1)) << fn;
        ASSERT_TRUE(std::holds_alternative<cotangent::Value>(r2))
            << fn << " k=" << k << ": " << std::get<Diagnostic>(r2).message;
        SCOPED_TRACE(std::string(fn) + " n=" + std::to_string(n) + " k=" + std::to_string(k));
        expect_same(std::get<cotangent::Value>(r1), std::get<cotangent::Value>(r2));
      }
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
