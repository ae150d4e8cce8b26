// Generators, reductions and accumulations, and the extents of their index variables: written
// (`for i: n + 1. e`) or inferred from whole-index uses in the body (docs/language.md §5.4).
#include "check/function_checker.h"

namespace cot::check {
namespace {
const char* kExtentHelpPrefix = "write the extent, as in `";
}

FunctionChecker::BinderScope FunctionChecker::open_binders(const std::vector<ast::Binder>& bs) {
  BinderScope scope;
  for (size_t k = 0; k < bs.size(); ++k) {
    const auto& b = bs[k];
    for (size_t j = 0; j < k; ++j) {
      if (bs[j].name == b.name) {
        diags_.error(b.span, "index variable `" + b.name + "` is bound twice here");
        // The first binding is shadowed: do not also ask for its extent.
        binders_[static_cast<size_t>(scope.records[j])].explicit_extent = true;
        break;
      }
    }
    BinderRecord rec;
    rec.name = b.name;
    rec.span = b.span;
    ir::IndexVar iv{fn_.new_var(b.name, Type::scalar(Scalar::I64)), SizeExpr()};
    if (b.extent) {
      rec.explicit_extent = true;
      if (auto s = try_size(*b.extent)) {
        if (auto c = s->as_constant(); c && *c < 0) {
          diags_.error(b.extent->span, "the extent of `" + b.name + "` is negative");
        }
        iv.extent = *s;
        rec.extent = *s;
      } else {
        // Report type errors in the expression itself first.
        Val v = expr(*b.extent);
        if (v.ok) {
          diags_.error(b.extent->span,
                       "the extent of `" + b.name +
                           "` must be a size expression known from the "
                           "argument shapes",
                       "use integer literals, size variables, `size(x, k)` and `+ - * /`; to "
                       "skip part of a range, guard the body with an Iverson bracket "
                       "`[cond] * e`");
        }
      }
    }
    binders_.push_back(std::move(rec));
    scope.records.push_back(static_cast<int>(binders_.size() - 1));
    binder_of_var_[iv.var] = scope.records.back();
    scope.ivars.push_back(std::move(iv));
  }
  push_scope();
  for (size_t k = 0; k < bs.size(); ++k) {
    Val v = var_val(scope.ivars[k].var, bs[k].span);
    v.affine = Affine::var(scope.ivars[k].var);
    bind(bs[k].name, Binding{Binding::Kind::IndexVar, v, bs[k].span, scope.records[k]});
  }
  return scope;
}

void FunctionChecker::note_index_equalities(const Pred& p) {
  if (p.kind == Pred::Kind::And) {
    for (const auto& k : p.kids) note_index_equalities(k);
    return;
  }
  if (p.kind != Pred::Kind::Eq0 || p.expr.constant_term() != 0 || p.expr.terms().size() != 2) {
    return;
  }
  const auto& [a, ca] = p.expr.terms()[0];
  const auto& [b, cb] = p.expr.terms()[1];
  if (ca != -cb || (ca != 1 && ca != -1)) return;
  auto ra = binder_of_var_.find(a), rb = binder_of_var_.find(b);
  if (ra == binder_of_var_.end() || rb == binder_of_var_.end()) return;
  binders_[static_cast<size_t>(ra->second)].equal_to.push_back(rb->second);
  binders_[static_cast<size_t>(rb->second)].equal_to.push_back(ra->second);
}

bool FunctionChecker::close_binders(BinderScope& scope, const std::vector<ast::Binder>& bs,
                                    bool body_ok) {
  pop_scope();
  bool ok = true;
  // First from whole-index uses.
  for (size_t k = 0; k < bs.size(); ++k) {
    BinderRecord& rec = binders_[static_cast<size_t>(scope.records[k])];
    if (rec.explicit_extent || rec.uses.empty()) continue;
    const auto& [first, first_span, first_desc] = rec.uses.front();
    bool agree = true;
    for (const auto& [ext, use_span, desc] : rec.uses) {
      if (ext != first) {
        Diagnostic d{rec.span,
                     "the extent of `" + rec.name + "` is ambiguous: " + first_desc + " gives " +
                         first.to_string() + ", but " + desc + " gives " + ext.to_string(),
                     std::string(kExtentHelpPrefix) + rec.name + ": " + first.to_string() + "`",
                     {}};
        d.notes.emplace_back(use_span, "this use gives " + ext.to_string());
        if (body_ok) diags_.add(std::move(d));
        agree = false;
        ok = false;
        break;
      }
    }
    if (agree) rec.extent = first;
  }
  // Then through equalities with index variables whose extent is known.
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t k = 0; k < bs.size(); ++k) {
      BinderRecord& rec = binders_[static_cast<size_t>(scope.records[k])];
      if (rec.extent) continue;
      for (int other : rec.equal_to) {
        // An enclosing binder still being inferred offers its first whole-index use; if its
        // uses later disagree, that is reported for it.
        const BinderRecord& o = binders_[static_cast<size_t>(other)];
        if (o.extent || !o.uses.empty()) {
          rec.extent = o.extent ? *o.extent : std::get<0>(o.uses.front());
          progress = true;
          break;
        }
      }
    }
  }
  for (size_t k = 0; k < bs.size(); ++k) {
    BinderRecord& rec = binders_[static_cast<size_t>(scope.records[k])];
    if (rec.extent) {
      scope.ivars[k].extent = *rec.extent;
      continue;
    }
    // Ambiguous (reported above), or a written extent that is not a size (reported in
    // open_binders): no second error.
    if (!rec.uses.empty() || rec.explicit_extent) {
      ok = false;
      continue;
    }
    if (body_ok) {
      diags_.error(rec.span,
                   "cannot infer the extent of `" + rec.name +
                       "`: it is not used as a whole index of a tensor",
                   std::string(kExtentHelpPrefix) + rec.name + ": n`");
    }
    ok = false;
  }
  return ok;
}

