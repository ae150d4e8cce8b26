// The generated code's run time (runtime/runtime.h): its blocks are aligned as the emitted
// loops assume (64 bytes; 2 MiB for the blocks that ask for huge pages), and a while-loop's
// stack keeps its contents as it grows past that size.
#include "runtime/runtime.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>

namespace cot::codegen {
namespace COTANGENT_TEST_UNIT {

constexpr int64_t kHuge = int64_t{2} << 20;

bool aligned(const void* p, int64_t to) {
  return reinterpret_cast<uintptr_t>(p) % static_cast<uintptr_t>(to) == 0;
}

TEST(Runtime, blocks_are_64_byte_aligned_and_large_ones_2_mib_aligned) {
  for (int64_t bytes : {int64_t{0}, int64_t{-5}, int64_t{1}, int64_t{100}, kHuge - 8}) {
    cot_rt::heap h;
    void* p = h.alloc(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_TRUE(aligned(p, 64)) << bytes;
    std::memset(p, 1, static_cast<size_t>(bytes > 0 ? bytes : 1));  // ASan checks the size
  }
  for (int64_t bytes : {kHuge, kHuge + 1, 3 * kHuge + 12345}) {
    cot_rt::heap h;
    void* p = h.alloc(bytes);
    ASSERT_NE(p, nullptr) << bytes;
    EXPECT_TRUE(aligned(p, kHuge)) << bytes;
    std::memset(p, 1, static_cast<size_t>(bytes));
  }
}

TEST(Runtime, a_block_no_machine_has_is_refused_rather_than_overflowing) {
  cot_rt::heap h;
  EXPECT_EQ(h.alloc(INT64_MAX), nullptr);
  EXPECT_EQ(h.alloc(INT64_MAX - 1000), nullptr);
  cot_rt::stack s;
  EXPECT_FALSE(s.grow(INT64_MAX / 2 + 1));
  EXPECT_EQ(s.capacity, 0);
}

TEST(Runtime, a_stack_keeps_its_contents_while_it_grows_into_huge_blocks) {
  cot_rt::stack s;
  int64_t filled = 0;  // elements written so far: element k holds k
  for (int64_t want = 1; want <= 3 * kHuge / 8; want = want * 3 + 1) {
    ASSERT_TRUE(s.grow(want * 8));
    EXPECT_GE(s.capacity, want * 8);
    auto* e = static_cast<int64_t*>(s.p);
    for (int64_t k = 0; k < filled; ++k) ASSERT_EQ(e[k], k) << "lost at capacity " << s.capacity;
    for (int64_t k = filled; k < want; ++k) e[k] = k;
    filled = want;
  }
  EXPECT_GT(s.capacity, kHuge);
  EXPECT_TRUE(aligned(s.p, kHuge));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::codegen
