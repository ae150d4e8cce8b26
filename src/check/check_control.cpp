// Iverson brackets (guards, strong zeros), `if` and `loop`.
#include "check/function_checker.h"

namespace cot::check {
namespace {

// The factors of a product; a negated factor `-e` contributes e and flips `negate`, so that
// `-[c] * x` still guards x.
void flatten_product(const ast::Expr& e, std::vector<const ast::Expr*>& out, bool& negate) {
  if (const auto* b = e.as<ast::Binary>(); b && b->op == ast::BinOp::Mul) {
    flatten_product(*b->lhs, out, negate);
    flatten_product(*b->rhs, out, negate);
    return;
  }
  if (const auto* u = e.as<ast::Unary>(); u && u->op == ast::UnOp::Neg) {
    negate = !negate;
    flatten_product(*u->operand, out, negate);
    return;
  }
  out.push_back(&e);
}

void flatten_and(const ast::Expr& e, std::vector<const ast::Expr*>& out) {
  if (const auto* b = e.as<ast::Binary>(); b && b->op == ast::BinOp::And) {
    flatten_and(*b->lhs, out);
    flatten_and(*b->rhs, out);
    return;
  }
  out.push_back(&e);
}

std::vector<Type> leaf_types(const Type& t) {
  if (!t.is_tuple) return {t};
  std::vector<Type> out;
  for (const auto& e : t.elems) {
    auto sub = leaf_types(e);
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

}  // namespace

Val FunctionChecker::bool_scalar(const ast::Expr& e, const std::string& what) {
  Val v = expr(e);
  if (!v.ok) return v;
  if (!v.type.is_scalar() || v.type.elem != Scalar::Bool) {
    std::string help;
    if (e.as<ast::Iverson>()) {
      help = "`[c]` is the number 1 or 0; write the condition without the brackets";
    } else if (v.type.is_scalar() && is_numeric(v.type.elem)) {
      help = "compare it, as in `x > 0.0`";
    }
    diags_.error(e.span, what + " must be a bool, found " + v.type.to_string(), help);
    return Val::error(e.span);
  }
  return v;
}

// `[c] * e`, `e * [c]`, `a * [c] * b * [d]`: the product of the other factors, guarded by the
// conjunction of the brackets. The guarded factors are not evaluated when it is false.
Val FunctionChecker::iverson_product(const ast::Binary& b, Span span) {
  std::vector<const ast::Expr*> factors;
  bool negate = false;
  flatten_product(*b.lhs, factors, negate);
  flatten_product(*b.rhs, factors, negate);
  std::vector<const ast::Expr*> conds, others;
  for (const auto* f : factors) {
    if (const auto* iv = f->as<ast::Iverson>()) {
      flatten_and(*iv->cond, conds);
    } else {
      others.push_back(f);
    }
  }
  return guarded(
      conds, 0,
      [&]() -> Val {
        if (others.empty()) return literal_real(negate ? -1.0 : 1.0, span);
        Val acc = expr(*others[0]);
        for (size_t k = 1; k < others.size(); ++k) {
          Val next = expr(*others[k]);
          acc = arith(ast::BinOp::Mul, acc, next, Span::cover(acc.span, next.span), b.op_span);
        }
        if (!negate || !acc.ok) return acc;
        if (acc.type.is_tuple || acc.type.elem == Scalar::Bool) {
          diags_.error(acc.span, "`-` needs a number, found " + acc.type.to_string());
          return Val::error(span);
        }
        return elementwise({acc}, span, "`-`",
                           [&](const std::vector<Val>& xs) { return prim(Prim::Neg, xs, span); });
      },
      span);
}

Val FunctionChecker::guarded(const std::vector<const ast::Expr*>& conjuncts, size_t from,
                             const std::function<Val()>& body, Span span) {
  // The affine prefix of the conjunction becomes one predicate; the first computed condition
  // is evaluated under it (conditions short-circuit left to right), and so on.
  Pred p = Pred::truth();
  size_t j = from;
  for (; j < conjuncts.size(); ++j) {
    auto q = try_pred(*conjuncts[j]);
    if (!q) break;
    p = Pred::conj({p, *q});
  }
  if (j == conjuncts.size()) return make_guard(p, body, span);
  return make_guard(
      p,
      [&]() -> Val {
        Val c = bool_scalar(*conjuncts[j], "the condition of an Iverson bracket");
        if (!c.ok) {
          body();  // still check the guarded expression
          return c;
        }
        Pred q = c.atom.is_var ? Pred::atom_of(c.atom.var)
                               : (c.atom.lit.boolean ? Pred::truth() : Pred::falsity());
        return make_guard(
            q, [&] { return guarded(conjuncts, j + 1, body, span); }, span);
      },
      span);
}

Val FunctionChecker::make_guard(const Pred& pred, const std::function<Val()>& body, Span span) {
  if (pred.kind == Pred::Kind::True) return body();
  note_index_equalities(pred);
  Val v;
  std::vector<Type> types;
  ir::Block blk = in_block([&] {
    v = body();
    if (!v.ok) return;
    if (v.weak && !v.atom.is_var && v.atom.lit.type == Scalar::I64) {
      v = convert_literal(v, Scalar::F64);
    }
    if (!v.type.is_real_valued()) {
      diags_.error(v.span,
                   "an Iverson bracket is a real number and can only multiply real values; this "
                   "has type " +
                       v.type.to_string(),
                   "for other types use `if c then e else ...`");
      v = Val::error(span);
      return;
    }
    std::vector<Val> leaves = flatten(v, span);
    for (const auto& l : leaves) {
      blocks_.back()->results.push_back(l.atom);
      types.push_back(l.type);
    }
  });
  if (!v.ok) return Val::error(span);
  Pred p = pred;
  // [p] * ([q] * e) is [p && q] * e.
  if (blk.stmts.size() == 1) {
    if (auto* inner = blk.stmts[0].as<ir::GuardOp>()) {
      bool same = inner->body.results.size() == blk.results.size();
      for (size_t k = 0; same && k < blk.results.size(); ++k) {
        same = blk.results[k] == ir::Atom::of(blk.stmts[0].results[k]);
      }
      if (same) {
        p = Pred::conj({p, inner->pred});
        ir::Block moved = std::move(inner->body);
        blk = std::move(moved);
      }
    }
  }
  std::vector<ir::VarId> rs = emit_multi(ir::GuardOp{std::move(p), std::move(blk)}, types, span);
  std::vector<Val> leaves;
  for (auto r : rs) leaves.push_back(var_val(r, span));
  size_t pos = 0;
  return rebuild(v.type, leaves, pos, span);
}

Val FunctionChecker::if_expr(const ast::If& i, Span span) {
  Val c = bool_scalar(*i.cond, "the condition of `if`");
  Val a, b;
  ir::Block then_b = in_block([&] { a = expr(*i.then_branch); });
  ir::Block else_b = in_block([&] { b = expr(*i.else_branch); });
  if (!c.ok || !a.ok || !b.ok) return Val::error(span);
  if (a.type != b.type) {
    // `if c then 1.0 else 2`: the integer literal adapts to the other branch.
    const bool b_int_literal = b.weak && !b.type.is_tuple && b.type.elem == Scalar::I64;
    if (a.weak && !b_int_literal) {
      a = coerce(a, b.type, i.then_branch->span, "this branch");
    } else if (b.weak) {
      b = coerce(b, a.type, i.else_branch->span, "this branch");
    } else {
      diags_.error(span, "the branches of `if` have different types: " + a.type.to_string() +
                             " and " + b.type.to_string());
      return Val::error(span);
    }
    if (!a.ok || !b.ok) return Val::error(span);
  }
  const Type type = a.type;
  for (auto [val, blk] : {std::pair{&a, &then_b}, std::pair{&b, &else_b}}) {
    blocks_.push_back(blk);
    for (const auto& l : flatten(*val, span)) blk->results.push_back(l.atom);
    blocks_.pop_back();
  }
  std::vector<ir::VarId> rs =
      emit_multi(ir::IfOp{c.atom, std::move(then_b), std::move(else_b)}, leaf_types(type), span);
  std::vector<Val> leaves;
  for (auto r : rs) leaves.push_back(var_val(r, span));
  size_t pos = 0;
  Val out = rebuild(type, leaves, pos, span);
  out.weak = false;
  return out;
}

Val FunctionChecker::loop(const ast::Loop& l, Span span) {
  Val init = expr(*l.init);
  if (!init.ok) return init;
  const bool init_was_int_literal =
      init.weak && !init.atom.is_var && init.atom.lit.type == Scalar::I64;
  init.weak = false;
  const Type type = init.type;
  std::vector<Val> init_leaves = flatten(init, l.init->span);
  ir::LoopOp op;
  std::vector<Val> state_leaves;
  for (const auto& leaf : init_leaves) {
    op.init.push_back(leaf.atom);
    std::string hint = l.state.kind == ast::Pattern::Kind::Name ? l.state.name : std::string();
    ir::VarId s = fn_.new_var(hint, leaf.type);
    op.state.push_back(s);
    state_leaves.push_back(var_val(s, l.state.span));
  }
  auto bind_state = [&] {
    size_t pos = 0;
    Val state = rebuild(type, state_leaves, pos, l.state.span);
    bind_pattern(l.state, state);
  };
  if (l.cond) {
    op.is_while = true;
    bool ok = true;
    op.cond = in_block([&] {
      push_scope();
      bind_state();
      Val c = bool_scalar(*l.cond, "the condition of `while`");
      if (c.ok)
        blocks_.back()->results = {c.atom};
      else
        ok = false;
      pop_scope();
    });
    if (!ok) return Val::error(span);
  } else {
    Val count = expr(*l.count);
    if (!count.ok) return count;
    if (!count.type.is_scalar() || count.type.elem != Scalar::I64) {
      diags_.error(
          l.count->span,
          "the trip count of `loop` must be an integer (i64), found " + count.type.to_string(),
          "convert it with `i64(...)`");
      return Val::error(span);
    }
    op.count = count.atom;
    op.iter = fn_.new_var(l.iter, Type::scalar(Scalar::I64));
  }
  bool ok = true;
  op.body = in_block([&] {
    push_scope();
    if (!op.is_while) {
      Val it = var_val(op.iter, l.iter_span);
      it.affine = Affine::var(op.iter);
      bind(l.iter, Binding{Binding::Kind::Value, it, l.iter_span, -1});
    }
    bind_state();
    Val next = expr(*l.body);
    if (next.ok && next.type != type) {
      if (next.weak) {
        next = coerce(next, type, l.body->span, "the loop body");
      } else {
        diags_.error(l.body->span,
                     "the loop body yields " + next.type.to_string() + ", but the state has type " +
                         type.to_string() + " (the type of its initial value)",
                     init_was_int_literal ? "write the initial value as a real, e.g. `0.0`"
                                          : "the body must yield the next state");
        next = Val::error(span);
      }
    }
    if (!next.ok) ok = false;
    if (ok) {
      for (const auto& leaf : flatten(next, l.body->span)) {
        blocks_.back()->results.push_back(leaf.atom);
      }
    }
    pop_scope();
  });
  if (!ok) return Val::error(span);
  std::vector<ir::VarId> rs = emit_multi(std::move(op), leaf_types(type), span);
  std::vector<Val> leaves;
  for (auto r : rs) leaves.push_back(var_val(r, span));
  size_t pos = 0;
  return rebuild(type, leaves, pos, span);
}

}  // namespace cot::check
