// The interpreter stays the reference (issue 4 item 7): every test program and example gives
// the same values at --opt=0 (the program as the checker and AD build it) and --opt=2 (after the
// whole pipeline), ρ ≤ 1e-12, and so do the gradients of its scalar functions; an input that
// fails fails at both levels with the same message.
#include <gtest/gtest.h>

#include "e2e/e2e_cases.h"

namespace cotangent::e2e {
namespace COTANGENT_TEST_UNIT {

constexpr double kTol = 1e-12;

Result<Module> load_at(const Program& p, int level) {
  LoadOptions o;
  o.opt_level = level;
  return Module::from_file(p.source, o);
}

class OptLevelsAgree : public ::testing::TestWithParam<Program> {};

TEST_P(OptLevelsAgree, ValuesAndGradients) {
  const Program& p = GetParam();
  auto m0 = load_at(p, 0);
  auto m2 = load_at(p, 2);
  ASSERT_TRUE(m0.ok()) << m0.message();
  ASSERT_TRUE(m2.ok()) << m2.message();
  ASSERT_EQ(m2.value().opt_level(), 2);
  int compared = 0;
  for (const Case& c : load_cases(p)) {
    auto args = case_arguments(m0.value(), c);
    ASSERT_TRUE(args.ok()) << c.key() << ": " << args.message();
    auto r0 = m0.value().evaluate(c.fn, args.value());
    auto r2 = m2.value().evaluate(c.fn, args.value());
    if (!r0.ok()) {
      // An error of live work stays an error, with the same message.
      EXPECT_FALSE(r2.ok()) << c.key() << ": fails at --opt=0 only:\n" << r0.message();
      if (!r2.ok()) {
        EXPECT_EQ(r0.message(), r2.message()) << c.key();
      }
      continue;
    }
    ASSERT_TRUE(r2.ok()) << c.key() << ": fails at --opt=2 only:\n" << r2.message();
    EXPECT_EQ(compare_values(r0.value(), r2.value(), kTol), "") << c.key();
    ++compared;
    // Gradients of real scalar functions with respect to every real parameter.
    if (!r0.value().is_scalar() || (r0.value().dtype() != DType::F64)) continue;
    auto g0 = m0.value().value_and_grad(c.fn, args.value());
    auto g2 = m2.value().value_and_grad(c.fn, args.value());
    if (!g0.ok()) {
      EXPECT_FALSE(g2.ok()) << c.key() << ": the gradient fails at --opt=0 only";
      continue;
    }
    ASSERT_TRUE(g2.ok()) << c.key() << ": the gradient fails at --opt=2 only:\n" << g2.message();
    ASSERT_EQ(g0.value().grad.size(), g2.value().grad.size());
    for (size_t k = 0; k < g0.value().grad.size(); ++k) {
      EXPECT_EQ(compare_values(g0.value().grad[k].value, g2.value().grad[k].value, kTol), "")
          << c.key() << ": gradient with respect to " << g0.value().grad[k].name;
    }
  }
  EXPECT_GT(compared, 0) << "no case of " << p.name << " ran";
}

INSTANTIATE_TEST_SUITE_P(Programs, OptLevelsAgree, ::testing::ValuesIn(programs()),
                         [](const ::testing::TestParamInfo<Program>& info) {
                           std::string s = info.param.name;
                           for (char& ch : s) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return s;
                         });

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::e2e
