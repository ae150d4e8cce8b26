// The Lowerer: the state and the methods that lower one Core IR function to the loop IR
// (lower.h, docs/design.md §10). A private header of codegen/: the methods are defined across the
// lower_*.cpp files, one concern each. Values are `Val`s: a scalar expression, a view of a tensor
// (pointer, offset, concrete dims), or a tuple of them, each with the strong-zero mask the
// interpreter keeps (docs/language.md §5.6: a product with a strong zero is 0 even when the other
// factor is infinite), tracked only where one can arise.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "codegen/expr.h"
#include "codegen/loop_ir.h"
#include "codegen/lower.h"
#include "index/predicate.h"
#include "ir/ir.h"
#include "ir/point_update.h"
#include "ir/strong_zero_flow.h"
#include "runtime/size_checks.h"

namespace cot::codegen::lowering {

// A construct the backend cannot lower (an internal limitation, reported as such).
struct Unsupported {
  std::string why;
};

// The interpreter's masks (interp/environment.h): ordinary, strong zero, empty sum.
constexpr int64_t kStrongZero = 1;
constexpr int64_t kEmptySum = 2;

struct MarkPred;

struct Val {
  enum class Kind : uint8_t { Scalar, Tensor, Tuple };
  Kind kind = Kind::Scalar;
  Scalar type = Scalar::F64;
  ExprP scalar;             // Scalar
  LocalId pointer = -1;     // Tensor: row-major elements at pointer[offset ...]
  ExprP offset;             // Tensor
  std::vector<ExprP> dims;  // Tensor
  std::vector<Val> elems;   // Tuple
  ExprP mask;               // null: an ordinary value (a tensor's: the whole tensor's)
  // Tensor: which elements are strong zeros, one byte each at mask_pointer[offset ...] (the
  // interpreter's Marks, interp/marks.h); -1 where ir/strong_zero_flow.h says none can be.
  LocalId mask_pointer = -1;
  // The function's result: the caller gets plain numbers, so marks are not kept.
  bool drops_marks = false;
  // Tensor: where its strong zeros are, when a predicate of the indices says so (reads
  // evaluate it; no marks are stored).
  std::shared_ptr<const MarkPred> mark_pred;
  // A whole buffer whose size nothing has checked yet (the caller's result, an `if`'s or a
  // guard's slot): the statement that writes it checks it, where the interpreter allocates.
  bool check_at_writer = false;

  bool is_tensor() const { return kind == Kind::Tensor; }
  ExprP numel() const {
    ExprP n = lit_i64(1);
    for (const ExprP& d : dims) n = mul_i64(n, d);
    return n;
  }
};

using Interval = std::pair<int64_t, int64_t>;

// Where a generator's strong zeros are, when an affine predicate of its index variables says
// so (`for i. [i + 1 < n] * e`, `for r, c. if r == c then a else [c < r] * b`): `strong` holds
// at exactly the points whose element is one. Its variables are `ivars` and variables bound
// outside the generator, so a read evaluates it at its own indices instead of loading marks.
struct MarkPred {
  std::vector<ir::VarId> ivars;
  Pred strong;
};

class Lowerer {
 public:
  explicit Lowerer(const LowerInput& in)
      : in_(in), f_(*in.fn), flow_(ir::strong_zero_flow(*in.fn)) {}

  LoopFunction run();

 private:
  // --- environment (lower.cpp) ---
  void bind(ir::VarId v, Val x);
  const Val& val(ir::VarId v) const;
  std::string name_of(ir::VarId v) const;
  std::string c_hint(ir::VarId v) const;
  static Val scalar_val(ExprP e, Scalar t, ExprP mask = nullptr);
  Val atom_val(const ir::Atom& a) const;
  ExprP atom(const ir::Atom& a) const;

  // --- emission (lower.cpp) ---
  void emit(StmtOp op);
  template <class F>
  Body nested(F&& f) {
    Body b;
    bodies_.push_back(&b);
    f();
    bodies_.pop_back();
    return b;
  }
  int site(Site s);
  int message_site(Span span, std::string message, std::string help = {});
  void fail(int site_id, std::vector<ExprP> values = {});
  void fail_unless(ExprP cond, int site_id, std::vector<ExprP> values = {});
  // A local holding `e` (or `e` itself when it is a literal or a local already).
  ExprP declare(ExprP e, const std::string& hint);
  LocalId mutable_local(const std::string& hint, Scalar t, ExprP init, bool mask = false);

