// What the checker knows about the whole program while it checks one function: every
// signature (user, prelude, derived) and the derived functions created so far.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "check/signature.h"
#include "ir/ir.h"

namespace cot::check {

struct ProgramContext {
  std::map<std::string, Signature> signatures;
  // Derived functions created by derivative operators, in creation order.
  std::vector<std::string> derived_order;
  // Call graph edges (caller -> callees), including the base of each derived function, with
  // the span of one call site for messages.
  std::map<std::string, std::map<std::string, Span>> calls;
  // Functions whose signature had errors: calls to them are not checked further, so one
  // mistake is reported once.
  std::set<std::string> broken;

  const Signature* find(const std::string& name) const {
    auto it = signatures.find(name);
    return it == signatures.end() ? nullptr : &it->second;
  }
};

}  // namespace cot::check
