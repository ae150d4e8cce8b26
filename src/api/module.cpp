#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "ad/derive.h"
#include "check/checker.h"
#include "cotangent/cotangent.h"
#include "interp/interpreter.h"
#include "ir/printer.h"
#include "ir/uses.h"
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

// The library reports errors as values; what can still escape from the standard library is
// an allocation failure (a program asking for more memory than the machine has).
template <class T, class F>
Result<T> guarded(F&& body) {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    Error e;
    e.message = "out of memory";
    e.help = "the program or its inputs need more memory than is available";
    e.rendered = "error: " + e.message + "\n  help: " + e.help + "\n";
    return e;
  }
}

}  // namespace

Result<Module> Module::from_string(std::string_view source, std::string name) {
  return guarded<Module>([&]() -> Result<Module> { return load(source, std::move(name)); });
}

Result<Module> Module::load(std::string_view source, std::string name) {
  auto sm = std::make_shared<cot::SourceManager>();
  const uint32_t prelude_id = sm->add("<prelude>", std::string(cot::kPreludeText));
  const uint32_t user_id = sm->add(std::move(name), std::string(source));
  cot::DiagnosticSink diags;
  cot::ast::Module prelude = cot::parse_module(*sm, prelude_id, diags);
  cot::ast::Module user = cot::parse_module(*sm, user_id, diags);
  if (diags.has_errors()) return to_errors(*sm, diags.take());
  auto program = cot::check_program(sm, &prelude, user, diags);
  if (!program) return to_errors(*sm, diags.take());
  if (auto failed = cot::ad::build_derivatives(*program)) {
    Error e;
    e.file = sm->file(user_id).name;
    e.message = "internal compiler error while differentiating: " + *failed;
    e.help = "please report this with the program that caused it";
    e.rendered = e.file + ": error: " + e.message + "\n  help: " + e.help + "\n";
    return e;
  }
  auto impl = std::make_shared<Impl>();
  impl->sources = sm;
  impl->program = std::move(*program);
  return Module(std::move(impl));
}

Result<Module> Module::from_file(const std::string& path) {
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (!in || is_dir) {
    Error e;
    e.file = path;
    e.message = is_dir ? path + " is a directory" : "cannot read " + path;
    e.help = is_dir ? "name a .cot file" : "check that the file exists and is readable";
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
}  // namespace

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

Result<Value> Module::run(const std::string& fn, const std::vector<Value>& args,
                          const EvalOptions& options, CostReport* report) const {
  const cot::ir::Function* f = impl_->program.find(fn);
  if (!f || f->derivation) return no_function(impl_->program, fn);
  if (auto e = check_arguments(*f, args)) return *e;
  cot::interp::CostCounts counts;
  auto r = cot::interp::evaluate(impl_->program, fn, args, report ? &counts : nullptr,
                                 interp_options(options));
  if (auto* d = std::get_if<cot::Diagnostic>(&r)) return to_error(*impl_->sources, *d);
  if (report) *report = CostReport{counts.total(), counts.add, counts.mul, counts.call};
  return std::get<Value>(std::move(r));
}

Result<std::string> Module::print(const std::string& fn) const {
  return guarded<std::string>([&]() -> Result<std::string> {
    const cot::ir::Function* f = impl_->program.find(fn);
    if (!f || f->derivation) return no_function(impl_->program, fn);
    // The printed text is a whole program: the function, then every user function it calls,
    // directly or through a derivative operator (prelude functions are always available).
    const cot::ir::Program& p = impl_->program;
    std::vector<const cot::ir::Function*> order{f};
    std::set<std::string> seen{f->name};
    auto want = [&](const std::string& name) {
      const cot::ir::Function* g = p.find(name);
      while (g && g->derivation) g = p.find(g->derivation->base);
      if (g && !g->from_prelude && seen.insert(g->name).second) order.push_back(g);
    };
    for (size_t k = 0; k < order.size(); ++k) {
      cot::ir::for_each_call(order[k]->body, want);
    }
    std::string text;
    for (const auto* g : order) {
      text += (text.empty() ? "" : "\n") + cot::ir::print_function(p, *g);
    }
    return text;
  });
}

}  // namespace cotangent
