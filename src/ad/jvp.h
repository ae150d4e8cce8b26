// Forward mode (design.md §7.2): a structural pass over Core IR that emits, after each
// statement whose value depends on the active inputs, the statement's tangent, using the
// primitive table's rules. Inactive statements get no tangent code (symbolic zeros).
//
// The primal statements are emitted as they are (same variables). A region's tangent is a
// separate region that recomputes the primal body (fresh variables) next to the tangent code,
// so every emitted statement computes either primal values or tangents, never both: the unzip
// and the transposer rely on this. The one exception is a loop whose state becomes active: its
// state is extended with the tangents (a "combined" loop), which unzip splits for reverse mode.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ad/rules.h"
#include "ad/tangent.h"
#include "ir/builder.h"
#include "ir/ir.h"

namespace cot::ad {

class Jvp {
 public:
  Jvp(ir::Builder& b, RuleBook& rules) : b_(b), rules_(rules) {}
  // Emits the statements of `block` (whose variables must be bound nowhere else in the
  // function) and their tangents; `tan` holds the tangents of free variables (absent: zero) and
  // receives those of the block's variables. Returns the tangents of the block's results.
  std::vector<Tangent> run(ir::Block block, TangentMap& tan);

 private:
  Tangent of(const ir::Atom& a, const TangentMap& tan) const;
  bool active(const ir::Block& region, const TangentMap& tan) const;
  // A fresh copy of `region` whose index variables `from` are renamed to `to`.
  ir::Block fresh(const ir::Block& region, const std::vector<ir::IndexVar>& from,
                  const std::vector<ir::IndexVar>& to);
  std::vector<ir::IndexVar> fresh_ivars(const std::vector<ir::IndexVar>& ivars);
  // The tangent body of a gen or sum: a fresh copy of `body` (index variables `from` renamed
  // to `to`) with its tangent code, yielding the tangent; nullopt when the tangent is zero.
  std::optional<ir::Block> tangent_body(const ir::Block& body,
                                        const std::vector<ir::IndexVar>& from,
                                        const std::vector<ir::IndexVar>& to, TangentMap& tan);

  void stmt(const ir::Stmt& s, TangentMap& tan);
  void prim(const ir::Stmt& s, const ir::PrimOp& op, TangentMap& tan);
  void gen(const ir::Stmt& s, const ir::GenOp& op, TangentMap& tan);
  void reduce(const ir::Stmt& s, const ir::ReduceOp& op, TangentMap& tan);
  void reduce_extremum(const ir::Stmt& s, const ir::ReduceOp& op, TangentMap& tan);
  void guard(const ir::Stmt& s, const ir::GuardOp& op, TangentMap& tan);
  void if_(const ir::Stmt& s, const ir::IfOp& op, TangentMap& tan);
  void accum(const ir::Stmt& s, const ir::AccumOp& op, TangentMap& tan);
  void loop(const ir::Stmt& s, const ir::LoopOp& op, TangentMap& tan);
  // Materialized tangents of a region's results (for region ops with several results); a
  // symbolic zero becomes strong zeros when `strong` (a branch of an if that does not depend on
  // the input: its tangent is exactly zero, so a non-finite partial later does not make NaN).
  std::vector<ir::Atom> region_tangents(ir::Block body, TangentMap& tan,
                                        const std::vector<ir::VarId>& results, bool* any,
                                        bool strong = false);

  ir::Builder& b_;
  RuleBook& rules_;
};

// The jvp of a call-free function: parameters (params..., one tangent per active parameter),
// result (value, tangent of the result).
ir::Function jvp_function(const ir::Function& f, const std::vector<int>& wrt, RuleBook& rules,
                          const std::string& name);

}  // namespace cot::ad
