#include "ir/clone.h"

#include <cstdint>
#include <limits>
#include <stdexcept>
#include <utility>

#include "ir/builder.h"

namespace cot::ir {
namespace {

[[noreturn]] void clone_bug(const std::string& what) {
  throw std::logic_error("clone_block: " + what);
}

std::optional<int64_t> mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) return std::nullopt;
  return r;
}

class Cloner {
 public:
  Cloner(const ir::Function& from, ir::Function& to, CloneMap& map, const CallHook* hook)
      : from_(from), to_(to), map_(map), hook_(hook), same_(&from == &to) {}

  Block block(const Block& src) {
    Block out;
    for (const auto& s : src.stmts) stmt(s, out);
    for (const auto& a : src.results) out.results.push_back(atom(a));
    return out;
  }

 private:
  // --- variables --------------------------------------------------------------------------

  bool valid(VarId v) const { return v >= 0 && static_cast<size_t>(v) < from_.vars.size(); }
  std::string describe(VarId v) const {
    std::string id = "%" + std::to_string(v);
    if (!valid(v) || from_.vars[static_cast<size_t>(v)].name.empty()) return id;
    return from_.vars[static_cast<size_t>(v)].name + " (" + id + ")";
  }

  Type type(const Type& t) const { return map_.sizes.empty() ? t : t.substitute(map_.sizes); }
  SizeExpr size(const SizeExpr& s) const {
    return map_.sizes.empty() ? s : s.substitute(map_.sizes);
  }

  void bind(VarId v, const Atom& a) {
    map_.atoms[v] = a;
    map_.affine.erase(v);
  }
  // A fresh copy in `to` of a variable the block binds.
  VarId fresh(VarId v) {
    if (!valid(v))
      clone_bug("the block binds variable id " + std::to_string(v) + ", not in " + from_.name);
    // A variable that holds a dynamic size (a saving loop's count, or the count of a linear
    // loop bound by other code) gets a fresh dynamic size variable too.
    for (const auto& sv : from_.size_vars) {
      if (sv.param == -1 && sv.var == v) return fresh_dynamic_size(v, sv.name);
    }
    // Copied before the variable table of `to` (possibly the same table) grows.
    std::string name = from_.vars[static_cast<size_t>(v)].name;
    Type t = type(from_.vars[static_cast<size_t>(v)].type);
    VarId c = to_.new_var(std::move(name), std::move(t));
    bind(v, Atom::of(c));
    return c;
  }
  std::vector<VarId> fresh(const std::vector<VarId>& vs) {
    std::vector<VarId> out;
    for (VarId v : vs) out.push_back(fresh(v));
    return out;
  }

  Atom lookup(VarId v) const {
    if (auto it = map_.atoms.find(v); it != map_.atoms.end()) return it->second;
    if (same_) return Atom::of(v);
    clone_bug("the free variable " + describe(v) + " of " + from_.name +
              " is not mapped (copying into " + to_.name + ")");
  }
  Atom atom(const Atom& a) const { return a.is_var ? lookup(a.var) : a; }
  std::vector<Atom> atoms(const std::vector<Atom>& as) const {
    std::vector<Atom> out;
    for (const auto& a : as) out.push_back(atom(a));
    return out;
  }

  // --- affine index expressions and predicates --------------------------------------------

  // The integer value of an atom that an affine variable maps to.
  static int64_t int_literal(const Atom& a) {
    if (a.lit.type != Scalar::I64) {
      clone_bug(std::string("an affine variable is mapped to a literal of type ") +
                to_string(a.lit.type));
    }
    return a.lit.integer;
  }

  // `a` over destination variables: map.affine substituted, variables renamed, literals folded
  // into the constant. nullopt when the arithmetic overflows.
  std::optional<Affine> try_affine(const Affine& a) const {
    Affine acc = Affine::constant(a.constant_term());
    for (const auto& [v, c] : a.terms()) {
      std::optional<Affine> term;
      if (auto it = map_.affine.find(v); it != map_.affine.end()) {
        term = Affine::scale(it->second, c);
      } else if (Atom x = lookup(v); x.is_var) {
        term = Affine::var(x.var, c);
      } else if (auto k = mul(c, int_literal(x))) {
        term = Affine::constant(*k);
      }
      if (!term) return std::nullopt;
      auto sum = Affine::add(acc, *term);
      if (!sum) return std::nullopt;
      acc = *sum;
    }
    return acc;
  }

  VarId emit_prim(Prim p, std::vector<Atom> args, Scalar result, Block& out, Span span) {
    VarId r = to_.new_var("", Type::scalar(result));
    out.stmts.push_back(Stmt{{r}, ir::PrimOp{p, std::move(args)}, span});
    return r;
  }
  Atom emit_i64(Prim p, Atom a, Atom b, Block& out, Span span) {
    return Atom::of(emit_prim(p, {a, b}, Scalar::I64, out, span));
  }

