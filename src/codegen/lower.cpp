// Lowering Core IR to the loop IR. One method per Core IR operation; values are `Val`s: a scalar
// expression, a view of a tensor (pointer, offset, concrete dims), or a tuple of them, each with
// the strong-zero mask the interpreter keeps (language.md §5.6: a product with a strong zero is
// 0 even when the other factor is infinite), tracked only where one can arise.
#include "codegen/lower.h"

#include <algorithm>
#include <cstdlib>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "codegen/expr.h"
#include "codegen/may_fail.h"
#include "index/fourier_motzkin.h"
#include "ir/regions.h"
#include "ir/strong_zero_flow.h"
#include "ir/uses.h"
#include "runtime/size_checks.h"
#include "runtime/tensor_shapes.h"

namespace cot::codegen {

namespace {

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

  LoopFunction run() {
    out_.name = in_.name;
    env_.resize(f_.vars.size());
    bodies_.push_back(&out_.body);
    message_site(f_.span, "out of memory");  // site 0, which the emitter's allocations use
    max_while_ = out_.new_local("max_while_iterations", Scalar::I64);
    // Sizes bound by parameters are constants of this specialization, or (ahead of time) the
    // entries of the sizes array, checked to be non-negative.
    LocalId sizes_in = -1;
    if (in_.runtime_sizes) {
      sizes_in = out_.new_local("sizes", Scalar::I64, true);
      out_.inputs.push_back(Port{sizes_in, Scalar::I64, -1});
    }
    int64_t next_size = 0;
    for (size_t k = 0; k < f_.size_vars.size(); ++k) {
      const ir::SizeVar& sv = f_.size_vars[k];
      if (sv.param == -1) continue;
      ExprP v;
      if (in_.runtime_sizes) {
        v = declare(load(Scalar::I64, sizes_in, lit_i64(next_size++)), sv.name);
        fail_unless(prim(Prim::Ge, {v, lit_i64(0)}),
                    message_site(f_.span, "the size " + sv.name + " is negative",
                                 "pass the sizes of the arguments in the sizes array"));
        ranges_[v->local] = Interval{0, INT64_MAX};
      } else {
        v = lit_i64(in_.size_values.at(k));
      }
      sizes_[sv.name] = v;
      if (sv.var >= 0) bind(sv.var, scalar_val(v, Scalar::I64));
    }
    for (size_t i = 0; i < f_.params.size(); ++i) {
      bind(f_.params[i], input(f_.param_type(i), name_of(f_.params[i])));
    }
    find_mark_preds();  // once the sizes are known
    Val result = make_output(f_.result_type);
    std::vector<Val> dests{result};
    lower_block(f_.body, &dests);
    return std::move(out_);
  }

 private:
  // --- environment ---
  void bind(ir::VarId v, Val x) { env_.at(static_cast<size_t>(v)) = std::move(x); }
  const Val& val(ir::VarId v) const {
    const auto& x = env_.at(static_cast<size_t>(v));
    if (!x) throw Unsupported{"variable " + name_of(v) + " is used before it is bound"};
    return *x;
  }
  std::string name_of(ir::VarId v) const {
    if (v < 0 || static_cast<size_t>(v) >= f_.vars.size()) return "#" + std::to_string(v);
    const std::string& n = f_.vars[static_cast<size_t>(v)].name;
    return n.empty() ? "this tensor" : n;
  }
  std::string c_hint(ir::VarId v) const {
    std::string n = v >= 0 && static_cast<size_t>(v) < f_.vars.size()
                        ? f_.vars[static_cast<size_t>(v)].name
                        : std::string();
    return n.empty() ? "t" : n;
  }
  static Val scalar_val(ExprP e, Scalar t, ExprP mask = nullptr) {
    Val x;
    x.kind = Val::Kind::Scalar;
    x.type = t;
    x.scalar = std::move(e);
    x.mask = std::move(mask);
    return x;
  }
  Val atom_val(const ir::Atom& a) const {
    if (!a.is_var) return scalar_val(lit_of(a.lit), a.lit.type);
    return val(a.var);
  }
  ExprP atom(const ir::Atom& a) const {
    Val x = atom_val(a);
    if (x.kind != Val::Kind::Scalar) throw Unsupported{"a scalar operand is a tensor or tuple"};
    return x.scalar;
  }

  // --- emission ---
  void emit(StmtOp op) { bodies_.back()->push_back(Stmt{std::move(op)}); }
  template <class F>
  Body nested(F&& f) {
    Body b;
    bodies_.push_back(&b);
    f();
    bodies_.pop_back();
    return b;
  }
  int site(Site s) {
    out_.sites.push_back(std::move(s));
    return static_cast<int>(out_.sites.size() - 1);
  }
  int message_site(Span span, std::string message, std::string help = {}) {
    Site s;
    s.span = span;
    s.message = std::move(message);
    s.help = std::move(help);
    return site(std::move(s));
  }
  void fail(int site_id, std::vector<ExprP> values = {}) { emit(Fail{site_id, std::move(values)}); }
  void fail_unless(ExprP cond, int site_id, std::vector<ExprP> values = {}) {
    if (auto c = as_bool(cond); c && *c) return;
    Body then_body = nested([&] { fail(site_id, std::move(values)); });
    emit(If{not_(std::move(cond)), std::move(then_body), {}});
  }
  // A local holding `e` (or `e` itself when it is a literal or a local already).
  ExprP declare(ExprP e, const std::string& hint) {
    if (e->kind == Expr::Kind::Lit || e->kind == Expr::Kind::Local) return e;
    LocalId l = out_.new_local(hint, e->type);
    emit(Declare{l, e});
    if (e->type == Scalar::I64) {
      if (auto r = range(e)) ranges_[l] = *r;
    }
    return local(out_, l);
  }
  LocalId mutable_local(const std::string& hint, Scalar t, ExprP init, bool mask = false) {
    LocalId l = out_.new_local(hint, t, false, mask);
    emit(Declare{l, std::move(init)});
    return l;
  }

