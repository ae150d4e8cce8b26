// The strong-zero flow of a function (ir/strong_zero_flow.h). The rules follow the
// interpreter's propagation (interp/eval_prim.cpp, eval_regions.cpp, eval_index.cpp): a guard
// yields strong zeros; products with one, quotients and negations of one, and sums of them
// and of literal zeros are ones; a read gives back what was stored; generators, sums, accums,
// loops (their states and saved states), ifs, tuples and calls carry them.
#include "ir/strong_zero_flow.h"

#include <cmath>
#include <type_traits>
#include <variant>

#include "ir/regions.h"

namespace cot::ir {

namespace {

class Flow {
 public:
  Flow(const Function& f, bool results_seen) : f_(f) {
    out_.whole.assign(f.vars.size(), 0);
    out_.elems.assign(f.vars.size(), 0);
    out_.read.assign(f.vars.size(), 0);
    if (results_seen) {
      for (const Atom& r : f.body.results) set_read(r, true);
    }
  }

  StrongZeroFlow run() {
    do {
      changed_ = false;
      block(f_.body);
    } while (changed_);
    return std::move(out_);
  }

 private:
  bool whole(const Atom& a) const { return a.is_var && out_.may_be_whole(a.var); }
  bool elems(const Atom& a) const { return a.is_var && out_.may_have_elems(a.var); }
  bool any(const Atom& a) const { return whole(a) || elems(a); }
  static bool zero_literal(const Atom& a) {
    return !a.is_var && is_real(a.lit.type) && a.lit.real == 0.0;
  }
  void set(std::vector<uint8_t>& xs, VarId v, bool on) {
    if (!on || v < 0 || static_cast<size_t>(v) >= xs.size() || xs[static_cast<size_t>(v)]) return;
    xs[static_cast<size_t>(v)] = 1;
    changed_ = true;
  }
  void set_whole(VarId v, bool on) { set(out_.whole, v, on); }
  bool read(VarId v) const { return out_.may_be_read(v); }
  // What flows into a read value is read too.
  void set_read(const Atom& a, bool on) {
    if (a.is_var) set(out_.read, a.var, on);
  }
  void set_elems(VarId v, bool on) { set(out_.elems, v, on); }
  // v gets whatever atom a may carry.
  void flow(VarId v, const Atom& a) {
    set_whole(v, whole(a));
    set_elems(v, elems(a));
  }

  void block(const Block& b) {
    for (const Stmt& s : b.stmts) stmt(s);
  }

  void stmt(const Stmt& s) {
    for_each_region(s, [&](const Block& b) { block(b); });
    std::visit([&](const auto& op) { this->op(s, op); }, s.op);
  }

