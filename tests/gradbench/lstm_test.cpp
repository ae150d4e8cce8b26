// GradBench's lstm through the tool: the objective against a direct C++ implementation of
// ADBench's diagonal LSTM on GradBench's flat layout (ρ ≤ 1e-12), the jacobian against central
// differences of that reference, and against forward mode (a jvp of the objective along a
// random direction equals the gradient's inner product with it, ρ ≤ 1e-10).
//
// The differences run in long double (64-bit significand) with the step h = 1e-6: rounding
// leaves about 1e-19 |f| / h ≈ 1e-13 in each quotient (|f| < 1 here) and truncation
// h² f''' / 6 about 1e-13 f''', so ρ ≤ 1e-8 holds with a wide margin.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
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

// A workload in GradBench's layout: main_params 2l x 4b (row 2i: layer i's weights, row 2i+1:
// its biases, each as the gates forget, input, output, change), extra_params 3 x b (input
// weights, output weights, output biases), state 2l x b (row 2i: hidden, 2i+1: cell),
// sequence c x b (bits). The parameters are one flat vector theta = [main, extra].
struct Workload {
  int l = 0, c = 0, b = 0;
  std::vector<double> theta, state, sequence;

  int main_size() const { return 8 * l * b; }
  json rows(const std::vector<double>& v, int at, int count, int width) const {
    json out = json::array();
    for (int r = 0; r < count; ++r) {
      out.push_back(
          std::vector<double>(v.begin() + at + r * width, v.begin() + at + (r + 1) * width));
    }
    return out;
  }
  json input() const {
    return {{"main_params", rows(theta, 0, 2 * l, 4 * b)},
            {"extra_params", rows(theta, main_size(), 3, b)},
            {"state", rows(state, 0, 2 * l, b)},
            {"sequence", rows(sequence, 0, c, b)},
            {"min_runs", 1},
            {"min_seconds", 0}};
  }
};

// Parameters and state uniform in [0, 1) as GradBench's generator; the characters random
// bits.
Workload make_workload(int l, int c, int b, uint64_t seed) {
  Workload w{l, c, b, {}, {}, {}};
  Uniform u(seed);
  w.theta = u.vector(8 * l * b + 3 * b);
  w.state = u.vector(2 * l * b);
  for (int e = 0; e < c * b; ++e) w.sequence.push_back(u() < 0.5 ? 0.0 : 1.0);
  return w;
}

template <class T>
T sigmoid(T x) {
  return 1 / (1 + std::exp(-x));
}

// ADBench's objective, written out: per character, each layer's gates and new cell and hidden
// state, then the prediction's log-softmax (with ADBench's +2 in the sum) against the next
// character.
template <class T>
T reference_objective(const Workload& w, const std::vector<T>& theta) {
  const int l = w.l, b = w.b;
  auto weight = [&](int layer, int gate, int q) {
    return theta[(2 * layer) * 4 * b + gate * b + q];
  };
  auto bias = [&](int layer, int gate, int q) {
    return theta[(2 * layer + 1) * 4 * b + gate * b + q];
  };
  auto extra = [&](int row, int q) { return theta[w.main_size() + row * b + q]; };
  std::vector<T> state(w.state.begin(), w.state.end());
  T total = 0;
  for (int t = 0; t + 1 < w.c; ++t) {
    std::vector<T> input(b);
    for (int q = 0; q < b; ++q) input[q] = w.sequence[t * b + q] * extra(0, q);
    for (int i = 0; i < l; ++i) {
      T* hidden = &state[(2 * i) * b];
      T* cell = &state[(2 * i + 1) * b];
      for (int q = 0; q < b; ++q) {
        const T forget = sigmoid(input[q] * weight(i, 0, q) + bias(i, 0, q));
        const T ingate = sigmoid(hidden[q] * weight(i, 1, q) + bias(i, 1, q));
        const T outgate = sigmoid(input[q] * weight(i, 2, q) + bias(i, 2, q));
        const T change = std::tanh(hidden[q] * weight(i, 3, q) + bias(i, 3, q));
        cell[q] = cell[q] * forget + ingate * change;
        hidden[q] = outgate * std::tanh(cell[q]);
      }
      input.assign(hidden, hidden + b);
    }
    std::vector<T> ypred(b);
    T sum = 2;
    for (int q = 0; q < b; ++q) {
      ypred[q] = input[q] * extra(1, q) + extra(2, q);
      sum += std::exp(ypred[q]);
    }
    const T lse = std::log(sum);
    for (int q = 0; q < b; ++q) total += w.sequence[(t + 1) * b + q] * (ypred[q] - lse);
  }
  return -total / T((w.c - 1) * b);
}

