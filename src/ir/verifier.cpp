#include "ir/verifier.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "ir/printer.h"

namespace cot::ir {
namespace {

// Same tuple structure, ranks and element types: what must match exactly at a call.
bool same_structure(const Type& a, const Type& b) {
  if (a.is_tuple != b.is_tuple) return false;
  if (!a.is_tuple) return a.elem == b.elem && a.rank() == b.rank();
  if (a.elems.size() != b.elems.size()) return false;
  for (size_t i = 0; i < a.elems.size(); ++i) {
    if (!same_structure(a.elems[i], b.elems[i])) return false;
  }
  return true;
}

// The dimension of `t` at a size variable's binding site, if the site exists.
std::optional<SizeExpr> dim_at(const Type& t, const std::vector<int>& path, int dim) {
  const Type* cur = &t;
  for (int i : path) {
    if (!cur->is_tuple || i < 0 || static_cast<size_t>(i) >= cur->elems.size()) return {};
    cur = &cur->elems[static_cast<size_t>(i)];
  }
  if (cur->is_tuple || dim < 0 || static_cast<size_t>(dim) >= cur->shape.size()) return {};
  return cur->shape[static_cast<size_t>(dim)];
}

void collect_sizes(const Type& t, std::vector<std::string>& out) {
  for (const auto& e : t.elems) collect_sizes(e, out);
  for (const auto& d : t.shape) {
    for (auto& v : d.vars()) out.push_back(std::move(v));
  }
}

class FunctionVerifier {
 public:
  FunctionVerifier(const Program& program, const Function& f)
      : program_(program), f_(f), bound_(f.vars.size(), false), visible_(f.vars.size(), false) {}

  std::vector<VerifyError> run() {
    for (const auto& sv : f_.size_vars) {
      size_names_.insert(sv.name);
      if (sv.param == -1 && valid(sv.var)) dynamic_[sv.name] = sv.var;
    }
    for (VarId p : f_.params) bind(p, "parameter");
    check_size_vars();
    // The result type may name the dynamic sizes of the body's top-level saving loops (such a
    // function can be evaluated but not called): their scope is checked at the end of the body.
    defer_dynamic_ = true;
    check_type_sizes(f_.result_type, {"the result type"});
    defer_dynamic_ = false;
    check_derivation();
    bool unbuilt = f_.derivation && f_.body.stmts.empty() && f_.body.results.empty();
    if (unbuilt) check_result_dynamic_sizes();
    if (!unbuilt) {
      check_stmts(f_.body);
      use_all(f_.body.results);
      check_result_dynamic_sizes();
      check_dynamic_sizes_bound();
      if (f_.body.results.size() != 1) {
        error("the body yields " + std::to_string(f_.body.results.size()) +
              " values; a function yields one");
      } else if (auto t = type_of(f_.body.results[0]); t && *t != f_.result_type) {
        error("the body yields " + t->to_string() + " but the function returns " +
              f_.result_type.to_string());
      }
    }
    return std::move(errors_);
  }

 private:
  // --- messages -------------------------------------------------------------------------

  // The names are those the printer gives, computed at the first message: naming walks the whole
  // function, and a verifier that finds nothing (every run after a pass) prints nothing.
  std::string name(VarId v) const {
    if (names_.empty()) names_ = printed_names(program_, f_);
    if (valid(v) && !names_[static_cast<size_t>(v)].empty()) return names_[static_cast<size_t>(v)];
    return "%" + std::to_string(v);
  }
  std::string atom_text(const Atom& a) const { return a.is_var ? name(a.var) : "literal"; }
  void error(std::string message) {
    if (stmt_ != nullptr) {
      message += "\n  in:";
      std::string text = print_stmt(program_, f_, *stmt_);
      size_t start = 0;
      while (start <= text.size()) {
        size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        message += "\n    " + text.substr(start, end - start);
        start = end + 1;
      }
    }
    errors_.push_back(VerifyError{f_.name, std::move(message)});
  }

  // --- variables and scopes -------------------------------------------------------------

  bool valid(VarId v) const { return v >= 0 && static_cast<size_t>(v) < f_.vars.size(); }

