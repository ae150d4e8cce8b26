#include "ir/size_affine.h"

namespace cot::ir {

std::optional<Affine> size_affine(const Function& f, const SizeExpr& e) {
  if (e.poisoned()) return std::nullopt;
  auto lin = e.as_linear();
  if (!lin) return std::nullopt;
  Affine a = Affine::constant(lin->constant);
  for (const auto& [name, c] : lin->terms) {
    VarId var = -1;
    for (const auto& sv : f.size_vars) {
      if (sv.name == name) var = sv.var;
    }
    if (var < 0) return std::nullopt;
    auto s = Affine::add(a, Affine::var(var, c));
    if (!s) return std::nullopt;
    a = *s;
  }
  return a;
}

}  // namespace cot::ir
