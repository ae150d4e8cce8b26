// The Core IR's walkers: Rewriter<P> rewrites a function block by block, Visitor<P> reads one.
// A pass derives from one of them (the curiously recurring template: P is the pass) and
// overrides the hooks it needs, one per Op kind; every other statement is recursed into and
// kept by default. Both keep the enclosing regions and their index facts in scope(). The
// dispatch is ir::match (ir/match.h), so an Op kind added to ir.h fails to compile here until
// it has a hook, and then every pass gets the default for it (docs/design.md §4, "Walking the
// IR", has a pass written with it).
#pragma once

#include <utility>
#include <vector>

#include "ir/ir.h"
#include "ir/match.h"
#include "ir/regions.h"
#include "ir/scope.h"

namespace cot::ir {

// What replaces the statement being rewritten: the hooks append to it, in order (nothing:
// the statement is dropped; several: it is expanded in place).
using StmtList = std::vector<Stmt>;

template <class Pass>
class Rewriter {
 public:
  explicit Rewriter(Function& f) : f_(f), scope_(f) {}

  // Rewrites the function's body.
  void rewrite() { self().rewrite_block(f_.body); }

  // Rewrites the statements of `b` in order, each through visit(); then after_block(b).
  void rewrite_block(Block& b) {
    StmtList out;
    out.reserve(b.stmts.size());
    for (auto& slot : b.stmts) {
      Stmt s = std::move(slot);
      self().visit(s, out);
    }
    b.stmts = std::move(out);
    self().after_block(b);
  }

  // Rewrites the regions of `s`, each with its frame pushed on scope(): the default recursion.
  void rewrite_regions(Stmt& s) {
    for_each_region_in(s, [&](const RegionFrame& frame, Block& b) {
      scope_.push(frame);
      self().rewrite_block(b);
      scope_.pop();
    });
  }

  // The default of every hook: the statement's regions rewritten, the statement kept.
  void keep(Stmt& s, StmtList& out) {
    rewrite_regions(s);
    out.push_back(std::move(s));
  }

  // One statement: dispatches to the hook of its kind. A pass overrides visit() to act on
  // every statement before (or after) its hook, calling Rewriter::visit for the dispatch.
  void visit(Stmt& s, StmtList& out) {
    match(
        s.op, [&](PrimOp& o) { self().on_prim(s, o, out); },
        [&](IndexOp& o) { self().on_index(s, o, out); },
        [&](GenOp& o) { self().on_gen(s, o, out); },
        [&](ReduceOp& o) { self().on_reduce(s, o, out); },
        [&](GuardOp& o) { self().on_guard(s, o, out); },
        [&](LoopOp& o) { self().on_loop(s, o, out); }, [&](IfOp& o) { self().on_if(s, o, out); },
        [&](AccumOp& o) { self().on_accum(s, o, out); },
        [&](TupleOp& o) { self().on_tuple(s, o, out); },
        [&](ProjOp& o) { self().on_proj(s, o, out); },
        [&](SizeOp& o) { self().on_size(s, o, out); },
        [&](CallOp& o) { self().on_call(s, o, out); });
  }

  // The hooks, one per Op kind. `op` is s's operation; a hook that moves `s` into `out` must
  // not use `op` afterwards.
  void on_prim(Stmt& s, PrimOp& /*op*/, StmtList& out) { self().keep(s, out); }
  void on_index(Stmt& s, IndexOp& /*op*/, StmtList& out) { self().keep(s, out); }
  void on_gen(Stmt& s, GenOp& /*op*/, StmtList& out) { self().keep(s, out); }
  void on_reduce(Stmt& s, ReduceOp& /*op*/, StmtList& out) { self().keep(s, out); }
  void on_guard(Stmt& s, GuardOp& /*op*/, StmtList& out) { self().keep(s, out); }
  void on_loop(Stmt& s, LoopOp& /*op*/, StmtList& out) { self().keep(s, out); }
  void on_if(Stmt& s, IfOp& /*op*/, StmtList& out) { self().keep(s, out); }
  void on_accum(Stmt& s, AccumOp& /*op*/, StmtList& out) { self().keep(s, out); }
  void on_tuple(Stmt& s, TupleOp& /*op*/, StmtList& out) { self().keep(s, out); }
  void on_proj(Stmt& s, ProjOp& /*op*/, StmtList& out) { self().keep(s, out); }
  void on_size(Stmt& s, SizeOp& /*op*/, StmtList& out) { self().keep(s, out); }
  void on_call(Stmt& s, CallOp& /*op*/, StmtList& out) { self().keep(s, out); }

