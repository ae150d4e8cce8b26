// Lowering: a schedule choice for generators whose body is a sum: interchanged sums (the sum's
// loop outside the generator's, so the inner loop runs along rows).
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"
#include "codegen/may_fail.h"
#include "ir/regions.h"

namespace cot::codegen::lowering {

bool Lowerer::interchanged_sum(const ir::GenOp& op, const std::vector<ExprP>& ext, const Val& dst) {
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
    std::optional<int64_t> e = iv.extent.eval([&](const std::string& n) -> std::optional<int64_t> {
      auto it = ints_.sizes.find(n);
      return it == ints_.sizes.end() ? std::nullopt : as_i64(it->second);
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
  // loop runs along j, vectorized. The terms are reassociated (docs/language.md §7 allows it);
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
  if (scope_.loop_depth == 0 && !outer.empty()) out_.uses_parallel = true;
  for (Stmt& x : *b) bodies_.back()->push_back(std::move(x));
  return true;
}

Body Lowerer::block_flags(int64_t block, LocalId& live, LocalId& strong) {
  return nested([&] {
    live = out_.new_local("acc_live", Scalar::Bool, true);
    strong = out_.new_local("acc_strong", Scalar::Bool, true);
    for (LocalId f : {live, strong}) {
      emit(Alloc{.pointer = f, .count = lit_i64(block), .on_stack = true});
      emit(Fill{f, lit_i64(0), lit_i64(block), lit_bool(false)});
    }
  });
}

LocalId Lowerer::lane_sums(LocalId acc, Scalar elem, int64_t block) {
  const LocalId sums_at = out_.new_local("acc_sum", elem, true);
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
  return sums_at;
}

std::optional<Body> Lowerer::interchanged_loops(const ir::GenOp& op, const Val& dst,
                                                const std::vector<ir::IndexVar>& outer,
                                                const std::vector<ir::IndexVar>& inner,
                                                const std::vector<ExprP>& outer_ext,
                                                const std::vector<ExprP>& inner_ext,
                                                const std::vector<ExprP>& sum_ext, int64_t block,
                                                bool epilogue, bool lanes) {
  const ir::Stmt& st = op.body.stmts[0];
  const auto* red = st.as<ir::ReduceOp>();
  const Scalar elem = f_.type_of(st.results[0]).elem;
  const bool parallel = scope_.loop_depth == 0 && !outer.empty();
  const int64_t width = lanes ? kLanes : 1;
  bool ok = true;
  ++scope_.loop_depth;
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
      Body flags = epilogue ? block_flags(block, live, strong) : Body{};
      // A guard of the terms over the generator's indices alone bounds the loops over m (a
      // triangle runs as one); the points it skips are strong zeros of their sums.
      // (Decided where the sum's indices are bound: a triangle's guard mentions them.)
      const Pred* guard = single_guard(red->body, 0);
      bool tight = false;
      auto tighten_block = [&] {
        tight = guard != nullptr && may_tighten(*guard, inner, inner_ext);
        if (tight) scope_.tighten = guard;
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
            emit(
                Store{strong, m, or_(load(Scalar::Bool, strong, m), mask_is(x.mask, kStrongZero))});
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
            for_points(inner, inner_ext, PointLoops::Ordered, [&](const ExprP& m) { term(m, m); });
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
            ints_.ranges[l] = Interval{0, count - 1};
            Body lane = nested([&] {
              const LocalId j = out_.new_local(c_hint(last.var), Scalar::I64);
              emit(Declare{j, add_i64(start, local(out_, l))});
              ints_.ranges[j] = Interval{0, extent - 1};
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
            ints_.ranges[g] = Interval{0, groups - 1};
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
      const LocalId sums_at = lanes ? lane_sums(acc, elem, block) : acc;
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
          scope_.whole_pred = *guard;
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
      for_points(outer, outer_ext, parallel ? PointLoops::Parallel : PointLoops::Independent, sums);
    }
  });
  --scope_.loop_depth;
  if (!ok) return std::nullopt;
  return b;
}

bool Lowerer::reads_along(const ir::Block& b, ir::VarId v) {
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

bool Lowerer::strided_by_generator(const ir::Block& b, ir::VarId innermost) {
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
    // A loop's body runs once per term: a loop anywhere keeps the plain order.
    bool nested = false;
    ir::for_each_region_in(s, [&](const ir::RegionFrame& frame, const ir::Block& r) {
      using K = ir::RegionFrame::Kind;
      const bool loop =
          frame.kind == K::ForBody || frame.kind == K::WhileBody || frame.kind == K::WhileCond;
      nested = nested || loop || strided_by_generator(r, innermost);
    });
    if (nested) return true;
  }
  return false;
}

}  // namespace cot::codegen::lowering
