// The driver: the entry point, calls, statement dispatch, the environment and size evaluation.
#include "interp/interpreter.h"

#include <algorithm>
#include <utility>

#include "interp/machine.h"
#include "interp/tensor_ops.h"
#include "ir/match.h"
#include "runtime/size_checks.h"

namespace cot::interp {

using cotangent::DType;
using cotangent::Value;

std::variant<Value, Diagnostic> evaluate(const ir::Program& program, const std::string& fn,
                                         const std::vector<Value>& args, CostCounts* cost,
                                         const Options& options) {
  if (cost != nullptr) *cost = CostCounts{};
  const ir::Function* f = program.find(fn);
  if (f == nullptr) {
    return Diagnostic{Span{}, "there is no function named '" + fn + "' in the module", {}, {}};
  }
  Machine m(program, cost, options);
  Value result;
  if (!m.call(*f, args, Span{}, result)) return m.take_error();
  return result;
}

std::variant<std::vector<int64_t>, Diagnostic> bind_sizes(const ir::Program& program,
                                                          const std::string& fn,
                                                          const std::vector<Value>& args) {
  const ir::Function* f = program.find(fn);
  if (f == nullptr) {
    return Diagnostic{Span{}, "there is no function named '" + fn + "' in the module", {}, {}};
  }
  Machine m(program, nullptr, Options{});
  std::vector<int64_t> sizes;
  if (!m.bind_sizes(*f, args, sizes)) return m.take_error();
  return sizes;
}

namespace {

// Restores the caller's frame on every exit from a call.
class FrameScope {
 public:
  FrameScope(Frame*& slot, Frame* f) : slot_(slot), saved_(slot) { slot_ = f; }
  ~FrameScope() { slot_ = saved_; }
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;

