// Checks one function body and lowers it to Core IR. One instance per function; the methods
// are spread over check_*.cpp files by the construct they handle.
#pragma once

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/diagnostic.h"
#include "check/program_context.h"
#include "check/val.h"
#include "ir/ir.h"
#include "syntax/ast.h"

namespace cot::check {

// Levenshtein distance, for "did you mean" suggestions.
size_t edit_distance(const std::string& a, const std::string& b);

class FunctionChecker {
 public:
  FunctionChecker(ProgramContext& ctx, ir::Function& fn, DiagnosticSink& diags)
      : ctx_(ctx), fn_(fn), diags_(diags) {}

  // Binds parameters and size variables, checks the body against the declared result type.
  void check(const ast::FnDef& def);

 private:
  // ---- emission (function_checker.cpp)
  ir::VarId emit(ir::Op op, const Type& type, Span span, std::string hint = {});
  std::vector<ir::VarId> emit_multi(ir::Op op, const std::vector<Type>& types, Span span);
  Val var_val(ir::VarId v, Span span);
  // Runs `body` with a fresh IR block as the emission target and returns the block.
  ir::Block in_block(const std::function<void()>& body);

  // ---- scopes (function_checker.cpp)
  void push_scope() { scopes_.emplace_back(); }
  void pop_scope() { scopes_.pop_back(); }
  void bind(const std::string& name, Binding b);
  const Binding* lookup(const std::string& name) const;
  void bind_pattern(const ast::Pattern& p, const Val& v);
  std::string suggest(const std::string& name) const;

  // ---- expressions (function_checker.cpp dispatches)
  Val expr(const ast::Expr& e);
  Val block(const ast::Block& b, Span span);
  Val name(const std::string& n, Span span);
  Val tuple(const ast::Tuple& t, Span span);
  Val literal_int(int64_t v, Span span);
  Val literal_real(double v, Span span);

  // ---- tuples (function_checker.cpp)
  Val tuple_elem(const Val& t, size_t k, Span span);
  std::vector<Val> flatten(const Val& v, Span span);  // leaves of a (nested) tuple
  Val rebuild(const Type& type, const std::vector<Val>& leaves, size_t& pos, Span span);

  // ---- types and coercion (check_arith.cpp)
  Val coerce(const Val& v, const Type& want, Span span, const std::string& what);
  bool unify_scalar_types(Val& a, Val& b, Span span, const std::string& op);
  Val convert_literal(const Val& v, Scalar to);

  // ---- arithmetic (check_arith.cpp)
  Val unary(const ast::Unary& u, Span span);
  Val binary(const ast::Binary& b, Span span);
  Val arith(ast::BinOp op, Val a, Val b, Span span, Span op_span);
  Val scalar_arith(ast::BinOp op, Val a, Val b, Span span, Span op_span);
  Val compare(ast::BinOp op, Val a, Val b, Span span, Span op_span);
  Val logic(const ast::Binary& b, Span span);
  Val power(const ast::Binary& b, Span span);
  Val int_power(const Val& base, int64_t k, Span span);
  Val prim(Prim p, const std::vector<Val>& args, Span span);
  // Applies a scalar operation elementwise: scalars directly, tensors of one shape (and scalars
  // broadcast) through a generator.
  Val elementwise(const std::vector<Val>& args, Span span, const std::string& what,
                  const std::function<Val(const std::vector<Val>&)>& scalar_op);

  // ---- indexing and static integer analysis (check_index.cpp)
  Val index(const ast::Index& ix, Span span);
  std::optional<Affine> try_affine(const ast::Expr& e) const;
  std::optional<Pred> try_pred(const ast::Expr& e) const;
  std::optional<SizeExpr> try_size(const ast::Expr& e) const;
  std::optional<Affine> size_to_affine(const SizeExpr& s) const;
  ir::VarId size_var_id(const std::string& name) const;

  // ---- binders (check_binders.cpp)
  Val gen(const ast::For& f, Span span);
  Val reduce(const ast::Reduce& r, Span span);
  Val accum(const ast::Accum& a, Span span);
  struct BinderScope {
    std::vector<ir::IndexVar> ivars;
    std::vector<int> records;
  };
  BinderScope open_binders(const std::vector<ast::Binder>& binders);
  // Resolves inferred extents; reports failures only when the body itself checked (`body_ok`).
  bool close_binders(BinderScope& scope, const std::vector<ast::Binder>& binders, bool body_ok);
  // Records `i == j` equalities between index variables in a guard's predicate, so that a
  // binder with no whole-index use takes the extent of the one it is equated to
  // (`for i, j. [i == j] * x[i]`).
  void note_index_equalities(const Pred& p);

  // ---- control and guards (check_control.cpp)
  Val iverson_product(const ast::Binary& b, Span span);
  Val guarded(const std::vector<const ast::Expr*>& conjuncts, size_t from,
              const std::function<Val()>& body, Span span);
  Val make_guard(const Pred& p, const std::function<Val()>& body, Span span);
  Val if_expr(const ast::If& i, Span span);
  Val loop(const ast::Loop& l, Span span);
  Val bool_scalar(const ast::Expr& e, const std::string& what);

  // ---- calls (check_calls.cpp)
  Val call(const ast::Call& c, Span span);
  Val builtin_call(const ast::Call& c, Span span, bool* handled);
  Val user_call(const std::string& callee, const std::vector<Val>& args, Span span,
                Span callee_span);
  std::optional<std::string> resolve_callee(const ast::FnRef& ref);

  ProgramContext& ctx_;
  ir::Function& fn_;
  DiagnosticSink& diags_;
  std::vector<std::unordered_map<std::string, Binding>> scopes_;
  std::vector<ir::Block*> blocks_;

  // Index binders whose extent is inferred from whole-index uses in their body.
  struct BinderRecord {
    std::string name;
    Span span;
    bool explicit_extent = false;
    // (extent, span of the use, description "x[i]")
    std::vector<std::tuple<SizeExpr, Span, std::string>> uses;
    std::vector<int> equal_to;       // other binder records it is equated to in a guard
    std::optional<SizeExpr> extent;  // once known
  };
  std::vector<BinderRecord> binders_;
  std::unordered_map<ir::VarId, int> binder_of_var_;
};

}  // namespace cot::check
