#include "opt/alpha_equal.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cot::opt {
namespace {

using ir::Atom;
using ir::Block;
using ir::Stmt;
using ir::VarId;

// Variables bound inside the compared statements (index variables, loop states and counters,
// results of statements of their regions) get canonical names -1, -2, ... when they are
// matched, the same on both sides; free variables keep their ids (>= 0), so a free variable
// never matches a bound one. Bindings can be undone (a failed attempt at a commutative match).
class Canon {
 public:
  int32_t operator()(VarId v) const {
    auto it = map_.find(v);
    return it == map_.end() ? v : it->second;
  }
  bool has(VarId v) const { return map_.count(v) > 0; }
  void bind(VarId v, int32_t c) {
    map_[v] = c;
    log_.push_back(v);
  }
  size_t mark() const { return log_.size(); }
  void undo(size_t mark) {
    while (log_.size() > mark) {
      map_.erase(log_.back());
      log_.pop_back();
    }
  }

 private:
  std::unordered_map<VarId, int32_t> map_;
  std::vector<VarId> log_;
};

// Where a variable bound by a statement of a region is defined.
struct Def {
  const Stmt* stmt = nullptr;
  size_t index = 0;
};

// Regions compare as dataflow graphs: two blocks are equal when their results are, following
// each result to the statement that defines it, so the order of independent statements does
// not matter (`x[i] * y[i]` and `y[j] * x[j]` read their operands in different orders) and
// statements nothing reads are ignored.
class Comparer {
 public:
  explicit Comparer(const ir::Function& f) : f_(f) {}

  bool stmts(const Stmt& a, const Stmt& b) {
    if (a.op.index() != b.op.index() || a.results.size() != b.results.size()) return false;
    for (size_t k = 0; k < a.results.size(); ++k) {
      if (f_.type_of(a.results[k]) != f_.type_of(b.results[k])) return false;
    }
    return attempt([&] {
      return std::visit(
          [&](const auto& oa) {
            using T = std::decay_t<decltype(oa)>;
            return op(oa, std::get<T>(b.op));
          },
          a.op);
    });
  }

  bool blocks(const Block& a, const Block& b) {
    if (a.results.size() != b.results.size()) return false;
    define(a, defs_a_);
    define(b, defs_b_);
    return atoms(a.results, b.results);
  }

 private:
  template <class F>
  bool attempt(F&& f) {
    const size_t ma = ca_.mark(), mb = cb_.mark();
    if (f()) return true;
    ca_.undo(ma);
    cb_.undo(mb);
    return false;
  }
  static void define(const Block& b, std::unordered_map<VarId, Def>& defs) {
    for (const auto& s : b.stmts) {
      for (size_t k = 0; k < s.results.size(); ++k) defs[s.results[k]] = Def{&s, k};
    }
  }
  void bind(VarId a, VarId b) {
    const int32_t c = --next_;
    ca_.bind(a, c);
    cb_.bind(b, c);
  }
  bool bind_typed(VarId a, VarId b) {
    if (f_.type_of(a) != f_.type_of(b)) return false;
    bind(a, b);
    return true;
  }

