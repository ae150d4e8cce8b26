#include "syntax/parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "syntax/ast_dump.h"

#ifndef COTANGENT_SOURCE_DIR
#define COTANGENT_SOURCE_DIR "/work/main"
#endif

namespace cot {
namespace COTANGENT_TEST_UNIT {

// "line:col: message" for each diagnostic.
std::vector<std::string> located(const SourceManager& sm, const DiagnosticSink& diags) {
  std::vector<std::string> out;
  for (const Diagnostic& d : diags.diagnostics()) {
    auto [line, col] = sm.file(d.span.file).line_col(d.span.begin);
    out.push_back(std::to_string(line) + ":" + std::to_string(col) + ": " + d.message);
  }
  return out;
}

// The dump of a lone expression, or its first error as "ERROR line:col: message".
std::string expr(std::string_view src) {
  SourceManager sm;
  uint32_t f = sm.add("t.cot", std::string(src));
  DiagnosticSink diags;
  ast::ExprPtr e = parse_expression_for_test(sm, f, diags);
  if (diags.has_errors()) return "ERROR " + located(sm, diags)[0];
  return e ? ast::dump(*e) : "null";
}

struct Parsed {
  SourceManager sm;
  uint32_t file = 0;
  DiagnosticSink diags;
  ast::Module module;
  std::vector<std::string> errors() const { return located(sm, diags); }
};

std::unique_ptr<Parsed> parse(std::string_view src) {
  auto p = std::make_unique<Parsed>();
  p->file = p->sm.add("t.cot", std::string(src));
  p->module = parse_module(p->sm, p->file, p->diags);
  return p;
}

// The dump of a module, or its errors.
std::string module(std::string_view src) {
  auto p = parse(src);
  if (p->diags.has_errors()) {
    std::string out;
    for (const std::string& e : p->errors()) out += "ERROR " + e + "\n";
    return out;
  }
  return ast::dump(p->module);
}

// The dump of the body of `def f() -> f64 { BODY }`, so blocks see real newlines.
std::string body(std::string_view block) {
  auto p = parse("def f() -> f64 {" + std::string(block) + "}");
  if (p->diags.has_errors()) return "ERROR " + p->errors()[0];
  return ast::dump(*p->module.defs.at(0).body);
}

std::string help_of(std::string_view src) {
  auto p = parse(src);
  return p->diags.has_errors() ? p->diags.diagnostics()[0].help : "<no error>";
}

// ---- Precedence and associativity ----

TEST(Parser, ArithmeticPrecedence) {
  EXPECT_EQ(expr("x + y * z"), "(+ x (* y z))");
  EXPECT_EQ(expr("x * y + z"), "(+ (* x y) z)");
  EXPECT_EQ(expr("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(expr("a / b * c % d // e"), "(// (% (* (/ a b) c) d) e)");
  EXPECT_EQ(expr("(a + b) * c"), "(* (+ a b) c)");
  EXPECT_EQ(expr("a || b && c || d"), "(|| (|| a (&& b c)) d)");
  EXPECT_EQ(expr("a < b + 1 && c != d"), "(&& (< a (+ b 1)) (!= c d))");
  EXPECT_EQ(expr("!a || -b < c"), "(|| (! a) (< (- b) c))");
}

TEST(Parser, PowerAndUnary) {
  EXPECT_EQ(expr("-x ^ 2"), "(- (^ x 2))");
  EXPECT_EQ(expr("x ^ -1"), "(^ x (- 1))");
  EXPECT_EQ(expr("a ^ b ^ c"), "(^ a (^ b c))");
  EXPECT_EQ(expr("2 * x ^ 2"), "(* 2 (^ x 2))");
  EXPECT_EQ(expr("-a * b"), "(* (- a) b)");
  EXPECT_EQ(expr("a * -b"), "(* a (- b))");
  EXPECT_EQ(expr("- - x"), "(- (- x))");
  EXPECT_EQ(expr("x[i] ^ 2"), "(^ (index x i) 2)");
  EXPECT_EQ(expr("-(1.0 / 0.0)"), "(- (/ 1.0 0.0))");
}

// Slips common in other languages get a help that names the fix.
TEST(Parser, HelpsForCommonSlips) {
  EXPECT_EQ(help_of("def f(x: f64) -> f64 {\n  x * 2.\n}\n"),
            "a real literal needs digits on both sides of the point: write `2.0`");
  EXPECT_EQ(help_of("def f(x: f64) -> f64 {\n  return x\n}\n"),
            "there is no `return`: a block's value is its last expression");
  EXPECT_EQ(help_of("def f(x: f64) -> f64 {\n  x = 2.0\n  x\n}\n"),
            "names are bound with `let` and cannot be reassigned: write `let name = value`");
  EXPECT_EQ(help_of("def f(x: f64) -> f64 {\n  x.sum()\n}\n"),
            "there are no methods or fields: call functions as `f(x)`, index tensors as `x[i]`");
  EXPECT_EQ(help_of("def f(x: f64) -> f64 {\n  x * 2.0\n"), "add the missing '}'");
}

TEST(Parser, ComparisonsDoNotChain) {
  EXPECT_EQ(expr("a < b < c"), "ERROR 1:7: comparison operators cannot be chained");
  EXPECT_EQ(expr("a == b <= c"), "ERROR 1:8: comparison operators cannot be chained");
  EXPECT_EQ(expr("a < b + 1 < c"), "ERROR 1:11: comparison operators cannot be chained");
  EXPECT_EQ(expr("(a < b) == c"), "(== (< a b) c)");
  EXPECT_EQ(help_of("def f() -> f64 { a < b < c }"), "write `a < b && b < c`");
  EXPECT_EQ(help_of("def f() -> f64 { a <= b > c }"), "write `a <= b && b > c`");
}

TEST(Parser, Literals) {
  EXPECT_EQ(expr("42"), "42");
  EXPECT_EQ(expr("1.0"), "1.0");
  EXPECT_EQ(expr("1e-3"), "0.001");
  EXPECT_EQ(expr("6.02e23"), "6.02e+23");
  EXPECT_EQ(expr("(true, false)"), "(tuple true false)");
  EXPECT_EQ(expr("-9223372036854775807"), "(- 9223372036854775807)");
  EXPECT_EQ(expr("-9223372036854775808"), "ERROR 1:2: integer literal is too large");
}

// ---- Postfix forms, calls and atoms ----

TEST(Parser, IndexingAndCalls) {
  EXPECT_EQ(expr("x[i, j + 1]"), "(index x i (+ j 1))");
  EXPECT_EQ(expr("A[i][j]"), "(index (index A i) j)");
  EXPECT_EQ(expr("f(a, b)"), "(call f a b)");
  EXPECT_EQ(expr("f()"), "(call f)");
  EXPECT_EQ(expr("f(x)[0]"), "(index (call f x) 0)");
  EXPECT_EQ(expr("x[idx[o]]"), "(index x (index idx o))");
  EXPECT_EQ(expr("max(a, b) + min(c, d)"), "(+ (call max a b) (call min c d))");
  EXPECT_EQ(expr("f64(i) + f32(x) * i64(y)"), "(+ (call f64 i) (* (call f32 x) (call i64 y)))");
  EXPECT_EQ(expr("size(x, 0)"), "(call size x 0)");
}

TEST(Parser, AtomsTuplesBlocksIverson) {
  EXPECT_EQ(expr("(a, (b, c))"), "(tuple a (tuple b c))");
  EXPECT_EQ(expr("((a))"), "a");
  EXPECT_EQ(expr("[i == j] * x[i]"), "(* (iverson (== i j)) (index x i))");
  EXPECT_EQ(expr("[i + 1 < n] * x[i + 1]"), "(* (iverson (< (+ i 1) n)) (index x (+ i 1)))");
  EXPECT_EQ(expr("{ let a = 1; a + 1 }"), "(block (let a 1) (+ a 1))");
  EXPECT_EQ(expr("{ let (a, (_, c)) = t\n a }"), "(block (let (tuple a (tuple _ c)) t) a)");
  EXPECT_EQ(expr("{ x }"), "(block x)");
}

// ---- Binder forms ----

TEST(Parser, BinderForms) {
  EXPECT_EQ(expr("for i. x[i]"), "(for (i) (index x i))");
  EXPECT_EQ(expr("for i, j: n. A[i, j]"), "(for (i j:n) (index A i j))");
  EXPECT_EQ(expr("for i: n + 1. e"), "(for (i:(+ n 1)) e)");
  EXPECT_EQ(expr("sum i. x[i] * y[i]"), "(sum (i) (* (index x i) (index y i)))");
  EXPECT_EQ(expr("max i. x[i]"), "(max (i) (index x i))");
  EXPECT_EQ(expr("min i: 3. x[i]"), "(min (i:3) (index x i))");
  EXPECT_EQ(expr("for i. sum j. A[i, j] * x[j]"),
            "(for (i) (sum (j) (* (index A i j) (index x j))))");
  // Binder forms extend as far right as possible, also as operands.
  EXPECT_EQ(expr("a + sum i. x[i] + 1"), "(+ a (sum (i) (+ (index x i) 1)))");
  EXPECT_EQ(expr("mx + log(sum i. exp(x[i] - mx))"),
            "(+ mx (call log (sum (i) (call exp (- (index x i) mx)))))");
  EXPECT_EQ(expr("(sum i. x[i]) / f64(n)"), "(/ (sum (i) (index x i)) (call f64 n))");
  EXPECT_EQ(expr("-sum i. x[i]"), "(- (sum (i) (index x i)))");
  EXPECT_EQ(expr("for i: sum j. x[j]. i"), "(for (i:(sum (j) (index x j))) i)");
}

TEST(Parser, IfAndLoop) {
  EXPECT_EQ(expr("if x > 0.0 then x else 0.0"), "(if (> x 0.0) x 0.0)");
  EXPECT_EQ(expr("if a then b else if c then d else e + 1"), "(if a b (if c d (+ e 1)))");
  EXPECT_EQ(expr("1 + if c then a else b * 2"), "(+ 1 (if c a (* b 2)))");
  EXPECT_EQ(expr("loop s = h0 for t < n { s + 1 }"), "(loop s h0 (for t n) (block (+ s 1)))");
  EXPECT_EQ(expr("loop (h, c) = (h0, c0) for t < n + 1 { (c, h) }"),
            "(loop (tuple h c) (tuple h0 c0) (for t (+ n 1)) (block (tuple c h)))");
  EXPECT_EQ(expr("loop s = x while s < 10.0 { s * 2.0 }"),
            "(loop s x (while (< s 10.0)) (block (* s 2.0)))");
  EXPECT_EQ(expr("loop s = a + b for t < f(n) {\n  let u = s\n  u\n}"),
            "(loop s (+ a b) (for t (call f n)) (block (let u s) u))");
}

TEST(Parser, Accum) {
  EXPECT_EQ(expr("accum[n, m + 1] i, j: k. (idx[i], j, v[i])"),
            "(accum (n (+ m 1)) (i j:k) (tuple (index idx i) j (index v i)))");
  // The binder list after the shape may start with `i.`, `i,` or `i:`.
  EXPECT_EQ(expr("accum[n] i. (i, 1.0)"), "(accum (n) (i) (tuple i 1.0))");
  EXPECT_EQ(expr("accum[n] i: m. (i, 1.0)"), "(accum (n) (i:m) (tuple i 1.0))");
  EXPECT_EQ(expr("accum[n]\n i. (i, 1.0)"), "(accum (n) (i) (tuple i 1.0))");
  EXPECT_EQ(expr("2.0 * accum[n] i. (i, 1.0)"), "(* 2.0 (accum (n) (i) (tuple i 1.0)))");
  // A binder and a body may themselves be named `accum`.
  EXPECT_EQ(expr("accum[n] accum. (accum, accum[0])"),
            "(accum (n) (accum) (tuple accum (index accum 0)))");
  EXPECT_EQ(expr("accum[n] i. accum[m] j. (i, j)"), "(accum (n) (i) (accum (m) (j) (tuple i j)))");
}

// `accum` is not a keyword (docs/language.md §2): it is the accum form only when its shape is
// followed by binders, and an ordinary name everywhere else.
TEST(Parser, AccumAsName) {
  EXPECT_EQ(expr("accum"), "accum");
  EXPECT_EQ(expr("accum + 1.0"), "(+ accum 1.0)");
  EXPECT_EQ(expr("accum[0]"), "(index accum 0)");
  EXPECT_EQ(expr("accum[i, j + 1] * 2.0"), "(* (index accum i (+ j 1)) 2.0)");
  EXPECT_EQ(expr("(accum[i], accum[j])"), "(tuple (index accum i) (index accum j))");
  EXPECT_EQ(expr("accum[accum[0]][1]"), "(index (index accum (index accum 0)) 1)");
  EXPECT_EQ(expr("sum accum. x[accum]"), "(sum (accum) (index x accum))");
  EXPECT_EQ(expr("accum(x)"), "(call accum x)");
  EXPECT_EQ(expr("for i. accum[i] i"), "ERROR 1:17: expected the end of the expression, found 'i'");
  EXPECT_EQ(module("def f(accum: f64) -> f64 { accum }"),
            "(def f ((accum f64)) f64 (block accum))\n");
  EXPECT_EQ(module("def accum(x: f64) -> f64 { x }"), "(def accum ((x f64)) f64 (block x))\n");
  EXPECT_EQ(module("def f(n: i64) -> f64 { loop accum = 0.0 for t < n { accum + 1.0 } }"),
            "(def f ((n i64)) f64 (block (loop accum 0.0 (for t n) (block (+ accum 1.0)))))\n");
  EXPECT_EQ(body("\n  let accum = x\n  accum[0]\n"), "(block (let accum x) (index accum 0))");
  EXPECT_EQ(body("\n  let accum = x\n  accum\n"), "(block (let accum x) accum)");
  // A '[' at the start of the next line does not continue the name.
  EXPECT_EQ(body("\n  let y = accum\n  [y > 0.0] * y\n"),
            "(block (let y accum) (* (iverson (> y 0.0)) y))");
  EXPECT_EQ(module("def f(x: f64[accum]) -> f64[accum] { x }"),
            "(def f ((x (f64 accum))) (f64 accum) (block x))\n");
  // The accum form with a malformed shape is still read as one, and its error reported.
  EXPECT_EQ(expr("accum[size(x, 0)] i. (i, 1.0)"),
            "ERROR 1:11: expected ']' to close the '[' opened at 1:6, found '('");
  // Lookahead stays linear however deeply the brackets nest or fail to close.
  std::string open_brackets;
  for (int i = 0; i < 20000; ++i) open_brackets += "accum[";
  EXPECT_NE(expr(open_brackets).find("expression nests too deeply"), std::string::npos);
  std::string defs;
  for (int i = 0; i < 2000; ++i) defs += "def f() -> f64 { accum[accum[accum[ }\n";
  // One error per definition, up to the parser's limit of 1000 and the message that it stopped.
  EXPECT_EQ(parse(defs)->diags.count(), 1001u);
}

// ---- Derivative operators ----

TEST(Parser, DerivativeOperators) {
  EXPECT_EQ(expr("grad(f, w)(a, b)"), "(call (grad f w) a b)");
  EXPECT_EQ(expr("value_and_grad(f)(x)"), "(call (value_and_grad f) x)");
  EXPECT_EQ(expr("jvp(grad(loss, w), w)(w, X, y, v)"), "(call (jvp (grad loss w) w) w X y v)");
  EXPECT_EQ(expr("jacobian(f, a)(a, b)"), "(call (jacobian f a) a b)");
  EXPECT_EQ(expr("hessian(f, a, b)()"), "(call (hessian f a b))");
  EXPECT_EQ(expr("vjp(f, a)(a, ct)[0]"), "(index (call (vjp f a) a ct) 0)");
  EXPECT_EQ(expr("grad(grad(f, x), x)(x)"), "(call (grad (grad f x) x) x)");
  // Without a second argument list it is a plain call of a function named `grad`.
  EXPECT_EQ(expr("grad(f, w)"), "(call grad f w)");
}

TEST(Parser, DerivativeOperatorErrors) {
  EXPECT_EQ(expr("f(x)(y)"),
            "ERROR 1:1: only a derivative operator can be applied to a function; 'f' is not one");
  EXPECT_EQ(expr("grad(f(x), w)(x)"),
            "ERROR 1:6: the first argument of 'grad' must be a function name or a derivative "
            "operator such as `grad(f, x)`");
  EXPECT_EQ(expr("jvp(grad(f, w)(x), w)(x)"),
            "ERROR 1:5: the first argument of 'jvp' must be a function name or a derivative "
            "operator such as `grad(f, x)`");
  EXPECT_EQ(expr("grad(f, w + 1)(x)"),
            "ERROR 1:9: the arguments of 'grad' after the function must be parameter names");
  EXPECT_EQ(expr("grad()(x)"),
            "ERROR 1:1: 'grad' needs the function to differentiate as its first argument");
  EXPECT_EQ(expr("grad(f)(x)(y)"), "ERROR 1:11: the result of a call cannot be called");
  EXPECT_EQ(expr("(f)(x)"), "ERROR 1:4: only a function can be called, by its name");
}

TEST(Parser, DerivativeOperatorStructure) {
  SourceManager sm;
  std::string src = "jvp(grad(loss, w), w)(w, v)";
  uint32_t f = sm.add("t.cot", src);
  DiagnosticSink diags;
  ast::ExprPtr e = parse_expression_for_test(sm, f, diags);
  ASSERT_TRUE(e && !diags.has_errors());
  const auto* call = e->as<ast::Call>();
  ASSERT_TRUE(call);
  const ast::FnRef& jvp = call->callee;
  EXPECT_EQ(jvp.deriv, ast::DerivKind::Jvp);
  EXPECT_EQ(jvp.span.begin, 0u);
  EXPECT_EQ(jvp.span.end, 21u);  // `jvp(grad(loss, w), w)`
  ASSERT_EQ(jvp.wrt.size(), 1u);
  EXPECT_EQ(jvp.wrt[0].first, "w");
  EXPECT_EQ(jvp.wrt[0].second.begin, 19u);
  ASSERT_TRUE(jvp.inner);
  const ast::FnRef& grad = *jvp.inner;
  EXPECT_EQ(grad.deriv, ast::DerivKind::Grad);
  EXPECT_EQ(grad.span.begin, 4u);
  EXPECT_EQ(grad.span.end, 17u);  // `grad(loss, w)`
  ASSERT_TRUE(grad.inner);
  EXPECT_FALSE(grad.inner->deriv);
  EXPECT_EQ(grad.inner->name, "loss");
  EXPECT_EQ(grad.inner->span.begin, 9u);
  EXPECT_EQ(grad.inner->span.end, 13u);
  EXPECT_EQ(e->span.end, static_cast<uint32_t>(src.size()));
}

// ---- Newlines ----

TEST(Parser, NewlinesInBlocks) {
  EXPECT_EQ(body("\n  let a = 1\n\n  let b = a +\n    2\n  a * b\n"),
            "(block (let a 1) (let b (+ a 2)) (* a b))");
  EXPECT_EQ(body("let a = f(1,\n  2)\n a"), "(block (let a (call f 1 2)) a)");
  EXPECT_EQ(body("let a = x[\n 1]; let b = [a\n > 0]; b"),
            "(block (let a (index x 1)) (let b (iverson (> a 0))) b)");
  // A '{' inside parentheses opens a block where newlines matter again.
  EXPECT_EQ(body("f({ let a = 1\n a })"), "(block (call f (block (let a 1) a)))");
  // Newlines before then, else and a loop body's '{' are tolerated.
  EXPECT_EQ(body("let y = if c\n then a\n else b\n y"), "(block (let y (if c a b)) y)");
  EXPECT_EQ(body("loop s = x for t < n\n{\n s\n}"), "(block (loop s x (for t n) (block s)))");
  // Lines ending in ',', '=', '.', '->' or an operator continue.
  EXPECT_EQ(body("let a =\n for i,\n j.\n x[i] *\n y[j]\n a"),
            "(block (let a (for (i j) (* (index x i) (index y j)))) a)");
}

TEST(Parser, NewlineEndsExpressionInBlock) {
  // A line starting with '-', '(' or '[' begins a new statement.
  EXPECT_EQ(body("let a = x\n-y"), "(block (let a x) (- y))");
  EXPECT_EQ(body("let a = f\n(b, c)"), "(block (let a f) (tuple b c))");
  EXPECT_EQ(body("let a = x\n[c] * 2.0"), "(block (let a x) (* (iverson c) 2.0))");
  EXPECT_EQ(body("let a = for i. x[i]\n[c]"), "(block (let a (for (i) (index x i))) (iverson c))");
  // ...and an infix operator at the start of a line is an error with a hint.
  EXPECT_EQ(body("let a = x\n  * y\na"), "ERROR 2:3: expected an expression, found '*'");
  EXPECT_EQ(help_of("def f() -> f64 {\n  a\n  + b\n}"),
            "a line that starts with an operator does not continue the previous line; put the "
            "operator at the end of the previous line");
  EXPECT_EQ(body("a\n+ b"), "ERROR 2:1: expected '}' to close the '{' opened at 1:16, found '+'");
}

// ---- Definitions and types ----

TEST(Parser, Definitions) {
  EXPECT_EQ(module("def dot(x: f64[n], y: f64[n]) -> f64 {\n  sum i. x[i] * y[i]\n}\n"),
            "(def dot ((x (f64 n)) (y (f64 n))) f64 (block (sum (i) (* (index x i) (index y "
            "i)))))\n");
  EXPECT_EQ(module("def zero() -> f64 { 0.0 }"), "(def zero () f64 (block 0.0))\n");
  EXPECT_EQ(module("def f(a: i64, b: bool, c: f32[2 * n + 1, (m - 1) / 2]) -> (f64, (i64, "
                   "f64[k])) { (a, (b, c)) }"),
            "(def f ((a i64) (b bool) (c (f32 (+ (* 2 n) 1) (/ (- m 1) 2)))) (tuple f64 (tuple "
            "i64 (f64 k))) (block (tuple a (tuple b c))))\n");
  // Sizes may be negated, as the printer writes them: `f64[-n + 5]`.
  EXPECT_EQ(module("def f(x: f64[-n + 5], y: f64[0 - n], z: f64[2 * -n, -(n - 1), - -3]) -> f64 "
                   "{ 0.0 }"),
            "(def f ((x (f64 (+ (- n) 5))) (y (f64 (- 0 n))) (z (f64 (* 2 (- n)) (- (- n 1)) (- "
            "(- 3))))) f64 (block 0.0))\n");
  // Header across lines; two definitions on one line.
  EXPECT_EQ(module("def f(\n  x: f64,\n  y: f64\n) -> f64\n{ x }def g() -> f64 { 1.0 }"),
            "(def f ((x f64) (y f64)) f64 (block x))\n(def g () f64 (block 1.0))\n");
}

TEST(Parser, Spans) {
  std::string src = "def f(xs: f64[n]) -> f64 {\n  let s = sum i: n. xs[i] * 2.0\n  s\n}\n";
  auto p = parse(src);
  ASSERT_FALSE(p->diags.has_errors());
  const ast::FnDef& d = p->module.defs.at(0);
  EXPECT_EQ(d.span.begin, 0u);
  EXPECT_EQ(d.span.end, src.size() - 1);  // through the final '}'
  EXPECT_EQ(d.name_span.begin, 4u);
  EXPECT_EQ(d.name_span.end, 5u);
  EXPECT_EQ(d.params[0].span.begin, 6u);
  EXPECT_EQ(d.params[0].span.end, 8u);
  EXPECT_EQ(d.params[0].type.span.begin, 10u);
  EXPECT_EQ(d.params[0].type.span.end, 16u);  // `f64[n]`
  EXPECT_EQ(d.ret.span.begin, 21u);
  EXPECT_EQ(d.body->span.begin, 25u);
  const auto* block = d.body->as<ast::Block>();
  ASSERT_TRUE(block && block->lets.size() == 1);
  const ast::Let& let = block->lets[0];
  EXPECT_EQ(src.substr(let.span.begin, let.span.end - let.span.begin),
            "let s = sum i: n. xs[i] * 2.0");
  EXPECT_EQ(src.substr(let.pattern.span.begin, 1), "s");
  const auto* sum = let.value->as<ast::Reduce>();
  ASSERT_TRUE(sum);
  EXPECT_EQ(src.substr(let.value->span.begin, let.value->span.end - let.value->span.begin),
            "sum i: n. xs[i] * 2.0");
  EXPECT_EQ(
      src.substr(sum->binders[0].span.begin, sum->binders[0].span.end - sum->binders[0].span.begin),
      "i");
  const auto* mul = sum->body->as<ast::Binary>();
  ASSERT_TRUE(mul);
  EXPECT_EQ(src.substr(mul->op_span.begin, 1), "*");
  EXPECT_EQ(src.substr(sum->body->span.begin, sum->body->span.end - sum->body->span.begin),
            "xs[i] * 2.0");
  // A parenthesized operand is covered by its parent's span.
  ast::ExprPtr e;
  SourceManager sm;
  uint32_t f = sm.add("t.cot", "(a + b) * c");
  DiagnosticSink diags;
  e = parse_expression_for_test(sm, f, diags);
  ASSERT_TRUE(e);
  EXPECT_EQ(e->span.begin, 0u);
  EXPECT_EQ(e->span.end, 11u);
  EXPECT_EQ(e->as<ast::Binary>()->lhs->span.begin, 1u);
}

TEST(Parser, LoopSpans) {
  std::string src = "loop s = x for step < n { s }";
  SourceManager sm;
  uint32_t f = sm.add("t.cot", src);
  DiagnosticSink diags;
  ast::ExprPtr e = parse_expression_for_test(sm, f, diags);
  ASSERT_TRUE(e);
  const auto* loop = e->as<ast::Loop>();
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->iter, "step");
  EXPECT_EQ(loop->iter_span.begin, 15u);
  EXPECT_EQ(loop->iter_span.end, 19u);
  EXPECT_FALSE(loop->cond);
  EXPECT_EQ(loop->body->span.begin, 24u);
  EXPECT_EQ(e->span.end, static_cast<uint32_t>(src.size()));
}

// ---- Errors ----

TEST(Parser, ErrorMessages) {
  EXPECT_EQ(module("def f(x: f64) -> f64 {\n  g(x, 1\n}\n"),
            "ERROR 3:1: expected ')' to close the '(' opened at 2:4, found '}'\n");
  EXPECT_EQ(module("def f() -> f64 {\n  (a + b\n"),
            "ERROR 2:9: expected ')' to close the '(' opened at 2:3, found end of file\n");
  EXPECT_EQ(module("def f() -> f64 {\n  x[1, 2\n  y\n}"),
            "ERROR 3:3: expected ']' to close the '[' opened at 2:4, found 'y'\n");
  EXPECT_EQ(module("def f() -> f64 { 1 + $ }"), "ERROR 1:22: unexpected character '$'\n");
  EXPECT_EQ(module("def f() -> f64 { }"), "ERROR 1:18: expected an expression, found '}'\n");
  EXPECT_EQ(module("def f() -> f64 {\n  let a = 1\n  let b = 2\n}"),
            "ERROR 3:3: a block must end with an expression, its value\n");
  EXPECT_EQ(module("def f() -> f64 {\n  let a = 1 2\n  a\n}"),
            "ERROR 2:13: expected a new line or ';' after the 'let' statement, found '2'\n");
  EXPECT_EQ(module("def f() -> f64 { if c then a }"),
            "ERROR 1:30: expected 'else' after the 'then' branch, found '}'\n");
  EXPECT_EQ(module("def f() -> f64 { if c a else b }"),
            "ERROR 1:23: expected 'then' after the condition of 'if', found 'a'\n");
  EXPECT_EQ(module("def f() -> f64 { sum i x[i] }"),
            "ERROR 1:24: expected '.' before the body of 'sum', found 'x'\n");
  EXPECT_EQ(module("def f() -> f64 { sum(x) }"),
            "ERROR 1:21: expected an index variable after 'sum', found '('\n");
  EXPECT_EQ(module("def f() -> f64 { for i, . x }"),
            "ERROR 1:25: expected an index variable after ',', found '.'\n");
  EXPECT_EQ(module("def f() -> f64 { loop s = 0 until s { s } }"),
            "ERROR 1:29: expected 'for' or 'while' after the initial state of 'loop', found "
            "'until'\n");
  EXPECT_EQ(module("def f() -> f64 { loop s = 0 for t <= n { s } }"),
            "ERROR 1:35: expected '<' and the trip count after the loop counter 't', found "
            "'<='\n");
  EXPECT_EQ(module("def f() -> f64 { loop s = 0 for t < n s }"),
            "ERROR 1:39: expected '{' to start the body of 'loop', found 's'\n");
  EXPECT_EQ(module("def f() -> f64 { _ }"),
            "ERROR 1:18: '_' is a wildcard and can only appear in a pattern\n");
  EXPECT_EQ(module("def f() -> f64 { let sum = 1\n sum }"),
            "ERROR 1:22: expected a pattern (a name, `_` or a tuple such as `(a, b)`), found "
            "'sum'\n");
  EXPECT_EQ(module("def f() -> f64 { a b }"),
            "ERROR 1:20: expected '}' to close the '{' opened at 1:16, found 'b'\n");
  EXPECT_EQ(module("def f() -> f64 { [a, b] }"),
            "ERROR 1:20: expected ']' to close the '[' opened at 1:18, found ','\n");
  EXPECT_EQ(module("def f() -> f64 { 2 (x) }"),
            "ERROR 1:20: only a function can be called, by its name\n");
}

TEST(Parser, HeaderErrors) {
  EXPECT_EQ(module("def (x: f64) -> f64 { x }"),
            "ERROR 1:5: expected the function name after 'def', found '('\n");
  EXPECT_EQ(module("def for(x: f64) -> f64 { x }"),
            "ERROR 1:5: expected the function name after 'def', found 'for'\n");
  EXPECT_EQ(module("def f x: f64 -> f64 { x }"),
            "ERROR 1:7: expected '(' and the parameters after the function name 'f', found "
            "'x'\n");
  EXPECT_EQ(module("def f(x) -> f64 { x }"),
            "ERROR 1:8: expected ':' and the type of parameter 'x', found ')'\n");
  EXPECT_EQ(module("def f(x: f64 y: f64) -> f64 { x }"),
            "ERROR 1:14: expected ')' to close the '(' opened at 1:6, found 'y'\n");
  EXPECT_EQ(module("def f(x: f64) { x }"),
            "ERROR 1:15: expected '->' and the return type after the parameters of 'f', found "
            "'{'\n");
  EXPECT_EQ(module("def f(x: float) -> f64 { x }"), "ERROR 1:10: expected a type, found 'float'\n");
  EXPECT_EQ(module("def f(x: f64[n // 2]) -> f64 { x }"),
            "ERROR 1:16: '//' cannot appear in a size\n");
  EXPECT_EQ(module("def f(x: f64[i + j[0]]) -> f64 { x }"),
            "ERROR 1:19: expected ']' to close the '[' opened at 1:13, found '['\n");
  EXPECT_EQ(module("def f(x: f64[n - ]) -> f64 { x }"),
            "ERROR 1:18: expected a size (an integer or a size variable such as `n`), found "
            "']'\n");
  EXPECT_EQ(module("def f(x: f64[-]) -> f64 { x }"),
            "ERROR 1:15: expected a size (an integer or a size variable such as `n`), found "
            "']'\n");
  EXPECT_EQ(module("def f(x: f64[]) -> f64 { x }"),
            "ERROR 1:14: expected a size (an integer or a size variable such as `n`), found "
            "']'\n");
  EXPECT_EQ(module("def f(x: f64) -> f64 x"),
            "ERROR 1:22: expected '{' to start the body of 'f', found 'x'\n");
  EXPECT_EQ(module("let x = 1"), "ERROR 1:1: expected 'def' to start a definition, found 'let'\n");
  EXPECT_EQ(help_of("def f(x: f64) -> f64 { x }\n}"), "this '}' closes no block");
}

TEST(Parser, ErrorHelp) {
  EXPECT_EQ(help_of("def f() -> f64 { if c then a }"),
            "an `if` is an expression, so it needs a value in both cases: write `if c then a "
            "else b`");
  EXPECT_EQ(help_of("def f() -> f64 {\n  let a = 1\n}"),
            "add the value after the last `let`, for example `a`");
  EXPECT_EQ(help_of("def f() -> f64 {\n  a\n  b\n}"),
            "only the last line of a block is its value; bind the values before it with `let`");
  EXPECT_EQ(help_of("def f(x) -> f64 { x }"), "every parameter needs a type, as in `x: f64[n]`");
  EXPECT_EQ(help_of("def f() -> f64 { f64 }"), "to convert a value, write `f64(e)`");
  EXPECT_EQ(help_of("def f() -> f64 { x ** 2 }"), "powers are written `x ^ y`");
  EXPECT_EQ(help_of("def f() -> f64 { [a, b] }"),
            "an Iverson bracket `[c]` holds one condition; join conditions with `&&`");
  EXPECT_EQ(help_of("def f() -> f64 { g(a b) }"), "separate the arguments with ','");
  EXPECT_EQ(help_of("def f() -> f64 { let for = 1\n 2 }"),
            "'for' is a keyword and cannot be used as a name");
  EXPECT_EQ(help_of("def f() -> f64 {\n  1\ndef g() -> f64 { 2 }"),
            "is a '}' missing before this definition?");
  // The 'if' that lacks an 'else' is shown as a note.
  auto p = parse("def f() -> f64 { if c then a }");
  ASSERT_EQ(p->diags.count(), 1u);
  ASSERT_EQ(p->diags.diagnostics()[0].notes.size(), 1u);
  EXPECT_EQ(p->diags.diagnostics()[0].notes[0].first.begin, 17u);
}

TEST(Parser, RenderedDiagnostic) {
  auto p = parse("def f(x: f64) -> f64 {\n  x +* 2\n}\n");
  EXPECT_EQ(render(p->sm, p->diags.diagnostics()),
            "t.cot:2:6: error: expected an expression, found '*'\n"
            "    x +* 2\n"
            "       ^\n");
}

TEST(Parser, RecoversAtNextDefinition) {
  auto p = parse(
      "def a() -> f64 { 1 + }\n"
      "def b() -> f64 { 2.0 }\n"
      "def c() -> f64 { (1 }  def d() -> f64 { ) }\n"
      "def e() -> f64 {\n"
      "  let x = $ $\n"
      "  x ) )\n"
      "}\n"
      "def g() -> f64 { 3.0 }\n"
      "oops\n"
      "more oops\n"
      "  def h() -> f64 { 4.0 }\n");
  EXPECT_EQ(p->errors(), (std::vector<std::string>{
                             "1:22: expected an expression, found '}'",
                             "3:21: expected ')' to close the '(' opened at 3:18, found '}'",
                             "5:11: unexpected character '$'",
                             "9:1: expected 'def' to start a definition, found 'oops'",
                         }));
  // Garbage after a broken definition is skipped with it; `def d` does not start a line.
  ASSERT_EQ(p->module.defs.size(), 3u);
  EXPECT_EQ(p->module.defs[0].name, "b");
  EXPECT_EQ(p->module.defs[1].name, "g");
  EXPECT_EQ(p->module.defs[2].name, "h");
  EXPECT_EQ(p->module.file, p->file);
}

TEST(Parser, MissingBraceDoesNotHideNextDefinition) {
  auto p = parse("def f() -> f64 {\n  1\ndef g() -> f64 { 2.0 }\n");
  EXPECT_EQ(
      p->errors(),
      (std::vector<std::string>{"3:1: expected '}' to close the '{' opened at 1:16, found 'def'"}));
  ASSERT_EQ(p->module.defs.size(), 1u);
  EXPECT_EQ(p->module.defs[0].name, "g");
}

TEST(Parser, NestingLimit) {
  auto nested = [](int n, std::string_view open, std::string_view mid, std::string_view close) {
    std::string s;
    for (int i = 0; i < n; ++i) s += open;
    s += mid;
    for (int i = 0; i < n; ++i) s += close;
    return s;
  };
  EXPECT_NE(expr(nested(200, "(", "x", ")")).rfind("x", 0), std::string::npos);
  EXPECT_EQ(expr(nested(300, "(", "x", ")")), "ERROR 1:257: expression nests too deeply");
  EXPECT_EQ(expr(nested(20000, "(", "x", ")")), "ERROR 1:257: expression nests too deeply");
  EXPECT_EQ(expr(nested(20000, "-", "x", "")), "ERROR 1:257: expression nests too deeply");
  EXPECT_EQ(expr(nested(20000, "[", "x", "]")), "ERROR 1:257: expression nests too deeply");
  EXPECT_EQ(expr(nested(20000, "{", "x", "}")), "ERROR 1:257: expression nests too deeply");
  EXPECT_EQ(expr(nested(20000, "sum i. ", "x", "")), "ERROR 1:1793: expression nests too deeply");
  EXPECT_EQ(expr(nested(20000, "f(", "x", ")")), "ERROR 1:513: expression nests too deeply");
  EXPECT_EQ(expr(nested(20000, "grad(", "f", ", x)")), "ERROR 1:1281: expression nests too deeply");
  // Long operator chains build deep trees too, so they count.
  std::string chain = "x";
  for (int i = 0; i < 20000; ++i) chain += "+x";
  EXPECT_EQ(expr(chain), "ERROR 1:513: expression nests too deeply");
  std::string index = "x";
  for (int i = 0; i < 20000; ++i) index += "[0]";
  EXPECT_EQ(expr(index), "ERROR 1:765: expression nests too deeply");
  std::string power = "x";
  for (int i = 0; i < 20000; ++i) power += "^x";
  EXPECT_EQ(expr(power), "ERROR 1:513: expression nests too deeply");
  EXPECT_EQ(module("def f(x: " + nested(20000, "(", "f64", ")") + ") -> f64 { x }"),
            "ERROR 1:266: expression nests too deeply\n");
  EXPECT_EQ(module("def f(x: f64[" + nested(20000, "(", "n", ")") + "]) -> f64 { x }"),
            "ERROR 1:269: expression nests too deeply\n");
  EXPECT_NE(module("def f(x: f64[" + nested(20000, "-", "n", "") + "]) -> f64 { x }")
                .find("expression nests too deeply"),
            std::string::npos);
  EXPECT_EQ(module("def f() -> f64 { let " + nested(20000, "(", "a", ")") + " = 1\n 1 }"),
            "ERROR 1:278: expression nests too deeply\n");
}

// Random byte strings and random token soups must never crash, hang or trip the sanitizers.
TEST(Parser, SurvivesGarbage) {
  std::mt19937 rng(12345);
  const std::vector<std::string> words = {"def",  "f",     "(",    ")",    "[",
                                          "]",    "{",     "}",    "x",    ":",
                                          "f64",  "->",    "let",  "=",    "for",
                                          "sum",  "max",   "min",  "loop", "while",
                                          "if",   "then",  "else", "i",    ".",
                                          ",",    "1",     "2.5",  "+",    "-",
                                          "*",    "^",     "<",    "==",   "&&",
                                          "||",   "!",     "\n",   ";",    "_",
                                          "grad", "accum", "$",    "#c\n", "1e",
                                          "i64",  "bool",  "//",   "%",    "9999999999999999999999",
                                          "\0",   "λ"};
  for (int iter = 0; iter < 3000; ++iter) {
    std::string src;
    int n = static_cast<int>(rng() % 60);
    if (iter % 2 == 0) {
      for (int i = 0; i < n; ++i) {
        src += words[rng() % words.size()];
        if (rng() % 2) src += ' ';
      }
    } else {
      for (int i = 0; i < n; ++i) src += static_cast<char>(rng() % 256);
    }
    auto p = parse(src);
    for (const Diagnostic& d : p->diags.diagnostics()) {
      EXPECT_LE(d.span.end, src.size());
      EXPECT_FALSE(d.message.empty());
    }
    (void)render(p->sm, p->diags.diagnostics());
    (void)ast::dump(p->module);
  }
}

// ---- Whole programs ----

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(Parser, Prelude) {
  std::string text = read_file(std::string(COTANGENT_SOURCE_DIR) + "/prelude/prelude.cot");
  if (text.empty()) GTEST_SKIP() << "prelude not found";
  auto p = parse(text);
  EXPECT_EQ(p->errors(), std::vector<std::string>{});
  EXPECT_GE(p->module.defs.size(), 15u);
  for (const ast::FnDef& d : p->module.defs) {
    if (d.name == "logsumexp") {
      EXPECT_EQ(ast::dump(d),
                "(def logsumexp ((x (f64 n))) f64 (block (let top (call stop_gradient (max (i) "
                "(index x i)))) (let shift (if (|| (== top (- (/ 1.0 0.0))) (== top (/ 1.0 "
                "0.0))) 0.0 top)) (+ shift (call log (sum (i) (call exp (- (index x i) "
                "shift)))))))");
    }
  }
}

TEST(Parser, LanguageExamples) {
  // The language's first-look examples, shared with the end-to-end test that evaluates them.
  EXPECT_EQ(
      module(read_file(std::string(COTANGENT_SOURCE_DIR) + "/tests/data/language_first_look.cot")),
      "(def dot ((x (f64 n)) (y (f64 n))) f64 (block (sum (i) (* (index x i) (index y "
      "i)))))\n"
      "(def matvec ((A (f64 m n)) (x (f64 n))) (f64 m) (block (for (i) (sum (j) (* (index "
      "A i j) (index x j))))))\n"
      "(def logsumexp ((x (f64 n))) f64 (block (let mx (max (i) (index x i))) (+ mx (call "
      "log (sum (i) (call exp (- (index x i) mx)))))))\n"
      "(def trace_of_diag ((x (f64 n))) f64 (block (let A (for (i j) (* (iverson (== i j)) "
      "(index x i)))) (sum (i) (index A i i))))\n"
      "(def rnn ((h0 (f64 h)) (W (f64 h h)) (xs (f64 t h))) (f64 h) (block (loop s h0 (for "
      "step t) (block (for (i) (call tanh (sum (j) (+ (* (index W i j) (index s j)) (index "
      "xs step i)))))))))\n"
      "(def loss ((w (f64 k)) (X (f64 m k)) (y (f64 m))) f64 (block (sum (r) (^ (- (call "
      "dot (index X r) w) (index y r)) 2))))\n"
      "(def newton_direction ((w (f64 k)) (X (f64 m k)) (y (f64 m)) (v (f64 k))) (tuple "
      "(f64 k) (f64 k)) (block (let g (call (grad loss w) w X y)) (let (tuple _ hv) (call "
      "(jvp (grad loss w) w) w X y v)) (tuple g hv)))\n");
}

TEST(AstNames, DerivKinds) {
  EXPECT_EQ(ast::deriv_kind_from_name("grad"), ast::DerivKind::Grad);
  EXPECT_EQ(ast::deriv_kind_from_name("value_and_grad"), ast::DerivKind::ValueAndGrad);
  EXPECT_EQ(ast::deriv_kind_from_name("jvp"), ast::DerivKind::Jvp);
  EXPECT_EQ(ast::deriv_kind_from_name("vjp"), ast::DerivKind::Vjp);
  EXPECT_EQ(ast::deriv_kind_from_name("jacobian"), ast::DerivKind::Jacobian);
  EXPECT_EQ(ast::deriv_kind_from_name("hessian"), ast::DerivKind::Hessian);
  EXPECT_EQ(ast::deriv_kind_from_name("gradient"), std::nullopt);
  EXPECT_STREQ(ast::to_string(ast::DerivKind::ValueAndGrad), "value_and_grad");
  EXPECT_STREQ(ast::to_string(ast::BinOp::FloorDiv), "//");
  EXPECT_STREQ(ast::to_string(ast::UnOp::Not), "!");
  EXPECT_STREQ(ast::to_string(ast::ReduceKind::Min), "min");
}

// A file of broken definitions gave one message each: 4 million of them took 18 s and 600 MB.
// After 1000 the parser stops, and says so where it stopped.
TEST(Parser, ManySyntaxErrorsStop) {
  std::string src;
  for (int i = 0; i < 5000; ++i) src += "def\n";
  auto p = parse(src);
  const std::vector<std::string> errors = p->errors();
  ASSERT_EQ(errors.size(), 1001u);
  // Each `def` fails at the next line's `def`, where the parser resumes.
  EXPECT_EQ(errors[999], "1001:1: expected the function name after 'def', found 'def'");
  EXPECT_EQ(errors[1000], "1001:1: too many syntax errors; the rest of the file is not parsed");
  // Exactly the limit: no extra message.
  std::string exact;
  for (int i = 0; i < 1000; ++i) exact += "def\n";
  EXPECT_EQ(parse(exact)->errors().size(), 1000u);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