  // --- integer ranges (lower_sizes.cpp) ---
  // What interval reasoning over the concrete extents proves.
  std::optional<Interval> range(const ExprP& e) const;

  // a OP b on i64, checked unless the ranges prove it cannot overflow.
  ExprP int_op(Prim p, ExprP a, ExprP b, int site_id);

  // --- sizes (lower_sizes.cpp) ---
  ExprP size(const SizeExpr& s, Span span);
  // A size whose variables are known only at run time (a loop's trip count, or every size in
  // code compiled ahead of time): its normal form evaluated with overflow and exactness checks.
  ExprP runtime_size(const SizeExpr& s, Span span);
  std::vector<ExprP> shape_of(const Type& t, Span span);

  // --- size checks (lower_sizes.cpp) ---
  // Why a tensor of these dims cannot be built (interp::size_error, the interpreter's check and
  // words), when every dim is a literal; nullopt when it can, or when a dim is known only at
  // run time (check_size checks those).
  std::optional<std::string> static_size_error(const std::vector<ExprP>& dims,
                                               interp::SizeRule rule, size_t index_rank) const;
  // Fails at `span`, with the interpreter's message, unless a tensor of these dims can be built
  // under `rule`. Dims known only at run time are checked there without overflowing; the site
  // reports them and the host words the failure with the same interp::size_error.
  void check_size(const std::vector<ExprP>& dims, interp::SizeRule rule, size_t index_rank,
                  Span span);

  // --- buffers (lower_buffers.cpp) ---
  // A fresh tensor of these dims, built under `rule` (checked first). `deferred`: a slot that
  // statements build later (an `if`'s or a guard's result); a shape that cannot be built is
  // then not checked here but by its writer (alloc_for, assign_zero), where the interpreter
  // allocates, and the buffer gets no elements.
  Val alloc_tensor(Scalar elem, std::vector<ExprP> dims, Span span, const std::string& hint,
                   interp::SizeRule rule = interp::SizeRule::Tensor, size_t index_rank = 0,
                   bool deferred = false, bool marks = false);
  // The buffer a statement binding `v` writes: its consumer's destination when one is pending,
  // checked as the interpreter checks what the statement allocates (`rule`); `deferred` as
  // alloc_tensor's, for a slot that the statement's own statements write.
  Val alloc_for(ir::VarId v, Span span, interp::SizeRule rule = interp::SizeRule::Tensor,
                size_t index_rank = 0, bool deferred = false);
  Val view(const Val& t, ExprP offset, std::vector<ExprP> dims) const;

  // Storage for a value of type `t` that branches or iterations assign: scalar locals (with a
  // mask local when `masked`; a tensor's element marks when `marks`) and fresh tensors.
  Val make_slot(const Type& t, Span span, const std::string& hint, bool masked, bool marks = false);
  void add_mask_local(Val& x, const std::string& hint);
  // slot := v (copies tensors; same structure).
  void assign(const Val& slot, const Val& v);
  void copy(const Val& dst, const Val& src);
  // The element marks of tensor slot := those of tensor v (its whole strong zero included
  // when the slot has no mask of its own).
  void assign_marks(const Val& slot, const Val& v);
  // slot := zeros (a strong zero when the slot keeps a mask), allocated at `span` as the
  // interpreter allocates a false guard's zeros.
  void assign_zero(const Val& slot, Span span);

  // --- strong zeros kept in tensors (docs/language.md §5.6) (lower_marks.cpp) ---
  // Whether the tensor bound to v keeps marks: some element may be a strong zero.
  // Only where an element may be read: the function's result gives the caller plain numbers.
  bool needs_marks(ir::VarId v) const;
  // Its strong zeros are never read back from storage (nobody sees them, or reads evaluate its
  // mark predicate): a tensor without marks may take them.
  bool marks_unread(ir::VarId v) const;

