// GradBench's gmm through the tool: the objective against a direct C++ log-posterior (the
// mixture's densities with Q (x − μ) per point, log-sum-exp, the Wishart log-density with its
// lgamma constants; ρ ≤ 1e-12), the gradient against central differences of that reference and
// against forward mode (a jvp of the objective along a random direction, ρ ≤ 1e-12).
//
// The differences run in long double (64-bit significand) with the step h = 1e-5: rounding
// leaves about 1e-19 |f| / h = 1e-14 |f| in each quotient (|f| reaches a few thousand here) and
// truncation h² f''' / 6 about 2e-11 f''', so ρ ≤ 1e-8 holds with a wide margin (measured: at
// most 3.5e-10; 1.1e-9 at h = 1e-6, where rounding dominates). In double the rounding alone
// would be 1e-16 |f| / h ≈ 4e-8 at this step: a double reference could only assert ρ ≤ 1e-6.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "eval_harness.h"

namespace cot::gradbench::testing {
namespace COTANGENT_TEST_UNIT {

using cotangent::DType;
using cotangent::Value;
using nlohmann::json;

static_assert(std::numeric_limits<long double>::digits >= 64, "the differences need long double");

// A workload: the sizes, the prior and the points; the parameters are one flat vector
// theta = [alpha (k), mu (k x d), q (k x d), l (k x d(d-1)/2)], row-major.
struct Workload {
  int d = 0, k = 0, n = 0, m = 0;
  double gamma = 1;
  std::vector<double> x;  // n x d
  std::vector<double> theta;

  int l_size() const { return d * (d - 1) / 2; }
  int alpha_at() const { return 0; }
  int mu_at() const { return k; }
  int q_at() const { return k + k * d; }
  int l_at() const { return k + 2 * k * d; }

