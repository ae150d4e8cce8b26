#include "ad/unzip.h"

#include "ad/residuals.h"
#include "ad/tangent.h"
#include "ir/clone.h"
#include "prims/prim.h"

namespace cot::ad {

namespace {

// The statements of `block` that compute primal values, given the tangents `t`: tangent
// statements are dropped, and a loop that carries both keeps only its primal state. `t` grows
// by the tangents of the block (activity is monotone, so the caller's set can take them).
ir::Block primal_part(const ir::Function& f, const ir::Block& block, VarSet& t) {
  ir::Block out;
  out.results = block.results;
  for (const auto& st : block.stmts) {
    if (!reads_any(st, t)) {
      out.stmts.push_back(st);
      continue;
    }
    const auto* l = st.as<ir::LoopOp>();
    if (l == nullptr) {
      propagate_stmt(f, st, t);
      continue;
    }
    // t grows to the loop's fixpoint: its active states and what they reach in the body.
    std::vector<bool> flags = loop_state_activity(f, *l, t);
    ir::LoopOp p;
    p.is_while = l->is_while;
    p.iter = l->iter;
    p.count = l->count;
    p.cond = l->cond;
    ir::Stmt ps;
    ps.span = st.span;
    for (size_t k = 0; k < l->state.size(); ++k) {
      if (flags[k]) continue;
      p.state.push_back(l->state[k]);
      p.init.push_back(l->init[k]);
      ps.results.push_back(st.results[k]);
    }
    p.body = primal_part(f, l->body, t);
    p.body.results.clear();
    for (size_t k = 0; k < l->state.size(); ++k) {
      if (!flags[k]) p.body.results.push_back(l->body.results[k]);
    }
    // A saving loop (a reverse-mode primal differentiated again) keeps saving: its count and
    // the stacks of its primal states are primal values that later statements read.
    if (l->saves_states) {
      const size_t n = l->state.size();
      p.saves_states = true;
      ps.results.push_back(st.results[n]);
      for (size_t k = 0; k < n; ++k) {
        if (!flags[k]) ps.results.push_back(st.results[n + 1 + k]);
      }
    }
    mark_loop_results(st, flags, t);
    if (p.state.empty()) continue;
    ps.op = std::move(p);
    out.stmts.push_back(std::move(ps));
  }
  return out;
}

// The type of a saving loop's stack of values of type t: [T] ++ t's shape.
Type stack_type(const Type& t, const std::string& count_size) {
  std::vector<SizeExpr> shape{SizeExpr::var(count_size)};
  shape.insert(shape.end(), t.shape.begin(), t.shape.end());
  return Type::tensor(t.elem, std::move(shape));
}

}  // namespace

namespace {

// split_loop's steps, in the order run() takes them; each binds the variables the next read.
class LoopSplitter {
 public:
  LoopSplitter(ir::Builder& b, const ir::Stmt& s, const std::vector<bool>& tangent_state,
               VarSet& tangent, const UnzipPolicy& policy)
      : b_(b), f_(b.function()), s_(s), op_(*s.as<ir::LoopOp>()), body_tangent_(tangent) {
    for (size_t k = 0; k < op_.state.size(); ++k) {
      (tangent_state[k] ? lin_ : primal_).push_back(k);
    }
    for (size_t k : lin_) body_tangent_.insert(op_.state[k]);
    save_costly_ = policy.save_costly_values && !op_.saves_states;
  }

  std::vector<ir::Stmt> run() {
    choose_saved_values();
    emit_primal_loop(primal_loop());
    ir::LoopOp l = linear_loop();
    std::vector<ir::Stmt> out(1);
    out[0].span = s_.span;
    for (size_t k : lin_) out[0].results.push_back(s_.results[k]);
    if (op_.saves_states) add_tangent_stacks(l, out);
    out[0].op = std::move(l);
    return out;
  }

