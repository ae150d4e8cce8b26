// Native results do not depend on the number of threads (docs/design.md, "Parallel loops";
// issue 25, break 11): sum-heavy and math-heavy programs whose loops run in vector lanes across
// threads give the same bits on 1, 2, 3 and 7 threads. Before, each thread ran its own range in
// lanes, and the iterations at the ends of the ranges called the scalar exp and log instead of
// the vector ones: one ulp apart, depending on the thread count.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "codegen/thread_team.h"
#include "cotangent/cotangent.h"
#include "e2e/e2e_cases.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

// Every leaf's bytes, in order.
void leaf_bytes(const Value& v, std::string& out) {
  if (v.is_tuple()) {
    for (const Value& e : v.elems()) leaf_bytes(e, out);
    return;
  }
  if (v.is_scalar()) {
    const double x = v.as_f64();
    out.append(reinterpret_cast<const char*>(&x), sizeof x);
    return;
  }
  auto d = v.f64_data();
  out.append(reinterpret_cast<const char*>(d.data()), d.size() * sizeof(double));
}

TEST(NativeThreads, results_are_the_same_to_the_bit_on_any_number_of_threads) {
  const char* src = R"(
def p(x: f64[n]) -> f64[n] { for i. exp(x[i]) * 2.0 + log(1.0 + x[i] * x[i]) }
def rows(A: f64[m, k]) -> f64[m] { for i. sum j. exp(A[i, j]) * A[i, j] }
def total(A: f64[m, k]) -> f64 { sum i, j. exp(A[i, j]) * tanh(A[i, j]) }
def lse(x: f64[n]) -> f64 {
  let mx = max i. x[i]
  mx + log(sum i. exp(x[i] - mx))
}
)";
  auto m = Module::from_string(src, "threads.cot");
  ASSERT_TRUE(m.ok()) << m.message();
  std::mt19937_64 rng(25);
  // Lengths that are not multiples of a vector's or a block's.
  const Value x = e2e::uniform_tensor({100003}, rng);
  const Value A = e2e::uniform_tensor({301, 297}, rng);
  const std::vector<CompileRequest> requests{{"p", std::nullopt, {}, {x}},
                                             {"rows", std::nullopt, {}, {A}},
                                             {"total", std::nullopt, {}, {A}},
                                             {"lse", DerivativeKind::ValueAndGrad, {}, {x}}};
  std::vector<std::string> on_one;
  for (int threads : {1, 2, 3, 7}) {
    auto compiled = m.value().compile(requests, CompileOptions{threads, 0, {}});
    ASSERT_TRUE(compiled.ok()) << compiled.message();
    for (size_t k = 0; k < requests.size(); ++k) {
      auto r = compiled.value()[k].call(requests[k].example_args);
      ASSERT_TRUE(r.ok()) << r.message();
      std::string bytes;
      leaf_bytes(r.value(), bytes);
      if (threads == 1) {
        on_one.push_back(bytes);
      } else {
        EXPECT_TRUE(bytes == on_one[k])
            << requests[k].fn << " on " << threads << " threads differs from one thread";
      }
    }
  }
}

// The team is what was asked for when the threads can be made (tests/cli/native_limits.sh
// runs a team that cannot), and at least the calling thread.
TEST(NativeThreads, the_team_is_what_can_be_created) {
  EXPECT_EQ(cot::codegen::creatable_team(1), 1);
  EXPECT_EQ(cot::codegen::creatable_team(3), 3);
  EXPECT_GE(cot::codegen::creatable_team(0), 1);
  EXPECT_GE(cot::codegen::creatable_team(-2), 1);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
