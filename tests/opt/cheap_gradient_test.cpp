// The cheap-gradient bound (design.md §8.2, issue 4 item 4), as a test over the whole
// corpus at several sizes, after the optimizer (--opt=2):
//   ops(value_and_grad f) <= 4 * ops(f) + size(inputs) + size(outputs).
// The corpus: every test program, every example, the pathologies of tests/opt/corpus (the
// introduction programs of [Bernstein20], guarded triangular sums, shifted and strided reads) and
// programs from the random generator of the AD tests.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "ad/random_program.h"
#include "e2e/e2e_cases.h"
#include "opt/gradient_corpus.h"

namespace cotangent::corpus {
namespace COTANGENT_TEST_UNIT {

LoadOptions optimized() {
  LoadOptions o;
  o.opt_level = 2;
  return o;
}

std::string describe(const Measurement& r) {
  std::ostringstream s;
  s << r.program << ":" << r.fn << " at size " << r.size << ": ops(f) = " << r.ops_f
    << ", ops(value_and_grad f) = " << r.ops_vg << ", bound = " << r.bound();
  if (!r.error.empty()) s << ", value_and_grad failed: " << r.error;
  return s.str();
}

// Measures every candidate of `file` at `sizes`; returns how many (function, size) pairs were
// measured. Every function must hold the bound at every size.
int check_file(const SourceFile& file, const std::vector<int64_t>& sizes, uint64_t seed) {
  auto m = Module::from_string(file.text, file.name + ".cot", optimized());
  if (!m) {
    ADD_FAILURE() << file.name << " does not load: " << m.message();
    return 0;
  }
  int measured = 0;
  for (const auto& c : candidates(file.text)) {
    for (int64_t size : sizes) {
      Measurement r = measure(m.value(), file.name, c, size, seed + static_cast<uint64_t>(size));
      if (!r.measured) continue;  // f itself refuses this random input (e.g. a trip count)
      ++measured;
      EXPECT_TRUE(r.error.empty()) << describe(r);
      EXPECT_TRUE(r.holds()) << describe(r);
    }
  }
  return measured;
}

TEST(OptCheapGradient, every_test_program_and_example) {
  int measured = 0;
  for (const auto& file : corpus_files(e2e::source_dir())) {
    if (file.name.rfind("opt", 0) == 0) continue;  // opt/ and opt3/: below
    measured += check_file(file, {3, 8}, 11);
  }
  // Not vacuous: most of the ~50 scalar functions of the test programs run at both sizes.
  EXPECT_GE(measured, 60);
}

TEST(OptCheapGradient, pathologies_at_growing_sizes) {
  int measured = 0;
  for (const auto& file : corpus_files(e2e::source_dir())) {
    if (file.name.rfind("opt/", 0) != 0) continue;
    measured += check_file(file, {10, 100, 400}, 5);
  }
  EXPECT_GE(measured, 3 * 45);
}

// Pathologies whose function costs O(n^3) (triangular matrix products, attention-like scores),
// at sizes where the interpreter runs them quickly.
TEST(OptCheapGradient, cubic_pathologies_at_growing_sizes) {
  int measured = 0;
  for (const auto& file : corpus_files(e2e::source_dir())) {
    if (file.name.rfind("opt3/", 0) != 0) continue;
    measured += check_file(file, {10, 40}, 7);
  }
  EXPECT_GE(measured, 2 * 2);
}

// The introduction programs: the gradient's cost grows like the function's (linearly, or not at
// all for row_col), not like n^2.
TEST(OptCheapGradient, introduction_programs_scale_like_the_function) {
  SourceFile intro;
  for (const auto& f : corpus_files(e2e::source_dir())) {
    if (f.name == "opt/intro") intro = f;
  }
  ASSERT_FALSE(intro.text.empty());
  auto m = Module::from_string(intro.text, "intro.cot", optimized());
  ASSERT_TRUE(m.ok()) << m.message();
  for (const auto& c : candidates(intro.text)) {
    Measurement small = measure(m.value(), "intro", c, 100, 1);
    Measurement large = measure(m.value(), "intro", c, 1000, 1);
    ASSERT_TRUE(small.holds()) << describe(small);
    ASSERT_TRUE(large.holds()) << describe(large);
    // The ratio to the function does not grow with n.
    EXPECT_LE(large.ratio(), small.ratio() + 0.5) << describe(small) << "\n" << describe(large);
    // The two programs of the introduction: ten times the size costs at most ten times as much
    // (plus a constant), where differentiation with dense adjoints costs a hundred times.
    if (c.fn == "traces" || c.fn == "row_col") {
      EXPECT_LE(large.ops_vg, 10 * small.ops_vg + 10) << describe(small) << "\n" << describe(large);
    }
  }
}

TEST(OptCheapGradient, random_programs) {
  int measured = 0;
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    adtest::RandomProgram p = adtest::random_program(seed);
    SourceFile file{"random/" + std::to_string(seed), p.source};
    measured += check_file(file, {3, 6}, seed);
  }
  EXPECT_GE(measured, 40);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::corpus
