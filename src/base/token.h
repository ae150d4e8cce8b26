// The tokens of the surface language (docs/language.md §2). Newlines are not tokens: each token
// records whether it starts a line, and the parser decides where that ends a statement.
#pragma once

#include <cstdint>
#include <string_view>

#include "base/source.h"

namespace cot {

enum class TokenKind : uint8_t {
  Eof,
  Error,  // a lexical error; the message is in LexResult::errors[Token::error]
  Ident,
  Underscore,  // `_` alone: the wildcard pattern
  Int,
  Real,
  // Keywords.
  Def,
  Let,
  For,
  Sum,
  Max,
  Min,
  Loop,
  While,
  If,
  Then,
  Else,
  True,
  False,
  F64,
  F32,
  I64,
  Bool,
  // Punctuation.
  LParen,
  RParen,
  LBracket,
  RBracket,
  LBrace,
  RBrace,
  Comma,
  Colon,
  Semicolon,
  Dot,
  Arrow,   // ->
  Assign,  // =
  // Operators.
  OrOr,
  AndAnd,
  EqEq,
  NotEq,
  Lt,
  Le,
  Gt,
  Ge,
  Plus,
  Minus,
  Star,
  Slash,
  SlashSlash,
  Percent,
  Caret,
  Bang,
};

struct Token {
  TokenKind kind = TokenKind::Eof;
  // Only whitespace and comments precede the token on its line (true for the first token).
  bool first_on_line = false;
  uint32_t error = 0;  // TokenKind::Error: index into LexResult::errors
  // The token's bytes. The Eof token is empty and sits at the end of the last real token, so
  // "found end of file" points at the end of the code rather than at trailing blank lines.
  Span span;
  int64_t int_value = 0;  // TokenKind::Int
  double real_value = 0;  // TokenKind::Real
};

// How a token kind is written in messages: "'('", "'for'", "identifier", "end of file".
constexpr const char* spelling(TokenKind k) {
  switch (k) {
    case TokenKind::Eof:
      return "end of file";
    case TokenKind::Error:
      return "invalid token";
    case TokenKind::Ident:
      return "identifier";
    case TokenKind::Underscore:
      return "'_'";
    case TokenKind::Int:
      return "integer literal";
    case TokenKind::Real:
      return "real literal";
    case TokenKind::Def:
      return "'def'";
    case TokenKind::Let:
      return "'let'";
    case TokenKind::For:
      return "'for'";
    case TokenKind::Sum:
      return "'sum'";
    case TokenKind::Max:
      return "'max'";
    case TokenKind::Min:
      return "'min'";
    case TokenKind::Loop:
      return "'loop'";
    case TokenKind::While:
      return "'while'";
    case TokenKind::If:
      return "'if'";
    case TokenKind::Then:
      return "'then'";
    case TokenKind::Else:
      return "'else'";
    case TokenKind::True:
      return "'true'";
    case TokenKind::False:
      return "'false'";
    case TokenKind::F64:
      return "'f64'";
    case TokenKind::F32:
      return "'f32'";
    case TokenKind::I64:
      return "'i64'";
    case TokenKind::Bool:
      return "'bool'";
    case TokenKind::LParen:
      return "'('";
    case TokenKind::RParen:
      return "')'";
    case TokenKind::LBracket:
      return "'['";
    case TokenKind::RBracket:
      return "']'";
    case TokenKind::LBrace:
      return "'{'";
    case TokenKind::RBrace:
      return "'}'";
    case TokenKind::Comma:
      return "','";
    case TokenKind::Colon:
      return "':'";
    case TokenKind::Semicolon:
      return "';'";
    case TokenKind::Dot:
      return "'.'";
    case TokenKind::Arrow:
      return "'->'";
    case TokenKind::Assign:
      return "'='";
    case TokenKind::OrOr:
      return "'||'";
    case TokenKind::AndAnd:
      return "'&&'";
    case TokenKind::EqEq:
      return "'=='";
    case TokenKind::NotEq:
      return "'!='";
    case TokenKind::Lt:
      return "'<'";
    case TokenKind::Le:
      return "'<='";
    case TokenKind::Gt:
      return "'>'";
    case TokenKind::Ge:
      return "'>='";
    case TokenKind::Plus:
      return "'+'";
    case TokenKind::Minus:
      return "'-'";
    case TokenKind::Star:
      return "'*'";
    case TokenKind::Slash:
      return "'/'";
    case TokenKind::SlashSlash:
      return "'//'";
    case TokenKind::Percent:
      return "'%'";
    case TokenKind::Caret:
      return "'^'";
    case TokenKind::Bang:
      return "'!'";
  }
  return "token";
}

// Keywords are reserved: they cannot name variables, parameters or functions.
constexpr bool is_keyword(TokenKind k) {
  return k >= TokenKind::Def && k <= TokenKind::Bool;
}

struct KeywordSpelling {
  std::string_view text;
  TokenKind kind;
};

// The reserved words (docs/language.md §2) and their tokens. `accum` is not among them: it is
// recognized by the parser from context (an identifier spelled `accum` followed by a shape and
// binders), so it remains an ordinary name elsewhere.
inline constexpr KeywordSpelling kKeywordSpellings[] = {
    {"def", TokenKind::Def},     {"let", TokenKind::Let},     {"for", TokenKind::For},
    {"sum", TokenKind::Sum},     {"max", TokenKind::Max},     {"min", TokenKind::Min},
    {"loop", TokenKind::Loop},   {"while", TokenKind::While}, {"if", TokenKind::If},
    {"then", TokenKind::Then},   {"else", TokenKind::Else},   {"true", TokenKind::True},
    {"false", TokenKind::False}, {"f64", TokenKind::F64},     {"f32", TokenKind::F32},
    {"i64", TokenKind::I64},     {"bool", TokenKind::Bool},
};

// The token kind of a reserved word, or Ident for any other word.
constexpr TokenKind keyword_kind(std::string_view word) {
  for (const KeywordSpelling& k : kKeywordSpellings) {
    if (k.text == word) return k.kind;
  }
  return TokenKind::Ident;
}

// Whether `word` is a reserved word, which the lexer never reads as an identifier. (`_` is not
// one: it lexes as the wildcard.)
constexpr bool is_reserved_word(std::string_view word) {
  return keyword_kind(word) != TokenKind::Ident;
}

}  // namespace cot