 private:
  Frame*& slot_;
  Frame* saved_;
};

}  // namespace

bool Machine::call(const ir::Function& fn, const std::vector<Value>& args, Span call_span,
                   Value& result, const std::vector<MaskAndMarks>* arg_marks,
                   MaskAndMarks* result_marks) {
  Span where = call_span.valid() ? call_span : fn.span;
  if (fn.derivation && fn.body.stmts.empty() && fn.body.results.empty()) {
    return derivative_unsupported(fn, where);
  }
  // The checker rejects recursion, but a long chain of calls (f calls g calls h ...) still
  // nests interpreter frames; cap it so that no program can exhaust the stack.
  if (depth_ >= kMaxCallDepth) {
    return fail(where, "calls nest more than " + std::to_string(kMaxCallDepth) +
                           " deep here; the reference interpreter supports chains of calls up "
                           "to that depth");
  }
  if (!check_var_ids(fn)) return false;
  if (fn.body.results.size() != 1) {
    return internal(fn.span, "the body of " + fn.name + " must yield exactly one value");
  }
  Frame frame(fn);
  FrameScope scope(frame_, &frame);
  ++depth_;
  bool ok = bind_params(fn, args, call_span, arg_marks) && run_block(fn.body);
  --depth_;
  if (!ok) return false;
  Value scratch;
  result = value_of(fn.body.results[0], scratch);
  if (result_marks != nullptr) *result_marks = mask_and_marks(fn.body.results[0]);
  return check_result(fn, result);
}

bool Machine::bind_sizes(const ir::Function& fn, const std::vector<Value>& args,
                         std::vector<int64_t>& sizes) {
  if (fn.derivation && fn.body.stmts.empty() && fn.body.results.empty()) {
    return derivative_unsupported(fn, fn.span);
  }
  if (!check_var_ids(fn)) return false;
  Frame frame(fn);
  FrameScope scope(frame_, &frame);
  if (!bind_params(fn, args, Span{})) return false;
  sizes = frame.size_values;
  return true;
}

bool Machine::derivative_unsupported(const ir::Function& fn, Span span) {
  const ir::Derivation& d = *fn.derivation;
  std::string spelled = std::string(ast::to_string(d.kind)) + "(" + d.base;
  const ir::Function* base = program_.find(d.base);
  for (int w : d.wrt) {
    spelled += ", ";
    if (base != nullptr && w >= 0 && static_cast<size_t>(w) < base->params.size() &&
        base->params[static_cast<size_t>(w)] >= 0 &&
        static_cast<size_t>(base->params[static_cast<size_t>(w)]) < base->vars.size()) {
      spelled += base->vars[static_cast<size_t>(base->params[static_cast<size_t>(w)])].name;
    } else {
      spelled += "#" + std::to_string(w);
    }
  }
  spelled += ")";
  return fail(span, "derivative operators are not supported yet: " + spelled +
                        " cannot be evaluated by this version");
}

bool Machine::run_block(const ir::Block& b) {
  // Regions nest blocks, and calls nest functions' regions: bound the total so that the
  // interpreter's recursion stays far inside the stack whatever the program.
  if (block_depth_ >= kMaxBlockDepth) {
    return fail(b.stmts.empty() ? Span{} : b.stmts.front().span,
                "the program nests regions and calls more than " + std::to_string(kMaxBlockDepth) +
                    " deep");
  }
  ++block_depth_;
  bool ok = true;
  for (const ir::Stmt& s : b.stmts) {
    if (!run_stmt(s)) {
      ok = false;
      break;
    }
  }
  --block_depth_;
  return ok;
}

bool Machine::run_stmt(const ir::Stmt& s) {
  // Every op but loop, if and guard binds exactly one variable.
  bool multi = s.as<ir::LoopOp>() || s.as<ir::IfOp>() || s.as<ir::GuardOp>();
  if (!multi && s.results.size() != 1) {
    return internal(s.span, "a statement of this kind must bind exactly one variable");
  }
  return ir::match(
      s.op, [&](const ir::PrimOp& op) { return run_prim(s, op); },
      [&](const ir::IndexOp& op) { return run_index(s, op); },
      [&](const ir::GenOp& op) { return run_gen(s, op); },
      [&](const ir::ReduceOp& op) { return run_reduce(s, op); },
      [&](const ir::GuardOp& op) { return run_guard(s, op); },
      [&](const ir::LoopOp& op) { return run_loop(s, op); },
      [&](const ir::IfOp& op) { return run_if(s, op); },
      [&](const ir::AccumOp& op) { return run_accum(s, op); },
      [&](const ir::TupleOp& op) { return run_tuple(s, op); },
      [&](const ir::ProjOp& op) { return run_proj(s, op); },
      [&](const ir::SizeOp& op) { return run_size(s, op); },
      [&](const ir::CallOp& op) { return run_call(s, op); });
}

bool Machine::run_tuple(const ir::Stmt& s, const ir::TupleOp& op) {
  std::vector<Value> elems;
  elems.reserve(op.elems.size());
  Value scratch;
  for (const ir::Atom& a : op.elems) elems.push_back(value_of(a, scratch));
  // The components' strong zeros, kept only when there is one (marks.h).
  MarksP marks;
  for (const ir::Atom& a : op.elems) {
    if (mask_of(a) == 0 && marks_of(a) == nullptr) continue;
    auto m = std::make_shared<Marks>();
    for (const ir::Atom& b : op.elems) {
      m->part_masks.push_back(mask_of(b));
      m->part_marks.push_back(marks_of(b));
    }
    marks = std::move(m);
    break;
  }
  frame_->bind_masked(s.results[0], Value::tuple(std::move(elems)), 0, std::move(marks));
  return true;
}

bool Machine::run_proj(const ir::Stmt& s, const ir::ProjOp& op) {
  Value scratch;
  const Value& t = value_of(op.tuple, scratch);
  if (!t.is_tuple() || op.index < 0 || static_cast<size_t>(op.index) >= t.elems().size()) {
    return internal(s.span, "projection ." + std::to_string(op.index) + " of a value of type " +
                                t.type_string());
  }
  // A component of a strong zero is a strong zero; else it has the marks it was built with.
  const auto k = static_cast<size_t>(op.index);
  const MarksP m = marks_of(op.tuple);
  if (mask_of(op.tuple) != 0 || m == nullptr || k >= m->part_masks.size()) {
    frame_->bind_masked(s.results[0], t.elems()[k], mask_of(op.tuple));
  } else {
    frame_->bind_masked(s.results[0], t.elems()[k], m->part_masks[k], m->part_marks[k]);
  }
  return true;
}

bool Machine::run_size(const ir::Stmt& s, const ir::SizeOp& op) {
  int64_t v = 0;
  if (!eval_size(op.size, s.span, v)) return false;
  frame_->bind(s.results[0], Value::i64(v));
  return true;
}

bool Machine::run_call(const ir::Stmt& s, const ir::CallOp& op) {
  const ir::Function* callee = program_.find(op.callee);
  if (callee == nullptr) return internal(s.span, "call of an unknown function '" + op.callee + "'");
  std::vector<Value> args;
  args.reserve(op.args.size());
  Value scratch;
  std::vector<MaskAndMarks> arg_marks;
  for (const ir::Atom& a : op.args) {
    args.push_back(value_of(a, scratch));
    arg_marks.push_back(mask_and_marks(a));
  }
  Value result;
  MaskAndMarks result_marks;
  if (!call(*callee, args, s.span, result, &arg_marks, &result_marks)) return false;
  frame_->bind_masked(s.results[0], std::move(result), result_marks.mask,
                      std::move(result_marks.marks));
  return true;
}

// --- environment ---

const Value& Machine::value_of(const ir::Atom& a, Value& scratch) const {
  if (a.is_var) return frame_->at(a.var);
  switch (a.lit.type) {
    case Scalar::F64:
      scratch = Value::f64(a.lit.real);
      break;
    case Scalar::F32:
      scratch = Value::f32(to_f32(a.lit.real));
      break;
    case Scalar::I64:
      scratch = Value::i64(a.lit.integer);
      break;
    case Scalar::Bool:
      scratch = Value::boolean(a.lit.boolean);
      break;
  }
  return scratch;
}

bool Machine::read_i64(const ir::Atom& a, Span span, const char* what, int64_t& out) {
  if (!a.is_var) {
    if (a.lit.type != Scalar::I64) return internal(span, std::string(what) + " must be an i64");
    out = a.lit.integer;
    return true;
  }
  const Value& v = frame_->at(a.var);
  if (!v.is_scalar() || v.dtype() != DType::I64) {
    return internal(span, std::string(what) + " must be an i64, not " + v.type_string());
  }
  out = v.as_i64();
  return true;
}

bool Machine::read_bool(const ir::Atom& a, Span span, const char* what, bool& out) {
  if (!a.is_var) {
    if (a.lit.type != Scalar::Bool) return internal(span, std::string(what) + " must be a bool");
    out = a.lit.boolean;
    return true;
  }
  const Value& v = frame_->at(a.var);
  if (!v.is_scalar() || v.dtype() != DType::Bool) {
    return internal(span, std::string(what) + " must be a bool, not " + v.type_string());
  }
  out = v.as_bool();
  return true;
}

int64_t Machine::int_slot(int32_t v) {
  const Value& x = frame_->at(v);
  if (!x.is_scalar() || x.dtype() != DType::I64) {
    bad_read_ = v;
    return 0;
  }
  return x.as_i64();
}

bool Machine::bool_slot(int32_t v) {
  const Value& x = frame_->at(v);
  if (!x.is_scalar() || x.dtype() != DType::Bool) {
    bad_read_ = v;
    return false;
  }
  return x.as_bool();
}

bool Machine::check_reads(Span span) {
  if (bad_read_ < 0) return true;
  int32_t v = bad_read_;
  bad_read_ = -1;
  return internal(span, "variable " + var_name(v) + " of type " + frame_->at(v).type_string() +
                            " used where a scalar index or condition was expected");
}

std::string Machine::var_name(int32_t v) const {
  const auto& vars = frame_->fn->vars;
  if (v < 0 || static_cast<size_t>(v) >= vars.size()) return "#" + std::to_string(v);
  // Intermediate values have no source name.
  const std::string& name = vars[static_cast<size_t>(v)].name;
  return name.empty() ? "this tensor" : name;
}

// --- sizes and shapes ---

bool Machine::eval_size(const SizeExpr& e, Span span, int64_t& out) {
  std::string why;
  std::optional<int64_t> v =
      e.eval([this](const std::string& name) { return frame_->size_value(name); }, &why);
  if (!v) {
    for (const std::string& name : e.vars()) {
      if (frame_->unbound_dynamic_size(name) != nullptr) {
        return internal(span, "the size " + e.to_string() + " reads the dynamic size " + name +
                                  " before the saving loop that defines it has run");
      }
    }
    return fail(span, "cannot evaluate the size " + e.to_string() + ": " + why);
  }
  out = *v;
  return true;
}

bool Machine::eval_shape(const Type& t, Span span, std::vector<int64_t>& out) {
  if (t.is_tuple) return internal(span, "a tensor type was expected, not " + t.to_string());
  out.resize(t.shape.size());
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (!eval_size(t.shape[d], span, out[d])) return false;
  }
  return true;
}