  // --- mark predicates (MarkPred) (lower_mark_preds.cpp) ---
  // The generators whose marks an affine predicate gives, and which only full reads at affine
  // indices use (any other use, a slice or the tensor passed on, keeps stored marks).
  void find_mark_preds();
  // Whether v may appear in a mark predicate: bound outside the generator, or one of its
  // index variables (in `defs` as null); a variable bound inside it may not.
  static bool usable(ir::VarId v, const std::map<ir::VarId, const ir::Stmt*>& defs);
  static bool usable(const Pred& p, const std::map<ir::VarId, const ir::Stmt*>& defs);
  // The affine form of an i64 atom usable in a mark predicate: a literal, a variable bound
  // outside or an index variable, or i64 arithmetic inside the generator on those (`1 + j`).
  static std::optional<Affine> affine_atom(const ir::Atom& a,
                                           const std::map<ir::VarId, const ir::Stmt*>& defs,
                                           int depth = 0);
  // A bool atom as a predicate usable in a mark predicate: a comparison of such i64 atoms, or
  // a bool bound outside.
  std::optional<Pred> cond_pred(const ir::Atom& c,
                                const std::map<ir::VarId, const ir::Stmt*>& defs) const;
  // Where atom r of a generator's body is a strong zero, as a predicate usable at its reads;
  // nullopt when that depends on data (or is too deep to follow).
  std::optional<Pred> strong_pred(const ir::Atom& r,
                                  const std::map<ir::VarId, const ir::Stmt*>& defs,
                                  int depth) const;
  std::optional<int64_t> known_extent(const SizeExpr& extent) const;
  // A sum `sum c. [P] * e` (e never a strong zero) is one exactly where no c in its range
  // satisfies P. With P a conjunction of affine constraints whose coefficients of the sum's
  // variables are 1 or -1 and the extents known, Fourier-Motzkin eliminates them exactly: the
  // projection is where the sum has a live term, and the predicate is its negation.
  std::optional<Pred> empty_sum_pred(const ir::ReduceOp& red,
                                     const std::map<ir::VarId, const ir::Stmt*>& defs,
                                     int depth) const;
  // The mark predicate of `mp` at the indices of a read (affine in the reader's variables).
  static std::optional<Pred> at_indices(const MarkPred& mp, const std::vector<ir::IndexExpr>& idx);
  // Whether the guards around the read (scope_.facts) rule `p` out: every clause of its disjunctive
  // normal form (at most 64) is infeasible with them.
  bool never_holds(const Pred& p) const;
  // Whether `p` has no integer solution together with `known` (each `e >= 0`): every clause of
  // its disjunctive normal form (at most 64) is infeasible with them, by Fourier-Motzkin.
  static bool infeasible(const Pred& p, const std::vector<Affine>& known);
  // Whether a mask may say "strong zero" (a sum's mask without masked terms is ordinary or an
  // empty sum, never one).
  bool may_be_strong(const ExprP& m) const;
  // A local holding mask m, remembered as never a strong zero when m cannot be one.
  ExprP declare_mask(const ExprP& m, const std::string& hint);
  ExprP strong_byte(const ExprP& m) const;
  // The mask of element `off` of tensor t: a strong zero where the whole tensor or the element
  // is one.
  ExprP element_mask(const Val& t, const ExprP& off) const;
  // Loops over k in [0, n), emitting body(k).
  template <class F>
  void for_elements(const ExprP& n, const std::string& hint, F&& body) {
    LocalId k = out_.new_local(hint, Scalar::I64);
    Body b = nested([&] { body(local(out_, k)); });
    emit(For{k, lit_i64(0), n, std::move(b), false});
  }
  // A strong zero about to be stored in `where` (a buffer or local) that keeps no mask.
  [[noreturn]] void lost_marks(LocalId where) const;

  static ExprP zero_of(Scalar t);

  // --- the entry point's ports (lower.cpp) ---
  Val input(const Type& t, const std::string& hint);
  Val make_output(const Type& t);

  // --- blocks (lower_stmts.cpp) ---
  // Lowers `b`; when `dests` is given, writes result k into (*dests)[k], building a result
  // computed by a statement of `b` in place (destination-passing style).
  std::vector<Val> lower_block(const ir::Block& b, const std::vector<Val>* dests);
  static bool defined_in(const ir::Block& b, ir::VarId v);

  void lower_stmt(const ir::Stmt& s);

  // --- scalar primitives (lower_stmts.cpp) ---
  void lower_prim(const ir::Stmt& s, const ir::PrimOp& op);
  static bool is_checked_int(Prim p, const std::vector<ExprP>& args);
  ExprP checked_int(const ir::Stmt& s, Prim p, const std::vector<ExprP>& args);

  // --- reads (lower_reads.cpp) ---
  // The value of an affine index (overflow-checked unless the ranges prove it fits).
  ExprP affine(const Affine& a, Span span);
  ExprP index_value(const ir::IndexExpr& e, Span span);
  // Fails unless 0 <= i < dims[d] (reporting as the interpreter does). `affine`, when the index
  // is affine, lets the enclosing guards' facts prove it.
  void check_index(const ExprP& i, const Val& t, size_t d, Span span, Site::Kind kind,
                   const std::string& name, const Affine* affine = nullptr);
  // Row-major strides' offset of the leading indices.
  static ExprP flat_offset(const Val& t, const std::vector<ExprP>& idx);
  void lower_index(const ir::Stmt& s, const ir::IndexOp& op);

