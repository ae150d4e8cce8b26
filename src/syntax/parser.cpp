// The recursive-descent parser of docs/language.md: one method per production, in the order of
// the grammar. It is over 800 lines on purpose: the productions call each other (an expression
// holds blocks, a block holds expressions), and one file keeps the whole grammar readable top to
// bottom, as the reference presents it; the helpers it shares with nothing else (lexing,
// diagnostics) live in syntax/lexer and base/.
#include "syntax/parser.h"

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/token.h"
#include "syntax/lexer.h"

// Stack use matters here: expressions nest kMaxNesting levels deep, each level a handful of
// recursive frames, and the fuzzer runs with sanitizers that make every local costly. So
// messages are passed as string_views, messages that must be assembled are built in cold
// out-of-line functions ([[gnu::cold]]), nodes are built in place, and each construct's rule is
// kept out of line ([[gnu::noinline]]) so that a level of nesting pays only for the construct
// it is.

namespace cot {
namespace {

using ast::ExprPtr;
using ast::make_expr;
using TK = TokenKind;

// Binary operator levels, lowest first. Binder forms sit below all of them but are parsed as
// operands that extend as far right as possible; unary operators and `^` sit above them.
enum Prec : int { kOr = 1, kAnd, kCmp, kAdd, kMul };

struct BinInfo {
  int prec;
  ast::BinOp op;
};

std::optional<BinInfo> binary_info(TK k) {
  switch (k) {
    case TK::OrOr:
      return BinInfo{kOr, ast::BinOp::Or};
    case TK::AndAnd:
      return BinInfo{kAnd, ast::BinOp::And};
    case TK::EqEq:
      return BinInfo{kCmp, ast::BinOp::Eq};
    case TK::NotEq:
      return BinInfo{kCmp, ast::BinOp::Ne};
    case TK::Lt:
      return BinInfo{kCmp, ast::BinOp::Lt};
    case TK::Le:
      return BinInfo{kCmp, ast::BinOp::Le};
    case TK::Gt:
      return BinInfo{kCmp, ast::BinOp::Gt};
    case TK::Ge:
      return BinInfo{kCmp, ast::BinOp::Ge};
    case TK::Plus:
      return BinInfo{kAdd, ast::BinOp::Add};
    case TK::Minus:
      return BinInfo{kAdd, ast::BinOp::Sub};
    case TK::Star:
      return BinInfo{kMul, ast::BinOp::Mul};
    case TK::Slash:
      return BinInfo{kMul, ast::BinOp::Div};
    case TK::SlashSlash:
      return BinInfo{kMul, ast::BinOp::FloorDiv};
    case TK::Percent:
      return BinInfo{kMul, ast::BinOp::Mod};
    default:
      return std::nullopt;
  }
}

std::optional<ast::ScalarKind> scalar_kind(TK k) {
  switch (k) {
    case TK::F64:
      return ast::ScalarKind::F64;
    case TK::F32:
      return ast::ScalarKind::F32;
    case TK::I64:
      return ast::ScalarKind::I64;
    case TK::Bool:
      return ast::ScalarKind::Bool;
    default:
      return std::nullopt;
  }
}

bool can_start_expression(TK k) {
  switch (k) {
    case TK::Ident:
    case TK::Int:
    case TK::Real:
    case TK::True:
    case TK::False:
    case TK::F64:
    case TK::F32:
    case TK::I64:
    case TK::Sum:
    case TK::Max:
    case TK::Min:
    case TK::For:
    case TK::Loop:
    case TK::If:
    case TK::LParen:
    case TK::LBracket:
    case TK::LBrace:
    case TK::Minus:
    case TK::Bang:
      return true;
    default:
      return false;
  }
}

constexpr std::string_view kLoopHelp =
    "write `loop s = init for t < n { next state }` or `loop s = init while cond { next state }`";

// Allocates the Expr first and builds its node in place, so the recursive rules keep no node
// temporaries in their frames. The caller sets the span once the node's text is consumed.
template <class T>
T& new_node(ExprPtr& out) {
  out = std::make_unique<ast::Expr>();
  return out->node.emplace<T>();
}

// A message assembled on an error path.
struct Message {
  std::string text;
  std::string help;
};

class Parser {
 public:
  Parser(const SourceFile& file_text, uint32_t file, DiagnosticSink& diags)
      : src_(file_text),
        file_(file),
        diags_(diags),
        lexed_(lex(file_text.text, file)),
        toks_(lexed_.tokens) {}

  ast::Module module() {
    // Definitions with a syntax error before the parser gives up on the file.
    constexpr int kMaxSyntaxErrors = 1000;
    int syntax_errors = 0;
    ast::Module m;
    m.file = file_;
    while (!at(TK::Eof)) {
      if (at(TK::Def)) {
        ast::FnDef d = definition();  // consumes at least the `def`
        if (!failed_) {
          m.defs.push_back(std::move(d));
          continue;
        }
      } else {
        fail_found_with(peek(), [&] {
          return Message{"expected 'def' to start a definition", top_level_help(peek())};
        });
        failed_ = false;
        advance();
      }
      // Resume at the next definition; the one with the error is left out. The token where
      // the error was found may itself start it (a missing '}').
      failed_ = false;
      skip_to_next_def();
      if (++syntax_errors == kMaxSyntaxErrors && !at(TK::Eof)) {
        // A file of 4 million broken definitions gave 4 million messages (600 MB, 18 s);
        // past this many the file is not worth reading on.
        diags_.error(peek().span, "too many syntax errors; the rest of the file is not parsed",
                     "fix the errors above and check again");
        break;
      }
    }
    return m;
  }