  void bind(VarId v, const char* what) {
    if (!valid(v)) {
      error(std::string(what) + " variable id " + std::to_string(v) + " is not in the function");
      return;
    }
    size_t i = static_cast<size_t>(v);
    if (bound_[i]) {
      error(std::string(what) + " " + name(v) + " is bound twice");
      return;
    }
    bound_[i] = visible_[i] = true;
    scope_.push_back(v);
    check_type_sizes(f_.type_of(v), {"the type of ", v});
  }
  // Variables bound from here on are local to a region; close_scope ends them.
  size_t open_scope() const { return scope_.size(); }
  void close_scope(size_t mark) {
    for (; scope_.size() > mark; scope_.pop_back()) {
      visible_[static_cast<size_t>(scope_.back())] = false;
    }
  }

  bool use(VarId v) {
    if (!valid(v)) {
      error("use of variable id " + std::to_string(v) + ", which is not in the function");
      return false;
    }
    if (!visible_[static_cast<size_t>(v)]) {
      error(name(v) + (bound_[static_cast<size_t>(v)] ? " is used out of its scope"
                                                      : " is used before it is bound"));
      return false;
    }
    return true;
  }
  // Checks a use and returns the atom's type (nullopt when the variable does not exist).
  std::optional<Type> use(const Atom& a) {
    if (!a.is_var) return Type::scalar(a.lit.type);
    if (!use(a.var)) return valid(a.var) ? std::optional<Type>(f_.type_of(a.var)) : std::nullopt;
    return f_.type_of(a.var);
  }
  void use_all(const std::vector<Atom>& as) {
    for (const auto& a : as) use(a);
  }
  std::optional<Type> type_of(const Atom& a) const {
    if (!a.is_var) return Type::scalar(a.lit.type);
    if (!valid(a.var)) return std::nullopt;
    return f_.type_of(a.var);
  }
  std::optional<Type> type_of(VarId v) const {
    return valid(v) ? std::optional<Type>(f_.type_of(v)) : std::nullopt;
  }

  // --- sizes, index expressions, predicates ------------------------------------------------

  // What a size belongs to, for messages: `prefix`, then the name of `var` when there is one
  // (named only when a message is written: naming walks the whole function).
  struct Owner {
    const char* prefix;
    VarId var = -1;
  };
  std::string text(const Owner& o) const {
    return o.var == -1 ? std::string(o.prefix) : o.prefix + name(o.var);
  }

  void check_size(const SizeExpr& s, const Owner& owner) {
    if (s.poisoned()) error(text(owner) + " overflowed: " + s.to_string());
    if (s.is_constant()) return;
    for (const auto& v : s.vars()) {
      if (!size_names_.count(v)) {
        error(text(owner) + " mentions " + v + ", not a size variable of " + f_.name);
        continue;
      }
      // A dynamic size has a value only where the saving loop that binds it dominates: after
      // it in its block and in the regions nested there.
      auto d = dynamic_.find(v);
      if (d != dynamic_.end() && !defer_dynamic_ && !visible_[static_cast<size_t>(d->second)]) {
        error(text(owner) + " mentions the dynamic size " + v + " where it is not defined (" +
              (bound_[static_cast<size_t>(d->second)] ? "out of the scope of" : "before") +
              " the saving loop that binds it)");
      }
    }
  }
  void check_type_sizes(const Type& t, const Owner& owner) {
    for (const auto& e : t.elems) check_type_sizes(e, owner);
    for (const auto& d : t.shape) check_size(d, owner);
  }
  void check_int_var(VarId v, const char* what) {
    if (!use(v)) return;
    if (f_.type_of(v) != Type::scalar(Scalar::I64)) {
      error(std::string(what) + " uses " + name(v) + " of type " + f_.type_of(v).to_string() +
            "; it must be i64");
    }
  }
  void check_affine(const Affine& a) {
    for (const auto& [v, c] : a.terms()) check_int_var(v, "an affine index expression");
  }
  void check_pred(const Pred& p) {
    switch (p.kind) {
      case Pred::Kind::True:
      case Pred::Kind::False:
        return;
      case Pred::Kind::Ge0:
      case Pred::Kind::Eq0:
        for (const auto& [v, c] : p.expr.terms()) check_int_var(v, "a predicate");
        return;
      case Pred::Kind::Atom:
        if (use(p.atom) && f_.type_of(p.atom) != Type::scalar(Scalar::Bool)) {
          error("the predicate atom " + name(p.atom) + " has type " +
                f_.type_of(p.atom).to_string() + "; it must be bool");
        }
        return;
      case Pred::Kind::And:
      case Pred::Kind::Or:
        for (const auto& k : p.kids) check_pred(k);
        return;
    }
  }
  void expect_scalar(const Atom& a, Scalar s, const std::string& what) {
    auto t = use(a);
    if (t && *t != Type::scalar(s)) {
      error(what + " " + atom_text(a) + " has type " + t->to_string() + "; it must be " +
            to_string(s));
    }
  }

