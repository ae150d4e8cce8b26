#include "codegen/native.h"

#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "codegen/emit_cpp.h"
#include "codegen/loop_ir_walk.h"
#include "codegen/loop_passes.h"
#include "codegen/lower.h"
#include "codegen/thread_team.h"
#include "ir/inline_calls.h"
#include "runtime/runtime.h"
#include "runtime/size_checks.h"
#include "runtime/tensor_shapes.h"

namespace cot::codegen {

using cotangent::DType;
using cotangent::Value;

namespace {

Diagnostic internal_error(Span span, const std::string& what) {
  return Diagnostic{span, "internal error: " + what, {}, {}};
}

// The leaves of a type, depth first, with the sizes' values.
bool leaves_of(const Type& t, const std::map<std::string, int64_t>& sizes, std::vector<Leaf>& out) {
  if (t.is_tuple) {
    for (const Type& e : t.elems) {
      if (!leaves_of(e, sizes, out)) return false;
    }
    return true;
  }
  Leaf leaf;
  leaf.type = t.elem;
  for (const SizeExpr& d : t.shape) {
    for (const std::string& n : d.vars()) {
      if (sizes.count(n) == 0) return false;
    }
    // A size that does not evaluate (an inexact division) fails in the body first (lower.cpp).
    auto v = d.eval([&](const std::string& n) -> std::optional<int64_t> { return sizes.at(n); });
    leaf.shape.push_back(v.value_or(0));
  }
  out.push_back(std::move(leaf));
  return true;
}

bool has_parallel_loop(const Body& body) {
  for (const Stmt& s : body) {
    if (const auto* f = std::get_if<For>(&s.op); f != nullptr && f->parallel) return true;
    bool inner = false;
    for_each_body(s, [&](const Body& b) { inner = inner || has_parallel_loop(b); });
    if (inner) return true;
  }
  return false;
}

void value_leaves(const Value& v, std::vector<const Value*>& out) {
  if (v.is_tuple()) {
    for (const Value& e : v.elems()) value_leaves(e, out);
    return;
  }
  out.push_back(&v);
}

// Zero tensors of the leaves' types and shapes; none for a leaf the code never writes.
std::vector<Value> zero_outputs(const std::vector<Leaf>& leaves) {
  std::vector<Value> out;
  out.reserve(leaves.size());
  for (const Leaf& l : leaves) {
    out.push_back(l.needs_memory ? Value::zeros(interp::dtype_of(l.type), l.shape)
                                 : Value::without_storage(interp::dtype_of(l.type), l.shape));
  }
  return out;
}

// Builds the result value of type `t` from its leaves, in order.
Value assemble(const Type& t, std::vector<Value>& leaves, size_t& next) {
  if (t.is_tuple) {
    std::vector<Value> elems;
    for (const Type& e : t.elems) elems.push_back(assemble(e, leaves, next));
    return Value::tuple(std::move(elems));
  }
  return std::move(leaves.at(next++));
}

std::string shape_with(const std::vector<int64_t>& shape, const std::vector<int64_t>& values,
                       size_t first_runtime) {
  std::vector<int64_t> s = shape;
  size_t k = first_runtime;
  for (int64_t& d : s) {
    if (d == -1 && k < values.size()) d = values[k++];
  }
  return interp::shape_string(s);
}

}  // namespace

Diagnostic NativeFunction::error(int site, const std::vector<int64_t>& v) const {
  if (site < 0 || static_cast<size_t>(site) >= sites_.size()) {
    return internal_error(Span{},
                          "compiled code reported an unknown failure " + std::to_string(site));
  }
  const Site& s = sites_[static_cast<size_t>(site)];
  auto value = [&](size_t k) { return k < v.size() ? v[k] : 0; };
  Diagnostic d{s.span, s.message, s.help, {}};
  switch (s.kind) {
    case Site::Kind::Message:
    case Site::Kind::Overflow:
      break;
    case Site::Kind::IndexRange:
      d.message = "index " + std::to_string(value(0)) + " is out of range for dimension " +
                  std::to_string(s.dim) + " of " + s.message + ", which has shape " +
                  shape_with(s.shape, v, 2);
      break;
    case Site::Kind::AccumIndex:
      d.message = "index " + std::to_string(value(0)) + " is out of range for dimension " +
                  std::to_string(s.dim) + " of the accumulated tensor, which has shape " +
                  shape_with(s.shape, v, 2);
      break;
    case Site::Kind::IntPrim: {
      const int arity = prim_info(s.prim).arity;
      std::vector<int64_t> xs(v.begin(), v.begin() + std::min<size_t>(v.size(), arity));
      std::string why;
      if (eval_prim_i64(s.prim, xs, &why) || why.empty()) {
        why = "integer overflow in " + std::string(prim_info(s.prim).name);
      }
      if (s.prim != Prim::ExactDiv) why += ": " + spell_application(s.prim, xs);
      d.message = why;
      break;
    }
    case Site::Kind::RealToI64: {
      double x = 0;
      const int64_t bits = value(0);
      std::memcpy(&x, &bits, sizeof x);
      std::string why;
      convert_real_to_i64(x, &why);
      d.message = why;
      break;
    }
    case Site::Kind::WhileLimit:
      d.message =
          "the while loop did not finish within " + std::to_string(value(0)) + " iterations";
      break;
    case Site::Kind::SavedStates:
      d.message = "the saved states of " + s.message + " in a loop of " + std::to_string(value(0)) +
                  " or more iterations would make a tensor of more than the limit of " +
                  std::to_string(s.shape.empty() ? 0 : s.shape[0]) + " elements";
      break;
    case Site::Kind::TensorLimit: {
      // The run-time dims fill the shape's -1 entries in order; the interpreter's check words it.
      std::vector<int64_t> shape = s.shape;
      size_t k = 0;
      bool known = true;
      for (int64_t& dim : shape) {
        if (dim == -1 && k < v.size()) {
          dim = v[k++];
        } else if (dim == -2) {
          known = false;  // more run-time dims than a site reports
        }
      }
      auto why = known ? interp::size_error(s.size_rule, shape, static_cast<size_t>(s.dim), s.limit)
                       : std::nullopt;
      std::string text = "[";
      for (size_t j = 0; j < shape.size(); ++j) {
        text +=
            (j > 0 ? ", " : "") + (shape[j] == -2 ? std::string("?") : std::to_string(shape[j]));
      }
      d.message = why ? *why
                      : "a tensor of shape " + text + "]" +
                            " cannot be built: a dimension is negative, its element count "
                            "overflows, or it has more than the limit of " +
                            std::to_string(s.limit) + " elements";
      break;
    }
    case Site::Kind::NegativeExtent:
      d.message = "the extent " + s.message + " is negative (" + std::to_string(value(0)) + ")";
      break;
  }
  return d;
}

int NativeFunction::call_raw(const void* const* inputs, void* const* outputs,
                             const NativeOptions& options, std::vector<int64_t>* error_values,
                             int* error_site) const {
  return call_raw(inputs, outputs, options.threads, options.max_while_iterations, error_values,
                  error_site);
}

int NativeFunction::call_raw(const void* const* inputs, void* const* outputs, int threads,
                             int64_t max_while_iterations, std::vector<int64_t>* error_values,
                             int* error_site) const {
  cot_ctx ctx{};
  ctx.threads = !parallel_ ? 1 : threads == team_requested_ ? team_ : creatable_team(threads);
  ctx.max_while_iterations = max_while_iterations;
  const int rc = entry_(inputs, outputs, &ctx);
  if (rc != 0) {
    if (error_site != nullptr) *error_site = ctx.site;
    if (error_values != nullptr) error_values->assign(ctx.values, ctx.values + kMaxSiteValues);
  }
  return rc;
}

std::variant<Value, Diagnostic> NativeFunction::call(const std::vector<Value>& args,
                                                     const NativeOptions& options) const {
  std::vector<const Value*> in;
  for (const Value& a : args) value_leaves(a, in);
  if (in.size() != inputs_.size()) {
    return internal_error(Span{}, "the compiled " + fn_name_ + " takes " +
                                      std::to_string(inputs_.size()) + " leaves, given " +
                                      std::to_string(in.size()));
  }
  std::vector<const void*> in_ptrs;
  for (size_t k = 0; k < in.size(); ++k) {
    const Leaf& l = inputs_[k];
    if (interp::scalar_of(in[k]->dtype()) != l.type || in[k]->shape() != l.shape) {
      return Diagnostic{Span{},
                        "an argument of " + fn_name_ + " is " + in[k]->type_string() +
                            " where the function was compiled for " +
                            interp::type_string(l.type, l.shape),
                        "compile the function again with arguments of these shapes",
                        {}};
    }
    in_ptrs.push_back(in[k]->raw_data());
  }
  std::vector<Value> outs = zero_outputs(outputs_);
  std::vector<void*> out_ptrs;
  out_ptrs.reserve(outs.size());
  for (Value& o : outs) out_ptrs.push_back(o.raw_mut());
  std::vector<int64_t> values;
  int site = 0;
  if (call_raw(in_ptrs.data(), out_ptrs.data(), options, &values, &site) != 0) {
    return error(site, values);
  }
  for (const Leaf& l : outputs_) {
    if (!l.needs_memory) {
      return internal_error(Span{}, "the compiled " + fn_name_ + " returned a result of shape " +
                                        interp::shape_string(l.shape) + ", which cannot be built");
    }
  }
  size_t next = 0;
  return assemble(result_type_, outs, next);
}

Value NativeFunction::zero_result() const {
  std::vector<Value> outs = zero_outputs(outputs_);
  size_t next = 0;
  return assemble(result_type_, outs, next);
}

std::variant<std::vector<NativeFunction>, Diagnostic> compile_native(
    const std::vector<NativeRequest>& requests, const NativeOptions& options) {
  std::vector<LoopFunction> lowered;
  std::vector<NativeFunction> fns;
  std::vector<std::string> names;
  names.reserve(requests.size());
  for (const NativeRequest& r : requests) names.push_back(r.name);
  for (size_t k = 0; k < requests.size(); ++k) {
    const ir::Program& program = *requests[k].program;
    const std::vector<int64_t>& sizes = requests[k].sizes;
    const ir::Function* f = program.find(names[k]);
    if (f == nullptr) {
      return Diagnostic{
          Span{}, "there is no function named '" + names[k] + "' in the module", {}, {}};
    }
    ir::Function inlined;
    try {
      inlined = ir::inline_calls(program, names[k]);
    } catch (const std::exception& e) {
      return internal_error(f->span, "cannot inline the calls of " + names[k] + ": " + e.what());
    }
    std::map<std::string, int64_t> by_name;
    for (size_t j = 0; j < f->size_vars.size() && j < sizes.size(); ++j) {
      if (f->size_vars[j].param != -1) by_name[f->size_vars[j].name] = sizes[j];
    }
    LowerInput in;
    in.fn = &inlined;
    in.name = "cot_fn" + std::to_string(k);
    in.max_tensor_elements = options.max_tensor_elements;
    for (const ir::SizeVar& sv : inlined.size_vars) {
      auto it = by_name.find(sv.name);
      in.size_values.push_back(sv.param != -1 && it != by_name.end() ? it->second : 0);
    }
    auto l = lower(in);
    if (auto* why = std::get_if<std::string>(&l)) {
      return internal_error(f->span, "the native backend cannot compile " + names[k] + ": " + *why);
    }
    LoopFunction lf =
        optimize_loops(std::get<LoopFunction>(std::move(l)), names[k], options.loop_dump);
    NativeFunction nf;
    nf.fn_name_ = names[k];
    nf.parallel_ = has_parallel_loop(lf.body);
    nf.sites_ = lf.sites;
    nf.result_type_ = f->result_type;
    nf.sizes_ = sizes;
    for (size_t i = 0; i < f->params.size(); ++i) {
      if (!leaves_of(f->param_type(i), by_name, nf.inputs_)) {
        return internal_error(f->span, "a parameter's shape of " + names[k] + " has no value");
      }
    }
    if (!leaves_of(f->result_type, by_name, nf.outputs_) ||
        nf.outputs_.size() != lf.outputs.size()) {
      return internal_error(f->span, "the result's shape of " + names[k] + " has no value");
    }
    for (size_t j = 0; j < lf.outputs.size(); ++j) {
      nf.outputs_[j].needs_memory = !lf.outputs[j].cannot_build || lf.outputs[j].copied_into;
    }
    lowered.push_back(std::move(lf));
    fns.push_back(std::move(nf));
  }
  std::vector<const LoopFunction*> ptrs;
  ptrs.reserve(lowered.size());
  for (const LoopFunction& lf : lowered) ptrs.push_back(&lf);
  const std::string source = emit_translation_unit(ptrs);
  auto compiled = compile_and_load(source, options.compiler);
  if (auto* why = std::get_if<CompileError>(&compiled)) {
    // A cache or compiler the user can fix is their error; the compiler rejecting the
    // generated code is ours.
    if (why->kind == CompileError::Kind::internal) return internal_error(Span{}, why->message);
    return Diagnostic{Span{}, why->message, why->help, {}};
  }
  const CompileResult& c = std::get<CompileResult>(compiled);
  std::optional<int> team;
  for (size_t k = 0; k < fns.size(); ++k) {
    NativeFunction& nf = fns[k];
    if (nf.parallel_ && !team) team = creatable_team(options.threads);
    nf.team_requested_ = options.threads;
    nf.team_ = team.value_or(1);
    nf.object_ = c.object;
    nf.object_key_ = c.key;
    nf.entry_name_ = "cot_fn" + std::to_string(k);
    nf.entry_ = reinterpret_cast<EntryPoint>(c.object->symbol(nf.entry_name_));
    if (nf.entry_ == nullptr) {
      return internal_error(Span{}, "the compiled code has no entry point for " + names[k]);
    }
    nf.compile_seconds_ = c.seconds;
    nf.cache_hit_ = c.cache_hit;
    nf.source_ = source;
  }
  return fns;
}

namespace {

// Labels the leaves of a type: `name` for a tensor, name.0, name.1, ... inside tuples.
void named_leaves(const Type& t, const std::string& name,
                  std::vector<StandaloneSignature::Leaf>& out) {
  if (t.is_tuple) {
    for (size_t k = 0; k < t.elems.size(); ++k) {
      named_leaves(t.elems[k], name + "." + std::to_string(k), out);
    }
    return;
  }
  std::string elements;
  for (const SizeExpr& d : t.shape) {
    const std::string s = d.to_string();
    const bool simple = s.find_first_of(" +-") == std::string::npos;
    elements += (elements.empty() ? "" : " * ") + (simple ? s : "(" + s + ")");
  }
  out.push_back({name, t.elem, elements.empty() ? "1" : elements});
}

}  // namespace

std::variant<StandaloneSource, Diagnostic> standalone_source(const ir::Program& program,
                                                             const std::string& fn,
                                                             const std::string& c_name,
                                                             const SourceManager& sources,
                                                             const LoopDump& dump) {
  const ir::Function* f = program.find(fn);
  if (f == nullptr) {
    return Diagnostic{Span{}, "there is no function named '" + fn + "' in the module", {}, {}};
  }
  ir::Function inlined;
  try {
    inlined = ir::inline_calls(program, fn);
  } catch (const std::exception& e) {
    return internal_error(f->span, "cannot inline the calls of " + fn + ": " + e.what());
  }
  LowerInput in;
  in.fn = &inlined;
  in.name = c_name + "_entry";
  in.size_values.assign(inlined.size_vars.size(), 0);
  in.runtime_sizes = true;
  auto l = lower(in);
  if (auto* why = std::get_if<std::string>(&l)) {
    return internal_error(f->span, "the native backend cannot compile " + fn + ": " + *why);
  }
  LoopFunction lf = optimize_loops(std::get<LoopFunction>(std::move(l)), fn, dump);
  StandaloneSignature sig;
  sig.name = c_name;
  std::string params;
  for (size_t i = 0; i < f->params.size(); ++i) {
    const std::string& name = f->vars[static_cast<size_t>(f->params[i])].name;
    params += (i > 0 ? ", " : "") + name + ": " + f->param_type(i).to_string();
    named_leaves(f->param_type(i), name, sig.inputs);
  }
  sig.declaration = fn + "(" + params + ") -> " + f->result_type.to_string();
  named_leaves(f->result_type, "result", sig.outputs);
  for (const ir::SizeVar& sv : inlined.size_vars) {
    if (sv.param != -1) sig.size_names.push_back(sv.name);
  }
  for (const Site& s : lf.sites) {
    std::string where;
    if (s.span.valid() && s.span.file <= sources.size()) {
      const auto& file = sources.file(s.span.file);
      auto [line, col] = file.line_col(s.span.begin);
      where = file.name + ":" + std::to_string(line) + ":" + std::to_string(col) + ": ";
    }
    sig.site_locations.push_back(where);
  }
  return emit_standalone(lf, sig);
}

}  // namespace cot::codegen
