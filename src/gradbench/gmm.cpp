// GradBench's `gmm` (ADBench's Gaussian mixture model with a Wishart prior): `objective` (the
// log-posterior) and `jacobian` (its gradient, as {alpha, mu, q, l}). The input holds the sizes
// d, k, n, the points x[n][d], the prior's m and gamma, and the parameters alpha[k], mu[k][d],
// q[k][d] and l[k][d(d-1)/2]; the arrays must have the shapes the sizes say.
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <vector>

#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {
namespace {

using cotangent::DType;
using cotangent::Result;
using cotangent::Value;
using nlohmann::json;

Result<int64_t> size_field(const json& input, const std::string& name, int64_t least) {
  auto s = integer(input, name);
  if (!s) return s.errors();
  // GradBench's C++ input reader holds the sizes in an int.
  if (s.value() < least || s.value() > std::numeric_limits<int32_t>::max()) {
    return input_error("input." + name, "expected a size from " + std::to_string(least) +
                                            " to 2^31 - 1, found " + std::to_string(s.value()));
  }
  return s.value();
}

// The field `name` as a tensor of `shape` (`dims` names it, as in "k x d").
Result<Value> shaped(const json& input, const std::string& name, std::vector<int64_t> shape,
                     const std::string& dims) {
  auto v = real_tensor(input, name, static_cast<int>(shape.size()));
  if (!v) return v.errors();
  // An empty outer array leaves the inner sizes unknown; they are the declared ones.
  if (shape[0] == 0 && v.value().shape()[0] == 0) return Value::zeros(DType::F64, shape);
  if (v.value().shape() != shape) {
    auto text = [](const std::vector<int64_t>& s) {
      std::string t;
      for (int64_t e : s) t += (t.empty() ? "" : " x ") + std::to_string(e);
      return t;
    };
    return input_error(
        "input." + name,
        "expected " + dims + " = " + text(shape) + " numbers, found " + text(v.value().shape()),
        "the sizes come from the fields d, k and n");
  }
  return v.value();
}

Result<std::vector<Value>> arguments(const json& input) {
  auto d = size_field(input, "d", 1);
  if (!d) return d.errors();
  auto k = size_field(input, "k", 1);
  if (!k) return k.errors();
  auto n = size_field(input, "n", 0);
  if (!n) return n.errors();
  const int64_t D = d.value(), K = k.value(), N = n.value();
  std::vector<Value> args;
  // The program's parameter order: alpha, mu, q, l, x, m, gamma.
  for (auto [name, shape, dims] : {std::tuple{"alpha", std::vector<int64_t>{K}, "k"},
                                   {"mu", {K, D}, "k x d"},
                                   {"q", {K, D}, "k x d"},
                                   {"l", {K, D * (D - 1) / 2}, "k x d(d-1)/2"},
                                   {"x", {N, D}, "n x d"}}) {
    auto v = shaped(input, name, shape, dims);
    if (!v) return v.errors();
    args.push_back(v.value());
  }
  auto m = integer(input, "m");
  if (!m) return m.errors();
  args.push_back(Value::i64(m.value()));
  auto gamma = real(input, "gamma");
  if (!gamma) return gamma.errors();
  args.push_back(Value::f64(gamma.value()));
  return args;
}

}  // namespace

Eval gmm_eval() {
  Eval e;
  e.name = "gmm";
  e.functions = {{"objective", "objective"}, {"jacobian", "gradient"}};
  e.arguments = [](const std::string&, const json& input) { return arguments(input); };
  e.output = [](const std::string& function, const std::vector<Value>&,
                const Value& result) -> json {
    if (function != "jacobian") return to_json(result);
    const std::vector<Value>& g = result.elems();
    return {{"alpha", to_json(g.at(0))},
            {"mu", to_json(g.at(1))},
            {"q", to_json(g.at(2))},
            {"l", to_json(g.at(3))}};
  };
  return e;
}

}  // namespace cot::gradbench