  bool var(VarId a, VarId b) {
    if (ca_.has(a) || cb_.has(b)) return ca_(a) == cb_(b);
    auto da = defs_a_.find(a);
    auto db = defs_b_.find(b);
    const bool la = da != defs_a_.end(), lb = db != defs_b_.end();
    if (!la && !lb) return a == b;  // free in both
    if (!la || !lb || da->second.index != db->second.index) return false;
    const Stmt &sa = *da->second.stmt, &sb = *db->second.stmt;
    if (!stmts(sa, sb)) return false;
    for (size_t r = 0; r < sa.results.size(); ++r) bind(sa.results[r], sb.results[r]);
    return true;
  }
  bool atom(const Atom& a, const Atom& b) {
    if (a.is_var != b.is_var) return false;
    return a.is_var ? var(a.var, b.var) : a.lit == b.lit;
  }
  bool atoms(const std::vector<Atom>& a, const std::vector<Atom>& b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k) {
      if (!atom(a[k], b[k])) return false;
    }
    return true;
  }
  // Affine indices and predicates mention index variables, loop counters, size variables and
  // (computed) variables of the region; the latter are matched first.
  bool vars_of(const std::vector<int32_t>& va, const std::vector<int32_t>& vb) {
    if (va.size() != vb.size()) return false;
    for (size_t k = 0; k < va.size(); ++k) {
      if (!ca_.has(va[k]) && defs_a_.count(va[k]) > 0 && !cb_.has(vb[k]) &&
          defs_b_.count(vb[k]) > 0 && !var(va[k], vb[k])) {
        return false;
      }
    }
    return true;
  }
  bool affine(const Affine& a, const Affine& b) {
    if (a.terms().size() != b.terms().size() || a.constant_term() != b.constant_term()) {
      return false;
    }
    return a.rename(ca_) == b.rename(cb_);
  }
  bool pred(const Pred& a, const Pred& b) {
    std::vector<int32_t> va, vb;
    a.collect_vars(va);
    b.collect_vars(vb);
    // Atoms of predicates may be bool variables computed in the region: match them in order.
    std::vector<int32_t> la, lb;
    for (auto v : va) {
      if (defs_a_.count(v) > 0) la.push_back(v);
    }
    for (auto v : vb) {
      if (defs_b_.count(v) > 0) lb.push_back(v);
    }
    if (!vars_of(la, lb)) return false;
    return a.rename(ca_) == b.rename(cb_);
  }
  bool ivars(const std::vector<ir::IndexVar>& a, const std::vector<ir::IndexVar>& b) {
    if (a.size() != b.size()) return false;
    for (size_t k = 0; k < a.size(); ++k) {
      if (a[k].extent != b[k].extent || !bind_typed(a[k].var, b[k].var)) return false;
    }
    return true;
  }

  bool op(const ir::PrimOp& a, const ir::PrimOp& b) {
    if (a.prim != b.prim) return false;
    if (attempt([&] { return atoms(a.args, b.args); })) return true;
    return is_commutative(a.prim) && a.args.size() == 2 && b.args.size() == 2 &&
           atom(a.args[0], b.args[1]) && atom(a.args[1], b.args[0]);
  }
  bool op(const ir::IndexOp& a, const ir::IndexOp& b) {
    if (!atom(a.tensor, b.tensor) || a.indices.size() != b.indices.size()) return false;
    for (size_t k = 0; k < a.indices.size(); ++k) {
      const ir::IndexExpr &x = a.indices[k], &y = b.indices[k];
      if (x.is_affine != y.is_affine) return false;
      if (x.is_affine ? !affine_with_locals(x.affine, y.affine) : !atom(x.computed, y.computed)) {
        return false;
      }
    }
    return true;
  }
  bool affine_with_locals(const Affine& a, const Affine& b) {
    if (a.terms().size() != b.terms().size()) return false;
    std::vector<int32_t> la, lb;
    for (const auto& [v, c] : a.terms()) {
      if (defs_a_.count(v) > 0) la.push_back(v);
    }
    for (const auto& [v, c] : b.terms()) {
      if (defs_b_.count(v) > 0) lb.push_back(v);
    }
    return vars_of(la, lb) && affine(a, b);
  }
  bool op(const ir::GenOp& a, const ir::GenOp& b) {
    return ivars(a.ivars, b.ivars) && blocks(a.body, b.body);
  }
  bool op(const ir::ReduceOp& a, const ir::ReduceOp& b) {
    return a.kind == b.kind && ivars(a.ivars, b.ivars) && blocks(a.body, b.body);
  }
  bool op(const ir::GuardOp& a, const ir::GuardOp& b) {
    return pred(a.pred, b.pred) && blocks(a.body, b.body);
  }
  bool op(const ir::LoopOp& a, const ir::LoopOp& b) {
    if (a.saves_states || b.saves_states) return false;  // each binds its own dynamic size
    if (a.is_while != b.is_while || a.state.size() != b.state.size() || !atoms(a.init, b.init)) {
      return false;
    }
    if (!a.is_while && !atom(a.count, b.count)) return false;
    for (size_t k = 0; k < a.state.size(); ++k) {
      if (!bind_typed(a.state[k], b.state[k])) return false;
    }
    if (a.is_while) {
      if (!blocks(a.cond, b.cond)) return false;
    } else if (a.iter >= 0 && b.iter >= 0) {
      if (!bind_typed(a.iter, b.iter)) return false;
    } else if (a.iter != b.iter) {
      return false;
    }
    return blocks(a.body, b.body);
  }
  bool op(const ir::IfOp& a, const ir::IfOp& b) {
    return atom(a.cond, b.cond) && blocks(a.then_branch, b.then_branch) &&
           blocks(a.else_branch, b.else_branch);
  }
  bool op(const ir::AccumOp& a, const ir::AccumOp& b) {
    return a.shape == b.shape && ivars(a.ivars, b.ivars) && blocks(a.body, b.body);
  }
  bool op(const ir::TupleOp& a, const ir::TupleOp& b) { return atoms(a.elems, b.elems); }
  bool op(const ir::ProjOp& a, const ir::ProjOp& b) {
    return a.index == b.index && atom(a.tuple, b.tuple);
  }
  bool op(const ir::SizeOp& a, const ir::SizeOp& b) { return a.size == b.size; }
  bool op(const ir::CallOp& a, const ir::CallOp& b) {
    return a.callee == b.callee && atoms(a.args, b.args);
  }