  ExprPtr lone_expression() {
    ExprPtr e = expr();
    if (!at(TK::Eof)) fail_found(peek(), "expected the end of the expression");
    return failed_ ? nullptr : std::move(e);
  }

 private:
  // Restores the nesting depth on exit; `deeper()` counts one more level of the tree.
  class Nest {
   public:
    explicit Nest(Parser& p) : p_(p), saved_(p.depth_) {}
    ~Nest() { p_.depth_ = saved_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
    void deeper() {
      if (++p_.depth_ > kMaxNesting) {
        p_.fail(p_.peek().span, "expression nests too deeply",
                "split it into smaller parts with `let`");
      }
    }

   private:
    Parser& p_;
    int saved_;
  };

  // Inside ( ) and [ ] newlines are ignored; inside { } they end statements.
  class NewlineMode {
   public:
    NewlineMode(Parser& p, bool matter) : p_(p), saved_(p.newlines_matter_) {
      p.newlines_matter_ = matter;
    }
    ~NewlineMode() { p_.newlines_matter_ = saved_; }
    NewlineMode(const NewlineMode&) = delete;
    NewlineMode& operator=(const NewlineMode&) = delete;

   private:
    Parser& p_;
    bool saved_;
  };

  // ---- Tokens ----

  // After an error the rest of the definition reads as end of file, so every rule returns at
  // once without reporting more (the definition is then dropped and parsing resumes at the
  // next `def`). This keeps one mistake from producing a cascade of errors.
  const Token& peek(size_t k = 0) const {
    if (failed_) return toks_.back();
    return toks_[std::min(pos_ + k, toks_.size() - 1)];
  }
  bool at(TK k) const { return peek().kind == k; }
  const Token& advance() {
    if (failed_) return toks_.back();
    const Token& t = toks_[pos_];
    if (pos_ + 1 < toks_.size()) ++pos_;
    last_end_ = std::max(last_end_, t.span.end);
    return t;
  }
  bool accept(TK k) {
    if (!at(k)) return false;
    advance();
    return true;
  }
  // Whether an optional infix or postfix token continues the expression before it: in a block,
  // one that starts a line begins the next statement instead.
  bool continues(const Token& t) const { return !newlines_matter_ || !t.first_on_line; }

  std::string_view text(const Token& t) const {
    return std::string_view(src_.text).substr(t.span.begin, t.span.end - t.span.begin);
  }
  std::string name_of(const Token& t) const { return std::string(text(t)); }
  // From `begin` to the end of the last token consumed.
  Span span_from(uint32_t begin) const { return Span{file_, begin, std::max(begin, last_end_)}; }
  std::string where(const Token& t) const {
    auto [line, col] = src_.line_col(t.span.begin);
    return std::to_string(line) + ":" + std::to_string(col);
  }
  std::string describe(const Token& t) const {
    if (t.kind == TK::Eof) return "end of file";
    std::string_view s = text(t);
    if (s.size() > 40) return "'" + std::string(s.substr(0, 37)) + "...'";
    return "'" + std::string(s) + "'";
  }

  // ---- Errors ----