 private:
  void choose_saved_values();
  ir::LoopOp primal_loop();
  void bind_count();
  void emit_primal_loop(ir::LoopOp p);
  ir::LoopOp linear_loop();
  std::vector<ir::Atom> linear_body(ir::VarId iter, ir::CloneMap& lmap);
  std::vector<ir::VarId> read_saved_values(ir::VarId iter);
  void add_tangent_stacks(ir::LoopOp& l, std::vector<ir::Stmt>& out);

  ir::Builder& b_;
  ir::Function& f_;
  const ir::Stmt& s_;
  const ir::LoopOp& op_;
  VarSet& body_tangent_;
  bool save_costly_ = false;
  std::vector<size_t> primal_, lin_;  // positions of the primal and the tangent state
  ir::Block combined_;                // the body, its costly values exposed
  std::vector<size_t> saved_;         // positions in combined_ of the values saved
  std::vector<ir::VarId> saved_vars_;
  std::vector<ir::Atom> saved_init_;
  std::string size_name_;  // the primal loop's count T, as a size and as a variable
  ir::VarId count_ = -1;
  std::vector<ir::VarId> stacks_;  // per primal state: its stack
  std::vector<ir::VarId> saved_finals_, saved_stacks_;
};

// Costly values the linear part reads are saved as extra states of the primal loop, which
// binds them at the end of each iteration: the value of iteration k is on the stack at k + 1,
// or, for the last iteration, the final state. (A loop that already saves is left alone.)
void LoopSplitter::choose_saved_values() {
  combined_ = op_.body;
  if (save_costly_) {
    std::vector<Type> primal_types;
    primal_types.reserve(primal_.size());
    for (size_t k : primal_) primal_types.push_back(f_.type_of(op_.state[k]));
    combined_ = expose_costly_values(f_, combined_, body_tangent_, primal_types);
    saved_ = costly_residuals(f_, combined_, body_tangent_, primal_types);
  }
  for (size_t i : saved_) {
    saved_vars_.push_back(combined_.stmts[i].results[0]);
    saved_init_.push_back(zeros(b_, f_.type_of(saved_vars_.back())));
  }
}

// The primal loop: the body without its tangent statements, saving its states.
ir::LoopOp LoopSplitter::primal_loop() {
  ir::LoopOp p;
  p.is_while = op_.is_while;
  p.iter = op_.is_while
               ? -1
               : f_.new_var(f_.vars[static_cast<size_t>(op_.iter)].name, Type::scalar(Scalar::I64));
  p.count = op_.count;
  ir::CloneMap map;
  for (size_t k : primal_) {
    p.state.push_back(
        f_.new_var(f_.vars[static_cast<size_t>(op_.state[k])].name, f_.type_of(op_.state[k])));
    p.init.push_back(op_.init[k]);
    map.atoms[op_.state[k]] = ir::Atom::of(p.state.back());
  }
  for (size_t j = 0; j < saved_vars_.size(); ++j) {
    const ir::VarId v = saved_vars_[j];
    p.state.push_back(f_.new_var(f_.vars[static_cast<size_t>(v)].name, f_.type_of(v)));
    p.init.push_back(saved_init_[j]);
  }
  if (!op_.is_while) map.atoms[op_.iter] = ir::Atom::of(p.iter);
  ir::Block filtered = primal_part(f_, combined_, body_tangent_);
  filtered.results.clear();
  for (size_t k : primal_) filtered.results.push_back(op_.body.results[k]);
  for (ir::VarId v : saved_vars_) filtered.results.push_back(ir::Atom::of(v));
  p.body = ir::clone_block(f_, filtered, f_, map);
  if (op_.is_while) {
    ir::CloneMap cmap;
    for (size_t k : primal_) cmap.atoms[op_.state[k]] = map.atoms.at(op_.state[k]);
    p.cond = ir::clone_block(f_, op_.cond, f_, cmap);
  }
  p.saves_states = true;
  return p;
}

// A loop that already saves (a reverse-mode primal differentiated again) keeps its count
// and primal stacks: the primal loop binds them.
void LoopSplitter::bind_count() {
  if (op_.saves_states) {
    count_ = s_.results[op_.state.size()];
    for (const auto& sv : f_.size_vars) {
      if (sv.param == -1 && sv.var == count_) size_name_ = sv.name;
    }
  } else {
    size_name_ = b_.fresh_size_name("T");
    count_ = f_.new_var(size_name_, Type::scalar(Scalar::I64));
    f_.size_vars.push_back(ir::SizeVar{size_name_, count_, -1, {}, 0});
  }
}

// Emits the primal loop, binding the primal results of s, the saved values' final states, the
// count and the stacks.
void LoopSplitter::emit_primal_loop(ir::LoopOp p) {
  const size_t n = op_.state.size();
  bind_count();
  ir::Stmt ps;
  ps.span = s_.span;
  for (size_t k : primal_) ps.results.push_back(s_.results[k]);
  for (ir::VarId v : saved_vars_) {
    saved_finals_.push_back(f_.new_var(f_.vars[static_cast<size_t>(v)].name, f_.type_of(v)));
    ps.results.push_back(saved_finals_.back());
  }
  ps.results.push_back(count_);
  for (size_t k : primal_) {
    if (op_.saves_states) {
      stacks_.push_back(s_.results[n + 1 + k]);
    } else {
      stacks_.push_back(f_.new_var(f_.vars[static_cast<size_t>(op_.state[k])].name + "_saved",
                                   stack_type(f_.type_of(op_.state[k]), size_name_)));
    }
    ps.results.push_back(stacks_.back());
  }
  for (ir::VarId v : saved_vars_) {
    saved_stacks_.push_back(f_.new_var(f_.vars[static_cast<size_t>(v)].name + "_saved",
                                       stack_type(f_.type_of(v), size_name_)));
    ps.results.push_back(saved_stacks_.back());
  }
  ps.op = std::move(p);
  b_.append(std::move(ps));
}

// The linear loop: for k < T, the primal state read from the stacks, the whole body (its
// primal statements recomputed), yielding the next tangent state.
ir::LoopOp LoopSplitter::linear_loop() {
  ir::LoopOp l;
  l.iter = f_.new_var("k", Type::scalar(Scalar::I64));
  l.count = ir::Atom::of(count_);
  ir::CloneMap lmap;
  for (size_t k : lin_) {
    l.state.push_back(
        f_.new_var(f_.vars[static_cast<size_t>(op_.state[k])].name, f_.type_of(op_.state[k])));
    l.init.push_back(op_.init[k]);
    lmap.atoms[op_.state[k]] = ir::Atom::of(l.state.back());
  }
  l.body = b_.region([&] { return linear_body(l.iter, lmap); });
  return l;
}

std::vector<ir::Atom> LoopSplitter::linear_body(ir::VarId iter, ir::CloneMap& lmap) {
  for (size_t j = 0; j < primal_.size(); ++j) {
    lmap.atoms[op_.state[primal_[j]]] = ir::Atom::of(
        b_.index(ir::Atom::of(stacks_[j]), {ir::computed_index(ir::Atom::of(iter))}, s_.span));
  }
  if (!op_.is_while) lmap.atoms[op_.iter] = ir::Atom::of(iter);
  ir::Block source = combined_;
  if (!saved_.empty()) {
    const std::vector<ir::VarId> values = read_saved_values(iter);
    for (size_t j = 0; j < saved_.size(); ++j) lmap.atoms[saved_vars_[j]] = ir::Atom::of(values[j]);
    for (size_t j = saved_.size(); j-- > 0;) {
      source.stmts.erase(source.stmts.begin() + static_cast<std::ptrdiff_t>(saved_[j]));
    }
  }
  ir::Block body = ir::clone_block(f_, source, f_, lmap);
  for (auto& st : body.stmts) b_.append(std::move(st));
  std::vector<ir::Atom> next;
  for (size_t k : lin_) next.push_back(body.results[k]);
  return next;
}

// The saved values of iteration `iter`: on the stacks at iter + 1, or the final states.
std::vector<ir::VarId> LoopSplitter::read_saved_values(ir::VarId iter) {
  const ir::VarId next = b_.prim(Prim::Add, {ir::Atom::of(iter), ir::Atom::i64(1)}, s_.span);
  const ir::VarId on_stack = b_.prim(Prim::Lt, {ir::Atom::of(next), ir::Atom::of(count_)}, s_.span);
  auto from_stacks = [&] {
    std::vector<ir::Atom> read;
    for (ir::VarId stack : saved_stacks_) {
      read.push_back(ir::Atom::of(
          b_.index(ir::Atom::of(stack), {ir::computed_index(ir::Atom::of(next))}, s_.span)));
    }
    return read;
  };
  auto final_states = [&] {
    std::vector<ir::Atom> last;
    for (ir::VarId v : saved_finals_) last.push_back(ir::Atom::of(v));
    return last;
  };
  return b_.if_(ir::Atom::of(on_stack), from_stacks, final_states, s_.span);
}

// The tangent stacks: the linear loop saves too (stacking is linear), with its own count
// T' (== T at run time); each original tangent stack is a copy typed with T.
void LoopSplitter::add_tangent_stacks(ir::LoopOp& l, std::vector<ir::Stmt>& out) {
  const size_t n = op_.state.size();
  l.saves_states = true;
  const std::string lname = b_.fresh_size_name("T");
  const ir::VarId lcount = f_.new_var(lname, Type::scalar(Scalar::I64));
  f_.size_vars.push_back(ir::SizeVar{lname, lcount, -1, {}, 0});
  out[0].results.push_back(lcount);
  for (size_t k : lin_) {
    const ir::VarId orig = s_.results[n + 1 + k];
    const ir::VarId mine = f_.new_var(f_.vars[static_cast<size_t>(orig)].name,
                                      stack_type(f_.type_of(op_.state[k]), lname));
    out[0].results.push_back(mine);
    ir::Stmt copy;
    copy.span = s_.span;
    copy.results = {orig};
    const ir::VarId at = f_.new_var("k", Type::scalar(Scalar::I64));
    ir::GenOp g;
    g.ivars = {ir::IndexVar{at, SizeExpr::var(size_name_)}};
    g.body = b_.region([&] {
      return std::vector<ir::Atom>{
          ir::Atom::of(b_.index(ir::Atom::of(mine), {ir::affine_index(Affine::var(at))}, s_.span))};
    });
    copy.op = std::move(g);
    out.push_back(std::move(copy));
  }
}

}  // namespace

std::vector<ir::Stmt> split_loop(ir::Builder& b, const ir::Stmt& s,
                                 const std::vector<bool>& tangent_state, VarSet& tangent,
                                 const UnzipPolicy& policy) {
  return LoopSplitter(b, s, tangent_state, tangent, policy).run();
}

namespace {

// The segmented form of the combined loop `s` (see checkpoint_loops).
ir::Stmt segmented(ir::Builder& b, const ir::Stmt& s, const UnzipPolicy& policy) {
  const auto& op = *s.as<ir::LoopOp>();
  ir::Function& f = b.function();
  auto state_like = [&](const std::vector<ir::VarId>& like) {
    std::vector<ir::VarId> out;
    for (ir::VarId v : like)
      out.push_back(f.new_var(f.vars[static_cast<size_t>(v)].name, f.type_of(v)));
    return out;
  };
  ir::LoopOp outer;
  outer.is_while = op.is_while;
  outer.init = op.init;
  outer.state = state_like(op.state);
  ir::Atom k = ir::Atom::i64(policy.checkpoint_every > 0 ? policy.checkpoint_every : 64);
  if (!op.is_while) {
    outer.iter = f.new_var("seg", Type::scalar(Scalar::I64));
    if (policy.checkpoint_every <= 0) {
      ir::Atom root =
          ir::Atom::of(b.prim(Prim::Sqrt, {ir::Atom::of(b.prim(Prim::ToF64, {op.count}))}));
      k = ir::Atom::of(
          b.prim(Prim::Add, {ir::Atom::of(b.prim(Prim::ToI64, {root})), ir::Atom::i64(1)}));
    }
    ir::Atom last = ir::Atom::of(
        b.prim(Prim::Add, {op.count, ir::Atom::of(b.prim(Prim::Sub, {k, ir::Atom::i64(1)}))}));
    outer.count = ir::Atom::of(b.prim(Prim::FloorDiv, {last, k}));
  } else {
    ir::CloneMap cmap;
    for (size_t j = 0; j < op.state.size(); ++j)
      cmap.atoms[op.state[j]] = ir::Atom::of(outer.state[j]);
    outer.cond = ir::clone_block(f, op.cond, f, cmap);
  }
  outer.body = b.region([&] {
    std::vector<ir::Atom> init;
    for (ir::VarId v : outer.state) init.push_back(ir::Atom::of(v));
    auto body = [&](const std::vector<ir::VarId>& st, ir::VarId u) {
      ir::CloneMap map;
      for (size_t j = 0; j < op.state.size(); ++j) map.atoms[op.state[j]] = ir::Atom::of(st[j]);
      if (!op.is_while) {
        map.atoms[op.iter] = ir::Atom::of(b.prim(
            Prim::Add,
            {ir::Atom::of(b.prim(Prim::Mul, {ir::Atom::of(outer.iter), k})), ir::Atom::of(u)}));
      }
      ir::Block copy = ir::clone_block(f, op.body, f, map);
      for (auto& x : copy.stmts) b.append(std::move(x));
      std::vector<ir::Atom> next = copy.results;
      if (op.is_while) {
        next.push_back(
            ir::Atom::of(b.prim(Prim::Add, {ir::Atom::of(st.back()), ir::Atom::i64(1)})));
      }
      return next;
    };
    std::vector<ir::VarId> inner;
    if (!op.is_while) {
      ir::Atom start = ir::Atom::of(b.prim(Prim::Mul, {ir::Atom::of(outer.iter), k}));
      ir::Atom left = ir::Atom::of(b.prim(Prim::Sub, {op.count, start}));
      ir::Atom len = ir::Atom::of(b.prim(Prim::Min, {k, left}));
      inner = b.loop_for(init, len, body, {}, "u", s.span);
    } else {
      init.push_back(ir::Atom::i64(0));
      inner = b.loop_while(
          init,
          [&](const std::vector<ir::VarId>& st) {
            ir::CloneMap cmap;
            for (size_t j = 0; j < op.state.size(); ++j)
              cmap.atoms[op.state[j]] = ir::Atom::of(st[j]);
            ir::Block c = ir::clone_block(f, op.cond, f, cmap);
            for (auto& x : c.stmts) b.append(std::move(x));
            ir::Atom more = ir::Atom::of(b.prim(Prim::Lt, {ir::Atom::of(st.back()), k}));
            return ir::Atom::of(b.prim(Prim::And, {c.results[0], more}));
          },
          [&](const std::vector<ir::VarId>& st, ir::VarId) { return body(st, -1); }, {}, s.span);
      inner.pop_back();
    }
    std::vector<ir::Atom> out;
    for (ir::VarId v : inner) out.push_back(ir::Atom::of(v));
    return out;
  });
  ir::Stmt out;
  out.results = s.results;
  out.span = s.span;
  out.op = std::move(outer);
  return out;
}

}  // namespace

ir::Block checkpoint_loops(ir::Builder& b, ir::Block block, const VarSet& tangent,
                           const UnzipPolicy& policy) {
  if (policy.loop_states != UnzipPolicy::LoopStates::Checkpoint) return block;
  ir::Block out;
  out.results = block.results;
  VarSet t = tangent;
  for (auto& s : block.stmts) {
    const auto* l = s.as<ir::LoopOp>();
    if (l == nullptr || !reads_any(s, t)) {
      propagate_stmt(b.function(), s, t);
      out.stmts.push_back(std::move(s));
      continue;
    }
    ir::Block scratch = b.region([&] {
      b.append(segmented(b, s, policy));
      return std::vector<ir::Atom>{};
    });
    propagate_stmt(b.function(), s, t);
    for (auto& x : scratch.stmts) out.stmts.push_back(std::move(x));
  }
  return out;
}

}  // namespace cot::ad
