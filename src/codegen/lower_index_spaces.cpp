// Lowering: index spaces, the loop nests over a generator's or reduction's points, with bounds
// tightened to a guard's predicate where interval and affine reasoning allow.
#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"

namespace cot::codegen::lowering {

std::vector<ExprP> Lowerer::extents(const std::vector<ir::IndexVar>& ivars, Span span,
                                    bool allow_negative) {
  std::vector<ExprP> out;
  for (const ir::IndexVar& iv : ivars) {
    ExprP e = size(iv.extent, span);
    if (!allow_negative) {
      if (auto c = as_i64(e); !c || *c < 0) {
        Site st;
        st.kind = Site::Kind::NegativeExtent;
        st.span = span;
        st.message = iv.extent.to_string() + " of index " + name_of(iv.var);
        fail_unless(prim(Prim::Ge, {e, lit_i64(0)}), site(std::move(st)), {e});
      }
    }
    out.push_back(e);
  }
  return out;
}

void Lowerer::points(const std::vector<ir::IndexVar>& ivars, const std::vector<ExprP>& extents,
                     size_t d, ExprP linear, PointLoops kind,
                     const std::function<void(ExprP)>& body) {
  if (d == ivars.size()) {
    body(linear);
    return;
  }
  LocalId i = out_.new_local(c_hint(ivars[d].var), Scalar::I64);
  ExprP end = extents[d];
  if (auto c = as_i64(end)) {
    if (*c <= 0) return;  // no point: nothing runs (the interpreter skips the body too)
    ints_.ranges[i] = Interval{0, *c - 1};
  } else if (auto r = range(end); r && r->second >= 1) {
    ints_.ranges[i] = Interval{0, r->second - 1};
  }
  ExprP begin = lit_i64(0);
  std::optional<int64_t> width;  // hi - lo when the tightened bounds move together
  const size_t implied_before = scope_.implied.size();
  if (scope_.tighten != nullptr) {
    auto [lo, hi] = tightened(*scope_.tighten, ivars, d, end);
    if (!(as_i64(lo) == int64_t{0} && hi == end)) {
      // Points outside [lo, hi) fail the guard: strong zeros the sum's mask must count.
      if (scope_.tighten_strong >= 0) {
        emit(Assign{scope_.tighten_strong,
                    or_(local(out_, scope_.tighten_strong),
                        or_(prim(Prim::Gt, {lo, lit_i64(0)}), prim(Prim::Lt, {hi, end})))});
      }
      width = constant_difference(hi, lo);
      begin = declare(lo, "lo");
      end = declare(hi, "hi");
    }
  }
  bind(ivars[d].var, scalar_val(local(out_, i), Scalar::I64));
  const Pred* saved = scope_.tighten;
  const Pred* saved_true = scope_.guard_true;
  if (d + 1 == ivars.size()) {
    // The body's own regions are not tightened; its guard holds at every point the loops
    // visit when the bounds used every conjunct.
    if (scope_.tighten != nullptr && implies_all(*scope_.tighten))
      scope_.guard_true = scope_.tighten;
    scope_.tighten = nullptr;
  }
  // A window of constant width (lo = g - 4, hi = g + 1) runs as a counted loop, which the
  // compiler unrolls: for t < 5 { i = lo + t; ... } (empty when clipped below 0 points).
  const bool counted = width && *width > 0 && *width <= 16 && !as_i64(begin);
  LocalId t = counted ? out_.new_local("t", Scalar::I64) : i;
  Body b = nested([&] {
    if (counted) emit(Declare{i, add_i64(begin, local(out_, t))});
    points(ivars, extents, d + 1, add_i64(mul_i64(linear, extents[d]), local(out_, i)),
           kind == PointLoops::Parallel ? PointLoops::Independent : kind, body);
  });
  if (counted) {
    emit(For{t, lit_i64(0), lit_i64(*width), std::move(b), false});
  } else {
    For loop{i, std::move(begin), std::move(end), std::move(b), kind == PointLoops::Parallel};
    loop.independent = kind != PointLoops::Ordered;
    emit(std::move(loop));
  }
  scope_.tighten = saved;
  scope_.guard_true = saved_true;
  scope_.implied.resize(implied_before);
}

std::optional<int64_t> Lowerer::constant_difference(const ExprP& a, const ExprP& b) {
  std::map<LocalId, int64_t> ta, tb;
  int64_t ca = 0, cb = 0;
  if (!linear_form(a, 1, ta, ca) || !linear_form(b, 1, tb, cb)) return std::nullopt;
  std::erase_if(ta, [](const auto& kv) { return kv.second == 0; });
  std::erase_if(tb, [](const auto& kv) { return kv.second == 0; });
  if (ta != tb) return std::nullopt;
  int64_t d = 0;
  if (__builtin_sub_overflow(ca, cb, &d)) return std::nullopt;
  return d;
}

bool Lowerer::linear_form(const ExprP& e, int64_t k, std::map<LocalId, int64_t>& terms,
                          int64_t& constant) {
  if (e->type != Scalar::I64) return false;
  if (auto c = as_i64(e)) return !__builtin_add_overflow(constant, k * *c, &constant);
  if (e->kind == Expr::Kind::Local) {
    terms[e->local] += k;
    return true;
  }
  if (e->kind != Expr::Kind::Prim) return false;
  switch (e->prim) {
    case Prim::Add:
      return linear_form(e->args[0], k, terms, constant) &&
             linear_form(e->args[1], k, terms, constant);
    case Prim::Sub:
      return linear_form(e->args[0], k, terms, constant) &&
             linear_form(e->args[1], -k, terms, constant);
    case Prim::Neg:
      return linear_form(e->args[0], -k, terms, constant);
    case Prim::Mul:
      if (auto c = as_i64(e->args[0]); c && std::abs(*c) < (int64_t{1} << 20)) {
        return linear_form(e->args[1], k * *c, terms, constant);
      }
      if (auto c = as_i64(e->args[1]); c && std::abs(*c) < (int64_t{1} << 20)) {
        return linear_form(e->args[0], k * *c, terms, constant);
      }
      return false;
    default:
      return false;
  }
}

ExprP Lowerer::max_i64(const ExprP& a, const ExprP& b) {
  auto ra = range(a), rb = range(b);
  if (ra && rb && ra->first >= rb->second) return a;
  if (ra && rb && rb->first >= ra->second) return b;
  return prim(Prim::Max, {a, b});
}

ExprP Lowerer::min_i64(const ExprP& a, const ExprP& b) {
  auto ra = range(a), rb = range(b);
  if (ra && rb && ra->second <= rb->first) return a;
  if (ra && rb && rb->second <= ra->first) return b;
  return prim(Prim::Min, {a, b});
}

std::pair<ExprP, ExprP> Lowerer::tightened(const Pred& p, const std::vector<ir::IndexVar>& ivars,
                                           size_t d, const ExprP& extent) {
  ExprP lo = lit_i64(0), hi = extent;
  const std::vector<const Pred*> conj = conjuncts(p);
  const ir::VarId iv = ivars[d].var;
  for (const Pred* c : conj) {
    // A conjunct that mentions no index variable of the region holds everywhere or nowhere:
    // the outermost loop runs only when it holds.
    if (d == 0 && c->kind == Pred::Kind::Atom) {
      ExprP b = atom(ir::Atom::of(c->atom));
      hi = select(c->negated ? not_(b) : b, hi, lit_i64(0));
      scope_.implied.push_back(c);
      continue;
    }
    if (c->kind != Pred::Kind::Ge0 && c->kind != Pred::Kind::Eq0) continue;
    bool any = false;
    for (const ir::IndexVar& v : ivars) any = any || c->expr.mentions(v.var);
    if (!any) {
      if (d != 0) continue;
      std::optional<ExprP> e = pure_affine(c->expr);
      if (!e) continue;
      hi = select(prim(c->kind == Pred::Kind::Ge0 ? Prim::Ge : Prim::Eq, {*e, lit_i64(0)}), hi,
                  lit_i64(0));
      scope_.implied.push_back(c);
      continue;
    }
    const int64_t a = c->expr.coeff(iv);
    if (a != 1 && a != -1) continue;
    bool later = false;
    for (size_t e = d + 1; e < ivars.size(); ++e) later = later || c->expr.mentions(ivars[e].var);
    if (later) continue;
    std::optional<Affine> rest = Affine::add(c->expr, Affine::var(iv, -a));
    if (!rest) continue;
    std::optional<ExprP> r = pure_affine(*rest);
    if (!r) continue;
    ExprP neg = sub_i64(lit_i64(0), *r);
    if (!range(neg) && !as_i64(neg)) continue;
    // a = 1: i >= -rest (and i == -rest); a = -1: i <= rest (and i == rest).
    ExprP at = a == 1 ? neg : *r;
    scope_.implied.push_back(c);
    if (c->kind == Pred::Kind::Eq0 || a == 1) lo = max_i64(lo, at);
    if (c->kind == Pred::Kind::Eq0 || a == -1) hi = min_i64(hi, add_i64(at, lit_i64(1)));
  }
  return {lo, hi};
}

bool Lowerer::implied_nonnegative(const Affine& e) {
  for (const Affine& f : scope_.facts) {
    std::optional<Affine> diff = Affine::sub(e, f);
    if (!diff) continue;
    std::optional<ExprP> v = pure_affine(*diff);
    if (!v) continue;
    if (auto c = as_i64(*v); c && *c >= 0) return true;
    if (auto r = range(*v); r && r->first >= 0) return true;
  }
  return false;
}

void Lowerer::facts_of(const Pred& p, std::vector<Affine>& out) {
  switch (p.kind) {
    case Pred::Kind::Ge0:
      out.push_back(p.expr);
      break;
    case Pred::Kind::Eq0:
      out.push_back(p.expr);
      if (auto neg = Affine::scale(p.expr, -1)) out.push_back(*neg);
      break;
    case Pred::Kind::And:
      for (const Pred& k : p.kids) facts_of(k, out);
      break;
    default:
      break;
  }
}

std::vector<const Pred*> Lowerer::conjuncts(const Pred& p) {
  std::vector<const Pred*> out;
  if (p.kind != Pred::Kind::And) return {&p};
  out.reserve(p.kids.size());
  for (const Pred& k : p.kids) out.push_back(&k);
  return out;
}

bool Lowerer::implies_all(const Pred& p) const {
  for (const Pred* c : conjuncts(p)) {
    if (std::find(scope_.implied.begin(), scope_.implied.end(), c) == scope_.implied.end())
      return false;
  }
  return true;
}

std::optional<ExprP> Lowerer::pure_affine(const Affine& a) {
  ExprP acc = lit_i64(a.constant_term());
  for (const auto& [v, c] : a.terms()) {
    const auto& x = env_.vals.at(static_cast<size_t>(v));
    if (!x || x->kind != Val::Kind::Scalar || x->scalar->type != Scalar::I64) return std::nullopt;
    ExprP term = mul_i64(lit_i64(c), x->scalar);
    if (!as_i64(term) && !range(term)) return std::nullopt;
    acc = add_i64(acc, term);
    if (!as_i64(acc) && !range(acc)) return std::nullopt;
  }
  return acc;
}

bool Lowerer::overflow_free(const Pred& p) {
  switch (p.kind) {
    case Pred::Kind::Ge0:
    case Pred::Kind::Eq0:
      return pure_affine(p.expr).has_value();
    case Pred::Kind::And:
    case Pred::Kind::Or:
      for (const Pred& k : p.kids) {
        if (!overflow_free(k)) return false;
      }
      return true;
    default:
      return true;
  }
}

const Pred* Lowerer::single_guard(const ir::Block& body, size_t k) {
  if (body.stmts.size() != 1 || k >= body.results.size()) return nullptr;
  const ir::Stmt& st = body.stmts[0];
  const auto* g = st.as<ir::GuardOp>();
  const ir::Atom& r = body.results[k];
  if (g == nullptr || st.results.size() != 1 || !r.is_var || r.var != st.results[0]) {
    return nullptr;
  }
  return &g->pred;
}

bool Lowerer::may_tighten(const Pred& p, const std::vector<ir::IndexVar>& ivars,
                          const std::vector<ExprP>& ext) {
  for (size_t d = 0; d < ivars.size(); ++d) {
    auto c = as_i64(ext[d]);
    if (!c || *c <= 0) return false;
    LocalId probe = out_.new_local("probe", Scalar::I64);
    ints_.ranges[probe] = Interval{0, *c - 1};
    bind(ivars[d].var, scalar_val(local(out_, probe), Scalar::I64));
  }
  return overflow_free(p);
}

}  // namespace cot::codegen::lowering
