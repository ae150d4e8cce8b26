// Predicates of Iverson brackets and guards: conjunctions and disjunctions of affine
// constraints (`a >= 0`, `a == 0`) and boolean atoms (Core IR variables of type bool, possibly
// negated). `<`, `<=`, `>`, `>=`, `==` and `!=` on integers all normalize to these two
// constraint forms, which is what Fourier-Motzkin and the index solver reason about.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "index/affine.h"

namespace cot {

struct Pred {
  enum class Kind { True, False, Ge0, Eq0, Atom, And, Or };
  Kind kind = Kind::True;
  Affine expr;             // Ge0, Eq0: the constraint `expr >= 0` / `expr == 0`
  int32_t atom = -1;       // Atom: a bool variable
  bool negated = false;    // Atom: `!atom`
  std::vector<Pred> kids;  // And, Or

  static Pred truth() { return Pred{}; }
  static Pred falsity() {
    Pred p;
    p.kind = Kind::False;
    return p;
  }
  static Pred ge0(Affine e);  // folds constants
  static Pred eq0(Affine e);
  static Pred atom_of(int32_t var, bool negated = false);
  // Flattening, folding of True/False.
  static Pred conj(std::vector<Pred> ps);
  static Pred disj(std::vector<Pred> ps);
  // Comparison `a OP b` of affine expressions; nullopt on overflow. op is one of
  // "<", "<=", ">", ">=", "==", "!=".
  static std::optional<Pred> compare(const Affine& a, const std::string& op, const Affine& b);
  // Logical negation, pushed to the leaves (De Morgan). nullopt on overflow.
  std::optional<Pred> negate() const;

  // Evaluates with integer values for affine variables and truth values for atoms.
  // nullopt on overflow.
  std::optional<bool> eval(const std::function<int64_t(int32_t)>& int_value,
                           const std::function<bool(int32_t)>& bool_value) const;
  // Every variable it mentions (affine and atoms).
  void collect_vars(std::vector<int32_t>& out) const;
  Pred rename(const std::function<int32_t(int32_t)>& map) const;
  // The predicate with affine variable v replaced by `by` (atoms untouched); nullopt on
  // overflow.
  std::optional<Pred> substitute(int32_t v, const Affine& by) const;

  bool operator==(const Pred& o) const;
  bool operator!=(const Pred& o) const { return !(*this == o); }

  // Source spelling, e.g. "i + 1 < n && j == 2 * i" (valid inside an Iverson bracket).
  std::string to_string(const std::function<std::string(int32_t)>& name) const;
};

// Splits a conjunction of affine constraints (Ge0, Eq0) and boolean atoms into the constraints
// (each `e >= 0`; an equality is two) and the atoms; false when `p` is not such a conjunction
// (True is one) or negating an equality overflows.
bool split_conjunction(const Pred& p, std::vector<Affine>& affine, std::vector<Pred>& atoms);

}  // namespace cot
