// Splits source text into tokens (docs/language.md §2). Lexical errors do not stop the lexer: each
// becomes an Error token whose diagnostic the parser reports when it reaches it, so errors in
// a definition the parser has already given up on are not reported twice.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "base/diagnostic.h"
#include "base/token.h"

namespace cot {

struct LexResult {
  std::vector<Token> tokens;       // always ends with one Eof token
  std::vector<Diagnostic> errors;  // indexed by Token::error of the Error tokens
};

// Spans use `file` as their file id and byte offsets into `text`.
LexResult lex(std::string_view text, uint32_t file);

}  // namespace cot
