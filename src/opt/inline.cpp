#include "opt/inline.h"

#include "ir/inline_calls.h"
#include "ir/uses.h"

namespace cot::opt {

namespace {

// A call that inline_calls would replace: its callee has a body (a callee not in the program is
// passed on, for inline_calls to report).
bool has_inlinable_call(const ir::Program& program, const ir::Function& f) {
  bool found = false;
  ir::for_each_call(f.body, [&](const std::string& callee) {
    const ir::Function* g = program.find(callee);
    found = found || g == nullptr || !g->body.stmts.empty() || !g->body.results.empty();
  });
  return found;
}

}  // namespace

PassResult inline_functions(const ir::Program& program, const ir::Function& f) {
  // Only calls of derived functions not built yet: they stay, and so does f.
  if (!has_inlinable_call(program, f)) return {f, false};
  // inline_calls looks the function up by name; give it this version of f.
  ir::Program with_f = program;
  if (ir::Function* slot = with_f.find(f.name)) {
    *slot = f;
  } else {
    with_f.functions.push_back(f);
  }
  return {ir::inline_calls(with_f, f.name, /*keep_unbuilt=*/true), true};
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
