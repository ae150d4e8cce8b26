#include "ad/jvp.h"

#include <stdexcept>

#include "ad/activity.h"
#include "ad/derive.h"
#include "ir/clone.h"
#include "ir/match.h"
#include "prims/prim.h"

namespace cot::ad {
namespace {

// The number of positions of `ivars` (the product of their extents), an i64.
ir::Atom position_count(ir::Builder& b, const std::vector<ir::IndexVar>& ivars) {
  ir::Atom total = ir::Atom::i64(1);
  for (const auto& iv : ivars) {
    total = ir::Atom::of(b.prim(Prim::Mul, {total, ir::Atom::of(b.size(iv.extent))}));
  }
  return total;
}

// The row-major position of `ivars` in their ranges and the number of positions, i64s.
std::pair<ir::Atom, ir::Atom> flat_position(ir::Builder& b,
                                            const std::vector<ir::IndexVar>& ivars) {
  ir::Atom pos = ir::Atom::i64(0);
  ir::Atom total = ir::Atom::i64(1);
  for (const auto& iv : ivars) {
    ir::Atom ext = ir::Atom::of(b.size(iv.extent));
    pos = ir::Atom::of(
        b.prim(Prim::Add, {ir::Atom::of(b.prim(Prim::Mul, {pos, ext})), ir::Atom::of(iv.var)}));
    total = ir::Atom::of(b.prim(Prim::Mul, {total, ext}));
  }
  return {pos, total};
}

// Applies `scalar` elementwise over a value of shape `shape` (the atoms given are tensors of
// that shape, or scalars when the shape is empty).
ir::Atom elementwise(ir::Builder& b, const std::vector<SizeExpr>& shape,
                     const std::vector<ir::Atom>& operands,
                     const std::function<ir::Atom(const std::vector<ir::Atom>&)>& scalar) {
  if (shape.empty()) return scalar(operands);
  return ir::Atom::of(gen_over(b, shape, "p", [&](const std::vector<ir::VarId>& vars) {
    std::vector<ir::Atom> elems;
    for (const auto& o : operands) elems.push_back(ir::Atom::of(b.index(o, index_at(vars))));
    return scalar(elems);
  }));
}

}  // namespace

Tangent Jvp::of(const ir::Atom& a, const TangentMap& tan) const {
  if (!a.is_var) return Tangent::zero();
  auto it = tan.find(a.var);
  return it == tan.end() ? Tangent::zero() : it->second;
}

bool Jvp::active(const ir::Block& region, const TangentMap& tan) const {
  for (ir::VarId v : free_vars(region)) {
    auto it = tan.find(v);
    if (it != tan.end() && !it->second.is_zero()) return true;
  }
  return false;
}

std::vector<ir::IndexVar> Jvp::fresh_ivars(const std::vector<ir::IndexVar>& ivars) {
  std::vector<ir::IndexVar> out;
  for (const auto& iv : ivars) {
    out.push_back(ir::IndexVar{b_.index_var(b_.function().vars[static_cast<size_t>(iv.var)].name),
                               iv.extent});
  }
  return out;
}

ir::Block Jvp::fresh(const ir::Block& region, const std::vector<ir::IndexVar>& from,
                     const std::vector<ir::IndexVar>& to) {
  ir::CloneMap map;
  for (size_t k = 0; k < from.size(); ++k) map.atoms[from[k].var] = ir::Atom::of(to[k].var);
  ir::Function& f = b_.function();
  return ir::clone_block(f, region, f, map);
}

std::vector<Tangent> Jvp::run(ir::Block block, TangentMap& tan) {
  for (auto& s : block.stmts) stmt(s, tan);
  std::vector<Tangent> out;
  for (const auto& r : block.results) out.push_back(of(r, tan));
  return out;
}

void Jvp::stmt(const ir::Stmt& s, TangentMap& tan) {
  if (const auto* l = s.as<ir::LoopOp>()) {
    loop(s, *l, tan);
    return;
  }
  b_.append(s);
  ir::match(
      s.op, [&](const ir::PrimOp& op) { prim(s, op, tan); },
      [&](const ir::IndexOp& op) {
        Tangent t = of(op.tensor, tan);
        if (t.is_zero()) return;
        ir::Atom ta = materialize(b_, t, b_.type_of(op.tensor));
        tan[s.results[0]] = Tangent::value(ir::Atom::of(b_.index(ta, op.indices, s.span)));
      },
      [&](const ir::GenOp& op) { gen(s, op, tan); },
      [&](const ir::ReduceOp& op) { reduce(s, op, tan); },
      [&](const ir::GuardOp& op) { guard(s, op, tan); },
      [&](const ir::IfOp& op) { if_(s, op, tan); },
      [&](const ir::AccumOp& op) { accum(s, op, tan); },
      [&](const ir::TupleOp& op) {
        Tangent t;
        t.kind = Tangent::Kind::Tuple;
        for (const auto& e : op.elems) t.elems.push_back(of(e, tan));
        if (!t.is_zero()) tan[s.results[0]] = std::move(t);
      },
      [&](const ir::ProjOp& op) {
        Tangent t = of(op.tuple, tan);
        if (t.is_zero()) return;
        if (t.kind == Tangent::Kind::Tuple) {
          Tangent e = t.elems.at(static_cast<size_t>(op.index));
          if (!e.is_zero()) tan[s.results[0]] = e;
        } else {
          tan[s.results[0]] = Tangent::value(ir::Atom::of(b_.proj(t.atom, op.index, s.span)));
        }
      },
      [&](const ir::CallOp& op) {
        throw std::logic_error("ad: call of " + op.callee + " left after inlining");
      },
      [](const ir::SizeOp& /*op*/) {},   // integers have no tangent
      [](const ir::LoopOp& /*op*/) {});  // handled above: a loop is not appended as it is
}

void Jvp::prim(const ir::Stmt& s, const ir::PrimOp& op, TangentMap& tan) {
  const ir::VarId r = s.results[0];
  const Type rt = b_.function().type_of(r);
  if (!is_real(rt.elem)) return;
  const PrimInfo& info = prim_info(op.prim);
  if (op.prim == Prim::Select) {
    Tangent ta = of(op.args[1], tan), tb = of(op.args[2], tan);
    if (ta.is_zero() && tb.is_zero()) return;
    // As for an if: the side that does not depend on the input has a strong zero tangent.
    auto side = [&](const Tangent& t) { return t.is_zero() ? strong_zeros(b_, rt) : t.atom; };
    tan[r] = Tangent::value(
        ir::Atom::of(b_.prim(Prim::Select, {op.args[0], side(ta), side(tb)}, s.span)));
    return;
  }
  std::vector<ir::Atom> terms;
  for (size_t k = 0; k < op.args.size(); ++k) {
    Tangent t = of(op.args[k], tan);
    if (t.is_zero()) continue;
    if (info.partials[k].empty()) {
      if (op.prim == Prim::StopGradient || !is_real(b_.type_of(op.args[k]).elem)) continue;
      throw NotDifferentiable("`" + std::string(info.name) +
                              "` has no derivative rule, so a function that applies it to a "
                              "differentiated value cannot be differentiated");
    }
    if (op.prim == Prim::ToF64 || op.prim == Prim::ToF32) {
      terms.push_back(b_.type_of(t.atom).elem == rt.elem
                          ? t.atom
                          : ir::Atom::of(b_.prim(op.prim, {t.atom}, s.span)));
      continue;
    }
    ir::Atom p = rules_.partial(b_, op.prim, static_cast<int>(k), op.args, ir::Atom::of(r));
    if (p.is_real_literal(0.0)) continue;
    if (p.is_real_literal(1.0)) {
      terms.push_back(t.atom);
    } else if (p.is_real_literal(-1.0)) {
      terms.push_back(ir::Atom::of(b_.prim(Prim::Neg, {t.atom}, s.span)));
    } else {
      terms.push_back(ir::Atom::of(b_.prim(Prim::Mul, {p, t.atom}, s.span)));
    }
  }
  if (terms.empty()) return;
  ir::Atom sum = terms[0];
  for (size_t k = 1; k < terms.size(); ++k) {
    sum = ir::Atom::of(b_.prim(Prim::Add, {sum, terms[k]}, s.span));
  }
  tan[r] = Tangent::value(sum);
}

std::optional<ir::Block> Jvp::tangent_body(const ir::Block& body,
                                           const std::vector<ir::IndexVar>& from,
                                           const std::vector<ir::IndexVar>& to, TangentMap& tan) {
  ir::Block copy = fresh(body, from, to);
  const Type bt = b_.type_of(body.results[0]);
  bool zero = false;
  ir::Block out = b_.region([&] {
    Tangent t = run(std::move(copy), tan)[0];
    zero = t.is_zero();
    return std::vector<ir::Atom>{materialize(b_, t, bt)};
  });
  if (zero) return std::nullopt;
  return out;
}

void Jvp::gen(const ir::Stmt& s, const ir::GenOp& op, TangentMap& tan) {
  if (!active(op.body, tan)) return;
  auto ivars = fresh_ivars(op.ivars);
  auto body = tangent_body(op.body, op.ivars, ivars, tan);
  if (!body) return;
  const Type rt = b_.function().type_of(s.results[0]);
  tan[s.results[0]] =
      Tangent::value(ir::Atom::of(b_.emit(ir::GenOp{ivars, std::move(*body)}, {rt}, s.span)[0]));
}

void Jvp::reduce(const ir::Stmt& s, const ir::ReduceOp& op, TangentMap& tan) {
  if (!active(op.body, tan)) return;
  if (op.kind != ast::ReduceKind::Sum) {
    reduce_extremum(s, op, tan);
    return;
  }
  auto ivars = fresh_ivars(op.ivars);
  auto body = tangent_body(op.body, op.ivars, ivars, tan);
  if (!body) return;
  const Type bt = b_.type_of(op.body.results[0]);
  tan[s.results[0]] = Tangent::value(
      ir::Atom::of(b_.emit(ir::ReduceOp{op.kind, ivars, std::move(*body)}, {bt}, s.span)[0]));
}

// max/min: the tangent is the body's tangent at the first position (row-major) where the body
// attains the extremum, per element for tensor bodies (docs/language.md §6.1). First the position
// key k = min over positions of (pos where body == m, else the number of positions), then
// sum over positions of select(pos == k, tangent, 0). The key is index arithmetic, an i64
// (free under the cost model, as the position of a read is); an i64 min of an empty range is
// an error, so it runs only when there is a position (else the sum reads no key).
void Jvp::reduce_extremum(const ir::Stmt& s, const ir::ReduceOp& op, TangentMap& tan) {
  const ir::Atom m = ir::Atom::of(s.results[0]);
  const Type bt = b_.type_of(op.body.results[0]);
  auto kivars = fresh_ivars(op.ivars);
  ir::Block kcopy = fresh(op.body, op.ivars, kivars);
  const ir::Atom positions = position_count(b_, kivars);
  const ir::Atom nonempty = ir::Atom::of(b_.prim(Prim::Ge, {positions, ir::Atom::i64(1)}));
  ir::VarId key = b_.if_(
      nonempty,
      [&] {
        return std::vector<ir::Atom>{ir::Atom::of(b_.reduce(ast::ReduceKind::Min, kivars, [&] {
          for (auto& st : kcopy.stmts) b_.append(std::move(st));
          const auto key_pos = flat_position(b_, kivars);
          const ir::Atom pos = key_pos.first, none = key_pos.second;
          return elementwise(b_, bt.shape, {kcopy.results[0], m},
                             [&](const std::vector<ir::Atom>& e) {
                               ir::Atom hit = ir::Atom::of(b_.prim(Prim::Eq, {e[0], e[1]}));
                               return ir::Atom::of(b_.prim(Prim::Select, {hit, pos, none}));
                             });
        }))};
      },
      [&] {
        if (bt.shape.empty()) return std::vector<ir::Atom>{positions};
        return std::vector<ir::Atom>{
            elementwise(b_, bt.shape, {}, [&](const std::vector<ir::Atom>&) { return positions; })};
      })[0];
  auto ivars = fresh_ivars(op.ivars);
  ir::Block copy = fresh(op.body, op.ivars, ivars);
  bool zero = false;
  ir::Block body = b_.region([&] {
    Tangent t = run(std::move(copy), tan)[0];
    zero = t.is_zero();
    ir::Atom dt = materialize(b_, t, bt);
    const ir::Atom pos = flat_position(b_, ivars).first;
    return std::vector<ir::Atom>{
        elementwise(b_, bt.shape, {dt, ir::Atom::of(key)}, [&](const std::vector<ir::Atom>& e) {
          ir::Atom hit = ir::Atom::of(b_.prim(Prim::Eq, {pos, e[1]}));
          return ir::Atom::of(b_.prim(Prim::Select, {hit, e[0], ir::Atom::real(0.0, bt.elem)}));
        })};
  });
  if (zero) return;
  tan[s.results[0]] = Tangent::value(ir::Atom::of(
      b_.emit(ir::ReduceOp{ast::ReduceKind::Sum, ivars, std::move(body)}, {bt}, s.span)[0]));
}

std::vector<ir::Atom> Jvp::region_tangents(ir::Block body, TangentMap& tan,
                                           const std::vector<ir::VarId>& results, bool* any,
                                           bool strong) {
  std::vector<Tangent> ts = run(std::move(body), tan);
  std::vector<ir::Atom> out;
  for (size_t k = 0; k < results.size(); ++k) {
    const Type t = b_.function().type_of(results[k]);
    if (!has_tangent(t)) continue;
    if (!ts[k].is_zero()) *any = true;
    out.push_back(materialize(b_, ts[k], t, strong));
  }
  return out;
}

void Jvp::guard(const ir::Stmt& s, const ir::GuardOp& op, TangentMap& tan) {
  if (!active(op.body, tan)) return;
  ir::Block copy = fresh(op.body, {}, {});
  bool any = false;
  ir::Block body =
      b_.region([&] { return region_tangents(std::move(copy), tan, s.results, &any); });
  if (!any) return;
  std::vector<Type> types;
  std::vector<ir::VarId> with;
  for (ir::VarId r : s.results) {
    if (!has_tangent(b_.function().type_of(r))) continue;
    types.push_back(b_.function().type_of(r));
    with.push_back(r);
  }
  auto ts = b_.emit(ir::GuardOp{op.pred, std::move(body)}, types, s.span);
  for (size_t k = 0; k < with.size(); ++k) tan[with[k]] = Tangent::value(ir::Atom::of(ts[k]));
}

void Jvp::if_(const ir::Stmt& s, const ir::IfOp& op, TangentMap& tan) {
  if (!active(op.then_branch, tan) && !active(op.else_branch, tan)) return;
  ir::Block tcopy = fresh(op.then_branch, {}, {});
  ir::Block ecopy = fresh(op.else_branch, {}, {});
  bool any = false;
  // A branch whose results do not depend on the input has exactly zero tangents: strong zeros
  // (docs/language.md §5.6), as the jacobian's basis gives, so that a partial that is infinite at
  // the point (norm2 at 0) times this branch's tangent is 0, not NaN.
  ir::Block tb = b_.region(
      [&] { return region_tangents(std::move(tcopy), tan, s.results, &any, /*strong=*/true); });
  ir::Block eb = b_.region(
      [&] { return region_tangents(std::move(ecopy), tan, s.results, &any, /*strong=*/true); });
  if (!any) return;
  std::vector<Type> types;
  std::vector<ir::VarId> with;
  for (ir::VarId r : s.results) {
    if (!has_tangent(b_.function().type_of(r))) continue;
    types.push_back(b_.function().type_of(r));
    with.push_back(r);
  }
  auto ts = b_.emit(ir::IfOp{op.cond, std::move(tb), std::move(eb)}, types, s.span);
  for (size_t k = 0; k < with.size(); ++k) tan[with[k]] = Tangent::value(ir::Atom::of(ts[k]));
}

void Jvp::accum(const ir::Stmt& s, const ir::AccumOp& op, TangentMap& tan) {
  if (!active(op.body, tan)) return;
  auto ivars = fresh_ivars(op.ivars);
  ir::Block copy = fresh(op.body, op.ivars, ivars);
  const Type vt = b_.type_of(op.body.results.back());
  bool zero = false;
  ir::Block body = b_.region([&] {
    std::vector<ir::Atom> positions(copy.results.begin(), copy.results.end() - 1);
    std::vector<Tangent> ts = run(std::move(copy), tan);
    zero = ts.back().is_zero();
    positions.push_back(materialize(b_, ts.back(), vt));
    return positions;
  });
  if (zero) return;
  const Type rt = b_.function().type_of(s.results[0]);
  tan[s.results[0]] = Tangent::value(
      ir::Atom::of(b_.emit(ir::AccumOp{op.shape, ivars, std::move(body)}, {rt}, s.span)[0]));
}

// A loop whose state depends on the active inputs carries the tangents of those state
// variables as extra state (forward mode runs both together; unzip separates them).
void Jvp::loop(const ir::Stmt& s, const ir::LoopOp& op, TangentMap& tan) {
  VarSet act;
  for (const auto& [v, t] : tan) {
    if (!t.is_zero()) act.insert(v);
  }
  std::vector<bool> active_state = loop_state_activity(b_.function(), op, act);
  bool any = false;
  for (bool a : active_state) any = any || a;
  if (!any) {
    b_.append(s);
    return;
  }
  ir::LoopOp out;
  out.is_while = op.is_while;
  out.iter = op.iter;
  out.count = op.count;
  out.cond = op.cond;
  out.state = op.state;
  out.init = op.init;
  std::vector<ir::VarId> tstate;
  std::vector<size_t> which;
  for (size_t k = 0; k < op.state.size(); ++k) {
    if (!active_state[k]) continue;
    const Type t = b_.function().type_of(op.state[k]);
    ir::VarId ts =
        b_.function().new_var("d" + b_.function().vars[static_cast<size_t>(op.state[k])].name, t);
    tstate.push_back(ts);
    which.push_back(k);
    out.state.push_back(ts);
    out.init.push_back(materialize(b_, of(op.init[k], tan), t));
  }
  out.body = b_.region([&] {
    TangentMap inner = tan;
    for (size_t j = 0; j < which.size(); ++j) {
      inner[op.state[which[j]]] = Tangent::value(ir::Atom::of(tstate[j]));
    }
    ir::Block body = op.body;
    std::vector<Tangent> ts = run(std::move(body), inner);
    std::vector<ir::Atom> next = op.body.results;
    for (size_t j = 0; j < which.size(); ++j) {
      next.push_back(materialize(b_, ts[which[j]], b_.function().type_of(op.state[which[j]])));
    }
    return next;
  });
  // Results: final states (primal, then tangents); for a saving loop (a reverse-mode primal
  // differentiated again, as in a Hessian) then T and the stacks (primal, then tangents).
  ir::Function& f = b_.function();
  const size_t n = op.state.size();
  std::vector<ir::VarId> results(s.results.begin(), s.results.begin() + static_cast<long>(n));
  std::vector<ir::VarId> tres, tstacks;
  for (size_t j = 0; j < which.size(); ++j) {
    const ir::VarId r = s.results[which[j]];
    tres.push_back(f.new_var("d" + f.vars[static_cast<size_t>(r)].name, f.type_of(r)));
    results.push_back(tres.back());
  }
  if (op.saves_states) {
    out.saves_states = true;
    results.push_back(s.results[n]);
    for (size_t k = 0; k < n; ++k) results.push_back(s.results[n + 1 + k]);
    for (size_t j = 0; j < which.size(); ++j) {
      const ir::VarId stack = s.results[n + 1 + which[j]];
      tstacks.push_back(f.new_var("d" + f.vars[static_cast<size_t>(stack)].name, f.type_of(stack)));
      results.push_back(tstacks.back());
    }
  }
  ir::Stmt st;
  st.results = std::move(results);
  st.op = std::move(out);
  st.span = s.span;
  b_.append(std::move(st));
  for (size_t j = 0; j < which.size(); ++j) {
    tan[s.results[which[j]]] = Tangent::value(ir::Atom::of(tres[j]));
    if (op.saves_states) {
      tan[s.results[n + 1 + which[j]]] = Tangent::value(ir::Atom::of(tstacks[j]));
    }
  }
}

ir::Function jvp_function(const ir::Function& f, const std::vector<int>& wrt, RuleBook& rules,
                          const std::string& name) {
  ir::Function g = f;
  g.name = name;
  g.body = ir::Block{};
  g.derivation.reset();
  TangentMap tan;
  for (int w : wrt) {
    const ir::VarId p = f.params.at(static_cast<size_t>(w));
    ir::VarId t = g.new_var(
        ir::unique_name(param_names(g), "t_" + f.vars[static_cast<size_t>(p)].name), f.type_of(p));
    g.params.push_back(t);
    g.param_spans.push_back(f.param_spans.at(static_cast<size_t>(w)));
    tan[p] = Tangent::value(ir::Atom::of(t));
  }
  ir::Builder b(g);
  Jvp jvp(b, rules);
  std::vector<Tangent> ts = jvp.run(f.body, tan);
  const ir::Atom value = f.body.results.at(0);
  const ir::Atom dv = materialize(b, ts.at(0), atom_type(g, value));
  b.finish({value, dv});
  return g;
}

}  // namespace cot::ad