  json rows(const std::vector<double>& v, int count, int width) const {
    json out = json::array();
    for (int r = 0; r < count; ++r) {
      out.push_back(std::vector<double>(v.begin() + r * width, v.begin() + (r + 1) * width));
    }
    return out;
  }
  // GradBench's layout of the parameters (the input's fields and the jacobian's output).
  json parameters_json(const std::vector<double>& t) const {
    return {{"alpha", std::vector<double>(t.begin(), t.begin() + k)},
            {"mu", rows({t.begin() + mu_at(), t.end()}, k, d)},
            {"q", rows({t.begin() + q_at(), t.end()}, k, d)},
            {"l", rows({t.begin() + l_at(), t.end()}, k, l_size())}};
  }
  json input() const {
    json in = parameters_json(theta);
    in["d"] = d;
    in["k"] = k;
    in["n"] = n;
    in["m"] = m;
    in["gamma"] = gamma;
    in["x"] = rows(x, n, d);
    in["min_runs"] = 1;
    in["min_seconds"] = 0;
    return in;
  }
};

Workload make_workload(int d, int k, int n, int m, double gamma, uint64_t seed) {
  Workload w;
  w.d = d, w.k = k, w.n = n, w.m = m, w.gamma = gamma;
  Uniform u(seed);
  auto centred = [&](double scale) { return scale * (2 * u() - 1); };
  for (int i = 0; i < n * d; ++i) w.x.push_back(centred(2.0));
  for (int j = 0; j < k; ++j) w.theta.push_back(centred(1.0));               // alpha
  for (int j = 0; j < k * d; ++j) w.theta.push_back(u());                    // mu
  for (int j = 0; j < k * d; ++j) w.theta.push_back(centred(0.5));           // q
  for (int j = 0; j < k * w.l_size(); ++j) w.theta.push_back(centred(1.0));  // l
  return w;
}

template <class T>
T log_sum_exp(const std::vector<T>& v) {
  T mx = v[0];
  for (const T& e : v) mx = std::max(mx, e);
  T s = 0;
  for (const T& e : v) s += std::exp(e - mx);
  return mx + std::log(s);
}

// log p(x | alpha, mu, Q) + log p(Q): the mixture of Gaussians N(mu_j, (Q_j^T Q_j)^-1) with
// weights softmax(alpha), and a Wishart(I / gamma^2, d + m + 1) prior on each Q_j^T Q_j.
template <class T>
T log_posterior(const Workload& w, const std::vector<T>& theta) {
  const int d = w.d, k = w.k, n = w.n;
  const T pi = std::numbers::pi_v<T>;
  // Q_j: exp(q) on the diagonal, l below it, column by column.
  std::vector<T> Q(static_cast<size_t>(k * d * d), T(0));
  for (int j = 0; j < k; ++j) {
    int p = 0;
    for (int c = 0; c < d; ++c) {
      Q[(j * d + c) * d + c] = std::exp(theta[w.q_at() + j * d + c]);
      for (int r = c + 1; r < d; ++r)
        Q[(j * d + r) * d + c] = theta[w.l_at() + j * w.l_size() + p++];
    }
  }
  std::vector<T> log_det(k, T(0));  // log det Q_j = sum of q_j
  for (int j = 0; j < k; ++j) {
    for (int r = 0; r < d; ++r) log_det[j] += theta[w.q_at() + j * d + r];
  }
  T total = -T(n * d) / 2 * std::log(2 * pi);
  for (int i = 0; i < n; ++i) {
    std::vector<T> terms(k);
    for (int j = 0; j < k; ++j) {
      T mahalanobis = 0;
      for (int r = 0; r < d; ++r) {
        T Qxc = 0;
        for (int c = 0; c < d; ++c) {
          Qxc += Q[(j * d + r) * d + c] * (T(w.x[i * d + c]) - theta[w.mu_at() + j * d + c]);
        }
        mahalanobis += Qxc * Qxc;
      }
      terms[j] = theta[w.alpha_at() + j] + log_det[j] - mahalanobis / 2;
    }
    total += log_sum_exp(terms);
  }
  total -= T(n) * log_sum_exp(std::vector<T>(theta.begin(), theta.begin() + k));
  // Wishart: (dof - d - 1)/2 log det(QᵀQ) - tr(gamma² QᵀQ)/2 - dof d/2 log 2
  //          + dof d log gamma - log Gamma_d(dof/2).
  const int dof = d + w.m + 1;
  T log_multigamma = T(d * (d - 1)) / 4 * std::log(pi);
  for (int r = 1; r <= d; ++r) log_multigamma += std::lgamma(T(dof) / 2 + T(1 - r) / 2);
  const T gamma = w.gamma;
  for (int j = 0; j < k; ++j) {
    T frobenius = 0;
    for (int e = 0; e < d * d; ++e) frobenius += Q[j * d * d + e] * Q[j * d * d + e];
    total += T(w.m) * log_det[j] - gamma * gamma * frobenius / 2 - T(dof * d) / 2 * std::log(T(2)) +
             T(dof * d) * std::log(gamma) - log_multigamma;
  }
  return total;
}

std::vector<double> central_differences_of_reference(const Workload& w, long double h) {
  return central_differences([&](const std::vector<long double>& p) { return log_posterior(w, p); },
                             std::vector<long double>(w.theta.begin(), w.theta.end()), h);
}

std::vector<Workload> workloads() {
  std::vector<Workload> ws;
  for (int m : {0, 2}) {
    ws.push_back(make_workload(2, 3, 5, m, 1.0, 3 + m));
    Workload b = make_workload(5, 4, 20, m, 0.7, 5 + m);
    // Far from every mean: each component's log-density there is below -1790 (exp underflows),
    // so the log-sum-exp must shift to stay finite.
    b.x[3 * 5] = 100;
    ws.push_back(b);
  }
  // d = 1: the lower triangles l are empty, so no position of their gradient is in range.
  ws.push_back(make_workload(1, 3, 6, 1, 0.8, 11));
  return ws;
}

std::string label(const Workload& w) {
  return "d=" + std::to_string(w.d) + " k=" + std::to_string(w.k) + " n=" + std::to_string(w.n) +
         " m=" + std::to_string(w.m);
}

// The eval's output for `function` on `input`, the module defined once before (loading it
// differentiates and optimizes the gradient, the slowest part of a small workload).
json evaluate(Tool& tool, const std::string& function, const json& input) {
  const json r = tool.respond({{"id", 1},
                               {"kind", "evaluate"},
                               {"module", "gmm"},
                               {"function", function},
                               {"input", input}});
  EXPECT_TRUE(r.value("success", false)) << r.dump().substr(0, 2000);
  return r.value("output", json(nullptr));
}

Tool gmm_tool() {
  Tool tool = eval_tool();
  const json defined = tool.respond({{"id", 0}, {"kind", "define"}, {"module", "gmm"}});
  EXPECT_TRUE(defined.value("success", false)) << defined.dump();
  return tool;
}

TEST(GradbenchGmm, ObjectiveMatchesTheReference) {
  Tool tool = gmm_tool();
  for (const Workload& w : workloads()) {
    SCOPED_TRACE(label(w));
    const double expected = log_posterior(w, w.theta);
    ASSERT_TRUE(std::isfinite(expected));
    expect_json_near(expected, evaluate(tool, "objective", w.input()), 1e-12);
  }
}

TEST(GradbenchGmm, JacobianMatchesCentralDifferences) {
  Tool tool = gmm_tool();
  for (const Workload& w : workloads()) {
    SCOPED_TRACE(label(w));
    const json expected = w.parameters_json(central_differences_of_reference(w, 1e-5L));
    expect_json_near(expected, evaluate(tool, "jacobian", w.input()), 1e-8);
  }
}

// The gradient (reverse mode) against forward mode: the jvp of the objective along a random
// direction of every parameter equals the gradient's inner product with that direction.
TEST(GradbenchGmm, JacobianMatchesForwardMode) {
  auto module = cotangent::Module::from_file(std::string(COTANGENT_SOURCE_DIR) +
                                             "/examples/gradbench/gmm.cot");
  ASSERT_TRUE(module.ok()) << module.message();
  Workload w = make_workload(5, 4, 20, 2, 0.7, 9);
  // The tensor of `shape` whose elements are the first ones of `v`.
  auto tensor = [](const std::vector<double>& v, std::vector<int64_t> shape) {
    Value t = Value::zeros(DType::F64, std::move(shape));
    std::copy_n(v.begin(), t.numel(), t.f64_mut().begin());
    return t;
  };
  auto parameters = [&](const std::vector<double>& t) {
    return std::vector<Value>{tensor({t.begin(), t.begin() + w.k}, {w.k}),
                              tensor({t.begin() + w.mu_at(), t.end()}, {w.k, w.d}),
                              tensor({t.begin() + w.q_at(), t.end()}, {w.k, w.d}),
                              tensor({t.begin() + w.l_at(), t.end()}, {w.k, w.l_size()})};
  };
  std::vector<Value> args = parameters(w.theta);
  args.push_back(tensor(w.x, {w.n, w.d}));
  args.push_back(Value::i64(w.m));
  args.push_back(Value::f64(w.gamma));
  Uniform u(13);
  std::vector<double> direction(w.theta.size());
  for (double& e : direction) e = 2 * u() - 1;
  std::vector<Value> jvp_args = args;
  for (const Value& t : parameters(direction)) jvp_args.push_back(t);

  cotangent::CompileOptions options;
  options.threads = 1;
  auto compiled = module.value().compile(
      {{"gradient", std::nullopt, {}, args},
       {"objective", cotangent::DerivativeKind::Jvp, {"alpha", "mu", "q", "l"}, jvp_args}},
      options);
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  auto gradient = compiled.value().at(0).call(args);
  ASSERT_TRUE(gradient.ok()) << gradient.message();
  auto jvp = compiled.value().at(1).call(jvp_args);
  ASSERT_TRUE(jvp.ok()) << jvp.message();

  double along = 0;
  size_t e = 0;
  for (const Value& part : gradient.value().elems()) {
    for (double g : part.f64_data()) along += g * direction[e++];
  }
  ASSERT_EQ(e, direction.size());
  EXPECT_LE(rho(along, jvp.value().elems().at(1).as_f64()), 1e-12);
  EXPECT_LE(rho(log_posterior(w, w.theta), jvp.value().elems().at(0).as_f64()), 1e-12);
}

TEST(GradbenchGmm, MalformedInputIsAFailureThatSaysWhere) {
  Tool tool = gmm_tool();
  auto error_for = [&](const json& input) {
    const json r = tool.respond({{"id", 1},
                                 {"kind", "evaluate"},
                                 {"module", "gmm"},
                                 {"function", "jacobian"},
                                 {"input", input}});
    EXPECT_FALSE(r.at("success").get<bool>()) << r.dump();
    return r.value("error", std::string());
  };
  const Workload w = make_workload(2, 3, 5, 0, 1.0, 3);
  json wrong_mu = w.input();
  wrong_mu["mu"][1].push_back(0.5);
  EXPECT_NE(error_for(wrong_mu).find("input.mu[1]: expected 2 elements, found 3"),
            std::string::npos);
  json wrong_l = w.input();
  wrong_l["l"] =
      json::array({json::array({1.0, 2.0}), json::array({1.0, 2.0}), json::array({1.0, 2.0})});
  EXPECT_NE(error_for(wrong_l).find("input.l: expected k x d(d-1)/2 = 3 x 1 numbers, found 3 x 2"),
            std::string::npos);
  json no_gamma = w.input();
  no_gamma.erase("gamma");
  EXPECT_NE(error_for(no_gamma).find("the field `gamma` is missing"), std::string::npos);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench::testing
