#include "ir/size_expr.h"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <utility>

namespace cot {
namespace {

using Factors = std::vector<std::string>;

// The monomial order used to pick leading terms: graded (higher degree is larger), then
// lexicographic on the sorted factor lists. Multiplying both sides by the same monomial keeps
// the order, which is what makes the division below terminate and decide exact divisibility.
bool monomial_less(const Factors& a, const Factors& b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

Factors multiply(const Factors& a, const Factors& b) {
  Factors m;
  m.reserve(a.size() + b.size());
  std::merge(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(m));
  return m;
}

// The greatest term of a nonempty term map under monomial_less.
template <class Terms>
auto leading(const Terms& terms) {
  auto best = terms.begin();
  for (auto it = terms.begin(); it != terms.end(); ++it) {
    if (monomial_less(best->first, it->first)) best = it;
  }
  return best;
}

// |c| without overflow, for printing and gcds.
uint64_t magnitude(int64_t c) {
  return c < 0 ? uint64_t{0} - static_cast<uint64_t>(c) : static_cast<uint64_t>(c);
}

uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b != 0) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

// Drops quotient definitions no longer mentioned by any term (after cancellation), so that
// vars() and eval() only see live quotients.
template <class Terms, class Quotients>
void prune_quotients(const Terms& terms, Quotients& quotients) {
  if (quotients.empty()) return;
  std::set<std::string> live;
  for (const auto& [m, c] : terms) live.insert(m.begin(), m.end());
  for (auto it = quotients.begin(); it != quotients.end();) {
    it = live.count(it->first) ? std::next(it) : quotients.erase(it);
  }
}

}  // namespace

SizeExpr SizeExpr::constant(int64_t c) {
  SizeExpr e;
  e.add_term({}, c);
  return e;
}

SizeExpr SizeExpr::var(const std::string& name) {
  SizeExpr e;
  e.add_term({name}, 1);
  return e;
}

void SizeExpr::add_term(const Monomial& m, int64_t c) {
  if (c == 0) return;
  auto it = terms_.find(m);
  if (it == terms_.end()) {
    terms_.emplace(m, c);
    return;
  }
  int64_t sum;
  if (__builtin_add_overflow(it->second, c, &sum)) {
    poisoned_ = true;
    return;
  }
  if (sum == 0) {
    terms_.erase(it);
  } else {
    it->second = sum;
  }
}

void SizeExpr::merge_quotients(const SizeExpr& o) {
  for (const auto& [key, q] : o.quotients_) quotients_.emplace(key, q);
}

SizeExpr operator+(const SizeExpr& a, const SizeExpr& b) {
  SizeExpr r = a;
  r.poisoned_ = a.poisoned_ || b.poisoned_;
  r.merge_quotients(b);
  for (const auto& [m, c] : b.terms_) r.add_term(m, c);
  prune_quotients(r.terms_, r.quotients_);
  return r;
}

SizeExpr SizeExpr::operator-() const {
  SizeExpr r;
  r.poisoned_ = poisoned_;
  r.quotients_ = quotients_;
  for (const auto& [m, c] : terms_) {
    int64_t n;
    if (__builtin_sub_overflow(int64_t{0}, c, &n)) {
      r.poisoned_ = true;
      continue;
    }
    r.terms_.emplace(m, n);
  }
  prune_quotients(r.terms_, r.quotients_);
  return r;
}

SizeExpr operator-(const SizeExpr& a, const SizeExpr& b) {
  // Not a + (-b): negating a coefficient INT64_MIN would poison a result that fits.
  SizeExpr r = a;
  r.poisoned_ = a.poisoned_ || b.poisoned_;
  r.merge_quotients(b);
  for (const auto& [m, c] : b.terms_) {
    auto it = r.terms_.find(m);
    int64_t base = it == r.terms_.end() ? 0 : it->second;
    int64_t diff;
    if (__builtin_sub_overflow(base, c, &diff)) {
      r.poisoned_ = true;
      continue;
    }
    if (it != r.terms_.end()) r.terms_.erase(it);
    r.add_term(m, diff);
  }
  prune_quotients(r.terms_, r.quotients_);
  return r;
}

SizeExpr operator*(const SizeExpr& a, const SizeExpr& b) {
  SizeExpr r;
  r.poisoned_ = a.poisoned_ || b.poisoned_;
  r.merge_quotients(a);
  r.merge_quotients(b);
  for (const auto& [ma, ca] : a.terms_) {
    for (const auto& [mb, cb] : b.terms_) {
      int64_t c;
      if (__builtin_mul_overflow(ca, cb, &c)) {
        r.poisoned_ = true;
        continue;
      }
      r.add_term(multiply(ma, mb), c);
    }
  }
  prune_quotients(r.terms_, r.quotients_);
  return r;
}

std::optional<SizeExpr> SizeExpr::divide(const SizeExpr& num, const SizeExpr& den) {
  if (den.terms_.empty()) return std::nullopt;
  const bool poisoned = num.poisoned_ || den.poisoned_;
  auto finish = [&](SizeExpr r) {
    r.poisoned_ = r.poisoned_ || poisoned;
    prune_quotients(r.terms_, r.quotients_);
    return r;
  };
  if (num.terms_.empty()) return finish(SizeExpr());
  if (num.terms_ == den.terms_) return finish(constant(1));

  // Exact multivariate division by the single polynomial `den` (factor keys, quotients
  // included, act as variables). One polynomial is a Groebner basis of the ideal it
  // generates, so the remainder is zero exactly when num = den * q; the first leading term
  // that den's leading term does not divide proves that it is not. Integer coefficients: a
  // non-integer step means q is not an integer polynomial, and the quotient stays opaque.
  {
    const auto& [dm, dc] = *leading(den.terms_);
    SizeExpr rest = num;
    rest.poisoned_ = false;
    SizeExpr quot;
    quot.merge_quotients(num);
    quot.merge_quotients(den);
    bool exact = true;
    // Each step strictly lowers the leading monomial; the cap only bounds pathological sizes.
    for (int step = 0; !rest.terms_.empty(); ++step) {
      const auto& [rm, rc] = *leading(rest.terms_);
      if (step > 4096 || !std::includes(rm.begin(), rm.end(), dm.begin(), dm.end()) ||
          (dc == -1 && rc == INT64_MIN) || rc % dc != 0) {
        exact = false;
        break;
      }
      Monomial tm;
      std::set_difference(rm.begin(), rm.end(), dm.begin(), dm.end(), std::back_inserter(tm));
      const int64_t tc = rc / dc;
      quot.add_term(tm, tc);
      for (const auto& [m, c] : den.terms_) {
        int64_t prod, neg;
        if (__builtin_mul_overflow(tc, c, &prod) ||
            __builtin_sub_overflow(int64_t{0}, prod, &neg)) {
          exact = false;
          break;
        }
        rest.add_term(multiply(tm, m), neg);
      }
      if (!exact || rest.poisoned_ || quot.poisoned_) {
        exact = false;
        break;
      }
    }
    if (exact) return finish(std::move(quot));
  }

  // Opaque quotient in a normal form: common integer content removed, divisor and dividend
  // with positive leading coefficients (the sign moves outside). Neither step changes whether
  // the division is exact, so the runtime check means the same thing.
  SizeExpr n = num, d = den;
  n.poisoned_ = d.poisoned_ = false;
  uint64_t g = 0;
  for (const auto& [m, c] : n.terms_) g = gcd_u64(g, magnitude(c));
  for (const auto& [m, c] : d.terms_) g = gcd_u64(g, magnitude(c));
  if (g > 1) {
    // g <= 2^63 divides every coefficient; a coefficient INT64_MIN with g = 2^63 gives -1.
    for (auto* p : {&n, &d}) {
      for (auto& [m, c] : p->terms_) {
        c = g == (uint64_t{1} << 63) ? (c < 0 ? -1 : 1) : c / static_cast<int64_t>(g);
      }
    }
  }
  bool overflow = false;
  auto negate_in_place = [&overflow](SizeExpr& e) {
    for (auto& [m, c] : e.terms_) {
      if (c == INT64_MIN) {
        overflow = true;
      } else {
        c = -c;
      }
    }
  };
  if (leading(d.terms_)->second < 0) {
    negate_in_place(d);
    negate_in_place(n);
  }
  int64_t sign = 1;
  if (leading(n.terms_)->second < 0) {
    negate_in_place(n);
    sign = -1;
  }
  if (d.terms_ == constant(1).terms_) {
    SizeExpr r = sign < 0 ? -n : n;
    r.poisoned_ = r.poisoned_ || overflow;
    return finish(std::move(r));
  }
  auto wrap = [](const SizeExpr& e) {
    std::string s = e.to_string();
    bool atom = e.as_var().has_value() || (e.is_constant() && e.as_constant().value_or(-1) >= 0);
    return atom ? s : "(" + s + ")";
  };
  std::string key = wrap(n) + " / " + wrap(d);
  SizeExpr r;
  r.poisoned_ = overflow;
  r.quotients_.emplace(key, Quotient{std::make_shared<const SizeExpr>(std::move(n)),
                                     std::make_shared<const SizeExpr>(std::move(d))});
  r.add_term({key}, sign);
  return finish(std::move(r));
}

bool SizeExpr::is_constant() const {
  return terms_.empty() || (terms_.size() == 1 && terms_.begin()->first.empty());
}

std::optional<int64_t> SizeExpr::as_constant() const {
  if (poisoned_ || !is_constant()) return std::nullopt;
  return terms_.empty() ? 0 : terms_.begin()->second;
}

std::optional<std::string> SizeExpr::as_var() const {
  if (poisoned_ || terms_.size() != 1) return std::nullopt;
  const auto& [m, c] = *terms_.begin();
  if (c != 1 || m.size() != 1 || quotients_.count(m[0])) return std::nullopt;
  return m[0];
}

std::vector<std::string> SizeExpr::vars() const {
  std::set<std::string> out;
  for (const auto& [m, c] : terms_) {
    for (const auto& f : m) {
      auto q = quotients_.find(f);
      if (q == quotients_.end()) {
        out.insert(f);
        continue;
      }
      for (const auto* part : {q->second.num.get(), q->second.den.get()}) {
        for (auto& v : part->vars()) out.insert(std::move(v));
      }
    }
  }
  return {out.begin(), out.end()};
}

std::vector<SizeExpr::Term> SizeExpr::normal_terms() const {
  std::vector<Term> out;
  for (const auto& [m, c] : terms_) {
    Term t;
    t.coeff = c;
    for (const auto& f : m) {
      auto q = quotients_.find(f);
      if (q == quotients_.end()) {
        t.factors.push_back(Factor{f, f, nullptr, nullptr});
      } else {
        t.factors.push_back(Factor{"", f, q->second.num, q->second.den});
      }
    }
    out.push_back(std::move(t));
  }
  return out;
}

std::optional<int64_t> SizeExpr::eval(
    const std::function<std::optional<int64_t>(const std::string&)>& value,
    std::string* why) const {
  auto fail = [why](std::string msg) -> std::optional<int64_t> {
    if (why) *why = std::move(msg);
    return std::nullopt;
  };
  if (poisoned_) return fail("size expression " + to_string() + " overflowed while simplifying");
  int64_t total = 0;
  for (const auto& [m, c] : terms_) {
    int64_t prod = c;
    for (const auto& f : m) {
      int64_t v;
      auto q = quotients_.find(f);
      if (q == quotients_.end()) {
        auto bound = value(f);
        if (!bound) return fail("size variable `" + f + "` has no value");
        v = *bound;
      } else {
        const SizeExpr& num = *q->second.num;
        const SizeExpr& den = *q->second.den;
        auto n = num.eval(value, why);
        if (!n) return std::nullopt;
        auto d = den.eval(value, why);
        if (!d) return std::nullopt;
        // Report the operand values so the user sees why the division failed.
        std::string operands = num.to_string() + " = " + std::to_string(*n);
        if (!den.is_constant()) operands += ", " + den.to_string() + " = " + std::to_string(*d);
        if (*d == 0) return fail("size expression " + f + " divides by zero: " + operands);
        if (*n == INT64_MIN && *d == -1) {
          return fail("integer overflow evaluating size expression " + f);
        }
        if (*n % *d != 0) {
          return fail("size expression " + f + " does not divide exactly: " + operands);
        }
        v = *n / *d;
      }
      if (__builtin_mul_overflow(prod, v, &prod)) {
        return fail("integer overflow evaluating size expression " + to_string());
      }
    }
    if (__builtin_add_overflow(total, prod, &total)) {
      return fail("integer overflow evaluating size expression " + to_string());
    }
  }
  return total;
}

std::string SizeExpr::monomial_to_string(const Monomial& m) const {
  // Size variables first, then quotients: `m * ((n + 1) / 2)` reads better than the key order.
  std::string s;
  for (bool quotients : {false, true}) {
    for (const auto& f : m) {
      if (static_cast<bool>(quotients_.count(f)) != quotients) continue;
      if (!s.empty()) s += " * ";
      // A quotient among other factors needs parentheses: `m * (n + 1) / 2` would read as
      // `(m * (n + 1)) / 2`, whose exactness differs.
      s += quotients && m.size() > 1 ? "(" + f + ")" : f;
    }
  }
  return s;
}

std::string SizeExpr::to_string() const {
  if (terms_.empty()) return "0";
  // Positive terms, then negative ones, then the constant: `n - k + 1`. When no monomial is
  // positive, a positive constant goes first instead (`5 - n`, not `-n + 5`), so the spelling
  // starts with a minus only when every term is negative (`-n - 1`).
  const bool has_constant = terms_.begin()->first.empty();  // the empty monomial sorts first
  const int64_t constant = has_constant ? terms_.begin()->second : 0;
  std::vector<std::pair<const Monomial*, int64_t>> order;
  for (const auto& [m, c] : terms_) {
    if (!m.empty() && c > 0) order.emplace_back(&m, c);
  }
  const bool constant_first = order.empty() && constant > 0;
  if (constant_first) order.emplace_back(&terms_.begin()->first, constant);
  for (const auto& [m, c] : terms_) {
    if (!m.empty() && c < 0) order.emplace_back(&m, c);
  }
  if (has_constant && !constant_first) order.emplace_back(&terms_.begin()->first, constant);

  std::string s;
  for (size_t i = 0; i < order.size(); ++i) {
    const Monomial& m = *order[i].first;
    int64_t c = order[i].second;
    if (i == 0) {
      if (c < 0) s += "-";
    } else {
      s += c < 0 ? " - " : " + ";
    }
    auto term = [&](uint64_t mag) {
      if (m.empty()) {
        s += std::to_string(mag);
      } else if (mag == 1) {
        s += monomial_to_string(m);
      } else {
        std::string f = monomial_to_string(m);
        if (m.size() == 1 && quotients_.count(m[0])) f = "(" + f + ")";
        s += std::to_string(mag) + " * " + f;
      }
    };
    if (c == INT64_MIN) {
      // |INT64_MIN| is not an integer literal: `- 9223372036854775807 * n - n` instead.
      term(uint64_t{INT64_MAX});
      s += " - ";
      term(1);
    } else {
      term(magnitude(c));
    }
  }
  return s;
}

}  // namespace cot
