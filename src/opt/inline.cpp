#include "opt/inline.h"

#include "ir/inline_calls.h"
#include "ir/uses.h"

namespace cot::opt {

ir::Function inline_functions(const ir::Program& program, const ir::Function& f) {
  bool has_call = false;
  ir::for_each_call(f.body, [&](const std::string&) { has_call = true; });
  if (!has_call) return f;
  // inline_calls looks the function up by name; give it this version of f.
  ir::Program with_f = program;
  if (ir::Function* slot = with_f.find(f.name)) {
    *slot = f;
  } else {
    with_f.functions.push_back(f);
  }
  return ir::inline_calls(with_f, f.name, /*keep_unbuilt=*/true);
}

std::optional<std::string> no_inlinable_calls(const ir::Program& program, const ir::Function& f) {
  std::optional<std::string> broken;
  ir::for_each_call(f.body, [&](const std::string& callee) {
    const ir::Function* g = program.find(callee);
    if (g != nullptr && (!g->body.stmts.empty() || !g->body.results.empty()) && !broken) {
      broken = "a call of " + callee + ", which has a body, is left";
    }
  });
  return broken;
}

}  // namespace cot::opt
