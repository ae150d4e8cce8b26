// GradBench's kmeans through the tool: `cost` against a direct C++ sum of nearest squared
// distances (ρ ≤ 1e-12), `dir` against the Newton step computed directly from the clusters
// (gradient 2(|S_j| C_j − Σ_{i∈S_j} P_i) over Hessian diagonal 2|S_j|; ρ ≤ 1e-12), against
// central differences of the reference cost, and against the diagonal of the full Hessian that
// the language's `hessian` operator computes (a second route to the diagonal: ρ ≤ 1e-12, and
// the Hessian's off-diagonal entries are exactly 0, which is what makes dir's tangent of ones
// exact).
//
// The differences: between ties the cost is a quadratic in each centroid coordinate, so the
// central difference (f(x+h) − f(x−h)) / 2h and the second difference
// (f(x+h) − 2f(x) + f(x−h)) / h² have no truncation error, only rounding: about ε|f|/h and
// ε|f|/h² relative to values of order 1 and 2|S_j| ≥ 2. With h = 1e-3, |f| ≈ 2 and ε ≈ 1e-16
// both are below 1e-9, and so is the error of their quotient, so ρ ≤ 1e-8 holds. The step must
// not move any point to another cluster; the workloads' nearest-distance gaps are far above
// 1e-3 (the test checks the assignment does not change).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "eval_harness.h"

namespace cot::gradbench::testing {
namespace COTANGENT_TEST_UNIT {

using cotangent::DType;
using cotangent::Value;
using nlohmann::json;

// Points n x d and centroids k x d, row-major. As GradBench's eval does, the centroids are the
// last k points, so that every cluster has a point.
struct Workload {
  int n = 0, k = 0, d = 0;
  std::vector<double> points, centroids;

