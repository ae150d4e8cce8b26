// Function signatures: parameter and result types with symbolic shapes, where size variables
// are bound, instantiation at a call site, and the signatures of derived functions
// (docs/language.md §8).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/diagnostic.h"
#include "ir/ir.h"
#include "syntax/ast.h"

namespace cot::check {

struct Signature {
  std::string name;
  Span span;
  std::vector<std::string> param_names;
  std::vector<Type> param_types;
  std::vector<Span> param_spans;
  Type result;
  bool from_prelude = false;
  std::optional<ir::Derivation> derivation;
};

// The type written in source; dimensions become size expressions over size-variable names.
// Reports errors (and returns nullopt) for dimensions that are not size expressions.
std::optional<Type> type_from_ast(const ast::TypeAst& t, DiagnosticSink& diags);

// Where each size variable of the parameter types is bound: its first occurrence as a whole
// dimension. Reports size variables that never occur as a whole dimension.
std::optional<std::vector<ir::SizeVar>> bind_size_vars(const Signature& sig, DiagnosticSink& diags);

// Instantiates `sig` for arguments of the given types: binds the callee's size variables to the
// caller's size expressions and checks every dimension. On success returns the result type in
// the caller's sizes; on failure returns nullopt and sets `why` (per argument index in
// `bad_arg`).
std::optional<Type> instantiate(const Signature& sig, const std::vector<Type>& args,
                                std::string* why, int* bad_arg);

// The signature of `kind(base, wrt...)`, or nullopt with `why` when it does not apply
// (for example grad of a function that does not return a real scalar).
std::optional<Signature> derived_signature(ast::DerivKind kind, const Signature& base,
                                           const std::vector<int>& wrt, std::string* why);

// The canonical name of a derived function, e.g. "grad(f, w)" or "jvp(grad(f, w), w)".
std::string derived_name(ast::DerivKind kind, const Signature& base, const std::vector<int>& wrt);

}  // namespace cot::check