  void op(const Stmt& s, const PrimOp& p) {
    auto arg = [&](size_t k) { return k < p.args.size() && whole(p.args[k]); };
    auto zero_or = [&](size_t k) {
      return arg(k) || (k < p.args.size() && zero_literal(p.args[k]));
    };
    bool on = false;
    switch (p.prim) {
      case Prim::Mul:
        on = arg(0) || arg(1);
        break;
      case Prim::Div:
      case Prim::Neg:
        on = arg(0);
        break;
      case Prim::Add:
      case Prim::Sub:
        on = (arg(0) || arg(1)) && zero_or(0) && zero_or(1);
        break;
      default:
        break;
    }
    set_whole(s.results[0], on);
    // Whose mask can change a value: a factor of a product with anything that may be infinite
    // or NaN (not a finite literal, not the factor itself: z * z is 0 either way), a dividend
    // over anything but a finite nonzero literal, and whatever the result's mask reaches.
    const bool result_seen = read(s.results[0]);
    auto finite = [](const Atom& a, bool nonzero) {
      return !a.is_var && is_real(a.lit.type) && std::isfinite(a.lit.real) &&
             (!nonzero || a.lit.real != 0.0);
    };
    auto same = [](const Atom& a, const Atom& b) { return a.is_var && b.is_var && a.var == b.var; };
    if (p.args.empty()) return;
    switch (p.prim) {
      case Prim::Mul:
        if (p.args.size() == 2) {
          for (size_t k = 0; k < 2; ++k) {
            const Atom& other = p.args[1 - k];
            set_read(p.args[k], result_seen || !(finite(other, false) || same(other, p.args[k])));
          }
        }
        break;
      case Prim::Div:
        if (p.args.size() == 2) set_read(p.args[0], result_seen || !finite(p.args[1], true));
        break;
      case Prim::Neg:
      case Prim::Add:
      case Prim::Sub:
        for (const Atom& a : p.args) set_read(a, result_seen);
        break;
      default:
        break;  // no other primitive passes a mask on
    }
  }
  void op(const Stmt& s, const IndexOp& ix) {
    if (!ix.tensor.is_var) return;
    set_read(ix.tensor, read(s.results[0]));  // an element's (or a slice's) mask is seen
    if (ix.indices.size() < f_.type_of(ix.tensor.var).rank()) {
      flow(s.results[0], ix.tensor);  // a slice keeps the whole strong zero and the marks
      return;
    }
    set_whole(s.results[0], any(ix.tensor));  // an element: strong where either says so
  }
  void op(const Stmt& s, const GenOp& g) {
    if (!g.body.results.empty()) {
      set_elems(s.results[0], any(g.body.results[0]));
      set_read(g.body.results[0], read(s.results[0]));
    }
  }
  void op(const Stmt& s, const ReduceOp& r) {
    if (r.kind != ReduceKind::Sum || r.body.results.empty()) return;
    set_whole(s.results[0], whole(r.body.results[0]));
    set_elems(s.results[0], any(r.body.results[0]));
    set_read(r.body.results[0], read(s.results[0]));
  }
  void op(const Stmt& s, const GuardOp& g) {
    for (size_t k = 0; k < s.results.size(); ++k) {
      set_whole(s.results[k], true);
      if (k < g.body.results.size()) {
        set_elems(s.results[k], any(g.body.results[k]));
        set_read(g.body.results[k], read(s.results[k]));
      }
    }
  }
  void op(const Stmt& s, const LoopOp& l) {
    const size_t n = l.state.size();
    for (size_t k = 0; k < n; ++k) {
      if (k < l.init.size()) flow(l.state[k], l.init[k]);
      if (k < l.body.results.size()) flow(l.state[k], l.body.results[k]);
      const Atom state = Atom::of(l.state[k]);
      if (k < s.results.size()) flow(s.results[k], state);
      if (l.saves_states && n + 1 + k < s.results.size()) {
        set_elems(s.results[n + 1 + k], any(state));
        set_read(state, read(s.results[n + 1 + k]));
      }
      if (k < s.results.size()) set_read(state, read(s.results[k]));
      const bool state_read = read(l.state[k]);
      if (k < l.init.size()) set_read(l.init[k], state_read);
      if (k < l.body.results.size()) set_read(l.body.results[k], state_read);
    }
  }
  void op(const Stmt& s, const IfOp& i) {
    for (size_t k = 0; k < s.results.size(); ++k) {
      if (k < i.then_branch.results.size()) {
        flow(s.results[k], i.then_branch.results[k]);
        set_read(i.then_branch.results[k], read(s.results[k]));
      }
      if (k < i.else_branch.results.size()) {
        flow(s.results[k], i.else_branch.results[k]);
        set_read(i.else_branch.results[k], read(s.results[k]));
      }
    }
  }
  void op(const Stmt& s, const AccumOp& a) {
    if (!a.body.results.empty()) {
      set_elems(s.results[0], any(a.body.results.back()));
      set_read(a.body.results.back(), read(s.results[0]));
    }
  }
  void op(const Stmt& s, const TupleOp& t) {
    for (const Atom& e : t.elems) {
      flow(s.results[0], e);
      set_read(e, read(s.results[0]));
    }
  }
  void op(const Stmt& s, const ProjOp& p) {
    flow(s.results[0], p.tuple);
    set_read(p.tuple, read(s.results[0]));
  }
  void op(const Stmt&, const SizeOp&) {}
  void op(const Stmt& s, const CallOp& c) {
    // The callee is not looked at: it may read its arguments, and its result may be anything.
    for (const Atom& a : c.args) set_read(a, true);
    set_whole(s.results[0], true);
    set_elems(s.results[0], true);
  }

  const Function& f_;
  StrongZeroFlow out_;
  bool changed_ = false;
};

}  // namespace

StrongZeroFlow strong_zero_flow(const Function& f, bool results_seen) {
  return Flow(f, results_seen).run();
}

}  // namespace cot::ir