  // --- function level -------------------------------------------------------------------

  void check_size_vars() {
    std::set<std::string> seen;
    std::set<VarId> dynamic_vars;
    for (const auto& sv : f_.size_vars) {
      if (!seen.insert(sv.name).second) error("size variable " + sv.name + " is declared twice");
      if (sv.param == -1) {
        // A dynamic size: its variable is bound by a saving loop in the body, not at entry.
        if (!valid(sv.var)) {
          error("dynamic size variable " + sv.name + " names variable id " +
                std::to_string(sv.var) + ", which is not in the function");
        } else if (!dynamic_vars.insert(sv.var).second) {
          error("dynamic size variable " + sv.name + " shares its variable " + name(sv.var) +
                " with another size variable");
        } else if (f_.type_of(sv.var) != Type::scalar(Scalar::I64)) {
          error("size variable " + sv.name + " has type " + f_.type_of(sv.var).to_string() +
                "; it must be i64");
        }
        continue;
      }
      bind(sv.var, "size variable");
      if (valid(sv.var) && f_.type_of(sv.var) != Type::scalar(Scalar::I64)) {
        error("size variable " + sv.name + " has type " + f_.type_of(sv.var).to_string() +
              "; it must be i64");
      }
      if (sv.param < 0 || static_cast<size_t>(sv.param) >= f_.params.size() ||
          !valid(f_.params[static_cast<size_t>(sv.param)])) {
        error("size variable " + sv.name + " is bound by parameter " + std::to_string(sv.param) +
              ", which does not exist");
        continue;
      }
      auto d = dim_at(f_.param_type(static_cast<size_t>(sv.param)), sv.path, sv.dim);
      if (!d || d->as_var() != sv.name) {
        error("size variable " + sv.name + " is bound at a dimension of " +
              name(f_.params[static_cast<size_t>(sv.param)]) + " that is not " + sv.name);
      }
    }
  }

  void check_derivation() {
    if (!f_.derivation) return;
    const Function* base = program_.find(f_.derivation->base);
    if (base == nullptr) {
      error("derived from " + f_.derivation->base + ", which is not in the program");
      return;
    }
    for (int w : f_.derivation->wrt) {
      if (w < 0 || (!base->params.empty() && static_cast<size_t>(w) >= base->params.size())) {
        error("differentiates with respect to parameter " + std::to_string(w) + " of " +
              base->name + ", which does not exist");
      }
    }
  }

  // --- blocks and statements --------------------------------------------------------------