  // Emits sum c * atom + constant as i64 statements (checked arithmetic at run time).
  Atom emit_linear(const std::vector<std::pair<Atom, int64_t>>& terms, int64_t constant, Block& out,
                   Span span) {
    constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
    std::optional<Atom> acc;
    for (const auto& [x, c] : terms) {
      if (c == 0) continue;
      if (!acc) {
        acc = c == 1 ? x : emit_i64(Prim::Mul, Atom::i64(c), x, out, span);
      } else if (c == 1 || c == -1) {
        acc = emit_i64(c == 1 ? Prim::Add : Prim::Sub, *acc, x, out, span);
      } else if (c > 0 || c == kMin) {
        acc = emit_i64(Prim::Add, *acc, emit_i64(Prim::Mul, Atom::i64(c), x, out, span), out, span);
      } else {
        acc =
            emit_i64(Prim::Sub, *acc, emit_i64(Prim::Mul, Atom::i64(-c), x, out, span), out, span);
      }
    }
    if (!acc) return Atom::i64(constant);
    if (constant > 0 || constant == kMin)
      return emit_i64(Prim::Add, *acc, Atom::i64(constant), out, span);
    if (constant < 0) return emit_i64(Prim::Sub, *acc, Atom::i64(-constant), out, span);
    return *acc;
  }

  // The value of `a` (over source variables) as an i64 atom computed by emitted statements.
  Atom compute_affine(const Affine& a, Block& out, Span span) {
    std::vector<std::pair<Atom, int64_t>> terms;
    for (const auto& [v, c] : a.terms()) {
      Atom x;
      if (auto it = map_.affine.find(v); it != map_.affine.end()) {
        std::vector<std::pair<Atom, int64_t>> inner;
        for (const auto& [w, d] : it->second.terms()) inner.emplace_back(Atom::of(w), d);
        x = emit_linear(inner, it->second.constant_term(), out, span);
      } else {
        x = lookup(v);
        if (!x.is_var) int_literal(x);  // checks the literal's type
      }
      terms.emplace_back(x, c);
    }
    return emit_linear(terms, a.constant_term(), out, span);
  }

  IndexExpr index(const IndexExpr& e, Block& out, Span span) {
    if (!e.is_affine) return ir::computed_index(atom(e.computed));
    if (auto a = try_affine(e.affine)) return ir::affine_index(std::move(*a));
    return ir::computed_index(compute_affine(e.affine, out, span));
  }

  Pred pred(const Pred& p, Block& out, Span span) {
    switch (p.kind) {
      case Pred::Kind::True:
      case Pred::Kind::False:
        return p;
      case Pred::Kind::Ge0:
      case Pred::Kind::Eq0: {
        const bool ge = p.kind == Pred::Kind::Ge0;
        if (auto a = try_affine(p.expr)) return ge ? Pred::ge0(std::move(*a)) : Pred::eq0(*a);
        Atom e = compute_affine(p.expr, out, span);
        return Pred::atom_of(
            emit_prim(ge ? Prim::Ge : Prim::Eq, {e, Atom::i64(0)}, Scalar::Bool, out, span));
      }
      case Pred::Kind::Atom: {
        Atom x = lookup(p.atom);
        if (x.is_var) return Pred::atom_of(x.var, p.negated);
        if (x.lit.type != Scalar::Bool)
          clone_bug("a predicate atom is mapped to a non-bool literal");
        return x.lit.boolean != p.negated ? Pred::truth() : Pred::falsity();
      }
      case Pred::Kind::And:
      case Pred::Kind::Or: {
        std::vector<Pred> kids;
        for (const auto& k : p.kids) kids.push_back(pred(k, out, span));
        return p.kind == Pred::Kind::And ? Pred::conj(std::move(kids))
                                         : Pred::disj(std::move(kids));
      }
    }
    return p;
  }

  std::vector<IndexVar> ivars(const std::vector<IndexVar>& ivs) {
    std::vector<IndexVar> out;
    for (const auto& iv : ivs) {
      SizeExpr extent = size(iv.extent);
      out.push_back(IndexVar{fresh(iv.var), std::move(extent)});
    }
    return out;
  }

  // --- statements -------------------------------------------------------------------------

  void stmt(const Stmt& s, Block& out) {
    std::visit([&](const auto& op) { copy(s, op, out); }, s.op);
  }

  // Appends the copied operation with fresh copies of the statement's results.
  void push(const Stmt& s, ir::Op op, Block& out) {
    std::vector<VarId> results = fresh(s.results);
    out.stmts.push_back(Stmt{std::move(results), std::move(op), s.span});
  }

