// A generator of random well-typed programs in the surface language, for the randomized
// automatic-differentiation tests (tests/ad/identity_test.cpp).
//
// Each program is source text with helper functions h0, h1, ... and two functions over one
// parameter list (a random subset of the parameters below, x always present):
//
//   s: f64, x: f64[n], A: f64[n, n], B: f64[n, m], w: f64[m], z: f64[2 * n], idx: i64[k]
//
//   def f(PARAMS) -> f64          a real scalar
//   def g(PARAMS) -> f64[L]       a real vector, L one of n, m, 2 * n, k
//
// The values of idx must lie in [0, n) (random_program_arguments draws them so); every
// computed-index read through idx reads a dimension of extent n.
//
// The bodies use, at random: scalar arithmetic and every real primitive (arguments kept in
// domain: log(1.0 + a * a), sqrt(1.0 + a * a), pow with a positive base, ...), `for`
// generators, `sum`/`max`/`min` reductions (written and inferred extents), Iverson guards with
// affine index patterns (x[i + 1], x[i - 1], x[n - 1 - i], z[2 * i], A[i, i], A[j, i], ...),
// computed indices (x[idx[o]], x[(i + 1) % n], x[i // 2]), `if` on data and on indices, `let`
// chains, tuple patterns, `loop ... for` and `loop ... while` (terminating through a counter
// in the state), `accum`, prelude calls, calls of the helpers, and calls of g from f.
//
// Generation is deterministic in the seed (std::mt19937_64).
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "cotangent/value.h"

namespace cotangent::adtest {

struct RandomProgramOptions {
  int max_depth = 4;    // nesting depth of expressions in f and g
  int max_lets = 3;     // top-level lets in f and g
  int max_helpers = 3;  // helper functions h0, h1, ...
  // stop_gradient changes derivatives but not values, so finite differences do not see it;
  // programs that use it say so in RandomProgram::uses_stop_gradient.
  bool allow_stop_gradient = true;
  // Scalar loops take another loop as their update more often than not, so that loops nest two
  // and three deep (counted in while, while in counted), as second derivatives must handle.
  bool loop_nests = false;
};

struct GenParam {
  std::string name;
  std::string type;               // as written: "f64[n, m]"
  std::vector<std::string> dims;  // size expressions; empty for a scalar
  bool index = false;             // the i64 index parameter
};

struct RandomProgram {
  uint64_t seed = 0;
  std::string source;            // helpers, f and g
  std::vector<GenParam> params;  // of f and of g, in order
  std::string g_len;             // g returns f64[g_len]
  bool uses_stop_gradient = false;

  std::string decl() const;  // "s: f64, x: f64[n], ..."
  std::string call() const;  // "s, x, ..."
  // Indices into params of the real parameters, and of the real tensor parameters.
  std::vector<int> real_params() const;
  std::vector<int> tensor_params() const;
};

RandomProgram random_program(uint64_t seed, const RandomProgramOptions& opt = {});

// Arguments for f and g: the sizes n, m and k uniform in [1, 4], reals uniform in [-1, 1),
// idx values uniform in [0, n). `sizes` (when given) receives n, m and k.
std::vector<Value> random_program_arguments(const RandomProgram& p, std::mt19937_64& rng,
                                            std::map<std::string, int64_t>* sizes = nullptr);

}  // namespace cotangent::adtest
