// The nested regions (blocks) of a statement, in a fixed order.
#pragma once

#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ir/ir.h"
#include "ir/match.h"

namespace cot::ir {

// What opens a block, as walkers see it: the function's body, the index variables of a
// generator, reduction or scatter-add, a guard's predicate (it holds inside), a branch of an
// if, a for-loop's body (its counter and trip count), a while-loop's condition or body.
struct RegionFrame {
  enum class Kind { Body, Index, Guard, IfBranch, ForBody, WhileBody, WhileCond };
  Kind kind = Kind::Body;
  std::vector<IndexVar> ivars;  // Index: the gen/reduce/accum index variables
  Pred pred;                    // Guard: its predicate (holds inside)
  VarId iter = -1;              // ForBody: the counter
  Atom count;                   // ForBody: the trip count
};

// Calls fn(frame, block) for every region of a statement, in evaluation order (a while-loop's
// condition before its body, an if's then-branch before its else-branch). The one place that
// knows where each Op kind keeps its regions: a new kind fails to compile here (ir/match.h).
// Works on const and non-const statements.
template <class StmtT, class Fn>
void for_each_region_in(StmtT& s, Fn&& fn) {
  using K = RegionFrame::Kind;
  auto index = [&](auto& o) {
    RegionFrame fr;
    fr.kind = K::Index;
    fr.ivars = o.ivars;
    fn(std::as_const(fr), o.body);
  };
  auto none = [](const auto& /*leaf*/) {};
  match(
      s.op, [&](LikeConst<StmtT, PrimOp>& o) { none(o); },
      [&](LikeConst<StmtT, IndexOp>& o) { none(o); }, [&](LikeConst<StmtT, GenOp>& o) { index(o); },
      [&](LikeConst<StmtT, ReduceOp>& o) { index(o); },
      [&](LikeConst<StmtT, AccumOp>& o) { index(o); },
      [&](LikeConst<StmtT, GuardOp>& o) {
        RegionFrame fr;
        fr.kind = K::Guard;
        fr.pred = o.pred;
        fn(std::as_const(fr), o.body);
      },
      [&](LikeConst<StmtT, LoopOp>& o) {
        RegionFrame fr;
        if (o.is_while) {
          fr.kind = K::WhileCond;
          fn(std::as_const(fr), o.cond);
          fr.kind = K::WhileBody;
        } else {
          fr.kind = K::ForBody;
          fr.iter = o.iter;
          fr.count = o.count;
        }
        fn(std::as_const(fr), o.body);
      },
      [&](LikeConst<StmtT, IfOp>& o) {
        RegionFrame fr;
        fr.kind = K::IfBranch;
        fn(std::as_const(fr), o.then_branch);
        fn(std::as_const(fr), o.else_branch);
      },
      [&](LikeConst<StmtT, TupleOp>& o) { none(o); }, [&](LikeConst<StmtT, ProjOp>& o) { none(o); },
      [&](LikeConst<StmtT, SizeOp>& o) { none(o); }, [&](LikeConst<StmtT, CallOp>& o) { none(o); });
}

// Calls fn(block) for every region of a statement, in the order of for_each_region_in.
template <class StmtT, class Fn>
void for_each_region(StmtT& s, Fn&& fn) {
  for_each_region_in(s, [&](const RegionFrame& /*frame*/, auto& b) { fn(b); });
}

// Calls fn(stmt) for every statement of a block and of the regions nested in it, each before
// the statements of its own regions.
template <class BlockT, class Fn>
void for_each_stmt(BlockT& b, Fn&& fn) {
  for (auto& s : b.stmts) {
    fn(s);
    for_each_region(s, [&](auto& r) { for_each_stmt(r, fn); });
  }
}

// The first statement, in the order of for_each_stmt, for which pred(stmt) holds; nullptr when
// none does. The statements after it are not looked at.
template <class Pred>
const Stmt* find_stmt(const Block& b, Pred&& pred) {
  for (const auto& s : b.stmts) {
    if (pred(s)) return &s;
    const Stmt* found = nullptr;
    for_each_region(s, [&](const Block& r) {
      if (found == nullptr) found = find_stmt(r, pred);
    });
    if (found != nullptr) return found;
  }
  return nullptr;
}

// The index variables and the body of a gen or reduce statement; nullptr for other statements.
inline const std::vector<IndexVar>* index_vars_of(const Stmt& s) {
  if (const auto* g = s.as<GenOp>()) return &g->ivars;
  if (const auto* r = s.as<ReduceOp>()) return &r->ivars;
  return nullptr;
}
inline Block* index_body_of(Stmt& s) {
  if (auto* g = s.as<GenOp>()) return &g->body;
  if (auto* r = s.as<ReduceOp>()) return &r->body;
  return nullptr;
}
inline const Block* index_body_of(const Stmt& s) {
  return index_body_of(const_cast<Stmt&>(s));
}

}  // namespace cot::ir