  // Reports the first error of a definition; later ones are consequences and stay silent.
  [[gnu::noinline, gnu::cold]] void fail(Span span, std::string_view message,
                                         std::string_view help = {}) {
    if (failed_) return;
    diags_.error(span, std::string(message), std::string(help));
    failed_ = true;
  }
  // "expected X, found Y" at `t`; a lexical error token reports its own message instead.
  [[gnu::noinline, gnu::cold]] void fail_found(const Token& t, std::string_view expected,
                                               std::string_view help = {}) {
    if (failed_) return;
    if (t.kind == TK::Error) {
      diags_.add(lexed_.errors[t.error]);
      failed_ = true;
      return;
    }
    fail(t.span, std::string(expected) + ", found " + describe(t), help);
  }
  // The same with a message that must be assembled; `make` returns a Message.
  template <class Make>
  [[gnu::noinline, gnu::cold]] void fail_with(Span span, const Make& make) {
    if (failed_) return;
    Message m = make();
    fail(span, m.text, m.help);
  }
  template <class Make>
  [[gnu::noinline, gnu::cold]] void fail_found_with(const Token& t, const Make& make) {
    if (failed_) return;
    Message m = make();
    fail_found(t, m.text, m.help);
  }
  const Token& expect(TK k, std::string_view expected, std::string_view help = {}) {
    if (!at(k)) fail_found(peek(), expected, help);
    return advance();
  }
  // Expects the bracket that closes `open`. `list` names the elements of a comma-separated
  // list inside, to suggest a missing ','.
  void expect_close(TK close, const Token& open, const char* list = nullptr,
                    std::string_view help = {}) {
    if (accept(close) || failed_) return;
    fail_found_with(peek(), [&] {
      Message m{std::string("expected ") + spelling(close) + " to close the " +
                    spelling(open.kind) + " opened at " + where(open),
                std::string(help)};
      if (m.help.empty() && list && can_start_expression(peek().kind)) {
        m.help = std::string("separate the ") + list + " with ','";
      }
      return m;
    });
  }
  std::string name_help(const Token& t) const {
    if (is_keyword(t.kind)) return describe(t) + " is a keyword and cannot be used as a name";
    return {};
  }
  // Why a token that starts a line in a block did not continue the line before it.
  std::string line_start_help(const Token& t) const {
    if (!newlines_matter_ || !t.first_on_line) return {};
    if (t.kind == TK::LParen || t.kind == TK::LBracket) {
      return "a " + describe(t) +
             " at the start of a line does not continue the previous line; put it at the end of "
             "the previous line";
    }
    if (binary_info(t.kind) || t.kind == TK::Caret) {
      return "a line that starts with an operator does not continue the previous line; put the "
             "operator at the end of the previous line";
    }
    return {};
  }
  std::string expression_help(const Token& t) const {
    std::string help = line_start_help(t);
    if (!help.empty()) return help;
    const Token* prev = pos_ > 0 ? &toks_[pos_ - 1] : nullptr;
    switch (t.kind) {
      case TK::RBrace:
        if (prev && prev->kind == TK::LBrace)
          return "a block must end with an expression, its value";
        return {};
      case TK::Let:
        return "`let` starts a statement, on its own line in a block";
      case TK::Def:
        return "a definition cannot be nested in another; is a '}' missing before it?";
      case TK::F64:
      case TK::F32:
      case TK::I64:
        return "to convert a value, write `" + name_of(t) + "(e)`";
      case TK::Bool:
        return "`bool` is a type; compare values to get one, as in `x > 0.0`";
      case TK::Star:
        if (prev && prev->kind == TK::Star && prev->span.end == t.span.begin) {
          return "powers are written `x ^ y`";
        }
        return {};
      default:
        return {};
    }
  }
  std::string top_level_help(const Token& t) const {
    if (t.kind == TK::Let) return "statements belong in the body of a definition";
    if (t.kind == TK::RBrace) return "this '}' closes no block";
    return "a module is a list of definitions such as `def f(x: f64) -> f64 { x }`";
  }

  void skip_to_next_def() {
    while (!at(TK::Eof) && !(at(TK::Def) && peek().first_on_line)) advance();
  }

  // ---- Definitions and types ----

  // def NAME(p1: T1, ..., pn: Tn) -> T { BLOCK }
  ast::FnDef definition() {
    NewlineMode mode(*this, false);
    ast::FnDef d;
    uint32_t begin = advance().span.begin;  // 'def'
    const Token& name = peek();
    if (name.kind != TK::Ident) {
      fail_found_with(name, [&] {
        return Message{"expected the function name after 'def'", name_help(name)};
      });
      return d;
    }
    advance();
    d.name = name_of(name);
    d.name_span = name.span;
    if (!at(TK::LParen)) {
      fail_found_with(peek(), [&] {
        return Message{"expected '(' and the parameters after the function name '" + d.name + "'",
                       "write `def " + d.name + "(x: f64) -> f64 { ... }`"};
      });
      return d;
    }
    const Token& open = advance();
    if (!at(TK::RParen)) {
      do {
        d.params.push_back(param());
      } while (accept(TK::Comma));
    }
    expect_close(TK::RParen, open, nullptr,
                 at(TK::Ident) ? "separate the parameters with ','" : "");
    if (!at(TK::Arrow)) {
      fail_found_with(peek(), [&] {
        return Message{"expected '->' and the return type after the parameters of '" + d.name + "'",
                       "write `def " + d.name + "(...) -> f64 { ... }`"};
      });
      return d;
    }
    advance();
    d.ret = type();
    if (!at(TK::LBrace)) {
      fail_found_with(peek(), [&] {
        return Message{"expected '{' to start the body of '" + d.name + "'", ""};
      });
      return d;
    }
    d.body = block_expr();
    d.span = span_from(begin);
    return d;
  }

  ast::Param param() {
    const Token& name = peek();
    ast::Param p;
    if (name.kind != TK::Ident) {
      fail_found_with(name, [&] { return Message{"expected a parameter name", name_help(name)}; });
      return p;
    }
    advance();
    p.span = name.span;
    p.name = name_of(name);
    if (!at(TK::Colon)) {
      fail_found_with(peek(), [&] {
        return Message{"expected ':' and the type of parameter '" + p.name + "'",
                       "every parameter needs a type, as in `" + p.name + ": f64[n]`"};
      });
      return p;
    }
    advance();
    p.type = type();
    return p;
  }