  // --- integer ranges: what interval reasoning over concrete extents proves ---
  std::optional<Interval> range(const ExprP& e) const {
    if (!e || e->type != Scalar::I64) return std::nullopt;
    switch (e->kind) {
      case Expr::Kind::Lit:
        return Interval{e->lit.integer, e->lit.integer};
      case Expr::Kind::Local: {
        auto it = ranges_.find(e->local);
        if (it == ranges_.end()) return std::nullopt;
        return it->second;
      }
      case Expr::Kind::Prim: {
        std::vector<Interval> rs;
        for (const ExprP& a : e->args) {
          if (a->type != Scalar::I64) {
            if (e->prim == Prim::Select) continue;
            return std::nullopt;
          }
          auto r = range(a);
          if (!r) return std::nullopt;
          rs.push_back(*r);
        }
        using W = __int128;
        auto fits = [](W lo, W hi) -> std::optional<Interval> {
          if (lo < INT64_MIN || hi > INT64_MAX) return std::nullopt;
          return Interval{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
        };
        switch (e->prim) {
          case Prim::Add:
            return fits(W(rs[0].first) + rs[1].first, W(rs[0].second) + rs[1].second);
          case Prim::Sub:
            return fits(W(rs[0].first) - rs[1].second, W(rs[0].second) - rs[1].first);
          case Prim::Neg:
            return fits(-W(rs[0].second), -W(rs[0].first));
          case Prim::Mul: {
            W c[4] = {W(rs[0].first) * rs[1].first, W(rs[0].first) * rs[1].second,
                      W(rs[0].second) * rs[1].first, W(rs[0].second) * rs[1].second};
            return fits(*std::min_element(c, c + 4), *std::max_element(c, c + 4));
          }
          case Prim::Max:
            return Interval{std::max(rs[0].first, rs[1].first),
                            std::max(rs[0].second, rs[1].second)};
          case Prim::Min:
            return Interval{std::min(rs[0].first, rs[1].first),
                            std::min(rs[0].second, rs[1].second)};
          case Prim::Select:
            if (rs.size() != 2) return std::nullopt;
            return Interval{std::min(rs[0].first, rs[1].first),
                            std::max(rs[0].second, rs[1].second)};
          default:
            return std::nullopt;
        }
      }
      default:
        return std::nullopt;
    }
  }

  // a OP b on i64, checked unless the ranges prove it cannot overflow.
  ExprP int_op(Prim p, ExprP a, ExprP b, int site_id) {
    ExprP e = p == Prim::Add ? add_i64(a, b) : p == Prim::Sub ? sub_i64(a, b) : mul_i64(a, b);
    if (as_i64(e) || range(e)) return e;
    // Folding failed on literals (an overflow) or nothing is known: check at run time.
    LocalId l = out_.new_local("i", Scalar::I64);
    emit(CheckedInt{l, p, {std::move(a), std::move(b)}, site_id});
    return local(out_, l);
  }

  // --- sizes ---
  ExprP size(const SizeExpr& s, Span span) {
    std::string why;
    bool dynamic = false;
    std::optional<int64_t> v = s.eval(
        [&](const std::string& n) -> std::optional<int64_t> {
          auto it = sizes_.find(n);
          if (it == sizes_.end()) return std::nullopt;
          if (auto c = as_i64(it->second)) return *c;
          dynamic = true;
          return std::nullopt;
        },
        &why);
    if (v) return lit_i64(*v);
    if (dynamic) return runtime_size(s, span);
    fail(message_site(span, "cannot evaluate the size " + s.to_string() + ": " + why));
    return lit_i64(0);
  }
  // A size whose variables are known only at run time (a loop's trip count, or every size in
  // code compiled ahead of time): its normal form evaluated with overflow and exactness checks.
  ExprP runtime_size(const SizeExpr& s, Span span) {
    const std::string text = s.to_string();
    if (auto it = runtime_sizes_.find(text); it != runtime_sizes_.end()) return it->second;
    const int over = message_site(span, "integer overflow in the size " + text);
    ExprP acc = lit_i64(0);
    for (const SizeExpr::Term& t : s.normal_terms()) {
      ExprP prod = lit_i64(t.coeff);
      for (const SizeExpr::Factor& f : t.factors) {
        ExprP v;
        if (!f.var.empty()) {
          auto it = sizes_.find(f.var);
          if (it == sizes_.end()) throw Unsupported{"the size " + f.var + " has no value"};
          v = it->second;
        } else {
          ExprP n = size(*f.num, span), d = size(*f.den, span);
          LocalId q = out_.new_local("q", Scalar::I64);
          emit(CheckedInt{
              q,
              Prim::ExactDiv,
              {n, d},
              message_site(span, "cannot evaluate the size " + text + ": size expression " + f.key +
                                     " does not divide exactly (or divides by "
                                     "zero)")});
          v = local(out_, q);
        }
        prod = int_op(Prim::Mul, prod, v, over);
      }
      acc = int_op(Prim::Add, acc, prod, over);
    }
    acc = declare(acc, "size");
    // Reused only where every later use is in scope: at the function's top level.
    if (bodies_.size() == 1) runtime_sizes_[text] = acc;
    return acc;
  }
  std::vector<ExprP> shape_of(const Type& t, Span span) {
    std::vector<ExprP> dims;
    for (const SizeExpr& d : t.shape) dims.push_back(size(d, span));
    return dims;
  }
  // --- buffers ---
  // Why a tensor of these dims cannot be built (interp::size_error, the interpreter's check and
  // words), when every dim is a literal; nullopt when it can, or when a dim is known only at
  // run time (check_size checks those).
  std::optional<std::string> static_size_error(const std::vector<ExprP>& dims,
                                               interp::SizeRule rule, size_t index_rank) const {
    std::vector<int64_t> shape;
    for (const ExprP& d : dims) {
      auto c = as_i64(d);
      if (!c) return std::nullopt;
      shape.push_back(*c);
    }
    return interp::size_error(rule, shape, index_rank, in_.max_tensor_elements);
  }
  // Fails at `span`, with the interpreter's message, unless a tensor of these dims can be built
  // under `rule`. Dims known only at run time are checked there without overflowing; the site
  // reports them and the host words the failure with the same interp::size_error.
  void check_size(const std::vector<ExprP>& dims, interp::SizeRule rule, size_t index_rank,
                  Span span) {
    bool all_static = true;
    for (const ExprP& d : dims) all_static = all_static && as_i64(d).has_value();
    if (all_static) {
      if (auto why = static_size_error(dims, rule, index_rank)) fail(message_site(span, *why));
      return;
    }
    Site s;
    s.kind = Site::Kind::TensorLimit;
    s.span = span;
    s.size_rule = rule;
    s.dim = static_cast<int>(index_rank);
    s.limit = in_.max_tensor_elements;
    // The run-time dims are reported (-1 in the shape); past kMaxSiteValues of them, they are
    // not (-2: the message shows "?").
    std::vector<ExprP> reported;
    for (const ExprP& d : dims) {
      auto c = as_i64(d);
      const bool room = reported.size() < static_cast<size_t>(kMaxSiteValues);
      s.shape.push_back(c ? *c : room ? -1 : -2);
      if (!c && room) reported.push_back(d);
    }
    // bad: a dim is negative, a product the rule takes overflows, or the count is over the
    // limit. A product p * d (p, d >= 0) overflows iff d > 0 and p > INT64_MAX / d.
    ExprP bad = lit_bool(false);
    for (const ExprP& d : dims) bad = or_(bad, prim(Prim::Lt, {d, lit_i64(0)}));
    auto overflows = [&](size_t from, size_t to, bool whole) {
      LocalId p = mutable_local("count", Scalar::I64, lit_i64(1));
      LocalId over = mutable_local("overflow", Scalar::Bool, lit_bool(false));
      for (size_t k = from; k < to; ++k) {
        const ExprP d = prim(Prim::Max, {dims[k], lit_i64(0)});
        const ExprP pk = local(out_, p);
        emit(Assign{
            over,
            or_(local(out_, over),
                and_(prim(Prim::Gt, {d, lit_i64(0)}),
                     prim(Prim::Gt, {pk, prim(Prim::Div, {lit_i64(INT64_MAX),
                                                          prim(Prim::Max, {d, lit_i64(1)})})})))});
        emit(Assign{p, mul_i64(pk, select(local(out_, over), lit_i64(0), d))});
      }
      ExprP r = local(out_, over);
      if (whole) r = or_(r, prim(Prim::Gt, {local(out_, p), lit_i64(in_.max_tensor_elements)}));
      return r;
    };
    const size_t r = std::min(index_rank, dims.size());
    // Each level's element shape of a generator (interp::SizeRule::Generator).
    if (rule == interp::SizeRule::Generator) {
      // Level k runs only where the extents outside it are positive.
      ExprP runs = lit_bool(true);
      for (size_t k = std::min<size_t>(1, r); k <= r; ++k) {
        if (k >= 2) runs = and_(runs, prim(Prim::Gt, {dims[k - 2], lit_i64(0)}));
        bad = or_(bad, and_(runs, overflows(k, dims.size(), false)));
      }
    }
    if (rule == interp::SizeRule::Accum) {
      bad = or_(bad, overflows(r, dims.size(), false));
      bad = or_(bad, overflows(0, r, false));
    }
    bad = or_(bad, overflows(0, dims.size(), true));
    fail_unless(not_(declare(bad, "bad_size")), site(std::move(s)), std::move(reported));
  }
  // A fresh tensor of these dims, built under `rule` (checked first). `deferred`: a slot that
  // statements build later (an `if`'s or a guard's result); a shape that cannot be built is
  // then not checked here but by its writer (alloc_for, assign_zero), where the interpreter
  // allocates, and the buffer gets no elements.
  Val alloc_tensor(Scalar elem, std::vector<ExprP> dims, Span span, const std::string& hint,
                   interp::SizeRule rule = interp::SizeRule::Tensor, size_t index_rank = 0,
                   bool deferred = false, bool marks = false) {
    Val x;
    x.kind = Val::Kind::Tensor;
    x.type = elem;
    x.dims = std::move(dims);
    x.offset = lit_i64(0);
    const bool cannot_build = static_size_error(x.dims, rule, index_rank).has_value();
    if (deferred && cannot_build) {
      x.check_at_writer = true;
    } else {
      check_size(x.dims, rule, index_rank, span);
    }
    ExprP n = lit_i64(1);
    if (cannot_build) {
      // Never written when it has failed; a deferred slot a value that exists is copied into
      // (an argument over the tensor limit, passed through an `if`) takes its memory from the
      // heap, where it costs address space only until it is written. Only an argument (or a
      // slice of one) can exist over the limit, so a slot larger than every argument needs
      // none: asking the heap for it would fail at entry with "out of memory" before the
      // statement could report the interpreter's error.
      std::vector<int64_t> shape;
      for (const ExprP& d : x.dims) shape.push_back(*as_i64(d));
      auto count = interp::element_count(shape);
      const bool an_argument_fits =
          count && std::any_of(out_.inputs.begin(), out_.inputs.end(),
                               [&](const Port& p) { return p.count >= *count; });
      n = deferred && an_argument_fits
              ? local(out_, mutable_local("n", Scalar::I64, lit_i64(*count)))
              : lit_i64(0);
    } else {
      for (const ExprP& d : x.dims) n = mul_i64(n, d);
      if (!as_i64(n)) n = declare(n, "n");
    }
    if (!as_i64(n)) out_.uses_heap = true;
    x.pointer = out_.new_local(hint, elem, true);
    emit(Alloc{.pointer = x.pointer, .count = n});
    if (marks) {
      x.mask_pointer = out_.new_local(hint + "_marks", Scalar::Bool, true);
      emit(Alloc{.pointer = x.mask_pointer, .count = n});
    }
    return x;
  }
  // The buffer a statement binding `v` writes: its consumer's destination when one is pending,
  // checked as the interpreter checks what the statement allocates (`rule`); `deferred` as
  // alloc_tensor's, for a slot that the statement's own statements write.
  Val alloc_for(ir::VarId v, Span span, interp::SizeRule rule = interp::SizeRule::Tensor,
                size_t index_rank = 0, bool deferred = false) {
    auto it = pending_dest_.find(v);
    if (it != pending_dest_.end()) {
      Val d = it->second;
      pending_dest_.erase(it);
      // A destination that keeps marks, for a value with none: its writer writes no marks, and
      // the final assign (not in place for the marks) clears them.
      if (!needs_marks(v)) d.mask_pointer = -1;
      d.drops_marks = d.drops_marks || marks_unread(v);
      if (d.check_at_writer && !deferred) {
        check_size(d.dims, rule, index_rank, span);
        d.check_at_writer = false;
      } else if (!deferred) {
        // Checked as a tensor already; a generator's element shape or an accum's cells may
        // still fail (a result of shape [0, 2^40, 2^40]). A slot of a parent that passed cannot.
        if (auto why = static_size_error(d.dims, rule, index_rank)) fail(message_site(span, *why));
      }
      return d;
    }
    const Type& t = f_.type_of(v);
    own_buffer_.insert(v);
    Val x = alloc_tensor(t.elem, shape_of(t, span), span, c_hint(v), rule, index_rank, deferred,
                         needs_marks(v));
    x.drops_marks = marks_unread(v);
    return x;
  }
  Val view(const Val& t, ExprP offset, std::vector<ExprP> dims) const {
    Val x;
    x.kind = Val::Kind::Tensor;
    x.type = t.type;
    x.pointer = t.pointer;
    x.mask_pointer = t.mask_pointer;
    x.drops_marks = t.drops_marks;
    x.offset = std::move(offset);
    x.dims = std::move(dims);
    return x;
  }

  // Storage for a value of type `t` that branches or iterations assign: scalar locals (with a
  // mask local when `masked`; a tensor's element marks when `marks`) and fresh tensors.
  Val make_slot(const Type& t, Span span, const std::string& hint, bool masked,
                bool marks = false) {
    Val x;
    if (t.is_tuple) {
      x.kind = Val::Kind::Tuple;
      for (const Type& e : t.elems) x.elems.push_back(make_slot(e, span, hint, masked, marks));
    } else if (t.is_tensor()) {
      x = alloc_tensor(t.elem, shape_of(t, span), span, hint, interp::SizeRule::Tensor, 0, true,
                       marks && is_real(t.elem));
    } else {
      x = scalar_val(local(out_, mutable_local(hint, t.elem, nullptr)), t.elem);
    }
    if (masked && (!x.is_tensor() || is_real(x.type))) add_mask_local(x, hint);
    return x;
  }
  void add_mask_local(Val& x, const std::string& hint) {
    x.mask = local(out_, mutable_local(hint + "_mask", Scalar::I64, lit_i64(0), true));
  }
  // slot := v (copies tensors; same structure).
  void assign(const Val& slot, const Val& v) {
    switch (slot.kind) {
      case Val::Kind::Scalar:
        emit(Assign{slot.scalar->local, v.scalar});
        break;
      case Val::Kind::Tensor:
        if (!v.is_tensor()) {
          emit(Store{slot.pointer, slot.offset, v.scalar});  // a rank-0 port or slot
          if (slot.mask_pointer >= 0) {
            ExprP b = strong_byte(v.mask);
            if (as_bool(b) != false) marks_set_.insert(slot.mask_pointer);
            emit(Store{slot.mask_pointer, slot.offset, std::move(b)});
          } else if (!slot.drops_marks && !slot.mask && may_be_strong(v.mask)) {
            lost_marks(slot.pointer);
          }
        } else {
          if (!(v.pointer == slot.pointer && v.offset == slot.offset)) {
            if (static_size_error(slot.dims, interp::SizeRule::Tensor, 0)) {
              for (Port& p : out_.outputs) {
                p.copied_into = p.copied_into || p.pointer == slot.pointer;
              }
            }
            copy(slot, v);  // not written in place
          }
          assign_marks(slot, v);
        }
        break;
      case Val::Kind::Tuple:
        for (size_t k = 0; k < slot.elems.size(); ++k) assign(slot.elems[k], v.elems.at(k));
        break;
    }
    if (slot.mask) emit(Assign{slot.mask->local, v.mask ? v.mask : lit_i64(0)});
  }
  void copy(const Val& dst, const Val& src) {
    emit(Copy{dst.pointer, dst.offset, src.pointer, src.offset, dst.numel()});
  }
  // The element marks of tensor slot := those of tensor v (its whole strong zero included
  // when the slot has no mask of its own).
  void assign_marks(const Val& slot, const Val& v) {
    if (slot.mask_pointer < 0) {
      if (!slot.drops_marks && (v.mask_pointer >= 0 || (!slot.mask && may_be_strong(v.mask)))) {
        lost_marks(slot.pointer);
      }
      return;
    }
    if (!(v.mask_pointer == slot.mask_pointer && v.offset == slot.offset)) {
      if (v.mask_pointer >= 0) {
        if (marks_set_.count(v.mask_pointer) != 0) marks_set_.insert(slot.mask_pointer);
        emit(Copy{slot.mask_pointer, slot.offset, v.mask_pointer, v.offset, slot.numel()});
      } else {
        emit(Fill{slot.mask_pointer, slot.offset, slot.numel(), lit_bool(false)});
      }
    }
    if (!slot.mask && may_be_strong(v.mask)) {
      marks_set_.insert(slot.mask_pointer);
      Body all = nested([&] {
        emit(Fill{slot.mask_pointer, slot.offset, slot.numel(), lit_bool(true)});
      });
      emit(If{mask_is(v.mask, kStrongZero), std::move(all), {}});
    }
  }
  // slot := zeros (a strong zero when the slot keeps a mask), allocated at `span` as the
  // interpreter allocates a false guard's zeros.
  void assign_zero(const Val& slot, Span span) {
    switch (slot.kind) {
      case Val::Kind::Scalar:
        emit(Assign{slot.scalar->local, zero_of(slot.type)});
        break;
      case Val::Kind::Tensor:
        if (slot.check_at_writer) check_size(slot.dims, interp::SizeRule::Tensor, 0, span);
        if (!static_size_error(slot.dims, interp::SizeRule::Tensor, 0)) {
          emit(Fill{slot.pointer, slot.offset, slot.numel(), zero_of(slot.type)});
          // Every element a strong zero: the slot's own mask says so, else its marks.
          if (slot.mask_pointer >= 0 && !slot.mask) {
            marks_set_.insert(slot.mask_pointer);
            emit(Fill{slot.mask_pointer, slot.offset, slot.numel(), lit_bool(true)});
          } else if (slot.mask_pointer < 0 && !slot.mask && !slot.drops_marks &&
                     is_real(slot.type)) {
            lost_marks(slot.pointer);
          }
        }
        break;
      case Val::Kind::Tuple:
        for (const Val& e : slot.elems) assign_zero(e, span);
        break;
    }
    if (slot.mask) emit(Assign{slot.mask->local, lit_i64(kStrongZero)});
  }
  // --- strong zeros kept in tensors (language.md §5.6) ---
  // Whether the tensor bound to v keeps marks: some element may be a strong zero.
  // Only where an element may be read: the function's result gives the caller plain numbers.
  bool needs_marks(ir::VarId v) const {
    return flow_.may_have_elems(v) && flow_.may_be_read(v) && is_real(f_.type_of(v).elem) &&
           mark_preds_.count(v) == 0;
  }
  // Its strong zeros are never read back from storage (nobody sees them, or reads evaluate its
  // mark predicate): a tensor without marks may take them.
  bool marks_unread(ir::VarId v) const {
    return flow_.may_have_elems(v) && (!flow_.may_be_read(v) || mark_preds_.count(v) != 0);
  }

  // --- mark predicates (MarkPred) ---
  // The generators whose marks an affine predicate gives, and which only full reads at affine
  // indices use (any other use, a slice or the tensor passed on, keeps stored marks).
  void find_mark_preds() {
    const std::vector<int> uses = ir::use_counts(f_);
    std::map<ir::VarId, int> full_reads;
    std::function<void(const ir::Block&)> walk = [&](const ir::Block& b) {
      for (const ir::Stmt& st : b.stmts) {
        if (const auto* ix = st.as<ir::IndexOp>(); ix != nullptr && ix->tensor.is_var) {
          const Type& t = f_.type_of(ix->tensor.var);
          bool affine = ix->indices.size() == t.rank() && !ix->indices.empty();
          for (const ir::IndexExpr& e : ix->indices) affine = affine && e.is_affine;
          if (affine) ++full_reads[ix->tensor.var];
        }
        ir::for_each_region(st, [&](const ir::Block& r) { walk(r); });
      }
    };
    walk(f_.body);
    std::function<void(const ir::Block&)> gens = [&](const ir::Block& b) {
      for (const ir::Stmt& st : b.stmts) {
        ir::for_each_region(st, [&](const ir::Block& r) { gens(r); });
        const auto* g = st.as<ir::GenOp>();
        if (g == nullptr || st.results.size() != 1 || g->body.results.size() != 1) continue;
        const ir::VarId v = st.results[0];
        // Scalar bodies only: the predicate covers every index of the tensor.
        if (!flow_.may_have_elems(v) || !is_real(f_.type_of(v).elem) ||
            f_.type_of(v).rank() != g->ivars.size()) {
          continue;
        }
        if (static_cast<size_t>(v) >= uses.size() || uses[static_cast<size_t>(v)] == 0 ||
            full_reads[v] != uses[static_cast<size_t>(v)]) {
          continue;
        }
        std::map<ir::VarId, const ir::Stmt*> defs;
        std::function<void(const ir::Block&)> collect = [&](const ir::Block& r) {
          for (const ir::Stmt& x : r.stmts) {
            for (ir::VarId d : x.results) defs[d] = &x;
            // Binders of nested regions: bound inside, never in a mark predicate.
            if (const auto* ivs = ir::index_vars_of(x)) {
              for (const ir::IndexVar& iv : *ivs) defs[iv.var] = &x;
            }
            if (const auto* a = x.as<ir::AccumOp>()) {
              for (const ir::IndexVar& iv : a->ivars) defs[iv.var] = &x;
            }
            if (const auto* l = x.as<ir::LoopOp>()) {
              for (ir::VarId v : l->state) defs[v] = &x;
              if (l->iter >= 0) defs[l->iter] = &x;
            }
            ir::for_each_region(x, [&](const ir::Block& k) { collect(k); });
          }
        };
        collect(g->body);
        for (const ir::IndexVar& iv : g->ivars) defs[iv.var] = nullptr;  // bound here, fine
        // The ranges of its index variables, for the questions empty_sum_pred asks.
        gen_ranges_.clear();
        bool known = true;
        for (const ir::IndexVar& iv : g->ivars) {
          std::optional<int64_t> e = known_extent(iv.extent);
          if (!e) {
            known = false;
            break;
          }
          gen_ranges_.push_back(Affine::var(iv.var));
          if (auto hi = Affine::add(Affine::constant(*e - 1), Affine::var(iv.var, -1))) {
            gen_ranges_.push_back(*hi);
          }
        }
        if (!known) gen_ranges_.clear();
        MarkPred mp;
        for (const ir::IndexVar& iv : g->ivars) mp.ivars.push_back(iv.var);
        std::optional<Pred> p = strong_pred(g->body.results[0], defs, 0);
        if (p && usable(*p, defs)) {
          mp.strong = std::move(*p);
          mark_preds_[v] = std::move(mp);
        }
      }
    };
    gens(f_.body);
  }
  // Whether v may appear in a mark predicate: bound outside the generator, or one of its
  // index variables (in `defs` as null); a variable bound inside it may not.
  static bool usable(ir::VarId v, const std::map<ir::VarId, const ir::Stmt*>& defs) {
    auto it = defs.find(v);
    return it == defs.end() || it->second == nullptr;
  }
  static bool usable(const Pred& p, const std::map<ir::VarId, const ir::Stmt*>& defs) {
    std::vector<int32_t> vars;
    p.collect_vars(vars);
    return std::all_of(vars.begin(), vars.end(), [&](int32_t v) { return usable(v, defs); });
  }
  // The affine form of an i64 atom usable in a mark predicate: a literal, a variable bound
  // outside or an index variable, or i64 arithmetic inside the generator on those (`1 + j`).
  static std::optional<Affine> affine_atom(const ir::Atom& a,
                                           const std::map<ir::VarId, const ir::Stmt*>& defs,
                                           int depth = 0) {
    if (!a.is_var) {
      if (a.lit.type != Scalar::I64) return std::nullopt;
      return Affine::constant(a.lit.integer);
    }
    if (usable(a.var, defs)) return Affine::var(a.var);
    const ir::Stmt* st = defs.at(a.var);
    const auto* op = st->as<ir::PrimOp>();
    if (op == nullptr || depth > 8 || st->results.size() != 1) return std::nullopt;
    auto arg = [&](size_t k) -> std::optional<Affine> {
      if (k >= op->args.size()) return std::nullopt;
      return affine_atom(op->args[k], defs, depth + 1);
    };
    switch (op->prim) {
      case Prim::Add:
      case Prim::Sub: {
        auto x = arg(0), y = arg(1);
        if (!x || !y) return std::nullopt;
        return op->prim == Prim::Add ? Affine::add(*x, *y) : Affine::sub(*x, *y);
      }
      case Prim::Neg: {
        auto x = arg(0);
        if (!x) return std::nullopt;
        return Affine::scale(*x, -1);
      }
      case Prim::Mul: {
        auto x = arg(0), y = arg(1);
        if (!x || !y) return std::nullopt;
        if (x->is_constant()) return Affine::scale(*y, x->constant_term());
        if (y->is_constant()) return Affine::scale(*x, y->constant_term());
        return std::nullopt;
      }
      default:
        return std::nullopt;
    }
  }
  // A bool atom as a predicate usable in a mark predicate: a comparison of such i64 atoms, or
  // a bool bound outside.
  std::optional<Pred> cond_pred(const ir::Atom& c,
                                const std::map<ir::VarId, const ir::Stmt*>& defs) const {
    if (!c.is_var) return c.lit.boolean ? Pred::truth() : Pred::falsity();
    auto it = defs.find(c.var);
    if (it == defs.end()) return Pred::atom_of(c.var);
    if (it->second == nullptr) return std::nullopt;
    const auto* op = it->second->as<ir::PrimOp>();
    if (op == nullptr || op->args.size() != 2) return std::nullopt;
    // A comparison, spelled as the primitive table spells it ("<", "==", ...).
    if (prim_info(op->prim).type_rule != TypeRule::Compare) return std::nullopt;
    const std::string rel(prim_info(op->prim).symbol);
    for (const ir::Atom& x : op->args) {  // of integers (== and != also compare bools)
      if (x.is_var ? f_.type_of(x.var).elem != Scalar::I64 : x.lit.type != Scalar::I64) {
        return std::nullopt;
      }
    }
    auto a = affine_atom(op->args[0], defs), b = affine_atom(op->args[1], defs);
    if (!a || !b) return std::nullopt;
    return Pred::compare(*a, rel, *b);
  }
  // Where atom r of a generator's body is a strong zero, as a predicate usable at its reads;
  // nullopt when that depends on data (or is too deep to follow).
  std::optional<Pred> strong_pred(const ir::Atom& r,
                                  const std::map<ir::VarId, const ir::Stmt*>& defs,
                                  int depth) const {
    if (!r.is_var || !flow_.may_be_whole(r.var)) return Pred::falsity();
    if (depth > 16) return std::nullopt;
    auto it = defs.find(r.var);
    if (it == defs.end() || it->second == nullptr) return std::nullopt;  // from outside: data
    const ir::Stmt& st = *it->second;
    const size_t k = static_cast<size_t>(std::find(st.results.begin(), st.results.end(), r.var) -
                                         st.results.begin());
    if (const auto* g = st.as<ir::GuardOp>()) {
      if (!usable(g->pred, defs) || k >= g->body.results.size()) return std::nullopt;
      auto inner = strong_pred(g->body.results[k], defs, depth + 1);
      auto fails = g->pred.negate();
      if (!inner || !fails) return std::nullopt;
      return Pred::disj({*fails, *inner});
    }
    if (const auto* i = st.as<ir::IfOp>()) {
      if (k >= i->then_branch.results.size() || k >= i->else_branch.results.size()) {
        return std::nullopt;
      }
      auto c = cond_pred(i->cond, defs);
      auto t = strong_pred(i->then_branch.results[k], defs, depth + 1);
      auto e = strong_pred(i->else_branch.results[k], defs, depth + 1);
      if (!c || !t || !e) return std::nullopt;
      auto not_c = c->negate();
      if (!not_c) return std::nullopt;
      return Pred::disj({Pred::conj({*c, *t}), Pred::conj({*not_c, *e})});
    }
    if (const auto* p = st.as<ir::PrimOp>()) {
      auto arg = [&](size_t j) -> std::optional<Pred> {
        if (j >= p->args.size()) return std::nullopt;
        return strong_pred(p->args[j], defs, depth + 1);
      };
      switch (p->prim) {
        case Prim::Mul: {
          auto a = arg(0), b = arg(1);
          if (!a || !b) return std::nullopt;
          return Pred::disj({*a, *b});
        }
        case Prim::Div:
        case Prim::Neg:
          return arg(0);
        case Prim::Add:
        case Prim::Sub: {
          // A strong zero when both are strong zeros or literal zeros (and one is strong).
          if (p->args.size() != 2) return std::nullopt;
          auto zero_lit = [&](size_t j) {
            const ir::Atom& a = p->args[j];
            return !a.is_var && is_real(a.lit.type) && a.lit.real == 0.0;
          };
          if (zero_lit(0)) return arg(1);
          if (zero_lit(1)) return arg(0);
          auto a = arg(0), b = arg(1);
          if (!a || !b) return std::nullopt;
          return Pred::conj({*a, *b});
        }
        default:
          return std::nullopt;
      }
    }
    if (const auto* red = st.as<ir::ReduceOp>()) return empty_sum_pred(*red, defs, depth);
    if (const auto* ix = st.as<ir::IndexOp>()) {
      // A read of a generator with a mark predicate: the predicate at its indices.
      if (!ix->tensor.is_var) return std::nullopt;
      auto m = mark_preds_.find(ix->tensor.var);
      if (m == mark_preds_.end()) return std::nullopt;
      for (const ir::IndexExpr& e : ix->indices) {
        if (!e.is_affine) return std::nullopt;
      }
      return at_indices(m->second, ix->indices);
    }
    return std::nullopt;
  }
  std::optional<int64_t> known_extent(const SizeExpr& extent) const {
    return extent.eval([&](const std::string& n) -> std::optional<int64_t> {
      auto it = sizes_.find(n);
      return it == sizes_.end() ? std::nullopt : as_i64(it->second);
    });
  }
  // A sum `sum c. [P] * e` (e never a strong zero) is one exactly where no c in its range
  // satisfies P. With P a conjunction of affine constraints whose coefficients of the sum's
  // variables are 1 or -1 and the extents known, Fourier-Motzkin eliminates them exactly: the
  // projection is where the sum has a live term, and the predicate is its negation.
  std::optional<Pred> empty_sum_pred(const ir::ReduceOp& red,
                                     const std::map<ir::VarId, const ir::Stmt*>& defs,
                                     int depth) const {
    if (red.kind != ir::ReduceKind::Sum) return std::nullopt;
    const Pred* guard = single_guard(red.body, 0);
    if (guard == nullptr) return std::nullopt;
    const auto* g = red.body.stmts[0].as<ir::GuardOp>();
    if (g->body.results.size() != 1) return std::nullopt;
    // Where a term under the guard is a strong zero itself; it must never be.
    std::optional<Pred> inner = strong_pred(g->body.results[0], defs, depth + 1);
    if (!inner) return std::nullopt;
    std::vector<Affine> cs;
    std::vector<Pred> atoms;
    if (!split_conjunction(*guard, cs, atoms) || !atoms.empty()) return std::nullopt;
    std::vector<ir::VarId> summed;
    for (const ir::IndexVar& iv : red.ivars) {
      std::optional<int64_t> e = known_extent(iv.extent);
      if (!e) return std::nullopt;
      // Over an empty range the sum is 0 but an ordinary one (language.md §5.6).
      if (*e <= 0) return Pred::falsity();
      cs.push_back(Affine::var(iv.var));
      auto hi = Affine::add(Affine::constant(*e - 1), Affine::var(iv.var, -1));
      if (!hi) return std::nullopt;
      cs.push_back(*hi);
      summed.push_back(iv.var);
    }
    if (inner->kind != Pred::Kind::False) {
      std::vector<Affine> where = cs;
      where.insert(where.end(), gen_ranges_.begin(), gen_ranges_.end());
      if (gen_ranges_.empty() || !infeasible(*inner, where)) return std::nullopt;
    }
    for (ir::VarId v : summed) {
      for (const Affine& c : cs) {
        const int64_t k = c.coeff(v);
        if (k != 0 && k != 1 && k != -1) return std::nullopt;
      }
      cs = fm::eliminate(cs, v);
    }
    std::vector<Pred> live;
    for (const Affine& c : cs) {
      for (const auto& [v, k] : c.terms()) {
        if (!usable(v, defs)) return std::nullopt;
      }
      live.push_back(Pred::ge0(c));
    }
    return Pred::conj(std::move(live)).negate();
  }
  // The mark predicate of `mp` at the indices of a read (affine in the reader's variables).
  static std::optional<Pred> at_indices(const MarkPred& mp, const std::vector<ir::IndexExpr>& idx) {
    if (idx.size() != mp.ivars.size()) return std::nullopt;
    std::optional<Pred> p = mp.strong;
    for (size_t d = 0; d < mp.ivars.size() && p; ++d) p = p->substitute(mp.ivars[d], idx[d].affine);
    return p;
  }
  // Whether the guards around the read (facts_) rule `p` out: every clause of its disjunctive
  // normal form (at most 64) is infeasible with them.
  bool never_holds(const Pred& p) const {
    std::vector<Affine> known = facts_;
    std::vector<int32_t> vars;
    p.collect_vars(vars);
    std::sort(vars.begin(), vars.end());
    vars.erase(std::unique(vars.begin(), vars.end()), vars.end());
    // What the loops around it say of its variables (index variables' ranges).
    for (int32_t v : vars) {
      if (v < 0 || static_cast<size_t>(v) >= env_.size() || !env_[static_cast<size_t>(v)] ||
          env_[static_cast<size_t>(v)]->kind != Val::Kind::Scalar) {
        continue;
      }
      const std::optional<Interval> r = range(env_[static_cast<size_t>(v)]->scalar);
      if (!r) continue;
      if (auto lo = Affine::add(Affine::var(v), Affine::constant(-r->first))) known.push_back(*lo);
      if (auto hi = Affine::add(Affine::constant(r->second), Affine::var(v, -1))) {
        known.push_back(*hi);
      }
    }
    return infeasible(p, known);
  }
  // Whether `p` has no integer solution together with `known` (each `e >= 0`): every clause of
  // its disjunctive normal form (at most 64) is infeasible with them, by Fourier-Motzkin.
  static bool infeasible(const Pred& p, const std::vector<Affine>& known) {
    std::vector<std::vector<Affine>> clauses{{}};
    std::function<bool(const Pred&, std::vector<std::vector<Affine>>&)> dnf =
        [&](const Pred& q, std::vector<std::vector<Affine>>& cs) -> bool {
      switch (q.kind) {
        case Pred::Kind::True:
          return true;
        case Pred::Kind::False:
          cs.clear();
          return true;
        case Pred::Kind::Ge0:
          for (auto& c : cs) c.push_back(q.expr);
          return true;
        case Pred::Kind::Eq0: {
          auto neg = Affine::scale(q.expr, -1);
          if (!neg) return false;
          for (auto& c : cs) {
            c.push_back(q.expr);
            c.push_back(*neg);
          }
          return true;
        }
        case Pred::Kind::Atom:
          return true;  // unknown: the clause stays as feasible as without it
        case Pred::Kind::And:
          for (const Pred& k : q.kids) {
            if (!dnf(k, cs)) return false;
          }
          return true;
        case Pred::Kind::Or: {
          std::vector<std::vector<Affine>> out;
          for (const Pred& k : q.kids) {
            std::vector<std::vector<Affine>> part = cs;
            if (!dnf(k, part)) return false;
            out.insert(out.end(), part.begin(), part.end());
            if (out.size() > 64) return false;
          }
          cs = std::move(out);
          return true;
        }
      }
      return false;
    };
    if (!dnf(p, clauses)) return false;
    for (std::vector<Affine>& c : clauses) {
      c.insert(c.end(), known.begin(), known.end());
      if (fm::feasible(c)) return false;
    }
    return true;
  }
  // Whether a mask may say "strong zero" (a sum's mask without masked terms is ordinary or an
  // empty sum, never one).
  bool may_be_strong(const ExprP& m) const {
    if (!m) return false;
    if (auto c = as_i64(m)) return *c == kStrongZero;
    if (m->kind == Expr::Kind::Local && never_strong_.count(m->local) != 0) return false;
    if (m->kind == Expr::Kind::Prim && m->prim == Prim::Select && m->args.size() == 3) {
      return may_be_strong(m->args[1]) || may_be_strong(m->args[2]);
    }
    return true;
  }
  // A local holding mask m, remembered as never a strong zero when m cannot be one.
  ExprP declare_mask(const ExprP& m, const std::string& hint) {
    ExprP l = declare(m, hint);
    if (!may_be_strong(m) && l->kind == Expr::Kind::Local) never_strong_.insert(l->local);
    return l;
  }
  ExprP strong_byte(const ExprP& m) const {
    return may_be_strong(m) ? mask_is(m, kStrongZero) : lit_bool(false);
  }
  // The mask of element `off` of tensor t: a strong zero where the whole tensor or the element
  // is one.
  ExprP element_mask(const Val& t, const ExprP& off) const {
    ExprP m;
    if (t.mask_pointer >= 0) {
      m = select(load(Scalar::Bool, t.mask_pointer, off), lit_i64(kStrongZero), lit_i64(0));
    }
    if (may_be_strong(t.mask)) {
      m = select(mask_is(t.mask, kStrongZero), lit_i64(kStrongZero), m ? m : lit_i64(0));
    }
    return m;
  }
  // Loops over k in [0, n), emitting body(k).
  template <class F>
  void for_elements(const ExprP& n, const std::string& hint, F&& body) {
    LocalId k = out_.new_local(hint, Scalar::I64);
    Body b = nested([&] { body(local(out_, k)); });
    emit(For{k, lit_i64(0), n, std::move(b), false});
  }
  // A strong zero about to be stored in `where` (a buffer or local) that keeps no mask.
  [[noreturn]] void lost_marks(LocalId where) const {
    const std::string name = where >= 0 && static_cast<size_t>(where) < out_.locals.size()
                                 ? out_.locals[static_cast<size_t>(where)].name
                                 : "?";
    throw Unsupported{"a strong zero would be stored in " + name +
                      ", which keeps no mask (ir/strong_zero_flow.cpp missed a way it flows)"};
  }

  static ExprP zero_of(Scalar t) {
    switch (t) {
      case Scalar::I64:
        return lit_i64(0);
      case Scalar::Bool:
        return lit_bool(false);
      default:
        return lit_real(0, t);
    }
  }
  // --- the entry point's ports ---
  Val input(const Type& t, const std::string& hint) {
    if (t.is_tuple) {
      Val x;
      x.kind = Val::Kind::Tuple;
      for (const Type& e : t.elems) x.elems.push_back(input(e, hint));
      return x;
    }
    std::vector<ExprP> dims = shape_of(t, Span{});
    int64_t count = 1;
    for (const ExprP& d : dims) count = as_i64(d) && count >= 0 ? count * *as_i64(d) : -1;
    LocalId p = out_.new_local(hint, t.elem, true);
    out_.inputs.push_back(Port{p, t.elem, count});
    if (t.is_scalar()) {
      LocalId s = out_.new_local(hint, t.elem);
      emit(Declare{s, load(t.elem, p, lit_i64(0))});
      return scalar_val(local(out_, s), t.elem);
    }
    Val x;
    x.kind = Val::Kind::Tensor;
    x.type = t.elem;
    x.pointer = p;
    x.offset = lit_i64(0);
    x.dims = std::move(dims);
    return x;
  }
  Val make_output(const Type& t) {
    if (t.is_tuple) {
      Val x;
      x.kind = Val::Kind::Tuple;
      for (const Type& e : t.elems) x.elems.push_back(make_output(e));
      return x;
    }
    if (in_.runtime_sizes) {
      LocalId p = out_.new_local("out", t.elem, true);
      out_.outputs.push_back(Port{p, t.elem, -1});
      Val x;
      x.kind = Val::Kind::Tensor;
      x.type = t.elem;
      x.pointer = p;
      x.offset = lit_i64(0);
      x.dims = shape_of(t, f_.span);  // the caller's memory: it exists, as an argument does
      x.drops_marks = true;
      return x;
    }
    // A size that cannot be evaluated (an inexact division) fails in the body, where the
    // interpreter reports it; the port gets no elements then. So does a shape that cannot be
    // built (too many elements): its writers check it (alloc_for), failing where the
    // interpreter allocates it.
    std::vector<ExprP> dims;
    std::vector<int64_t> shape;
    for (const SizeExpr& d : t.shape) {
      std::optional<int64_t> v = d.eval([&](const std::string& n) -> std::optional<int64_t> {
        auto it = sizes_.find(n);
        if (it == sizes_.end()) return std::nullopt;
        return as_i64(it->second);
      });
      for (const std::string& n : d.vars()) {
        if (sizes_.count(n) == 0 || !as_i64(sizes_.at(n))) {
          throw Unsupported{"the result's shape depends on a loop's trip count"};
        }
      }
      dims.push_back(lit_i64(v.value_or(0)));
      shape.push_back(v.value_or(0));
    }
    const bool cannot_build =
        interp::size_error(interp::SizeRule::Tensor, shape, 0, in_.max_tensor_elements).has_value();
    LocalId p = out_.new_local("out", t.elem, true);
    out_.outputs.push_back(
        Port{p, t.elem, cannot_build ? 0 : *interp::element_count(shape), cannot_build});
    Val x;
    x.kind = Val::Kind::Tensor;  // scalars too: one element at out[0]
    x.type = t.elem;
    x.pointer = p;
    x.offset = lit_i64(0);
    x.dims = std::move(dims);
    x.check_at_writer = cannot_build;
    x.drops_marks = true;
    return x;
  }

  // --- blocks ---
  // Lowers `b`; when `dests` is given, writes result k into (*dests)[k], building a result
  // computed by a statement of `b` in place (destination-passing style).
  std::vector<Val> lower_block(const ir::Block& b, const std::vector<Val>* dests) {
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
        pending_dest_[v] = *d;
        placed.push_back(v);
      }
    }
    for (const ir::Stmt& s : b.stmts) lower_stmt(s);
    for (ir::VarId v : placed) pending_dest_.erase(v);
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
  static bool defined_in(const ir::Block& b, ir::VarId v) {
    for (const ir::Stmt& s : b.stmts) {
      if (std::find(s.results.begin(), s.results.end(), v) == s.results.end()) continue;
      return s.as<ir::GenOp>() || s.as<ir::ReduceOp>() || s.as<ir::AccumOp>() ||
             s.as<ir::GuardOp>() || s.as<ir::IfOp>();
    }
    return false;
  }

