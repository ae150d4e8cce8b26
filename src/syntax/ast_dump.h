// A compact, fully parenthesized S-expression form of the syntax tree, so tests can check a
// tree's shape in one string: `(+ x (* y z))`, `(for (i j:n) body)`, `(sum (i) body)`,
// `(index x i (+ j 1))`, `(call f a b)`, `(call (grad f w) a b)`.
//
// The other forms: `(- x)` and `(! x)` for unary operators, `(tuple a b)`, `(iverson c)`,
// `(block (let p e) ... result)`, `(if c a b)`, `(loop p init (for t n) body)`,
// `(loop p init (while c) body)`, `(accum (d1 d2) (i j) body)`. Reals always show a point or
// an exponent (`1.0`, `0.001`, `6.02e+23`). Types are `f64`, `(f64 n (+ m 1))` and
// `(tuple T1 T2)`; tuple patterns are `(tuple a _)`.
#pragma once

#include <string>

#include "syntax/ast.h"

namespace cot::ast {

std::string dump(const Expr& e);
std::string dump(const TypeAst& t);
std::string dump(const Pattern& p);
std::string dump(const FnRef& f);
// `(def name ((x (f64 n)) (y f64)) ret body)`
std::string dump(const FnDef& d);
// One definition per line.
std::string dump(const Module& m);

}  // namespace cot::ast