  // f64 | f64[d1, ..., dk] | (T1, ..., Tn)
  ast::TypeAst type() {
    Nest nest(*this);
    nest.deeper();
    const Token& t = peek();
    ast::TypeAst ty;
    if (auto elem = scalar_kind(t.kind)) {
      advance();
      ty.elem = *elem;
      if (at(TK::LBracket)) {
        const Token& open = advance();
        NewlineMode mode(*this, false);
        do {
          ty.dims.push_back(size_expr(kAdd));
        } while (accept(TK::Comma));
        expect_close(TK::RBracket, open, "dimensions");
      }
    } else if (t.kind == TK::LParen) {
      const Token& open = advance();
      NewlineMode mode(*this, false);
      std::vector<ast::TypeAst> elems;
      elems.push_back(type());
      bool tuple = false;
      while (accept(TK::Comma)) {
        tuple = true;
        elems.push_back(type());
      }
      expect_close(TK::RParen, open);
      if (!tuple) return std::move(elems[0]);  // `(T)` is just T
      ty.is_tuple = true;
      ty.elems = std::move(elems);
    } else {
      fail_found(t, "expected a type",
                 "the types are f64, f32, i64 and bool, with dimensions as in `f64[n, m]`, and "
                 "tuples such as `(f64, i64[n])`");
      return ty;
    }
    ty.span = span_from(t.span.begin);
    return ty;
  }

  // Size expressions: integer literals, names, + - * / and parentheses (docs/language.md §3.1).
  ExprPtr size_expr(int min_prec) {
    Nest nest(*this);
    nest.deeper();
    uint32_t begin = peek().span.begin;
    ExprPtr lhs = size_operand();
    while (true) {
      const Token& t = peek();
      if (t.kind == TK::SlashSlash || t.kind == TK::Percent || t.kind == TK::Caret) {
        fail_with(t.span, [&] {
          return Message{describe(t) + " cannot appear in a size",
                         "a size uses only `+ - * /` (and `/` must divide exactly)"};
        });
        break;
      }
      bool additive = t.kind == TK::Plus || t.kind == TK::Minus;
      bool multiplicative = t.kind == TK::Star || t.kind == TK::Slash;
      int prec = additive ? kAdd : multiplicative ? kMul : 0;
      if (prec == 0 || prec < min_prec) break;
      advance();
      nest.deeper();
      ExprPtr rhs = size_expr(prec + 1);
      lhs = make_expr(span_from(begin),
                      ast::Binary{binary_info(t.kind)->op, std::move(lhs), std::move(rhs), t.span});
    }
    return lhs;
  }

  ExprPtr size_operand() {
    const Token& t = peek();
    switch (t.kind) {
      case TK::Int:
        advance();
        return make_expr(t.span, ast::IntLit{t.int_value});
      case TK::Ident:
        advance();
        return make_expr(t.span, ast::Name{name_of(t)});
      case TK::Minus:
        return size_negation();
      case TK::LParen: {
        const Token& open = advance();
        NewlineMode mode(*this, false);
        ExprPtr e = size_expr(kAdd);
        expect_close(TK::RParen, open);
        return e;
      }
      default:
        fail_found(t, "expected a size (an integer or a size variable such as `n`)",
                   "a dimension is an integer, a name, or `+ - * /` of those, as in "
                   "`f64[n, 2 * m + 1]`");
        return nullptr;
    }
  }

  // Unary minus in a size, as in `f64[-n + 5]` (how the printer writes `5 - n`).
  [[gnu::noinline]] ExprPtr size_negation() {
    Nest nest(*this);
    nest.deeper();
    const Token& minus = advance();
    ExprPtr operand = size_operand();
    if (failed_) return nullptr;
    return make_expr(span_from(minus.span.begin), ast::Unary{ast::UnOp::Neg, std::move(operand)});
  }

  // x | _ | (p1, ..., pn)
  ast::Pattern pattern() {
    Nest nest(*this);
    nest.deeper();
    const Token& t = peek();
    ast::Pattern p;
    p.span = t.span;
    switch (t.kind) {
      case TK::Ident:
        advance();
        p.kind = ast::Pattern::Kind::Name;
        p.name = name_of(t);
        return p;
      case TK::Underscore:
        advance();
        p.kind = ast::Pattern::Kind::Wildcard;
        return p;
      case TK::LParen: {
        const Token& open = advance();
        NewlineMode mode(*this, false);
        std::vector<ast::Pattern> elems;
        elems.push_back(pattern());
        bool tuple = false;
        while (accept(TK::Comma)) {
          tuple = true;
          elems.push_back(pattern());
        }
        expect_close(TK::RParen, open);
        if (!tuple) return std::move(elems[0]);  // `(p)` is just p
        p.kind = ast::Pattern::Kind::Tuple;
        p.elems = std::move(elems);
        p.span = span_from(open.span.begin);
        return p;
      }
      default:
        fail_found_with(t, [&] {
          return Message{"expected a pattern (a name, `_` or a tuple such as `(a, b)`)",
                         name_help(t)};
        });
        return p;
    }
  }

  // ---- Expressions ----

  ExprPtr expr() { return binary(kOr); }

