// Derivative rules of the primitive table (prims/prim_table.cpp `partials`), compiled from their
// source text by the real front end and checker, and spliced into derivative code. Each rule is
// compiled once per (primitive, operand, real type) and kept by the RuleBook that asked for it,
// so there is no global state and the rules are checked exactly like user code.
#pragma once

#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include "ir/builder.h"
#include "ir/ir.h"

namespace cot::ad {

class RuleBook {
 public:
  // Emits, at the builder's position, the partial derivative of primitive `p` with respect to
  // operand `k`, at the operands `args` and the result `result`; returns it (often a literal).
  // The primitive must have a partial for operand k (prim_info(p).partials[k] non-empty).
  ir::Atom partial(ir::Builder& b, Prim p, int k, const std::vector<ir::Atom>& args,
                   ir::Atom result);

 private:
  const ir::Function& rule(Prim p, int k, Scalar real, const std::vector<Scalar>& operand_types);
  std::map<std::tuple<Prim, int, Scalar>, std::shared_ptr<ir::Program>> compiled_;
};

}  // namespace cot::ad
