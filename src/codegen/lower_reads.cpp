// Lowering: reads of tensor elements and slices (IndexOp), with index checks where the ranges
// cannot prove them.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "codegen/lowerer.h"

namespace cot::codegen::lowering {

ExprP Lowerer::affine(const Affine& a, Span span) {
  Site st;
  st.kind = Site::Kind::Overflow;
  st.span = span;
  st.message =
      "integer overflow in the index " + a.to_string([this](int32_t v) { return name_of(v); });
  return affine_checked(a, st);
}

ExprP Lowerer::index_value(const ir::IndexExpr& e, Span span) {
  return e.is_affine ? affine(e.affine, span) : atom(e.computed);
}

void Lowerer::check_index(const ExprP& i, const Val& t, size_t d, Span span, Site::Kind kind,
                          const std::string& name, const Affine* affine) {
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

ExprP Lowerer::flat_offset(const Val& t, const std::vector<ExprP>& idx) {
  ExprP off = lit_i64(0);
  for (size_t d = 0; d < idx.size(); ++d) off = add_i64(mul_i64(off, t.dims[d]), idx[d]);
  ExprP inner = lit_i64(1);
  for (size_t d = idx.size(); d < t.dims.size(); ++d) inner = mul_i64(inner, t.dims[d]);
  return mul_i64(off, inner);
}

void Lowerer::lower_index(const ir::Stmt& s, const ir::IndexOp& op) {
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
        scope_.whole_pred = *at;
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

}  // namespace cot::codegen::lowering