  // Precedence climbing over the binary levels; comparisons do not associate.
  ExprPtr binary(int min_prec) {
    Nest nest(*this);
    uint32_t begin = peek().span.begin;
    ExprPtr lhs = unary();
    const Token* last_comparison = nullptr;
    while (true) {
      const Token& t = peek();
      std::optional<BinInfo> info = binary_info(t.kind);
      if (!info || info->prec < min_prec || !continues(t)) break;
      if (info->prec == kCmp && last_comparison) {
        fail_with(t.span, [&] {
          return Message{"comparison operators cannot be chained",
                         "write `a " + name_of(*last_comparison) + " b && b " + name_of(t) + " c`"};
        });
        break;
      }
      advance();
      nest.deeper();  // the new node holds the chain so far
      ExprPtr node;
      ast::Binary& b = new_node<ast::Binary>(node);
      b.op = info->op;
      b.op_span = t.span;
      b.lhs = std::move(lhs);
      b.rhs = binary(info->prec + 1);
      node->span = span_from(begin);
      lhs = std::move(node);
      last_comparison = info->prec == kCmp ? &t : nullptr;
    }
    return lhs;
  }

  // Unary `-` and `!` bind looser than `^`: `-x ^ 2` is `-(x ^ 2)`.
  ExprPtr unary() {
    Nest nest(*this);
    nest.deeper();
    const Token& t = peek();
    if (t.kind == TK::Minus || t.kind == TK::Bang) {
      advance();
      ExprPtr node;
      ast::Unary& u = new_node<ast::Unary>(node);
      u.op = t.kind == TK::Minus ? ast::UnOp::Neg : ast::UnOp::Not;
      u.operand = unary();
      node->span = span_from(t.span.begin);
      return node;
    }
    return power();
  }

  // Right-associative, and the exponent may carry a sign: `x ^ -1`, `a ^ b ^ c`.
  ExprPtr power() {
    uint32_t begin = peek().span.begin;
    ExprPtr base = postfix();
    const Token& t = peek();
    if (t.kind != TK::Caret || !continues(t)) return base;
    advance();
    ExprPtr node;
    ast::Binary& b = new_node<ast::Binary>(node);
    b.op = ast::BinOp::Pow;
    b.op_span = t.span;
    b.lhs = std::move(base);
    b.rhs = unary();
    node->span = span_from(begin);
    return node;
  }

  ExprPtr postfix() {
    Nest nest(*this);
    uint32_t begin = peek().span.begin;
    ExprPtr e = primary();
    while (true) {
      const Token& t = peek();
      if (!continues(t)) break;
      if (t.kind == TK::LBracket) {
        nest.deeper();
        advance();
        ExprPtr node;
        ast::Index& ix = new_node<ast::Index>(node);
        ix.base = std::move(e);
        ix.indices = expr_list(TK::RBracket, t, "indices", /*allow_empty=*/false);
        node->span = span_from(begin);
        e = std::move(node);
      } else if (t.kind == TK::LParen) {
        // Calls of names are parsed in primary(); anything else is not callable.
        if (e->as<ast::Call>()) {
          fail(t.span, "the result of a call cannot be called",
               "only a derivative operator applied to a function, as in `grad(f, x)(x, y)`, is "
               "followed by a second argument list");
        } else {
          fail(t.span, "only a function can be called, by its name",
               "write `f(x)`; to multiply, write `*`");
        }
        break;
      } else {
        break;
      }
    }
    return e;
  }

  [[gnu::noinline]] std::vector<ExprPtr> expr_list(TK close, const Token& open, const char* what,
                                                   bool allow_empty) {
    NewlineMode mode(*this, false);
    std::vector<ExprPtr> out;
    if (!(allow_empty && at(close))) {
      do {
        out.push_back(expr());
      } while (accept(TK::Comma));
    }
    expect_close(close, open, what);
    return out;
  }

  ExprPtr primary() {
    const Token& t = peek();
    switch (t.kind) {
      case TK::Int:
        advance();
        return make_expr(t.span, ast::IntLit{t.int_value});
      case TK::Real:
        advance();
        return make_expr(t.span, ast::RealLit{t.real_value});
      case TK::True:
        advance();
        return make_expr(t.span, ast::BoolLit{true});
      case TK::False:
        advance();
        return make_expr(t.span, ast::BoolLit{false});
      case TK::Ident: {
        if (peek(1).kind == TK::LParen && continues(peek(1))) return call();
        if (accum_form_ahead()) return accum();
        advance();
        ExprPtr e;
        new_node<ast::Name>(e).name = name_of(t);
        e->span = t.span;
        return e;
      }
      case TK::F64:
      case TK::F32:
      case TK::I64:
        // Conversions are built-in functions named like the types.
        if (peek(1).kind == TK::LParen) return call();
        break;
      case TK::Max:
      case TK::Min:
        // `max(a, b)` is the built-in function; `max i. e` the reduction.
        if (peek(1).kind == TK::LParen) return call();
        return reduce(t.kind == TK::Max ? ast::ReduceKind::Max : ast::ReduceKind::Min);
      case TK::Sum:
        return reduce(ast::ReduceKind::Sum);
      case TK::For:
        return for_expr();
      case TK::Loop:
        return loop();
      case TK::If:
        return if_expr();
      case TK::LParen:
        return paren();
      case TK::LBracket:
        return iverson();
      case TK::LBrace:
        return block_expr();
      case TK::Underscore:
        fail(t.span, "'_' is a wildcard and can only appear in a pattern",
             "give the value a name with `let`");
        return nullptr;
      default:
        break;
    }
    fail_found_with(t, [&] { return Message{"expected an expression", expression_help(t)}; });
    return nullptr;
  }

