#include "opt/fold_literal_choices.h"

#include <utility>
#include <vector>

#include "ir/regions.h"
#include "prims/prim.h"

namespace cot::opt {

void fold_literal_choices(ir::Block& b, Substitution& renamed, FoldSelects selects) {
  std::vector<ir::Stmt> out;
  out.reserve(b.stmts.size());
  for (auto& s : b.stmts) {
    if (auto* i = s.as<ir::IfOp>(); i != nullptr && !i->cond.is_var) {
      ir::Block& taken = i->cond.lit.boolean ? i->then_branch : i->else_branch;
      fold_literal_choices(taken, renamed, selects);
      for (auto& t : taken.stmts) out.push_back(std::move(t));
      for (size_t k = 0; k < s.results.size(); ++k) renamed[s.results[k]] = taken.results[k];
      continue;
    }
    if (auto* p = s.as<ir::PrimOp>(); selects == FoldSelects::Yes && p != nullptr &&
                                      p->prim == Prim::Select && p->args.size() == 3 &&
                                      !p->args[0].is_var) {
      renamed[s.results[0]] = p->args[p->args[0].lit.boolean ? 1 : 2];
      continue;
    }
    ir::for_each_region(s, [&](ir::Block& r) { fold_literal_choices(r, renamed, selects); });
    out.push_back(std::move(s));
  }
  b.stmts = std::move(out);
}

}  // namespace cot::opt
