#include "ad/derive.h"

#include <functional>
#include <map>
#include <set>
#include <stdexcept>

#include "ad/jvp.h"
#include "ad/linearity.h"
#include "ad/rules.h"
#include "ad/tangent.h"
#include "ad/transpose.h"
#include "ir/builder.h"
#include "ir/inline_calls.h"
#include "ir/uses.h"

namespace cot::ad {
namespace {

bool unbuilt(const ir::Function& f) {
  return f.derivation && f.body.stmts.empty() && f.body.results.empty();
}

SizeExpr product(const std::vector<SizeExpr>& shape) {
  SizeExpr p = SizeExpr::constant(1);
  for (const auto& d : shape) p = p * d;
  return p;
}

// The basis tensor of `shape` with a one at position `at`: for j. [j == at] * 1.0.
ir::Atom one_hot(ir::Builder& b, const std::vector<SizeExpr>& shape, Scalar elem,
                 const std::vector<ir::VarId>& at) {
  if (shape.empty()) return ir::Atom::real(1.0, elem);
  return ir::Atom::of(gen_over(b, shape, "j", [&](const std::vector<ir::VarId>& js) {
    std::vector<Pred> eqs;
    for (size_t k = 0; k < js.size(); ++k) {
      eqs.push_back(Pred::eq0(*Affine::sub(Affine::var(js[k]), Affine::var(at[k]))));
    }
    return ir::Atom::of(b.guard(Pred::conj(std::move(eqs)), [&] {
      return std::vector<ir::Atom>{ir::Atom::real(1.0, elem)};
    })[0]);
  }));
}

class Deriver {
 public:
  Deriver(ir::Program& program, const DeriveOptions& options)
      : program_(program), options_(options) {}

  void ensure_built(const std::string& name) {
    const ir::Function* fn = program_.find(name);
    if (fn == nullptr) throw std::logic_error("ad: no function " + name);
    if (!unbuilt(*fn)) {
      if (!visited_.insert(name).second) return;
      std::vector<std::string> callees;
      ir::for_each_call(fn->body, [&](const std::string& c) { callees.push_back(c); });
      for (const auto& c : callees) ensure_built(c);
      return;
    }
    if (!in_progress_.insert(name).second) {
      throw std::logic_error("ad: derived function " + name + " depends on itself");
    }
    const ir::Derivation d = *fn->derivation;
    const ir::Function shell = *fn;
    ensure_built(d.base);
    ir::Function g = build(d, name);
    g.name = name;
    g.derivation = d;
    g.from_prelude = false;
    if (shell.span.valid()) g.span = shell.span;
    if (!shell.params.empty() &&
        (g.params.size() != shell.params.size() || g.result_type != shell.result_type)) {
      throw std::logic_error("ad: " + name + " was built with type " + g.result_type.to_string() +
                             ", expected " + shell.result_type.to_string());
    }
    *program_.find(name) = std::move(g);
    in_progress_.erase(name);
    visited_.insert(name);
  }

 private:
  // The name of the derived function `kind(base, wrt)`, added to the program (and built) when
  // it is not there yet.
  std::string ensure_derived(ast::DerivKind kind, const std::string& base,
                             const std::vector<int>& wrt) {
    const std::string name = derived_function_name(program_, kind, base, wrt);
    if (program_.find(name) == nullptr) {
      ir::Function shell;
      shell.name = name;
      shell.derivation = ir::Derivation{kind, base, wrt};
      program_.functions.push_back(std::move(shell));
    }
    ensure_built(name);
    return name;
  }

  ir::Function build(const ir::Derivation& d, const std::string& name) {
    switch (d.kind) {
      case ast::DerivKind::Jvp: {
        ir::Function g = jvp_function(ir::inline_calls(program_, d.base), d.wrt, rules_, name);
        VarSet tangents(g.params.end() - static_cast<long>(d.wrt.size()), g.params.end());
        require_linear(g, g.body, tangents, "the tangent code of " + name);
        return g;
      }
      case ast::DerivKind::Vjp:
      case ast::DerivKind::Grad:
      case ast::DerivKind::ValueAndGrad:
        return reverse(ir::inline_calls(program_, d.base), d.wrt, d.kind, name);
      case ast::DerivKind::Jacobian:
        return jacobian(d.base, d.wrt.at(0), name);
      case ast::DerivKind::Hessian:
        return jacobian(ensure_derived(ast::DerivKind::Grad, d.base, d.wrt), d.wrt.at(0), name);
    }
    throw std::logic_error("ad: unknown derivative operator");
  }

