// Lowering: window splits, the schedule choice for generators whose body is a sum of one
// guard (index-set splitting at the borders a sliding window clips). Interchanged sums are a
// loop-IR pass (interchange_sums.h).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"
#include "ir/regions.h"

namespace cot::codegen::lowering {

std::vector<std::vector<int64_t>> Lowerer::window_splits(const ir::GenOp& op,
                                                         const std::vector<ExprP>& ext) {
  std::vector<std::vector<int64_t>> out(op.ivars.size());
  if (op.body.stmts.size() != 1) return {};
  const auto* red = op.body.stmts[0].as<ir::ReduceOp>();
  if (red == nullptr || red->kind != ir::ReduceKind::Sum) return {};
  const Pred* p = single_guard(red->body, 0);
  if (p == nullptr) return {};
  const std::vector<const Pred*> conj = conjuncts(*p);
  bool any = false;
  for (const Pred* c : conj) {
    if (c->kind != Pred::Kind::Ge0) continue;
    for (const ir::IndexVar& iv : red->ivars) {
      const int64_t a = c->expr.coeff(iv.var);
      if (a != 1 && a != -1) continue;
      auto extent = iv.extent.eval([&](const std::string& n) -> std::optional<int64_t> {
        auto it = ints_.sizes.find(n);
        return it == ints_.sizes.end() ? std::nullopt : as_i64(it->second);
      });
      if (!extent) continue;
      // rest = b * g + c0 with g one generator index; other variables must be literals here
      // (sizes of this specialization).
      std::optional<Affine> rest = Affine::add(c->expr, Affine::var(iv.var, -a));
      if (!rest) continue;
      int64_t c0 = rest->constant_term();
      ir::VarId g = -1;
      int64_t b = 0;
      bool simple = true;
      for (const auto& [v, coeff] : rest->terms()) {
        const auto& x = env_.vals.at(static_cast<size_t>(v));
        std::optional<int64_t> lit =
            x && x->kind == Val::Kind::Scalar ? as_i64(x->scalar) : std::nullopt;
        int64_t term = 0;
        if (lit && !__builtin_mul_overflow(coeff, *lit, &term) &&
            !__builtin_add_overflow(c0, term, &c0)) {
          continue;
        }
        simple = simple && g == -1 && !lit;
        g = v;
        b = coeff;
      }
      if (!simple || g == -1 || (b != 1 && b != -1)) continue;
      for (size_t k = 0; k < op.ivars.size(); ++k) {
        if (op.ivars[k].var != g || !as_i64(ext[k])) continue;
        // a = 1: i >= -(b g + c0), clipped by 0; a = -1: i <= b g + c0, clipped by E - 1.
        const int64_t root = a == 1 ? -c0 * b : (*extent - 1 - c0) * b;
        out[k].push_back(root);
        out[k].push_back(root + 1);
        any = true;
      }
    }
  }
  if (!any) return {};
  for (auto& v : out) {
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    if (v.size() > 4) v.clear();  // not a window: keep one loop
  }
  return out;
}

}  // namespace cot::codegen::lowering
