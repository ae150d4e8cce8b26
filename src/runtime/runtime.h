// The run time of generated code: the context a compiled function reports errors through, the
// allocation of its arenas and heap buffers, and the growable stacks of while-loops' saved
// states. Embedded, with prims/scalar_math.h, at the top of every generated translation unit
// (and written into `cotangent emit`'s standalone sources), so compiled code needs no library.
// Self-contained: the C and C++ standard libraries only (and <sys/mman.h> on Linux).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#if defined(__linux__)
#include <sys/mman.h>
#endif

extern "C" {
// Passed to every compiled function. On failure the function returns site + 1 and leaves the
// site's number and its integer operands here (docs/design.md, "The native backend").
struct cot_ctx {
  int32_t threads;               // OpenMP threads for parallel loops (0: all cores)
  int32_t site;                  // out: the failing check
  int64_t max_while_iterations;  // 0: unbounded
  int64_t values[8];             // out: what the check reports (indices, operands, counts)
};
}

namespace cot_rt {

inline int fail(cot_ctx* ctx, int site, std::initializer_list<int64_t> values) {
  ctx->site = site;
  int k = 0;
  for (int64_t v : values) {
    if (k < 8) ctx->values[k++] = v;
  }
  return site + 1;
}

// The bits of a double, for reporting a real operand through the integer values.
inline int64_t bits(double x) {
  int64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// Memory for arrays, 64-byte aligned. On Linux a block of 2 MiB or more is aligned to 2 MiB and
// asks for transparent huge pages (as PyTorch's CPU allocator does when asked): its first
// touch then faults one 2 MiB page instead of 512 small ones, which on a virtual machine is
// most of the time of writing a fresh large result or saving a long loop's states.
constexpr int64_t kHugeBlock = int64_t{2} << 20;

inline void* alloc_block(int64_t bytes) {
  if (bytes <= 0) bytes = 64;
  if (bytes > INT64_MAX - kHugeBlock) return nullptr;  // no machine has it; rounding would overflow
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  const int64_t align = bytes >= kHugeBlock ? kHugeBlock : 64;
#else
  const int64_t align = 64;
#endif
  const int64_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(static_cast<size_t>(align), static_cast<size_t>(rounded));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (p != nullptr && align == kHugeBlock) madvise(p, static_cast<size_t>(rounded), MADV_HUGEPAGE);
#endif
  return p;
}

// A heap block freed when it goes out of scope.
struct heap {
  void* p = nullptr;
  heap() = default;
  heap(const heap&) = delete;
  heap& operator=(const heap&) = delete;
  ~heap() { std::free(p); }
  void* alloc(int64_t bytes) {
    p = alloc_block(bytes);
    return p;
  }
};

// A buffer that grows by doubling, keeping its contents (a while-loop's saved states).
struct stack {
  void* p = nullptr;
  int64_t capacity = 0;
  stack() = default;
  stack(const stack&) = delete;
  stack& operator=(const stack&) = delete;
  ~stack() { std::free(p); }
  bool grow(int64_t bytes) {
    if (bytes <= capacity) return true;
    if (bytes > INT64_MAX / 2) return false;  // doubling past it would overflow
    int64_t c = capacity > 0 ? capacity : 64;
    while (c < bytes) c *= 2;
    void* q = alloc_block(c);
    if (q == nullptr) return false;
    if (capacity > 0) std::memcpy(q, p, static_cast<size_t>(capacity));
    std::free(p);
    p = q;
    capacity = c;
    return true;
  }
};

}  // namespace cot_rt