  const ir::Function& f_;
  Canon ca_, cb_;
  std::unordered_map<VarId, Def> defs_a_, defs_b_;
  int32_t next_ = 0;
};

// --- hashing -----------------------------------------------------------------------------

inline size_t mix(size_t h, size_t v) {
  return h ^ (v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
}

class Hasher {
 public:
  Hasher(const ir::Function& f, const FreeHash* free) : f_(f), free_(free) {}

  size_t stmt(const Stmt& s) {
    size_t h = mix(s.op.index(), s.results.size());
    for (VarId r : s.results) h = mix(h, type(f_.type_of(r)));
    return std::visit([&](const auto& o) { return op(h, o); }, s.op);
  }
  // The hash of `v`, bound by a statement of `b` (b's variables defined at the root's depth).
  size_t result(const Block& b, VarId v) {
    block(0, b);
    return var(v);
  }

 private:
  // Bound variables hash by how many binders out their binder is (de Bruijn) and their
  // position, variables defined in a region by their definition (memoized), free variables by
  // id or by free_: all independent of statement order and of how deep the hashed statement
  // sits (value numbers hash a statement alone and again inside the statements around it).
  size_t var(VarId v) {
    if (auto it = bound_.find(v); it != bound_.end()) {
      return mix(11, mix(depth_ - it->second.first, it->second.second));
    }
    auto d = defs_.find(v);
    if (d == defs_.end()) return free_ != nullptr ? (*free_)(v) : free_var_hash(v);
    if (auto m = memo_.find(v); m != memo_.end()) return m->second;
    // Hash the definition at the depth of its block, wherever it is first read from.
    const size_t saved = depth_;
    depth_ = def_depth_.at(v);
    const size_t h = mix(stmt(*d->second.stmt), d->second.index);
    depth_ = saved;
    memo_[v] = h;
    return h;
  }
  void bind(VarId v, size_t position) { bound_.emplace(v, std::make_pair(depth_, position)); }
  size_t atom(const Atom& a) {
    if (a.is_var) return mix(1, var(a.var));
    size_t h = mix(2, static_cast<size_t>(a.lit.type));
    switch (a.lit.type) {
      case Scalar::F64:
      case Scalar::F32: {
        uint64_t bits = 0;
        std::memcpy(&bits, &a.lit.real, sizeof bits);
        return mix(h, bits);
      }
      case Scalar::I64:
        return mix(h, static_cast<size_t>(a.lit.integer));
      case Scalar::Bool:
        return mix(h, a.lit.boolean ? 1 : 0);
    }
    return h;
  }
  size_t atoms(size_t h, const std::vector<Atom>& as) {
    for (const auto& a : as) h = mix(h, atom(a));
    return h;
  }
  size_t size(const SizeExpr& e) const { return std::hash<std::string>()(e.to_string()); }
  size_t type(const Type& t) const {
    size_t h = mix(t.is_tuple ? 7 : 8, static_cast<size_t>(t.elem));
    for (const auto& d : t.shape) h = mix(h, size(d));
    for (const auto& e : t.elems) h = mix(h, type(e));
    return h;
  }
  size_t affine(const Affine& a) {
    // Renaming reorders terms: combine them commutatively.
    size_t sum = 0;
    for (const auto& [v, c] : a.terms()) sum += mix(var(v), static_cast<size_t>(c));
    return mix(mix(3, sum), static_cast<size_t>(a.constant_term()));
  }
  size_t pred(const Pred& p) {
    size_t h = mix(4, static_cast<size_t>(p.kind));
    switch (p.kind) {
      case Pred::Kind::Ge0:
      case Pred::Kind::Eq0:
        return mix(h, affine(p.expr));
      case Pred::Kind::Atom:
        return mix(mix(h, var(p.atom)), p.negated ? 1 : 0);
      case Pred::Kind::And:
      case Pred::Kind::Or:
        for (const auto& k : p.kids) h = mix(h, pred(k));
        return h;
      default:
        return h;
    }
  }
  size_t ivars(size_t h, const std::vector<ir::IndexVar>& ivs) {
    for (size_t k = 0; k < ivs.size(); ++k) {
      h = mix(h, size(ivs[k].extent));
      bind(ivs[k].var, k);
    }
    return h;
  }
  size_t block(size_t h, const Block& b) {
    for (const auto& s : b.stmts) {
      for (size_t k = 0; k < s.results.size(); ++k) {
        defs_[s.results[k]] = Def{&s, k};
        def_depth_[s.results[k]] = depth_;
      }
    }
    return atoms(mix(h, b.results.size()), b.results);
  }
  // Runs `f` one binder deeper.
  template <class F>
  size_t deeper(F&& f) {
    ++depth_;
    const size_t h = f();
    --depth_;
    return h;
  }

  size_t op(size_t h, const ir::PrimOp& o) {
    h = mix(h, static_cast<size_t>(o.prim));
    if (is_commutative(o.prim) && o.args.size() == 2) {
      size_t x = atom(o.args[0]), y = atom(o.args[1]);
      return mix(mix(h, std::min(x, y)), std::max(x, y));
    }
    return atoms(h, o.args);
  }
  size_t op(size_t h, const ir::IndexOp& o) {
    h = mix(h, atom(o.tensor));
    for (const auto& ix : o.indices) {
      h = mix(h, ix.is_affine ? affine(ix.affine) : atom(ix.computed));
    }
    return h;
  }
  size_t op(size_t h, const ir::GenOp& o) {
    return deeper([&] { return block(ivars(h, o.ivars), o.body); });
  }
  size_t op(size_t h, const ir::ReduceOp& o) {
    return deeper(
        [&] { return block(ivars(mix(h, static_cast<size_t>(o.kind)), o.ivars), o.body); });
  }
  size_t op(size_t h, const ir::GuardOp& o) { return block(mix(h, pred(o.pred)), o.body); }
  size_t op(size_t h, const ir::LoopOp& o) {
    h = mix(mix(atoms(h, o.init), o.is_while ? 1 : 0), o.saves_states ? 1 : 0);
    if (!o.is_while) h = mix(h, atom(o.count));
    return deeper([&] {
      size_t g = h;
      for (size_t k = 0; k < o.state.size(); ++k) bind(o.state[k], k);
      if (o.is_while) {
        g = block(g, o.cond);
      } else if (o.iter >= 0) {
        bind(o.iter, o.state.size());
      }
      return block(g, o.body);
    });
  }
  size_t op(size_t h, const ir::IfOp& o) {
    return block(block(mix(h, atom(o.cond)), o.then_branch), o.else_branch);
  }
  size_t op(size_t h, const ir::AccumOp& o) {
    for (const auto& d : o.shape) h = mix(h, size(d));
    return deeper([&] { return block(ivars(h, o.ivars), o.body); });
  }
  size_t op(size_t h, const ir::TupleOp& o) { return atoms(h, o.elems); }
  size_t op(size_t h, const ir::ProjOp& o) {
    return mix(mix(h, atom(o.tuple)), static_cast<size_t>(o.index));
  }
  size_t op(size_t h, const ir::SizeOp& o) { return mix(h, size(o.size)); }
  size_t op(size_t h, const ir::CallOp& o) {
    return atoms(mix(h, std::hash<std::string>()(o.callee)), o.args);
  }

  const ir::Function& f_;
  const FreeHash* free_;
  std::unordered_map<VarId, std::pair<size_t, size_t>> bound_;  // binder depth, position
  std::unordered_map<VarId, Def> defs_;
  std::unordered_map<VarId, size_t> memo_;
  std::unordered_map<VarId, size_t> def_depth_;
  size_t depth_ = 0;
};

}  // namespace