  // NAME(args), or a derivative operator applied to a function and then called:
  // `grad(f, w)(args)`, `jvp(grad(f, w), w)(args)`.
  [[gnu::noinline]] ExprPtr call() {
    const Token& name = advance();
    ExprPtr e;
    ast::Call& c = new_node<ast::Call>(e);
    c.callee.span = name.span;
    c.callee.name = name_of(name);
    const Token& open = advance();  // '('
    c.args = expr_list(TK::RParen, open, "arguments", /*allow_empty=*/true);
    e->span = span_from(name.span.begin);
    const Token& next = peek();
    if (next.kind != TK::LParen || !continues(next)) return e;
    return apply_operator(*e);
  }

  // `op(f, a)` has just been parsed as a call and another '(' follows.
  [[gnu::noinline]] ExprPtr apply_operator(ast::Expr& op_call) {
    Nest nest(*this);
    nest.deeper();
    ExprPtr e;
    ast::Call& applied = new_node<ast::Call>(e);
    applied.callee = operator_ref(op_call);
    if (failed_) return nullptr;
    const Token& open = advance();  // '('
    applied.args = expr_list(TK::RParen, open, "arguments", /*allow_empty=*/true);
    e->span = span_from(op_call.span.begin);
    return e;
  }

  // Reads the first argument list of `op(f, a, ...)(...)`, parsed as a call, as the function
  // it denotes: op applied to f (a name or another operator), with respect to a, ....
  [[gnu::noinline]] ast::FnRef operator_ref(ast::Expr& e) {
    ast::Call& call = *e.as<ast::Call>();
    const std::string& op = call.callee.name;
    std::optional<ast::DerivKind> kind = ast::deriv_kind_from_name(op);
    if (!kind) {
      fail_with(call.callee.span, [&] {
        return Message{
            "only a derivative operator can be applied to a function; '" + op + "' is not one",
            "the derivative operators are grad, value_and_grad, jvp, vjp, jacobian and hessian, "
            "as in `grad(f, x)(x, y)`"};
      });
      return {};
    }
    if (call.args.empty()) {
      fail_with(e.span, [&] {
        return Message{"'" + op + "' needs the function to differentiate as its first argument",
                       "write `" + op + "(f)(...)` or `" + op + "(f, x)(...)`"};
      });
      return {};
    }
    ast::FnRef ref;
    ref.span = e.span;
    ref.name = op;
    ref.deriv = kind;
    ast::Expr& target = *call.args[0];
    ref.inner = std::make_unique<ast::FnRef>();
    if (const auto* name = target.as<ast::Name>()) {
      ref.inner->span = target.span;
      ref.inner->name = name->name;
    } else if (const auto* inner = target.as<ast::Call>();
               inner && !inner->callee.deriv && ast::deriv_kind_from_name(inner->callee.name)) {
      *ref.inner = operator_ref(target);
    } else {
      fail_with(target.span, [&] {
        return Message{"the first argument of '" + op +
                           "' must be a function name or a derivative operator such as "
                           "`grad(f, x)`",
                       "write `" + op + "(f, x)(...)`: it names the function f, not a call of it"};
      });
      return {};
    }
    for (size_t i = 1; i < call.args.size(); ++i) {
      const ast::Expr& arg = *call.args[i];
      const auto* name = arg.as<ast::Name>();
      if (!name) {
        fail_with(arg.span, [&] {
          return Message{
              "the arguments of '" + op + "' after the function must be parameter names",
              "name the parameters to differentiate with respect to, as in `" + op + "(f, w)`"};
        });
        return {};
      }
      ref.wrt.emplace_back(name->name, arg.span);
    }
    return ref;
  }

  // i, j: n + 1, k.   (names with optional extents, then the '.')
  [[gnu::noinline]] std::vector<ast::Binder> binders(const Token& keyword) {
    std::vector<ast::Binder> out;
    do {
      const Token& name = peek();
      if (name.kind != TK::Ident) {
        fail_found_with(name, [&] {
          std::string form(text(keyword));
          std::string help = name_help(name);
          if (help.empty()) {
            help = "write `" + form + " i. body`, or `" + form + " i: n. body` to give the extent";
          }
          return Message{out.empty() ? "expected an index variable after '" + form + "'"
                                     : "expected an index variable after ','",
                         help};
        });
        return out;
      }
      advance();
      ast::Binder b;
      b.span = name.span;
      b.name = name_of(name);
      if (accept(TK::Colon)) b.extent = binary(kOr);
      out.push_back(std::move(b));
    } while (accept(TK::Comma));
    if (!accept(TK::Dot)) {
      fail_found_with(peek(), [&] {
        std::string form(text(keyword));
        return Message{"expected '.' before the body of '" + form + "'",
                       "write `" + form + " i. body`, or `" + form +
                           " i: n. body` to give the "
                           "extent"};
      });
    }
    return out;
  }

  [[gnu::noinline]] ExprPtr for_expr() {
    const Token& kw = advance();
    ast::For f;
    f.binders = binders(kw);
    f.body = expr();
    return make_expr(span_from(kw.span.begin), std::move(f));
  }

