// Affine integer expressions over variables (index variables and size variables of Core IR,
// named by their integer ids): sum of coeff * var plus a constant. Exact arithmetic: every
// operation reports overflow instead of wrapping.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cot {

class Affine {
 public:
  Affine() = default;
  static Affine constant(int64_t c);
  static Affine var(int32_t v, int64_t coeff = 1);

  // nullopt on overflow.
  static std::optional<Affine> add(const Affine& a, const Affine& b);
  static std::optional<Affine> sub(const Affine& a, const Affine& b);
  static std::optional<Affine> scale(const Affine& a, int64_t k);

  int64_t constant_term() const { return constant_; }
  // (variable, coefficient) pairs sorted by variable, no zero coefficients.
  const std::vector<std::pair<int32_t, int64_t>>& terms() const { return terms_; }
  int64_t coeff(int32_t v) const;
  bool is_constant() const { return terms_.empty(); }
  bool mentions(int32_t v) const { return coeff(v) != 0; }

  // nullopt on overflow.
  std::optional<int64_t> eval(const std::function<int64_t(int32_t)>& value) const;
  // Replaces variable v by an affine expression (nullopt on overflow).
  std::optional<Affine> substitute(int32_t v, const Affine& by) const;
  // Renames variables through `map` (variables not in the map are kept).
  Affine rename(const std::function<int32_t(int32_t)>& map) const;

  bool operator==(const Affine& o) const { return constant_ == o.constant_ && terms_ == o.terms_; }
  bool operator!=(const Affine& o) const { return !(*this == o); }
  bool operator<(const Affine& o) const {
    return terms_ != o.terms_ ? terms_ < o.terms_ : constant_ < o.constant_;
  }

  // "2 * i + j - 1" with names from `name`.
  std::string to_string(const std::function<std::string(int32_t)>& name) const;

 private:
  std::vector<std::pair<int32_t, int64_t>> terms_;
  int64_t constant_ = 0;
};

}  // namespace cot
