// The AD stage (design.md §7): builds the bodies of the derived functions that the
// derivative operators of a program name (docs/language.md §8), in dependency order.
//   jvp       forward mode (jvp.h) of the base with its calls inlined;
//   vjp, grad, value_and_grad
//             jvp, then unzip into primal and linear parts (unzip.h), then transposition of the
//             linear part (transpose.h);
//   jacobian  a basis of tangents through jvp or of cotangents through vjp, whichever the sizes
//             at run time make cheaper;
//   hessian   jacobian(grad(f, a), a).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "ad/unzip.h"
#include "ir/ir.h"

namespace cot::ad {

struct DeriveOptions {
  UnzipPolicy policy;
};

// A program the AD stage cannot differentiate: a limitation (`internal` false, e.g. the
// derivative of a primitive that has none) or a compiler bug (`internal` true). Never a wrong
// number instead.
struct DeriveError {
  std::string message;
  bool internal = true;
};
// Thrown inside the AD stage for a limitation; build_derivatives turns it into a DeriveError.
struct NotDifferentiable : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Fills in every derived function with an empty body (adding helper derived functions, such
// as the vjp a jacobian uses, when the program does not have them yet).
std::optional<DeriveError> build_derivatives(ir::Program& program,
                                             const DeriveOptions& options = {});
// The same, but each derived function on its own (or those `only` names, and what they need):
// one that cannot be built is left unbuilt and its error returned under its name, and the
// others are built (a derived function that needs a failed one fails too, with its error).
std::map<std::string, DeriveError> build_each_derivative(
    ir::Program& program, const DeriveOptions& options = {},
    const std::optional<std::set<std::string>>& only = std::nullopt);

// The name a derivative operator gives its function: "grad(f, w)".
std::string derived_function_name(const ir::Program& program, ast::DerivKind kind,
                                  const std::string& base, const std::vector<int>& wrt);

}  // namespace cot::ad
