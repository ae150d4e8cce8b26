// Strong zeros kept in storage (docs/language.md §5.6): which elements of a tensor, or which
// components of a tuple, are strong zeros. A slot's own mask byte (Frame::masked) says what the
// whole value is; its Marks, when present, say it element by element, so that a strong zero
// stored by a generator, a sum, an accum, a loop's state or its saved states, a tuple or a call
// comes back a strong zero when it is read. Absent (null) when no part is one.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

namespace cot::interp {

struct Marks;
using MarksP = std::shared_ptr<const Marks>;

struct Marks {
  std::vector<uint8_t> elems;       // a tensor: 1 for a strong zero, else 0, row-major
  std::vector<uint8_t> part_masks;  // a tuple: each component's mask byte
  std::vector<MarksP> part_marks;   // and each component's marks
};

// The mask of element k of a tensor whose slot mask is `whole` and marks are `m`: a strong zero
// when the whole tensor is one (a false guard's zeros) or the element is marked.
uint8_t element_mask(uint8_t whole, const Marks* m, int64_t k);

// The marks of elements [from, from + count) (a slice), or null when none is marked.
MarksP slice_marks(const Marks* m, int64_t from, int64_t count);

// Builds a tensor's marks piece by piece, allocating only once a strong zero arrives.
class MarksBuilder {
 public:
  // Records the n elements at offset.. of a value whose mask is `whole` and marks `m`.
  void put(int64_t offset, int64_t n, uint8_t whole, const Marks* m);
  // The marks of a tensor of `total` elements, or null when none is a strong zero.
  MarksP finish(int64_t total);

 private:
  std::vector<uint8_t> elems_;
  bool any_ = false;
};

// A sum's elementwise marks (docs/language.md §5.6, a tensor-valued sum or an accum): element k is
// a strong zero when some term put there was one and none was live.
class SumMarks {
 public:
  explicit SumMarks(int64_t total) : state_(static_cast<size_t>(total), kNone) {}
  // A term of n elements at offset.. with mask `whole` and marks `m` (the sum itself skips
  // the masked ones: Buffer::combine's `skip`).
  void term(int64_t offset, int64_t n, uint8_t whole, const Marks* m);
  MarksP finish() const;

 private:
  static constexpr uint8_t kNone = 0, kStrong = 1, kLive = 2;
  std::vector<uint8_t> state_;
};

}  // namespace cot::interp
