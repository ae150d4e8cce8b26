#include "ad/tangent.h"

#include <stdexcept>

namespace cot::ad {

bool Tangent::is_zero() const {
  if (kind == Kind::Zero) return true;
  if (kind == Kind::Value) return false;
  for (const auto& e : elems) {
    if (!e.is_zero()) return false;
  }
  return true;
}

namespace {

ir::Atom scalar_zero(Scalar s) {
  switch (s) {
    case Scalar::F64:
    case Scalar::F32:
      return ir::Atom::real(0.0, s);
    case Scalar::I64:
      return ir::Atom::i64(0);
    case Scalar::Bool:
      return ir::Atom::boolean(false);
  }
  return ir::Atom::real(0.0);
}

}  // namespace

ir::VarId gen_over(ir::Builder& b, const std::vector<SizeExpr>& shape, const std::string& hint,
                   const std::function<ir::Atom(const std::vector<ir::VarId>&)>& body) {
  std::vector<ir::IndexVar> ivars;
  std::vector<ir::VarId> vars;
  for (const auto& d : shape) {
    vars.push_back(b.index_var(hint));
    ivars.push_back(ir::IndexVar{vars.back(), d});
  }
  return b.gen(std::move(ivars), [&] { return body(vars); });
}

std::vector<ir::IndexExpr> index_at(const std::vector<ir::VarId>& vars) {
  std::vector<ir::IndexExpr> out;
  for (ir::VarId v : vars) out.push_back(ir::affine_index(Affine::var(v)));
  return out;
}

ir::Atom zeros(ir::Builder& b, Type t) {
  if (t.is_tuple) {
    std::vector<ir::Atom> elems;
    for (const auto& e : t.elems) elems.push_back(zeros(b, e));
    return ir::Atom::of(b.tuple(std::move(elems)));
  }
  if (t.shape.empty()) return scalar_zero(t.elem);
  return ir::Atom::of(gen_over(b, t.shape, "i", [&](const auto&) { return scalar_zero(t.elem); }));
}

ir::Atom strong_zeros(ir::Builder& b, Type t) {
  if (t.is_tuple) {
    std::vector<ir::Atom> elems;
    for (const auto& e : t.elems) elems.push_back(strong_zeros(b, e));
    return ir::Atom::of(b.tuple(std::move(elems)));
  }
  if (!is_real(t.elem)) return zeros(b, t);
  auto scalar = [&] {
    return ir::Atom::of(
        b.guard(Pred::falsity(), [&] { return std::vector<ir::Atom>{scalar_zero(t.elem)}; })[0]);
  };
  if (t.shape.empty()) return scalar();
  return ir::Atom::of(gen_over(b, t.shape, "i", [&](const auto&) { return scalar(); }));
}

ir::Atom materialize(ir::Builder& b, const Tangent& tan, Type t, bool strong) {
  switch (tan.kind) {
    case Tangent::Kind::Zero:
      return strong ? strong_zeros(b, t) : zeros(b, t);
    case Tangent::Kind::Value:
      return tan.atom;
    case Tangent::Kind::Tuple: {
      if (!t.is_tuple || t.elems.size() != tan.elems.size()) {
        throw std::logic_error("ad: tuple tangent of a non-tuple type " + t.to_string());
      }
      std::vector<ir::Atom> elems;
      for (size_t k = 0; k < t.elems.size(); ++k) {
        elems.push_back(materialize(b, tan.elems[k], t.elems[k], strong));
      }
      return ir::Atom::of(b.tuple(std::move(elems)));
    }
  }
  return zeros(b, t);
}

ir::Atom add_values(ir::Builder& b, ir::Atom x, ir::Atom y) {
  const Type t = b.type_of(x);
  if (t.is_tuple) {
    std::vector<ir::Atom> elems;
    for (size_t k = 0; k < t.elems.size(); ++k) {
      elems.push_back(add_values(b, ir::Atom::of(b.proj(x, static_cast<int>(k))),
                                 ir::Atom::of(b.proj(y, static_cast<int>(k)))));
    }
    return ir::Atom::of(b.tuple(std::move(elems)));
  }
  if (t.shape.empty()) return ir::Atom::of(b.prim(Prim::Add, {x, y}));
  return ir::Atom::of(gen_over(b, t.shape, "i", [&](const std::vector<ir::VarId>& is) {
    const std::vector<ir::IndexExpr> idx = index_at(is);
    ir::Atom xi = ir::Atom::of(b.index(x, idx));
    ir::Atom yi = ir::Atom::of(b.index(y, idx));
    return ir::Atom::of(b.prim(Prim::Add, {xi, yi}));
  }));
}

}  // namespace cot::ad