  void check_stmts(const Block& b) {
    for (const auto& s : b.stmts) check_stmt(s);
  }
  // A region: binds `vars` (index variables) locally, checks the block, yields its types.
  std::vector<std::optional<Type>> region(const Block& b, const std::vector<VarId>& vars,
                                          const char* what) {
    size_t mark = open_scope();
    for (VarId v : vars) bind(v, what);
    for (VarId v : vars) {
      if (valid(v) && f_.type_of(v) != Type::scalar(Scalar::I64)) {
        error(std::string(what) + " " + name(v) + " has type " + f_.type_of(v).to_string() +
              "; it must be i64");
      }
    }
    check_stmts(b);
    use_all(b.results);
    close_scope(mark);
    std::vector<std::optional<Type>> types;
    for (const auto& r : b.results) types.push_back(type_of(r));
    return types;
  }
  std::vector<VarId> index_vars(const std::vector<IndexVar>& ivars) {
    std::vector<VarId> vs;
    for (const auto& iv : ivars) {
      check_size(iv.extent, {"the extent of ", iv.var});
      vs.push_back(iv.var);
    }
    return vs;
  }
  // A region that yields one value.
  std::optional<Type> single(const std::vector<std::optional<Type>>& types, const char* what) {
    if (types.size() != 1) {
      error(std::string(what) + " yields " + std::to_string(types.size()) +
            " values; it must yield one");
      return std::nullopt;
    }
    return types[0];
  }
  void expect_result(const Stmt& s, size_t i, const Type& t) {
    auto r = type_of(s.results[i]);
    if (r && *r != t) {
      error(name(s.results[i]) + " has type " + r->to_string() + " but the operation yields " +
            t.to_string());
    }
  }
  // Compares a region's yielded types with the statement's result types, one by one.
  void expect_results_match(const Stmt& s, const std::vector<std::optional<Type>>& types,
                            const char* what) {
    if (types.size() != s.results.size()) {
      error(std::string(what) + " yields " + std::to_string(types.size()) + " values for " +
            std::to_string(s.results.size()) + " results");
      return;
    }
    for (size_t i = 0; i < types.size(); ++i) {
      if (types[i]) expect_result(s, i, *types[i]);
    }
  }

  void check_stmt(const Stmt& s) {
    const Stmt* outer = stmt_;
    stmt_ = &s;
    const bool multi = s.as<LoopOp>() || s.as<IfOp>() || s.as<GuardOp>();
    if (!multi && s.results.size() != 1) {
      error("the operation binds " + std::to_string(s.results.size()) +
            " variables; it must bind one");
    }
    std::visit([&](const auto& op) { check(s, op); }, s.op);
    for (VarId v : s.results) bind(v, "variable");
    stmt_ = outer;
  }

  // The statement's only result, when it is well-formed.
  bool one(const Stmt& s) const { return s.results.size() == 1; }

  void check(const Stmt& s, const PrimOp& p) {
    const PrimInfo& info = prim_info(p.prim);
    if (static_cast<int>(p.args.size()) != info.arity) {
      error(std::string(info.name) + " takes " + std::to_string(info.arity) + " operands, not " +
            std::to_string(p.args.size()));
      use_all(p.args);
      return;
    }
    std::vector<Scalar> scalars;
    bool ok = true;
    for (const auto& a : p.args) {
      auto t = use(a);
      if (!t) {
        ok = false;
      } else if (!t->is_scalar()) {
        error(std::string(info.name) + " operand " + atom_text(a) + " has type " + t->to_string() +
              "; primitives apply to scalars");
        ok = false;
      } else {
        scalars.push_back(t->elem);
      }
    }
    if (!ok) return;
    std::string why;
    auto r = prim_result_type(p.prim, scalars, &why);
    if (!r) {
      error(why);
    } else if (one(s)) {
      expect_result(s, 0, Type::scalar(*r));
    }
  }

  void check(const Stmt& s, const IndexOp& x) {
    auto t = use(x.tensor);
    for (const auto& e : x.indices) {
      if (e.is_affine) {
        check_affine(e.affine);
      } else {
        expect_scalar(e.computed, Scalar::I64, "the index");
      }
    }
    if (!t) return;
    if (t->is_tuple || t->rank() < x.indices.size()) {
      error("indexes " + atom_text(x.tensor) + " of type " + t->to_string() + " with " +
            std::to_string(x.indices.size()) + " indices");
      return;
    }
    std::vector<SizeExpr> rest(t->shape.begin() + static_cast<std::ptrdiff_t>(x.indices.size()),
                               t->shape.end());
    if (one(s)) expect_result(s, 0, Type::tensor(t->elem, std::move(rest)));
  }

  void check(const Stmt& s, const GenOp& g) {
    auto body = single(region(g.body, index_vars(g.ivars), "index variable"), "the generator body");
    if (!body) return;
    if (body->is_tuple) {
      error("the generator body yields a tuple " + body->to_string());
      return;
    }
    std::vector<SizeExpr> shape;
    for (const auto& iv : g.ivars) shape.push_back(iv.extent);
    shape.insert(shape.end(), body->shape.begin(), body->shape.end());
    if (one(s)) expect_result(s, 0, Type::tensor(body->elem, std::move(shape)));
  }