  json rows(const std::vector<double>& v, int count) const {
    json out = json::array();
    for (int r = 0; r < count; ++r) {
      out.push_back(std::vector<double>(v.begin() + r * d, v.begin() + (r + 1) * d));
    }
    return out;
  }
  json input() const {
    return {{"points", rows(points, n)},
            {"centroids", rows(centroids, k)},
            {"min_runs", 1},
            {"min_seconds", 0}};
  }
};

Workload make_workload(int n, int k, int d, uint64_t seed) {
  Workload w{n, k, d, Uniform(seed).vector(n * d), {}};
  w.centroids.assign(w.points.end() - k * d, w.points.end());
  return w;
}

double squared_distance(const Workload& w, const std::vector<double>& centroids, int i, int j) {
  double s = 0;
  for (int l = 0; l < w.d; ++l) {
    const double t = centroids[j * w.d + l] - w.points[i * w.d + l];
    s += t * t;
  }
  return s;
}

// The index of point i's nearest centroid: the first one on a tie, as GradBench's manual tool.
int nearest(const Workload& w, const std::vector<double>& centroids, int i) {
  int best = 0;
  for (int j = 1; j < w.k; ++j) {
    if (squared_distance(w, centroids, i, j) < squared_distance(w, centroids, i, best)) best = j;
  }
  return best;
}

double reference_cost(const Workload& w, const std::vector<double>& centroids) {
  double cost = 0;
  for (int i = 0; i < w.n; ++i) cost += squared_distance(w, centroids, i, nearest(w, centroids, i));
  return cost;
}

// The gradient and the Hessian's diagonal of the cost, from the clusters.
struct Newton {
  std::vector<double> gradient, hessian_diagonal;
};

Newton reference_newton(const Workload& w) {
  Newton r{std::vector<double>(w.k * w.d, 0.0), std::vector<double>(w.k * w.d, 0.0)};
  for (int i = 0; i < w.n; ++i) {
    const int j = nearest(w, w.centroids, i);
    for (int l = 0; l < w.d; ++l) {
      r.gradient[j * w.d + l] += 2 * (w.centroids[j * w.d + l] - w.points[i * w.d + l]);
      r.hessian_diagonal[j * w.d + l] += 2;
    }
  }
  return r;
}

json as_rows(const Workload& w, const std::vector<double>& v) {
  return w.rows(v, w.k);
}

std::vector<double> quotient(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> q(a.size());
  for (size_t e = 0; e < a.size(); ++e) q[e] = a[e] / b[e];
  return q;
}

// dir from central and second differences of the reference cost, coordinate by coordinate.
std::vector<double> differences_dir(const Workload& w, double h) {
  std::vector<double> c = w.centroids, dir(c.size());
  const double f = reference_cost(w, c);
  std::vector<int> assignment;
  for (int i = 0; i < w.n; ++i) assignment.push_back(nearest(w, c, i));
  for (size_t e = 0; e < c.size(); ++e) {
    const double x = c[e];
    c[e] = x + h;
    const double up = reference_cost(w, c);
    for (int i = 0; i < w.n; ++i) EXPECT_EQ(nearest(w, c, i), assignment[i]) << "step " << e;
    c[e] = x - h;
    const double down = reference_cost(w, c);
    for (int i = 0; i < w.n; ++i) EXPECT_EQ(nearest(w, c, i), assignment[i]) << "step " << e;
    c[e] = x;
    dir[e] = ((up - down) / (2 * h)) / ((up - 2 * f + down) / (h * h));
  }
  return dir;
}

TEST(GradbenchKmeans, CostAndDirMatchReferences) {
  Tool tool = eval_tool();
  for (const Workload& w : {make_workload(20, 3, 2, 5), make_workload(1000, 10, 8, 6)}) {
    SCOPED_TRACE("n=" + std::to_string(w.n) + " k=" + std::to_string(w.k));
    expect_json_near(reference_cost(w, w.centroids), run_eval(tool, "kmeans", "cost", w.input()),
                     1e-12);
    const json dir = run_eval(tool, "kmeans", "dir", w.input());
    const Newton newton = reference_newton(w);
    expect_json_near(as_rows(w, quotient(newton.gradient, newton.hessian_diagonal)), dir, 1e-12);
    if (w.n <= 20) expect_json_near(as_rows(w, differences_dir(w, 1e-3)), dir, 1e-8);
  }
}

// A point exactly as far from two centroids belongs to the first (GradBench's manual tool
// compares with `<`): point 1.0 between centroids 0.0 and 2.0.
TEST(GradbenchKmeans, ATieGoesToTheFirstCentroid) {
  Tool tool = eval_tool();
  Workload w{3, 2, 1, {1.0, 0.0, 2.0}, {0.0, 2.0}};
  ASSERT_EQ(nearest(w, w.centroids, 0), 0);
  expect_json_near(reference_cost(w, w.centroids), run_eval(tool, "kmeans", "cost", w.input()),
                   1e-12);
  const Newton newton = reference_newton(w);
  expect_json_near(as_rows(w, quotient(newton.gradient, newton.hessian_diagonal)),
                   run_eval(tool, "kmeans", "dir", w.input()), 1e-12);
}

// The second route: the full Hessian from the `hessian` operator (the reference interpreter).
// Its diagonal gives the same Newton step as dir, and everything off the diagonal is 0.
TEST(GradbenchKmeans, DirMatchesTheFullHessiansDiagonal) {
  std::ifstream file(std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench/kmeans.cot");
  std::stringstream source;
  source << file.rdbuf();
  source << R"(
def full_hessian(points: f64[n, d], centroids: f64[k, d]) -> f64[k, d, k, d] {
  hessian(cost, centroids)(points, centroids)
}
)";
  auto module = cotangent::Module::from_string(source.str(), "kmeans_hessian.cot");
  ASSERT_TRUE(module.ok()) << module.message();
  const Workload w = make_workload(30, 4, 3, 11);
  auto tensor = [](const std::vector<double>& v, std::vector<int64_t> shape) {
    Value t = Value::zeros(DType::F64, std::move(shape));
    std::copy(v.begin(), v.end(), t.f64_mut().begin());
    return t;
  };
  const std::vector<Value> args{tensor(w.points, {w.n, w.d}), tensor(w.centroids, {w.k, w.d})};
  auto hessian = module.value().evaluate("full_hessian", args);
  ASSERT_TRUE(hessian.ok()) << hessian.message();
  auto gradient = module.value().value_and_grad("cost", args, {"centroids"});
  ASSERT_TRUE(gradient.ok()) << gradient.message();
  auto dir = module.value().evaluate("dir", args);
  ASSERT_TRUE(dir.ok()) << dir.message();

  const int kd = w.k * w.d;
  const auto h = hessian.value().f64_data();
  const auto g = gradient.value().grad.at(0).value.f64_data();
  const auto step = dir.value().f64_data();
  ASSERT_EQ(static_cast<int>(h.size()), kd * kd);
  for (int a = 0; a < kd; ++a) {
    for (int b = 0; b < kd; ++b) {
      if (a != b) {
        EXPECT_EQ(h[a * kd + b], 0.0) << "H[" << a << ", " << b << "]";
      }
    }
    EXPECT_LE(rho(g[a] / h[a * kd + a], step[a]), 1e-12) << "dir[" << a << "]";
  }
}

TEST(GradbenchKmeans, MalformedInputIsAFailureThatSaysWhere) {
  Tool tool = eval_tool();
  tool.respond({{"id", 0}, {"kind", "define"}, {"module", "kmeans"}});
  const json r = tool.respond(
      {{"id", 1},
       {"kind", "evaluate"},
       {"module", "kmeans"},
       {"function", "dir"},
       {"input", {{"points", {{0.5, 0.5}, {0.25, "x"}}}, {"centroids", {{0.25, 0.75}}}}}});
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find("input.points[1][1]"), std::string::npos)
      << r.dump();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench::testing
