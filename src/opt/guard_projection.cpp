#include "opt/guard_projection.h"

#include <algorithm>
#include <utility>

#include "index/fourier_motzkin.h"

namespace cot::opt {

bool add_range_constraints(const ir::Function& f, ir::VarId v, const SizeExpr& extent,
                           std::vector<Affine>& constraints) {
  auto e = size_affine(f, extent);
  auto e1 = e ? Affine::add(*e, Affine::constant(-1)) : std::nullopt;
  auto upper = e1 ? Affine::sub(*e1, Affine::var(v)) : std::nullopt;
  if (!upper) return false;
  constraints.push_back(Affine::var(v));
  constraints.push_back(*upper);
  return true;
}

std::optional<ProjectedGuard> project_constraints(
    std::vector<Affine> cs, const std::vector<ir::VarId>& eliminated, const IndexFacts& known,
    const std::function<bool(ir::VarId)>& kept,
    const std::function<bool(ir::VarId)>& bound_inside) {
  for (ir::VarId v : eliminated) {
    std::vector<Affine> lower, upper, rest;
    for (const auto& c : cs) {
      Affine t = fm::tighten(c);
      if (t.is_constant()) {
        if (t.constant_term() < 0) return std::nullopt;  // never satisfied
        continue;
      }
      const int64_t k = t.coeff(v);
      if (k != 0 && k != 1 && k != -1) return std::nullopt;
      (k == 1 ? lower : k == -1 ? upper : rest).push_back(std::move(t));
    }
    if (lower.size() * upper.size() + rest.size() > fm::kMaxConstraints) return std::nullopt;
    cs = std::move(rest);
    for (const auto& lo : lower) {
      for (const auto& hi : upper) {
        auto c = Affine::add(lo, hi);
        if (!c) return std::nullopt;
        cs.push_back(*c);
      }
    }
  }
  // Those the facts and the others left do not prove.
  std::vector<Affine> left;
  for (const auto& c : cs) {
    Affine t = fm::tighten(c);
    if (t.is_constant()) {
      if (t.constant_term() < 0) return std::nullopt;
      continue;
    }
    if (!known.proves(t) && std::find(left.begin(), left.end(), t) == left.end()) {
      left.push_back(std::move(t));
    }
  }
  for (size_t i = left.size(); i-- > 0;) {
    IndexFacts others = known;
    for (size_t j = 0; j < left.size(); ++j) {
      if (j != i) others.add(left[j]);
    }
    if (others.proves(left[i])) left.erase(left.begin() + static_cast<long>(i));
  }
  ProjectedGuard out;
  for (const auto& t : left) {
    bool inner = false;
    for (const auto& [v, k] : t.terms()) {
      if (kept(v)) {
        inner = true;
      } else if (bound_inside(v)) {
        return std::nullopt;
      }
    }
    (inner ? out.inner : out.outer).push_back(Pred::ge0(t));
  }
  return out;
}

}  // namespace cot::opt