  void check(const Stmt& s, const ReduceOp& r) {
    auto body = single(region(r.body, index_vars(r.ivars), "index variable"), "the reduction body");
    if (!body) return;
    if (body->is_tuple || !(is_real(body->elem) || body->elem == Scalar::I64)) {
      error("the reduction body yields " + body->to_string() + "; it must be real or i64");
      return;
    }
    if (one(s)) expect_result(s, 0, *body);
  }

  void check(const Stmt& s, const GuardOp& g) {
    check_pred(g.pred);
    expect_results_match(s, region(g.body, {}, ""), "the guard body");
  }

  void check(const Stmt& s, const LoopOp& l) {
    std::vector<std::optional<Type>> init;
    for (const auto& a : l.init) init.push_back(use(a));
    if (l.state.size() != l.init.size()) {
      error("the loop has " + std::to_string(l.state.size()) + " state variables but " +
            std::to_string(l.init.size()) + " initial values");
    }
    if (!l.is_while) expect_scalar(l.count, Scalar::I64, "the trip count");
    size_t mark = open_scope();
    for (size_t i = 0; i < l.state.size(); ++i) {
      bind(l.state[i], "loop state");
      auto t = type_of(l.state[i]);
      if (i < init.size() && t && init[i] && *t != *init[i]) {
        error("the loop state " + name(l.state[i]) + " has type " + t->to_string() +
              " but its initial value has type " + init[i]->to_string());
      }
    }
    if (l.is_while) {
      if (l.iter != -1) error("a while-loop has no iteration counter, but binds " + name(l.iter));
      auto c = single(region(l.cond, {}, ""), "the loop condition");
      if (c && *c != Type::scalar(Scalar::Bool)) {
        error("the loop condition yields " + c->to_string() + "; it must be bool");
      }
    } else {
      bind(l.iter, "loop counter");
      if (valid(l.iter) && f_.type_of(l.iter) != Type::scalar(Scalar::I64)) {
        error("the loop counter " + name(l.iter) + " has type " + f_.type_of(l.iter).to_string() +
              "; it must be i64");
      }
      if (!l.cond.stmts.empty() || !l.cond.results.empty()) {
        error("a for-loop has a while-condition block");
      }
    }
    auto body = region(l.body, {}, "");
    close_scope(mark);
    if (body.size() != l.state.size()) {
      error("the loop body yields " + std::to_string(body.size()) + " values for " +
            std::to_string(l.state.size()) + " state variables");
    } else {
      for (size_t i = 0; i < body.size(); ++i) {
        auto t = type_of(l.state[i]);
        if (t && body[i] && *t != *body[i]) {
          error("the loop body yields " + body[i]->to_string() + " for the state " +
                name(l.state[i]) + " of type " + t->to_string());
        }
      }
    }
    std::vector<std::optional<Type>> state;
    for (VarId v : l.state) state.push_back(type_of(v));
    if (l.saves_states) {
      check_saving_results(s, l, state);
    } else {
      expect_results_match(s, state, "the loop");
    }
  }

  // A saving loop binds the final state, T (an i64 dynamic size variable) and one stack per
  // state variable, of type [T] ++ the state's type.
  void check_saving_results(const Stmt& s, const LoopOp& l,
                            const std::vector<std::optional<Type>>& state) {
    const size_t n = state.size();
    if (s.results.size() != 2 * n + 1) {
      error("the saving loop binds " + std::to_string(s.results.size()) + " variables; with " +
            std::to_string(n) + " state variables it must bind " + std::to_string(2 * n + 1) +
            " (the final state, the iteration count and the stacks)");
      return;
    }
    for (size_t k = 0; k < n; ++k) {
      if (state[k]) expect_result(s, k, *state[k]);
    }
    const VarId t = s.results[n];
    if (auto tt = type_of(t); tt && *tt != Type::scalar(Scalar::I64)) {
      error("the iteration count " + name(t) + " of the saving loop has type " + tt->to_string() +
            "; it must be i64");
    }
    const SizeVar* sv = nullptr;
    for (const auto& v : f_.size_vars) {
      if (v.param == -1 && v.var == t) sv = &v;
    }
    if (sv == nullptr) {
      error("the iteration count " + name(t) +
            " of the saving loop is not the variable of a dynamic size variable of " + f_.name);
      return;
    }
    for (size_t k = 0; k < n; ++k) {
      if (!state[k]) continue;
      if (state[k]->is_tuple) {
        error("the saving loop's state " + name(l.state[k]) + " has the tuple type " +
              state[k]->to_string() + "; saved states must be tensors or scalars");
        continue;
      }
      std::vector<SizeExpr> shape{SizeExpr::var(sv->name)};
      shape.insert(shape.end(), state[k]->shape.begin(), state[k]->shape.end());
      expect_result(s, n + 1 + k, Type::tensor(state[k]->elem, std::move(shape)));
    }
  }

