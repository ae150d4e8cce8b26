// Pair elimination (pass "pair-elim"; [Bernstein20] §5.2, rules 5.11–5.20), in
// Core IR:
//  - 5.11: a projection of a tuple built by a TupleOp of the function is the element:
//    `p = proj(t, k)` with `t = tuple(a0, ..., an)` is dropped and its uses read `ak`
//    (chains resolve: proj(proj(tuple(tuple(a, b), c), 0), 1) is b);
//  - 5.16/5.17 (projections through guards) and the same for ifs: a guard or if result of tuple
//    type that is projected somewhere is split into one result per element (the bodies yield
//    the projections of what they yielded, which 5.11 then removes inside them), and the tuple
//    is rebuilt after the statement for the uses that need it whole (dead-code elimination
//    removes it when none do). A guard's strong zero of a tuple is the tuple of the elements'
//    zeros, so the split guard means the same. One level of tuple is split per run.
//  - 5.12–5.15 and 5.18–5.20 (generators, indexing and lets of pair type) have nothing to do:
//    the IR is already in SoA form. The checker rejects tuple-valued gen bodies and tensors of
//    tuples do not exist; loop states are flattened to one variable per leaf; the checker
//    already gives `if` one result per leaf. Projections of parameters (inputs) stay, as the
//    paper's normal form allows.
// Tuples, projections and guards of them are free in the cost model, so the op count never
// grows. Left-over tuples whose uses all went are removed by dead-code elimination.
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult eliminate_pairs(const ir::Program& program, const ir::Function& f);
// No projection of a variable bound by a TupleOp remains.
std::optional<std::string> pair_elim_postcondition(const ir::Program& program,
                                                   const ir::Function& f);

}  // namespace cot::opt
