#include "ir/binders.h"

#include "ir/match.h"
#include "ir/regions.h"

namespace cot::ir {

void for_each_direct_binder(const Op& op, const std::function<void(VarId)>& bind) {
  auto ivars = [&](const std::vector<IndexVar>& ivs) {
    for (const auto& iv : ivs) bind(iv.var);
  };
  auto none = [](const auto& /*op*/) {};
  match(
      op, [&](const GenOp& o) { ivars(o.ivars); }, [&](const ReduceOp& o) { ivars(o.ivars); },
      [&](const AccumOp& o) { ivars(o.ivars); },
      [&](const LoopOp& o) {
        for (VarId v : o.state) bind(v);
        if (o.iter >= 0) bind(o.iter);
      },
      [&](const PrimOp& o) { none(o); }, [&](const IndexOp& o) { none(o); },
      [&](const GuardOp& o) { none(o); }, [&](const IfOp& o) { none(o); },
      [&](const TupleOp& o) { none(o); }, [&](const ProjOp& o) { none(o); },
      [&](const SizeOp& o) { none(o); }, [&](const CallOp& o) { none(o); });
}

void for_each_binder(const Stmt& s, const std::function<void(VarId)>& bind) {
  for (VarId r : s.results) bind(r);
  for_each_direct_binder(s.op, bind);
  for_each_region(s, [&](const Block& b) { for_each_binder(b, bind); });
}

void for_each_binder(const Block& b, const std::function<void(VarId)>& bind) {
  for (const auto& s : b.stmts) for_each_binder(s, bind);
}

}  // namespace cot::ir
