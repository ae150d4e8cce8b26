#include "index/predicate.h"

#include <algorithm>

namespace cot {
namespace {

std::optional<Affine> minus_one(const std::optional<Affine>& e) {
  if (!e) return std::nullopt;
  return Affine::sub(*e, Affine::constant(1));
}

// Flattens nested nodes of `kind` and drops `unit` (True for And, False for Or); `zero`
// (False for And, True for Or) absorbs everything.
Pred junction(Pred::Kind kind, Pred::Kind unit, Pred::Kind zero, std::vector<Pred> ps) {
  std::vector<Pred> kids;
  for (auto& p : ps) {
    if (p.kind == zero) {
      Pred z;
      z.kind = zero;
      return z;
    }
    if (p.kind == unit) continue;
    if (p.kind == kind) {
      for (auto& k : p.kids) kids.push_back(std::move(k));
    } else {
      kids.push_back(std::move(p));
    }
  }
  if (kids.empty()) {
    Pred u;
    u.kind = unit;
    return u;
  }
  if (kids.size() == 1) return std::move(kids[0]);
  Pred r;
  r.kind = kind;
  r.kids = std::move(kids);
  return r;
}

// Splits e = pos - neg + c into the affine parts with positive coefficients, so a constraint
// prints as a comparison without negative terms (`i + 1 < n` rather than `n - i - 2 >= 0`).
// Fails only for the coefficient INT64_MIN, whose negation does not fit.
bool split_sides(const Affine& e, Affine* pos, Affine* neg) {
  for (const auto& [v, c] : e.terms()) {
    if (c == INT64_MIN) return false;
    auto& side = c > 0 ? *pos : *neg;
    side = *Affine::add(side, Affine::var(v, c > 0 ? c : -c));  // disjoint variables
  }
  return e.constant_term() != INT64_MIN;
}

Affine plus(const Affine& a, int64_t k) {
  return *Affine::add(a, Affine::constant(k));
}

std::string constraint_to_string(const Pred& p, const std::function<std::string(int32_t)>& name) {
  const Affine& e = p.expr;
  const bool ge = p.kind == Pred::Kind::Ge0;
  Affine pos, neg;
  if (e.is_constant() || !split_sides(e, &pos, &neg)) {
    return e.to_string(name) + (ge ? " >= 0" : " == 0");
  }
  const int64_t c = e.constant_term();  // not INT64_MIN, so -c and -c - 1 fit
  auto str = [&](const Affine& a) { return a.to_string(name); };
  if (ge) {
    if (neg.is_constant()) return str(pos) + " >= " + std::to_string(-c);  // i >= 1
    if (pos.is_constant()) return str(neg) + " <= " + std::to_string(c);   // i <= 5
    if (c < 0) return str(plus(neg, -c - 1)) + " < " + str(pos);           // i + 1 < n
    return str(neg) + " <= " + str(plus(pos, c));                          // j <= i + 1
  }
  if (neg.is_constant()) return str(pos) + " == " + std::to_string(-c);  // i == 3
  if (pos.is_constant()) return str(neg) + " == " + std::to_string(c);
  if (c < 0) return str(pos) + " == " + str(plus(neg, -c));  // i == 2 * j + 1
  return str(plus(pos, c)) + " == " + str(neg);
}

}  // namespace

Pred Pred::ge0(Affine e) {
  if (e.is_constant()) return e.constant_term() >= 0 ? truth() : falsity();
  Pred p;
  p.kind = Kind::Ge0;
  p.expr = std::move(e);
  return p;
}

Pred Pred::eq0(Affine e) {
  if (e.is_constant()) return e.constant_term() == 0 ? truth() : falsity();
  Pred p;
  p.kind = Kind::Eq0;
  p.expr = std::move(e);
  return p;
}

Pred Pred::atom_of(int32_t var, bool negated) {
  Pred p;
  p.kind = Kind::Atom;
  p.atom = var;
  p.negated = negated;
  return p;
}

Pred Pred::conj(std::vector<Pred> ps) {
  return junction(Kind::And, Kind::True, Kind::False, std::move(ps));
}

Pred Pred::disj(std::vector<Pred> ps) {
  return junction(Kind::Or, Kind::False, Kind::True, std::move(ps));
}

std::optional<Pred> Pred::compare(const Affine& a, const std::string& op, const Affine& b) {
  std::optional<Affine> e;
  if (op == "<") {
    e = minus_one(Affine::sub(b, a));
  } else if (op == "<=") {
    e = Affine::sub(b, a);
  } else if (op == ">") {
    e = minus_one(Affine::sub(a, b));
  } else if (op == ">=") {
    e = Affine::sub(a, b);
  } else if (op == "==") {
    e = Affine::sub(a, b);
    if (!e) return std::nullopt;
    return eq0(std::move(*e));
  } else if (op == "!=") {
    auto lt = minus_one(Affine::sub(b, a));
    auto gt = minus_one(Affine::sub(a, b));
    if (!lt || !gt) return std::nullopt;
    return disj({ge0(std::move(*gt)), ge0(std::move(*lt))});
  } else {
    return std::nullopt;  // not a comparison operator
  }
  if (!e) return std::nullopt;
  return ge0(std::move(*e));
}

std::optional<Pred> Pred::negate() const {
  switch (kind) {
    case Kind::True:
      return falsity();
    case Kind::False:
      return truth();
    case Kind::Ge0: {  // not(e >= 0)  <=>  -e - 1 >= 0 on integers
      auto n = minus_one(Affine::scale(expr, -1));
      if (!n) return std::nullopt;
      return ge0(std::move(*n));
    }
    case Kind::Eq0: {  // not(e == 0)  <=>  e - 1 >= 0 || -e - 1 >= 0
      auto above = minus_one(expr);
      auto below = minus_one(Affine::scale(expr, -1));
      if (!above || !below) return std::nullopt;
      return disj({ge0(std::move(*above)), ge0(std::move(*below))});
    }
    case Kind::Atom:
      return atom_of(atom, !negated);
    case Kind::And:
    case Kind::Or: {
      std::vector<Pred> ns;
      ns.reserve(kids.size());
      for (const Pred& k : kids) {
        auto n = k.negate();
        if (!n) return std::nullopt;
        ns.push_back(std::move(*n));
      }
      return kind == Kind::And ? disj(std::move(ns)) : conj(std::move(ns));
    }
  }
  return std::nullopt;
}

std::optional<bool> Pred::eval(const std::function<int64_t(int32_t)>& int_value,
                               const std::function<bool(int32_t)>& bool_value) const {
  switch (kind) {
    case Kind::True:
      return true;
    case Kind::False:
      return false;
    case Kind::Ge0:
    case Kind::Eq0: {
      auto v = expr.eval(int_value);
      if (!v) return std::nullopt;
      return kind == Kind::Ge0 ? *v >= 0 : *v == 0;
    }
    case Kind::Atom:
      return bool_value(atom) != negated;
    case Kind::And:
    case Kind::Or: {
      // Short-circuits like `&&` and `||` in the language.
      const bool stop = kind == Kind::Or;
      for (const Pred& k : kids) {
        auto v = k.eval(int_value, bool_value);
        if (!v) return std::nullopt;
        if (*v == stop) return stop;
      }
      return !stop;
    }
  }
  return std::nullopt;
}

void Pred::collect_vars(std::vector<int32_t>& out) const {
  auto add = [&out](int32_t v) {
    if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
  };
  switch (kind) {
    case Kind::Ge0:
    case Kind::Eq0:
      for (const auto& [v, c] : expr.terms()) add(v);
      break;
    case Kind::Atom:
      add(atom);
      break;
    case Kind::And:
    case Kind::Or:
      for (const Pred& k : kids) k.collect_vars(out);
      break;
    default:
      break;
  }
}

Pred Pred::rename(const std::function<int32_t(int32_t)>& map) const {
  Pred r = *this;
  switch (kind) {
    case Kind::Ge0:
    case Kind::Eq0:
      r.expr = expr.rename(map);
      break;
    case Kind::Atom:
      r.atom = map(atom);
      break;
    case Kind::And:
    case Kind::Or:
      for (Pred& k : r.kids) k = k.rename(map);
      break;
    default:
      break;
  }
  return r;
}

bool Pred::operator==(const Pred& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::True:
    case Kind::False:
      return true;
    case Kind::Ge0:
    case Kind::Eq0:
      return expr == o.expr;
    case Kind::Atom:
      return atom == o.atom && negated == o.negated;
    case Kind::And:
    case Kind::Or:
      return kids == o.kids;
  }
  return false;
}

