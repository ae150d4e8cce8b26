#include "ir/ir.h"

#include <algorithm>
#include <cstring>
#include <unordered_set>

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

std::string fresh_size_name(const Function& f, const std::string& hint) {
  // One pass collects the names that could collide: a derivative of nested loops asks for
  // thousands of names with the same hint, and a scan of every name per candidate made that
  // quadratic in the number of loops.
  std::unordered_set<std::string> taken;
  auto note = [&](const std::string& n) {
    if (n.compare(0, hint.size(), hint) == 0) taken.insert(n);
  };
  for (const auto& sv : f.size_vars) note(sv.name);
  for (const auto& v : f.vars) note(v.name);
  std::string name = hint;
  for (int k = 2; taken.count(name) != 0; ++k) name = hint + "_" + std::to_string(k);
  return name;
}

std::string unique_name(const std::vector<std::string>& taken, const std::string& hint) {
  auto used = [&](const std::string& n) {
    return std::find(taken.begin(), taken.end(), n) != taken.end();
  };
  std::string name = hint;
  for (int k = 2; used(name); ++k) name = hint + "_" + std::to_string(k);
  return name;
}

std::vector<std::string> param_names(const Function& f) {
  std::vector<std::string> names;
  for (VarId p : f.params) names.push_back(f.vars[static_cast<size_t>(p)].name);
  return names;
}

}  // namespace cot::ir