  // The dynamic sizes the result type names, at the end of the body.
  void check_result_dynamic_sizes() {
    std::vector<std::string> names;
    collect_sizes(f_.result_type, names);
    std::set<std::string> done;
    for (const auto& n : names) {
      if (!dynamic_.count(n) || !done.insert(n).second) continue;
      check_size(SizeExpr::var(n), {"the result type"});
    }
  }

  // Every dynamic size variable is bound by a statement of the body: the iteration count of a
  // saving loop, or an i64 computed from such counts (the count of the linear loop of a
  // reverse-over-reverse split). Where it is used, it must be in scope (check_size).
  void check_dynamic_sizes_bound() {
    for (const auto& sv : f_.size_vars) {
      const bool is_param =
          std::find(f_.params.begin(), f_.params.end(), sv.var) != f_.params.end();
      if (sv.param == -1 && valid(sv.var) && (!bound_[static_cast<size_t>(sv.var)] || is_param)) {
        error("dynamic size variable " + sv.name + " is not bound by any statement");
      }
    }
  }

  void check(const Stmt& s, const IfOp& i) {
    expect_scalar(i.cond, Scalar::Bool, "the condition");
    expect_results_match(s, region(i.then_branch, {}, ""), "the then-branch");
    expect_results_match(s, region(i.else_branch, {}, ""), "the else-branch");
  }

  void check(const Stmt& s, const AccumOp& a) {
    for (const auto& d : a.shape) check_size(d, {"the accum shape"});
    auto body = region(a.body, index_vars(a.ivars), "index variable");
    if (body.size() != a.shape.size() + 1) {
      error("the accum body yields " + std::to_string(body.size()) + " values; it must yield " +
            std::to_string(a.shape.size()) + " positions and a value");
      return;
    }
    for (size_t i = 0; i + 1 < body.size(); ++i) {
      if (body[i] && *body[i] != Type::scalar(Scalar::I64)) {
        error("accum position " + std::to_string(i) + " has type " + body[i]->to_string() +
              "; it must be i64");
      }
    }
    const auto& v = body.back();
    if (!v) return;
    if (v->is_tuple || v->elem == Scalar::Bool) {
      error("the accum value has type " + v->to_string() + "; it must be a numeric tensor");
      return;
    }
    std::vector<SizeExpr> shape = a.shape;
    shape.insert(shape.end(), v->shape.begin(), v->shape.end());
    if (one(s)) expect_result(s, 0, Type::tensor(v->elem, std::move(shape)));
  }

  void check(const Stmt& s, const TupleOp& t) {
    std::vector<Type> types;
    bool ok = true;
    for (const auto& a : t.elems) {
      auto at = use(a);
      ok = ok && at.has_value();
      if (at) types.push_back(*at);
    }
    if (ok && one(s)) expect_result(s, 0, Type::tuple(std::move(types)));
  }

  void check(const Stmt& s, const ProjOp& p) {
    auto t = use(p.tuple);
    if (!t) return;
    if (!t->is_tuple || p.index < 0 || static_cast<size_t>(p.index) >= t->elems.size()) {
      error("projection " + std::to_string(p.index) + " of " + atom_text(p.tuple) + " of type " +
            t->to_string());
      return;
    }
    if (one(s)) expect_result(s, 0, t->elems[static_cast<size_t>(p.index)]);
  }