  [[gnu::noinline]] ExprPtr reduce(ast::ReduceKind kind) {
    const Token& kw = advance();
    ast::Reduce r;
    r.kind = kind;
    r.binders = binders(kw);
    r.body = expr();
    return make_expr(span_from(kw.span.begin), std::move(r));
  }

  // loop P = INIT for ITER < COUNT { BLOCK }  |  loop P = INIT while COND { BLOCK }
  [[gnu::noinline]] ExprPtr loop() {
    const Token& kw = advance();
    ast::Loop l;
    l.state = pattern();
    expect(TK::Assign, "expected '=' and the initial state after the state of 'loop'", kLoopHelp);
    l.init = binary(kOr);
    if (accept(TK::For)) {
      const Token& iter = peek();
      if (iter.kind != TK::Ident) {
        fail_found_with(iter, [&] {
          std::string help = name_help(iter);
          return Message{"expected the name of the loop counter after 'for'",
                         help.empty() ? std::string(kLoopHelp) : help};
        });
        return nullptr;
      }
      advance();
      l.iter = name_of(iter);
      l.iter_span = iter.span;
      if (!accept(TK::Lt)) {
        fail_found_with(peek(), [&] {
          return Message{"expected '<' and the trip count after the loop counter '" + l.iter + "'",
                         "a counted loop is written `for " + l.iter + " < n`"};
        });
        return nullptr;
      }
      l.count = binary(kOr);
    } else if (accept(TK::While)) {
      l.cond = binary(kOr);
    } else {
      fail_found(peek(), "expected 'for' or 'while' after the initial state of 'loop'", kLoopHelp);
      return nullptr;
    }
    if (!at(TK::LBrace)) {
      fail_found(peek(), "expected '{' to start the body of 'loop'");
      return nullptr;
    }
    l.body = block_expr();
    return make_expr(span_from(kw.span.begin), std::move(l));
  }

  [[gnu::noinline]] ExprPtr if_expr() {
    const Token& kw = advance();
    ast::If n;
    n.cond = expr();
    expect(TK::Then, "expected 'then' after the condition of 'if'", "write `if c then a else b`");
    n.then_branch = expr();
    const Token& t = peek();
    if (t.kind != TK::Else) {
      bool first = !failed_ && t.kind != TK::Error;
      fail_found(t, "expected 'else' after the 'then' branch",
                 "an `if` is an expression, so it needs a value in both cases: write "
                 "`if c then a else b`");
      if (first) diags_.last().notes.emplace_back(kw.span, "the 'if' is here");
      return nullptr;
    }
    advance();
    n.else_branch = expr();
    return make_expr(span_from(kw.span.begin), std::move(n));
  }

  // `accum` is not a keyword (docs/language.md §2): at an operand, the identifier `accum`
  // followed by `[` starts the accum form only if the matching `]` is followed by a binder list
  // (an identifier, then '.', ',' or ':'). Otherwise it is an ordinary name, possibly indexed:
  // `accum[0]`, `accum[i] + 1.0`.
  bool accum_form_ahead() {
    if (failed_ || pos_ + 1 >= toks_.size()) return false;
    const Token& t = toks_[pos_];
    if (t.kind != TK::Ident || text(t) != "accum" || toks_[pos_ + 1].kind != TK::LBracket) {
      return false;
    }
    size_t close = matching_bracket(pos_ + 1);
    if (close == 0 || close + 2 >= toks_.size()) return false;  // the last token is Eof
    TK after = toks_[close + 2].kind;
    return toks_[close + 1].kind == TK::Ident &&
           (after == TK::Dot || after == TK::Comma || after == TK::Colon);
  }

  // The index of the ']' that closes the '[' at token `open`, or 0 if none does. Brackets are
  // matched once for the whole file, so looking ahead costs no more than linear time however
  // the brackets nest. A bracket left open at the next definition (where the parser would
  // resume after the error) is unmatched.
  size_t matching_bracket(size_t open) {
    if (bracket_match_.empty()) {
      bracket_match_.assign(toks_.size(), 0);
      std::vector<size_t> stack;
      for (size_t i = 0; i < toks_.size(); ++i) {
        const Token& u = toks_[i];
        if (u.kind == TK::LBracket) {
          stack.push_back(i);
        } else if (u.kind == TK::RBracket) {
          if (!stack.empty()) {
            bracket_match_[stack.back()] = i;
            stack.pop_back();
          }
        } else if (u.kind == TK::Def && u.first_on_line) {
          stack.clear();
        }
      }
    }
    return bracket_match_[open];
  }

  // accum[d1, ..., dk] i, j. body
  [[gnu::noinline]] ExprPtr accum() {
    const Token& kw = advance();
    ast::Accum a;
    const Token& open = expect(TK::LBracket, "expected '[' and the shape after 'accum'",
                               "write `accum[n] i. (k, value)`");
    {
      NewlineMode mode(*this, false);
      do {
        a.shape.push_back(size_expr(kAdd));
      } while (accept(TK::Comma));
      expect_close(TK::RBracket, open, "dimensions");
    }
    a.binders = binders(kw);
    a.body = expr();
    return make_expr(span_from(kw.span.begin), std::move(a));
  }

