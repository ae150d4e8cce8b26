// A read under one branch of an `if`, transposed into a scatter-add (an accum): the other
// branch contributes nothing, not a zero at a placeholder position. A placeholder would be
// range-checked, and no position is in range of an empty tensor: GradBench's gmm at d = 1
// (its lower triangles are empty) failed with "index 0 is out of range". Gradients on both
// backends against finite differences; a read out of range on the branch that runs still fails.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ad/ad_test_util.h"
#include "ad/fd_harness.h"
#include "cotangent/cotangent.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

using cot::ad_test::rho;

const char* kSource = R"(
def halves(l: f64[p], q: f64[d]) -> f64 {
  sum r: d. if r == 0 then q[r] else l[r // 2] * q[r]
}
def other_branch(l: f64[p], q: f64[d]) -> f64 {
  sum r: d. if r != 0 then l[(r - 1) // 2] * q[r] else q[r] * q[r]
}
)";

Value ramp(int64_t n, double scale) {
  Value v = Value::zeros(DType::F64, {n});
  for (int64_t k = 0; k < n; ++k) v.f64_mut()[static_cast<size_t>(k)] = scale * (0.4 + k);
  return v;
}

// (p, d) pairs where the branch that reads l runs for no r (d = 1, p = 0) and where it does.
const std::vector<std::pair<int64_t, int64_t>> kSizes = {{0, 1}, {1, 2}, {2, 3}, {3, 6}};

TEST(AdBranchScatter, GradientsMatchFiniteDifferencesOnTheInterpreter) {
  for (int opt : {0, 2}) {
    Module m = cot::ad_test::load_module(kSource, "branch.cot", opt);
    for (const char* fn : {"halves", "other_branch"}) {
      for (auto [p, d] : kSizes) {
        std::vector<Value> args = {ramp(p, 0.7), ramp(d, -0.3)};
        auto g = m.value_and_grad(fn, args);
        ASSERT_TRUE(g.ok()) << fn << " opt " << opt << " p " << p << ": " << g.message();
        auto fd = adtest::fd_jacobian(m, fn, args, {0, 1});
        ASSERT_TRUE(fd.ok()) << fd.message();
        size_t col = 0;
        for (const auto& named : g.value().grad) {
          for (double x : named.value.f64_data()) {
            EXPECT_LE(rho(x, fd.value().at(0, static_cast<int64_t>(col))), adtest::kFdTol)
                << fn << " opt " << opt << " p " << p << " column " << col;
            ++col;
          }
        }
        EXPECT_EQ(col, static_cast<size_t>(fd.value().cols)) << fn;
      }
    }
  }
}

TEST(AdBranchScatter, NativeGradientsAgreeWithTheInterpreter) {
  Module m = cot::ad_test::load_module(kSource, "branch.cot", 2);
  for (const char* fn : {"halves", "other_branch"}) {
    for (auto [p, d] : kSizes) {
      std::vector<Value> args = {ramp(p, 0.7), ramp(d, -0.3)};
      auto reference = m.value_and_grad(fn, args, {"l"});
      ASSERT_TRUE(reference.ok()) << reference.message();
      auto compiled = m.compile({{fn, DerivativeKind::Grad, {"l"}, args}});
      ASSERT_TRUE(compiled.ok()) << compiled.message();
      auto native = compiled.value()[0].call(args);
      ASSERT_TRUE(native.ok()) << fn << " p " << p << ": " << native.message();
      const auto want = reference.value().grad.at(0).value.f64_data();
      const auto got = native.value().f64_data();
      ASSERT_EQ(got.size(), want.size()) << fn;
      for (size_t k = 0; k < got.size(); ++k) {
        EXPECT_LE(rho(got[k], want[k]), 1e-12) << fn << " p " << p << " element " << k;
      }
    }
  }
}

TEST(AdBranchScatter, AReadOutOfRangeOnItsBranchStillFailsWhereItIs) {
  // l is too short for the reads of the else branch, which does run: the guard that replaced
  // the placeholder must not hide that.
  const char* src =
      "def f(l: f64[p], q: f64[d]) -> f64 {\n"
      "  sum r: d. if r == 0 then q[r] else l[r] * q[r]\n"
      "}\n";
  Module m = cot::ad_test::load_module(src, "short.cot", 2);
  auto g = m.value_and_grad("f", {ramp(1, 1.0), ramp(3, 1.0)}, {"l"});
  ASSERT_FALSE(g.ok());
  EXPECT_NE(g.message().find("short.cot:2:"), std::string::npos) << g.message();
  EXPECT_NE(g.message().find("out of range"), std::string::npos) << g.message();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