  void check(const Stmt& s, const SizeOp& z) {
    check_size(z.size, {"the size"});
    if (one(s)) expect_result(s, 0, Type::scalar(Scalar::I64));
  }

  void check(const Stmt& s, const CallOp& c) {
    std::vector<std::optional<Type>> args;
    for (const auto& a : c.args) args.push_back(use(a));
    const Function* g = program_.find(c.callee);
    if (g == nullptr) {
      error("calls " + c.callee + ", which is not in the program");
      return;
    }
    // A derived function not built yet has no signature to check against.
    if (g->params.empty() && g->derivation && g->body.stmts.empty() && g->body.results.empty()) {
      return;
    }
    if (args.size() != g->params.size()) {
      error("calls " + c.callee + " with " + std::to_string(args.size()) + " arguments; it takes " +
            std::to_string(g->params.size()));
      return;
    }
    std::vector<std::string> result_sizes;
    collect_sizes(g->result_type, result_sizes);
    for (const auto& sv : g->size_vars) {
      if (sv.param == -1 && std::count(result_sizes.begin(), result_sizes.end(), sv.name) > 0) {
        error("calls " + c.callee + ", whose result type " + g->result_type.to_string() +
              " has the dynamic size " + sv.name + ", which a caller cannot name");
        return;
      }
    }
    auto param_type = [&](size_t i) -> std::optional<Type> {
      VarId p = g->params[i];
      if (p < 0 || static_cast<size_t>(p) >= g->vars.size()) return std::nullopt;
      return g->type_of(p);
    };
    // The callee's size variables, as the caller's dimensions at their binding sites.
    std::map<std::string, SizeExpr> by;
    for (const auto& sv : g->size_vars) {
      if (sv.param < 0 || static_cast<size_t>(sv.param) >= args.size() ||
          !args[static_cast<size_t>(sv.param)]) {
        continue;
      }
      if (auto d = dim_at(*args[static_cast<size_t>(sv.param)], sv.path, sv.dim)) by[sv.name] = *d;
    }
    bool ok = true;
    for (size_t i = 0; i < args.size(); ++i) {
      auto pt = param_type(i);
      if (!pt || !args[i]) {
        ok = false;
        continue;
      }
      if (!same_structure(*args[i], *pt)) {
        error("argument " + std::to_string(i) + " of " + c.callee + " has type " +
              args[i]->to_string() + "; the parameter has type " + pt->to_string());
        ok = false;
      } else if (Type want = pt->substitute(by); *args[i] != want) {
        error("argument " + std::to_string(i) + " of " + c.callee + " has shape " +
              args[i]->to_string() + "; the parameter's shape " + pt->to_string() + " is " +
              want.to_string() + " here");
        ok = false;
      }
    }
    if (ok && one(s)) expect_result(s, 0, g->result_type.substitute(by));
  }

  const Program& program_;
  const Function& f_;
  mutable std::vector<std::string> names_;  // printed names, at the first message
  std::vector<bool> bound_;                 // bound anywhere so far (single assignment)
  std::vector<bool> visible_;               // bound in an enclosing scope, earlier (scoping)
  std::vector<VarId> scope_;                // the visible variables, innermost last
  std::set<std::string> size_names_;
  std::map<std::string, VarId> dynamic_;  // dynamic size variables by name
  bool defer_dynamic_ = false;            // dynamic sizes' scopes are checked later
  const Stmt* stmt_ = nullptr;            // the statement being checked, for messages
  std::vector<VerifyError> errors_;
};

}  // namespace

std::vector<VerifyError> verify_function(const Program& program, const Function& f) {
  return FunctionVerifier(program, f).run();
}

std::vector<VerifyError> verify(const Program& program) {
  std::vector<VerifyError> all;
  // A user function may shadow a prelude one; two of the same origin are ambiguous.
  std::set<std::pair<std::string, bool>> names;
  for (const auto& f : program.functions) {
    if (!names.insert({f.name, f.from_prelude}).second) {
      all.push_back(VerifyError{f.name, "the program defines " + f.name + " twice"});
    }
    for (auto& e : verify_function(program, f)) all.push_back(std::move(e));
  }
  return all;
}

}  // namespace cot::ir
