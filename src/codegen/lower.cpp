// Lowering Core IR to the loop IR (lower.h, docs/design.md §10). The Lowerer (lowerer.h) is
// defined across the lower_*.cpp files of this directory, one concern each; this file holds the
// entry point, the function's ports, and the environment and emission helpers the others use.
#include "codegen/lower.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"
#include "runtime/size_checks.h"
#include "runtime/tensor_shapes.h"

namespace cot::codegen::lowering {

LoopFunction Lowerer::run() {
  out_.name = in_.name;
  env_.vals.resize(f_.vars.size());
  bodies_.push_back(&out_.body);
  message_site(f_.span, "out of memory");  // site 0, which the emitter's allocations use
  max_while_ = out_.new_local("max_while_iterations", Scalar::I64);
  // Sizes bound by parameters are constants of this specialization, or (ahead of time) the
  // entries of the sizes array, checked to be non-negative.
  LocalId sizes_in = -1;
  if (in_.runtime_sizes) {
    sizes_in = out_.new_local("sizes", Scalar::I64, true);
    out_.inputs.push_back(Port{sizes_in, Scalar::I64, -1});
  }
  int64_t next_size = 0;
  for (size_t k = 0; k < f_.size_vars.size(); ++k) {
    const ir::SizeVar& sv = f_.size_vars[k];
    if (sv.param == -1) continue;
    ExprP v;
    if (in_.runtime_sizes) {
      v = declare(load(Scalar::I64, sizes_in, lit_i64(next_size++)), sv.name);
      fail_unless(prim(Prim::Ge, {v, lit_i64(0)}),
                  message_site(f_.span, "the size " + sv.name + " is negative",
                               "pass the sizes of the arguments in the sizes array"));
      ints_.ranges[v->local] = Interval{0, INT64_MAX};
    } else {
      v = lit_i64(in_.size_values.at(k));
    }
    ints_.sizes[sv.name] = v;
    if (sv.var >= 0) bind(sv.var, scalar_val(v, Scalar::I64));
  }
  for (size_t i = 0; i < f_.params.size(); ++i) {
    bind(f_.params[i], input(f_.param_type(i), name_of(f_.params[i])));
  }
  find_mark_preds();  // once the sizes are known
  Val result = make_output(f_.result_type);
  std::vector<Val> dests{result};
  lower_block(f_.body, &dests);
  return std::move(out_);
}

void Lowerer::bind(ir::VarId v, Val x) {
  env_.vals.at(static_cast<size_t>(v)) = std::move(x);
}

const Val& Lowerer::val(ir::VarId v) const {
  const auto& x = env_.vals.at(static_cast<size_t>(v));
  if (!x) throw Unsupported{"variable " + name_of(v) + " is used before it is bound"};
  return *x;
}

std::string Lowerer::name_of(ir::VarId v) const {
  if (v < 0 || static_cast<size_t>(v) >= f_.vars.size()) return "#" + std::to_string(v);
  const std::string& n = f_.vars[static_cast<size_t>(v)].name;
  return n.empty() ? "this tensor" : n;
}

std::string Lowerer::c_hint(ir::VarId v) const {
  std::string n = v >= 0 && static_cast<size_t>(v) < f_.vars.size()
                      ? f_.vars[static_cast<size_t>(v)].name
                      : std::string();
  return n.empty() ? "t" : n;
}

Val Lowerer::scalar_val(ExprP e, Scalar t, ExprP mask) {
  Val x;
  x.kind = Val::Kind::Scalar;
  x.type = t;
  x.scalar = std::move(e);
  x.mask = std::move(mask);
  return x;
}

Val Lowerer::atom_val(const ir::Atom& a) const {
  if (!a.is_var) return scalar_val(lit_of(a.lit), a.lit.type);
  return val(a.var);
}

ExprP Lowerer::atom(const ir::Atom& a) const {
  Val x = atom_val(a);
  if (x.kind != Val::Kind::Scalar) throw Unsupported{"a scalar operand is a tensor or tuple"};
  return x.scalar;
}

void Lowerer::emit(StmtOp op) {
  bodies_.back()->push_back(Stmt{std::move(op)});
}

int Lowerer::site(Site s) {
  out_.sites.push_back(std::move(s));
  return static_cast<int>(out_.sites.size() - 1);
}

int Lowerer::message_site(Span span, std::string message, std::string help) {
  Site s;
  s.span = span;
  s.message = std::move(message);
  s.help = std::move(help);
  return site(std::move(s));
}

void Lowerer::fail(int site_id, std::vector<ExprP> values) {
  emit(Fail{site_id, std::move(values)});
}

void Lowerer::fail_unless(ExprP cond, int site_id, std::vector<ExprP> values) {
  if (auto c = as_bool(cond); c && *c) return;
  Body then_body = nested([&] { fail(site_id, std::move(values)); });
  emit(If{not_(std::move(cond)), std::move(then_body), {}});
}

ExprP Lowerer::declare(ExprP e, const std::string& hint) {
  if (e->kind == Expr::Kind::Lit || e->kind == Expr::Kind::Local) return e;
  LocalId l = out_.new_local(hint, e->type);
  emit(Declare{l, e});
  if (e->type == Scalar::I64) {
    if (auto r = range(e)) ints_.ranges[l] = *r;
  }
  return local(out_, l);
}

LocalId Lowerer::mutable_local(const std::string& hint, Scalar t, ExprP init, bool mask) {
  LocalId l = out_.new_local(hint, t, false, mask);
  emit(Declare{l, std::move(init)});
  return l;
}

Val Lowerer::input(const Type& t, const std::string& hint) {
  if (t.is_tuple) {
    Val x;
    x.kind = Val::Kind::Tuple;
    for (const Type& e : t.elems) x.elems.push_back(input(e, hint));
    return x;
  }
  std::vector<ExprP> dims = shape_of(t, Span{});
  int64_t count = 1;
  for (const ExprP& d : dims) count = as_i64(d) && count >= 0 ? count * *as_i64(d) : -1;
  LocalId p = out_.new_local(hint, t.elem, true);
  out_.inputs.push_back(Port{p, t.elem, count});
  if (t.is_scalar()) {
    LocalId s = out_.new_local(hint, t.elem);
    emit(Declare{s, load(t.elem, p, lit_i64(0))});
    return scalar_val(local(out_, s), t.elem);
  }
  Val x;
  x.kind = Val::Kind::Tensor;
  x.type = t.elem;
  x.pointer = p;
  x.offset = lit_i64(0);
  x.dims = std::move(dims);
  return x;
}

Val Lowerer::make_output(const Type& t) {
  if (t.is_tuple) {
    Val x;
    x.kind = Val::Kind::Tuple;
    for (const Type& e : t.elems) x.elems.push_back(make_output(e));
    return x;
  }
  if (in_.runtime_sizes) {
    LocalId p = out_.new_local("out", t.elem, true);
    out_.outputs.push_back(Port{p, t.elem, -1});
    Val x;
    x.kind = Val::Kind::Tensor;
    x.type = t.elem;
    x.pointer = p;
    x.offset = lit_i64(0);
    x.dims = shape_of(t, f_.span);  // the caller's memory: it exists, as an argument does
    x.drops_marks = true;
    return x;
  }
  // A size that cannot be evaluated (an inexact division) fails in the body, where the
  // interpreter reports it; the port gets no elements then. So does a shape that cannot be
  // built (too many elements): its writers check it (alloc_for), failing where the
  // interpreter allocates it.
  std::vector<ExprP> dims;
  std::vector<int64_t> shape;
  for (const SizeExpr& d : t.shape) {
    std::optional<int64_t> v = d.eval([&](const std::string& n) -> std::optional<int64_t> {
      auto it = ints_.sizes.find(n);
      if (it == ints_.sizes.end()) return std::nullopt;
      return as_i64(it->second);
    });
    for (const std::string& n : d.vars()) {
      if (ints_.sizes.count(n) == 0 || !as_i64(ints_.sizes.at(n))) {
        throw Unsupported{"the result's shape depends on a loop's trip count"};
      }
    }
    dims.push_back(lit_i64(v.value_or(0)));
    shape.push_back(v.value_or(0));
  }
  const bool cannot_build =
      interp::size_error(interp::SizeRule::Tensor, shape, 0, in_.max_tensor_elements).has_value();
  LocalId p = out_.new_local("out", t.elem, true);
  out_.outputs.push_back(
      Port{p, t.elem, cannot_build ? 0 : *interp::element_count(shape), cannot_build});
  Val x;
  x.kind = Val::Kind::Tensor;  // scalars too: one element at out[0]
  x.type = t.elem;
  x.pointer = p;
  x.offset = lit_i64(0);
  x.dims = std::move(dims);
  x.check_at_writer = cannot_build;
  x.drops_marks = true;
  return x;
}

}  // namespace cot::codegen::lowering

namespace cot::codegen {

std::variant<LoopFunction, std::string> lower(const LowerInput& in) {
  if (in.fn == nullptr) return std::string("no function to lower");
  if (in.size_values.size() != in.fn->size_vars.size()) {
    return std::string("size values do not match the function's size variables");
  }
  try {
    return lowering::Lowerer(in).run();
  } catch (const lowering::Unsupported& u) {
    return u.why;
  }
}

}  // namespace cot::codegen
