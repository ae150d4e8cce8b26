#include "ad/linearity.h"

#include "ir/match.h"
#include "ir/printer.h"
#include "prims/prim.h"

namespace cot::ad {
namespace {

class LinearityChecker {
 public:
  LinearityChecker(const ir::Program& p, const ir::Function& f, VarSet tangent)
      : program_(p), f_(f), tangent_(std::move(tangent)) {}

  void block(const ir::Block& b) {
    for (const auto& s : b.stmts) stmt(s);
  }
  std::vector<std::string> take() { return std::move(violations_); }

 private:
  bool is_t(const ir::Atom& a) const { return a.is_var && tangent_.count(a.var) > 0; }
  void violation(const ir::Stmt& s, const std::string& what) {
    violations_.push_back(what + ": " + ir::print_stmt(program_, f_, s));
  }
  void pred(const ir::Stmt& s, const Pred& p) {
    std::vector<int32_t> vs;
    p.collect_vars(vs);
    for (int32_t v : vs) {
      if (tangent_.count(v)) violation(s, "a tangent in a predicate");
    }
  }
  void index(const ir::Stmt& s, const ir::IndexExpr& ix) {
    if (ix.is_affine) {
      for (const auto& [v, c] : ix.affine.terms()) {
        (void)c;
        if (tangent_.count(v)) violation(s, "a tangent as an index");
      }
    } else if (is_t(ix.computed)) {
      violation(s, "a tangent as an index");
    }
  }
  // Marks the statement's results as tangents when it reads any.
  void mark(const ir::Stmt& s) {
    if (!reads_any(s, tangent_)) return;
    for (ir::VarId r : s.results) {
      if (has_tangent(f_.type_of(r))) tangent_.insert(r);
    }
  }

  // A loop's state is a tangent where loop_state_activity says so; it marks its tangent results
  // itself (stmt does not mark a loop).
  void loop(const ir::Stmt& s, const ir::LoopOp& op) {
    if (is_t(op.count)) violation(s, "a tangent as a trip count");
    VarSet before = tangent_;
    std::vector<bool> act = loop_state_activity(f_, op, tangent_);
    tangent_ = before;
    for (size_t k = 0; k < op.state.size(); ++k) {
      if (act[k]) tangent_.insert(op.state[k]);
    }
    block(op.cond);
    if (!op.cond.results.empty() && is_t(op.cond.results[0])) {
      violation(s, "a tangent in a loop condition");
    }
    block(op.body);
    for (size_t k = 0; k < op.state.size() && k < s.results.size(); ++k) {
      if (act[k]) tangent_.insert(s.results[k]);
    }
  }

  void stmt(const ir::Stmt& s) {
    ir::match(
        s.op,
        [&](const ir::PrimOp& op) {
          const PrimInfo& info = prim_info(op.prim);
          int tangents = 0;
          for (size_t k = 0; k < op.args.size(); ++k) {
            if (!is_t(op.args[k])) continue;
            ++tangents;
            if (!info.linear[k]) {
              violation(s, "`" + std::string(info.name) + "` of a tangent in operand " +
                               std::to_string(k + 1));
            }
          }
          if (op.prim == Prim::Mul && tangents > 1) violation(s, "a product of two tangents");
        },
        [&](const ir::IndexOp& op) {
          for (const auto& ix : op.indices) index(s, ix);
        },
        [&](const ir::GenOp& op) { block(op.body); },
        [&](const ir::AccumOp& op) {
          block(op.body);
          for (size_t k = 0; k + 1 < op.body.results.size(); ++k) {
            if (is_t(op.body.results[k])) violation(s, "a tangent as an accum position");
          }
        },
        [&](const ir::ReduceOp& op) {
          block(op.body);
          if (op.kind != ast::ReduceKind::Sum && !op.body.results.empty() &&
              is_t(op.body.results[0])) {
            violation(s, "a max or min reduction of a tangent");
          }
        },
        [&](const ir::GuardOp& op) {
          pred(s, op.pred);
          block(op.body);
        },
        [&](const ir::IfOp& op) {
          if (is_t(op.cond)) violation(s, "a tangent as an `if` condition");
          block(op.then_branch);
          block(op.else_branch);
        },
        [&](const ir::LoopOp& op) { loop(s, op); },
        [&](const ir::CallOp& op) {
          for (const auto& a : op.args) {
            if (is_t(a)) violation(s, "a call with a tangent argument (calls are inlined first)");
          }
        },
        [](const ir::TupleOp& /*op*/) {}, [](const ir::ProjOp& /*op*/) {},
        [](const ir::SizeOp& /*op*/) {});
    if (!s.as<ir::LoopOp>()) mark(s);  // a loop marks its tangent state results itself
  }

  const ir::Program& program_;
  const ir::Function& f_;
  VarSet tangent_;
  std::vector<std::string> violations_;
};

}  // namespace

std::vector<std::string> linearity_violations(const ir::Program& program, const ir::Function& f,
                                              const ir::Block& block, VarSet tangent) {
  LinearityChecker c(program, f, std::move(tangent));
  c.block(block);
  return c.take();
}

}  // namespace cot::ad