  // --- index spaces (lower_index_spaces.cpp) ---
  // The extents of an index space; negative ones fail (generators, as the interpreter checks
  // them before allocating) or give empty ranges.
  std::vector<ExprP> extents(const std::vector<ir::IndexVar>& ivars, Span span,
                             bool allow_negative);
  // What a nest of loops over points may assume: a reduction's points run in order; a
  // generator's are independent, and its outermost loop may fork threads (the outermost
  // generator of the function only: For::parallel).
  enum class PointLoops { Ordered, Independent, Parallel };
  // Nested For loops over `ivars` (row-major), the index variables bound; `body` gets the
  // point's row-major number.
  template <class F>
  void for_points(const std::vector<ir::IndexVar>& ivars, const std::vector<ExprP>& ext,
                  PointLoops kind, F&& body) {
    points(ivars, ext, 0, lit_i64(0), kind, body);
    scope_.tighten = nullptr;  // set by the caller for these loops only
    scope_.tighten_strong = -1;
  }
  void points(const std::vector<ir::IndexVar>& ivars, const std::vector<ExprP>& extents, size_t d,
              ExprP linear, PointLoops kind, const std::function<void(ExprP)>& body);

  // a - b when it is a constant: both linear in the same locals with the same coefficients.
  static std::optional<int64_t> constant_difference(const ExprP& a, const ExprP& b);
  // Adds k * e to (terms, constant) when e is a sum of literal multiples of locals.
  static bool linear_form(const ExprP& e, int64_t k, std::map<LocalId, int64_t>& terms,
                          int64_t& constant);
  // max and min of i64 expressions, folded when the ranges decide them.
  ExprP max_i64(const ExprP& a, const ExprP& b);
  ExprP min_i64(const ExprP& a, const ExprP& b);

  // The range [lo, hi) of index variable d of a region whose every point outside it fails the
  // guard `p` (loop bounds tightened by predicates: a guarded triangular sum runs a triangular
  // loop). Uses the conjuncts `±i + rest >= 0` and `±i + rest == 0` whose `rest` mentions only
  // variables bound outside i and provably does not overflow.
  std::pair<ExprP, ExprP> tightened(const Pred& p, const std::vector<ir::IndexVar>& ivars, size_t d,
                                    const ExprP& extent);
  // e >= 0 follows from a known fact f >= 0 (an enclosing guard's conjunct) and the ranges:
  // e - f is provably non-negative.
  bool implied_nonnegative(const Affine& e);
  // The facts a predicate that holds gives: its affine conjuncts (an equality as two).
  static void facts_of(const Pred& p, std::vector<Affine>& out);
  // The conjuncts of a predicate (itself when it is not a conjunction).
  static std::vector<const Pred*> conjuncts(const Pred& p);
  // Every conjunct of `p` is one of the bounds of the loops being lowered.
  bool implies_all(const Pred& p) const;
  // An affine value as one expression when ranges prove that no step overflows.
  std::optional<ExprP> pure_affine(const Affine& a);
  // Every affine conjunct of `p` evaluates without overflow at every point (so skipping the
  // points where it fails cannot skip an error the interpreter would report).
  bool overflow_free(const Pred& p);
  // The guard of a region body that is one guard statement yielding result `k`, or null.
  static const Pred* single_guard(const ir::Block& body, size_t k);
  // Whether the loops over `ivars` may skip the points where `p` fails: every affine conjunct
  // evaluates without overflow anywhere in the index space (checked with the index variables
  // bound to their ranges).
  bool may_tighten(const Pred& p, const std::vector<ir::IndexVar>& ivars,
                   const std::vector<ExprP>& ext);

  // --- generators (lower_gen_reduce.cpp) ---
  void lower_gen(const ir::Stmt& s, const ir::GenOp& op);
  // Whether v's buffer is its own (not a destination whose marks a parent reads).
  bool pending_free_marks(ir::VarId v) const;
  void attach_mark_pred(ir::VarId v, Val& x) const;

