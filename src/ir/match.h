// Exhaustive dispatch over the kinds of a Core IR operation (ir::Op): `match(op, cases...)`
// calls the case that takes op's kind, and the build fails unless there is a case for every
// kind and none is a catch-all. So adding an Op kind to ir.h breaks the build at every match
// until the new kind is handled, where a std::visit with an `if constexpr` chain would skip it
// without a word (docs/design.md §4).
#pragma once

#include <type_traits>
#include <utility>
#include <variant>

#include "ir/ir.h"

namespace cot::ir {

// The overload set of several lambdas.
template <class... Fs>
struct Cases : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Cases(Fs...) -> Cases<Fs...>;

namespace detail {
struct NotAnOp {};
template <class Variant, class F, bool Const>
struct CoversAll;
template <class... Ts, class F, bool Const>
struct CoversAll<std::variant<Ts...>, F, Const>
    : std::bool_constant<(std::is_invocable_v<F, std::conditional_t<Const, const Ts&, Ts&>> &&
                          ...)> {};
}  // namespace detail

// T, const when S is: the kind a case takes when matching an Op that is (or is not) const.
template <class S, class T>
using LikeConst = std::conditional_t<std::is_const_v<S>, const T, T>;

template <class OpT, class... Fs>
decltype(auto) match(OpT& op, Fs&&... fs) {
  Cases cases{std::forward<Fs>(fs)...};
  using C = decltype(cases);
  static_assert(!std::is_invocable_v<C, detail::NotAnOp&>,
                "ir::match: no catch-all case; name every Op kind");
  static_assert(detail::CoversAll<std::remove_const_t<OpT>, C, std::is_const_v<OpT>>::value,
                "ir::match: a case per Op kind");
  return std::visit(cases, op);
}

}  // namespace cot::ir
