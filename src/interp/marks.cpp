// Strong-zero marks of stored values (interp/marks.h, docs/language.md §5.6).
#include "interp/marks.h"

#include <algorithm>

#include "interp/environment.h"

namespace cot::interp {

uint8_t element_mask(uint8_t whole, const Marks* m, int64_t k) {
  if (whole == Frame::kStrongZero) return Frame::kStrongZero;
  if (m != nullptr && !m->elems.empty() && m->elems[static_cast<size_t>(k)] != 0) {
    return Frame::kStrongZero;
  }
  return 0;
}

MarksP slice_marks(const Marks* m, int64_t from, int64_t count) {
  if (m == nullptr || m->elems.empty() || count <= 0) return nullptr;
  auto first = m->elems.begin() + from;
  auto last = first + count;
  if (std::find(first, last, uint8_t{1}) == last) return nullptr;
  auto out = std::make_shared<Marks>();
  out->elems.assign(first, last);
  return out;
}

void MarksBuilder::put(int64_t offset, int64_t n, uint8_t whole, const Marks* m) {
  const bool strong = whole == Frame::kStrongZero;
  const bool marked = !strong && whole == 0 && m != nullptr && !m->elems.empty();
  if (!strong && !marked) return;
  const auto end = static_cast<size_t>(offset + n);
  if (elems_.size() < end) elems_.resize(end, 0);
  auto at = elems_.begin() + offset;
  if (strong) {
    std::fill(at, at + n, uint8_t{1});
  } else {
    std::copy(m->elems.begin(), m->elems.begin() + n, at);
  }
  any_ = any_ || strong || std::find(at, at + n, uint8_t{1}) != at + n;
}

MarksP MarksBuilder::finish(int64_t total) {
  if (!any_) return nullptr;
  auto out = std::make_shared<Marks>();
  elems_.resize(static_cast<size_t>(total), 0);
  out->elems = std::move(elems_);
  return out;
}

void SumMarks::term(int64_t offset, int64_t n, uint8_t whole, const Marks* m) {
  auto at = state_.begin() + offset;
  if (whole == Frame::kStrongZero) {
    for (auto it = at; it != at + n; ++it) *it = *it == kLive ? kLive : kStrong;
  } else if (whole != 0) {
    return;  // an empty sum adds nothing and marks nothing
  } else if (m != nullptr && !m->elems.empty()) {
    for (int64_t k = 0; k < n; ++k) {
      uint8_t& s = at[k];
      s = m->elems[static_cast<size_t>(k)] != 0 ? (s == kLive ? kLive : kStrong) : kLive;
    }
  } else {
    std::fill(at, at + n, kLive);
  }
}

MarksP SumMarks::finish() const {
  if (std::find(state_.begin(), state_.end(), kStrong) == state_.end()) return nullptr;
  auto out = std::make_shared<Marks>();
  out->elems.resize(state_.size());
  for (size_t k = 0; k < state_.size(); ++k) out->elems[k] = state_[k] == kStrong ? 1 : 0;
  return out;
}

}  // namespace cot::interp
