// One activation of a Core IR function: a value slot per variable (VarIds are dense), the
// per-slot "masked" flag of the cost model, and the values of the function's size variables.
// Regions (gen, reduce, loop bodies, ...) reuse the slots of their function's frame: the IR is
// single-assignment, so a slot is rebound only when its region runs again.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cotangent/value.h"
#include "interp/marks.h"
#include "ir/ir.h"

namespace cot::interp {

struct Frame {
  const ir::Function* fn;
  std::vector<cotangent::Value> vals;
  // Why the slot holds a zero that the cost model does not charge to add ([Bernstein20] rule
  // 4.24): 0 for an ordinary value; kStrongZero when a guard whose predicate was false bound it,
  // or a sum all of whose terms were such (a strong zero, which stays one through products,
  // docs/language.md §5.6); kEmptySum for a sum over an empty range (free to add, an ordinary 0
  // as a factor).
  static constexpr uint8_t kStrongZero = 1;
  static constexpr uint8_t kEmptySum = 2;
  std::vector<uint8_t> masked;
  // Which elements or components of the slot's tensor or tuple are strong zeros (marks.h).
  std::vector<MarksP> marks;
  // Parallel to fn->size_vars; unused for dynamic sizes (SizeVar::param == -1), whose value is
  // the i64 in their variable's slot, bound by the saving loop that defines them.
  std::vector<int64_t> size_values;

  explicit Frame(const ir::Function& f)
      : fn(&f),
        vals(f.vars.size()),
        masked(f.vars.size(), 0),
        marks(f.vars.size()),
        size_values(f.size_vars.size(), 0) {}

  void bind(ir::VarId v, cotangent::Value x, bool is_strong_zero = false) {
    bind_masked(v, std::move(x), is_strong_zero ? kStrongZero : 0);
  }
  void bind_masked(ir::VarId v, cotangent::Value x, uint8_t mask, MarksP m = nullptr) {
    vals[static_cast<size_t>(v)] = std::move(x);
    masked[static_cast<size_t>(v)] = mask;
    marks[static_cast<size_t>(v)] = std::move(m);
  }
  const cotangent::Value& at(ir::VarId v) const { return vals[static_cast<size_t>(v)]; }
  uint8_t mask(ir::VarId v) const { return masked[static_cast<size_t>(v)]; }
  const MarksP& marks_of(ir::VarId v) const { return marks[static_cast<size_t>(v)]; }
  bool is_masked(ir::VarId v) const { return masked[static_cast<size_t>(v)] != 0; }
  bool is_strong_zero(ir::VarId v) const { return masked[static_cast<size_t>(v)] == kStrongZero; }

  // The value of a size variable by name (size expressions name their variables). A dynamic
  // size whose variable holds no i64 yet (its saving loop has not run) has no value.
  std::optional<int64_t> size_value(const std::string& name) const {
    for (size_t k = 0; k < fn->size_vars.size(); ++k) {
      const ir::SizeVar& sv = fn->size_vars[k];
      if (sv.name != name) continue;
      if (sv.param != -1) return size_values[k];
      if (sv.var < 0 || static_cast<size_t>(sv.var) >= vals.size()) return std::nullopt;
      const cotangent::Value& v = vals[static_cast<size_t>(sv.var)];
      if (!v.is_scalar() || v.dtype() != cotangent::DType::I64) return std::nullopt;
      return v.as_i64();
    }
    return std::nullopt;
  }
  // A dynamic size variable of this name that has no value yet, or null.
  const ir::SizeVar* unbound_dynamic_size(const std::string& name) const {
    for (const ir::SizeVar& sv : fn->size_vars) {
      if (sv.name == name && sv.param == -1 && !size_value(name)) return &sv;
    }
    return nullptr;
  }
};

}  // namespace cot::interp
