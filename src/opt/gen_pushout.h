// Generator push-out (pass "gen-pushout", [Bernstein20] §5.3, rules 5.21-5.23):
//  (5.23) [p] * (for i. e)  ==>  for i. [p] * e      a guard whose body yields one generator
//         becomes a generator of guarded elements (statements of the guard body that the
//         generator reads stay under an outer guard, computed once); applied when the guard's
//         result is only read, put in tuples or yielded by a generator or the function, where
//         a strong-zero tensor and a tensor of strong zeros cost the same;
//  (5.22) ([p] * e)[a]      ==>  [p] * (e[a])        a read of a guard whose body is cost-free
//         reads under the guard (in bounds only);
//  (5.21) (for i. e)[a]     ==>  e[i := a]           for cost-free generators (fuse.h, rule (a)).
#pragma once

#include <optional>
#include <string>

#include "ir/ir.h"
#include "opt/pass.h"

namespace cot::opt {

PassResult push_out_generators(const ir::Program& program, const ir::Function& f);
// No guard (whose result is used as 5.23 requires) has a body that yields just a generator.
std::optional<std::string> gen_pushout_postcondition(const ir::Program& program,
                                                     const ir::Function& f);

}  // namespace cot::opt
