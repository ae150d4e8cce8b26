// Prints Core IR back as valid source in the surface language (architecture.md §1): printing a
// function, parsing the text again and evaluating it gives the same values.
#pragma once

#include <string>
#include <vector>

#include "ir/ir.h"

namespace cot::ir {

// One function as a `def`. Calls of derived functions print as derivative operators
// (`grad(f, w)(...)`) using the callee's Derivation.
std::string print_function(const Program& program, const Function& f);
// Every non-prelude function that has a body, in order.
std::string print_program(const Program& program);

// One statement of f (with its nested regions) as print_function spells it, unindented; for
// messages such as the verifier's.
std::string print_stmt(const Program& program, const Function& f, const Stmt& s);
// The unique names print_function gives f's variables, indexed by VarId.
std::vector<std::string> printed_names(const Program& program, const Function& f);

}  // namespace cot::ir
