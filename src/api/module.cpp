#include <algorithm>
#include <fstream>
#include <sstream>

#include "check/checker.h"
#include "cotangent/cotangent.h"
#include "interp/interpreter.h"
#include "ir/printer.h"
#include "syntax/parser.h"

namespace cot {
extern const std::string_view kPreludeText;
}

namespace cotangent {

struct Module::Impl {
  std::shared_ptr<cot::SourceManager> sources;
  cot::ir::Program program;
};

namespace {

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

}  // namespace

Result<Module> Module::from_string(std::string_view source, std::string name) {
  auto sm = std::make_shared<cot::SourceManager>();
  const uint32_t prelude_id = sm->add("<prelude>", std::string(cot::kPreludeText));
  const uint32_t user_id = sm->add(std::move(name), std::string(source));
  cot::DiagnosticSink diags;
  cot::ast::Module prelude = cot::parse_module(*sm, prelude_id, diags);
  cot::ast::Module user = cot::parse_module(*sm, user_id, diags);
  if (diags.has_errors()) return to_errors(*sm, diags.take());
  auto program = cot::check_program(sm, &prelude, user, diags);
  if (!program) return to_errors(*sm, diags.take());
  auto impl = std::make_shared<Impl>();
  impl->sources = sm;
  impl->program = std::move(*program);
  return Module(std::move(impl));
}

Result<Module> Module::from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    Error e;
    e.file = path;
    e.message = "cannot read " + path;
    e.help = "check that the file exists and is readable";
    e.rendered = path + ": error: " + e.message + "\n  help: " + e.help + "\n";
    return e;
  }
  std::ostringstream text;
  text << in.rdbuf();
  return from_string(text.str(), path);
}

std::vector<std::string> Module::function_names(bool include_prelude) const {
  std::vector<std::string> out;
  for (const auto& f : impl_->program.functions) {
    if (f.derivation || (f.from_prelude && !include_prelude)) continue;
    out.push_back(f.name);
  }
  return out;
}

Result<FunctionInfo> Module::function(const std::string& name) const {
  const cot::ir::Function* f = impl_->program.find(name);
  if (!f || f->derivation) return no_function(impl_->program, name);
  FunctionInfo info;
  info.name = f->name;
  info.from_prelude = f->from_prelude;
  info.result_type = f->result_type.to_string();
  for (size_t i = 0; i < f->params.size(); ++i) {
    const auto& t = f->type_of(f->params[i]);
    info.params.push_back(
        ParamInfo{f->vars[static_cast<size_t>(f->params[i])].name, t.to_string(), kind_of(t)});
  }
  return info;
}

namespace {

// Values built through the API can hold shapes that cannot exist (negative or overflowing
// dimensions keep their shape but get no storage); they are refused here, by parameter name,
// before the interpreter reads them.
std::optional<std::string> malformed(const Value& v) {
  if (v.is_tuple()) {
    for (const auto& e : v.elems()) {
      if (auto why = malformed(e)) return why;
    }
    return std::nullopt;
  }
  int64_t n = 0;
  std::string shape = "[";
  for (size_t d = 0; d < v.shape().size(); ++d) {
    shape += (d ? ", " : "") + std::to_string(v.shape()[d]);
  }
  shape += "]";
  if (!Value::checked_numel(v.shape(), &n)) {
    return "its shape " + shape + " has a negative dimension or too many elements";
  }
  size_t have = 0;
  switch (v.dtype()) {
    case DType::F64:
      have = v.f64_data().size();
      break;
    case DType::F32:
      have = v.f32_data().size();
      break;
    case DType::I64:
      have = v.i64_data().size();
      break;
    case DType::Bool:
      have = v.bool_data().size();
      break;
  }
  if (static_cast<int64_t>(have) != n) {
    return "its shape " + shape + " needs " + std::to_string(n) + " elements but it has " +
           std::to_string(have);
  }
  return std::nullopt;
}

std::optional<Error> check_arguments(const cot::ir::Function& f, const std::vector<Value>& args) {
  for (size_t i = 0; i < args.size() && i < f.params.size(); ++i) {
    if (auto why = malformed(args[i])) {
      Error e;
      e.message = "argument " + std::to_string(i + 1) + " (`" +
                  f.vars[static_cast<size_t>(f.params[i])].name + "`) of `" + f.name +
                  "` is not a valid value: " + *why;
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
}  // namespace

Result<Value> Module::evaluate(const std::string& fn, const std::vector<Value>& args,
                               const EvalOptions& options) const {
  const cot::ir::Function* f = impl_->program.find(fn);
  if (!f || f->derivation) return no_function(impl_->program, fn);
  if (auto e = check_arguments(*f, args)) return *e;
  auto r = cot::interp::evaluate(impl_->program, fn, args, nullptr, interp_options(options));
  if (auto* d = std::get_if<cot::Diagnostic>(&r)) return to_error(*impl_->sources, *d);
  return std::get<Value>(std::move(r));
}

Result<CostReport> Module::cost(const std::string& fn, const std::vector<Value>& args,
                                const EvalOptions& options) const {
  const cot::ir::Function* f = impl_->program.find(fn);
  if (!f || f->derivation) return no_function(impl_->program, fn);
  if (auto e = check_arguments(*f, args)) return *e;
  cot::interp::CostCounts counts;
  auto r = cot::interp::evaluate(impl_->program, fn, args, &counts, interp_options(options));
  if (auto* d = std::get_if<cot::Diagnostic>(&r)) return to_error(*impl_->sources, *d);
  return CostReport{counts.total(), counts.add, counts.mul, counts.call};
}

Result<std::string> Module::print(const std::string& fn) const {
  const cot::ir::Function* f = impl_->program.find(fn);
  if (!f || f->derivation) return no_function(impl_->program, fn);
  return cot::ir::print_function(impl_->program, *f);
}

}  // namespace cotangent
