#include "syntax/lexer.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

namespace cot {
namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) {
  return is_ident_start(c) || is_digit(c);
}

TokenKind word_kind(std::string_view word) {
  if (word == "_") return TokenKind::Underscore;
  return keyword_kind(word);
}

// Length of the well-formed UTF-8 sequence starting at s[0], or 0 if it is not one.
size_t utf8_length(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  unsigned char b = byte(0);
  size_t n = b >= 0xF0 && b <= 0xF4 ? 4 : b >= 0xE0 ? 3 : b >= 0xC2 && b < 0xE0 ? 2 : 0;
  if (n == 0 || s.size() < n) return 0;
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return 0;
  }
  // Reject overlong forms and code points past U+10FFFF.
  if (b == 0xE0 && byte(1) < 0xA0) return 0;
  if (b == 0xF0 && byte(1) < 0x90) return 0;
  if (b == 0xF4 && byte(1) >= 0x90) return 0;
  return n;
}

// "U+03BB" for the well-formed UTF-8 sequence `s`.
std::string code_point_name(std::string_view s) {
  auto byte = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[i])); };
  uint32_t cp = s.size() == 2 ? byte(0) & 0x1F : s.size() == 3 ? byte(0) & 0x0F : byte(0) & 0x07;
  for (size_t i = 1; i < s.size(); ++i) cp = (cp << 6) | (byte(i) & 0x3F);
  char buf[16];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(cp));
  return buf;
}

constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
// Lexical errors kept before the lexer gives up on the file (each is a token and a message).
constexpr size_t kMaxLexErrors = 1000;

class Lexer {
 public:
  Lexer(std::string_view text, uint32_t file) : text_(text), file_(file) {}

  LexResult run() {
    if (text_.size() > kMaxSourceBytes) {
      // Spans hold 32-bit offsets, and every token costs memory: refuse before lexing.
      text_ = {};
      error(0, 0,
            "the source is larger than " + std::to_string(kMaxSourceBytes >> 20) +
                " MiB, the largest source file accepted",
            "check the file: a program is rarely more than a few hundred kilobytes");
    }
    // A UTF-8 byte-order mark at the start is not part of the text (editors on Windows write
    // one); SourceFile drops it too, so columns on the first line stay right.
    if (text_.starts_with(kByteOrderMark)) pos_ = kByteOrderMark.size();
    while (true) {
      skip_space_and_comments();
      if (pos_ >= text_.size()) break;
      if (out_.errors.size() == kMaxLexErrors) {
        // A file this full of bad characters is not source text; stop rather than hold a
        // token and a message for each of its bytes.
        error(pos_, pos_ + 1, "too many unexpected characters; lexing stops here",
              "check that the file is a source file of the language");
        break;
      }
      lex_token();
    }
    Token eof;
    eof.kind = TokenKind::Eof;
    eof.first_on_line = at_line_start_;
    eof.span = Span{file_, last_end_, last_end_};
    out_.tokens.push_back(eof);
    return std::move(out_);
  }

 private:
  char peek_at(size_t i) const { return i < text_.size() ? text_[i] : '\0'; }

