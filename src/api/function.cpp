// Function: a function of a module or a derived function, built once and then evaluated,
// counted, printed, compiled and differentiated again (cotangent.h).
#include <string>
#include <vector>

#include "api/internal.h"
#include "ir/printer.h"

namespace cotangent {

struct Function::Impl {
  std::shared_ptr<const Module::Impl> module;
  // The module's program, or a copy of it holding the derived functions this one needs.
  std::shared_ptr<const cot::ir::Program> program;
  std::map<std::string, Error> broken;  // the functions of `program` that cannot run
  std::string ir_name;                  // the function's name in `program`
  FunctionInfo info;
};

namespace {

const cot::ir::Function& ir_function(const Function::Impl& impl) {
  return *impl.program->find(impl.ir_name);
}

// Rebuilds arguments of the kinds `params` from leaves (tuples depth first): tensors without
// storage, scalars zero, enough for binding sizes.
bool shape_values(const ValueKind& kind, const std::vector<TensorRef>& leaves, size_t& next,
                  Value& out) {
  if (kind.is_tuple) {
    std::vector<Value> elems(kind.elems.size());
    for (size_t k = 0; k < kind.elems.size(); ++k) {
      if (!shape_values(kind.elems[k], leaves, next, elems[k])) return false;
    }
    out = Value::tuple(std::move(elems));
    return true;
  }
  if (next >= leaves.size()) return false;
  const TensorRef& l = leaves[next++];
  out = l.shape.empty() ? Value::zeros(l.dtype, {}) : Value::without_storage(l.dtype, l.shape);
  return true;
}

}  // namespace

Result<Function> Module::get(const std::string& name) const {
  return guarded<Function>([&]() -> Result<Function> {
    Prepared p = impl_->prepare({name});
    const cot::ir::Function* f = p.program->find(name);
    if (!f || f->derivation) return no_function(*p.program, name);
    if (auto e = broken_error(p.broken, name)) return *e;
    auto fi = std::make_shared<Function::Impl>();
    fi->module = impl_;
    fi->info = info_of(*f);
    fi->program = std::move(p.program);
    fi->broken = std::move(p.broken);
    fi->ir_name = name;
    return Function(std::move(fi));
  });
}

const std::string& Function::name() const {
  return impl_->info.name;
}

const FunctionInfo& Function::info() const {
  return impl_->info;
}

bool Function::is_derived() const {
  return ir_function(*impl_).derivation.has_value();
}

Result<Function> Function::derivative(DerivativeKind kind,
                                      const std::vector<std::string>& wrt) const {
  return guarded<Function>([&]() -> Result<Function> {
    auto d = derive(*impl_->module, *impl_->program, impl_->broken, impl_->ir_name, kind, wrt,
                    /*build=*/true);
    if (!d) return d.errors();
    auto fi = std::make_shared<Function::Impl>();
    fi->module = impl_->module;
    fi->ir_name = d.value().name;
    fi->broken = std::move(d.value().broken);
    auto program = std::make_shared<cot::ir::Program>(std::move(d.value().program));
    fi->info = info_of(*program->find(fi->ir_name));
    fi->program = std::move(program);
    return Function(std::move(fi));
  });
}

Result<std::vector<std::string>> Function::derivative_parameters(
    DerivativeKind kind, const std::vector<std::string>& wrt) const {
  return guarded<std::vector<std::string>>([&]() -> Result<std::vector<std::string>> {
    auto d = derive(*impl_->module, *impl_->program, impl_->broken, impl_->ir_name, kind, wrt,
                    /*build=*/false);
    if (!d) return d.errors();
    return d.value().wrt_names;
  });
}

Result<Value> Function::evaluate(const std::vector<Value>& args, const EvalOptions& options) const {
  return guarded<Value>([&]() -> Result<Value> {
    if (auto e = check_arguments(ir_function(*impl_), args)) return *e;
    auto r =
        execute(*impl_->program, impl_->ir_name, args, options, impl_->module->options, nullptr);
    if (auto* d = std::get_if<cot::Diagnostic>(&r)) return to_error(*impl_->module->sources, *d);
    return std::get<Value>(std::move(r));
  });
}

Result<CostReport> Function::cost(const std::vector<Value>& args,
                                  const EvalOptions& options) const {
  return guarded<CostReport>([&]() -> Result<CostReport> {
    if (auto e = check_arguments(ir_function(*impl_), args)) return *e;
    cot::interp::CostCounts counts;
    auto r = cot::interp::evaluate(*impl_->program, impl_->ir_name, args, &counts,
                                   interp_options(options));
    if (auto* d = std::get_if<cot::Diagnostic>(&r)) return to_error(*impl_->module->sources, *d);
    return CostReport{counts.total(), counts.add, counts.mul, counts.call};
  });
}

Result<std::string> Function::print() const {
  return guarded<std::string>([&]() -> Result<std::string> {
    return cot::ir::print_with_dependencies(*impl_->program, {&ir_function(*impl_)});
  });
}

Result<CompiledFunction> Function::compile(const std::vector<TensorRef>& arg_leaves,
                                           const CompileOptions& options) const {
  return guarded<CompiledFunction>([&]() -> Result<CompiledFunction> {
    const FunctionInfo& info = impl_->info;
    size_t wanted = 0;
    for (const auto& p : info.params) wanted += p.kind.leaf_count();
    if (arg_leaves.size() != wanted) {
      return plain_error("`" + info.name + "` takes " + std::to_string(wanted) +
                             " argument leaves (tuples counted element by element), given " +
                             std::to_string(arg_leaves.size()),
                         "");
    }
    std::vector<Value> args(info.params.size());
    size_t next = 0;
    for (size_t k = 0; k < info.params.size(); ++k) {
      shape_values(info.params[k].kind, arg_leaves, next, args[k]);
    }
    auto sizes = cot::interp::bind_sizes(*impl_->program, impl_->ir_name, args);
    if (auto* d = std::get_if<cot::Diagnostic>(&sizes)) {
      return to_error(*impl_->module->sources, *d);
    }
    const cot::codegen::NativeOptions no = native_options(options, impl_->module->options);
    auto compiled = cot::codegen::compile_native(
        {{impl_->program.get(), impl_->ir_name, std::get<std::vector<int64_t>>(std::move(sizes))}},
        no);
    if (auto* d = std::get_if<cot::Diagnostic>(&compiled)) {
      return to_error(*impl_->module->sources, *d);
    }
    auto& fns = std::get<std::vector<cot::codegen::NativeFunction>>(compiled);
    return CompiledFunction(std::make_shared<const CompiledFunction::Impl>(
        CompiledFunction::Impl{std::move(fns.front()), no, impl_->module->sources}));
  });
}

}  // namespace cotangent
