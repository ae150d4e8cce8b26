#include "ir/type.h"

namespace cot {

bool Type::is_real_valued() const {
  if (!is_tuple) return is_real(elem);
  for (const Type& t : elems) {
    if (!t.is_real_valued()) return false;
  }
  return true;
}

bool Type::operator==(const Type& o) const {
  // Only the fields that mean something for the kind are compared.
  if (is_tuple != o.is_tuple) return false;
  if (is_tuple) return elems == o.elems;
  return elem == o.elem && shape == o.shape;
}

std::string Type::to_string() const {
  std::string s;
  if (is_tuple) {
    s = "(";
    for (size_t i = 0; i < elems.size(); ++i) {
      if (i > 0) s += ", ";
      s += elems[i].to_string();
    }
    return s + ")";
  }
  s = cot::to_string(elem);
  if (shape.empty()) return s;
  s += "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) s += ", ";
    s += shape[i].to_string();
  }
  return s + "]";
}

Type Type::substitute(const std::map<std::string, SizeExpr>& by) const {
  Type out = *this;
  for (auto& e : out.elems) e = e.substitute(by);
  for (auto& d : out.shape) d = d.substitute(by);
  return out;
}

}  // namespace cot
