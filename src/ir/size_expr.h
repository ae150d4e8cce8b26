// Symbolic sizes: integer polynomials over size variables, kept in a normal form so that equal
// sizes compare equal (`n - k + 1` == `1 + n - k`). Exact division `p / q` by a divisor that
// does not divide symbolically is kept as an opaque factor whose divisibility is checked when
// the size is evaluated. Arithmetic is overflow-checked: an overflow poisons the result.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cot {

class SizeExpr {
 public:
  SizeExpr() = default;  // zero
  static SizeExpr constant(int64_t c);
  static SizeExpr var(const std::string& name);
  // Exact division. Folds when the divisor is a constant dividing every coefficient, or when
  // the numerator is a multiple of the divisor; else returns an opaque quotient factor.
  // Returns nullopt when the divisor is the constant zero.
  static std::optional<SizeExpr> divide(const SizeExpr& num, const SizeExpr& den);

  friend SizeExpr operator+(const SizeExpr& a, const SizeExpr& b);
  friend SizeExpr operator-(const SizeExpr& a, const SizeExpr& b);
  friend SizeExpr operator*(const SizeExpr& a, const SizeExpr& b);
  SizeExpr operator-() const;

  bool operator==(const SizeExpr& o) const {
    return terms_ == o.terms_ && poisoned_ == o.poisoned_;
  }
  bool operator!=(const SizeExpr& o) const { return !(*this == o); }
  bool operator<(const SizeExpr& o) const { return terms_ < o.terms_; }

  bool poisoned() const { return poisoned_; }  // an intermediate overflowed
  bool is_constant() const;
  std::optional<int64_t> as_constant() const;
  std::optional<std::string> as_var() const;  // a bare size variable
  // Size variables it mentions (inside quotients too), sorted.
  std::vector<std::string> vars() const;

  // Evaluates with the given variable values. Fails (nullopt, and `why` set) on overflow, an
  // unbound variable or a division that is not exact.
  std::optional<int64_t> eval(
      const std::function<std::optional<int64_t>(const std::string&)>& value,
      std::string* why = nullptr) const;

  // Canonical spelling, valid as a size expression in source: "n - k + 1", "2 * n", "(n + 1) / 2".
  std::string to_string() const;

  // Replaces size variables by size expressions (variables not in the map are kept); used to
  // instantiate a callee's shapes at a call site. Implemented in size_expr_ops.cpp.
  SizeExpr substitute(const std::map<std::string, SizeExpr>& by) const;
  // The expression as `constant + sum coeff * var` when it is linear in bare size variables
  // (no products of variables, no quotients); nullopt otherwise.
  struct Linear {
    int64_t constant = 0;
    std::vector<std::pair<std::string, int64_t>> terms;
  };
  std::optional<Linear> as_linear() const;
  // The normal form, for generating code that evaluates the size at run time: a sum of
  // coeff * product of factors, each a size variable or an exact quotient num / den (spelled
  // `key` in messages).
  struct Factor {
    std::string var;  // empty for a quotient
    std::string key;
    std::shared_ptr<const SizeExpr> num, den;
  };
  struct Term {
    int64_t coeff = 0;
    std::vector<Factor> factors;
  };
  std::vector<Term> normal_terms() const;

 private:
  struct Quotient {
    std::shared_ptr<const SizeExpr> num, den;
  };
  // A monomial is a sorted list of factor keys; a key is a size variable name or, for an
  // opaque quotient, its canonical spelling (with the quotient kept in quotients_).
  using Monomial = std::vector<std::string>;
  std::map<Monomial, int64_t> terms_;  // no zero coefficients
  std::map<std::string, Quotient> quotients_;
  bool poisoned_ = false;

  void add_term(const Monomial& m, int64_t c);
  void merge_quotients(const SizeExpr& o);
  std::string monomial_to_string(const Monomial& m) const;
};

}  // namespace cot