std::string Pred::to_string(const std::function<std::string(int32_t)>& name) const {
  switch (kind) {
    case Kind::True:
      return "true";
    case Kind::False:
      return "false";
    case Kind::Ge0:
    case Kind::Eq0:
      return constraint_to_string(*this, name);
    case Kind::Atom:
      return negated ? "!" + name(atom) : name(atom);
    case Kind::And:
    case Kind::Or: {
      if (kids.empty()) return kind == Kind::And ? "true" : "false";
      std::string s;
      for (size_t i = 0; i < kids.size(); ++i) {
        if (i > 0) s += kind == Kind::And ? " && " : " || ";
        // `&&` binds tighter than `||`: only an Or inside an And needs parentheses.
        bool paren = kind == Kind::And && kids[i].kind == Kind::Or && kids[i].kids.size() > 1;
        std::string k = kids[i].to_string(name);
        s += paren ? "(" + k + ")" : k;
      }
      return s;
    }
  }
  return "false";
}

std::optional<Pred> Pred::substitute(int32_t v, const Affine& by) const {
  switch (kind) {
    case Kind::Ge0:
    case Kind::Eq0: {
      auto e = expr.substitute(v, by);
      if (!e) return std::nullopt;
      return kind == Kind::Ge0 ? ge0(*e) : eq0(*e);
    }
    case Kind::And:
    case Kind::Or: {
      std::vector<Pred> ks;
      for (const Pred& k : kids) {
        auto q = k.substitute(v, by);
        if (!q) return std::nullopt;
        ks.push_back(std::move(*q));
      }
      return kind == Kind::And ? conj(std::move(ks)) : disj(std::move(ks));
    }
    default:
      return *this;
  }
}

bool split_conjunction(const Pred& p, std::vector<Affine>& affine, std::vector<Pred>& atoms) {
  switch (p.kind) {
    case Pred::Kind::True:
      return true;
    case Pred::Kind::Ge0:
      affine.push_back(p.expr);
      return true;
    case Pred::Kind::Eq0:
      affine.push_back(p.expr);
      if (auto neg = Affine::scale(p.expr, -1)) {
        affine.push_back(*neg);
        return true;
      }
      return false;
    case Pred::Kind::Atom:
      atoms.push_back(p);
      return true;
    case Pred::Kind::And:
      return std::all_of(p.kids.begin(), p.kids.end(),
                         [&](const Pred& k) { return split_conjunction(k, affine, atoms); });
    default:
      return false;
  }
}

}  // namespace cot