  void skip_space_and_comments() {
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '\n' || c == '\r') {  // LF, CRLF and a lone CR all end a line
        at_line_start_ = true;
        ++pos_;
      } else if (c == ' ' || c == '\t') {
        ++pos_;
      } else if (c == '#') {
        while (pos_ < text_.size() && text_[pos_] != '\n' && text_[pos_] != '\r') ++pos_;
      } else {
        return;
      }
    }
  }

  Token& push(TokenKind kind, size_t begin, size_t end) {
    Token t;
    t.kind = kind;
    t.first_on_line = at_line_start_;
    t.span = Span{file_, static_cast<uint32_t>(begin), static_cast<uint32_t>(end)};
    at_line_start_ = false;
    last_end_ = static_cast<uint32_t>(end);
    pos_ = end;
    out_.tokens.push_back(t);
    return out_.tokens.back();
  }

  void error(size_t begin, size_t end, std::string message, std::string help = {}) {
    Token& t = push(TokenKind::Error, begin, end);
    t.error = static_cast<uint32_t>(out_.errors.size());
    out_.errors.push_back(Diagnostic{t.span, std::move(message), std::move(help), {}});
  }

  void lex_token() {
    size_t b = pos_;
    char c = text_[b];
    if (is_ident_start(c)) {
      size_t e = b;
      while (e < text_.size() && is_ident_char(text_[e])) ++e;
      push(word_kind(text_.substr(b, e - b)), b, e);
      return;
    }
    if (is_digit(c)) {
      lex_number();
      return;
    }
    char n = peek_at(b + 1);
    auto one = [&](TokenKind k) { push(k, b, b + 1); };
    auto two = [&](TokenKind k) { push(k, b, b + 2); };
    switch (c) {
      case '(':
        return one(TokenKind::LParen);
      case ')':
        return one(TokenKind::RParen);
      case '[':
        return one(TokenKind::LBracket);
      case ']':
        return one(TokenKind::RBracket);
      case '{':
        return one(TokenKind::LBrace);
      case '}':
        return one(TokenKind::RBrace);
      case ',':
        return one(TokenKind::Comma);
      case ':':
        return one(TokenKind::Colon);
      case ';':
        return one(TokenKind::Semicolon);
      case '.':
        return one(TokenKind::Dot);
      case '+':
        return one(TokenKind::Plus);
      case '*':
        return one(TokenKind::Star);
      case '%':
        return one(TokenKind::Percent);
      case '^':
        return one(TokenKind::Caret);
      case '-':
        return n == '>' ? two(TokenKind::Arrow) : one(TokenKind::Minus);
      case '/':
        return n == '/' ? two(TokenKind::SlashSlash) : one(TokenKind::Slash);
      case '=':
        return n == '=' ? two(TokenKind::EqEq) : one(TokenKind::Assign);
      case '!':
        return n == '=' ? two(TokenKind::NotEq) : one(TokenKind::Bang);
      case '<':
        return n == '=' ? two(TokenKind::Le) : one(TokenKind::Lt);
      case '>':
        return n == '=' ? two(TokenKind::Ge) : one(TokenKind::Gt);
      case '&':
        if (n == '&') return two(TokenKind::AndAnd);
        return error(b, b + 1, "unexpected character '&'", "logical and is written `&&`");
      case '|':
        if (n == '|') return two(TokenKind::OrOr);
        return error(b, b + 1, "unexpected character '|'", "logical or is written `||`");
      default:
        break;
    }
    unexpected_character();
  }

  void unexpected_character() {
    size_t b = pos_;
    auto u = static_cast<unsigned char>(text_[b]);
    if (u >= 0x21 && u <= 0x7E) {
      std::string help;
      if (u == '"' || u == '\'') help = "the language has no strings or characters";
      return error(b, b + 1, std::string("unexpected character '") + text_[b] + "'", help);
    }
    if (u >= 0x80) {
      size_t n = utf8_length(text_.substr(b));
      if (n > 0) {
        // Name the code point: many of these are invisible (a no-break space, a zero-width
        // space, a byte-order mark) and the quoted character alone shows nothing.
        std::string_view ch = text_.substr(b, n);
        if (ch == kByteOrderMark) {
          return error(b, b + n, "unexpected byte-order mark (U+FEFF, invisible)",
                       "a byte-order mark may only start the file; delete this one");
        }
        return error(b, b + n,
                     "unexpected character '" + std::string(ch) + "' (" + code_point_name(ch) + ")",
                     "only ASCII characters may appear outside comments");
      }
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "\\x%02X", u);
    error(b, b + 1, std::string("unexpected character '") + hex + "'",
          u >= 0x80 ? "this byte is not valid UTF-8" : "");
  }

  // Integers, and reals with digits on both sides of the point (`1.` is `1` then `.`).
  void lex_number() {
    size_t b = pos_;
    size_t e = b;
    while (e < text_.size() && is_digit(text_[e])) ++e;
    bool real = false;
    if (peek_at(e) == '.' && is_digit(peek_at(e + 1))) {
      real = true;
      e += 1;
      while (e < text_.size() && is_digit(text_[e])) ++e;
    }
    if (peek_at(e) == 'e' || peek_at(e) == 'E') {
      size_t q = e + 1;
      if (peek_at(q) == '+' || peek_at(q) == '-') ++q;
      if (is_digit(peek_at(q))) {
        real = true;
        e = q;
        while (e < text_.size() && is_digit(text_[e])) ++e;
      }
    }
    if (e < text_.size() && is_ident_char(text_[e])) {
      // `2x`, `1e`, `1e+`: report the whole run rather than a confusing token pair.
      bool exponent = text_[e] == 'e' || text_[e] == 'E';
      size_t r = e;
      while (r < text_.size() && is_ident_char(text_[r])) ++r;
      return error(b, r, "invalid number '" + std::string(text_.substr(b, r - b)) + "'",
                   exponent ? "an exponent needs digits, as in `1e-3`"
                            : "a number cannot be followed directly by a letter or '_'");
    }
    std::string_view digits = text_.substr(b, e - b);
    if (real) return lex_real(b, e, digits);
    int64_t value = 0;
    for (char d : digits) {
      int v = d - '0';
      if (value > (std::numeric_limits<int64_t>::max() - v) / 10) {
        return error(b, e, "integer literal is too large",
                     "the largest i64 is 9223372036854775807; write a real such as `1e19` for "
                     "larger values");
      }
      value = value * 10 + v;
    }
    push(TokenKind::Int, b, e).int_value = value;
  }

  void lex_real(size_t b, size_t e, std::string_view digits) {
    double value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec == std::errc::result_out_of_range) {
      // from_chars reports both overflow and underflow; strtod tells them apart and gives the
      // nearest value (0 or a subnormal) for underflow.
      std::string copy(digits);
      value = std::strtod(copy.c_str(), nullptr);
      if (std::isinf(value)) {
        return error(b, e, "real literal is too large",
                     "the largest f64 is about 1.8e308; write `1.0 / 0.0` for infinity");
      }
    } else if (ec != std::errc() || ptr != digits.data() + digits.size()) {
      return error(b, e, "invalid real literal '" + std::string(digits) + "'");
    }
    push(TokenKind::Real, b, e).real_value = value;
  }

  std::string_view text_;
  uint32_t file_;
  size_t pos_ = 0;
  bool at_line_start_ = true;
  uint32_t last_end_ = 0;
  LexResult out_;
};

}  // namespace

LexResult lex(std::string_view text, uint32_t file) {
  return Lexer(text, file).run();
}

}  // namespace cot
