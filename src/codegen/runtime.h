// The run time of generated code: the context a compiled function reports errors through, the
// allocation of its arenas and heap buffers, and the growable stacks of while-loops' saved
// states. Embedded, with prims/scalar_math.h, at the top of every generated translation unit
// (and written into `cotangent emit`'s standalone sources), so compiled code needs no library.
// Self-contained: the C and C++ standard libraries only.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>

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

// A heap block freed when it goes out of scope; 64-byte aligned.
struct heap {
  void* p = nullptr;
  heap() = default;
  heap(const heap&) = delete;
  heap& operator=(const heap&) = delete;
  ~heap() { std::free(p); }
  void* alloc(int64_t bytes) {
    if (bytes <= 0) bytes = 64;
    const int64_t rounded = (bytes + 63) / 64 * 64;
    p = std::aligned_alloc(64, static_cast<size_t>(rounded));
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
    int64_t c = capacity > 0 ? capacity : 64;
    while (c < bytes) c *= 2;
    void* q = std::realloc(p, static_cast<size_t>(c));
    if (q == nullptr) return false;
    p = q;
    capacity = c;
    return true;
  }
};

}  // namespace cot_rt