  // Reverse mode: jvp, unzip, transpose ([Radul23], design.md §7).
  ir::Function reverse(const ir::Function& f, const std::vector<int>& wrt, ast::DerivKind kind,
                       const std::string& name) {
    ir::Function g = f;
    g.name = name;
    g.body = ir::Block{};
    g.derivation.reset();
    ir::Atom ct = ir::Atom::real(1.0, f.result_type.elem);
    if (kind == ast::DerivKind::Vjp) {
      ir::VarId c = g.new_var(ir::unique_name(param_names(g), "ct"), f.result_type);
      g.params.push_back(c);
      g.param_spans.push_back(f.span);
      ct = ir::Atom::of(c);
    }
    TangentMap tan;
    VarSet tangent;
    std::vector<ir::VarId> inputs;
    for (int w : wrt) {
      const ir::VarId p = f.params.at(static_cast<size_t>(w));
      inputs.push_back(g.new_var("t_" + f.vars[static_cast<size_t>(p)].name, f.type_of(p)));
      tan[p] = Tangent::value(ir::Atom::of(inputs.back()));
      tangent.insert(inputs.back());
    }
    ir::Builder b(g);
    Jvp jvp(b, rules_);
    ir::Block linearized = b.region([&] {
      std::vector<Tangent> ts = jvp.run(f.body, tan);
      const ir::Atom value = f.body.results.at(0);
      return std::vector<ir::Atom>{value, materialize(b, ts.at(0), f.result_type)};
    });
    require_linear(g, linearized, tangent, "the linear part of " + name);
    linearized = checkpoint_loops(b, std::move(linearized), tangent, options_.policy);
    Transposer transposer(b, rules_, tangent, options_.policy);
    auto top = transposer.open(std::move(linearized), {std::nullopt, ct});
    std::vector<ir::Atom> grads;
    for (size_t k = 0; k < wrt.size(); ++k) {
      auto c = transposer.ct(*top, inputs[k]);
      grads.push_back(c ? *c : zeros(b, g.type_of(inputs[k])));
    }
    if (kind == ast::DerivKind::ValueAndGrad) {
      ir::Atom gs = grads.size() == 1 ? grads[0] : ir::Atom::of(b.tuple(grads));
      b.finish({top->results.at(0), gs});
    } else {
      b.finish(grads);
    }
    if (kind == ast::DerivKind::Vjp) {
      require_linear(g, g.body, {ct.var}, "the transposed code of " + name);
    }
    return g;
  }

