#include "ir/builder.h"

#include <stdexcept>
#include <utility>

namespace cot::ir {

IndexExpr affine_index(Affine a) {
  return IndexExpr{true, std::move(a), {}};
}
IndexExpr computed_index(Atom a) {
  return IndexExpr{false, {}, a};
}

namespace {

[[noreturn]] void misuse(const std::string& what) {
  throw std::logic_error("ir::Builder: " + what);
}

// Keeps the block stack balanced when a region callback throws.
class OpenBlock {
 public:
  OpenBlock(std::vector<Block*>& stack, Block& b) : stack_(stack) { stack_.push_back(&b); }
  ~OpenBlock() { stack_.pop_back(); }
  OpenBlock(const OpenBlock&) = delete;
  OpenBlock& operator=(const OpenBlock&) = delete;

 private:
  std::vector<Block*>& stack_;
};

std::vector<SizeExpr> extents_of(const std::vector<IndexVar>& ivars) {
  std::vector<SizeExpr> out;
  for (const auto& iv : ivars) out.push_back(iv.extent);
  return out;
}

}  // namespace

Builder::Builder(Function& f) : f_(f) {
  blocks_.push_back(&f_.body);
}

void Builder::append(Stmt s) {
  current().stmts.push_back(std::move(s));
}

void Builder::bind_size_vars(int param, const Type& t, std::vector<int>& path) {
  if (t.is_tuple) {
    for (size_t i = 0; i < t.elems.size(); ++i) {
      path.push_back(static_cast<int>(i));
      bind_size_vars(param, t.elems[i], path);
      path.pop_back();
    }
    return;
  }
  for (size_t d = 0; d < t.shape.size(); ++d) {
    auto name = t.shape[d].as_var();
    if (!name) continue;
    bool bound = false;
    for (const auto& sv : f_.size_vars) bound = bound || sv.name == *name;
    if (bound) continue;
    VarId v = f_.new_var(*name, Type::scalar(Scalar::I64));
    f_.size_vars.push_back(SizeVar{*name, v, param, path, static_cast<int>(d)});
  }
}

VarId Builder::param(std::string name, Type type, Span span) {
  VarId v = f_.new_var(std::move(name), type);
  f_.params.push_back(v);
  f_.param_spans.push_back(span);
  std::vector<int> path;
  bind_size_vars(static_cast<int>(f_.params.size() - 1), type, path);
  return v;
}

VarId Builder::size_var(const std::string& name) const {
  for (const auto& sv : f_.size_vars) {
    if (sv.name == name) return sv.var;
  }
  misuse("no size variable " + name);
}

VarId Builder::index_var(std::string name) {
  return f_.new_var(std::move(name), Type::scalar(Scalar::I64));
}

VarId Builder::named(VarId v, std::string name) {
  f_.vars.at(static_cast<size_t>(v)).name = std::move(name);
  return v;
}

std::vector<VarId> Builder::emit(Op op, const std::vector<Type>& result_types, Span span) {
  Stmt s;
  for (const auto& t : result_types) s.results.push_back(f_.new_var("", t));
  s.op = std::move(op);
  s.span = span;
  auto results = s.results;
  current().stmts.push_back(std::move(s));
  return results;
}

Block Builder::region(const RegionFn& body) {
  Block b;
  OpenBlock open(blocks_, b);
  b.results = body();
  return b;
}

VarId Builder::prim(Prim p, std::vector<Atom> args, Span span) {
  std::vector<Scalar> scalars;
  for (const auto& a : args) {
    Type t = type_of(a);
    if (!t.is_scalar()) misuse("primitive operand of type " + t.to_string());
    scalars.push_back(t.elem);
  }
  std::string why;
  auto result = prim_result_type(p, scalars, &why);
  if (!result) misuse(why);
  return emit(PrimOp{p, std::move(args)}, {Type::scalar(*result)}, span)[0];
}

VarId Builder::index(Atom tensor, std::vector<IndexExpr> indices, Span span) {
  Type t = type_of(tensor);
  if (t.is_tuple || t.rank() < indices.size()) {
    misuse("indexing " + t.to_string() + " with " + std::to_string(indices.size()) + " indices");
  }
  std::vector<SizeExpr> rest(t.shape.begin() + static_cast<std::ptrdiff_t>(indices.size()),
                             t.shape.end());
  return emit(IndexOp{tensor, std::move(indices)}, {Type::tensor(t.elem, std::move(rest))},
              span)[0];
}

VarId Builder::gen(std::vector<IndexVar> ivars, const std::function<Atom()>& body, Span span) {
  Block b = region([&] { return std::vector<Atom>{body()}; });
  Type bt = type_of(b.results[0]);
  if (bt.is_tuple) misuse("gen body yields a tuple");
  std::vector<SizeExpr> shape = extents_of(ivars);
  shape.insert(shape.end(), bt.shape.begin(), bt.shape.end());
  return emit(GenOp{std::move(ivars), std::move(b)}, {Type::tensor(bt.elem, std::move(shape))},
              span)[0];
}

VarId Builder::reduce(ReduceKind kind, std::vector<IndexVar> ivars,
                      const std::function<Atom()>& body, Span span) {
  Block b = region([&] { return std::vector<Atom>{body()}; });
  Type bt = type_of(b.results[0]);
  return emit(ReduceOp{kind, std::move(ivars), std::move(b)}, {bt}, span)[0];
}

std::vector<VarId> Builder::guard(Pred pred, const RegionFn& body, Span span) {
  Block b = region(body);
  std::vector<Type> types;
  for (const auto& r : b.results) types.push_back(type_of(r));
  return emit(GuardOp{std::move(pred), std::move(b)}, types, span);
}

std::vector<VarId> Builder::if_(Atom cond, const RegionFn& then_branch, const RegionFn& else_branch,
                                Span span) {
  Block t = region(then_branch);
  Block e = region(else_branch);
  std::vector<Type> types;
  for (const auto& r : t.results) types.push_back(type_of(r));
  return emit(IfOp{cond, std::move(t), std::move(e)}, types, span);
}

namespace {

std::vector<VarId> new_state(Function& f, const std::vector<Atom>& init,
                             const std::vector<std::string>& names) {
  std::vector<VarId> state;
  for (size_t i = 0; i < init.size(); ++i) {
    state.push_back(f.new_var(i < names.size() ? names[i] : "s", atom_type(f, init[i])));
  }
  return state;
}

}  // namespace

std::vector<VarId> Builder::loop_for(std::vector<Atom> init, Atom count, const LoopBodyFn& body,
                                     const std::vector<std::string>& state_names,
                                     std::string iter_name, Span span) {
  LoopOp op;
  op.state = new_state(f_, init, state_names);
  op.iter = f_.new_var(std::move(iter_name), Type::scalar(Scalar::I64));
  op.count = count;
  op.body = region([&] { return body(op.state, op.iter); });
  std::vector<Type> types;
  for (const auto& a : init) types.push_back(type_of(a));
  op.init = std::move(init);
  return emit(std::move(op), types, span);
}

std::vector<VarId> Builder::loop_while(std::vector<Atom> init, const LoopCondFn& cond,
                                       const LoopBodyFn& body,
                                       const std::vector<std::string>& state_names, Span span) {
  LoopOp op;
  op.is_while = true;
  op.state = new_state(f_, init, state_names);
  op.cond = region([&] { return std::vector<Atom>{cond(op.state)}; });
  op.body = region([&] { return body(op.state, -1); });
  std::vector<Type> types;
  for (const auto& a : init) types.push_back(type_of(a));
  op.init = std::move(init);
  return emit(std::move(op), types, span);
}

std::string Builder::fresh_size_name(const std::string& hint) const {
  return ir::fresh_size_name(f_, hint);
}

Builder::SavingLoop Builder::emit_saving(LoopOp op, const std::vector<std::string>& state_names,
                                         Span span) {
  std::vector<Type> types;
  for (const auto& a : op.init) types.push_back(type_of(a));
  for (const auto& t : types) {
    if (t.is_tuple) misuse("a saving loop's state of type " + t.to_string() + " is a tuple");
  }
  const size_t n = types.size();
  SavingLoop out;
  out.size_name = fresh_size_name("T");
  types.push_back(Type::scalar(Scalar::I64));
  for (size_t k = 0; k < n; ++k) {
    std::vector<SizeExpr> shape{SizeExpr::var(out.size_name)};
    shape.insert(shape.end(), types[k].shape.begin(), types[k].shape.end());
    types.push_back(Type::tensor(types[k].elem, std::move(shape)));
  }
  op.saves_states = true;
  out.results = emit(std::move(op), types, span);
  out.final_state.assign(out.results.begin(), out.results.begin() + static_cast<std::ptrdiff_t>(n));
  out.count = out.results[n];
  out.stacks.assign(out.results.begin() + static_cast<std::ptrdiff_t>(n + 1), out.results.end());
  named(out.count, out.size_name);
  for (size_t k = 0; k < n; ++k) {
    named(out.stacks[k], (k < state_names.size() ? state_names[k] : "s") + "_saved");
  }
  // Registered last, so that a body that throws leaves no size variable behind.
  f_.size_vars.push_back(SizeVar{out.size_name, out.count, -1, {}, 0});
  return out;
}

Builder::SavingLoop Builder::loop_for_saving(std::vector<Atom> init, Atom count,
                                             const LoopBodyFn& body,
                                             const std::vector<std::string>& state_names,
                                             std::string iter_name, Span span) {
  LoopOp op;
  op.state = new_state(f_, init, state_names);
  op.iter = f_.new_var(std::move(iter_name), Type::scalar(Scalar::I64));
  op.count = count;
  op.body = region([&] { return body(op.state, op.iter); });
  op.init = std::move(init);
  return emit_saving(std::move(op), state_names, span);
}

Builder::SavingLoop Builder::loop_while_saving(std::vector<Atom> init, const LoopCondFn& cond,
                                               const LoopBodyFn& body,
                                               const std::vector<std::string>& state_names,
                                               Span span) {
  LoopOp op;
  op.is_while = true;
  op.state = new_state(f_, init, state_names);
  op.cond = region([&] { return std::vector<Atom>{cond(op.state)}; });
  op.body = region([&] { return body(op.state, -1); });
  op.init = std::move(init);
  return emit_saving(std::move(op), state_names, span);
}

VarId Builder::accum(std::vector<SizeExpr> shape, std::vector<IndexVar> ivars, const RegionFn& body,
                     Span span) {
  Block b = region(body);
  if (b.results.size() != shape.size() + 1) {
    misuse("accum body must yield " + std::to_string(shape.size()) + " positions and a value");
  }
  Type vt = type_of(b.results.back());
  if (vt.is_tuple) misuse("accum value is a tuple");
  std::vector<SizeExpr> full = shape;
  full.insert(full.end(), vt.shape.begin(), vt.shape.end());
  return emit(AccumOp{std::move(shape), std::move(ivars), std::move(b)},
              {Type::tensor(vt.elem, std::move(full))}, span)[0];
}

VarId Builder::tuple(std::vector<Atom> elems, Span span) {
  std::vector<Type> types;
  for (const auto& a : elems) types.push_back(type_of(a));
  return emit(TupleOp{std::move(elems)}, {Type::tuple(std::move(types))}, span)[0];
}

VarId Builder::proj(Atom tuple, int index, Span span) {
  Type t = type_of(tuple);
  if (!t.is_tuple || index < 0 || static_cast<size_t>(index) >= t.elems.size()) {
    misuse("projection " + std::to_string(index) + " of " + t.to_string());
  }
  Type et = t.elems[static_cast<size_t>(index)];
  return emit(ProjOp{tuple, index}, {std::move(et)}, span)[0];
}

VarId Builder::size(SizeExpr size, Span span) {
  return emit(SizeOp{std::move(size)}, {Type::scalar(Scalar::I64)}, span)[0];
}

VarId Builder::call(std::string callee, std::vector<Atom> args, Type result, Span span) {
  return emit(CallOp{std::move(callee), std::move(args)}, {std::move(result)}, span)[0];
}

void Builder::finish(std::vector<Atom> results) {
  if (blocks_.size() != 1) misuse("finish inside a region");
  if (results.empty()) misuse("a function yields one value");
  Atom r = results.size() == 1 ? results[0] : Atom::of(tuple(std::move(results)));
  f_.body.results = {r};
  f_.result_type = type_of(r);
}

}  // namespace cot::ir
