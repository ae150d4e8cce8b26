// The checker: names, scoping, types, symbolic shapes and index extents of a parsed module,
// lowered to Core IR as it goes (AST -> Core IR is one pass, so every IR statement carries the
// span of the source it came from).
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "base/diagnostic.h"
#include "ir/ir.h"
#include "syntax/ast.h"

namespace cot {

// Checks `user` against the prelude (`prelude` may be null) and lowers both to one Program.
// User definitions shadow prelude definitions of the same name. Returns nullopt when any error
// was reported; all independent errors are reported, not just the first.
std::optional<ir::Program> check_program(std::shared_ptr<SourceManager> sources,
                                         const ast::Module* prelude, const ast::Module& user,
                                         DiagnosticSink& diags);

}  // namespace cot