  void lower_stmt(const ir::Stmt& s) {
    std::visit(
        [&](const auto& op) {
          using T = std::decay_t<decltype(op)>;
          if constexpr (std::is_same_v<T, ir::PrimOp>) lower_prim(s, op);
          if constexpr (std::is_same_v<T, ir::IndexOp>) lower_index(s, op);
          if constexpr (std::is_same_v<T, ir::GenOp>) lower_gen(s, op);
          if constexpr (std::is_same_v<T, ir::ReduceOp>) lower_reduce(s, op);
          if constexpr (std::is_same_v<T, ir::GuardOp>) lower_guard(s, op);
          if constexpr (std::is_same_v<T, ir::LoopOp>) lower_loop(s, op);
          if constexpr (std::is_same_v<T, ir::IfOp>) lower_if(s, op);
          if constexpr (std::is_same_v<T, ir::AccumOp>) lower_accum(s, op);
          if constexpr (std::is_same_v<T, ir::TupleOp>) {
            Val x;
            x.kind = Val::Kind::Tuple;
            for (const ir::Atom& a : op.elems) x.elems.push_back(atom_val(a));
            bind(s.results[0], std::move(x));
          }
          if constexpr (std::is_same_v<T, ir::ProjOp>) {
            Val t = atom_val(op.tuple);
            if (t.kind != Val::Kind::Tuple || op.index < 0 ||
                static_cast<size_t>(op.index) >= t.elems.size()) {
              throw Unsupported{"a projection of a value that is not a tuple"};
            }
            Val x = t.elems[static_cast<size_t>(op.index)];
            // A component of a strong zero is one; else it keeps its own mask.
            if (t.mask && x.mask) {
              x.mask = declare(select(mask_is(t.mask, 0), x.mask, t.mask),
                               c_hint(s.results[0]) + "_mask");
            } else if (t.mask) {
              x.mask = t.mask;
            }
            bind(s.results[0], std::move(x));
          }
          if constexpr (std::is_same_v<T, ir::SizeOp>) {
            bind(s.results[0], scalar_val(size(op.size, s.span), Scalar::I64));
          }
          if constexpr (std::is_same_v<T, ir::CallOp>) {
            throw Unsupported{"a call of " + op.callee + " remains after inlining"};
          }
        },
        s.op);
    // A dynamic size variable takes the value of the statement that binds it (a saving loop's
    // trip count, or an i64 the optimizer named as a size).
    for (ir::VarId r : s.results) {
      for (const ir::SizeVar& sv : f_.size_vars) {
        if (sv.param == -1 && sv.var == r) sizes_[sv.name] = val(r).scalar;
      }
    }
  }