bool Machine::eval_extents(const std::vector<ir::IndexVar>& ivars, Span span, bool allow_negative,
                           std::vector<int64_t>& out) {
  out.resize(ivars.size());
  for (size_t d = 0; d < ivars.size(); ++d) {
    if (!eval_size(ivars[d].extent, span, out[d])) return false;
    if (out[d] < 0) {
      if (!allow_negative) {
        return fail(span, "the extent " + ivars[d].extent.to_string() + " of index " +
                              var_name(ivars[d].var) + " is negative (" + std::to_string(out[d]) +
                              ")");
      }
      out[d] = 0;
    }
  }
  return true;
}

bool Machine::alloc(Scalar elem, const std::vector<int64_t>& shape, Span span, Value& out) {
  if (auto why = size_error(SizeRule::Tensor, shape, 0, options_.max_tensor_elements)) {
    return fail(span, *why);
  }
  if (shape.empty()) {
    // Scalars live inline in the Value.
    switch (elem) {
      case Scalar::F64:
        out = Value::f64(0);
        break;
      case Scalar::F32:
        out = Value::f32(0);
        break;
      case Scalar::I64:
        out = Value::i64(0);
        break;
      case Scalar::Bool:
        out = Value::boolean(false);
        break;
    }
    return true;
  }
  out = Value::zeros(dtype_of(elem), shape);
  return true;
}

bool Machine::zeros_of(const Type& t, Span span, Value& out) {
  if (t.is_tuple) {
    std::vector<Value> elems(t.elems.size());
    for (size_t k = 0; k < t.elems.size(); ++k) {
      if (!zeros_of(t.elems[k], span, elems[k])) return false;
    }
    out = Value::tuple(std::move(elems));
    return true;
  }
  std::vector<int64_t> shape;
  return eval_shape(t, span, shape) && alloc(t.elem, shape, span, out);
}

bool Machine::fail(Span span, std::string message, std::string help) {
  if (!error_) error_ = Diagnostic{span, std::move(message), std::move(help), {}};
  return false;
}

}  // namespace cot::interp
