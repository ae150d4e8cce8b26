#include "ad/unzip.h"

#include "ir/clone.h"
#include "ad/residuals.h"
#include "ad/tangent.h"
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

std::vector<ir::Stmt> split_loop(ir::Builder& b, const ir::Stmt& s,
                                 const std::vector<bool>& tangent_state, VarSet& tangent,
                                 const UnzipPolicy& policy) {
  const auto& op = *s.as<ir::LoopOp>();
  ir::Function& f = b.function();
  std::vector<size_t> primal, lin;
  for (size_t k = 0; k < op.state.size(); ++k) (tangent_state[k] ? lin : primal).push_back(k);

  // The primal loop: the body without its tangent statements, saving its states.
  VarSet& body_tangent = tangent;
  for (size_t k : lin) body_tangent.insert(op.state[k]);
  // Costly values the linear part reads are saved as extra states of the primal loop, which
  // binds them at the end of each iteration: the value of iteration k is on the stack at k + 1,
  // or, for the last iteration, the final state. (A loop that already saves is left alone.)
  ir::Block combined = op.body;
  std::vector<size_t> saved;
  if (policy.save_costly_values && !op.saves_states) {
    std::vector<Type> primal_types;
    primal_types.reserve(primal.size());
    for (size_t k : primal) primal_types.push_back(f.type_of(op.state[k]));
    combined = expose_costly_values(f, combined, body_tangent, primal_types);
    saved = costly_residuals(f, combined, body_tangent, primal_types);
  }
  std::vector<ir::VarId> saved_vars;
  std::vector<ir::Atom> saved_init;
  for (size_t i : saved) {
    saved_vars.push_back(combined.stmts[i].results[0]);
    saved_init.push_back(zeros(b, f.type_of(saved_vars.back())));
  }
  ir::LoopOp p;
  p.is_while = op.is_while;
  p.iter = op.is_while
               ? -1
               : f.new_var(f.vars[static_cast<size_t>(op.iter)].name, Type::scalar(Scalar::I64));
  p.count = op.count;
  ir::CloneMap map;
  for (size_t k : primal) {
    p.state.push_back(
        f.new_var(f.vars[static_cast<size_t>(op.state[k])].name, f.type_of(op.state[k])));
    p.init.push_back(op.init[k]);
    map.atoms[op.state[k]] = ir::Atom::of(p.state.back());
  }
  for (size_t j = 0; j < saved_vars.size(); ++j) {
    const ir::VarId v = saved_vars[j];
    p.state.push_back(f.new_var(f.vars[static_cast<size_t>(v)].name, f.type_of(v)));
    p.init.push_back(saved_init[j]);
  }
  if (!op.is_while) map.atoms[op.iter] = ir::Atom::of(p.iter);
  ir::Block filtered = primal_part(f, combined, body_tangent);
  filtered.results.clear();
  for (size_t k : primal) filtered.results.push_back(op.body.results[k]);
  for (ir::VarId v : saved_vars) filtered.results.push_back(ir::Atom::of(v));
  p.body = ir::clone_block(f, filtered, f, map);
  if (op.is_while) {
    ir::CloneMap cmap;
    for (size_t k : primal) cmap.atoms[op.state[k]] = map.atoms.at(op.state[k]);
    p.cond = ir::clone_block(f, op.cond, f, cmap);
  }
  p.saves_states = true;
  // A loop that already saves (a reverse-mode primal differentiated again) keeps its count
  // and primal stacks: the primal loop binds them.
  const size_t n = op.state.size();
  std::string size_name;
  ir::VarId count = -1;
  if (op.saves_states) {
    count = s.results[n];
    for (const auto& sv : f.size_vars) {
      if (sv.param == -1 && sv.var == count) size_name = sv.name;
    }
  } else {
    size_name = b.fresh_size_name("T");
    count = f.new_var(size_name, Type::scalar(Scalar::I64));
    f.size_vars.push_back(ir::SizeVar{size_name, count, -1, {}, 0});
  }
  ir::Stmt ps;
  ps.span = s.span;
  for (size_t k : primal) ps.results.push_back(s.results[k]);
  std::vector<ir::VarId> saved_finals, saved_stacks;
  for (ir::VarId v : saved_vars) {
    saved_finals.push_back(f.new_var(f.vars[static_cast<size_t>(v)].name, f.type_of(v)));
    ps.results.push_back(saved_finals.back());
  }
  ps.results.push_back(count);
  std::vector<ir::VarId> stacks;
  for (size_t k : primal) {
    if (op.saves_states) {
      stacks.push_back(s.results[n + 1 + k]);
    } else {
      stacks.push_back(f.new_var(f.vars[static_cast<size_t>(op.state[k])].name + "_saved",
                                 stack_type(f.type_of(op.state[k]), size_name)));
    }
    ps.results.push_back(stacks.back());
  }
  for (ir::VarId v : saved_vars) {
    saved_stacks.push_back(f.new_var(f.vars[static_cast<size_t>(v)].name + "_saved",
                                     stack_type(f.type_of(v), size_name)));
    ps.results.push_back(saved_stacks.back());
  }
  ps.op = std::move(p);
  b.append(std::move(ps));

  // The linear loop: for k < T, the primal state read from the stacks, the whole body (its
  // primal statements recomputed), yielding the next tangent state.
  ir::LoopOp l;
  l.iter = f.new_var("k", Type::scalar(Scalar::I64));
  l.count = ir::Atom::of(count);
  ir::CloneMap lmap;
  for (size_t k : lin) {
    l.state.push_back(
        f.new_var(f.vars[static_cast<size_t>(op.state[k])].name, f.type_of(op.state[k])));
    l.init.push_back(op.init[k]);
    lmap.atoms[op.state[k]] = ir::Atom::of(l.state.back());
  }
  l.body = b.region([&] {
    for (size_t j = 0; j < primal.size(); ++j) {
      lmap.atoms[op.state[primal[j]]] = ir::Atom::of(
          b.index(ir::Atom::of(stacks[j]), {ir::computed_index(ir::Atom::of(l.iter))}, s.span));
    }
    if (!op.is_while) lmap.atoms[op.iter] = ir::Atom::of(l.iter);
    ir::Block source = combined;
    if (!saved.empty()) {
      const ir::VarId next = b.prim(Prim::Add, {ir::Atom::of(l.iter), ir::Atom::i64(1)}, s.span);
      const ir::VarId on_stack =
          b.prim(Prim::Lt, {ir::Atom::of(next), ir::Atom::of(count)}, s.span);
      const auto values = b.if_(
          ir::Atom::of(on_stack),
          [&] {
            std::vector<ir::Atom> read;
            for (ir::VarId stack : saved_stacks) {
              read.push_back(ir::Atom::of(
                  b.index(ir::Atom::of(stack), {ir::computed_index(ir::Atom::of(next))}, s.span)));
            }
            return read;
          },
          [&] {
            std::vector<ir::Atom> last;
            for (ir::VarId v : saved_finals) last.push_back(ir::Atom::of(v));
            return last;
          },
          s.span);
      for (size_t j = 0; j < saved.size(); ++j) lmap.atoms[saved_vars[j]] = ir::Atom::of(values[j]);
      for (size_t j = saved.size(); j-- > 0;) {
        source.stmts.erase(source.stmts.begin() + static_cast<std::ptrdiff_t>(saved[j]));
      }
    }
    ir::Block body = ir::clone_block(f, source, f, lmap);
    for (auto& st : body.stmts) b.append(std::move(st));
    std::vector<ir::Atom> next;
    for (size_t k : lin) next.push_back(body.results[k]);
    return next;
  });
  std::vector<ir::Stmt> out(1);
  out[0].span = s.span;
  for (size_t k : lin) out[0].results.push_back(s.results[k]);
  if (op.saves_states) {
    // The tangent stacks: the linear loop saves too (stacking is linear), with its own count
    // T' (== T at run time); each original tangent stack is a copy typed with T.
    l.saves_states = true;
    const std::string lname = b.fresh_size_name("T");
    const ir::VarId lcount = f.new_var(lname, Type::scalar(Scalar::I64));
    f.size_vars.push_back(ir::SizeVar{lname, lcount, -1, {}, 0});
    out[0].results.push_back(lcount);
    for (size_t k : lin) {
      const ir::VarId orig = s.results[n + 1 + k];
      const ir::VarId mine = f.new_var(f.vars[static_cast<size_t>(orig)].name,
                                       stack_type(f.type_of(op.state[k]), lname));
      out[0].results.push_back(mine);
      ir::Stmt copy;
      copy.span = s.span;
      copy.results = {orig};
      const ir::VarId at = f.new_var("k", Type::scalar(Scalar::I64));
      ir::GenOp g;
      g.ivars = {ir::IndexVar{at, SizeExpr::var(size_name)}};
      g.body = b.region([&] {
        return std::vector<ir::Atom>{
            ir::Atom::of(b.index(ir::Atom::of(mine), {ir::affine_index(Affine::var(at))}, s.span))};
      });
      copy.op = std::move(g);
      out.push_back(std::move(copy));
    }
  }
  out[0].op = std::move(l);
  return out;
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