  // --- scalar primitives ---
  void lower_prim(const ir::Stmt& s, const ir::PrimOp& op) {
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
  static bool is_checked_int(Prim p, const std::vector<ExprP>& args) {
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
  ExprP checked_int(const ir::Stmt& s, Prim p, const std::vector<ExprP>& args) {
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

  // --- reads ---
  // The value of an affine index (overflow-checked unless the ranges prove it fits).
  ExprP affine(const Affine& a, Span span) {
    Site st;
    st.kind = Site::Kind::Overflow;
    st.span = span;
    st.message =
        "integer overflow in the index " + a.to_string([this](int32_t v) { return name_of(v); });
    return affine_checked(a, st);
  }
  ExprP index_value(const ir::IndexExpr& e, Span span) {
    return e.is_affine ? affine(e.affine, span) : atom(e.computed);
  }
  // Fails unless 0 <= i < dims[d] (reporting as the interpreter does). `affine`, when the index
  // is affine, lets the enclosing guards' facts prove it.
  void check_index(const ExprP& i, const Val& t, size_t d, Span span, Site::Kind kind,
                   const std::string& name, const Affine* affine = nullptr) {
    const ExprP& n = t.dims[d];
    auto r = range(i);
    auto c = as_i64(n);
    if (r && c && r->first >= 0 && r->second < *c) return;
    if (affine != nullptr && c) {
      std::optional<Affine> upper = Affine::sub(Affine::constant(*c - 1), *affine);
      if ((r && r->first >= 0 ? true : implied_nonnegative(*affine)) &&
          ((r && r->second < *c) || (upper && implied_nonnegative(*upper)))) {
        return;
      }
    }
    Site st;
    st.kind = kind;
    st.span = span;
    st.message = name;
    st.dim = static_cast<int>(d);
    std::vector<ExprP> values{i, n};
    for (const ExprP& dim : t.dims) {
      auto k = as_i64(dim);
      st.shape.push_back(k ? *k : -1);
      if (!k) values.push_back(dim);
    }
    if (values.size() > static_cast<size_t>(kMaxSiteValues)) values.resize(kMaxSiteValues);
    ExprP ok = and_(prim(Prim::Ge, {i, lit_i64(0)}), prim(Prim::Lt, {i, n}));
    fail_unless(ok, site(std::move(st)), std::move(values));
  }
  // Row-major strides' offset of the leading indices.
  static ExprP flat_offset(const Val& t, const std::vector<ExprP>& idx) {
    ExprP off = lit_i64(0);
    for (size_t d = 0; d < idx.size(); ++d) off = add_i64(mul_i64(off, t.dims[d]), idx[d]);
    ExprP inner = lit_i64(1);
    for (size_t d = idx.size(); d < t.dims.size(); ++d) inner = mul_i64(inner, t.dims[d]);
    return mul_i64(off, inner);
  }
  void lower_index(const ir::Stmt& s, const ir::IndexOp& op) {
    if (!op.tensor.is_var) throw Unsupported{"indexing a literal"};
    const Val& t = val(op.tensor.var);
    if (!t.is_tensor()) {
      if (op.indices.empty()) {
        bind(s.results[0], t);
        return;
      }
      throw Unsupported{"indexing a value that is not a tensor"};
    }
    std::vector<ExprP> idx;
    for (size_t d = 0; d < op.indices.size(); ++d) {
      ExprP i = index_value(op.indices[d], s.span);
      check_index(i, t, d, s.span, Site::Kind::IndexRange, name_of(op.tensor.var),
                  op.indices[d].is_affine ? &op.indices[d].affine : nullptr);
      idx.push_back(i);
    }
    ExprP off = add_i64(t.offset, flat_offset(t, idx));
    if (idx.size() == t.dims.size()) {
      const std::string hint = c_hint(s.results[0]);
      ExprP v = declare(load(t.type, t.pointer, off), hint);
      ExprP m = element_mask(t, off);  // a stored strong zero is read back as one
      if (t.mark_pred) {
        // Where the predicate holds at these indices; not at all when the guards around the
        // read rule it out.
        std::optional<Pred> at = at_indices(*t.mark_pred, op.indices);
        if (!at) throw Unsupported{"a mark predicate at indices that overflow"};
        if (!never_holds(*at)) {
          whole_pred_ = *at;
          m = select(pred(*at, s.span), lit_i64(kStrongZero), lit_i64(0));
        }
      }
      bind(s.results[0], scalar_val(v, t.type, m ? declare(m, hint + "_mask") : nullptr));
      return;
    }
    std::vector<ExprP> rest(t.dims.begin() + static_cast<ptrdiff_t>(idx.size()), t.dims.end());
    Val x = view(t, off, std::move(rest));
    if (may_be_strong(t.mask)) {
      x.mask = select(mask_is(t.mask, kStrongZero), lit_i64(kStrongZero), lit_i64(0));
    }
    bind(s.results[0], std::move(x));
  }

  // --- index spaces ---
  // The extents of an index space; negative ones fail (generators, as the interpreter checks
  // them before allocating) or give empty ranges.
  std::vector<ExprP> extents(const std::vector<ir::IndexVar>& ivars, Span span,
                             bool allow_negative) {
    std::vector<ExprP> out;
    for (const ir::IndexVar& iv : ivars) {
      ExprP e = size(iv.extent, span);
      if (!allow_negative) {
        if (auto c = as_i64(e); !c || *c < 0) {
          Site st;
          st.kind = Site::Kind::NegativeExtent;
          st.span = span;
          st.message = iv.extent.to_string() + " of index " + name_of(iv.var);
          fail_unless(prim(Prim::Ge, {e, lit_i64(0)}), site(std::move(st)), {e});
        }
      }
      out.push_back(e);
    }
    return out;
  }
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
    tighten_ = nullptr;  // set by the caller for these loops only
    tighten_strong_ = -1;
  }
  template <class F>
  void points(const std::vector<ir::IndexVar>& ivars, const std::vector<ExprP>& extents, size_t d,
              ExprP linear, PointLoops kind, F& body) {
    if (d == ivars.size()) {
      body(linear);
      return;
    }
    LocalId i = out_.new_local(c_hint(ivars[d].var), Scalar::I64);
    ExprP end = extents[d];
    if (auto c = as_i64(end)) {
      if (*c <= 0) return;  // no point: nothing runs (the interpreter skips the body too)
      ranges_[i] = Interval{0, *c - 1};
    } else if (auto r = range(end); r && r->second >= 1) {
      ranges_[i] = Interval{0, r->second - 1};
    }
    ExprP begin = lit_i64(0);
    std::optional<int64_t> width;  // hi - lo when the tightened bounds move together
    const size_t implied_before = implied_.size();
    if (tighten_ != nullptr) {
      auto [lo, hi] = tightened(*tighten_, ivars, d, end);
      if (!(as_i64(lo) == int64_t{0} && hi == end)) {
        // Points outside [lo, hi) fail the guard: strong zeros the sum's mask must count.
        if (tighten_strong_ >= 0) {
          emit(Assign{tighten_strong_,
                      or_(local(out_, tighten_strong_),
                          or_(prim(Prim::Gt, {lo, lit_i64(0)}), prim(Prim::Lt, {hi, end})))});
        }
        width = constant_difference(hi, lo);
        begin = declare(lo, "lo");
        end = declare(hi, "hi");
      }
    }
    bind(ivars[d].var, scalar_val(local(out_, i), Scalar::I64));
    const Pred* saved = tighten_;
    const Pred* saved_true = guard_true_;
    if (d + 1 == ivars.size()) {
      // The body's own regions are not tightened; its guard holds at every point the loops
      // visit when the bounds used every conjunct.
      if (tighten_ != nullptr && implies_all(*tighten_)) guard_true_ = tighten_;
      tighten_ = nullptr;
    }
    // Index-set splitting (a generator whose body's sum runs a window that the borders clip):
    // one loop per piece, each lowered knowing its range, so the window's bounds fold to
    // constant widths inside.
    std::vector<int64_t> cuts;
    if (d < splits_.size() && !splits_[d].empty() && as_i64(begin) == int64_t{0} && as_i64(end)) {
      cuts.push_back(0);
      for (int64_t c : splits_[d]) {
        if (c > cuts.back() && c < *as_i64(end)) cuts.push_back(c);
      }
      cuts.push_back(*as_i64(end));
    }
    auto one_loop = [&](ExprP from, ExprP to) {
      // A window of constant width (lo = g - 4, hi = g + 1) runs as a counted loop, which the
      // compiler unrolls: for t < 5 { i = lo + t; ... } (empty when clipped below 0 points).
      const bool counted = width && *width > 0 && *width <= 16 && !as_i64(from);
      LocalId t = counted ? out_.new_local("t", Scalar::I64) : i;
      Body b = nested([&] {
        if (counted) emit(Declare{i, add_i64(from, local(out_, t))});
        points(ivars, extents, d + 1, add_i64(mul_i64(linear, extents[d]), local(out_, i)),
               kind == PointLoops::Parallel ? PointLoops::Independent : kind, body);
      });
      if (counted) {
        emit(For{t, lit_i64(0), lit_i64(*width), std::move(b), false});
      } else {
        For loop{i, std::move(from), std::move(to), std::move(b), kind == PointLoops::Parallel};
        loop.independent = kind != PointLoops::Ordered;
        emit(std::move(loop));
      }
    };
    if (cuts.size() > 2) {
      for (size_t k = 0; k + 1 < cuts.size(); ++k) {
        ranges_[i] = Interval{cuts[k], cuts[k + 1] - 1};
        one_loop(lit_i64(cuts[k]), lit_i64(cuts[k + 1]));
      }
    } else {
      one_loop(begin, end);
    }
    tighten_ = saved;
    guard_true_ = saved_true;
    implied_.resize(implied_before);
  }

  // Where to split a generator's loops: for a body that is one sum of one guard, the values of
  // each generator index at which a window bound `max(0, g + c)` or `min(E, g + c)` of the sum
  // stops being clipped (only for bounds of the form ±i ± g + constant).
  std::vector<std::vector<int64_t>> window_splits(const ir::GenOp& op,
                                                  const std::vector<ExprP>& ext) {
    std::vector<std::vector<int64_t>> out(op.ivars.size());
    if (op.body.stmts.size() != 1) return {};
    const auto* red = op.body.stmts[0].as<ir::ReduceOp>();
    if (red == nullptr || red->kind != ir::ReduceKind::Sum) return {};
    const Pred* p = single_guard(red->body, 0);
    if (p == nullptr) return {};
    const std::vector<const Pred*> conj = conjuncts(*p);
    bool any = false;
    for (const Pred* c : conj) {
      if (c->kind != Pred::Kind::Ge0) continue;
      for (const ir::IndexVar& iv : red->ivars) {
        const int64_t a = c->expr.coeff(iv.var);
        if (a != 1 && a != -1) continue;
        auto extent = iv.extent.eval([&](const std::string& n) -> std::optional<int64_t> {
          auto it = sizes_.find(n);
          return it == sizes_.end() ? std::nullopt : as_i64(it->second);
        });
        if (!extent) continue;
        // rest = b * g + c0 with g one generator index; other variables must be literals here
        // (sizes of this specialization).
        std::optional<Affine> rest = Affine::add(c->expr, Affine::var(iv.var, -a));
        if (!rest) continue;
        int64_t c0 = rest->constant_term();
        ir::VarId g = -1;
        int64_t b = 0;
        bool simple = true;
        for (const auto& [v, coeff] : rest->terms()) {
          const auto& x = env_.at(static_cast<size_t>(v));
          std::optional<int64_t> lit =
              x && x->kind == Val::Kind::Scalar ? as_i64(x->scalar) : std::nullopt;
          int64_t term = 0;
          if (lit && !__builtin_mul_overflow(coeff, *lit, &term) &&
              !__builtin_add_overflow(c0, term, &c0)) {
            continue;
          }
          simple = simple && g == -1 && !lit;
          g = v;
          b = coeff;
        }
        if (!simple || g == -1 || (b != 1 && b != -1)) continue;
        for (size_t k = 0; k < op.ivars.size(); ++k) {
          if (op.ivars[k].var != g || !as_i64(ext[k])) continue;
          // a = 1: i >= -(b g + c0), clipped by 0; a = -1: i <= b g + c0, clipped by E - 1.
          const int64_t root = a == 1 ? -c0 * b : (*extent - 1 - c0) * b;
          out[k].push_back(root);
          out[k].push_back(root + 1);
          any = true;
        }
      }
    }
    if (!any) return {};
    for (auto& v : out) {
      std::sort(v.begin(), v.end());
      v.erase(std::unique(v.begin(), v.end()), v.end());
      if (v.size() > 4) v.clear();  // not a window: keep one loop
    }
    return out;
  }
  // a - b when it is a constant: both linear in the same locals with the same coefficients.
  static std::optional<int64_t> constant_difference(const ExprP& a, const ExprP& b) {
    std::map<LocalId, int64_t> ta, tb;
    int64_t ca = 0, cb = 0;
    if (!linear_form(a, 1, ta, ca) || !linear_form(b, 1, tb, cb)) return std::nullopt;
    std::erase_if(ta, [](const auto& kv) { return kv.second == 0; });
    std::erase_if(tb, [](const auto& kv) { return kv.second == 0; });
    if (ta != tb) return std::nullopt;
    int64_t d = 0;
    if (__builtin_sub_overflow(ca, cb, &d)) return std::nullopt;
    return d;
  }
  // Adds k * e to (terms, constant) when e is a sum of literal multiples of locals.
  static bool linear_form(const ExprP& e, int64_t k, std::map<LocalId, int64_t>& terms,
                          int64_t& constant) {
    if (e->type != Scalar::I64) return false;
    if (auto c = as_i64(e)) return !__builtin_add_overflow(constant, k * *c, &constant);
    if (e->kind == Expr::Kind::Local) {
      terms[e->local] += k;
      return true;
    }
    if (e->kind != Expr::Kind::Prim) return false;
    switch (e->prim) {
      case Prim::Add:
        return linear_form(e->args[0], k, terms, constant) &&
               linear_form(e->args[1], k, terms, constant);
      case Prim::Sub:
        return linear_form(e->args[0], k, terms, constant) &&
               linear_form(e->args[1], -k, terms, constant);
      case Prim::Neg:
        return linear_form(e->args[0], -k, terms, constant);
      case Prim::Mul:
        if (auto c = as_i64(e->args[0]); c && std::abs(*c) < (int64_t{1} << 20)) {
          return linear_form(e->args[1], k * *c, terms, constant);
        }
        if (auto c = as_i64(e->args[1]); c && std::abs(*c) < (int64_t{1} << 20)) {
          return linear_form(e->args[0], k * *c, terms, constant);
        }
        return false;
      default:
        return false;
    }
  }
  // max and min of i64 expressions, folded when the ranges decide them.
  ExprP max_i64(const ExprP& a, const ExprP& b) {
    auto ra = range(a), rb = range(b);
    if (ra && rb && ra->first >= rb->second) return a;
    if (ra && rb && rb->first >= ra->second) return b;
    return prim(Prim::Max, {a, b});
  }
  ExprP min_i64(const ExprP& a, const ExprP& b) {
    auto ra = range(a), rb = range(b);
    if (ra && rb && ra->second <= rb->first) return a;
    if (ra && rb && rb->second <= ra->first) return b;
    return prim(Prim::Min, {a, b});
  }

  // The range [lo, hi) of index variable d of a region whose every point outside it fails the
  // guard `p` (loop bounds tightened by predicates: a guarded triangular sum runs a triangular
  // loop). Uses the conjuncts `±i + rest >= 0` and `±i + rest == 0` whose `rest` mentions only
  // variables bound outside i and provably does not overflow.
  std::pair<ExprP, ExprP> tightened(const Pred& p, const std::vector<ir::IndexVar>& ivars, size_t d,
                                    const ExprP& extent) {
    ExprP lo = lit_i64(0), hi = extent;
    const std::vector<const Pred*> conj = conjuncts(p);
    const ir::VarId iv = ivars[d].var;
    for (const Pred* c : conj) {
      // A conjunct that mentions no index variable of the region holds everywhere or nowhere:
      // the outermost loop runs only when it holds.
      if (d == 0 && c->kind == Pred::Kind::Atom) {
        ExprP b = atom(ir::Atom::of(c->atom));
        hi = select(c->negated ? not_(b) : b, hi, lit_i64(0));
        implied_.push_back(c);
        continue;
      }
      if (c->kind != Pred::Kind::Ge0 && c->kind != Pred::Kind::Eq0) continue;
      bool any = false;
      for (const ir::IndexVar& v : ivars) any = any || c->expr.mentions(v.var);
      if (!any) {
        if (d != 0) continue;
        std::optional<ExprP> e = pure_affine(c->expr);
        if (!e) continue;
        hi = select(prim(c->kind == Pred::Kind::Ge0 ? Prim::Ge : Prim::Eq, {*e, lit_i64(0)}), hi,
                    lit_i64(0));
        implied_.push_back(c);
        continue;
      }
      const int64_t a = c->expr.coeff(iv);
      if (a != 1 && a != -1) continue;
      bool later = false;
      for (size_t e = d + 1; e < ivars.size(); ++e) later = later || c->expr.mentions(ivars[e].var);
      if (later) continue;
      std::optional<Affine> rest = Affine::add(c->expr, Affine::var(iv, -a));
      if (!rest) continue;
      std::optional<ExprP> r = pure_affine(*rest);
      if (!r) continue;
      ExprP neg = sub_i64(lit_i64(0), *r);
      if (!range(neg) && !as_i64(neg)) continue;
      // a = 1: i >= -rest (and i == -rest); a = -1: i <= rest (and i == rest).
      ExprP at = a == 1 ? neg : *r;
      implied_.push_back(c);
      if (c->kind == Pred::Kind::Eq0 || a == 1) lo = max_i64(lo, at);
      if (c->kind == Pred::Kind::Eq0 || a == -1) hi = min_i64(hi, add_i64(at, lit_i64(1)));
    }
    return {lo, hi};
  }
  // e >= 0 follows from a known fact f >= 0 (an enclosing guard's conjunct) and the ranges:
  // e - f is provably non-negative.
  bool implied_nonnegative(const Affine& e) {
    for (const Affine& f : facts_) {
      std::optional<Affine> diff = Affine::sub(e, f);
      if (!diff) continue;
      std::optional<ExprP> v = pure_affine(*diff);
      if (!v) continue;
      if (auto c = as_i64(*v); c && *c >= 0) return true;
      if (auto r = range(*v); r && r->first >= 0) return true;
    }
    return false;
  }
  // The facts a predicate that holds gives: its affine conjuncts (an equality as two).
  static void facts_of(const Pred& p, std::vector<Affine>& out) {
    switch (p.kind) {
      case Pred::Kind::Ge0:
        out.push_back(p.expr);
        break;
      case Pred::Kind::Eq0:
        out.push_back(p.expr);
        if (auto neg = Affine::scale(p.expr, -1)) out.push_back(*neg);
        break;
      case Pred::Kind::And:
        for (const Pred& k : p.kids) facts_of(k, out);
        break;
      default:
        break;
    }
  }
  // The conjuncts of a predicate (itself when it is not a conjunction).
  static std::vector<const Pred*> conjuncts(const Pred& p) {
    std::vector<const Pred*> out;
    if (p.kind != Pred::Kind::And) return {&p};
    out.reserve(p.kids.size());
    for (const Pred& k : p.kids) out.push_back(&k);
    return out;
  }
  // Every conjunct of `p` is one of the bounds of the loops being lowered.
  bool implies_all(const Pred& p) const {
    for (const Pred* c : conjuncts(p)) {
      if (std::find(implied_.begin(), implied_.end(), c) == implied_.end()) return false;
    }
    return true;
  }
  // An affine value as one expression when ranges prove that no step overflows.
  std::optional<ExprP> pure_affine(const Affine& a) {
    ExprP acc = lit_i64(a.constant_term());
    for (const auto& [v, c] : a.terms()) {
      const auto& x = env_.at(static_cast<size_t>(v));
      if (!x || x->kind != Val::Kind::Scalar || x->scalar->type != Scalar::I64) return std::nullopt;
      ExprP term = mul_i64(lit_i64(c), x->scalar);
      if (!as_i64(term) && !range(term)) return std::nullopt;
      acc = add_i64(acc, term);
      if (!as_i64(acc) && !range(acc)) return std::nullopt;
    }
    return acc;
  }
  // Every affine conjunct of `p` evaluates without overflow at every point (so skipping the
  // points where it fails cannot skip an error the interpreter would report).
  bool overflow_free(const Pred& p) {
    switch (p.kind) {
      case Pred::Kind::Ge0:
      case Pred::Kind::Eq0:
        return pure_affine(p.expr).has_value();
      case Pred::Kind::And:
      case Pred::Kind::Or:
        for (const Pred& k : p.kids) {
          if (!overflow_free(k)) return false;
        }
        return true;
      default:
        return true;
    }
  }
  // The guard of a region body that is one guard statement yielding result `k`, or null.
  static const Pred* single_guard(const ir::Block& body, size_t k) {
    if (body.stmts.size() != 1 || k >= body.results.size()) return nullptr;
    const ir::Stmt& st = body.stmts[0];
    const auto* g = st.as<ir::GuardOp>();
    const ir::Atom& r = body.results[k];
    if (g == nullptr || st.results.size() != 1 || !r.is_var || r.var != st.results[0]) {
      return nullptr;
    }
    return &g->pred;
  }
  // Whether the loops over `ivars` may skip the points where `p` fails: every affine conjunct
  // evaluates without overflow anywhere in the index space (checked with the index variables
  // bound to their ranges).
  bool may_tighten(const Pred& p, const std::vector<ir::IndexVar>& ivars,
                   const std::vector<ExprP>& ext) {
    for (size_t d = 0; d < ivars.size(); ++d) {
      auto c = as_i64(ext[d]);
      if (!c || *c <= 0) return false;
      LocalId probe = out_.new_local("probe", Scalar::I64);
      ranges_[probe] = Interval{0, *c - 1};
      bind(ivars[d].var, scalar_val(local(out_, probe), Scalar::I64));
    }
    return overflow_free(p);
  }

  // --- generators ---
  void lower_gen(const ir::Stmt& s, const ir::GenOp& op) {
    const ir::VarId v = s.results[0];
    std::vector<ExprP> ext = extents(op.ivars, s.span, false);
    const size_t r = op.ivars.size();
    Val dst = alloc_for(v, s.span, interp::SizeRule::Generator, r);
    if (static_size_error(dst.dims, interp::SizeRule::Generator, r)) {
      bind(v, dst);  // it has failed: what follows is never reached
      return;
    }
    std::vector<ExprP> inner_dims(dst.dims.begin() + static_cast<ptrdiff_t>(r), dst.dims.end());
    Val inner = dst;
    inner.dims = inner_dims;
    ExprP inner_n = inner.numel();
    if (interchanged_sum(op, ext, dst)) {
      attach_mark_pred(v, dst);
      bind(v, dst);
      return;
    }
    // Inside another loop the points still run independently, on one thread (in vector lanes
    // when the body allows): the outermost loop alone forks.
    const bool parallel = loop_depth_ == 0;
    if (parallel) out_.uses_parallel = true;
    ++loop_depth_;
    splits_ = window_splits(op, ext);
    for_points(op.ivars, ext, parallel ? PointLoops::Parallel : PointLoops::Independent,
               [&](const ExprP& point) {
                 auto saved = std::move(splits_);  // for this generator's loops only
                 splits_.clear();
                 Val slot = view(dst, add_i64(dst.offset, mul_i64(point, inner_n)), inner_dims);
                 std::vector<Val> dests{slot};
                 lower_block(op.body, &dests);
                 splits_ = std::move(saved);
               });
    splits_.clear();
    --loop_depth_;
    // Every element written with a mark that folded to "not a strong zero": the marks are all
    // 0, and reads need not load them.
    if (dst.mask_pointer >= 0 && marks_set_.count(dst.mask_pointer) == 0 && pending_free_marks(v)) {
      dst.mask_pointer = -1;
    }
    attach_mark_pred(v, dst);
    bind(v, dst);
  }
  // Whether v's buffer is its own (not a destination whose marks a parent reads).
  bool pending_free_marks(ir::VarId v) const { return own_buffer_.count(v) != 0; }
  void attach_mark_pred(ir::VarId v, Val& x) const {
    auto it = mark_preds_.find(v);
    if (it != mark_preds_.end()) x.mark_pred = std::make_shared<const MarkPred>(it->second);
  }

  // A generator of long sums, `for o, m. sum i. e`, runs as `for o. for i. for m.
  // acc[m] += e` for a suffix m of its index variables: each element still adds its terms in
  // the same order (the same rounding as the interpreter; but see the lanes below), but the
  // inner loop carries no chain of dependent additions, and `A^T r` reads A by rows. m is the
  // longest suffix whose block of outputs stays in cache (at most 4096), unless a read strides
  // along the innermost index. When the body goes on after the sum (`let s = sum i. e; f(s)`, an
  // epilogue), the block's sums are computed first, with the flags of their masks, and then `f` for
  // each m in order. Only where nothing in the sum can fail (the first error could otherwise
  // differ).
  bool interchanged_sum(const ir::GenOp& op, const std::vector<ExprP>& ext, const Val& dst) {
    constexpr int64_t kMaxBlock = 4096;  // 32 KB of f64: the accumulators stay in L1
    constexpr int64_t kMinTerms = 8;
    if (op.body.stmts.empty() || op.body.results.size() != 1) return false;
    if (dst.mask_pointer >= 0) return false;  // marks are written by the general path
    const ir::Stmt& st = op.body.stmts[0];
    const auto* red = st.as<ir::ReduceOp>();
    const ir::Atom& res = op.body.results[0];
    if (red == nullptr || red->kind != ir::ReduceKind::Sum || st.results.size() != 1 ||
        !f_.type_of(st.results[0]).is_scalar() || !is_real(f_.type_of(st.results[0]).elem) ||
        dst.dims.size() != op.ivars.size()) {
      return false;
    }
    const bool epilogue = op.body.stmts.size() > 1 || !res.is_var || res.var != st.results[0];
    std::vector<ExprP> sum_ext;
    int64_t terms = 1;
    for (const ir::IndexVar& iv : red->ivars) {
      std::optional<int64_t> e =
          iv.extent.eval([&](const std::string& n) -> std::optional<int64_t> {
            auto it = sizes_.find(n);
            return it == sizes_.end() ? std::nullopt : as_i64(it->second);
          });
      if (!e || *e <= 0) return false;
      terms *= *e;
      sum_ext.push_back(lit_i64(*e));
    }
    if (terms < kMinTerms) return false;
    for (const ExprP& e : ext) {
      if (!as_i64(e) || *as_i64(e) <= 0) return false;
    }
    // The longest suffix of the generator's variables to move inside the sum: its innermost
    // index is the generator's last, which no read may stride along.
    if (strided_by_generator(red->body, op.ivars.back().var)) return false;
    size_t first = op.ivars.size();
    int64_t block = 1;
    while (first > 0 && block * *as_i64(ext[first - 1]) <= kMaxBlock) {
      block *= *as_i64(ext[first - 1]);
      --first;
    }
    if (first == op.ivars.size()) return false;
    const std::vector<ir::IndexVar> outer(op.ivars.begin(),
                                          op.ivars.begin() + static_cast<ptrdiff_t>(first));
    const std::vector<ir::IndexVar> inner(op.ivars.begin() + static_cast<ptrdiff_t>(first),
                                          op.ivars.end());
    const std::vector<ExprP> outer_ext(ext.begin(), ext.begin() + static_cast<ptrdiff_t>(first));
    const std::vector<ExprP> inner_ext(ext.begin() + static_cast<ptrdiff_t>(first), ext.end());
    // A guard over the sum's own indices: a triangle (`r >= c`, c an index of the block) bounds
    // the loops over m; a window (`0 <= r - i < p`, r an outer index) runs in the plain order,
    // tightened and split at its borders. So each conjunct that mentions an index of the sum
    // must mention one of the block's and none of the outer ones, and (skipped points being
    // strong zeros) nothing after the sum may read its mask.
    bool guard_on_sum = false;
    if (const Pred* g = single_guard(red->body, 0)) {
      auto mentions = [](const std::vector<int32_t>& vars, const std::vector<ir::IndexVar>& ivs) {
        return std::any_of(ivs.begin(), ivs.end(), [&](const ir::IndexVar& iv) {
          return std::find(vars.begin(), vars.end(), iv.var) != vars.end();
        });
      };
      for (const Pred* c : conjuncts(*g)) {
        std::vector<int32_t> vars;
        c->collect_vars(vars);
        if (!mentions(vars, red->ivars)) continue;
        if (epilogue || !mentions(vars, inner) || mentions(vars, outer)) return false;
        guard_on_sum = true;
      }
    }
    // Lanes: when the block's inner extent is too short to fill a vector and the terms read
    // consecutive elements along the sum's last index j, each sum keeps kLanes partial sums
    // (lane l adds the terms with j = l mod kLanes, in order), added up at the end: the inner
    // loop runs along j, vectorized. The terms are reassociated (language.md §7 allows it);
    // every other sum adds in the interpreter's order.
    // (Lanes bind j inside the block's loops, so a triangle's guard cannot bound those.)
    const ir::VarId last = red->ivars.back().var;
    const bool lanes_fit = *as_i64(inner_ext.back()) < 2 * kLanes &&
                           *as_i64(sum_ext.back()) >= 4 * kLanes && reads_along(red->body, last) &&
                           !strided_by_generator(red->body, last) && !guard_on_sum;
    // Lower the interchanged loops aside; keep them when the sum cannot fail.
    std::optional<Body> b;
    if (lanes_fit)
      b = interchanged_loops(op, dst, outer, inner, outer_ext, inner_ext, sum_ext, block, epilogue,
                             true);
    if (!b)
      b = interchanged_loops(op, dst, outer, inner, outer_ext, inner_ext, sum_ext, block, epilogue,
                             false);
    if (!b) return false;
    if (loop_depth_ == 0 && !outer.empty()) out_.uses_parallel = true;
    for (Stmt& x : *b) bodies_.back()->push_back(std::move(x));
    return true;
  }
  static constexpr int64_t kLanes = 4;  // f64 lanes of an AVX2 vector
  // The loops of interchanged_sum: nullopt when a term can fail, is not a scalar, or (with
  // `lanes`) can be masked.
  std::optional<Body> interchanged_loops(const ir::GenOp& op, const Val& dst,
                                         const std::vector<ir::IndexVar>& outer,
                                         const std::vector<ir::IndexVar>& inner,
                                         const std::vector<ExprP>& outer_ext,
                                         const std::vector<ExprP>& inner_ext,
                                         const std::vector<ExprP>& sum_ext, int64_t block,
                                         bool epilogue, bool lanes) {
    const ir::Stmt& st = op.body.stmts[0];
    const auto* red = st.as<ir::ReduceOp>();
    const Scalar elem = f_.type_of(st.results[0]).elem;
    const bool parallel = loop_depth_ == 0 && !outer.empty();
    const int64_t width = lanes ? kLanes : 1;
    bool ok = true;
    ++loop_depth_;
    Body b = nested([&] {
      auto sums = [&](const ExprP& o) {
        // The block accumulates in an array on the stack, which the C++ compiler knows aliases
        // no input: it vectorizes along m (or j) or keeps the block in registers.
        const LocalId acc = out_.new_local("acc", elem, true);
        emit(Alloc{.pointer = acc, .count = lit_i64(block * width), .on_stack = true});
        emit(Fill{acc, lit_i64(0), lit_i64(block * width), lit_real(0, elem)});
        // The flags of the sums' masks (lower_reduce's `live` and `strong`), for an epilogue.
        LocalId live = -1, strong = -1;
        bool masked_terms = false;
        Body flags = nested([&] {
          if (!epilogue) return;
          live = out_.new_local("acc_live", Scalar::Bool, true);
          strong = out_.new_local("acc_strong", Scalar::Bool, true);
          for (LocalId f : {live, strong}) {
            emit(Alloc{.pointer = f, .count = lit_i64(block), .on_stack = true});
            emit(Fill{f, lit_i64(0), lit_i64(block), lit_bool(false)});
          }
        });
        // A guard of the terms over the generator's indices alone bounds the loops over m (a
        // triangle runs as one); the points it skips are strong zeros of their sums.
        // (Decided where the sum's indices are bound: a triangle's guard mentions them.)
        const Pred* guard = single_guard(red->body, 0);
        bool tight = false;
        auto tighten_block = [&] {
          tight = guard != nullptr && may_tighten(*guard, inner, inner_ext);
          if (tight) tighten_ = guard;
        };
        // One term added to accumulator `at` of element m.
        auto term = [&](const ExprP& m, const ExprP& at) {
          std::vector<Val> r = lower_block(red->body, nullptr);
          const Val& x = r.at(0);
          ok = ok && x.kind == Val::Kind::Scalar;
          Body add = nested([&] {
            emit(Store{acc, at, prim(Prim::Add, {load(elem, acc, at), x.scalar})});
          });
          // A masked term is skipped, as the interpreter's sum skips it.
          if (x.mask && !as_i64(x.mask)) {
            masked_terms = true;
            if (epilogue) {
              emit(Store{live, m, or_(load(Scalar::Bool, live, m), mask_is(x.mask, 0))});
              emit(Store{strong, m,
                         or_(load(Scalar::Bool, strong, m), mask_is(x.mask, kStrongZero))});
            }
            emit(If{mask_is(x.mask, 0), std::move(add), {}});
          } else if (!x.mask || as_i64(x.mask) == int64_t{0}) {
            for (Stmt& a : add) bodies_.back()->push_back(std::move(a));
          } else {
            masked_terms = true;  // every term masked alike: none is live
            if (epilogue && as_i64(x.mask) == kStrongZero) emit(Store{strong, m, lit_bool(true)});
          }
        };
        Body terms_loops = nested([&] {
          if (!lanes) {
            for_points(red->ivars, sum_ext, PointLoops::Ordered, [&](const ExprP&) {
              tighten_block();
              for_points(inner, inner_ext, PointLoops::Ordered,
                         [&](const ExprP& m) { term(m, m); });
            });
            return;
          }
          // The last sum index in groups of kLanes (lane l: j = start + l), then the rest.
          const std::vector<ir::IndexVar> head(red->ivars.begin(), red->ivars.end() - 1);
          const std::vector<ExprP> head_ext(sum_ext.begin(), sum_ext.end() - 1);
          const ir::IndexVar& last = red->ivars.back();
          const int64_t extent = *as_i64(sum_ext.back());
          const int64_t groups = extent / kLanes, rest = extent % kLanes;
          auto group = [&](const ExprP& start, int64_t count) {
            tighten_block();
            for_points(inner, inner_ext, PointLoops::Ordered, [&](const ExprP& m) {
              const LocalId l = out_.new_local("lane", Scalar::I64);
              ranges_[l] = Interval{0, count - 1};
              Body lane = nested([&] {
                const LocalId j = out_.new_local(c_hint(last.var), Scalar::I64);
                emit(Declare{j, add_i64(start, local(out_, l))});
                ranges_[j] = Interval{0, extent - 1};
                bind(last.var, scalar_val(local(out_, j), Scalar::I64));
                term(m, add_i64(mul_i64(m, lit_i64(kLanes)), local(out_, l)));
              });
              For f{l, lit_i64(0), lit_i64(count), std::move(lane)};
              f.simd = true;
              emit(std::move(f));
            });
          };
          for_points(head, head_ext, PointLoops::Ordered, [&](const ExprP&) {
            if (groups > 0) {
              const LocalId g = out_.new_local("group", Scalar::I64);
              ranges_[g] = Interval{0, groups - 1};
              Body body = nested([&] { group(mul_i64(local(out_, g), lit_i64(kLanes)), kLanes); });
              emit(For{g, lit_i64(0), lit_i64(groups), std::move(body)});
            }
            if (rest > 0) group(lit_i64(groups * kLanes), rest);
          });
        });
        ok = ok && !may_fail(terms_loops) && !(lanes && masked_terms);
        if (masked_terms) {  // the flags are kept only when a term can be masked
          for (Stmt& f : flags) bodies_.back()->push_back(std::move(f));
        }
        for (Stmt& t : terms_loops) bodies_.back()->push_back(std::move(t));
        // The sums: the lanes of each added up, in order.
        LocalId sums_at = acc;
        if (lanes) {
          sums_at = out_.new_local("acc_sum", elem, true);
          emit(Alloc{.pointer = sums_at, .count = lit_i64(block), .on_stack = true});
          const LocalId k = out_.new_local("k", Scalar::I64);
          Body add_lanes = nested([&] {
            ExprP at = mul_i64(local(out_, k), lit_i64(kLanes));
            ExprP total = load(elem, acc, at);
            for (int64_t l = 1; l < kLanes; ++l) {
              total = prim(Prim::Add, {total, load(elem, acc, add_i64(at, lit_i64(l)))});
            }
            emit(Store{sums_at, local(out_, k), total});
          });
          emit(For{k, lit_i64(0), lit_i64(block), std::move(add_lanes)});
        }
        ExprP base = add_i64(dst.offset, mul_i64(o, lit_i64(block)));
        if (!epilogue) {
          emit(Copy{dst.pointer, base, sums_at, lit_i64(0), lit_i64(block)});
          return;
        }
        // The rest of the body for each element of the block, in order.
        ir::Block rest;
        rest.stmts.assign(op.body.stmts.begin() + 1, op.body.stmts.end());
        rest.results = op.body.results;
        for_points(inner, inner_ext, PointLoops::Ordered, [&](const ExprP& m) {
          ExprP skipped = lit_bool(false);
          if (tight) {
            whole_pred_ = *guard;
            skipped = not_(pred(*guard, st.span));
          }
          ExprP mask = nullptr;
          if (masked_terms) {
            ExprP is_strong = or_(load(Scalar::Bool, strong, m), skipped);
            mask = select(load(Scalar::Bool, live, m), lit_i64(0),
                          select(is_strong, lit_i64(kStrongZero), lit_i64(kEmptySum)));
          } else if (tight) {
            mask = select(skipped, lit_i64(kStrongZero), lit_i64(0));
          }
          if (mask) mask = declare_mask(mask, "acc_mask");
          bind(st.results[0], scalar_val(load(elem, sums_at, m), elem, mask));
          std::vector<Val> dests{view(dst, add_i64(base, m), {})};
          lower_block(rest, &dests);
        });
      };
      if (outer.empty()) {
        sums(lit_i64(0));
      } else {
        for_points(outer, outer_ext, parallel ? PointLoops::Parallel : PointLoops::Independent,
                   sums);
      }
    });
    --loop_depth_;
    if (!ok) return std::nullopt;
    return b;
  }
  // Some read in `b` has `v` in its last index with coefficient 1: consecutive values of v
  // read consecutive elements.
  static bool reads_along(const ir::Block& b, ir::VarId v) {
    for (const ir::Stmt& s : b.stmts) {
      if (const auto* ix = s.as<ir::IndexOp>(); ix != nullptr && !ix->indices.empty()) {
        const ir::IndexExpr& e = ix->indices.back();
        if (e.is_affine && e.affine.coeff(v) == 1) return true;
      }
      bool found = false;
      ir::for_each_region(s, [&](const ir::Block& r) { found = found || reads_along(r, v); });
      if (found) return true;
    }
    return false;
  }
  // Some read in `b` moves across rows with `innermost` (the innermost index of the block) but
  // not along its last dimension (A[i, j] with i the generator's): interchanged, the inner loop
  // would stride. (A read across rows with an outer index of the block, B[r, i] for m = (r, c),
  // is invariant in the inner loop.)
  static bool strided_by_generator(const ir::Block& b, ir::VarId innermost) {
    for (const ir::Stmt& s : b.stmts) {
      if (const auto* ix = s.as<ir::IndexOp>(); ix != nullptr && !ix->indices.empty()) {
        const ir::IndexExpr& last = ix->indices.back();
        const bool along = last.is_affine && last.affine.mentions(innermost);
        bool across = false;
        for (size_t d = 0; d + 1 < ix->indices.size(); ++d) {
          const ir::IndexExpr& e = ix->indices[d];
          across = across || (e.is_affine && e.affine.mentions(innermost));
        }
        if (across && !along) return true;
      }
      bool nested = false;
      std::visit(
          [&](const auto& op) {
            using T = std::decay_t<decltype(op)>;
            if constexpr (std::is_same_v<T, ir::GenOp> || std::is_same_v<T, ir::ReduceOp> ||
                          std::is_same_v<T, ir::GuardOp> || std::is_same_v<T, ir::AccumOp>) {
              nested = strided_by_generator(op.body, innermost);
            } else if constexpr (std::is_same_v<T, ir::IfOp>) {
              nested = strided_by_generator(op.then_branch, innermost) ||
                       strided_by_generator(op.else_branch, innermost);
            } else if constexpr (std::is_same_v<T, ir::LoopOp>) {
              nested = true;  // a loop per term: keep the plain order
            }
          },
          s.op);
      if (nested) return true;
    }
    return false;
  }
  // --- reductions ---
  void lower_reduce(const ir::Stmt& s, const ir::ReduceOp& op) {
    const ir::VarId v = s.results[0];
    const Type& t = f_.type_of(v);
    const bool is_sum = op.kind == ir::ReduceKind::Sum;
    const std::string hint = c_hint(v);
    // Masks of the terms: `live` counts terms that are not masked, `strong` whether one was a
    // strong zero; only kept when a term can be masked.
    LocalId live = -1, strong = -1, have = -1;
    std::vector<ExprP> ext = extents(op.ivars, s.span, true);
    ExprP points = lit_i64(1);
    for (const ExprP& e : ext) {
      points = mul_i64(points, select(prim(Prim::Gt, {e, lit_i64(0)}), lit_i64(1), lit_i64(0)));
    }
    auto start_flags = [&] {
      live = mutable_local(hint + "_live", Scalar::Bool, lit_bool(false));
      strong = mutable_local(hint + "_strong", Scalar::Bool, lit_bool(false));
    };
    const bool int_extreme = t.elem == Scalar::I64 && !is_sum;
    const int overflow = message_site(s.span, "integer overflow in a sum of i64 values");
    if (t.is_scalar()) {
      ExprP start = reduction_start(op.kind, t.elem);
      LocalId acc = mutable_local(hint, t.elem, start);
      if (int_extreme) have = mutable_local(hint + "_have", Scalar::Bool, lit_bool(false));
      bool masked_terms = false;
      Body flags_decl = nested(start_flags);
      const Pred* guard = is_sum ? single_guard(op.body, 0) : nullptr;
      if (guard != nullptr && may_tighten(*guard, op.ivars, ext)) {
        tighten_ = guard;
        tighten_strong_ = strong;
        masked_terms = true;  // skipped points are strong zeros
      }
      ++loop_depth_;
      const size_t loops_at = bodies_.back()->size();
      for_points(op.ivars, ext, PointLoops::Ordered, [&](const ExprP&) {
        std::vector<Val> res = lower_block(op.body, nullptr);
        const Val& x = res.at(0);
        ExprP acc_e = local(out_, acc);
        Body combine = nested([&] {
          if (t.elem == Scalar::I64) {
            if (is_sum) {
              emit(Assign{acc, int_op(Prim::Add, acc_e, x.scalar, overflow)});
            } else {
              Prim cmp = op.kind == ir::ReduceKind::Max ? Prim::Gt : Prim::Lt;
              emit(Assign{acc, select(or_(not_(local(out_, have)), prim(cmp, {x.scalar, acc_e})),
                                      x.scalar, acc_e)});
              emit(Assign{have, lit_bool(true)});
            }
          } else {
            emit(Assign{acc, real_combine(op.kind, acc_e, x.scalar)});
          }
        });
        add_term(x, is_sum, masked_terms, live, strong, std::move(combine));
      });
      --loop_depth_;
      if (is_sum && t.elem != Scalar::I64 && !masked_terms) {
        Body& b = *bodies_.back();
        for (size_t k = loops_at; k < b.size(); ++k) mark_long_sums(b[k], acc);
      }
      if (masked_terms) {
        // The flags must be declared before the loop: move their declarations in front of it.
        Body& b = *bodies_.back();
        auto at = std::find_if(b.begin(), b.end(), [&](const Stmt& st) {
          const auto* d = std::get_if<Declare>(&st.op);
          return d != nullptr && d->local == acc;
        });
        b.insert(at, flags_decl.begin(), flags_decl.end());
      }
      if (int_extreme) {
        fail_unless(local(out_, have),
                    message_site(s.span, std::string(ast::to_string(op.kind)) +
                                             " over an empty range of integers has no value"));
      }
      ExprP mask;
      if (is_sum) mask = sum_mask(masked_terms, live, strong, points);
      bind(v, scalar_val(local(out_, acc), t.elem,
                         mask ? declare_mask(mask, hint + "_mask") : nullptr));
      return;
    }
    // A tensor-valued reduction accumulates elementwise into its destination.
    Val dst = alloc_for(v, s.span);
    if (static_size_error(dst.dims, interp::SizeRule::Tensor, 0)) {
      bind(v, dst);  // it has failed: what follows is never reached
      return;
    }
    if (t.elem != Scalar::I64 || is_sum) {
      ExprP start = reduction_start(op.kind, t.elem);
      emit(Fill{dst.pointer, dst.offset, dst.numel(), start});
    } else {
      have = mutable_local(hint + "_have", Scalar::Bool, lit_bool(false));
    }
    bool masked_terms = false;
    Body flags_decl = nested(start_flags);
    const size_t flags_at = bodies_.back()->size();
    // Element marks: the sum is a strong zero where a term was one and none was live.
    const LocalId live_marks = start_marks(dst, hint);
    const Pred* guard = is_sum && live_marks < 0 ? single_guard(op.body, 0) : nullptr;
    if (guard != nullptr && may_tighten(*guard, op.ivars, ext)) {
      tighten_ = guard;
      tighten_strong_ = strong;
      masked_terms = true;
    }
    ++loop_depth_;
    for_points(op.ivars, ext, PointLoops::Ordered, [&](const ExprP&) {
      std::vector<Val> res = lower_block(op.body, nullptr);
      const Val& x = res.at(0);
      Body combine = nested([&] {
        if (live_marks >= 0) {
          add_marked(dst, dst.offset, lit_i64(0), x, live_marks);
        } else if (have >= 0) {
          Body first = nested([&] { copy(dst, x); });
          Body rest = nested([&] {
            emit(Combine{op.kind, dst.pointer, dst.offset, x.pointer, x.offset, dst.numel(), -1});
          });
          emit(If{local(out_, have), std::move(rest), std::move(first)});
          emit(Assign{have, lit_bool(true)});
        } else {
          emit(Combine{op.kind, dst.pointer, dst.offset, x.pointer, x.offset, dst.numel(),
                       t.elem == Scalar::I64 ? overflow : -1});
        }
      });
      add_term(x, is_sum, masked_terms, live, strong, std::move(combine));
      if (live_marks >= 0) mark_strong(dst, dst.offset, dst.numel(), x.mask, lit_bool(true));
    });
    --loop_depth_;
    if (masked_terms) {
      Body& b = *bodies_.back();
      b.insert(b.begin() + static_cast<ptrdiff_t>(flags_at), flags_decl.begin(), flags_decl.end());
    }
    finish_marks(dst, live_marks);
    if (have >= 0) {
      ExprP nonempty = prim(Prim::Gt, {dst.numel(), lit_i64(0)});
      fail_unless(or_(local(out_, have), not_(nonempty)),
                  message_site(s.span, std::string(ast::to_string(op.kind)) +
                                           " over an empty range of integers has no value"));
    }
    Val out = dst;
    if (is_sum)
      out.mask = declare_mask(sum_mask(masked_terms, live, strong, points), hint + "_mask");
    bind(v, out);
  }
  // Element marks of a sum or accum into dst (interp/marks.h's SumMarks): dst's marks say
  // which elements a strong-zero term reached and a second buffer, returned, which a live
  // one did; finish_marks keeps the first where the second is not set. -1 without marks.
  LocalId start_marks(const Val& dst, const std::string& hint) {
    if (dst.mask_pointer < 0) return -1;
    emit(Fill{dst.mask_pointer, dst.offset, dst.numel(), lit_bool(false)});
    Val live = alloc_tensor(Scalar::Bool, dst.dims, Span{}, hint + "_live");
    emit(Fill{live.pointer, lit_i64(0), dst.numel(), lit_bool(false)});
    return live.pointer;
  }
  // dst[at ...] += the elements of x (tensor or scalar) that are not marked; `rel` is `at`
  // relative to dst's offset (the index into the live flags).
  void add_marked(const Val& dst, const ExprP& at, const ExprP& rel, const Val& x,
                  LocalId live_marks) {
    auto add_one = [&](const ExprP& d, const ExprP& r, const ExprP& value, const ExprP& marked) {
      Body add = nested([&] {
        emit(Store{dst.pointer, d, prim(Prim::Add, {load(dst.type, dst.pointer, d), value})});
        emit(Store{live_marks, r, lit_bool(true)});
      });
      if (as_bool(marked) == false) {
        for (Stmt& st : add) bodies_.back()->push_back(std::move(st));
        return;
      }
      marks_set_.insert(dst.mask_pointer);
      Body mark = nested([&] { emit(Store{dst.mask_pointer, d, lit_bool(true)}); });
      emit(If{marked, std::move(mark), std::move(add)});
    };
    if (!x.is_tensor()) {
      add_one(at, rel, x.scalar, lit_bool(false));  // its mask is the whole term's
      return;
    }
    for_elements(x.numel(), "e", [&](const ExprP& e) {
      const ExprP xo = add_i64(x.offset, e);
      add_one(add_i64(at, e), add_i64(rel, e), load(x.type, x.pointer, xo),
              x.mask_pointer >= 0 ? load(Scalar::Bool, x.mask_pointer, xo) : lit_bool(false));
    });
  }
  // A term whose whole mask says strong zero marks its `n` elements at `at` (where `cond`).
  void mark_strong(const Val& dst, const ExprP& at, const ExprP& n, const ExprP& mask,
                   const ExprP& cond) {
    if (!may_be_strong(mask)) return;
    marks_set_.insert(dst.mask_pointer);
    Body all = nested([&] { emit(Fill{dst.mask_pointer, at, n, lit_bool(true)}); });
    emit(If{and_(mask_is(mask, kStrongZero), cond), std::move(all), {}});
  }
  void finish_marks(const Val& dst, LocalId live_marks) {
    if (live_marks < 0) return;
    for_elements(dst.numel(), "e", [&](const ExprP& e) {
      const ExprP d = add_i64(dst.offset, e);
      emit(Store{
          dst.mask_pointer, d,
          and_(load(Scalar::Bool, dst.mask_pointer, d), not_(load(Scalar::Bool, live_marks, e)))});
    });
  }
  // The innermost loops of a real sum into `acc` that run long (may_fail.h's runs_long) may
  // add their terms in vector lanes (For::sum_into), where a vectorized body (exp from libmvec,
  // say) pays. Only loops whose body is flat (no inner loop, no buffer: lanes run iterations at
  // once) and cannot fail.
  static void mark_long_sums(Stmt& s, LocalId acc) {
    auto* f = std::get_if<For>(&s.op);
    if (f == nullptr) return;
    for (Stmt& inner : f->body) mark_long_sums(inner, acc);
    if (!f->parallel && runs_long(*f) && !has_loop_or_buffer(f->body) && !may_fail(f->body)) {
      f->sum_into = acc;
    }
  }
  // Emits `combine` for term `x` of a reduction, keeping the flags of its mask: `live` (a term
  // that is not masked) and `strong` (a strong zero); a sum skips masked terms.
  void add_term(const Val& x, bool is_sum, bool& masked_terms, LocalId live, LocalId strong,
                Body combine) {
    if (x.mask && as_i64(x.mask) != int64_t{0}) {  // the term may be masked
      masked_terms = true;
      ExprP is_live = mask_is(x.mask, 0), is_strong = mask_is(x.mask, kStrongZero);
      if (as_bool(is_live) != false) emit(Assign{live, or_(local(out_, live), is_live)});
      if (as_bool(is_strong) != false) emit(Assign{strong, or_(local(out_, strong), is_strong)});
      if (is_sum) {
        if (!as_i64(x.mask)) emit(If{is_live, std::move(combine), {}});
        return;  // a masked term adds nothing
      }
    } else if (masked_terms) {
      // Flags kept for skipped points (tightened bounds): this term is live.
      emit(Assign{live, lit_bool(true)});
    }
    for (Stmt& st : combine) bodies_.back()->push_back(std::move(st));
  }
  // Where a reduction starts: 0 for sums (and i64), -inf for max, +inf for min.
  static ExprP reduction_start(ir::ReduceKind how, Scalar elem) {
    if (elem == Scalar::I64) return lit_i64(0);
    if (how == ir::ReduceKind::Sum) return lit_real(0, elem);
    const double inf = std::numeric_limits<double>::infinity();
    return lit_real(how == ir::ReduceKind::Max ? -inf : inf, elem);
  }
  static ExprP real_combine(ir::ReduceKind how, ExprP acc, ExprP x) {
    switch (how) {
      case ir::ReduceKind::Sum:
        return prim(Prim::Add, {std::move(acc), std::move(x)});
      case ir::ReduceKind::Max:
        return prim(Prim::Max, {std::move(acc), std::move(x)});  // emitted as max_combine
      case ir::ReduceKind::Min:
        return prim(Prim::Min, {std::move(acc), std::move(x)});
    }
    return acc;
  }
  // A sum's mask: ordinary when a term was live; else a strong zero when a term was one, and an
  // empty sum otherwise (interp/eval_regions.cpp).
  ExprP sum_mask(bool masked_terms, LocalId live, LocalId strong, const ExprP& points) {
    if (!masked_terms) {
      return select(prim(Prim::Gt, {points, lit_i64(0)}), lit_i64(0), lit_i64(kEmptySum));
    }
    return select(local(out_, live), lit_i64(0),
                  select(local(out_, strong), lit_i64(kStrongZero), lit_i64(kEmptySum)));
  }

  // --- guards and conditionals ---
  std::vector<Val> slots_for(const ir::Stmt& s, bool masked) {
    std::vector<Val> slots;
    for (ir::VarId v : s.results) {
      const Type& t = f_.type_of(v);
      // A mask where the value may be a strong zero (language.md §5.6).
      const bool mask = masked && flow_.may_be_whole(v);
      if (t.is_tensor()) {
        Val x = alloc_for(v, s.span, interp::SizeRule::Tensor, 0, true);
        if (mask && is_real(t.elem)) add_mask_local(x, c_hint(v));
        slots.push_back(std::move(x));
      } else {
        slots.push_back(make_slot(t, s.span, c_hint(v), mask, flow_.may_have_elems(v)));
      }
    }
    return slots;
  }
  void lower_guard(const ir::Stmt& s, const ir::GuardOp& op) {
    if (&op.pred == guard_true_) {
      // The loops around it visit only points where it holds: the body's values, unmasked
      // unless the body masks them itself.
      bool scalars = true;
      for (ir::VarId v : s.results) scalars = scalars && f_.type_of(v).is_scalar();
      if (scalars) {
        guard_true_ = nullptr;
        const size_t known = facts_.size();
        facts_of(op.pred, facts_);
        std::vector<Val> res = lower_block(op.body, nullptr);
        facts_.resize(known);
        for (size_t k = 0; k < s.results.size(); ++k) bind(s.results[k], res[k]);
        return;
      }
    }
    std::vector<Val> slots = slots_for(s, true);
    whole_pred_ = op.pred;
    ExprP holds = &op.pred == guard_true_ ? lit_bool(true) : pred(op.pred, s.span);
    const size_t known = facts_.size();
    facts_of(op.pred, facts_);
    Body then_body = nested([&] { lower_block(op.body, &slots); });
    facts_.resize(known);
    Body else_body = nested([&] {
      for (const Val& sl : slots) assign_zero(sl, s.span);
    });
    if (auto c = as_bool(holds)) {
      for (Stmt& st : *c ? then_body : else_body) bodies_.back()->push_back(std::move(st));
    } else {
      emit(If{holds, std::move(then_body), std::move(else_body)});
    }
    for (size_t k = 0; k < s.results.size(); ++k) bind(s.results[k], slots[k]);
  }
  void lower_if(const ir::Stmt& s, const ir::IfOp& op) {
    std::vector<Val> slots = slots_for(s, true);
    ExprP c = atom(op.cond);
    // A condition this specialization decides (a test on sizes, as a Jacobian's choice between
    // forward and reverse mode) lowers only the branch taken: the other would only cost compile
    // time, and for a Jacobian it is most of the code.
    if (auto known = as_bool(c)) {
      Body taken = nested([&] { lower_block(*known ? op.then_branch : op.else_branch, &slots); });
      for (Stmt& st : taken) bodies_.back()->push_back(std::move(st));
      for (size_t k = 0; k < s.results.size(); ++k) bind(s.results[k], slots[k]);
      return;
    }
    Body then_body = nested([&] { lower_block(op.then_branch, &slots); });
    Body else_body = nested([&] { lower_block(op.else_branch, &slots); });
    emit(If{c, std::move(then_body), std::move(else_body)});
    for (size_t k = 0; k < s.results.size(); ++k) bind(s.results[k], slots[k]);
  }
  // A predicate's truth, short-circuiting like the interpreter (Pred::eval), with overflow
  // checks only where the ranges cannot rule overflow out.
  ExprP pred(const Pred& p, Span span) {
    switch (p.kind) {
      case Pred::Kind::True:
        return lit_bool(true);
      case Pred::Kind::False:
        return lit_bool(false);
      case Pred::Kind::Atom: {
        ExprP a = atom(ir::Atom::of(p.atom));
        return p.negated ? not_(a) : a;
      }
      case Pred::Kind::Ge0:
      case Pred::Kind::Eq0: {
        Site st;
        st.kind = Site::Kind::Overflow;
        st.span = span;
        st.message = "integer overflow while evaluating the predicate " +
                     whole_pred_.to_string([this](int32_t v) { return name_of(v); });
        ExprP a = affine_checked(p.expr, st);
        return prim(p.kind == Pred::Kind::Ge0 ? Prim::Ge : Prim::Eq, {a, lit_i64(0)});
      }
      case Pred::Kind::And:
      case Pred::Kind::Or: {
        const bool is_and = p.kind == Pred::Kind::And;
        // Pure when no conjunct needs statements: one expression.
        Body probe;
        std::vector<ExprP> parts;
        bool pure = true;
        {
          bodies_.push_back(&probe);
          for (const Pred& k : p.kids) parts.push_back(pred(k, span));
          bodies_.pop_back();
          pure = probe.empty();
        }
        if (pure) {
          ExprP acc = lit_bool(is_and);
          for (ExprP& e : parts) acc = is_and ? and_(acc, e) : or_(acc, e);
          return acc;
        }
        // Short-circuit with statements: r = kid0; if (r == is_and) r = kid1; ...
        LocalId r = mutable_local("holds", Scalar::Bool, lit_bool(is_and));
        for (const Pred& k : p.kids) {
          Body b = nested([&] { emit(Assign{r, pred(k, span)}); });
          emit(If{is_and ? local(out_, r) : not_(local(out_, r)), std::move(b), {}});
        }
        return local(out_, r);
      }
    }
    return lit_bool(false);
  }
  // The value of an affine expression, each step checked for overflow (failing at a copy of
  // `st`) unless literals or ranges prove it fits.
  ExprP affine_checked(const Affine& a, const Site& st) {
    ExprP acc = lit_i64(a.constant_term());
    int over = -1;
    auto over_site = [&] {
      if (over < 0) over = site(st);
      return over;
    };
    for (const auto& [v, c] : a.terms()) {
      ExprP x = atom(ir::Atom::of(v));
      ExprP term = mul_i64(lit_i64(c), x);
      if (!as_i64(term) && !range(term)) term = int_op(Prim::Mul, lit_i64(c), x, over_site());
      ExprP sum = add_i64(acc, term);
      if (!as_i64(sum) && !range(sum)) sum = int_op(Prim::Add, acc, term, over_site());
      acc = sum;
    }
    return acc;
  }

  // --- loops ---
  void lower_loop(const ir::Stmt& s, const ir::LoopOp& op) {
    const size_t n = op.state.size();
    const bool saving = op.saves_states;
    // The state: scalars in locals, tensors in two buffers (current, next) swapped per step.
    std::vector<Val> cur(n), next(n);
    for (size_t k = 0; k < n; ++k) {
      const Type& t = f_.type_of(op.state[k]);
      const std::string hint = c_hint(op.state[k]);
      if (t.is_tuple) throw Unsupported{"a loop state of tuple type"};
      // A strong zero in the state stays one (language.md §5.6): a mask local where the value
      // may be one, element marks where its elements may be.
      const bool marks = needs_marks(op.state[k]);
      if (t.is_tensor()) {
        cur[k] = alloc_tensor(t.elem, shape_of(t, s.span), s.span, hint, interp::SizeRule::Tensor,
                              0, false, marks);
        next[k] = alloc_tensor(t.elem, cur[k].dims, s.span, hint + "_next",
                               interp::SizeRule::Tensor, 0, false, marks);
      } else {
        cur[k] = scalar_val(local(out_, mutable_local(hint, t.elem, nullptr)), t.elem);
      }
      if (flow_.may_be_whole(op.state[k]) && is_real(t.elem)) {
        add_mask_local(cur[k], hint);
        if (t.is_tensor()) add_mask_local(next[k], hint + "_next");
      }
    }
    for (size_t k = 0; k < n; ++k) {
      Val init = atom_val(op.init[k]);
      assign(cur[k], init);
      Val st = cur[k];
      bind(op.state[k], st);
    }
    // Saved states: a stack per state variable, of at most `allowed` rows (the interpreter's
    // tensor limit over the state's elements).
    std::vector<Val> stacks(n);
    std::vector<ExprP> numels(n), allowed(n);
    std::vector<int> save_sites(n, -1);
    LocalId iters = mutable_local("iterations", Scalar::I64, lit_i64(0));
    ExprP count;
    if (!op.is_while) {
      count = atom(op.count);
      count = declare(select(prim(Prim::Gt, {count, lit_i64(0)}), count, lit_i64(0)), "count");
    }
    if (saving) {
      for (size_t k = 0; k < n; ++k) {
        numels[k] = cur[k].is_tensor() ? declare(cur[k].numel(), "numel") : lit_i64(1);
        if (auto c = as_i64(numels[k])) {
          allowed[k] = lit_i64(*c > 0 ? in_.max_tensor_elements / *c : INT64_MAX);
        } else {
          // Only ahead of time: the state's shape is known at run time.
          LocalId a = out_.new_local("allowed", Scalar::I64);
          emit(CheckedInt{
              a,
              Prim::FloorDiv,
              {lit_i64(in_.max_tensor_elements), prim(Prim::Max, {numels[k], lit_i64(1)})},
              0});
          allowed[k] = local(out_, a);
        }
        Site st;
        st.kind = Site::Kind::SavedStates;
        st.span = s.span;
        st.message = name_of(op.state[k]);
        st.shape = {in_.max_tensor_elements};
        save_sites[k] = site(std::move(st));
        const Scalar elem = f_.type_of(op.state[k]).elem;
        stacks[k].kind = Val::Kind::Tensor;
        stacks[k].type = elem;
        stacks[k].offset = lit_i64(0);
        stacks[k].pointer = out_.new_local(c_hint(op.state[k]) + "_stack", elem, true);
        // The saved strong zeros: marks beside the stack, allocated and grown alike.
        if (needs_marks(s.results[n + 1 + k])) {
          stacks[k].mask_pointer =
              out_.new_local(c_hint(op.state[k]) + "_stack_marks", Scalar::Bool, true);
        }
        stacks[k].drops_marks = marks_unread(s.results[n + 1 + k]);
        std::vector<LocalId> buffers{stacks[k].pointer};
        if (stacks[k].mask_pointer >= 0) buffers.push_back(stacks[k].mask_pointer);
        if (!op.is_while) {
          ExprP rows = select(prim(Prim::Lt, {count, allowed[k]}), count, allowed[k]);
          ExprP elems = mul_i64(rows, numels[k]);
          if (auto e = as_i64(elems)) {
            for (LocalId b : buffers) emit(Alloc{.pointer = b, .count = lit_i64(*e)});
          } else {
            out_.uses_heap = true;
            ExprP count_n = declare(elems, "n");
            for (LocalId b : buffers) emit(Alloc{.pointer = b, .count = count_n});
          }
        } else {
          out_.uses_heap = true;
          for (LocalId b : buffers) emit(StackInit{b});
        }
      }
    }
    auto save = [&](const ExprP& it) {
      for (size_t k = 0; k < n && saving; ++k) {
        if (as_i64(allowed[k]) != INT64_MAX) {
          fail_unless(prim(Prim::Lt, {it, allowed[k]}), save_sites[k], {add_i64(it, lit_i64(1))});
        }
        if (op.is_while) {
          ExprP grown = mul_i64(add_i64(it, lit_i64(1)), numels[k]);
          emit(StackGrow{stacks[k].pointer, grown});
          if (stacks[k].mask_pointer >= 0) emit(StackGrow{stacks[k].mask_pointer, grown});
        }
        ExprP at = mul_i64(it, numels[k]);
        Val row = view(stacks[k], at, cur[k].is_tensor() ? cur[k].dims : std::vector<ExprP>{});
        assign(row, cur[k]);
      }
    };
    auto step = [&] {
      std::vector<Val> dests(n);
      for (size_t k = 0; k < n; ++k) {
        if (cur[k].is_tensor()) dests[k] = next[k];
      }
      // Scalars are staged in fresh locals first: the body may yield the state in another
      // order.
      std::vector<ir::VarId> placed;
      std::map<ir::VarId, int> uses;
      for (const ir::Atom& a : op.body.results) {
        if (a.is_var) ++uses[a.var];
      }
      for (size_t k = 0; k < n; ++k) {
        const ir::Atom& a = op.body.results[k];
        if (cur[k].is_tensor() && a.is_var && uses[a.var] == 1 && defined_in(op.body, a.var) &&
            !(needs_marks(a.var) && next[k].mask_pointer < 0)) {
          pending_dest_[a.var] = next[k];
          placed.push_back(a.var);
        }
      }
      for (const ir::Stmt& st : op.body.stmts) lower_stmt(st);
      for (ir::VarId v : placed) pending_dest_.erase(v);
      std::vector<ExprP> staged(n), staged_masks(n);
      for (size_t k = 0; k < n; ++k) {
        Val r = atom_val(op.body.results[k]);
        if (cur[k].is_tensor()) {
          assign(next[k], r);  // in place when the body wrote it there
        } else {
          LocalId l = out_.new_local(c_hint(op.state[k]) + "_next", cur[k].type);
          emit(Declare{l, r.scalar});
          staged[k] = local(out_, l);
          if (cur[k].mask) {
            staged_masks[k] =
                declare(r.mask ? r.mask : lit_i64(0), c_hint(op.state[k]) + "_next_mask");
          } else if (may_be_strong(r.mask)) {
            lost_marks(cur[k].scalar->local);
          }
        }
      }
      for (size_t k = 0; k < n; ++k) {
        if (cur[k].is_tensor()) {
          emit(Swap{cur[k].pointer, next[k].pointer});
          if (cur[k].mask_pointer >= 0) emit(Swap{cur[k].mask_pointer, next[k].mask_pointer});
          if (cur[k].mask) emit(Assign{cur[k].mask->local, next[k].mask});
        } else {
          emit(Assign{cur[k].scalar->local, staged[k]});
          if (cur[k].mask) emit(Assign{cur[k].mask->local, staged_masks[k]});
        }
      }
    };
    ++loop_depth_;
    if (!op.is_while) {
      LocalId it = out_.new_local(op.iter >= 0 ? c_hint(op.iter) : "it", Scalar::I64);
      if (auto c = as_i64(count); c && *c > 0) ranges_[it] = Interval{0, *c - 1};
      if (auto r = range(count); r && r->second > 0) ranges_[it] = Interval{0, r->second - 1};
      if (op.iter >= 0) bind(op.iter, scalar_val(local(out_, it), Scalar::I64));
      Body b = nested([&] {
        save(local(out_, it));
        step();
      });
      emit(For{it, lit_i64(0), count, std::move(b), false});
      emit(Assign{iters, count});
    } else {
      const int limit_site = [&] {
        Site st;
        st.kind = Site::Kind::WhileLimit;
        st.span = s.span;
        st.help =
            "if it should run longer, raise the limit with --max-iterations N (0: no limit; in "
            "the C++ API, EvalOptions::max_while_iterations; in Python, max_while_iterations=)";
        return site(std::move(st));
      }();
      Body b = nested([&] {
        std::vector<Val> c = lower_block(op.cond, nullptr);
        Body stop = nested([&] { emit(Break{}); });
        emit(If{not_(c.at(0).scalar), std::move(stop), {}});
        ExprP mw = local(out_, max_while_);
        fail_unless(or_(prim(Prim::Le, {mw, lit_i64(0)}), prim(Prim::Lt, {local(out_, iters), mw})),
                    limit_site, {mw});
        save(local(out_, iters));
        step();
        emit(Assign{iters, add_i64(local(out_, iters), lit_i64(1))});
      });
      emit(Forever{std::move(b)});
    }
    --loop_depth_;
    for (size_t k = 0; k < n; ++k) bind(s.results[k], cur[k]);
    if (saving) {
      ExprP T = local(out_, iters);
      bind(s.results[n], scalar_val(T, Scalar::I64));
      for (size_t k = 0; k < n; ++k) {
        Val st = stacks[k];
        st.dims = {T};
        if (cur[k].is_tensor())
          st.dims.insert(st.dims.end(), cur[k].dims.begin(), cur[k].dims.end());
        bind(s.results[n + 1 + k], st);
      }
    }
  }

  // --- scatter-add ---
  void lower_accum(const ir::Stmt& s, const ir::AccumOp& op) {
    const ir::VarId v = s.results[0];
    const Type& t = f_.type_of(v);
    // The interpreter's order: the extents, then the tensor's size.
    std::vector<ExprP> ext = extents(op.ivars, s.span, true);
    const size_t r = op.shape.size();
    Val dst = alloc_for(v, s.span, interp::SizeRule::Accum, r);
    if (static_size_error(dst.dims, interp::SizeRule::Accum, r)) {
      bind(v, dst);  // it has failed: what follows is never reached
      return;
    }
    emit(Fill{dst.pointer, dst.offset, dst.numel(), zero_of(t.elem)});
    std::vector<ExprP> inner_dims(dst.dims.begin() + static_cast<ptrdiff_t>(r), dst.dims.end());
    Val inner;
    inner.dims = inner_dims;
    ExprP inner_n = inner.numel();
    const int overflow = message_site(s.span, "integer overflow in an accum of i64 values");
    // A cell is a sum of its contributions (interp/eval_index.cpp): element marks as a sum's.
    const LocalId live_marks = start_marks(dst, c_hint(v));
    // Contributions where a guard fails go nowhere: skip those points (unless they mark).
    if (const Pred* guard = live_marks < 0 ? single_guard(op.body, r) : nullptr;
        guard != nullptr && may_tighten(*guard, op.ivars, ext)) {
      tighten_ = guard;
      tighten_strong_ = -1;
    }
    ++loop_depth_;
    for_points(op.ivars, ext, PointLoops::Ordered, [&](const ExprP&) {
      std::vector<Val> res = lower_block(op.body, nullptr);
      const Val& x = res.at(r);
      Body add = nested([&] {
        std::vector<ExprP> idx;
        for (size_t d = 0; d < r; ++d) {
          ExprP i = res[d].scalar;
          check_index(i, dst, d, s.span, Site::Kind::AccumIndex, "");
          idx.push_back(i);
        }
        ExprP rel = flat_offset(dst, idx);
        ExprP off = add_i64(dst.offset, rel);
        if (live_marks >= 0) {
          add_marked(dst, off, rel, x, live_marks);
        } else if (x.is_tensor()) {
          emit(Combine{ir::ReduceKind::Sum, dst.pointer, off, x.pointer, x.offset, inner_n,
                       t.elem == Scalar::I64 ? overflow : -1});
        } else if (t.elem == Scalar::I64) {
          ExprP sum = int_op(Prim::Add, load(t.elem, dst.pointer, off), x.scalar, overflow);
          emit(Store{dst.pointer, off, sum});
        } else {
          emit(
              Store{dst.pointer, off, prim(Prim::Add, {load(t.elem, dst.pointer, off), x.scalar})});
        }
      });
      if (x.mask && !as_i64(x.mask)) {
        emit(If{mask_is(x.mask, 0), std::move(add), {}});  // a masked value goes nowhere
      } else if (!x.mask || *as_i64(x.mask) == 0) {
        for (Stmt& st : add) bodies_.back()->push_back(std::move(st));
      }
      if (live_marks >= 0 && may_be_strong(x.mask)) {
        // A strong zero marks its cell, when the cell exists (else it goes nowhere).
        ExprP in_range = lit_bool(true);
        std::vector<ExprP> idx;
        for (size_t d = 0; d < r; ++d) {
          ExprP i = res[d].scalar;
          in_range = and_(in_range,
                          and_(prim(Prim::Ge, {i, lit_i64(0)}), prim(Prim::Lt, {i, dst.dims[d]})));
          idx.push_back(i);
        }
        marks_set_.insert(dst.mask_pointer);
        Body mark = nested([&] {
          emit(Fill{dst.mask_pointer, add_i64(dst.offset, flat_offset(dst, idx)), inner_n,
                    lit_bool(true)});
        });
        emit(If{and_(mask_is(x.mask, kStrongZero), in_range), std::move(mark), {}});
      }
    });
    --loop_depth_;
    finish_marks(dst, live_marks);
    bind(v, dst);
  }

  const LowerInput& in_;
  const ir::Function& f_;
  const ir::StrongZeroFlow flow_;
  LoopFunction out_;
  std::vector<std::optional<Val>> env_;
  std::vector<Body*> bodies_;
  std::map<LocalId, Interval> ranges_;
  std::map<std::string, ExprP> sizes_;
  std::map<std::string, ExprP> runtime_sizes_;  // sizes computed at the top level, by spelling
  std::map<ir::VarId, Val> pending_dest_;
  std::set<LocalId> never_strong_;  // mask locals that cannot hold a strong zero
  std::set<LocalId> marks_set_;     // mark buffers some write may set to 1
  std::set<ir::VarId> own_buffer_;  // tensors alloc_for allocated (not a pending destination)
  std::map<ir::VarId, MarkPred> mark_preds_;  // generators whose reads evaluate a predicate
  std::vector<Affine> gen_ranges_;            // find_mark_preds: the generator's index ranges
  Pred whole_pred_;
  // While lowering the loops of a region whose body is one guard: its predicate (points that
  // fail it are skipped), and the flag that records skipped strong zeros (-1: none kept).
  const Pred* tighten_ = nullptr;
  LocalId tighten_strong_ = -1;
  std::vector<const Pred*> implied_;          // conjuncts the enclosing loops' bounds enforce
  std::vector<Affine> facts_;                 // affine facts (>= 0) of the guards being lowered
  const Pred* guard_true_ = nullptr;          // a guard those bounds make always true
  std::vector<std::vector<int64_t>> splits_;  // where the generator being lowered splits

  int loop_depth_ = 0;
  LocalId max_while_ = -1;
};

}  // namespace

std::variant<LoopFunction, std::string> lower(const LowerInput& in) {
  if (in.fn == nullptr) return std::string("no function to lower");
  if (in.size_values.size() != in.fn->size_vars.size()) {
    return std::string("size values do not match the function's size variables");
  }
  try {
    return Lowerer(in).run();
  } catch (const Unsupported& u) {
    return u.why;
  }
}

}  // namespace cot::codegen
