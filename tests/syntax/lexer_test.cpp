#include "syntax/lexer.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

namespace cot {
namespace COTANGENT_TEST_UNIT {

using TK = TokenKind;

std::vector<TK> kinds(std::string_view text) {
  std::vector<TK> out;
  for (const Token& t : lex(text, 1).tokens) out.push_back(t.kind);
  return out;
}

// "line:col: message" for each lexical error.
std::vector<std::string> errors(std::string_view text) {
  SourceFile f("t.cot", std::string(text));
  std::vector<std::string> out;
  for (const Diagnostic& d : lex(text, 1).errors) {
    auto [line, col] = f.line_col(d.span.begin);
    out.push_back(std::to_string(line) + ":" + std::to_string(col) + ": " + d.message);
  }
  return out;
}

TEST(Lexer, BinderExtentFollowedByDot) {
  // `1.` is the integer 1 and then the binder's dot (docs/language.md §2).
  EXPECT_EQ(kinds("for i: n + 1. e"),
            (std::vector<TK>{TK::For, TK::Ident, TK::Colon, TK::Ident, TK::Plus, TK::Int, TK::Dot,
                             TK::Ident, TK::Eof}));
  EXPECT_EQ(kinds("1.e5"), (std::vector<TK>{TK::Int, TK::Dot, TK::Ident, TK::Eof}));
  EXPECT_EQ(kinds("x[1]."),
            (std::vector<TK>{TK::Ident, TK::LBracket, TK::Int, TK::RBracket, TK::Dot, TK::Eof}));
}

TEST(Lexer, RealLiterals) {
  LexResult r = lex("1.0 0.5 1e-3 6.02e23 2.5E+3 1E2 007 1e-400", 1);
  ASSERT_TRUE(r.errors.empty());
  ASSERT_EQ(r.tokens.size(), 9u);
  EXPECT_EQ(r.tokens[0].kind, TK::Real);
  EXPECT_EQ(r.tokens[0].real_value, 1.0);
  EXPECT_EQ(r.tokens[1].real_value, 0.5);
  EXPECT_EQ(r.tokens[2].real_value, 1e-3);
  EXPECT_EQ(r.tokens[3].real_value, 6.02e23);
  EXPECT_EQ(r.tokens[4].real_value, 2500.0);
  EXPECT_EQ(r.tokens[5].kind, TK::Real);
  EXPECT_EQ(r.tokens[5].real_value, 100.0);
  EXPECT_EQ(r.tokens[6].kind, TK::Int);
  EXPECT_EQ(r.tokens[6].int_value, 7);
  // Underflow reads as the nearest double rather than failing.
  EXPECT_EQ(r.tokens[7].kind, TK::Real);
  EXPECT_EQ(r.tokens[7].real_value, 0.0);
  EXPECT_EQ(r.tokens[8].kind, TK::Eof);
}

TEST(Lexer, IntegerLimits) {
  LexResult r = lex("9223372036854775807", 1);
  ASSERT_TRUE(r.errors.empty());
  EXPECT_EQ(r.tokens[0].int_value, 9223372036854775807);
  EXPECT_EQ(errors("x + 9223372036854775808"),
            (std::vector<std::string>{"1:5: integer literal is too large"}));
  LexResult big = lex("99999999999999999999999", 1);
  ASSERT_EQ(big.tokens[0].kind, TK::Error);
  EXPECT_EQ(big.tokens[0].span.end, 23u);  // the whole literal
  EXPECT_EQ(errors("1e999"), (std::vector<std::string>{"1:1: real literal is too large"}));
}

TEST(Lexer, MalformedNumbers) {
  EXPECT_EQ(errors("2x 1e 3.5e+ 4_"),
            (std::vector<std::string>{"1:1: invalid number '2x'", "1:4: invalid number '1e'",
                                      "1:7: invalid number '3.5e'", "1:13: invalid number '4_'"}));
  LexResult r = lex("1e", 1);
  EXPECT_EQ(r.errors[0].help, "an exponent needs digits, as in `1e-3`");
}

TEST(Lexer, Operators) {
  EXPECT_EQ(kinds("// / -> - == = != ! <= < >= > && || ^ % * + , : ; ( ) [ ] { }"),
            (std::vector<TK>{TK::SlashSlash, TK::Slash,  TK::Arrow,  TK::Minus,    TK::EqEq,
                             TK::Assign,     TK::NotEq,  TK::Bang,   TK::Le,       TK::Lt,
                             TK::Ge,         TK::Gt,     TK::AndAnd, TK::OrOr,     TK::Caret,
                             TK::Percent,    TK::Star,   TK::Plus,   TK::Comma,    TK::Colon,
                             TK::Semicolon,  TK::LParen, TK::RParen, TK::LBracket, TK::RBracket,
                             TK::LBrace,     TK::RBrace, TK::Eof}));
  EXPECT_EQ(kinds("a-->b"), (std::vector<TK>{TK::Ident, TK::Minus, TK::Arrow, TK::Ident, TK::Eof}));
}

TEST(Lexer, KeywordsAndNames) {
  EXPECT_EQ(kinds("def let for sum max min loop while if then else true false f64 f32 i64 bool"),
            (std::vector<TK>{TK::Def, TK::Let, TK::For, TK::Sum, TK::Max, TK::Min, TK::Loop,
                             TK::While, TK::If, TK::Then, TK::Else, TK::True, TK::False, TK::F64,
                             TK::F32, TK::I64, TK::Bool, TK::Eof}));
  // `accum` is not reserved (docs/language.md §2): the parser tells the accum form from context.
  EXPECT_EQ(kinds("accum accum[n]"), (std::vector<TK>{TK::Ident, TK::Ident, TK::LBracket, TK::Ident,
                                                      TK::RBracket, TK::Eof}));
  // The table the printer uses to avoid reserved words is the lexer's.
  for (const char* w : {"def", "let", "for", "sum", "max", "min", "loop", "while", "if", "then",
                        "else", "true", "false", "f64", "f32", "i64", "bool"}) {
    EXPECT_TRUE(is_reserved_word(w)) << w;
    EXPECT_EQ(kinds(w).front(), keyword_kind(w)) << w;
  }
  for (const char* w : {"accum", "_", "grad", "x", "sums", "Def", ""}) {
    EXPECT_FALSE(is_reserved_word(w)) << w;
  }
  EXPECT_EQ(kinds("_ _x x_ sums f64x grad"),
            (std::vector<TK>{TK::Underscore, TK::Ident, TK::Ident, TK::Ident, TK::Ident, TK::Ident,
                             TK::Eof}));
}

TEST(Lexer, CommentsAndLineStarts) {
  LexResult r = lex("# header\na b # trailing\n\n  c;d # end", 1);
  ASSERT_TRUE(r.errors.empty());
  ASSERT_EQ(r.tokens.size(), 6u);
  EXPECT_TRUE(r.tokens[0].first_on_line);   // a
  EXPECT_FALSE(r.tokens[1].first_on_line);  // b
  EXPECT_TRUE(r.tokens[2].first_on_line);   // c
  EXPECT_FALSE(r.tokens[3].first_on_line);  // ;
  EXPECT_FALSE(r.tokens[4].first_on_line);  // d
  EXPECT_EQ(r.tokens[2].span.begin, 27u);
  // Eof sits at the end of the last token, not after the comment.
  EXPECT_EQ(r.tokens[5].kind, TK::Eof);
  EXPECT_EQ(r.tokens[5].span.begin, 30u);
  EXPECT_EQ(r.tokens[5].span.end, 30u);
  // Anything goes inside a comment, NUL bytes and UTF-8 included.
  EXPECT_TRUE(lex(std::string_view("x # \0 \xff xᵀ\ny", 14), 1).errors.empty());
}

TEST(Lexer, Spans) {
  LexResult r = lex("ab  ->\n 12.5", 7);
  ASSERT_EQ(r.tokens.size(), 4u);
  EXPECT_EQ(r.tokens[0].span.file, 7u);
  EXPECT_EQ(r.tokens[0].span.begin, 0u);
  EXPECT_EQ(r.tokens[0].span.end, 2u);
  EXPECT_EQ(r.tokens[1].span.begin, 4u);
  EXPECT_EQ(r.tokens[1].span.end, 6u);
  EXPECT_EQ(r.tokens[2].span.begin, 8u);
  EXPECT_EQ(r.tokens[2].span.end, 12u);
}

TEST(Lexer, UnexpectedCharacters) {
  EXPECT_EQ(errors("a $ b"), (std::vector<std::string>{"1:3: unexpected character '$'"}));
  EXPECT_EQ(errors(std::string_view("x\0y", 3)),
            (std::vector<std::string>{"1:2: unexpected character '\\x00'"}));
  EXPECT_EQ(errors("x\n  λ"), (std::vector<std::string>{"2:3: unexpected character 'λ' (U+03BB)"}));
  EXPECT_EQ(errors("\xff"), (std::vector<std::string>{"1:1: unexpected character '\\xFF'"}));
  EXPECT_EQ(errors("\xe2\x82"), (std::vector<std::string>{"1:1: unexpected character '\\xE2'",
                                                          "1:2: unexpected character '\\x82'"}));
  EXPECT_EQ(errors("a & b | c"), (std::vector<std::string>{"1:3: unexpected character '&'",
                                                           "1:7: unexpected character '|'"}));
  LexResult r = lex("a & b", 1);
  EXPECT_EQ(r.errors[0].help, "logical and is written `&&`");
  // The multi-byte character is one error token covering all its bytes; lexing continues.
  LexResult u = lex("λx", 1);
  ASSERT_EQ(u.tokens.size(), 3u);
  EXPECT_EQ(u.tokens[0].kind, TK::Error);
  EXPECT_EQ(u.tokens[0].span.end, 2u);
  EXPECT_EQ(u.tokens[1].kind, TK::Ident);
}

// Invisible characters are named by their code point; a byte-order mark says what it is.
TEST(Lexer, InvisibleCharactersAreNamed) {
  EXPECT_EQ(errors("a\xC2\xA0"
                   "b"),
            (std::vector<std::string>{"1:2: unexpected character '\xC2\xA0' (U+00A0)"}));
  EXPECT_EQ(errors("a \xE2\x80\x8B"),
            (std::vector<std::string>{"1:3: unexpected character '\xE2\x80\x8B' (U+200B)"}));
  EXPECT_EQ(errors("a\xF0\x9F\x98\x80"),
            (std::vector<std::string>{"1:2: unexpected character '\xF0\x9F\x98\x80' (U+1F600)"}));
  LexResult r = lex("def f()\n\xEF\xBB\xBF-> f64", 1);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message, "unexpected byte-order mark (U+FEFF, invisible)");
  EXPECT_EQ(r.errors[0].help, "a byte-order mark may only start the file; delete this one");
}

// A UTF-8 byte-order mark at the start of a file was an invisible "unexpected character".
TEST(Lexer, LeadingByteOrderMarkIsSkipped) {
  LexResult r =
      lex("\xEF\xBB\xBF"
          "def f",
          1);
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.tokens.size(), 3u);
  EXPECT_EQ(r.tokens[0].kind, TK::Def);
  EXPECT_TRUE(r.tokens[0].first_on_line);
  // SourceFile drops it, so columns on the first line are what an editor shows.
  SourceFile f("t.cot",
               "\xEF\xBB\xBF"
               "def f");
  EXPECT_EQ(f.text, "def f");
  EXPECT_EQ(f.line_col(4), (std::pair<int, int>{1, 5}));
}

