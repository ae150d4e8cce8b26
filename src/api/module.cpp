#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <variant>

#include "ad/derive.h"
#include "api/internal.h"
#include "check/checker.h"
#include "check/signature.h"
#include "codegen/manifest.h"
#include "codegen/native.h"
#include "cotangent/cotangent.h"
#include "interp/interpreter.h"
#include "io/read_text.h"
#include "ir/printer.h"
#include "opt/pipeline.h"
#include "syntax/parser.h"
#include "syntax/prelude_text.h"

namespace cotangent {

Error to_error(const cot::SourceManager& sm, const cot::Diagnostic& d) {
  Error e;
  e.message = d.message;
  e.help = d.help;
  e.rendered = cot::render(sm, d);
  if (d.span.valid() && d.span.file <= sm.size()) {
    const auto& f = sm.file(d.span.file);
    e.file = f.name;
    auto [line, col] = f.line_col(d.span.begin);
    e.line = line;
    e.column = col;
  }
  return e;
}

namespace {

std::vector<Error> to_errors(const cot::SourceManager& sm, std::vector<cot::Diagnostic> ds) {
  // Report in source order: file, then position.
  std::stable_sort(ds.begin(), ds.end(), [](const cot::Diagnostic& a, const cot::Diagnostic& b) {
    if (a.span.file != b.span.file) return a.span.file < b.span.file;
    return a.span.begin < b.span.begin;
  });
  std::vector<Error> out;
  for (const auto& d : ds) out.push_back(to_error(sm, d));
  return out;
}

}  // namespace

Error plain_error(std::string message, std::string help) {
  Error e;
  e.message = std::move(message);
  e.help = std::move(help);
  e.rendered = "error: " + e.message + "\n" + (e.help.empty() ? "" : "  help: " + e.help + "\n");
  return e;
}

FunctionInfo info_of(const cot::ir::Function& f) {
  FunctionInfo info;
  info.name = f.name;
  info.from_prelude = f.from_prelude;
  info.result_type = f.result_type.to_string();
  info.result = kind_of(f.result_type);
  for (size_t i = 0; i < f.params.size(); ++i) {
    const auto& t = f.type_of(f.params[i]);
    info.params.push_back(
        ParamInfo{f.vars[static_cast<size_t>(f.params[i])].name, t.to_string(), kind_of(t)});
  }
  return info;
}

ValueKind kind_of(const cot::Type& t) {
  ValueKind k;
  k.spelling = t.to_string();
  k.is_tuple = t.is_tuple;
  if (t.is_tuple) {
    for (const auto& e : t.elems) k.elems.push_back(kind_of(e));
    return k;
  }
  switch (t.elem) {
    case cot::Scalar::F64:
      k.dtype = DType::F64;
      break;
    case cot::Scalar::F32:
      k.dtype = DType::F32;
      break;
    case cot::Scalar::I64:
      k.dtype = DType::I64;
      break;
    case cot::Scalar::Bool:
      k.dtype = DType::Bool;
      break;
  }
  k.rank = static_cast<int>(t.rank());
  return k;
}

Error no_function(const cot::ir::Program& p, const std::string& name) {
  Error e;
  e.message = "no function named `" + name + "`";
  std::string names;
  for (const auto& f : p.functions) {
    if (f.from_prelude || f.derivation) continue;
    names += (names.empty() ? "" : ", ") + f.name;
  }
  e.help = names.empty() ? "the module defines no functions" : "the module defines: " + names;
  e.rendered = "error: " + e.message + "\n  help: " + e.help + "\n";
  return e;
}

// The error of `fn` when it cannot run (Module::Impl::broken), else nullopt.
std::optional<Error> broken_error(const std::map<std::string, Error>& broken,
                                  const std::string& fn) {
  auto it = broken.find(fn);
  if (it == broken.end()) return std::nullopt;
  return it->second;
}

namespace {

// The optimization level to use: the requested one, or COTANGENT_OPT, or the highest.
std::variant<int, Error> resolve_opt_level(int requested) {
  if (requested >= 0) return std::min(requested, cot::opt::kMaxLevel);
  const char* env = std::getenv("COTANGENT_OPT");
  if (env == nullptr || *env == '\0') return cot::opt::kMaxLevel;
  const std::string v = env;
  if (v.size() == 1 && v[0] >= '0' && v[0] - '0' <= cot::opt::kMaxLevel) return v[0] - '0';
  Error e;
  e.message = "the environment variable COTANGENT_OPT is `" + v + "`";
  e.help = "set it to 0, 1 or 2 (the optimization level), or unset it";
  e.rendered = "error: " + e.message + "\n  help: " + e.help + "\n";
  return e;
}

}  // namespace

std::vector<std::string> optimizer_pass_names() {
  std::vector<std::string> names;
  for (const auto& p : cot::opt::pipeline_passes()) names.emplace_back(p.name);
  return names;
}

std::vector<std::string> loop_pass_names() {
  std::vector<std::string> names;
  for (const auto& p : cot::codegen::loop_passes()) names.emplace_back(p.name);
  return names;
}

Result<Module> Module::from_string(std::string_view source, std::string name,
                                   const LoadOptions& options) {
  return guarded<Module>(
      [&]() -> Result<Module> { return load(source, std::move(name), options); });
}

int Module::opt_level() const {
  return impl_->options.opt_level;
}

Result<Module> Module::load(std::string_view source, std::string name,
                            const LoadOptions& requested) {
  LoadOptions options = requested;
  auto level = resolve_opt_level(options.opt_level);
  if (auto* e = std::get_if<Error>(&level)) return *e;
  options.opt_level = std::get<int>(level);
  auto sm = std::make_shared<cot::SourceManager>();
  const uint32_t prelude_id = sm->add("<prelude>", std::string(cot::kPreludeText));
  const uint32_t user_id = sm->add(std::move(name), std::string(source));
  cot::DiagnosticSink diags;
  cot::ast::Module prelude = cot::parse_module(*sm, prelude_id, diags);
  cot::ast::Module user = cot::parse_module(*sm, user_id, diags);
  if (diags.has_errors()) return to_errors(*sm, diags.take());
  auto program = cot::check_program(sm, &prelude, user, diags);
  if (!program) return to_errors(*sm, diags.take());
  // Nothing is optimized or differentiated yet: each function is, with what it needs, when a
  // caller first asks for it (Impl::prepare).
  std::string file = sm->file(user_id).name;
  return Module(std::make_shared<const Impl>(std::move(sm), std::move(file), std::move(*program),
                                             std::move(options)));
}

Result<Module> Module::from_file(const std::string& path, const LoadOptions& options) {
  io::TextRules rules;
  rules.max_bytes = cot::kMaxSourceBytes;
  rules.kind = "source file";
  rules.too_large_help = "check the path: a program is rarely more than a few hundred kilobytes";
  auto text = io::read_text_file(path, path, rules);
  if (!text) return text.errors();
  return from_string(text.value(), path, options);
}

std::vector<std::string> Module::function_names(bool include_prelude) const {
  std::vector<std::string> out;
  const Prepared now = impl_->snapshot();
  for (const auto& f : now.program->functions) {
    if (f.derivation || (f.from_prelude && !include_prelude)) continue;
    out.push_back(f.name);
  }
  return out;
}

std::vector<Error> Module::broken_functions() const {
  std::vector<Error> out;
  const Prepared all = impl_->prepare_all();
  for (const auto& f : all.program->functions) {
    if (f.derivation || f.from_prelude) continue;
    auto it = all.broken.find(f.name);
    if (it == all.broken.end()) continue;
    Error e = it->second;
    e.message = "`" + f.name + "` cannot run: " + e.message;
    e.rendered = (e.file.empty() ? "" : e.file + ": ") + "error: " + e.message +
                 "\n  help: " + e.help + "\n";
    out.push_back(std::move(e));
  }
  return out;
}

Result<FunctionInfo> Module::function(const std::string& name) const {
  const Prepared now = impl_->snapshot();
  const cot::ir::Function* f = now.program->find(name);
  if (!f || f->derivation) return no_function(*now.program, name);
  return info_of(*f);
}

std::optional<Error> check_arguments(const cot::ir::Function& f, const std::vector<Value>& args) {
  for (size_t i = 0; i < args.size() && i < f.params.size(); ++i) {
    // Values built through the API can hold shapes that cannot exist (negative or overflowing
    // dimensions keep their shape but get no storage): refuse them before anything reads them.
    if (!args[i].well_formed()) {
      Error e;
      e.message = "argument " + std::to_string(i + 1) + " (`" +
                  f.vars[static_cast<size_t>(f.params[i])].name + "`) of `" + f.name +
                  "` is not a valid value: its shape " + args[i].type_string() +
                  " has a negative dimension, too many elements, or no storage";
      e.help = "build tensors with Value::zeros and a shape of non-negative dimensions";
      e.rendered = "error: " + e.message + "\n  help: " + e.help + "\n";
      return e;
    }
  }
  return std::nullopt;
}

cot::interp::Options interp_options(const EvalOptions& o) {
  cot::interp::Options opts;
  opts.max_while_iterations = o.max_while_iterations;
  return opts;
}

namespace {

// --dump-after of a loop-IR pass: the module's dump callback gets the loop IR after it.
cot::codegen::LoopDump loop_dump(const LoadOptions& load) {
  cot::codegen::LoopDump d;
  if (load.dump && cot::codegen::is_loop_pass_name(load.dump_after)) d.after = load.dump_after;
  if (load.dump && load.dump_after == "all") d.after = "all";
  if (!d.after.empty()) d.print = load.dump;
  return d;
}

}  // namespace

cot::codegen::NativeOptions native_options(const EvalOptions& o, const LoadOptions& load) {
  cot::codegen::NativeOptions opts;
  opts.loop_dump = loop_dump(load);
  opts.threads = o.threads;
  opts.max_while_iterations = o.max_while_iterations;
  return opts;
}

cot::codegen::NativeOptions native_options(const CompileOptions& o, const LoadOptions& load) {
  cot::codegen::NativeOptions opts;
  opts.loop_dump = loop_dump(load);
  opts.threads = o.threads;
  opts.max_while_iterations = o.max_while_iterations;
  opts.compiler.cache_dir = o.cache_dir;
  return opts;
}

namespace {

// Binds the arguments (the interpreter's checks and messages), compiles `fn` for their sizes and
// runs it: what interp::evaluate does, natively. Here, above both backends, so that the native
// backend does not depend on the interpreter (docs/design.md §1).
std::variant<Value, cot::Diagnostic> evaluate_native(const cot::ir::Program& program,
                                                     const std::string& fn,
                                                     const std::vector<Value>& args,
                                                     const cot::codegen::NativeOptions& options) {
  auto sizes = cot::interp::bind_sizes(program, fn, args);
  if (auto* d = std::get_if<cot::Diagnostic>(&sizes)) return std::move(*d);
  auto fns = cot::codegen::compile_native(
      {cot::codegen::NativeRequest{&program, fn, std::get<std::vector<int64_t>>(sizes)}}, options);
  if (auto* d = std::get_if<cot::Diagnostic>(&fns)) return std::move(*d);
  return std::get<std::vector<cot::codegen::NativeFunction>>(fns).front().call(args, options);
}

}  // namespace

// Runs `fn` of `p` on the backend the options name (the interpreter when counting).
std::variant<Value, cot::Diagnostic> execute(const cot::ir::Program& p, const std::string& fn,
                                             const std::vector<Value>& args,
                                             const EvalOptions& options, const LoadOptions& load,
                                             cot::interp::CostCounts* counts) {
  if (options.backend == Backend::Native && counts == nullptr) {
    return evaluate_native(p, fn, args, native_options(options, load));
  }
  return cot::interp::evaluate(p, fn, args, counts, interp_options(options));
}

Result<Value> Module::evaluate(const std::string& fn, const std::vector<Value>& args,
                               const EvalOptions& options) const {
  return guarded<Value>([&]() -> Result<Value> { return run(fn, args, options, nullptr); });
}

Result<CostReport> Module::cost(const std::string& fn, const std::vector<Value>& args,
                                const EvalOptions& options) const {
  return guarded<CostReport>([&]() -> Result<CostReport> {
    CostReport report;
    auto r = run(fn, args, options, &report);
    if (!r) return r.errors();
    return report;
  });
}

namespace {

// The types and shapes of a value's leaves (all the code depends on: sizes come from shapes).
void describe_leaves(const Value& v, std::string& out) {
  if (v.is_tuple()) {
    out += "(";
    for (const Value& e : v.elems()) describe_leaves(e, out);
    out += ")";
    return;
  }
  out += std::to_string(static_cast<int>(v.dtype())) + "[";
  for (int64_t d : v.shape()) out += std::to_string(d) + ",";
  out += "]";
}

// What decides the code of `requests` in this module, for the compile cache's lookup by request
// (codegen/manifest.h): the text of every file the module was built from, the optimization
// level, and each request's function, derivative and argument shapes. Empty (nothing found or
// remembered) when a dump was asked for, which only compiling produces, or when an argument
// is not well formed (the compile reports it).
std::string request_text(const Module::Impl& impl, const std::vector<CompileRequest>& requests) {
  if (impl.options.dump) return "";
  // Every field is written with its length, so that no two requests read alike.
  std::string text;
  auto field = [&](const std::string& name, const std::string& value) {
    text += name + " " + std::to_string(value.size()) + ":" + value + "\n";
  };
  field("opt", std::to_string(impl.options.opt_level));
  for (uint32_t id = 1; id <= impl.sources->size(); ++id)
    field("file", impl.sources->file(id).text);
  for (const CompileRequest& r : requests) {
    field("fn", r.fn);
    field("derivative", r.derivative ? std::to_string(static_cast<int>(*r.derivative)) : "none");
    field("wrt count", std::to_string(r.wrt.size()));
    for (const std::string& w : r.wrt) field("wrt", w);
    std::string args;
    for (const Value& a : r.example_args) {
      if (!a.well_formed()) return "";
      describe_leaves(a, args);
      args += ";";
    }
    field("args", args);
  }
  return text;
}

// The leaves of `args`, depth first, as a compiled function's inputs are.
void arg_leaves(const Value& v, std::vector<TensorRef>& out) {
  if (v.is_tuple()) {
    for (const Value& e : v.elems()) arg_leaves(e, out);
    return;
  }
  out.push_back({v.dtype(), v.shape(), nullptr});
}

// `requests` compiled before, from the same text for the same shapes: loaded without
// preparing, deriving or lowering anything; nullopt when the cache does not have them.
std::optional<std::vector<CompiledFunction>> compiled_before(
    const Module::Impl& impl, const std::string& request,
    const std::vector<CompileRequest>& requests, const cot::codegen::NativeOptions& no) {
  if (request.empty()) return std::nullopt;
  auto found = cot::codegen::find_compiled(request, no);
  if (!found || found->size() != requests.size()) return std::nullopt;
  std::vector<CompiledFunction> out;
  for (size_t k = 0; k < requests.size(); ++k) {
    out.emplace_back(std::make_shared<const CompiledFunction::Impl>(
        CompiledFunction::Impl{std::move((*found)[k]), no, impl.sources}));
    // What the entry says the function takes must be what the request gives.
    std::vector<TensorRef> leaves;
    for (const Value& a : requests[k].example_args) arg_leaves(a, leaves);
    const std::vector<TensorRef>& ins = out.back().input_leaves();
    if (ins.size() != leaves.size()) return std::nullopt;
    for (size_t i = 0; i < ins.size(); ++i) {
      if (ins[i].dtype != leaves[i].dtype || ins[i].shape != leaves[i].shape) return std::nullopt;
    }
  }
  return out;
}

// `requests` prepared, derived, lowered and compiled, and remembered under `request` (their
// request_text; empty: not remembered).
Result<std::vector<CompiledFunction>> compile_afresh(const Module::Impl& impl,
                                                     const std::string& request,
                                                     const std::vector<CompileRequest>& requests,
                                                     const cot::codegen::NativeOptions& no) {
  // Derived functions live in their own copies of the program, kept until compiled.
  std::vector<std::shared_ptr<Derived>> derived;
  std::vector<Prepared> primal;
  std::vector<cot::codegen::NativeRequest> native;
  for (const CompileRequest& r : requests) {
    const cot::ir::Program* p = nullptr;
    std::string name = r.fn;
    if (r.derivative) {
      auto d = derive(impl, r.fn, *r.derivative, r.wrt);
      if (!d) return d.errors();
      derived.push_back(std::make_shared<Derived>(std::move(d).value()));
      p = &derived.back()->program;
      name = derived.back()->name;
    } else {
      primal.push_back(impl.prepare({name}));
      p = primal.back().program.get();
      const cot::ir::Function* f = p->find(name);
      if (!f || f->derivation) return no_function(*p, name);
      if (auto e = broken_error(primal.back().broken, name)) return *e;
    }
    if (auto e = check_arguments(*p->find(name), r.example_args)) return *e;
    auto sizes = cot::interp::bind_sizes(*p, name, r.example_args);
    if (auto* d = std::get_if<cot::Diagnostic>(&sizes)) return to_error(*impl.sources, *d);
    native.push_back({p, name, std::get<std::vector<int64_t>>(std::move(sizes))});
  }
  auto compiled = cot::codegen::compile_native(native, no);
  if (auto* d = std::get_if<cot::Diagnostic>(&compiled)) return to_error(*impl.sources, *d);
  if (!request.empty()) {
    // A cache that cannot be written costs the next call a compile, never this one.
    try {
      cot::codegen::remember_compiled(
          request, std::get<std::vector<cot::codegen::NativeFunction>>(compiled), no);
    } catch (const std::exception&) {
    }
  }
  std::vector<CompiledFunction> out;
  for (auto& nf : std::get<std::vector<cot::codegen::NativeFunction>>(compiled)) {
    out.emplace_back(std::make_shared<const CompiledFunction::Impl>(
        CompiledFunction::Impl{std::move(nf), no, impl.sources}));
  }
  return out;
}

CompileOptions compile_options(const EvalOptions& o) {
  CompileOptions c;
  c.threads = o.threads;
  c.max_while_iterations = o.max_while_iterations;
  return c;
}

}  // namespace

Result<Value> Module::run(const std::string& fn, const std::vector<Value>& args,
                          const EvalOptions& options, CostReport* report) const {
  if (options.backend == Backend::Native && report == nullptr) {
    // Through the compile cache by request: a warm run prepares nothing.
    auto compiled = compile({{fn, std::nullopt, {}, args}}, compile_options(options));
    if (!compiled) return compiled.errors();
    return compiled.value().front().call(args);
  }
  const Prepared p = impl_->prepare({fn});
  const cot::ir::Function* f = p.program->find(fn);
  if (!f || f->derivation) return no_function(*p.program, fn);
  if (auto e = broken_error(p.broken, fn)) return *e;
  if (auto e = check_arguments(*f, args)) return *e;
  cot::interp::CostCounts counts;
  auto r = execute(*p.program, fn, args, options, impl_->options, report ? &counts : nullptr);
  if (auto* d = std::get_if<cot::Diagnostic>(&r)) return to_error(*impl_->sources, *d);
  if (report) *report = CostReport{counts.total(), counts.add, counts.mul, counts.call};
  return std::get<Value>(std::move(r));
}

Result<std::string> Module::print(const std::string& fn) const {
  return guarded<std::string>([&]() -> Result<std::string> {
    const Prepared p = impl_->prepare({fn});
    const cot::ir::Function* f = p.program->find(fn);
    if (!f || f->derivation) return no_function(*p.program, fn);
    if (auto e = broken_error(p.broken, fn)) return *e;
    // A whole program: the function, every user function it calls, directly or through a
    // derivative operator (prelude functions are always available), and the derived functions
    // it calls.
    return cot::ir::print_with_dependencies(*p.program, {f});
  });
}

cot::ast::DerivKind to_deriv_kind(DerivativeKind k) {
  switch (k) {
    case DerivativeKind::Grad:
      return cot::ast::DerivKind::Grad;
    case DerivativeKind::ValueAndGrad:
      return cot::ast::DerivKind::ValueAndGrad;
    case DerivativeKind::Jvp:
      return cot::ast::DerivKind::Jvp;
    case DerivativeKind::Vjp:
      return cot::ast::DerivKind::Vjp;
    case DerivativeKind::Jacobian:
      return cot::ast::DerivKind::Jacobian;
    case DerivativeKind::Hessian:
      return cot::ast::DerivKind::Hessian;
  }
  return cot::ast::DerivKind::Grad;
}

Result<Derived> derive(const Module::Impl& impl, const std::string& fn, DerivativeKind kind,
                       const std::vector<std::string>& wrt, bool build) {
  // Checking the operator needs only fn's signature; building it, fn prepared.
  const Prepared p = build ? impl.prepare({fn}) : impl.snapshot();
  const cot::ir::Function* f = p.program->find(fn);
  if (!f || f->derivation) return no_function(*p.program, fn);
  return derive(impl, *p.program, p.broken, fn, kind, wrt, build);
}

Result<Derived> derive(const Module::Impl& impl, const cot::ir::Program& p,
                       const std::map<std::string, Error>& known_broken, const std::string& fn,
                       DerivativeKind kind, const std::vector<std::string>& wrt, bool build) {
  const cot::ir::Function* f = p.find(fn);
  if (!f) return no_function(p, fn);
  if (auto e = broken_error(known_broken, fn)) return *e;
  const cot::ast::DerivKind dk = to_deriv_kind(kind);
  const char* op = cot::ast::to_string(dk);

  cot::check::Signature sig;
  sig.name = f->name;
  sig.span = f->span;
  sig.result = f->result_type;
  for (size_t i = 0; i < f->params.size(); ++i) {
    sig.param_names.push_back(f->vars[static_cast<size_t>(f->params[i])].name);
    sig.param_types.push_back(f->param_type(i));
    sig.param_spans.push_back(i < f->param_spans.size() ? f->param_spans[i] : f->span);
  }
  std::string params_list;
  for (size_t i = 0; i < sig.param_names.size(); ++i) {
    params_list += (i ? ", " : "") + sig.param_names[i] + ": " + sig.param_types[i].to_string();
  }
  if (params_list.empty()) params_list = "none";

  std::vector<cot::Diagnostic> ds;
  std::vector<int> active;
  if (wrt.empty()) {
    for (size_t i = 0; i < sig.param_types.size(); ++i) {
      if (sig.param_types[i].is_real_valued()) active.push_back(static_cast<int>(i));
    }
    if (active.empty()) {
      ds.push_back({f->span,
                    "`" + fn + "` has no real parameter to differentiate",
                    "its parameters are " + params_list,
                    {}});
    }
  }
  for (const auto& w : wrt) {
    auto it = std::find(sig.param_names.begin(), sig.param_names.end(), w);
    if (it == sig.param_names.end()) {
      ds.push_back({f->span,
                    "`" + fn + "` has no parameter named `" + w + "`",
                    "its parameters are " + params_list,
                    {}});
      continue;
    }
    const auto k = static_cast<size_t>(it - sig.param_names.begin());
    if (!sig.param_types[k].is_real_valued()) {
      ds.push_back({sig.param_spans[k],
                    "parameter `" + w + "` of `" + fn + "` has type " +
                        sig.param_types[k].to_string() + " and cannot be differentiated",
                    "only parameters of real type (f64, f32, tensors and tuples of them) are "
                    "active",
                    {}});
      continue;
    }
    if (std::find(active.begin(), active.end(), static_cast<int>(k)) != active.end()) {
      ds.push_back({f->span, "parameter `" + w + "` is named twice", "", {}});
      continue;
    }
    active.push_back(static_cast<int>(k));
  }
  if (!ds.empty()) return to_errors(*impl.sources, std::move(ds));
  std::string why;
  if (!cot::check::derived_signature(dk, sig, active, &why)) {
    std::string help;
    if (dk == cot::ast::DerivKind::Grad || dk == cot::ast::DerivKind::ValueAndGrad ||
        dk == cot::ast::DerivKind::Hessian) {
      if (f->result_type.is_real_valued()) {
        help = std::string(op) + " differentiates a scalar function; jvp and vjp accept any " +
               "real result";
      }
    }
    return to_error(*impl.sources, cot::Diagnostic{f->span, why, help, {}});
  }

  Derived d;
  d.wrt = active;
  for (int k : active) d.wrt_names.push_back(sig.param_names[static_cast<size_t>(k)]);
  if (!build) return d;
  d.program = p;
  d.name = cot::ad::derived_function_name(d.program, dk, fn, active);
  if (d.program.find(d.name) == nullptr) {
    cot::ir::Function shell;
    shell.name = d.name;
    shell.derivation = cot::ir::Derivation{dk, fn, active};
    d.program.functions.push_back(std::move(shell));
  }
  if (auto e = broken_error(known_broken, d.name)) return *e;
  // What it needs that is not built yet (derived functions of other functions of the module
  // may be unbuilt too: they are built when asked for).
  std::set<std::string> unbuilt;
  for (const auto& n : needed_functions(d.program, {d.name})) {
    const cot::ir::Function* g = d.program.find(n);
    if (g->derivation && g->body.stmts.empty() && g->body.results.empty() &&
        known_broken.count(n) == 0) {
      unbuilt.insert(n);
    }
  }
  std::map<std::string, Error> broken;
  // A derived base has no span of its own: its errors belong to the user's file.
  const std::string file = f->span.valid()            ? impl.sources->file(f->span.file).name
                           : impl.sources->size() > 1 ? impl.sources->file(2).name
                                                      : std::string("<module>");
  for (const auto& [name, failed] : cot::ad::build_each_derivative(d.program, {}, unbuilt)) {
    broken.emplace(name, derive_error(file, name, failed));
  }
  optimize(
      d.program, impl.options,
      [&](const cot::ir::Function& g) {
        return unbuilt.count(g.name) > 0 && broken.count(g.name) == 0;
      },
      broken);
  spread_breakage(d.program, broken);
  if (auto e = broken_error(broken, d.name)) return *e;
  d.broken = known_broken;
  d.broken.insert(broken.begin(), broken.end());
  return d;
}

Result<std::vector<std::string>> Module::derivative_parameters(
    const std::string& fn, DerivativeKind kind, const std::vector<std::string>& wrt) const {
  return guarded<std::vector<std::string>>([&]() -> Result<std::vector<std::string>> {
    auto d = derive(*impl_, fn, kind, wrt, /*build=*/false);
    if (!d) return d.errors();
    return d.value().wrt_names;
  });
}

Result<std::string> Module::print_derivative(const std::string& fn, DerivativeKind kind,
                                             const std::vector<std::string>& wrt) const {
  return guarded<std::string>([&]() -> Result<std::string> {
    auto d = derive(*impl_, fn, kind, wrt);
    if (!d) return d.errors();
    const cot::ir::Program& p = d.value().program;
    return cot::ir::print_with_dependencies(p, {p.find(d.value().name)});
  });
}

Result<ValueAndGrad> Module::value_and_grad(const std::string& fn, const std::vector<Value>& args,
                                            const std::vector<std::string>& wrt,
                                            const EvalOptions& options) const {
  return guarded<ValueAndGrad>([&]() -> Result<ValueAndGrad> {
    const bool native = options.backend == Backend::Native;
    const std::vector<CompileRequest> requests = {{fn, DerivativeKind::ValueAndGrad, wrt, args}};
    const cot::codegen::NativeOptions no = native_options(compile_options(options), impl_->options);
    std::string request;
    std::optional<std::vector<CompiledFunction>> compiled;
    if (native) {
      request = request_text(*impl_, requests);
      compiled = compiled_before(*impl_, request, requests, no);
    }
    // Checked as grad, so that messages name the operator a user thinks of.
    auto checked = derive(*impl_, fn, DerivativeKind::Grad, wrt, /*build=*/false);
    if (!checked) return checked.errors();
    Value v;
    if (native) {
      // Against fn, as the interpreter's path checks them (the derivative would name itself).
      const Prepared known = impl_->snapshot();
      const cot::ir::Function* f = known.program->find(fn);
      if (f == nullptr) return no_function(*known.program, fn);
      if (auto e = check_arguments(*f, args)) return *e;
      if (!compiled) {
        auto c = compile_afresh(*impl_, request, requests, no);
        if (!c) return c.errors();
        compiled = std::move(c).value();
      }
      auto r = compiled->front().call(args);
      if (!r) return r.errors();
      v = std::move(r).value();
    } else {
      auto d = derive(*impl_, fn, DerivativeKind::ValueAndGrad, wrt);
      if (!d) return d.errors();
      const cot::ir::Program& p = d.value().program;
      if (auto e = check_arguments(*p.find(fn), args)) return *e;
      auto r = execute(p, d.value().name, args, options, impl_->options, nullptr);
      if (auto* diag = std::get_if<cot::Diagnostic>(&r)) return to_error(*impl_->sources, *diag);
      v = std::get<Value>(std::move(r));
    }
    ValueAndGrad out;
    out.value = v.elems().at(0);
    const Value& g = v.elems().at(1);
    const auto& names = checked.value().wrt_names;
    for (size_t k = 0; k < names.size(); ++k) {
      out.grad.push_back(NamedValue{names[k], names.size() == 1 ? g : g.elems().at(k)});
    }
    return out;
  });
}

Result<CostReport> Module::derivative_cost(const std::string& fn, DerivativeKind kind,
                                           const std::vector<Value>& args,
                                           const std::vector<std::string>& wrt,
                                           const EvalOptions& options) const {
  return guarded<CostReport>([&]() -> Result<CostReport> {
    if (kind == DerivativeKind::Jvp || kind == DerivativeKind::Vjp) {
      Error e;
      e.message = "the cost of a jvp or vjp needs its tangent or cotangent arguments too";
      e.help = "define a function that calls jvp(" + fn + ") or vjp(" + fn + ") and cost it";
      e.rendered = "error: " + e.message + "\n  help: " + e.help + "\n";
      return e;
    }
    auto d = derive(*impl_, fn, kind, wrt);
    if (!d) return d.errors();
    const cot::ir::Program& p = d.value().program;
    if (auto e = check_arguments(*p.find(fn), args)) return *e;
    cot::interp::CostCounts counts;
    auto r = cot::interp::evaluate(p, d.value().name, args, &counts, interp_options(options));
    if (auto* diag = std::get_if<cot::Diagnostic>(&r)) return to_error(*impl_->sources, *diag);
    return CostReport{counts.total(), counts.add, counts.mul, counts.call};
  });
}

Result<std::vector<CompiledFunction>> Module::compile(const std::vector<CompileRequest>& requests,
                                                      const CompileOptions& options) const {
  return guarded<std::vector<CompiledFunction>>([&]() -> Result<std::vector<CompiledFunction>> {
    const cot::codegen::NativeOptions no = native_options(options, impl_->options);
    const std::string request = request_text(*impl_, requests);
    if (auto found = compiled_before(*impl_, request, requests, no)) return std::move(*found);
    return compile_afresh(*impl_, request, requests, no);
  });
}

Result<Module::GeneratedSource> Module::generate_cpp(const std::string& fn,
                                                     std::optional<DerivativeKind> derivative,
                                                     const std::vector<std::string>& wrt,
                                                     const std::string& c_name) const {
  return guarded<GeneratedSource>([&]() -> Result<GeneratedSource> {
    if (auto why = cot::codegen::invalid_c_name(c_name)) {
      Error e;
      e.message = "`" + c_name + "` " + *why;
      e.help =
          "name the generated function with letters, digits and underscores, as `cotangent "
          "emit` does (cot_fn_FN, cot_grad_FN, ...)";
      e.rendered = "error: " + e.message + "\n  help: " + e.help + "\n";
      return e;
    }
    std::optional<Derived> d;
    Prepared primal;
    const cot::ir::Program* p = nullptr;
    std::string name = fn;
    if (derivative) {
      auto r = derive(*impl_, fn, *derivative, wrt);
      if (!r) return r.errors();
      d = std::move(r).value();
      p = &d->program;
      name = d->name;
    } else {
      primal = impl_->prepare({name});
      p = primal.program.get();
      const cot::ir::Function* f = p->find(name);
      if (!f || f->derivation) return no_function(*p, name);
      if (auto e = broken_error(primal.broken, name)) return *e;
    }
    auto src = cot::codegen::standalone_source(*p, name, c_name, *impl_->sources,
                                               loop_dump(impl_->options));
    if (auto* diag = std::get_if<cot::Diagnostic>(&src)) return to_error(*impl_->sources, *diag);
    auto& s = std::get<cot::codegen::StandaloneSource>(src);
    return GeneratedSource{std::move(s.header), std::move(s.source)};
  });
}

}  // namespace cotangent
