// Lowering: integer ranges (what interval reasoning over the concrete extents proves), sizes
// (constant, or computed at run time with overflow checks) and the tensor-size checks.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"
#include "runtime/size_checks.h"

namespace cot::codegen::lowering {

std::optional<Interval> Lowerer::range(const ExprP& e) const {
  if (!e || e->type != Scalar::I64) return std::nullopt;
  switch (e->kind) {
    case Expr::Kind::Lit:
      return Interval{e->lit.integer, e->lit.integer};
    case Expr::Kind::Local: {
      auto it = ints_.ranges.find(e->local);
      if (it == ints_.ranges.end()) return std::nullopt;
      return it->second;
    }
    case Expr::Kind::Prim: {
      std::vector<Interval> rs;
      for (const ExprP& a : e->args) {
        if (a->type != Scalar::I64) {
          if (e->prim == Prim::Select) continue;
          return std::nullopt;
        }
        auto r = range(a);
        if (!r) return std::nullopt;
        rs.push_back(*r);
      }
      using W = __int128;
      auto fits = [](W lo, W hi) -> std::optional<Interval> {
        if (lo < INT64_MIN || hi > INT64_MAX) return std::nullopt;
        return Interval{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
      };
      switch (e->prim) {
        case Prim::Add:
          return fits(W(rs[0].first) + rs[1].first, W(rs[0].second) + rs[1].second);
        case Prim::Sub:
          return fits(W(rs[0].first) - rs[1].second, W(rs[0].second) - rs[1].first);
        case Prim::Neg:
          return fits(-W(rs[0].second), -W(rs[0].first));
        case Prim::Mul: {
          W c[4] = {W(rs[0].first) * rs[1].first, W(rs[0].first) * rs[1].second,
                    W(rs[0].second) * rs[1].first, W(rs[0].second) * rs[1].second};
          return fits(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
        }
        case Prim::Max:
          return Interval{std::max(rs[0].first, rs[1].first), std::max(rs[0].second, rs[1].second)};
        case Prim::Min:
          return Interval{std::min(rs[0].first, rs[1].first), std::min(rs[0].second, rs[1].second)};
        case Prim::Select:
          if (rs.size() != 2) return std::nullopt;
          return Interval{std::min(rs[0].first, rs[1].first), std::max(rs[0].second, rs[1].second)};
        default:
          return std::nullopt;
      }
    }
    default:
      return std::nullopt;
  }
}

ExprP Lowerer::int_op(Prim p, ExprP a, ExprP b, int site_id) {
  ExprP e = p == Prim::Add ? add_i64(a, b) : p == Prim::Sub ? sub_i64(a, b) : mul_i64(a, b);
  if (as_i64(e) || range(e)) return e;
  // Folding failed on literals (an overflow) or nothing is known: check at run time.
  LocalId l = out_.new_local("i", Scalar::I64);
  emit(CheckedInt{l, p, {std::move(a), std::move(b)}, site_id});
  return local(out_, l);
}

ExprP Lowerer::size(const SizeExpr& s, Span span) {
  std::string why;
  bool dynamic = false;
  std::optional<int64_t> v = s.eval(
      [&](const std::string& n) -> std::optional<int64_t> {
        auto it = ints_.sizes.find(n);
        if (it == ints_.sizes.end()) return std::nullopt;
        if (auto c = as_i64(it->second)) return *c;
        dynamic = true;
        return std::nullopt;
      },
      &why);
  if (v) return lit_i64(*v);
  if (dynamic) return runtime_size(s, span);
  fail(message_site(span, "cannot evaluate the size " + s.to_string() + ": " + why));
  return lit_i64(0);
}

ExprP Lowerer::runtime_size(const SizeExpr& s, Span span) {
  const std::string text = s.to_string();
  if (auto it = ints_.runtime_sizes.find(text); it != ints_.runtime_sizes.end()) return it->second;
  const int over = message_site(span, "integer overflow in the size " + text);
  ExprP acc = lit_i64(0);
  for (const SizeExpr::Term& t : s.normal_terms()) {
    ExprP prod = lit_i64(t.coeff);
    for (const SizeExpr::Factor& f : t.factors) {
      ExprP v;
      if (!f.var.empty()) {
        auto it = ints_.sizes.find(f.var);
        if (it == ints_.sizes.end()) throw Unsupported{"the size " + f.var + " has no value"};
        v = it->second;
      } else {
        ExprP n = size(*f.num, span), d = size(*f.den, span);
        LocalId q = out_.new_local("q", Scalar::I64);
        emit(CheckedInt{
            q,
            Prim::ExactDiv,
            {n, d},
            message_site(span, "cannot evaluate the size " + text + ": size expression " + f.key +
                                   " does not divide exactly (or divides by "
                                   "zero)")});
        v = local(out_, q);
      }
      prod = int_op(Prim::Mul, prod, v, over);
    }
    acc = int_op(Prim::Add, acc, prod, over);
  }
  acc = declare(acc, "size");
  // Reused only where every later use is in scope: at the function's top level.
  if (bodies_.size() == 1) ints_.runtime_sizes[text] = acc;
  return acc;
}

std::vector<ExprP> Lowerer::shape_of(const Type& t, Span span) {
  std::vector<ExprP> dims;
  for (const SizeExpr& d : t.shape) dims.push_back(size(d, span));
  return dims;
}

std::optional<std::string> Lowerer::static_size_error(const std::vector<ExprP>& dims,
                                                      interp::SizeRule rule,
                                                      size_t index_rank) const {
  std::vector<int64_t> shape;
  for (const ExprP& d : dims) {
    auto c = as_i64(d);
    if (!c) return std::nullopt;
    shape.push_back(*c);
  }
  return interp::size_error(rule, shape, index_rank, in_.max_tensor_elements);
}

void Lowerer::check_size(const std::vector<ExprP>& dims, interp::SizeRule rule, size_t index_rank,
                         Span span) {
  bool all_static = true;
  for (const ExprP& d : dims) all_static = all_static && as_i64(d).has_value();
  if (all_static) {
    if (auto why = static_size_error(dims, rule, index_rank)) fail(message_site(span, *why));
    return;
  }
  Site s;
  s.kind = Site::Kind::TensorLimit;
  s.span = span;
  s.size_rule = rule;
  s.dim = static_cast<int>(index_rank);
  s.limit = in_.max_tensor_elements;
  // The run-time dims are reported (-1 in the shape); past kMaxSiteValues of them, they are
  // not (-2: the message shows "?").
  std::vector<ExprP> reported;
  for (const ExprP& d : dims) {
    auto c = as_i64(d);
    const bool room = reported.size() < static_cast<size_t>(kMaxSiteValues);
    s.shape.push_back(c ? *c : room ? -1 : -2);
    if (!c && room) reported.push_back(d);
  }
  // bad: a dim is negative, a product the rule takes overflows, or the count is over the
  // limit. A product p * d (p, d >= 0) overflows iff d > 0 and p > INT64_MAX / d.
  ExprP bad = lit_bool(false);
  for (const ExprP& d : dims) bad = or_(bad, prim(Prim::Lt, {d, lit_i64(0)}));
  auto overflows = [&](size_t from, size_t to, bool whole) {
    LocalId p = mutable_local("count", Scalar::I64, lit_i64(1));
    LocalId over = mutable_local("overflow", Scalar::Bool, lit_bool(false));
    for (size_t k = from; k < to; ++k) {
      const ExprP d = prim(Prim::Max, {dims[k], lit_i64(0)});
      const ExprP pk = local(out_, p);
      emit(Assign{
          over,
          or_(local(out_, over),
              and_(prim(Prim::Gt, {d, lit_i64(0)}),
                   prim(Prim::Gt, {pk, prim(Prim::Div, {lit_i64(INT64_MAX),
                                                        prim(Prim::Max, {d, lit_i64(1)})})})))});
      emit(Assign{p, mul_i64(pk, select(local(out_, over), lit_i64(0), d))});
    }
    ExprP r = local(out_, over);
    if (whole) r = or_(r, prim(Prim::Gt, {local(out_, p), lit_i64(in_.max_tensor_elements)}));
    return r;
  };
  const size_t r = std::min(index_rank, dims.size());
  // Each level's element shape of a generator (interp::SizeRule::Generator).
  if (rule == interp::SizeRule::Generator) {
    // Level k runs only where the extents outside it are positive.
    ExprP runs = lit_bool(true);
    for (size_t k = std::min<size_t>(1, r); k <= r; ++k) {
      if (k >= 2) runs = and_(runs, prim(Prim::Gt, {dims[k - 2], lit_i64(0)}));
      bad = or_(bad, and_(runs, overflows(k, dims.size(), false)));
    }
  }
  if (rule == interp::SizeRule::Accum) {
    bad = or_(bad, overflows(r, dims.size(), false));
    bad = or_(bad, overflows(0, r, false));
  }
  bad = or_(bad, overflows(0, dims.size(), true));
  fail_unless(not_(declare(bad, "bad_size")), site(std::move(s)), std::move(reported));
}

}  // namespace cot::codegen::lowering