std::vector<double> central_differences_of_reference(const Workload& w, long double h) {
  return central_differences(
      [&](const std::vector<long double>& p) { return reference_objective(w, p); },
      std::vector<long double>(w.theta.begin(), w.theta.end()), h);
}

// One tool with the module defined once for the suite (loading lstm.cot differentiates and
// optimizes the program, the slow part of these tests), and an evaluate message on it.
Tool& defined_tool() {
  static Tool tool = [] {
    Tool t = eval_tool();
    const json defined = t.respond({{"id", 0}, {"kind", "define"}, {"module", "lstm"}});
    EXPECT_TRUE(defined.value("success", false)) << defined.dump();
    return t;
  }();
  return tool;
}

json evaluate(const std::string& function, const json& input) {
  const json r = defined_tool().respond({{"id", 1},
                                         {"kind", "evaluate"},
                                         {"module", "lstm"},
                                         {"function", function},
                                         {"input", input}});
  EXPECT_TRUE(r.value("success", false)) << r.dump().substr(0, 2000);
  return r;
}

TEST(GradbenchLstm, ObjectiveAndJacobianMatchReferences) {
  // b = 14 is GradBench's character width; the second workload has more layers.
  for (const Workload& w : {make_workload(2, 12, 14, 3), make_workload(3, 6, 4, 4)}) {
    SCOPED_TRACE("l=" + std::to_string(w.l) + " c=" + std::to_string(w.c));
    expect_json_near(reference_objective(w, w.theta),
                     evaluate("objective", w.input()).value("output", json(nullptr)), 1e-12);
    const json jacobian = evaluate("jacobian", w.input()).value("output", json(nullptr));
    expect_json_near(json(central_differences_of_reference(w, 1e-6L)), jacobian, 1e-8);
  }
}

// The gradient (reverse mode through the loop) against forward mode: the jvp of the objective
// along a random direction of both parameter arrays.
TEST(GradbenchLstm, JacobianMatchesForwardMode) {
  auto module = cotangent::Module::from_file(std::string(COTANGENT_SOURCE_DIR) +
                                             "/examples/gradbench/lstm.cot");
  ASSERT_TRUE(module.ok()) << module.message();
  const Workload w = make_workload(3, 6, 4, 4);
  auto tensor = [](std::vector<double>::const_iterator from, std::vector<int64_t> shape) {
    Value t = Value::zeros(DType::F64, std::move(shape));
    std::copy(from, from + t.numel(), t.f64_mut().begin());
    return t;
  };
  // The program's layout of GradBench's arrays (lstm.cot): the same order, regrouped.
  auto parameters = [&](const std::vector<double>& theta) {
    return std::vector<Value>{tensor(theta.begin(), {w.l, 2, 4, w.b}),
                              tensor(theta.begin() + w.main_size(), {3, w.b})};
  };
  std::vector<Value> args = parameters(w.theta);
  args.push_back(tensor(w.state.begin(), {w.l, 2, w.b}));
  args.push_back(tensor(w.sequence.begin(), {w.c, w.b}));
  Uniform u(17);
  std::vector<double> direction(w.theta.size());
  for (double& e : direction) e = 2 * u() - 1;
  std::vector<Value> jvp_args = args;
  for (const Value& t : parameters(direction)) jvp_args.push_back(t);

  cotangent::CompileOptions options;
  options.threads = 1;
  auto compiled = module.value().compile(
      {{"gradient", std::nullopt, {}, args},
       {"objective", cotangent::DerivativeKind::Jvp, {"main_params", "extra_params"}, jvp_args}},
      options);
  ASSERT_TRUE(compiled.ok()) << compiled.message();
  auto gradient = compiled.value().at(0).call(args);
  ASSERT_TRUE(gradient.ok()) << gradient.message();
  auto jvp = compiled.value().at(1).call(jvp_args);
  ASSERT_TRUE(jvp.ok()) << jvp.message();

  double inner = 0;
  size_t e = 0;
  for (const Value& part : gradient.value().elems()) {
    for (double g : part.f64_data()) inner += g * direction[e++];
  }
  ASSERT_EQ(e, direction.size());
  EXPECT_LE(rho(jvp.value().elems().at(1).as_f64(), inner), 1e-10);
  EXPECT_LE(rho(jvp.value().elems().at(0).as_f64(), reference_objective(w, w.theta)), 1e-12);
}

TEST(GradbenchLstm, MalformedInputIsAFailureThatSaysWhere) {
  json input = make_workload(1, 3, 2, 5).input();
  input["state"].push_back({0.5, 0.5});  // three rows: not two per layer
  const json r = defined_tool().respond({{"id", 1},
                                         {"kind", "evaluate"},
                                         {"module", "lstm"},
                                         {"function", "jacobian"},
                                         {"input", input}});
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find("input.state"), std::string::npos) << r.dump();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench::testing