bool is_commutative(Prim p) {
  switch (p) {
    case Prim::Add:
    case Prim::Mul:
    case Prim::Max:
    case Prim::Min:
    case Prim::Eq:
    case Prim::Ne:
    case Prim::And:
    case Prim::Or:
      return true;
    default:
      return false;
  }
}

bool alpha_equal(const ir::Function& f, const ir::Stmt& a, const ir::Stmt& b) {
  return Comparer(f).stmts(a, b);
}

bool alpha_equal_blocks(const ir::Function& f, const ir::Block& a, const ir::Block& b) {
  return Comparer(f).blocks(a, b);
}

size_t free_var_hash(ir::VarId v) {
  return std::hash<int64_t>()(v);
}

size_t alpha_hash(const ir::Function& f, const ir::Stmt& s) {
  return Hasher(f, nullptr).stmt(s);
}

size_t alpha_hash(const ir::Function& f, const ir::Stmt& s, const FreeHash& free) {
  return Hasher(f, &free).stmt(s);
}

std::vector<size_t> value_numbers(const ir::Function& f) {
  std::vector<size_t> vn(f.vars.size());
  for (size_t v = 0; v < vn.size(); ++v) vn[v] = free_var_hash(static_cast<VarId>(v));
  const FreeHash free = [&](VarId v) {
    return v >= 0 && static_cast<size_t>(v) < vn.size() ? vn[static_cast<size_t>(v)]
                                                        : free_var_hash(v);
  };
  // In program order, so a statement's free operands are numbered before it; a statement's
  // number is the hash a Hasher gives it as the definition of its k-th result.
  std::function<void(const Block&)> number = [&](const Block& b) {
    for (const Stmt& s : b.stmts) {
      for_each_region(s, [&](const Block& r) { number(r); });
      const size_t h = Hasher(f, &free).stmt(s);
      for (size_t k = 0; k < s.results.size(); ++k) {
        vn[static_cast<size_t>(s.results[k])] = mix(h, k);
      }
    }
  };
  number(f.body);
  return vn;
}

size_t alpha_hash_of_result(const ir::Function& f, const ir::Block& b, ir::VarId v,
                            const FreeHash& free) {
  return Hasher(f, &free).result(b, v);
}

}  // namespace cot::opt