Val FunctionChecker::gen(const ast::For& f, Span span) {
  BinderScope scope = open_binders(f.binders);
  Val v;
  ir::Block body = in_block([&] {
    v = expr(*f.body);
    if (v.ok && v.type.is_tuple) {
      diags_.error(f.body->span,
                   "the body of `for` must be a number or a tensor, not a tuple (" +
                       v.type.to_string() + ")",
                   "build one tensor per component");
      v = Val::error(span);
    }
    if (v.ok) blocks_.back()->results = {v.atom};
  });
  bool ok = close_binders(scope, f.binders, v.ok);
  if (!v.ok || !ok) return Val::error(span);
  std::vector<SizeExpr> shape;
  for (const auto& iv : scope.ivars) shape.push_back(iv.extent);
  shape.insert(shape.end(), v.type.shape.begin(), v.type.shape.end());
  Type t = Type::tensor(v.type.elem, std::move(shape));
  return var_val(emit(ir::GenOp{std::move(scope.ivars), std::move(body)}, t, span), span);
}

Val FunctionChecker::reduce(const ast::Reduce& r, Span span) {
  BinderScope scope = open_binders(r.binders);
  Val v;
  ir::Block body = in_block([&] {
    v = expr(*r.body);
    if (v.ok && (v.type.is_tuple || v.type.elem == Scalar::Bool)) {
      diags_.error(r.body->span, std::string("the body of `") + ast::to_string(r.kind) +
                                     "` must be a number or a tensor of numbers, found " +
                                     v.type.to_string());
      v = Val::error(span);
    }
    if (v.ok) blocks_.back()->results = {v.atom};
  });
  bool ok = close_binders(scope, r.binders, v.ok);
  if (!v.ok || !ok) return Val::error(span);
  return var_val(emit(ir::ReduceOp{r.kind, std::move(scope.ivars), std::move(body)}, v.type, span),
                 span);
}

Val FunctionChecker::accum(const ast::Accum& a, Span span) {
  std::vector<SizeExpr> shape;
  bool ok = true;
  for (const auto& d : a.shape) {
    if (auto s = try_size(*d)) {
      shape.push_back(*s);
    } else {
      diags_.error(d->span, "a dimension of `accum` must be a size expression");
      ok = false;
    }
  }
  BinderScope scope = open_binders(a.binders);
  Val value;
  ir::Block body = in_block([&] {
    Val v = expr(*a.body);
    if (!v.ok) {
      ok = false;
      return;
    }
    const size_t r = a.shape.size();  // as written, even when a dimension failed
    if (!v.type.is_tuple || v.type.elems.size() != r + 1) {
      diags_.error(a.body->span, "the body of `accum` must be a tuple of " + std::to_string(r) +
                                     " indices and a value, found " + v.type.to_string());
      ok = false;
      return;
    }
    std::vector<ir::Atom> results;
    for (size_t k = 0; k < r; ++k) {
      Val ik = tuple_elem(v, k, a.body->span);
      if (!ik.type.is_scalar() || ik.type.elem != Scalar::I64) {
        diags_.error(a.body->span,
                     "an index of `accum` must be an integer (i64), found " + ik.type.to_string());
        ok = false;
        return;
      }
      results.push_back(ik.atom);
    }
    value = tuple_elem(v, r, a.body->span);
    if (value.type.is_tuple || !is_real(value.type.elem)) {
      diags_.error(a.body->span,
                   "the value of `accum` must be real, found " + value.type.to_string());
      ok = false;
      return;
    }
    results.push_back(value.atom);
    blocks_.back()->results = std::move(results);
  });
  ok = close_binders(scope, a.binders, ok) && ok;
  if (!ok) return Val::error(span);
  std::vector<SizeExpr> full = shape;
  full.insert(full.end(), value.type.shape.begin(), value.type.shape.end());
  Type t = Type::tensor(value.type.elem, std::move(full));
  return var_val(
      emit(ir::AccumOp{std::move(shape), std::move(scope.ivars), std::move(body)}, t, span), span);
}

}  // namespace cot::check
