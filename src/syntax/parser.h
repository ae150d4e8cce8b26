// Recursive-descent parser for the surface language (docs/language.md §2, §4, §5, §8).
//
// Errors go to the sink; after an error inside a definition the parser skips to the next `def`
// that starts a line, so independent errors in different definitions are all reported in one
// run, and a definition with an error is left out of the module. Every ExprPtr of a returned
// definition is non-null except the optional ones (Binder::extent, and Loop::count or
// Loop::cond, whichever the loop's form does not use). Expressions nest at most
// kMaxNesting deep (a left-associated chain `a + b + c` counts one level per operator), so
// later passes may recurse over the tree without overflowing the stack.
#pragma once

#include <cstdint>

#include "base/diagnostic.h"
#include "base/source.h"
#include "syntax/ast.h"

namespace cot {

inline constexpr int kMaxNesting = 256;

// Parses file `file` of `sm` as a module: a list of definitions.
ast::Module parse_module(const SourceManager& sm, uint32_t file, DiagnosticSink& diags);

// Parses the whole of file `file` as one expression (newlines do not end it, as inside
// parentheses). Returns null after an error. For tests and tools.
ast::ExprPtr parse_expression_for_test(const SourceManager& sm, uint32_t file,
                                       DiagnosticSink& diags);

}  // namespace cot
