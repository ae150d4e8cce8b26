#include "check/function_checker.h"

#include <algorithm>

namespace cot::check {

// ---------------------------------------------------------------------------------------------
// Emission

ir::VarId FunctionChecker::emit(ir::Op op, const Type& type, Span span, std::string hint) {
  ir::VarId v = fn_.new_var(std::move(hint), type);
  blocks_.back()->stmts.push_back(ir::Stmt{{v}, std::move(op), span});
  return v;
}

std::vector<ir::VarId> FunctionChecker::emit_multi(ir::Op op, const std::vector<Type>& types,
                                                   Span span) {
  std::vector<ir::VarId> vs;
  for (const auto& t : types) vs.push_back(fn_.new_var({}, t));
  blocks_.back()->stmts.push_back(ir::Stmt{vs, std::move(op), span});
  return vs;
}

Val FunctionChecker::var_val(ir::VarId v, Span span) {
  Val out;
  out.atom = ir::Atom::of(v);
  out.type = fn_.type_of(v);
  out.span = span;
  return out;
}

ir::Block FunctionChecker::in_block(const std::function<void()>& body) {
  ir::Block b;
  blocks_.push_back(&b);
  body();
  blocks_.pop_back();
  return b;
}

// ---------------------------------------------------------------------------------------------
// Scopes

void FunctionChecker::bind(const std::string& name, Binding b) {
  scopes_.back()[name] = std::move(b);
}

const Binding* FunctionChecker::lookup(const std::string& name) const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
    auto f = it->find(name);
    if (f != it->end()) return &f->second;
  }
  return nullptr;
}

size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] != b[j - 1])});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string FunctionChecker::suggest(const std::string& name) const {
  std::string best;
  size_t best_d = name.size() <= 2 ? 1 : 2;
  auto consider = [&](const std::string& cand) {
    size_t d = edit_distance(name, cand);
    if (d <= best_d && cand != name) {
      if (d < best_d || best.empty()) best = cand;
      best_d = d;
    }
  };
  for (const auto& s : scopes_) {
    for (const auto& [n, _] : s) consider(n);
  }
  return best.empty() ? std::string() : "did you mean `" + best + "`?";
}