  // --- reductions (lower_gen_reduce.cpp) ---
  void lower_reduce(const ir::Stmt& s, const ir::ReduceOp& op);
  // Element marks of a sum or accum into dst (interp/marks.h's SumMarks): dst's marks say
  // which elements a strong-zero term reached and a second buffer, returned, which a live
  // one did; finish_marks keeps the first where the second is not set. -1 without marks.
  LocalId start_marks(const Val& dst, const std::string& hint);
  // dst[at ...] += the elements of x (tensor or scalar) that are not marked; `rel` is `at`
  // relative to dst's offset (the index into the live flags).
  void add_marked(const Val& dst, const ExprP& at, const ExprP& rel, const Val& x,
                  LocalId live_marks);
  // A term whose whole mask says strong zero marks its `n` elements at `at` (where `cond`).
  void mark_strong(const Val& dst, const ExprP& at, const ExprP& n, const ExprP& mask,
                   const ExprP& cond);
  void finish_marks(const Val& dst, LocalId live_marks);
  // Emits `combine` for term `x` of a reduction, keeping the flags of its mask: `live` (a term
  // that is not masked) and `strong` (a strong zero); a sum skips masked terms.
  void add_term(const Val& x, bool is_sum, bool& masked_terms, LocalId live, LocalId strong,
                Body combine);
  // Where a reduction starts: 0 for sums (and i64), -inf for max, +inf for min.
  static ExprP reduction_start(ir::ReduceKind how, Scalar elem);
  static ExprP real_combine(ir::ReduceKind how, ExprP acc, ExprP x);
  // A sum's mask: ordinary when a term was live; else a strong zero when a term was one, and an
  // empty sum otherwise (interp/eval_regions.cpp).
  ExprP sum_mask(bool masked_terms, LocalId live, LocalId strong, const ExprP& points);

  // --- guards and conditionals (lower_control.cpp) ---
  std::vector<Val> slots_for(const ir::Stmt& s, bool masked);
  void lower_guard(const ir::Stmt& s, const ir::GuardOp& op);
  void lower_if(const ir::Stmt& s, const ir::IfOp& op);
  // A predicate's truth, short-circuiting like the interpreter (Pred::eval), with overflow
  // checks only where the ranges cannot rule overflow out.
  ExprP pred(const Pred& p, Span span);
  // The value of an affine expression, each step checked for overflow (failing at a copy of
  // `st`) unless literals or ranges prove it fits.
  ExprP affine_checked(const Affine& a, const Site& st);

  // --- in-place point updates of loop state (lower_update.cpp) ---
  // A tensor state whose next value is a generator that is a point update of it
  // (ir/point_update.h), its only use in the body: its changed slices are stored into the
  // state's own buffer at the end of the step (where the swap was), so every read of the old
  // state in the step sees it unchanged. `mode` says what loop_step did at the generator.
  struct PointUpdatePlan {
    const ir::Stmt* gen = nullptr;
    ir::PointUpdate update;
    // None: lowered as any generator (into the next buffer, swapped). InPlace: the boxes
    // only; no next buffer. Guarded: the boxes where a run-time test of the values the pins
    // use proves the unchanged points' work overflow-free, else as any generator.
    enum class Mode : uint8_t { None, InPlace, Guarded };
    Mode mode = Mode::None;
    LocalId fast = -1;                  // Guarded: the test's outcome
    std::vector<LocalId> pins, in_box;  // per box: the pinned index, and whether it is in range
    std::vector<Val> values;            // per box: a scalar slot, or a buffer over the free indices
    // adds_zero (the unchanged points are s[I] + 0.0): the previous step's boxes, whose -0.0
    // this step turns into +0.0, and whether every element must be (the first step, or after
    // a step lowered as any generator).
    std::vector<LocalId> prev_pins, prev_in_box;
    LocalId all_fresh = -1;
  };

  // --- loops (lower_control.cpp) ---
  void lower_loop(const ir::Stmt& s, const ir::LoopOp& op);
  // A loop's state: scalars in locals, tensors in two buffers (current, next)
  // swapped per step.
  struct LoopState {
    std::vector<Val> cur, next;
    // The allocations of the next buffers of states that may be updated in place: emitted
    // before the loop only if the step needs them.
    std::vector<Body> next_allocs;
    std::vector<size_t> next_at;  // where in the enclosing body
  };
  LoopState loop_state(const ir::Stmt& s, const ir::LoopOp& op,
                       const std::vector<std::optional<PointUpdatePlan>>& updates);
  // A saving loop's saved states (LoopOp::saves_states): a stack per state
  // variable, of at most `allowed` rows of `numels` elements (the interpreter's
  // tensor limit over the state's elements), and the site that reports a stack
  // over it.
  struct SavedStates {
    std::vector<Val> stacks;
    std::vector<ExprP> numels, allowed;
    std::vector<int> sites;
  };
  // The stacks allocated (for-loops: `count` rows at most) or initialized
  // (while-loops).
  SavedStates saved_states(const ir::Stmt& s, const ir::LoopOp& op, const std::vector<Val>& cur,
                           const ExprP& count);
  std::vector<std::optional<PointUpdatePlan>> find_point_updates(const ir::LoopOp& op) const;
  // At the generator: the boxes' values computed from the old state (into plan.values), or
  // false (nothing emitted) when the update cannot be lowered in place here.
  bool lower_point_update(const ir::Stmt& s, const ir::GenOp& op, const Val& cur, const Val& next,
                          PointUpdatePlan& plan);
  // At the end of the step: the changed slices stored into the state's buffer.
  void store_point_update(const ir::GenOp& op, const Val& cur, const Val& next,
                          const PointUpdatePlan& plan);