  void copy(const Stmt& s, const ir::PrimOp& p, Block& out) {
    push(s, ir::PrimOp{p.prim, atoms(p.args)}, out);
  }
  void copy(const Stmt& s, const ir::IndexOp& x, Block& out) {
    ir::IndexOp op;
    op.tensor = atom(x.tensor);
    for (const auto& e : x.indices) op.indices.push_back(index(e, out, s.span));
    push(s, std::move(op), out);
  }
  void copy(const Stmt& s, const ir::GenOp& g, Block& out) {
    ir::GenOp op;
    op.ivars = ivars(g.ivars);
    op.body = block(g.body);
    push(s, std::move(op), out);
  }
  void copy(const Stmt& s, const ir::ReduceOp& r, Block& out) {
    ir::ReduceOp op;
    op.kind = r.kind;
    op.ivars = ivars(r.ivars);
    op.body = block(r.body);
    push(s, std::move(op), out);
  }
  void copy(const Stmt& s, const ir::GuardOp& g, Block& out) {
    ir::GuardOp op;
    op.pred = pred(g.pred, out, s.span);
    op.body = block(g.body);
    push(s, std::move(op), out);
  }
  void copy(const Stmt& s, const ir::IfOp& i, Block& out) {
    ir::IfOp op;
    op.cond = atom(i.cond);
    op.then_branch = block(i.then_branch);
    op.else_branch = block(i.else_branch);
    push(s, std::move(op), out);
  }
  void copy(const Stmt& s, const ir::AccumOp& a, Block& out) {
    ir::AccumOp op;
    for (const auto& d : a.shape) op.shape.push_back(size(d));
    op.ivars = ivars(a.ivars);
    op.body = block(a.body);
    push(s, std::move(op), out);
  }
  void copy(const Stmt& s, const ir::TupleOp& t, Block& out) {
    push(s, ir::TupleOp{atoms(t.elems)}, out);
  }
  void copy(const Stmt& s, const ir::ProjOp& p, Block& out) {
    push(s, ir::ProjOp{atom(p.tuple), p.index}, out);
  }
  void copy(const Stmt& s, const ir::SizeOp& z, Block& out) {
    push(s, ir::SizeOp{size(z.size)}, out);
  }
  void copy(const Stmt& s, const ir::CallOp& c, Block& out) {
    std::vector<Atom> args = atoms(c.args);
    if (hook_ != nullptr && *hook_) {
      if (auto results = (*hook_)(s, args, out)) {
        if (results->size() != s.results.size()) {
          clone_bug("the call of " + c.callee + " was replaced by " +
                    std::to_string(results->size()) + " values for " +
                    std::to_string(s.results.size()) + " results");
        }
        for (size_t k = 0; k < results->size(); ++k) bind(s.results[k], (*results)[k]);
        return;
      }
    }
    push(s, ir::CallOp{c.callee, std::move(args)}, out);
  }

  void copy(const Stmt& s, const ir::LoopOp& l, Block& out) {
    ir::LoopOp op;
    op.init = atoms(l.init);
    op.is_while = l.is_while;
    op.saves_states = l.saves_states;
    op.count = l.is_while ? l.count : atom(l.count);
    op.state = fresh(l.state);
    op.iter = l.iter >= 0 ? fresh(l.iter) : -1;
    if (l.is_while) op.cond = block(l.cond);
    op.body = block(l.body);
    const size_t n = l.state.size();
    if (!l.saves_states || s.results.size() != 2 * n + 1) {
      push(s, std::move(op), out);
      return;
    }
    // A saving loop: final state, T (a dynamic size variable of its own), the stacks, whose
    // types name the fresh T.
    std::vector<VarId> results;
    for (size_t k = 0; k < n; ++k) results.push_back(fresh(s.results[k]));
    results.push_back(fresh(s.results[n]));
    for (size_t k = n + 1; k < s.results.size(); ++k) results.push_back(fresh(s.results[k]));
    out.stmts.push_back(Stmt{std::move(results), std::move(op), s.span});
  }

  // The copy of variable t of `from`, the value of its dynamic size variable `old`, registered
  // as a fresh dynamic size variable of `to` that the copied types name.
  VarId fresh_dynamic_size(VarId t, const std::string& old) {
    std::string name = ir::fresh_size_name(to_, old);
    VarId c = to_.new_var(name, Type::scalar(Scalar::I64));
    bind(t, Atom::of(c));
    map_.sizes[old] = SizeExpr::var(name);
    to_.size_vars.push_back(ir::SizeVar{name, c, -1, {}, 0});
    return c;
  }

  const ir::Function& from_;
  ir::Function& to_;
  CloneMap& map_;
  const CallHook* hook_;
  const bool same_;
};

}  // namespace

ir::Block clone_block(const ir::Function& from, const ir::Block& src, ir::Function& to,
                      CloneMap& map) {
  return Cloner(from, to, map, nullptr).block(src);
}

ir::Block clone_block(const ir::Function& from, const ir::Block& src, ir::Function& to,
                      CloneMap& map, const CallHook& on_call) {
  return Cloner(from, to, map, &on_call).block(src);
}

}  // namespace cot::ir