void FunctionChecker::bind_pattern(const ast::Pattern& p, const Val& v) {
  switch (p.kind) {
    case ast::Pattern::Kind::Wildcard:
      return;
    case ast::Pattern::Kind::Name: {
      Val named = v;
      // Give temporaries the user's name so printed IR reads like the source.
      if (v.ok && v.atom.is_var && fn_.vars[static_cast<size_t>(v.atom.var)].name.empty()) {
        fn_.vars[static_cast<size_t>(v.atom.var)].name = p.name;
      }
      bind(p.name, Binding{Binding::Kind::Value, named, p.span, -1});
      return;
    }
    case ast::Pattern::Kind::Tuple: {
      // Names bound twice in one pattern are an error.
      for (size_t i = 0; i < p.elems.size(); ++i) {
        for (size_t j = 0; j < i; ++j) {
          if (p.elems[i].kind == ast::Pattern::Kind::Name &&
              p.elems[j].kind == ast::Pattern::Kind::Name && p.elems[i].name == p.elems[j].name) {
            diags_.error(p.elems[i].span,
                         "`" + p.elems[i].name + "` is bound twice in this pattern");
          }
        }
      }
      if (!v.ok) {
        for (const auto& e : p.elems) bind_pattern(e, Val::error(e.span));
        return;
      }
      if (!v.type.is_tuple || v.type.elems.size() != p.elems.size()) {
        diags_.error(p.span,
                     "cannot destructure a value of type " + v.type.to_string() +
                         " with a pattern of " + std::to_string(p.elems.size()) + " elements",
                     v.type.is_tuple
                         ? "the value has " + std::to_string(v.type.elems.size()) + " elements"
                         : "only tuples can be destructured");
        for (const auto& e : p.elems) bind_pattern(e, Val::error(e.span));
        return;
      }
      for (size_t i = 0; i < p.elems.size(); ++i) {
        if (p.elems[i].kind == ast::Pattern::Kind::Wildcard) continue;
        bind_pattern(p.elems[i], tuple_elem(v, i, p.elems[i].span));
      }
      return;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Tuples

Val FunctionChecker::tuple_elem(const Val& t, size_t k, Span span) {
  if (!t.ok) return Val::error(span);
  if (k < t.elems.size()) return t.elems[k];
  ir::VarId v = emit(ir::ProjOp{t.atom, static_cast<int>(k)}, t.type.elems[k], span);
  return var_val(v, span);
}

std::vector<Val> FunctionChecker::flatten(const Val& v, Span span) {
  if (!v.type.is_tuple) return {v};
  std::vector<Val> out;
  for (size_t k = 0; k < v.type.elems.size(); ++k) {
    auto sub = flatten(tuple_elem(v, k, span), span);
    out.insert(out.end(), sub.begin(), sub.end());
  }
  return out;
}

Val FunctionChecker::rebuild(const Type& type, const std::vector<Val>& leaves, size_t& pos,
                             Span span) {
  if (!type.is_tuple) return leaves.at(pos++);
  Val out;
  out.type = type;
  out.span = span;
  std::vector<ir::Atom> atoms;
  for (const auto& et : type.elems) {
    Val e = rebuild(et, leaves, pos, span);
    atoms.push_back(e.atom);
    out.elems.push_back(std::move(e));
  }
  out.atom = ir::Atom::of(emit(ir::TupleOp{std::move(atoms)}, type, span));
  return out;
}

Val FunctionChecker::tuple(const ast::Tuple& t, Span span) {
  std::vector<Val> elems;
  bool ok = true;
  for (const auto& e : t.elems) {
    elems.push_back(expr(*e));
    ok = ok && elems.back().ok;
  }
  if (!ok) return Val::error(span);
  // Weak literals in tuples take their default types.
  std::vector<Type> types;
  std::vector<ir::Atom> atoms;
  for (auto& e : elems) {
    e.weak = false;
    types.push_back(e.type);
    atoms.push_back(e.atom);
  }
  Val out;
  out.type = Type::tuple(std::move(types));
  out.span = span;
  out.atom = ir::Atom::of(emit(ir::TupleOp{std::move(atoms)}, out.type, span));
  out.elems = std::move(elems);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Literals, names, blocks

Val FunctionChecker::literal_int(int64_t v, Span span) {
  Val out;
  out.atom = ir::Atom::i64(v);
  out.type = Type::scalar(Scalar::I64);
  out.span = span;
  out.weak = true;
  out.affine = Affine::constant(v);
  if (v >= 0) out.size = SizeExpr::constant(v);
  return out;
}

Val FunctionChecker::literal_real(double v, Span span) {
  Val out;
  out.atom = ir::Atom::real(v);
  out.type = Type::scalar(Scalar::F64);
  out.span = span;
  out.weak = true;
  return out;
}

Val FunctionChecker::name(const std::string& n, Span span) {
  const Binding* b = lookup(n);
  if (!b) {
    if (ctx_.find(n)) {
      diags_.error(span, "`" + n + "` is a function, not a value",
                   "call it with arguments, as in `" + n + "(...)`");
    } else {
      diags_.error(span, "unknown name `" + n + "`", suggest(n));
    }
    return Val::error(span);
  }
  Val v = b->val;
  v.span = span;
  return v;
}

Val FunctionChecker::block(const ast::Block& b, Span span) {
  push_scope();
  for (const auto& let : b.lets) {
    Val v = expr(*let.value);
    bind_pattern(let.pattern, v);
  }
  Val result = b.result ? expr(*b.result) : Val::error(span);
  pop_scope();
  return result;
}

Val FunctionChecker::expr(const ast::Expr& e) {
  return std::visit(
      [&](const auto& node) -> Val {
        using T = std::decay_t<decltype(node)>;
        if constexpr (std::is_same_v<T, ast::IntLit>) {
          return literal_int(node.value, e.span);
        } else if constexpr (std::is_same_v<T, ast::RealLit>) {
          return literal_real(node.value, e.span);
        } else if constexpr (std::is_same_v<T, ast::BoolLit>) {
          Val v;
          v.atom = ir::Atom::boolean(node.value);
          v.type = Type::scalar(Scalar::Bool);
          v.span = e.span;
          return v;
        } else if constexpr (std::is_same_v<T, ast::Name>) {
          return name(node.name, e.span);
        } else if constexpr (std::is_same_v<T, ast::Unary>) {
          return unary(node, e.span);
        } else if constexpr (std::is_same_v<T, ast::Binary>) {
          return binary(node, e.span);
        } else if constexpr (std::is_same_v<T, ast::Call>) {
          return call(node, e.span);
        } else if constexpr (std::is_same_v<T, ast::Index>) {
          return index(node, e.span);
        } else if constexpr (std::is_same_v<T, ast::Tuple>) {
          return tuple(node, e.span);
        } else if constexpr (std::is_same_v<T, ast::Block>) {
          return block(node, e.span);
        } else if constexpr (std::is_same_v<T, ast::Iverson>) {
          return guarded(
              {node.cond.get()}, 0, [&] { return literal_real(1.0, e.span); }, e.span);
        } else if constexpr (std::is_same_v<T, ast::For>) {
          return gen(node, e.span);
        } else if constexpr (std::is_same_v<T, ast::Reduce>) {
          return reduce(node, e.span);
        } else if constexpr (std::is_same_v<T, ast::Loop>) {
          return loop(node, e.span);
        } else if constexpr (std::is_same_v<T, ast::If>) {
          return if_expr(node, e.span);
        } else if constexpr (std::is_same_v<T, ast::Accum>) {
          return accum(node, e.span);
        }
      },
      e.node);
}

// ---------------------------------------------------------------------------------------------
// The function

void FunctionChecker::check(const ast::FnDef& def) {
  blocks_.push_back(&fn_.body);
  push_scope();
  // Size variables first, so parameters may not reuse their names.
  for (auto& sv : fn_.size_vars) {
    Val v = var_val(sv.var, def.name_span);
    v.affine = Affine::var(sv.var);
    v.size = SizeExpr::var(sv.name);
    bind(sv.name, Binding{Binding::Kind::SizeVar, v, def.name_span, -1});
  }
  for (size_t i = 0; i < def.params.size(); ++i) {
    const auto& p = def.params[i];
    if (const Binding* prev = lookup(p.name); prev && scopes_.size() == 1) {
      if (prev->kind == Binding::Kind::SizeVar) {
        diags_.error(p.span, "parameter `" + p.name + "` has the name of a size variable",
                     "rename the parameter or the size variable");
      } else {
        diags_.error(p.span, "parameter `" + p.name + "` is declared twice");
      }
      continue;
    }
    bind(p.name, Binding{Binding::Kind::Value, var_val(fn_.params[i], p.span), p.span, -1});
  }
  const auto* body = def.body ? def.body->as<ast::Block>() : nullptr;
  if (body) {
    Val result = block(*body, def.body->span);
    Span at = body->result ? body->result->span : def.body->span;
    if (result.ok) {
      Val r = coerce(result, fn_.result_type, at, "the result of " + fn_.name);
      if (r.ok) fn_.body.results = {r.atom};
    }
  }
  pop_scope();
  blocks_.pop_back();
}

}  // namespace cot::check