  // jacobian(f, a): shape(result) ++ shape(a). Forward mode pushes one basis tangent per
  // element of a through jvp(f, a); reverse mode pulls one basis cotangent per element of the
  // result through vjp(f, a). The choice is made on the sizes at run time: forward when a has
  // at most twice as many elements as the result (a vjp costs about twice a jvp).
  ir::Function jacobian(const std::string& base_name, int a, const std::string& name) {
    const std::string jn = ensure_derived(ast::DerivKind::Jvp, base_name, {a});
    const std::string vn = ensure_derived(ast::DerivKind::Vjp, base_name, {a});
    const ir::Function& base = *program_.find(base_name);
    ir::Function g = base;
    g.name = name;
    g.body = ir::Block{};
    g.derivation.reset();
    const Type at_type = base.param_type(static_cast<size_t>(a));
    const Type rt = base.result_type;
    const auto& sa = at_type.shape;
    const auto& so = rt.shape;
    std::vector<SizeExpr> jshape = so;
    jshape.insert(jshape.end(), sa.begin(), sa.end());
    const Type jt = Type::tensor(rt.elem, jshape);
    ir::Builder b(g);
    std::vector<ir::Atom> args;
    for (ir::VarId p : g.params) args.push_back(ir::Atom::of(p));
    auto forward = [&]() -> ir::Atom {
      auto column = [&](const std::vector<ir::VarId>& is) {
        std::vector<ir::Atom> xs = args;
        xs.push_back(one_hot(b, sa, at_type.elem, is));
        ir::VarId r = b.call(jn, xs, Type::tuple({rt, rt}));
        return ir::Atom::of(b.proj(ir::Atom::of(r), 1));
      };
      if (sa.empty()) return column({});
      ir::Atom cols = ir::Atom::of(gen_over(b, sa, "i", column));
      if (so.empty()) return cols;
      // cols has shape sa ++ so; the jacobian is its transpose, so ++ sa.
      std::vector<SizeExpr> both = so;
      both.insert(both.end(), sa.begin(), sa.end());
      return ir::Atom::of(gen_over(b, both, "o", [&](const std::vector<ir::VarId>& os) {
        std::vector<ir::VarId> swapped(os.begin() + static_cast<long>(so.size()), os.end());
        swapped.insert(swapped.end(), os.begin(), os.begin() + static_cast<long>(so.size()));
        return ir::Atom::of(b.index(cols, index_at(swapped)));
      }));
    };
    auto backward = [&]() -> ir::Atom {
      auto row = [&](const std::vector<ir::VarId>& os) {
        std::vector<ir::Atom> xs = args;
        xs.push_back(one_hot(b, so, rt.elem, os));
        ir::Atom r = ir::Atom::of(b.call(vn, xs, at_type));
        if (at_type.elem == rt.elem) return r;
        // A row is in a's real type (f32 for widen(x: f32) -> f64); the jacobian is in the
        // result's, as the forward branch builds it.
        const Prim convert = rt.elem == Scalar::F32 ? Prim::ToF32 : Prim::ToF64;
        if (sa.empty()) return ir::Atom::of(b.prim(convert, {r}));
        return ir::Atom::of(gen_over(b, sa, "i", [&](const std::vector<ir::VarId>& is) {
          return ir::Atom::of(b.prim(convert, {ir::Atom::of(b.index(r, index_at(is)))}));
        }));
      };
      if (so.empty()) return row({});
      return ir::Atom::of(gen_over(b, so, "o", row));
    };
    ir::Atom n_in = ir::Atom::of(b.size(product(sa)));
    ir::Atom n_out = ir::Atom::of(b.size(product(so)));
    ir::Atom twice = ir::Atom::of(b.prim(Prim::Mul, {ir::Atom::i64(2), n_out}));
    ir::Atom cheaper = ir::Atom::of(b.prim(Prim::Le, {n_in, twice}));
    auto r = b.if_(
        cheaper, [&] { return std::vector<ir::Atom>{forward()}; },
        [&] { return std::vector<ir::Atom>{backward()}; });
    b.finish({ir::Atom::of(r[0])});
    if (g.result_type != jt) {
      throw std::logic_error("ad: jacobian of " + base_name + " has type " +
                             g.result_type.to_string());
    }
    return g;
  }

  // Transposition relies on linearity; a violation is a compiler bug, reported as such.
  void require_linear(const ir::Function& g, const ir::Block& block, const VarSet& tangent,
                      const std::string& what) {
    auto v = linearity_violations(program_, g, block, tangent);
    if (!v.empty()) throw std::logic_error(what + " is not linear in its tangents: " + v[0]);
  }

  ir::Program& program_;
  const DeriveOptions& options_;
  RuleBook rules_;
  std::set<std::string> in_progress_, visited_;
};

}  // namespace

std::string derived_function_name(const ir::Program& program, ast::DerivKind kind,
                                  const std::string& base, const std::vector<int>& wrt) {
  std::string s = std::string(ast::to_string(kind)) + "(" + base;
  const ir::Function* f = program.find(base);
  for (int w : wrt) {
    s += ", ";
    if (f != nullptr && static_cast<size_t>(w) < f->params.size()) {
      s += f->vars[static_cast<size_t>(f->params[static_cast<size_t>(w)])].name;
    } else {
      s += "#" + std::to_string(w);
    }
  }
  return s + ")";
}

std::map<std::string, DeriveError> build_each_derivative(
    ir::Program& program, const DeriveOptions& options,
    const std::optional<std::set<std::string>>& only) {
  std::vector<std::string> names;
  for (const auto& f : program.functions) {
    if (unbuilt(f) && (!only || only->count(f.name) != 0)) names.push_back(f.name);
  }
  std::map<std::string, DeriveError> failed;
  for (const auto& n : names) {
    // A fresh deriver per function: one that threw may have left its bookkeeping half done.
    // What it built before failing (a grad a hessian needs) is complete and stays.
    Deriver d(program, options);
    try {
      d.ensure_built(n);
    } catch (const NotDifferentiable& e) {
      failed.emplace(n, DeriveError{e.what(), false});
    } catch (const std::logic_error& e) {
      failed.emplace(n, DeriveError{e.what(), true});
    }
  }
  return failed;
}

std::optional<DeriveError> build_derivatives(ir::Program& program, const DeriveOptions& options) {
  auto failed = build_each_derivative(program, options);
  if (failed.empty()) return std::nullopt;
  return failed.begin()->second;
}

}  // namespace cot::ad
