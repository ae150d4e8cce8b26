#include "ir/index_facts.h"

#include "index/fourier_motzkin.h"
#include "ir/size_affine.h"

namespace cot::ir {

void IndexFacts::add_range(const Function& f, VarId v, const SizeExpr& extent) {
  ranges_.emplace_back(v, extent);
  constraints_.push_back(Affine::var(v));
  if (auto e = size_affine(f, extent)) {
    // extent - 1 - v >= 0
    if (auto d = Affine::sub(*e, Affine::var(v))) {
      if (auto d1 = Affine::add(*d, Affine::constant(-1))) constraints_.push_back(*d1);
    }
  }
}

void IndexFacts::add_pred(const Pred& p) {
  switch (p.kind) {
    case Pred::Kind::Ge0:
      constraints_.push_back(p.expr);
      break;
    case Pred::Kind::Eq0:
      constraints_.push_back(p.expr);
      if (auto n = Affine::scale(p.expr, -1)) constraints_.push_back(*n);
      break;
    case Pred::Kind::False:
      constraints_.push_back(Affine::constant(-1));
      break;
    case Pred::Kind::And:
      for (const auto& k : p.kids) add_pred(k);
      break;
    default:
      break;
  }
}

void IndexFacts::add_sizes(const Function& f) {
  for (const auto& sv : f.size_vars) {
    if (sv.var >= 0) constraints_.push_back(Affine::var(sv.var));
  }
}

bool IndexFacts::proves(const Affine& c) const {
  if (c.is_constant()) return c.constant_term() >= 0;
  return fm::implies(constraints_, c);
}

bool IndexFacts::proves_in_range(const Function& f, const Affine& a, const SizeExpr& extent) const {
  // A bare index variable of an enclosing range with this very extent.
  if (a.constant_term() == 0 && a.terms().size() == 1 && a.terms()[0].second == 1) {
    for (const auto& [v, ext] : ranges_) {
      if (v == a.terms()[0].first && ext == extent) return true;
    }
  }
  if (!proves(a)) return false;
  auto e = size_affine(f, extent);
  if (!e) return false;
  auto d = Affine::sub(*e, a);
  if (!d) return false;
  auto d1 = Affine::add(*d, Affine::constant(-1));
  return d1 && proves(*d1);
}

void IndexFacts::add_frame(const Function& f, const RegionFrame& fr) {
  switch (fr.kind) {
    case RegionFrame::Kind::Index:
      for (const auto& iv : fr.ivars) add_range(f, iv.var, iv.extent);
      break;
    case RegionFrame::Kind::Guard:
      add_pred(fr.pred);
      break;
    case RegionFrame::Kind::ForBody:
      if (fr.iter >= 0) {
        add(Affine::var(fr.iter));
        // count - 1 - iter >= 0
        Affine c =
            fr.count.is_var ? Affine::var(fr.count.var) : Affine::constant(fr.count.lit.integer);
        auto d = Affine::sub(c, Affine::var(fr.iter));
        if (d) {
          if (auto d1 = Affine::add(*d, Affine::constant(-1))) add(*d1);
        }
      }
      break;
    default:
      break;
  }
}

IndexFacts facts_of(const Function& f, const std::vector<RegionFrame>& frames) {
  IndexFacts facts;
  facts.add_sizes(f);
  for (const auto& fr : frames) facts.add_frame(f, fr);
  return facts;
}

}  // namespace cot::ir