  // One iteration: the body lowered into the next state, which then becomes the
  // current one (in place for the states `updates` plans).
  void loop_step(const ir::LoopOp& op, const std::vector<Val>& cur, const std::vector<Val>& next,
                 std::vector<std::optional<PointUpdatePlan>>& updates);

  // --- scatter-add (lower_accum.cpp) ---
  void lower_accum(const ir::Stmt& s, const ir::AccumOp& op);

  // --- state ---
  // What is lowered: the input, its function, and where strong zeros can flow
  // (fixed).
  const LowerInput& in_;
  const ir::Function& f_;
  const ir::StrongZeroFlow flow_;

  // The loop function being built; statements go to the innermost body being
  // filled (bodies_.back(): the function's, or one nested() opened).
  // max_while_: the bound on every while-loop's iterations, a local run()
  // declares.
  LoopFunction out_;
  std::vector<Body*> bodies_;
  LocalId max_while_ = -1;

  // What each Core IR variable is, and where statements not yet lowered must
  // put their results.
  struct Environment {
    std::vector<std::optional<Val>> vals;  // by VarId; empty until the variable is bound
    // Destinations a block's results have (lower_block sets them for the
    // statements of the block that compute them, alloc_for takes them; erased
    // when the block is done).
    std::map<ir::VarId, Val> pending_dest;
    std::set<ir::VarId> own_buffer;  // tensors alloc_for allocated (not a pending destination)
  };
  Environment env_;

  // What is known of integers: the ranges of i64 locals (bounds of the loops
  // being lowered, or facts about a value declared), and the value of each size
  // variable by name.
  struct Integers {
    std::map<LocalId, Interval> ranges;
    std::map<std::string, ExprP> sizes;
    // Sizes computed at run time at the function's top level, by spelling (so
    // reused anywhere).
    std::map<std::string, ExprP> runtime_sizes;
  };
  Integers ints_;

  // Strong zeros (docs/language.md §5.6): what is known of where they can be.
  struct StrongZeros {
    std::set<LocalId> never_strong;  // mask locals that cannot hold a strong zero
    std::set<LocalId> marks_set;     // mark buffers some write may set to 1
    // Generators whose reads evaluate a predicate instead of loading marks
    // (find_mark_preds, once, before the body is lowered).
    std::map<ir::VarId, MarkPred> mark_preds;
    // Only while find_mark_preds looks at one generator: its index ranges
    // (empty when unknown).
    std::vector<Affine> gen_ranges;
  };
  StrongZeros zeros_;

  // The guards and loops around the statement being lowered. Each field is set
  // by the method that opens the region and restored (or cleared) when it
  // closes, so they hold only there.
  struct Scope {
    // While lowering the loops of a region whose body is one guard (set by
    // lower_reduce, lower_accum just before for_points,
    // cleared by it): the guard's predicate, whose points the loop bounds skip,
    // and the flag that records skipped strong zeros (-1: none kept).
    const Pred* tighten = nullptr;
    LocalId tighten_strong = -1;
    std::vector<const Pred*> implied;  // conjuncts the enclosing loops' bounds enforce
    std::vector<Affine> facts;         // affine facts (>= 0) of the guards being lowered
    const Pred* guard_true = nullptr;  // a guard those bounds make always true
    // The whole predicate of the guard or read being lowered, which pred()
    // names in messages.
    Pred whole_pred;
    // Generators, reductions, scatter-adds and loops around: 0 at the top
    // level, where the outermost generator's loop may run in parallel.
    int loop_depth = 0;
  };
  Scope scope_;
};

}  // namespace cot::codegen::lowering
