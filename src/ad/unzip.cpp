#include "ad/unzip.h"

#include "ad/clone.h"

namespace cot::ad {

ir::Stmt split_loop(ir::Builder& b, const ir::Stmt& s, const std::vector<bool>& tangent_state,
                    const VarSet& tangent, const UnzipPolicy& /*policy*/) {
  const auto& op = *s.as<ir::LoopOp>();
  ir::Function& f = b.function();
  std::vector<size_t> primal, lin;
  for (size_t k = 0; k < op.state.size(); ++k) (tangent_state[k] ? lin : primal).push_back(k);

  // The primal loop: the body without its tangent statements, saving its states.
  VarSet body_tangent = tangent;
  for (size_t k : lin) body_tangent.insert(op.state[k]);
  ir::LoopOp p;
  p.is_while = op.is_while;
  p.iter = op.is_while ? -1 : f.new_var(f.vars[static_cast<size_t>(op.iter)].name, Type::scalar(Scalar::I64));
  p.count = op.count;
  CloneMap map;
  for (size_t k : primal) {
    p.state.push_back(f.new_var(f.vars[static_cast<size_t>(op.state[k])].name, f.type_of(op.state[k])));
    p.init.push_back(op.init[k]);
    map.atoms[op.state[k]] = ir::Atom::of(p.state.back());
  }
  if (!op.is_while) map.atoms[op.iter] = ir::Atom::of(p.iter);
  ir::Block filtered;
  {
    VarSet t = body_tangent;
    for (const auto& st : op.body.stmts) {
      if (reads_any(st, t)) {
        propagate_stmt(f, st, t);
        continue;
      }
      filtered.stmts.push_back(st);
    }
    for (size_t k : primal) filtered.results.push_back(op.body.results[k]);
  }
  p.body = clone_block(f, filtered, f, map);
  if (op.is_while) {
    CloneMap cmap;
    for (size_t k : primal) cmap.atoms[op.state[k]] = map.atoms.at(op.state[k]);
    p.cond = clone_block(f, op.cond, f, cmap);
  }
  p.saves_states = true;
  const std::string size_name = b.fresh_size_name("T");
  const ir::VarId count = f.new_var(size_name, Type::scalar(Scalar::I64));
  f.size_vars.push_back(ir::SizeVar{size_name, count, -1, {}, 0});
  ir::Stmt ps;
  ps.span = s.span;
  for (size_t k : primal) ps.results.push_back(s.results[k]);
  ps.results.push_back(count);
  std::vector<ir::VarId> stacks;
  for (size_t k : primal) {
    const Type t = f.type_of(op.state[k]);
    std::vector<SizeExpr> shape{SizeExpr::var(size_name)};
    shape.insert(shape.end(), t.shape.begin(), t.shape.end());
    stacks.push_back(f.new_var(f.vars[static_cast<size_t>(op.state[k])].name + "_saved",
                               Type::tensor(t.elem, std::move(shape))));
    ps.results.push_back(stacks.back());
  }
  ps.op = std::move(p);
  b.append(std::move(ps));

  // The linear loop: for k < T, the primal state read from the stacks, the whole body (its
  // primal statements recomputed), yielding the next tangent state.
  ir::LoopOp l;
  l.iter = f.new_var("k", Type::scalar(Scalar::I64));
  l.count = ir::Atom::of(count);
  CloneMap lmap;
  for (size_t k : lin) {
    l.state.push_back(f.new_var(f.vars[static_cast<size_t>(op.state[k])].name, f.type_of(op.state[k])));
    l.init.push_back(op.init[k]);
    lmap.atoms[op.state[k]] = ir::Atom::of(l.state.back());
  }
  l.body = b.region([&] {
    for (size_t j = 0; j < primal.size(); ++j) {
      lmap.atoms[op.state[primal[j]]] = ir::Atom::of(
          b.index(ir::Atom::of(stacks[j]), {ir::computed_index(ir::Atom::of(l.iter))}, s.span));
    }
    if (!op.is_while) lmap.atoms[op.iter] = ir::Atom::of(l.iter);
    ir::Block body = clone_block(f, op.body, f, lmap);
    for (auto& st : body.stmts) b.append(std::move(st));
    std::vector<ir::Atom> next;
    for (size_t k : lin) next.push_back(body.results[k]);
    return next;
  });
  ir::Stmt ls;
  ls.span = s.span;
  for (size_t k : lin) ls.results.push_back(s.results[k]);
  ls.op = std::move(l);
  return ls;
}

}  // namespace cot::ad