  // Called when a block's statements are rewritten (its results are not yet): a pass that
  // renames variables rewrites the block's results here.
  void after_block(Block& /*b*/) {}

 protected:
  Function& function() { return f_; }
  const Scope& scope() const { return scope_; }

 private:
  Pass& self() { return static_cast<Pass&>(*this); }

  Function& f_;
  Scope scope_;
};

template <class Pass>
class Visitor {
 public:
  explicit Visitor(const Function& f) : f_(f), scope_(f) {}

  void visit_function() { self().visit_block(f_.body); }

  void visit_block(const Block& b) {
    for (const auto& s : b.stmts) self().visit(s);
  }

  // The regions of `s`, each with its frame pushed on scope(): the default recursion.
  void visit_regions(const Stmt& s) {
    for_each_region_in(s, [&](const RegionFrame& frame, const Block& b) {
      scope_.push(frame);
      self().visit_block(b);
      scope_.pop();
    });
  }

  void visit(const Stmt& s) {
    match(
        s.op, [&](const PrimOp& o) { self().on_prim(s, o); },
        [&](const IndexOp& o) { self().on_index(s, o); },
        [&](const GenOp& o) { self().on_gen(s, o); },
        [&](const ReduceOp& o) { self().on_reduce(s, o); },
        [&](const GuardOp& o) { self().on_guard(s, o); },
        [&](const LoopOp& o) { self().on_loop(s, o); }, [&](const IfOp& o) { self().on_if(s, o); },
        [&](const AccumOp& o) { self().on_accum(s, o); },
        [&](const TupleOp& o) { self().on_tuple(s, o); },
        [&](const ProjOp& o) { self().on_proj(s, o); },
        [&](const SizeOp& o) { self().on_size(s, o); },
        [&](const CallOp& o) { self().on_call(s, o); });
  }

  // The hooks, one per Op kind; each defaults to visiting the statement's regions.
  void on_prim(const Stmt& s, const PrimOp& /*op*/) { self().visit_regions(s); }
  void on_index(const Stmt& s, const IndexOp& /*op*/) { self().visit_regions(s); }
  void on_gen(const Stmt& s, const GenOp& /*op*/) { self().visit_regions(s); }
  void on_reduce(const Stmt& s, const ReduceOp& /*op*/) { self().visit_regions(s); }
  void on_guard(const Stmt& s, const GuardOp& /*op*/) { self().visit_regions(s); }
  void on_loop(const Stmt& s, const LoopOp& /*op*/) { self().visit_regions(s); }
  void on_if(const Stmt& s, const IfOp& /*op*/) { self().visit_regions(s); }
  void on_accum(const Stmt& s, const AccumOp& /*op*/) { self().visit_regions(s); }
  void on_tuple(const Stmt& s, const TupleOp& /*op*/) { self().visit_regions(s); }
  void on_proj(const Stmt& s, const ProjOp& /*op*/) { self().visit_regions(s); }
  void on_size(const Stmt& s, const SizeOp& /*op*/) { self().visit_regions(s); }
  void on_call(const Stmt& s, const CallOp& /*op*/) { self().visit_regions(s); }

 protected:
  const Function& function() const { return f_; }
  const Scope& scope() const { return scope_; }

 private:
  Pass& self() { return static_cast<Pass&>(*this); }

  const Function& f_;
  Scope scope_;
};

}  // namespace cot::ir
