#include "ir/ir.h"

#include <cstring>

namespace cot::ir {

bool Literal::operator==(const Literal& o) const {
  if (type != o.type) return false;
  switch (type) {
    case Scalar::F64:
    case Scalar::F32:
      // Bitwise-equal reals (so NaN literals compare equal to themselves and -0 != 0).
      return std::memcmp(&real, &o.real, sizeof real) ==
             0;  // NOLINT(bugprone-suspicious-memory-comparison)
    case Scalar::I64:
      return integer == o.integer;
    case Scalar::Bool:
      return boolean == o.boolean;
  }
  return false;
}

const Function* Program::find(const std::string& name) const {
  for (const auto& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Function* Program::find(const std::string& name) {
  for (auto& f : functions) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Type atom_type(const Function& f, const Atom& a) {
  if (a.is_var) return f.type_of(a.var);
  return Type::scalar(a.lit.type);
}

}  // namespace cot::ir
