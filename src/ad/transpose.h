// Transposition: where each construct's rule is (all in src/ad/; docs/design.md §7.4).
//   construct                           file                      function
//   --------------------------------    ----------------------    -----------------------------
//   dispatch: a variable's cotangent    transpose.cpp             Transposer::ct, contribution
//   primitive (w = p(.., v, ..))        transpose.cpp             prim_contribution
//   read outside regions (w = v[e])     transpose.cpp             index_contribution
//   tuple, projection                   transpose.cpp             tuple_contribution,
//                                                                 proj_contribution
//   gen, sum (reduction), accum         transpose.cpp             region_contribution: one
//     (scatter-add), guard, if: a read                              gather or scatter per read
//     in their regions
//   where the reads in regions are      transpose.cpp             Path::reads_in
//   opening one copy of a region        transpose.cpp             open_region_copy
//   read in regions at affine indices   transpose_gather.cpp      Transposer::Gather (gather);
//     or of v whole: a gather, with                                 per level of the path:
//     its index solving                                             descend (gen/sum sums, guard
//                                                                   keeps its guard, if takes
//                                                                   the read's branch)
//   read in regions at computed         transpose_scatter.cpp     Transposer::Scatter (scatter)
//     indices: a scatter-add
//   loop (for)                          transpose_loop.cpp        loop_cts, loop_contribution
//   loop's stepped reads (a scan's xs)  transpose_loop.cpp        stepped_reads,
//                                                                 scatter_stepped_read
//   residuals shared by the gathers     transpose_residuals.cpp   shared_residuals
//     of one gen or sum
// The state the files share (Path, helpers) is in transpose_internal.h.
//
// Transposition (docs/design.md §7.4): the linear part's adjoint, purely functional.
// Cotangents are pulled, not pushed: the cotangent of a variable is the sum of the
// contributions of every statement that reads it, each computed from the cotangents of that
// statement's results. Nothing is accumulated through aliases.
//
// A variable read inside regions (gen, sum, guard, if, accum bodies) gets, for each read, a
// gather: `for j. sum i. [A·i + b == j] * c(i)`, where c(i) recomputes the region's body at i
// and runs its reverse pass. The index solver (index/eliminate_sums.h) removes the summed
// variables the equalities pin, so `x[i + 1]` transposes to a shifted gather with a range
// guard, `x[2 * i]` to a gather with a parity condition, `A[i, i]` to a diagonal guard.
// Reads with computed indices transpose to `accum` (a pure scatter-add). Loops transpose to
// loops that run backwards over the states the primal loop saved; a tensor the body reads at
// positions that move with the counter (`c[t]`, a scan's xs) gets each step's cotangent saved
// by the backward loop and scattered once after it, not a dense cotangent carried per step.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "ad/activity.h"
#include "ad/rules.h"
#include "ad/unzip.h"
#include "ir/builder.h"
#include "ir/ir.h"

namespace cot::ad {

class Transposer {
 public:
  // `tangent`: the linear part's inputs (variables that hold tangents).
  Transposer(ir::Builder& b, RuleBook& rules, VarSet tangent, UnzipPolicy policy)
      : b_(b), rules_(rules), tangent_(std::move(tangent)), policy_(policy) {}

  struct Level;
  struct LoopCts;
  // Opens a block for the reverse pass: emits its primal statements at the builder's position
  // (splitting loops that carry tangents, see unzip.h) and keeps its tangent statements.
  // `ct_results` are the cotangents of the block's results (nullopt: zero).
  std::unique_ptr<Level> open(ir::Block block, std::vector<std::optional<ir::Atom>> ct_results);
  // The cotangent of `v` from everything in the level that reads it; nullopt when zero.
  std::optional<ir::Atom> ct(Level& lv, ir::VarId v);
  // Marks a variable as a tangent (an input of the linear part).
  void add_tangent(ir::VarId v) { tangent_.insert(v); }

  ~Transposer();

 private:
  // Private to the transposer's files: transpose_internal.h (Path), transpose_gather.cpp
  // (Gather), transpose_scatter.cpp (Scatter).
  struct Path;
  class Gather;
  class Scatter;
  const std::vector<std::optional<ir::Atom>>& result_cts(Level& lv, size_t idx);
  // The contribution to v's cotangent of the statement at idx (one reader of v).
  std::optional<ir::Atom> contribution(Level& lv, size_t idx, ir::VarId v);
  std::optional<ir::Atom> prim_contribution(const ir::Stmt& s, ir::VarId v, ir::Atom ct);
  std::optional<ir::Atom> index_contribution(const ir::Stmt& s, ir::VarId v, ir::Atom ct);
  std::optional<ir::Atom> tuple_contribution(const ir::TupleOp& op, ir::VarId v, ir::Atom ct);
  std::optional<ir::Atom> proj_contribution(const ir::ProjOp& op, ir::VarId v, ir::Atom ct);
  std::optional<ir::Atom> region_contribution(Level& lv, size_t idx, ir::VarId v);
  std::optional<ir::Atom> loop_contribution(Level& lv, size_t idx, ir::VarId v);
  const LoopCts& loop_cts(Level& lv, size_t idx);
  // `body`: the block copied for the first level of the path (s's region with its shared
  // residuals read, see shared_residuals), or nullptr for s's own region.
  std::optional<ir::Atom> gather(const ir::Stmt& s, const std::vector<std::optional<ir::Atom>>& cts,
                                 const Path& path, ir::VarId v, const ir::Block* body);
  std::optional<ir::Atom> scatter(const ir::Stmt& s,
                                  const std::vector<std::optional<ir::Atom>>& cts, const Path& path,
                                  ir::VarId v, const ir::Block* body);
  // Opens `copy`, a copy of a region of st at one point `at` of its index variables, with the
  // cotangents of its results taken from st's (`st_cts`).
  std::unique_ptr<Level> open_region_copy(const ir::Stmt& st, ir::Block copy,
                                          const std::vector<std::optional<ir::Atom>>& st_cts,
                                          const std::vector<ir::IndexExpr>& at);
  // For a linear gen or sum whose body several gathers or scatters copy: emits its costly
  // primal values (at its top level and under guards there) once, as generators over its index
  // variables, and returns its body with those values read from them; nullptr when there is
  // nothing to share.
  const ir::Block* shared_residuals(Level& lv, size_t idx);
  // How many copies of `body`, the region of s, the reverse pass makes per position.
  size_t body_copies(const ir::Stmt& s, const ir::Block& body) const;

  ir::Builder& b_;
  RuleBook& rules_;
  VarSet tangent_;
  UnzipPolicy policy_;
};

struct Transposer::LoopCts {
  std::vector<std::optional<ir::Atom>> init;  // per state variable
  std::unordered_map<ir::VarId, std::optional<ir::Atom>> free;
};

struct Transposer::Level {
  std::vector<ir::Stmt> stmts;  // tangent statements, in order
  std::vector<VarSet> reads;    // per tangent statement: the variables it reads
  std::vector<long> position;   // block position -> index into stmts (-1: primal)
  std::vector<ir::Atom> results;
  std::vector<std::optional<ir::Atom>> ct_results;
  std::unordered_map<ir::VarId, std::optional<ir::Atom>> memo;
  std::map<size_t, std::vector<std::optional<ir::Atom>>> result_cts;
  std::map<size_t, std::unique_ptr<LoopCts>> loops;
  std::map<size_t, std::optional<ir::Block>> residual_bodies;  // see shared_residuals
};

}  // namespace cot::ad
