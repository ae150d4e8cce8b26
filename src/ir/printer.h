// Prints Core IR back as valid source in the surface language (design.md §4): printing a
// function, parsing the text again and evaluating it gives the same values.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace cot::ir {

// One function as a `def`. Calls of derived functions print as derivative operators
// (`grad(f, w)(...)`) using the callee's Derivation.
std::string print_function(const Program& program, const Function& f);
// The roots, then every function of the source they call (directly, or as the base of a
// derivative operator), then every derived function they call, transitively (a jacobian calls
// its jvp and vjp). Derived functions print as defs named by derived_identifier and preceded by
// a comment with their operator (print_derived_function); calls of them stay in operator form,
// so the text is a program that computes the same values. A root may be derived.
std::string print_with_dependencies(const Program& program,
                                    const std::vector<const Function*>& roots);
// A derived function as a `def` named `def_name`, after the comment line
// `# grad(f, w), as the compiler builds it`.
std::string print_derived_function(const Program& program, const Function& f,
                                   const std::string& def_name);
// A legal identifier for derived function `name`, from its operator spelling:
// "grad(f, w)" -> grad_f_w, "jvp(grad(f, w), w)" -> jvp_grad_f_w_w; a suffix _2, _3, ... when
// it is a function of the program or in `taken`.
std::string derived_identifier(const Program& program, const std::string& name,
                               const std::set<std::string>& taken);
// `f`, or the derivative operator that names a derived function: "jvp(grad(f, w), w)".
std::string operator_spelling(const Program& program, const std::string& name);
// Every non-prelude function that has a body, in order.
std::string print_program(const Program& program);

// One statement of f (with its nested regions) as print_function spells it, unindented; for
// messages such as the verifier's.
std::string print_stmt(const Program& program, const Function& f, const Stmt& s);
// The unique names print_function gives f's variables, indexed by VarId.
std::vector<std::string> printed_names(const Program& program, const Function& f);

}  // namespace cot::ir
