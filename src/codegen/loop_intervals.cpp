#include "codegen/loop_intervals.h"

#include <utility>
#include <vector>

#include "codegen/expr.h"

namespace cot::codegen {

namespace {

using Wide = __int128;

std::optional<Range> narrow(Wide lo, Wide hi) {
  if (lo < INT64_MIN || hi > INT64_MAX) return std::nullopt;
  return Range{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

std::optional<Range> combine(Prim p, const Range& a, const Range& b) {
  switch (p) {
    case Prim::Add:
      return narrow(Wide{a.lo} + b.lo, Wide{a.hi} + b.hi);
    case Prim::Sub:
      return narrow(Wide{a.lo} - b.hi, Wide{a.hi} - b.lo);
    case Prim::Mul: {
      const Wide c[] = {Wide{a.lo} * b.lo, Wide{a.lo} * b.hi, Wide{a.hi} * b.lo, Wide{a.hi} * b.hi};
      Wide lo = c[0], hi = c[0];
      for (Wide x : c) {
        lo = x < lo ? x : lo;
        hi = x > hi ? x : hi;
      }
      return narrow(lo, hi);
    }
    case Prim::Max:
      return Range{std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
    case Prim::Min:
      return Range{std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
    default:
      return std::nullopt;
  }
}

// The value of `a op b` when the ranges decide it.
std::optional<bool> compare(Prim p, const Range& a, const Range& b) {
  switch (p) {
    case Prim::Lt:
      if (a.hi < b.lo) return true;
      if (a.lo >= b.hi) return false;
      return std::nullopt;
    case Prim::Le:
      if (a.hi <= b.lo) return true;
      if (a.lo > b.hi) return false;
      return std::nullopt;
    case Prim::Gt:
      return compare(Prim::Lt, b, a);
    case Prim::Ge:
      return compare(Prim::Le, b, a);
    case Prim::Eq:
      if (a.lo == a.hi && b.lo == b.hi && a.lo == b.lo) return true;
      if (a.hi < b.lo || b.hi < a.lo) return false;
      return std::nullopt;
    case Prim::Ne:
      if (auto eq = compare(Prim::Eq, a, b)) return !*eq;
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

bool is_comparison(Prim p) {
  return p == Prim::Lt || p == Prim::Le || p == Prim::Gt || p == Prim::Ge || p == Prim::Eq ||
         p == Prim::Ne;
}

}  // namespace

std::optional<Range> LoopIntervals::of(const ExprP& e) const {
  if (!e || e->type != Scalar::I64) return std::nullopt;
  if (auto c = as_i64(e)) return Range{*c, *c};
  if (e->kind == Expr::Kind::Local) {
    auto it = ranges_.find(e->local);
    if (it == ranges_.end()) return std::nullopt;
    return it->second;
  }
  if (e->kind != Expr::Kind::Prim) return std::nullopt;
  if (e->prim == Prim::Neg && e->args.size() == 1) {
    auto a = of(e->args[0]);
    if (!a) return std::nullopt;
    return narrow(-Wide{a->hi}, -Wide{a->lo});
  }
  if (e->args.size() != 2) return std::nullopt;
  auto a = of(e->args[0]);
  if (!a) return std::nullopt;
  auto b = of(e->args[1]);
  if (!b) return std::nullopt;
  return combine(e->prim, *a, *b);
}

bool LoopIntervals::fits(Prim p, const std::vector<ExprP>& args) const {
  if (p == Prim::Neg && args.size() == 1) {
    auto a = of(args[0]);
    return a && a->lo != INT64_MIN;
  }
  if ((p != Prim::Add && p != Prim::Sub && p != Prim::Mul) || args.size() != 2) return false;
  auto a = of(args[0]), b = of(args[1]);
  return a && b && combine(p, *a, *b).has_value();
}

ExprP LoopIntervals::fold(const ExprP& e) const {
  if (e && e->kind == Expr::Kind::Local && e->type == Scalar::I64) {
    auto r = of(e);
    return r && r->lo == r->hi ? lit_i64(r->lo) : e;
  }
  if (!e || e->args.empty()) return e;
  std::vector<ExprP> args;
  args.reserve(e->args.size());
  bool changed = false;
  for (const ExprP& a : e->args) {
    args.push_back(fold(a));
    changed = changed || args.back() != a;
  }
  if (e->kind == Expr::Kind::Prim && args.size() == 2) {
    const bool minmax = e->type == Scalar::I64 && (e->prim == Prim::Max || e->prim == Prim::Min);
    if (minmax || (is_comparison(e->prim) && args[0]->type == Scalar::I64)) {
      auto a = of(args[0]), b = of(args[1]);
      if (a && b && minmax) {
        const bool max = e->prim == Prim::Max;
        if (a->lo >= b->hi) return max ? args[0] : args[1];
        if (b->lo >= a->hi) return max ? args[1] : args[0];
      } else if (a && b) {
        if (auto v = compare(e->prim, *a, *b)) return lit_bool(*v);
      }
    }
  }
  if (!changed) return e;
  if (e->kind == Expr::Kind::Prim && e->type == Scalar::I64) {
    // i64 arithmetic on literals folds (a local of one value became one).
    switch (e->prim) {
      case Prim::Add:
        return add_i64(args[0], args[1]);
      case Prim::Sub:
        return sub_i64(args[0], args[1]);
      case Prim::Mul:
        return mul_i64(args[0], args[1]);
      default:
        break;
    }
  }
  return with_operands(e, std::move(args));
}

}  // namespace cot::codegen
