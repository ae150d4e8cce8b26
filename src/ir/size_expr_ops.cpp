// Substitution and the linear view of size expressions (declared in size_expr.h), kept apart
// from the normal-form arithmetic in size_expr.cpp.
#include "ir/size_expr.h"

namespace cot {

SizeExpr SizeExpr::substitute(const std::map<std::string, SizeExpr>& by) const {
  SizeExpr out;
  out.poisoned_ = poisoned_;
  for (const auto& [mono, coeff] : terms_) {
    SizeExpr term = SizeExpr::constant(coeff);
    for (const auto& factor : mono) {
      SizeExpr f;
      if (auto q = quotients_.find(factor); q != quotients_.end()) {
        auto d = SizeExpr::divide(q->second.num->substitute(by), q->second.den->substitute(by));
        if (!d) {  // the divisor became zero: keep the poisoned form
          f.poisoned_ = true;
        } else {
          f = *d;
        }
      } else if (auto it = by.find(factor); it != by.end()) {
        f = it->second;
      } else {
        f = SizeExpr::var(factor);
      }
      term = term * f;
    }
    out = out + term;
  }
  return out;
}

std::optional<SizeExpr::Linear> SizeExpr::as_linear() const {
  Linear lin;
  for (const auto& [mono, coeff] : terms_) {
    if (mono.empty()) {
      lin.constant = coeff;
    } else if (mono.size() == 1 && !quotients_.count(mono[0])) {
      lin.terms.emplace_back(mono[0], coeff);
    } else {
      return std::nullopt;
    }
  }
  if (poisoned_) return std::nullopt;
  return lin;
}

}  // namespace cot