// Lone CR line endings were not newlines: statements on separate lines ran together.
TEST(Lexer, CrAndCrLfEndLines) {
  for (std::string_view eol : {"\n", "\r", "\r\n"}) {
    const std::string text = "a" + std::string(eol) + "b # note" + std::string(eol) + "c";
    LexResult r = lex(text, 1);
    ASSERT_EQ(r.tokens.size(), 4u);
    EXPECT_TRUE(r.tokens[1].first_on_line) << "eol " << static_cast<int>(eol[0]);
    EXPECT_EQ(r.tokens[2].kind, TK::Ident);  // the comment ends at the line break
    EXPECT_TRUE(r.tokens[2].first_on_line);
    SourceFile f("t.cot", text);
    EXPECT_EQ(f.line_col(r.tokens[2].span.begin), (std::pair<int, int>{3, 1}));
    EXPECT_EQ(f.line_text(2), "b # note");
    EXPECT_EQ(f.line_text(3), "c");
  }
  // Mixed endings count one line each.
  SourceFile mixed("t.cot", "a\r\nb\rc\nd");
  EXPECT_EQ(mixed.line_starts, (std::vector<uint32_t>{0, 3, 5, 7}));
}

// A file full of bad characters (a binary file) stops after kMaxLexErrors errors instead of
// holding a token and a message for each byte.
TEST(Lexer, ManyLexicalErrorsStop) {
  std::string text;
  for (int i = 0; i < 5000; ++i) text += "$ ";
  LexResult r = lex(text, 1);
  ASSERT_EQ(r.errors.size(), 1001u);
  EXPECT_EQ(r.errors.back().message, "too many unexpected characters; lexing stops here");
  EXPECT_EQ(r.errors.back().span.begin, 2000u);
  EXPECT_EQ(r.tokens.back().kind, TK::Eof);
  EXPECT_LT(r.tokens.size(), 1010u);
}

TEST(Lexer, SourceOverTheLimitIsRefused) {
  const std::string text(kMaxSourceBytes + 1, ' ');
  LexResult r = lex(text, 1);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].message,
            "the source is larger than 16 MiB, the largest source file accepted");
  EXPECT_EQ(r.tokens.size(), 2u);  // the error and Eof
}

TEST(Lexer, EmptyInput) {
  LexResult r = lex("", 1);
  ASSERT_EQ(r.tokens.size(), 1u);
  EXPECT_EQ(r.tokens[0].kind, TK::Eof);
  EXPECT_EQ(r.tokens[0].span.begin, 0u);
  EXPECT_EQ(kinds("  # only a comment"), (std::vector<TK>{TK::Eof}));
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