  // (e) is grouping; (a, b, ...) a tuple.
  [[gnu::noinline]] ExprPtr paren() {
    const Token& open = advance();
    NewlineMode mode(*this, false);
    ExprPtr first = expr();
    if (!at(TK::Comma)) {
      expect_close(TK::RParen, open);
      return first;
    }
    ast::Tuple tuple;
    tuple.elems.push_back(std::move(first));
    while (accept(TK::Comma)) tuple.elems.push_back(expr());
    expect_close(TK::RParen, open, "tuple elements");
    return make_expr(span_from(open.span.begin), std::move(tuple));
  }

  // [c] where an operand is expected.
  [[gnu::noinline]] ExprPtr iverson() {
    const Token& open = advance();
    NewlineMode mode(*this, false);
    ast::Iverson iv;
    iv.cond = expr();
    expect_close(TK::RBracket, open, nullptr,
                 at(TK::Comma) ? "an Iverson bracket `[c]` holds one condition; join conditions "
                                 "with `&&`"
                               : "");
    return make_expr(span_from(open.span.begin), std::move(iv));
  }

  // { let p = e (NEWLINE | ;) ... result }, at a '{'.
  [[gnu::noinline]] ExprPtr block_expr() {
    const Token& open = advance();
    NewlineMode mode(*this, true);
    ast::Block b;
    while (true) {
      while (accept(TK::Semicolon)) {
      }
      if (at(TK::Let)) {
        b.lets.push_back(let());
        continue;
      }
      if (at(TK::Eof)) {
        expect_close(TK::RBrace, open);
        return nullptr;
      }
      if (at(TK::RBrace) && !b.lets.empty()) {
        const ast::Let& last = b.lets.back();
        fail_with(last.span, [&] {
          return Message{
              "a block must end with an expression, its value",
              last.pattern.kind == ast::Pattern::Kind::Name
                  ? "add the value after the last `let`, for example `" + last.pattern.name + "`"
                  : "add the value after the last `let`"};
        });
        return nullptr;
      }
      b.result = expr();
      while (accept(TK::Semicolon)) {
      }
      break;
    }
    if (!at(TK::RBrace)) {
      fail_block_close(open);
      return nullptr;
    }
    advance();
    return make_expr(span_from(open.span.begin), std::move(b));
  }

  // Something follows a block's result: most likely a line meant to continue the one before.
  [[gnu::noinline, gnu::cold]] void fail_block_close(const Token& open) {
    const Token& t = peek();
    const Token* prev = pos_ > 0 ? &toks_[pos_ - 1] : nullptr;
    std::string help;
    // The slips people coming from other languages make most often.
    if (t.kind == TK::Eof) {
      help = "add the missing '}'";
    } else if (t.kind == TK::Def) {
      help = "is a '}' missing before this definition?";
    } else if (t.kind == TK::Dot && prev && prev->kind == TK::Int &&
               prev->span.end == t.span.begin) {
      help = "a real literal needs digits on both sides of the point: write `" +
             std::string(text(*prev)) + ".0`";
    } else if (t.kind == TK::Dot && prev && prev->kind == TK::Ident) {
      help = "there are no methods or fields: call functions as `f(x)`, index tensors as `x[i]`";
    } else if (t.kind == TK::Assign) {
      help = "names are bound with `let` and cannot be reassigned: write `let name = value`";
    } else if (prev && prev->kind == TK::Ident && text(*prev) == "return") {
      help = "there is no `return`: a block's value is its last expression";
    } else if (t.first_on_line) {
      help = line_start_help(t);
      if (help.empty()) {
        help = "only the last line of a block is its value; bind the values before it with `let`";
      }
    }
    expect_close(TK::RBrace, open, nullptr, help);
  }

  [[gnu::noinline]] ast::Let let() {
    const Token& kw = advance();
    ast::Let l;
    l.pattern = pattern();
    expect(TK::Assign, "expected '=' after the pattern of 'let'", "write `let x = value`");
    l.value = expr();
    l.span = span_from(kw.span.begin);
    const Token& t = peek();
    if (t.kind != TK::Semicolon && t.kind != TK::RBrace && t.kind != TK::Eof && !t.first_on_line) {
      fail_found(t, "expected a new line or ';' after the 'let' statement");
    }
    return l;
  }

  const SourceFile& src_;
  uint32_t file_;
  DiagnosticSink& diags_;
  const LexResult lexed_;
  const std::vector<Token>& toks_;
  size_t pos_ = 0;
  uint32_t last_end_ = 0;
  int depth_ = 0;
  bool newlines_matter_ = false;
  bool failed_ = false;  // an error was reported in the current definition
  // For each '[' the index of its ']' (0 if none); see matching_bracket(). Filled on first use.
  std::vector<size_t> bracket_match_;
};

}  // namespace

ast::Module parse_module(const SourceManager& sm, uint32_t file, DiagnosticSink& diags) {
  return Parser(sm.file(file), file, diags).module();
}

ast::ExprPtr parse_expression_for_test(const SourceManager& sm, uint32_t file,
                                       DiagnosticSink& diags) {
  return Parser(sm.file(file), file, diags).lone_expression();
}

}  // namespace cot
