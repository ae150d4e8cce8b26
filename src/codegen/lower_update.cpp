// Lowering: in-place point updates of loop state (docs/design.md §10). A state whose next value
// is a point update of it (ir/point_update.h: `for i. if i == k then NEW else s[i]`) keeps one
// buffer: at the generator the changed slices (the boxes) are computed from the old state, and
// at the end of the step, where the other states swap, they are stored into the state's
// buffer. O(changed) per step instead of O(state), and no second buffer.
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"
#include "codegen/may_fail.h"
#include "ir/uses.h"

namespace cot::codegen::lowering {

namespace {

// Values the pins and the tested indices use are bounded by this at run time when nothing
// else bounds them: with index extents below it too, no affine step of few terms overflows.
constexpr int64_t kPinBound = int64_t{1} << 40;

}  // namespace

std::vector<std::optional<Lowerer::PointUpdatePlan>> Lowerer::find_point_updates(
    const ir::LoopOp& op) const {
  const size_t n = op.state.size();
  std::vector<std::optional<PointUpdatePlan>> plans(n);
  // Uses of each variable anywhere in the body, results included.
  std::map<ir::VarId, int> uses;
  ir::for_each_use(op.body, [&](ir::VarId v) { ++uses[v]; });
  if (op.is_while) ir::for_each_use(op.cond, [&](ir::VarId v) { ++uses[v]; });
  for (size_t k = 0; k < n; ++k) {
    const Type& t = f_.type_of(op.state[k]);
    const ir::Atom& r = op.body.results[k];
    if (t.is_tuple || !t.is_tensor() || !r.is_var || uses[r.var] != 1) continue;
    // A whole strong zero kept in a mask local is not followed.
    if (flow_.may_be_whole(op.state[k]) && is_real(t.elem)) continue;
    // The generator's strong zeros must have somewhere to go.
    if (needs_marks(r.var) && !needs_marks(op.state[k])) continue;
    for (const ir::Stmt& st : op.body.stmts) {
      if (st.results.size() != 1 || st.results[0] != r.var || !st.as<ir::GenOp>()) continue;
      if (auto u = ir::point_update(f_, st, op.state[k])) {
        PointUpdatePlan p;
        p.gen = &st;
        p.update = std::move(*u);
        plans[k] = std::move(p);
      }
    }
  }
  return plans;
}

bool Lowerer::lower_point_update(const ir::Stmt& s, const ir::GenOp& op, const Val& cur,
                                 const Val& next, PointUpdatePlan& plan) {
  plan.mode = PointUpdatePlan::Mode::None;
  const size_t r = op.ivars.size();
  const ir::PointUpdate& u = plan.update;
  // Literal extents, each point the generator's own check would accept.
  std::vector<int64_t> ext(r);
  for (size_t d = 0; d < r; ++d) {
    auto e = as_i64(cur.dims.at(d));
    if (!e || *e <= 0 || *e >= kPinBound) return false;
    ext[d] = *e;
  }
  if (static_size_error(cur.dims, interp::SizeRule::Generator, r)) return false;
  if (cur.mask || cur.mark_pred) return false;
  // Slices that cover half the state or more gain nothing in place and pay for their copies
  // (the tuned lstm's [3, 14] state pinned at rows 0, 1 and 2: 4-5 % slower in place).
  double changed = 0;
  for (const ir::Pin& b : u.boxes) changed += 1.0 / static_cast<double>(ext.at(b.ivar));
  if (2 * changed >= 1) return false;
  // The unchanged points' tests (u.evaluated) must not overflow anywhere, nor the pins'
  // values: proven by the ranges, with the index variables over their extents and each
  // variable they use that no range bounds tested at run time against kPinBound.
  std::vector<ExprP> tests;
  std::vector<LocalId> bounded;
  auto restore = [&] {
    for (LocalId l : bounded) ints_.ranges.erase(l);
  };
  for (size_t d = 0; d < r; ++d) {
    LocalId probe = out_.new_local("probe", Scalar::I64);
    ints_.ranges[probe] = Interval{0, ext[d] - 1};
    bind(op.ivars[d].var, scalar_val(local(out_, probe), Scalar::I64));
  }
  // A pin that is a variable needs no arithmetic (an `i == k` of atoms).
  auto plain = [](const Affine& a) {
    return a.constant_term() == 0 && a.terms().size() == 1 && a.terms()[0].second == 1;
  };
  std::vector<const Affine*> affines;
  for (const Affine& a : u.evaluated) affines.push_back(&a);
  for (const ir::Pin& p : u.boxes) {
    if (!plain(p.value)) affines.push_back(&p.value);
  }
  for (const Affine* a : affines) {
    for (const auto& [v, c] : a->terms()) {
      const auto& x = env_.vals.at(static_cast<size_t>(v));
      if (!x || x->kind != Val::Kind::Scalar || !x->scalar || x->scalar->type != Scalar::I64) {
        restore();
        return false;
      }
      if (as_i64(x->scalar) || range(x->scalar)) continue;
      if (x->scalar->kind != Expr::Kind::Local) {
        restore();
        return false;
      }
      const LocalId l = x->scalar->local;
      if (ints_.ranges.count(l) != 0) continue;
      ints_.ranges[l] = Interval{-kPinBound, kPinBound};
      bounded.push_back(l);
      tests.push_back(and_(prim(Prim::Ge, {x->scalar, lit_i64(-kPinBound)}),
                           prim(Prim::Le, {x->scalar, lit_i64(kPinBound)})));
    }
  }
  for (const Affine* a : affines) {
    if (!pure_affine(*a)) {
      restore();
      return false;
    }
  }
  const bool guarded = !tests.empty();
  const Scalar elem = cur.type;
  const bool marks = cur.mask_pointer >= 0;
  const std::string hint = c_hint(s.results[0]);
  // Per box: its pin, whether it is in range, and a place for its values (declared here, at
  // the step's level, so the stores at its end see them).
  plan.pins.clear();
  plan.in_box.clear();
  plan.values.clear();
  for (const ir::Pin& p : u.boxes) {
    plan.pins.push_back(mutable_local(hint + "_pin", Scalar::I64, lit_i64(0)));
    plan.in_box.push_back(mutable_local(hint + "_in_box", Scalar::Bool, lit_bool(false)));
    if (r == 1) {
      plan.values.push_back(make_slot(Type::scalar(elem), s.span, hint + "_at", marks));
    } else {
      std::vector<ExprP> dims;
      for (size_t d = 0; d < r; ++d) {
        if (d != p.ivar) dims.push_back(cur.dims[d]);
      }
      Val box = alloc_tensor(elem, dims, s.span, hint + "_box", interp::SizeRule::Tensor, 0, false,
                             marks);
      // As the generator's own buffer would: strong zeros nobody reads need no marks.
      box.drops_marks = marks_unread(s.results[0]);
      plan.values.push_back(std::move(box));
    }
  }
  if (guarded) {
    ExprP all = lit_bool(true);
    for (ExprP& t : tests) all = and_(all, t);
    plan.fast = out_.new_local(hint + "_fast", Scalar::Bool);
    emit(Declare{plan.fast, all});
  }
  // The boxes, in the order of their pins' first tests. Each box reads the old state only.
  std::vector<Body> boxes;
  for (size_t b = 0; b < u.boxes.size(); ++b) {
    const ir::Pin& p = u.boxes[b];
    boxes.push_back(nested([&] {
      ExprP value;
      if (plain(p.value)) {
        value = val(p.value.terms()[0].first).scalar;
      } else {
        value = *pure_affine(p.value);
      }
      emit(Assign{plan.pins[b], value});
      ExprP pin = local(out_, plan.pins[b]);
      emit(Assign{plan.in_box[b], and_(prim(Prim::Ge, {pin, lit_i64(0)}),
                                       prim(Prim::Lt, {pin, lit_i64(ext[p.ivar])}))});
      Body at = nested([&] {
        LocalId pv = out_.new_local(c_hint(op.ivars[p.ivar].var), Scalar::I64);
        emit(Declare{pv, pin});
        ints_.ranges[pv] = Interval{0, ext[p.ivar] - 1};
        bind(op.ivars[p.ivar].var, scalar_val(local(out_, pv), Scalar::I64));
        const Val& slot = plan.values[b];
        if (r == 1) {
          std::vector<Val> dests{slot};
          lower_block(op.body, &dests);
        } else {
          std::vector<ir::IndexVar> free;
          std::vector<ExprP> free_ext;
          for (size_t d = 0; d < r; ++d) {
            if (d == p.ivar) continue;
            free.push_back(op.ivars[d]);
            free_ext.push_back(cur.dims[d]);
          }
          ++scope_.loop_depth;
          for_points(free, free_ext, PointLoops::Independent, [&](const ExprP& point) {
            std::vector<Val> dests{view(slot, add_i64(slot.offset, point), {})};
            lower_block(op.body, &dests);
          });
          --scope_.loop_depth;
        }
      });
      emit(If{local(out_, plan.in_box[b]), std::move(at), {}});
    }));
  }
  restore();
  // Two boxes whose work may fail would have to fail in the generator's order of points.
  bool fails = false;
  for (const Body& b : boxes) fails = fails || may_fail(b);
  if (fails && boxes.size() > 1) return false;  // the slots declared above stay unused
  Body fast;
  for (Body& b : boxes) {
    for (Stmt& st : b) fast.push_back(std::move(st));
  }
  if (u.adds_zero && plan.all_fresh < 0) {
    // Declared before the loop: they carry the previous step's boxes.
    Body& outer = *bodies_.at(bodies_.size() - 2);
    auto declare_outer = [&](const std::string& h, Scalar t, ExprP init) {
      LocalId l = out_.new_local(h, t);
      outer.push_back(Stmt{Declare{l, std::move(init)}});
      return l;
    };
    plan.all_fresh = declare_outer(hint + "_all_fresh", Scalar::Bool, lit_bool(true));
    for (size_t b = 0; b < u.boxes.size(); ++b) {
      plan.prev_pins.push_back(declare_outer(hint + "_prev_pin", Scalar::I64, lit_i64(0)));
      plan.prev_in_box.push_back(
          declare_outer(hint + "_prev_in_box", Scalar::Bool, lit_bool(false)));
    }
  }
  if (!guarded) {
    for (Stmt& st : fast) emit(std::move(st.op));
    plan.mode = PointUpdatePlan::Mode::InPlace;
    bind(s.results[0], cur);  // never read: its one use is the state's next value
    return true;
  }
  // As any generator, into the next buffer, when the test fails.
  Body slow = nested([&] {
    env_.pending_dest[s.results[0]] = next;
    lower_stmt(s);
    env_.pending_dest.erase(s.results[0]);
  });
  emit(If{local(out_, plan.fast), std::move(fast), std::move(slow)});
  plan.mode = PointUpdatePlan::Mode::Guarded;
  bind(s.results[0], next);  // the step's copy into next is then nothing
  return true;
}

void Lowerer::store_point_update(const ir::GenOp& op, const Val& cur, const Val& next,
                                 const PointUpdatePlan& plan) {
  const size_t r = op.ivars.size();
  const ir::PointUpdate& u = plan.update;
  std::vector<ExprP> strides(r, lit_i64(1));
  for (size_t d = r; d-- > 1;) strides[d - 1] = mul_i64(strides[d], cur.dims[d]);
  // Every point of box b at pin p: body(offset in the state, offset in the box's buffer).
  auto for_box = [&](size_t b, const ExprP& pin, const std::function<void(ExprP, ExprP)>& body) {
    const size_t pd = u.boxes[b].ivar;
    ExprP base = add_i64(cur.offset, mul_i64(pin, strides[pd]));
    std::vector<size_t> free;
    for (size_t d = 0; d < r; ++d) {
      if (d != pd) free.push_back(d);
    }
    std::function<void(size_t, ExprP, ExprP)> go = [&](size_t j, ExprP off, ExprP inner) {
      if (j == free.size()) {
        body(off, inner);
        return;
      }
      const size_t d = free[j];
      for_elements(cur.dims[d], "e", [&](const ExprP& e) {
        go(j + 1, add_i64(off, mul_i64(e, strides[d])), add_i64(mul_i64(inner, cur.dims[d]), e));
      });
    };
    go(0, base, lit_i64(0));
  };
  auto element = [&](const Val& t, const ExprP& off) {
    return scalar_val(load(t.type, t.pointer, off), t.type,
                      t.mask_pointer >= 0 ? element_mask(t, off) : nullptr);
  };
  const ExprP fast = plan.fast >= 0 ? local(out_, plan.fast) : lit_bool(true);
  if (u.adds_zero) {
    // The unchanged points are s[I] + 0.0: a -0.0 becomes +0.0 (the mask is kept). Only the
    // previous step's boxes can hold one, but after the first step, or one lowered as any
    // generator, every element.
    auto plus_zero = [&](const ExprP& off) {
      emit(Store{cur.pointer, off,
                 prim(Prim::Add, {load(cur.type, cur.pointer, off), lit_real(0, cur.type)})});
    };
    Body whole = nested([&] {
      for_elements(cur.numel(), "e", [&](const ExprP& e) { plus_zero(add_i64(cur.offset, e)); });
    });
    Body boxes = nested([&] {
      for (size_t b = 0; b < u.boxes.size(); ++b) {
        Body one = nested([&] {
          for_box(b, local(out_, plan.prev_pins[b]), [&](ExprP off, ExprP) { plus_zero(off); });
        });
        emit(If{local(out_, plan.prev_in_box[b]), std::move(one), {}});
      }
    });
    Body normalize = nested([&] {
      emit(If{local(out_, plan.all_fresh), std::move(whole), std::move(boxes)});
    });
    emit(If{fast, std::move(normalize), {}});
  }
  for (size_t b = 0; b < u.boxes.size(); ++b) {
    Body store = nested([&] {
      const Val& v = plan.values[b];
      if (r == 1) {
        Val at = view(cur, add_i64(cur.offset, mul_i64(local(out_, plan.pins[b]), strides[0])), {});
        assign(at, v);
      } else {
        for_box(b, local(out_, plan.pins[b]), [&](ExprP off, ExprP inner) {
          assign(view(cur, off, {}), element(v, add_i64(v.offset, inner)));
        });
      }
    });
    emit(If{local(out_, plan.in_box[b]), std::move(store), {}});
  }
  if (u.adds_zero) {
    for (size_t b = 0; b < u.boxes.size(); ++b) {
      emit(Assign{plan.prev_pins[b], local(out_, plan.pins[b])});
      emit(Assign{plan.prev_in_box[b], local(out_, plan.in_box[b])});
    }
    emit(Assign{plan.all_fresh, not_(fast)});
  }
  if (plan.mode == PointUpdatePlan::Mode::Guarded) {
    Body swap = nested([&] {
      emit(Swap{cur.pointer, next.pointer});
      if (cur.mask_pointer >= 0) emit(Swap{cur.mask_pointer, next.mask_pointer});
    });
    emit(If{not_(fast), std::move(swap), {}});
  }
}

}  // namespace cot::codegen::lowering
