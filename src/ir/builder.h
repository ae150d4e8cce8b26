// A small convenience builder for Core IR written in code (tests, AD, optimizer passes): it
// appends statements to the innermost open block of one function and computes every result
// type from the operands, so code that builds IR states only what it means. Misuse that would
// produce ill-typed IR (a primitive on a tensor, too many indices, ...) throws std::logic_error:
// it is a compiler bug, never a user error.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace cot::ir {

// Index expressions of IndexOp.
IndexExpr affine_index(Affine a);
IndexExpr computed_index(Atom a);

class Builder {
 public:
  // Yields a region's results.
  using RegionFn = std::function<std::vector<Atom>()>;
  // Yields a loop's next state from the current state (and the counter; -1 in a while-loop).
  using LoopBodyFn = std::function<std::vector<Atom>(const std::vector<VarId>& state, VarId iter)>;
  using LoopCondFn = std::function<Atom(const std::vector<VarId>& state)>;

  // Appends to f.body (which may already hold statements).
  explicit Builder(Function& f);
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;

  Function& function() { return f_; }
  Type type_of(const Atom& a) const { return atom_type(f_, a); }

  // Adds a parameter and binds the size variables of its type that are not bound yet, each at
  // its first bare occurrence (a dimension that is exactly the variable), in order.
  VarId param(std::string name, Type type, Span span = {});
  // The i64 variable of a bound size variable; throws when there is none.
  VarId size_var(const std::string& name) const;
  // A fresh i64 variable to bind as an index variable of gen, reduce or accum.
  VarId index_var(std::string name);
  // Sets a variable's name hint (for printing) and returns it.
  VarId named(VarId v, std::string name);

  VarId prim(Prim p, std::vector<Atom> args, Span span = {});
  VarId index(Atom tensor, std::vector<IndexExpr> indices, Span span = {});
  VarId gen(std::vector<IndexVar> ivars, const std::function<Atom()>& body, Span span = {});
  VarId reduce(ReduceKind kind, std::vector<IndexVar> ivars, const std::function<Atom()>& body,
               Span span = {});
  std::vector<VarId> guard(Pred pred, const RegionFn& body, Span span = {});
  std::vector<VarId> if_(Atom cond, const RegionFn& then_branch, const RegionFn& else_branch,
                         Span span = {});
  // loop state = init for iter < count { body }. State variables are named after
  // `state_names` when given (else "s"), the counter after `iter_name`.
  std::vector<VarId> loop_for(std::vector<Atom> init, Atom count, const LoopBodyFn& body,
                              const std::vector<std::string>& state_names = {},
                              std::string iter_name = "t", Span span = {});
  // loop state = init while cond { body }.
  std::vector<VarId> loop_while(std::vector<Atom> init, const LoopCondFn& cond,
                                const LoopBodyFn& body,
                                const std::vector<std::string>& state_names = {}, Span span = {});
  // A saving loop (LoopOp::saves_states): besides the final state it binds the number of
  // iterations it ran, T, and for each state variable the stack of its values at the start of
  // every iteration, of type [T] ++ its type. T is registered as a fresh dynamic size variable
  // of the function (SizeVar::param == -1) named "T", "T_2", ... (a name no size variable or
  // variable of the function has), which the stacks' types name. State types must be tensors
  // or scalars (not tuples). Stacks are named after the state with "_saved" appended.
  struct SavingLoop {
    std::vector<VarId> final_state;
    VarId count = -1;       // T, the i64 number of iterations run (the dynamic size's variable)
    std::string size_name;  // the dynamic size variable's name
    std::vector<VarId> stacks;
    std::vector<VarId> results;  // the statement's results in order: final state, T, stacks
  };
  SavingLoop loop_for_saving(std::vector<Atom> init, Atom count, const LoopBodyFn& body,
                             const std::vector<std::string>& state_names = {},
                             std::string iter_name = "t", Span span = {});
  SavingLoop loop_while_saving(std::vector<Atom> init, const LoopCondFn& cond,
                               const LoopBodyFn& body,
                               const std::vector<std::string>& state_names = {}, Span span = {});
  // A fresh name for a dynamic size variable: `hint`, else hint_2, hint_3, ..., one that no
  // size variable and no variable of the function is named.
  std::string fresh_size_name(const std::string& hint) const;
  // accum[shape] ivars. body, where body yields shape.size() i64 positions and then the value.
  VarId accum(std::vector<SizeExpr> shape, std::vector<IndexVar> ivars, const RegionFn& body,
              Span span = {});
  VarId tuple(std::vector<Atom> elems, Span span = {});
  VarId proj(Atom tuple, int index, Span span = {});
  VarId size(SizeExpr size, Span span = {});
  // A call; the callee's result type (in the caller's sizes) is given by the caller.
  VarId call(std::string callee, std::vector<Atom> args, Type result, Span span = {});

  // Appends any operation with the given result types (for passes that copy operations).
  std::vector<VarId> emit(Op op, const std::vector<Type>& result_types, Span span = {});
  // Appends a statement as it is (its result variables already exist in the function): for
  // passes that move or copy statements.
  void append(Stmt s);
  // Builds a nested block: runs `body` with the block open and sets its results.
  Block region(const RegionFn& body);

  // Ends the function: yields `results` (several are packed into a tuple) and sets the result
  // type to the type of what is yielded.
  void finish(std::vector<Atom> results);

 private:
  Block& current() { return *blocks_.back(); }
  void bind_size_vars(int param, const Type& t, std::vector<int>& path);
  // Emits a loop (its state and body already built), with the saving results when asked.
  SavingLoop emit_saving(LoopOp op, const std::vector<std::string>& state_names, Span span);

  Function& f_;
  std::vector<Block*> blocks_;  // the open blocks, innermost last
};

}  // namespace cot::ir
