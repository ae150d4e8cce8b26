#include "index/affine.h"

#include <algorithm>

namespace cot {
namespace {

using Terms = std::vector<std::pair<int32_t, int64_t>>;

// Merges two sorted term lists as a + sign * b (sign is +1 or -1), dropping zeros.
// Subtracting directly (not adding a negated copy) keeps `x - INT64_MIN * v`-style results
// that fit from failing on the intermediate negation.
std::optional<Terms> merge(const Terms& a, const Terms& b, bool subtract) {
  Terms out;
  out.reserve(a.size() + b.size());
  size_t i = 0, j = 0;
  while (i < a.size() || j < b.size()) {
    int64_t c;
    int32_t v;
    if (j == b.size() || (i < a.size() && a[i].first < b[j].first)) {
      v = a[i].first;
      c = a[i++].second;
    } else if (i == a.size() || b[j].first < a[i].first) {
      v = b[j].first;
      if (!subtract) {
        c = b[j].second;
      } else if (__builtin_sub_overflow(int64_t{0}, b[j].second, &c)) {
        return std::nullopt;
      }
      ++j;
    } else {
      v = a[i].first;
      bool overflow = subtract ? __builtin_sub_overflow(a[i].second, b[j].second, &c)
                               : __builtin_add_overflow(a[i].second, b[j].second, &c);
      if (overflow) return std::nullopt;
      ++i, ++j;
    }
    if (c != 0) out.emplace_back(v, c);
  }
  return out;
}

void append_term(std::string& s, bool first, int64_t c, const std::string& body) {
  if (first) {
    if (c < 0) s += "-";
  } else {
    s += c < 0 ? " - " : " + ";
  }
  auto term = [&](uint64_t mag) {
    if (body.empty()) {
      s += std::to_string(mag);
    } else if (mag == 1) {
      s += body;
    } else {
      s += std::to_string(mag) + " * " + body;
    }
  };
  if (c == INT64_MIN) {
    // |INT64_MIN| is not an integer literal (literals are at most INT64_MAX): write the term
    // as two, `- 9223372036854775807 * i - i`, which reads back as the same value.
    term(uint64_t{INT64_MAX});
    s += " - ";
    term(1);
    return;
  }
  term(c < 0 ? uint64_t{0} - static_cast<uint64_t>(c) : static_cast<uint64_t>(c));
}

}  // namespace

Affine Affine::constant(int64_t c) {
  Affine a;
  a.constant_ = c;
  return a;
}

Affine Affine::var(int32_t v, int64_t coeff) {
  Affine a;
  if (coeff != 0) a.terms_.emplace_back(v, coeff);
  return a;
}

std::optional<Affine> Affine::add(const Affine& a, const Affine& b) {
  Affine r;
  if (__builtin_add_overflow(a.constant_, b.constant_, &r.constant_)) return std::nullopt;
  auto terms = merge(a.terms_, b.terms_, false);
  if (!terms) return std::nullopt;
  r.terms_ = std::move(*terms);
  return r;
}

std::optional<Affine> Affine::sub(const Affine& a, const Affine& b) {
  Affine r;
  if (__builtin_sub_overflow(a.constant_, b.constant_, &r.constant_)) return std::nullopt;
  auto terms = merge(a.terms_, b.terms_, true);
  if (!terms) return std::nullopt;
  r.terms_ = std::move(*terms);
  return r;
}

std::optional<Affine> Affine::scale(const Affine& a, int64_t k) {
  Affine r;
  if (k == 0) return r;
  if (__builtin_mul_overflow(a.constant_, k, &r.constant_)) return std::nullopt;
  r.terms_.reserve(a.terms_.size());
  for (const auto& [v, c] : a.terms_) {
    int64_t p;
    if (__builtin_mul_overflow(c, k, &p)) return std::nullopt;
    r.terms_.emplace_back(v, p);
  }
  return r;
}

int64_t Affine::coeff(int32_t v) const {
  auto it =
      std::lower_bound(terms_.begin(), terms_.end(), v,
                       [](const std::pair<int32_t, int64_t>& t, int32_t x) { return t.first < x; });
  return it != terms_.end() && it->first == v ? it->second : 0;
}

std::optional<int64_t> Affine::eval(const std::function<int64_t(int32_t)>& value) const {
  int64_t total = constant_;
  for (const auto& [v, c] : terms_) {
    int64_t p;
    if (__builtin_mul_overflow(c, value(v), &p) || __builtin_add_overflow(total, p, &total)) {
      return std::nullopt;
    }
  }
  return total;
}

std::optional<Affine> Affine::substitute(int32_t v, const Affine& by) const {
  int64_t c = coeff(v);
  if (c == 0) return *this;
  Affine rest = *this;
  rest.terms_.erase(std::find_if(rest.terms_.begin(), rest.terms_.end(),
                                 [v](const auto& t) { return t.first == v; }));
  auto scaled = scale(by, c);
  if (!scaled) return std::nullopt;
  return add(rest, *scaled);
}

Affine Affine::rename(const std::function<int32_t(int32_t)>& map) const {
  Affine r;
  r.constant_ = constant_;
  for (const auto& [v, c] : terms_) r.terms_.emplace_back(map(v), c);
  std::stable_sort(r.terms_.begin(), r.terms_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  // Renaming is meant to be injective; if two variables merge, their coefficients add (with
  // two's-complement wrap on overflow rather than undefined behaviour).
  Terms merged;
  for (const auto& [v, c] : r.terms_) {
    if (!merged.empty() && merged.back().first == v) {
      merged.back().second = static_cast<int64_t>(static_cast<uint64_t>(merged.back().second) +
                                                  static_cast<uint64_t>(c));
    } else {
      merged.emplace_back(v, c);
    }
  }
  std::erase_if(merged, [](const auto& t) { return t.second == 0; });
  r.terms_ = std::move(merged);
  return r;
}

std::string Affine::to_string(const std::function<std::string(int32_t)>& name) const {
  std::string s;
  bool first = true;
  for (const auto& [v, c] : terms_) {
    append_term(s, first, c, name(v));
    first = false;
  }
  if (constant_ != 0 || first) append_term(s, first, constant_, "");
  return s;
}

}  // namespace cot
