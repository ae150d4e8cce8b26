// Lowering: blocks, the dispatch over Core IR statements, and scalar primitives.
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"
#include "ir/match.h"

namespace cot::codegen::lowering {

std::vector<Val> Lowerer::lower_block(const ir::Block& b, const std::vector<Val>* dests) {
  std::vector<ir::VarId> placed;
  if (dests != nullptr) {
    // Each result, and each component of a tuple the block builds (a function's value and
    // gradients), with its destination.
    std::vector<std::pair<ir::VarId, const Val*>> pairs;
    std::function<void(const ir::Atom&, const Val&)> pair = [&](const ir::Atom& a, const Val& d) {
      if (!a.is_var) return;
      if (d.kind == Val::Kind::Tuple) {
        for (const ir::Stmt& st : b.stmts) {
          const auto* t = st.as<ir::TupleOp>();
          if (t == nullptr || st.results[0] != a.var || t->elems.size() != d.elems.size()) {
            continue;
          }
          for (size_t k = 0; k < d.elems.size(); ++k) pair(t->elems[k], d.elems[k]);
        }
        return;
      }
      pairs.emplace_back(a.var, &d);
    };
    for (size_t k = 0; k < b.results.size(); ++k) pair(b.results[k], (*dests)[k]);
    std::map<ir::VarId, int> uses;
    for (const auto& [v, d] : pairs) ++uses[v];
    for (const auto& [v, d] : pairs) {
      if (!d->is_tensor() || uses[v] != 1 || !defined_in(b, v)) continue;
      if (needs_marks(v) && d->mask_pointer < 0) continue;  // its marks need a buffer
      env_.pending_dest[v] = *d;
      placed.push_back(v);
    }
  }
  for (const ir::Stmt& s : b.stmts) lower_stmt(s);
  for (ir::VarId v : placed) env_.pending_dest.erase(v);
  std::vector<Val> results;
  for (size_t k = 0; k < b.results.size(); ++k) {
    Val r = atom_val(b.results[k]);
    if (dests != nullptr) {
      const Val& d = (*dests)[k];
      assign(d, r);
      results.push_back(d);
    } else {
      results.push_back(std::move(r));
    }
  }
  return results;
}

bool Lowerer::defined_in(const ir::Block& b, ir::VarId v) {
  for (const ir::Stmt& s : b.stmts) {
    if (std::find(s.results.begin(), s.results.end(), v) == s.results.end()) continue;
    return s.as<ir::GenOp>() || s.as<ir::ReduceOp>() || s.as<ir::AccumOp>() ||
           s.as<ir::GuardOp>() || s.as<ir::IfOp>();
  }
  return false;
}

void Lowerer::lower_stmt(const ir::Stmt& s) {
  ir::match(
      s.op, [&](const ir::PrimOp& op) { lower_prim(s, op); },
      [&](const ir::IndexOp& op) { lower_index(s, op); },
      [&](const ir::GenOp& op) { lower_gen(s, op); },
      [&](const ir::ReduceOp& op) { lower_reduce(s, op); },
      [&](const ir::GuardOp& op) { lower_guard(s, op); },
      [&](const ir::LoopOp& op) { lower_loop(s, op); },
      [&](const ir::IfOp& op) { lower_if(s, op); },
      [&](const ir::AccumOp& op) { lower_accum(s, op); },
      [&](const ir::TupleOp& op) {
        Val x;
        x.kind = Val::Kind::Tuple;
        for (const ir::Atom& a : op.elems) x.elems.push_back(atom_val(a));
        bind(s.results[0], std::move(x));
      },
      [&](const ir::ProjOp& op) {
        Val t = atom_val(op.tuple);
        if (t.kind != Val::Kind::Tuple || op.index < 0 ||
            static_cast<size_t>(op.index) >= t.elems.size()) {
          throw Unsupported{"a projection of a value that is not a tuple"};
        }
        Val x = t.elems[static_cast<size_t>(op.index)];
        // A component of a strong zero is one; else it keeps its own mask.
        if (t.mask && x.mask) {
          x.mask =
              declare(select(mask_is(t.mask, 0), x.mask, t.mask), c_hint(s.results[0]) + "_mask");
        } else if (t.mask) {
          x.mask = t.mask;
        }
        bind(s.results[0], std::move(x));
      },
      [&](const ir::SizeOp& op) {
        bind(s.results[0], scalar_val(size(op.size, s.span), Scalar::I64));
      },
      [&](const ir::CallOp& op) {
        throw Unsupported{"a call of " + op.callee + " remains after inlining"};
      });
  // A dynamic size variable takes the value of the statement that binds it (a saving loop's
  // trip count, or an i64 the optimizer named as a size).
  for (ir::VarId r : s.results) {
    for (const ir::SizeVar& sv : f_.size_vars) {
      if (sv.param == -1 && sv.var == r) ints_.sizes[sv.name] = val(r).scalar;
    }
  }
}

void Lowerer::lower_prim(const ir::Stmt& s, const ir::PrimOp& op) {
  std::vector<ExprP> args;
  std::vector<ExprP> masks;
  for (const ir::Atom& a : op.args) {
    Val x = atom_val(a);
    args.push_back(x.scalar);
    masks.push_back(x.mask);
  }
  const Scalar rt = f_.type_of(s.results[0]).elem;
  const std::string hint = c_hint(s.results[0]);
  if (rt == Scalar::I64 && is_checked_int(op.prim, args)) {
    bind(s.results[0], scalar_val(checked_int(s, op.prim, args), Scalar::I64));
    return;
  }
  ExprP e = prim(op.prim, args);
  if (rt == Scalar::I64 && !as_i64(e)) {
    // Fold i64 arithmetic on literals as the interpreter computes it.
    bool all_lit = true;
    for (const ExprP& a : args) all_lit = all_lit && as_i64(a).has_value();
    if (all_lit) {
      std::vector<int64_t> xs;
      xs.reserve(args.size());
      for (const ExprP& a : args) xs.push_back(*as_i64(a));
      if (auto r = eval_prim_i64(op.prim, xs, nullptr)) e = lit_i64(*r);
    }
  }
  // Strong zeros (interp/eval_prim.cpp): products, quotients and negations of one are one;
  // sums and differences of strong zeros and literal zeros are one.
  ExprP mask;
  if (is_real(rt)) {
    auto strong = [&](size_t k) { return mask_is(masks[k], kStrongZero); };
    auto zero_or_strong = [&](size_t k) {
      const ir::Atom& a = op.args[k];
      bool lit_zero = !a.is_var && is_real(a.lit.type) && a.lit.real == 0.0;
      return lit_zero ? lit_bool(true) : strong(k);
    };
    ExprP is_strong = lit_bool(false);
    if (op.prim == Prim::Mul) {
      is_strong = or_(strong(0), strong(1));
    } else if (op.prim == Prim::Div || op.prim == Prim::Neg) {
      is_strong = strong(0);
    } else if (op.prim == Prim::Add || op.prim == Prim::Sub) {
      is_strong = and_(or_(strong(0), strong(1)), and_(zero_or_strong(0), zero_or_strong(1)));
    }
    if (auto b = as_bool(is_strong); !b || *b) {
      ExprP flag = declare(is_strong, hint + "_strong");
      e = select(flag, lit_real(0, rt), e);
      mask = select(flag, lit_i64(kStrongZero), lit_i64(0));
    }
  }
  ExprP v = declare(e, hint);
  bind(s.results[0], scalar_val(v, rt, mask ? declare_mask(mask, hint + "_mask") : nullptr));
}

bool Lowerer::is_checked_int(Prim p, const std::vector<ExprP>& args) {
  switch (p) {
    case Prim::Add:
    case Prim::Sub:
    case Prim::Mul:
    case Prim::Neg:
    case Prim::Abs:
    case Prim::FloorDiv:
    case Prim::Mod:
    case Prim::ExactDiv:
      return true;
    case Prim::ToI64:
      return is_real(args[0]->type);
    default:
      return false;
  }
}

ExprP Lowerer::checked_int(const ir::Stmt& s, Prim p, const std::vector<ExprP>& args) {
  // Literal operands: evaluate now, as the interpreter would, failing at run time if it does.
  bool all_lit = true;
  for (const ExprP& a : args) {
    all_lit = all_lit && a->kind == Expr::Kind::Lit && a->type == Scalar::I64;
  }
  Site site_info;
  site_info.kind = p == Prim::ToI64 ? Site::Kind::RealToI64 : Site::Kind::IntPrim;
  site_info.span = s.span;
  site_info.prim = p;
  if (all_lit) {
    std::vector<int64_t> xs;
    xs.reserve(args.size());
    for (const ExprP& a : args) xs.push_back(a->lit.integer);
    if (auto r = eval_prim_i64(p, xs, nullptr)) return lit_i64(*r);
    fail(site(site_info), args);
    return lit_i64(0);
  }
  // Proven by ranges: no check.
  if (p == Prim::Add || p == Prim::Sub || p == Prim::Mul) {
    ExprP e = prim(p, args);
    if (range(e)) return declare(e, "i");
  }
  LocalId l = out_.new_local("i", Scalar::I64);
  emit(CheckedInt{l, p, args, site(site_info)});
  return local(out_, l);
}

}  // namespace cot::codegen::lowering
