// Binding a call's arguments: types and tuple structure, size variables from argument shapes,
// and the agreement of every declared dimension; also the check of the returned value.
#include <string>
#include <vector>

#include "interp/machine.h"
#include "interp/tensor_ops.h"

namespace cot::interp {

using cotangent::Value;

namespace {

// Whether a value has the dtype, rank and tuple structure of a type (dimensions aside).
bool same_structure(const Type& t, const Value& v) {
  if (t.is_tuple != v.is_tuple()) return false;
  if (t.is_tuple) {
    if (t.elems.size() != v.elems().size()) return false;
    for (size_t k = 0; k < t.elems.size(); ++k) {
      if (!same_structure(t.elems[k], v.elems()[k])) return false;
    }
    return true;
  }
  return dtype_of(t.elem) == v.dtype() && t.rank() == static_cast<size_t>(v.rank());
}

// The component of a value at a tuple path, or null when the path does not exist.
const Value* component(const Value& v, const std::vector<int>& path) {
  const Value* at = &v;
  for (int k : path) {
    if (!at->is_tuple() || k < 0 || static_cast<size_t>(k) >= at->elems().size()) return nullptr;
    at = &at->elems()[static_cast<size_t>(k)];
  }
  return at;
}

}  // namespace

bool Machine::bind_params(const ir::Function& fn, const std::vector<Value>& args, Span call_span,
                          const std::vector<MaskAndMarks>* arg_marks) {
  const bool entry = !call_span.valid();
  auto param_span = [&](size_t i) {
    if (!entry) return call_span;
    return i < fn.param_spans.size() ? fn.param_spans[i] : fn.span;
  };
  auto param_name = [&](size_t i) { return var_name(fn.params[i]); };
  // At a call site the message says which call; at the entry point the span does.
  const std::string context = entry ? "" : "in a call of " + fn.name + ": ";

  if (args.size() != fn.params.size()) {
    return fail(entry ? fn.span : call_span,
                context + fn.name + " takes " + std::to_string(fn.params.size()) +
                    " argument(s) but was given " + std::to_string(args.size()));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Type& t = fn.param_type(i);
    if (!same_structure(t, args[i])) {
      return fail(param_span(i), context + "parameter " + param_name(i) + " expects " +
                                     t.to_string() + " but got " + args[i].type_string());
    }
    if (arg_marks != nullptr && i < arg_marks->size()) {
      frame_->bind_masked(fn.params[i], args[i], (*arg_marks)[i].mask, (*arg_marks)[i].marks);
    } else {
      frame_->bind(fn.params[i], args[i]);
    }
  }

  for (size_t k = 0; k < fn.size_vars.size(); ++k) {
    const ir::SizeVar& sv = fn.size_vars[k];
    if (sv.param == -1) continue;  // a dynamic size, bound by its saving loop in the body
    const Value* at = nullptr;
    if (sv.param >= 0 && static_cast<size_t>(sv.param) < args.size()) {
      at = component(args[static_cast<size_t>(sv.param)], sv.path);
    }
    if (at == nullptr || at->is_tuple() || sv.dim < 0 || sv.dim >= at->rank()) {
      return internal(fn.span, "size variable " + sv.name + " of " + fn.name +
                                   " is bound at a position its parameter does not have");
    }
    frame_->size_values[k] = at->shape()[static_cast<size_t>(sv.dim)];
    if (sv.var >= 0) frame_->bind(sv.var, Value::i64(frame_->size_values[k]));
  }

  // Every declared dimension must agree with the argument's, given the size variables' values.
  for (size_t i = 0; i < args.size(); ++i) {
    std::string failure;
    Span failure_span = param_span(i);
    std::vector<std::pair<Span, std::string>> notes;
    auto check = [&](auto&& self, const Type& t, const Value& v) -> bool {
      if (t.is_tuple) {
        for (size_t k = 0; k < t.elems.size(); ++k) {
          if (!self(self, t.elems[k], v.elems()[k])) return false;
        }
        return true;
      }
      for (size_t d = 0; d < t.shape.size(); ++d) {
        const SizeExpr& e = t.shape[d];
        const int64_t actual = v.shape()[d];
        std::string why;
        std::optional<int64_t> want =
            e.eval([this](const std::string& n) { return frame_->size_value(n); }, &why);
        if (!want) {
          failure = "parameter " + param_name(i) + " (" + args[i].type_string() +
                    ") does not fit its type " + fn.param_type(i).to_string() + ": " + why;
          return false;
        }
        if (*want == actual) continue;
        std::optional<std::string> name = e.as_var();
        const ir::SizeVar* sv = nullptr;
        for (const ir::SizeVar& s : fn.size_vars) {
          if (name && s.name == *name) sv = &s;
        }
        if (sv != nullptr) {
          auto j = static_cast<size_t>(sv->param);
          if (j == i) {  // two dimensions of one parameter disagree
            failure = "size variable " + *name + " is " + std::to_string(*want) +
                      " from dimension " + std::to_string(sv->dim) + " of parameter " +
                      param_name(i) + " but " + std::to_string(actual) + " from dimension " +
                      std::to_string(d) + " (" + param_name(i) + " is " + args[i].type_string() +
                      ", declared " + fn.param_type(i).to_string() + ")";
          } else {
            failure = "size variable " + *name + " is " + std::to_string(*want) +
                      " from parameter " + param_name(j) + " (" + args[j].type_string() + ") but " +
                      std::to_string(actual) + " from parameter " + param_name(i) + " (" +
                      args[i].type_string() + ")";
          }
          if (entry && j != i && j < fn.param_spans.size()) {
            notes.emplace_back(fn.param_spans[j], *name + " is first bound by " + param_name(j));
          }
        } else {
          std::string vars;
          for (const std::string& n : e.vars()) {
            std::optional<int64_t> val = frame_->size_value(n);
            vars += (vars.empty() ? " (" : ", ") + n + " = " + (val ? std::to_string(*val) : "?");
          }
          if (!vars.empty()) vars += ")";
          const std::string must = e.is_constant()
                                       ? std::to_string(*want)
                                       : e.to_string() + " = " + std::to_string(*want) + vars;
          failure = "parameter " + param_name(i) + " (" + args[i].type_string() +
                    ") does not fit its type " + fn.param_type(i).to_string() + ": dimension " +
                    std::to_string(d) + " must be " + must + ", found " + std::to_string(actual);
        }
        return false;
      }
      return true;
    };
    if (!check(check, fn.param_type(i), args[i])) {
      fail(failure_span, context + failure);
      error_->notes = std::move(notes);
      return false;
    }
  }
  return true;
}

bool Machine::check_result(const ir::Function& fn, const Value& result) {
  bool ok = same_structure(fn.result_type, result);
  auto dims_agree = [&](auto&& self, const Type& t, const Value& v) -> bool {
    if (t.is_tuple) {
      for (size_t k = 0; k < t.elems.size(); ++k) {
        if (!self(self, t.elems[k], v.elems()[k])) return false;
      }
      return true;
    }
    for (size_t d = 0; d < t.shape.size(); ++d) {
      std::optional<int64_t> want =
          t.shape[d].eval([this](const std::string& n) { return frame_->size_value(n); });
      if (!want || *want != v.shape()[d]) return false;
    }
    return true;
  };
  if (ok) ok = dims_agree(dims_agree, fn.result_type, result);
  if (ok) return true;
  return internal(fn.span, fn.name + " returned " + result.type_string() +
                               ", which does not fit its result type " +
                               fn.result_type.to_string());
}

}  // namespace cot::interp
