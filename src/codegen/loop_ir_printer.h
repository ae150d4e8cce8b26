// The loop IR as readable text, for `--dump-after` of the loop-IR passes (loop_passes.h) and for
// tests: one statement per line, a loop's or an if's body indented under it, locals named as the
// emitted C++ names them (`v12_acc`), so a dump and the generated code can be read side by side.
#pragma once

#include <string>

#include "codegen/loop_ir.h"

namespace cot::codegen {

std::string print_loop_expr(const LoopFunction& fn, const ExprP& e);
std::string print_loop_body(const LoopFunction& fn, const Body& body, int indent = 0);
std::string print_loop_function(const LoopFunction& fn);

}  // namespace cot::codegen
