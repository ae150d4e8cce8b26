#include "codegen/may_fail.h"

#include <optional>
#include <type_traits>
#include <variant>

#include "codegen/expr.h"

namespace cot::codegen {

bool may_fail(const Body& b) {
  for (const Stmt& s : b) {
    const bool fails = std::visit(
        [](const auto& op) -> bool {
          using T = std::decay_t<decltype(op)>;
          if constexpr (std::is_same_v<T, Fail> || std::is_same_v<T, CheckedInt> ||
                        std::is_same_v<T, StackGrow> || std::is_same_v<T, Forever>) {
            return true;
          } else if constexpr (std::is_same_v<T, For>) {
            // A parallel loop's thread arena is allocated, and checked, where it starts.
            return (op.parallel && op.thread_arena_bytes > 0) || may_fail(op.body);
          } else if constexpr (std::is_same_v<T, If>) {
            return may_fail(op.then_body) || may_fail(op.else_body);
          } else if constexpr (std::is_same_v<T, Alloc>) {
            return !as_i64(op.count);  // a heap allocation can fail
          } else if constexpr (std::is_same_v<T, Combine>) {
            return op.site >= 0;
          } else {
            return false;
          }
        },
        s.op);
    if (fails) return true;
  }
  return false;
}

bool has_loop_or_buffer(const Body& b) {
  for (const Stmt& s : b) {
    if (std::holds_alternative<For>(s.op) || std::holds_alternative<Forever>(s.op) ||
        std::holds_alternative<Alloc>(s.op)) {
      return true;
    }
    if (const auto* i = std::get_if<If>(&s.op);
        i != nullptr && (has_loop_or_buffer(i->then_body) || has_loop_or_buffer(i->else_body))) {
      return true;
    }
  }
  return false;
}

bool runs_long(const For& f) {
  const std::optional<int64_t> begin = as_i64(f.begin), end = as_i64(f.end);
  return !begin || !end || *end - *begin >= kLongLoop;
}

}  // namespace cot::codegen
