// A one-time check per function that every variable id the IR mentions names a slot of the
// function's variable table. The verifier guarantees this for checked IR; checking it here too
// turns a compiler bug into an error message instead of an out-of-bounds access.
#include <cstdint>
#include <string>
#include <vector>

#include "interp/machine.h"

namespace cot::interp {

namespace {

class IdChecker {
 public:
  explicit IdChecker(const ir::Function& f) : n_(f.vars.size()) {}

  bool ok() const { return bad_ == kNone; }
  int64_t bad() const { return bad_; }

  void var(ir::VarId v) {
    if (v < 0 || static_cast<size_t>(v) >= n_) bad_ = v;
  }
  void optional_var(ir::VarId v) {
    if (v != -1) var(v);
  }
  void atom(const ir::Atom& a) {
    if (a.is_var) var(a.var);
  }
  void affine(const Affine& e) {
    for (const auto& [v, c] : e.terms()) var(v);
  }
  void pred(const Pred& p) {
    std::vector<int32_t> vs;
    p.collect_vars(vs);
    for (int32_t v : vs) var(v);
  }
  void ivars(const std::vector<ir::IndexVar>& ivs) {
    for (const ir::IndexVar& iv : ivs) var(iv.var);
  }
  void block(const ir::Block& b) {
    for (const ir::Stmt& s : b.stmts) stmt(s);
    for (const ir::Atom& a : b.results) atom(a);
  }
  void stmt(const ir::Stmt& s) {
    for (ir::VarId v : s.results) var(v);
    std::visit([this](const auto& op) { this->op(op); }, s.op);
  }

 private:
  void op(const ir::PrimOp& o) {
    for (const ir::Atom& a : o.args) atom(a);
  }
  void op(const ir::IndexOp& o) {
    atom(o.tensor);
    for (const ir::IndexExpr& e : o.indices) {
      if (e.is_affine) {
        affine(e.affine);
      } else {
        atom(e.computed);
      }
    }
  }
  void op(const ir::GenOp& o) {
    ivars(o.ivars);
    block(o.body);
  }
  void op(const ir::ReduceOp& o) {
    ivars(o.ivars);
    block(o.body);
  }
  void op(const ir::GuardOp& o) {
    pred(o.pred);
    block(o.body);
  }
  void op(const ir::LoopOp& o) {
    for (const ir::Atom& a : o.init) atom(a);
    for (ir::VarId v : o.state) var(v);
    if (!o.is_while) {
      optional_var(o.iter);
      atom(o.count);
    }
    block(o.cond);
    block(o.body);
  }
  void op(const ir::IfOp& o) {
    atom(o.cond);
    block(o.then_branch);
    block(o.else_branch);
  }
  void op(const ir::AccumOp& o) {
    ivars(o.ivars);
    block(o.body);
  }
  void op(const ir::TupleOp& o) {
    for (const ir::Atom& a : o.elems) atom(a);
  }
  void op(const ir::ProjOp& o) { atom(o.tuple); }
  void op(const ir::SizeOp&) {}
  void op(const ir::CallOp& o) {
    for (const ir::Atom& a : o.args) atom(a);
  }

  static constexpr int64_t kNone = INT64_MIN;
  size_t n_;
  int64_t bad_ = kNone;
};

}  // namespace

bool Machine::check_var_ids(const ir::Function& fn) {
  if (ids_checked_.contains(&fn)) return true;
  IdChecker c(fn);
  for (ir::VarId v : fn.params) c.var(v);
  for (const ir::SizeVar& sv : fn.size_vars) c.optional_var(sv.var);
  c.block(fn.body);
  if (!c.ok()) {
    return internal(fn.span, "function " + fn.name + " mentions variable #" +
                                 std::to_string(c.bad()) + ", which it does not declare");
  }
  ids_checked_.insert(&fn);
  return true;
}

}  // namespace cot::interp
