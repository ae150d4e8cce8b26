// GradBench's ht through the tool, on small hand models built here (ADBench's skeleton of 22
// bones with random rigid transforms, a few vertices skinned to every bone, a few triangles):
// the objective against a direct C++ implementation of ADBench's hand model (ρ ≤ 1e-12), the
// Jacobian against central differences of that reference (ρ ≤ 1e-10, see below) and against
// reverse mode (a vjp of the objective in the reference interpreter, contracted with a random
// cotangent, ρ ≤ 1e-10); the simple and complicated variants, a mirrored hand, the identity
// branch of the global rotation, and (when the data files are present) ADBench's own model.
//
// The differences run in long double with the step h = 1e-6: the residuals are of order 1,
// so rounding leaves about 1e-19 / h ≈ 1e-13 in each quotient and truncation h² f''' / 6 about
// 1e-13 f'''; the bound ρ ≤ 1e-10 leaves a wide margin (measured: at most 2e-13).
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"
#include "eval_harness.h"
#include "gradbench/eval.h"

namespace cot::gradbench::testing {
namespace COTANGENT_TEST_UNIT {

using nlohmann::json;
using Mat4 = std::array<std::array<double, 4>, 4>;

// ADBench's hand model and one workload of it. Matrices are row-major.
struct Hand {
  std::vector<int> parents;
  std::vector<Mat4> base_relatives, inverse_base_absolutes;
  std::vector<std::array<double, 4>> base_positions;  // homogeneous
  std::vector<std::vector<double>> weights;           // [vertex][bone]
  std::vector<std::array<int, 3>> triangles;
  bool is_mirrored = false;
  std::vector<int> correspondences;
  std::vector<std::array<double, 3>> points;
  std::vector<double> theta;              // 26
  std::vector<std::array<double, 2>> us;  // empty: the simple variant

  json input() const {
    json jus = json::array();
    for (const auto& u : us) jus.push_back(u);
    return {{"theta", theta},
            {"us", jus},
            {"data",
             {{"correspondences", correspondences},
              {"points", points},
              {"model",
               {{"bone_count", parents.size()},
                {"bone_names", std::vector<std::string>(parents.size(), "bone")},
                {"parents", parents},
                {"base_relatives", base_relatives},
                {"inverse_base_absolutes", inverse_base_absolutes},
                {"base_positions", base_positions},
                {"weights", weights},
                {"triangles", triangles},
                {"is_mirrored", is_mirrored}}}}},
            {"min_runs", 1},
            {"min_seconds", 0}};
  }
};

template <class T>
using Mat = std::array<std::array<T, 4>, 4>;  // 3 x 3 rotations use the top left block

template <class T>
Mat<T> product(const Mat<T>& a, const Mat<T>& b) {
  Mat<T> c{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j)
      for (int k = 0; k < 4; ++k) c[i][j] += a[i][k] * b[k][j];
  return c;
}

template <class T>
Mat<T> identity() {
  Mat<T> m{};
  for (int i = 0; i < 4; ++i) m[i][i] = 1;
  return m;
}

template <class T>
Mat<T> widen(const Mat4& m) {
  Mat<T> w{};
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) w[i][j] = m[i][j];
  return w;
}

// Rotation about coordinate axis `axis` by `angle`.
template <class T>
Mat<T> axis_rotation(int axis, T angle) {
  Mat<T> r = identity<T>();
  const int i = (axis + 1) % 3, j = (axis + 2) % 3;
  r[i][i] = r[j][j] = std::cos(angle);
  r[j][i] = std::sin(angle);
  r[i][j] = -std::sin(angle);
  return r;
}

// ADBench's angle-axis rotation: the identity below an angle of 1e-4.
template <class T>
Mat<T> angle_axis(T x, T y, T z) {
  const T n = std::sqrt(x * x + y * y + z * z);
  if (n < 1e-4) return identity<T>();
  x /= n, y /= n, z /= n;
  const T c = std::cos(n), s = std::sin(n);
  Mat<T> r = identity<T>();
  r[0] = {x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s, 0};
  r[1] = {x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s, 0};
  r[2] = {x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c, 0};
  return r;
}

// The residuals (3 per point), straight from ADBench's definition: theta's finger angles go to
// the pose of bones 2 + 4f (x, z), 3 + 4f and 4 + 4f (x); each bone's relative transform is its
// base relative times Rz Ry Rx; absolutes follow the parents; vertices are skinned with the
// weights, mirrored, rotated and translated; a point is its vertex or its triangle's point.
template <class T>
std::vector<T> residuals(const Hand& h, const std::vector<T>& theta,
                         const std::vector<std::array<T, 2>>& us) {
  const size_t nb = h.parents.size();
  std::vector<std::array<T, 2>> angles(nb, {T(0), T(0)});  // (x, z) per bone
  for (int f = 0, t = 6; f < 5; ++f) {
    angles[2 + 4 * f] = {theta[t], theta[t + 1]};
    angles[3 + 4 * f][0] = theta[t + 2];
    angles[4 + 4 * f][0] = theta[t + 3];
    t += 4;
  }
  std::vector<Mat<T>> absolutes(nb);
  for (size_t b = 0; b < nb; ++b) {
    const Mat<T> R = product(axis_rotation<T>(2, angles[b][1]), axis_rotation<T>(0, angles[b][0]));
    const Mat<T> relative = product(widen<T>(h.base_relatives[b]), R);
    absolutes[b] = h.parents[b] < 0 ? relative : product(absolutes[h.parents[b]], relative);
  }
  std::vector<Mat<T>> transforms(nb);
  for (size_t b = 0; b < nb; ++b) {
    transforms[b] = product(absolutes[b], widen<T>(h.inverse_base_absolutes[b]));
  }
  const Mat<T> G = angle_axis(theta[0], theta[1], theta[2]);
  std::vector<std::array<T, 3>> posed(h.base_positions.size());
  for (size_t v = 0; v < posed.size(); ++v) {
    std::array<T, 3> p{};
    for (size_t b = 0; b < nb; ++b) {
      for (int r = 0; r < 3; ++r)
        for (int k = 0; k < 4; ++k) {
          p[r] += h.weights[v][b] * transforms[b][r][k] * h.base_positions[v][k];
        }
    }
    if (h.is_mirrored) p[0] = -p[0];
    for (int r = 0; r < 3; ++r) {
      posed[v][r] = theta[3 + r];
      for (int k = 0; k < 3; ++k) posed[v][r] += G[r][k] * p[k];
    }
  }
  std::vector<T> out;
  for (size_t i = 0; i < h.correspondences.size(); ++i) {
    for (int r = 0; r < 3; ++r) {
      T model;
      if (us.empty()) {
        model = posed[h.correspondences[i]][r];
      } else {
        const auto& t = h.triangles[h.correspondences[i]];
        const T u0 = us[i][0], u1 = us[i][1];
        model = u0 * posed[t[0]][r] + u1 * posed[t[1]][r] + (1 - u0 - u1) * posed[t[2]][r];
      }
      out.push_back(h.points[i][r] - model);
    }
  }
  return out;
}

template <class T>
std::vector<T> widen(const std::vector<double>& v) {
  return {v.begin(), v.end()};
}

template <class T>
std::vector<std::array<T, 2>> widen(const std::vector<std::array<double, 2>>& us) {
  std::vector<std::array<T, 2>> w;
  for (const auto& u : us) w.push_back({u[0], u[1]});
  return w;
}

// GradBench's Jacobian by central differences: rows are residuals; columns are the point's own
// us (complicated only: each residual depends on its point's coordinates alone), then theta.
std::vector<std::vector<double>> central_jacobian(const Hand& h) {
  using L = long double;
  const L step = 1e-6L;
  const size_t rows = 3 * h.correspondences.size();
  const size_t ucols = h.us.empty() ? 0 : 2;
  std::vector<std::vector<double>> J(rows, std::vector<double>(ucols + h.theta.size()));
  const std::vector<L> theta = widen<L>(h.theta);
  const std::vector<std::array<L, 2>> us = widen<L>(h.us);
  for (size_t i = 0; i < h.us.size(); ++i) {
    for (size_t c = 0; c < 2; ++c) {
      auto up = us, down = us;
      up[i][c] += step;
      down[i][c] -= step;
      const auto a = residuals(h, theta, up), b = residuals(h, theta, down);
      for (size_t r = 3 * i; r < 3 * i + 3; ++r) J[r][c] = double((a[r] - b[r]) / (2 * step));
    }
  }
  for (size_t k = 0; k < theta.size(); ++k) {
    auto up = theta, down = theta;
    up[k] += step;
    down[k] -= step;
    const auto a = residuals(h, up, us), b = residuals(h, down, us);
    for (size_t r = 0; r < rows; ++r) J[r][ucols + k] = double((a[r] - b[r]) / (2 * step));
  }
  return J;
}

Mat4 rigid(Uniform& u) {
  std::vector<double> w = u.vector(3);
  for (double& x : w) x = 2 * x - 1;
  Mat4 m = angle_axis<double>(w[0], w[1], w[2]);
  for (int r = 0; r < 3; ++r) m[r][3] = u() - 0.5;
  return m;
}

// ADBench's skeleton (wrist; thumb, index, middle, ring and pinky of four bones each; forearm)
// with random transforms, `nv` vertices skinned to every bone and `nt` triangles; `npts`
// points, on triangles (complicated) or at vertices (simple).
Hand make_hand(int nv, int nt, int npts, bool complicated, uint64_t seed) {
  Uniform u(seed);
  Hand h;
  h.parents = {-1, 0, 1, 2, 3, 0, 5, 6, 7, 0, 9, 10, 11, 0, 13, 14, 15, 0, 17, 18, 19, 0};
  for (size_t b = 0; b < h.parents.size(); ++b) {
    h.base_relatives.push_back(rigid(u));
    h.inverse_base_absolutes.push_back(rigid(u));
  }
  for (int v = 0; v < nv; ++v) {
    h.base_positions.push_back({2 * u() - 1, 2 * u() - 1, 2 * u() - 1, 1.0});
    std::vector<double> w = u.vector(h.parents.size());
    double total = 0;
    for (double x : w) total += x;
    for (double& x : w) x /= total;
    h.weights.push_back(w);
  }
  for (int t = 0; t < nt; ++t) {
    h.triangles.push_back({int(u() * nv), int(u() * nv), int(u() * nv)});
  }
  for (int i = 0; i < npts; ++i) {
    h.correspondences.push_back(int(u() * (complicated ? nt : nv)));
    h.points.push_back({2 * u() - 1, 2 * u() - 1, 2 * u() - 1});
    if (complicated) h.us.push_back({0.5 * u(), 0.5 * u()});
  }
  h.theta = u.vector(26);
  for (double& x : h.theta) x -= 0.5;
  return h;
}

inline constexpr char kHtModule[] = "ht";  // inline: a template argument needs linkage

class GradbenchHt : public DefinedEval<kHtModule> {
 protected:
  // The tool's objective and jacobian of `h` against the reference and central differences.
  static void expect_matches_reference(const Hand& h) {
    const json input = h.input();
    expect_json_near(json(residuals(h, h.theta, h.us)), evaluate("objective", input), 1e-12);
    const json jacobian = evaluate("jacobian", input);
    ASSERT_EQ(jacobian.size(), 3 * h.correspondences.size());
    ASSERT_EQ(jacobian[0].size(), (h.us.empty() ? 0 : 2) + 26u);
    expect_json_near(json(central_jacobian(h)), jacobian, 1e-10);
  }
};

TEST_F(GradbenchHt, ComplicatedVariantMatchesReference) {
  Hand h = make_hand(12, 9, 7, true, 3);
  expect_matches_reference(h);
  SCOPED_TRACE("a mirrored hand, with no global rotation (the identity branch)");
  h.is_mirrored = true;
  h.theta[0] = h.theta[1] = h.theta[2] = 0.0;
  expect_matches_reference(h);
}

TEST_F(GradbenchHt, SimpleVariantMatchesReference) {
  expect_matches_reference(make_hand(12, 9, 7, false, 4));
}

// The second route: reverse mode in the reference interpreter. vjp(objective, theta, us) with a
// cotangent c gives Jᵀc, which the tool's (forward-mode) Jacobian must reproduce.
TEST_F(GradbenchHt, JacobianMatchesReverseMode) {
  std::ifstream file(std::string(COTANGENT_SOURCE_DIR) + "/examples/gradbench/ht.cot");
  std::stringstream text;
  text << file.rdbuf();
  // The program up to objective_jacobian (what the objective needs: quicker to load).
  std::stringstream source;
  source << text.str().substr(0, text.str().find("def objective_jacobian"));
  source << R"(
def pullback(theta: f64[26], us: f64[nu, 2], correspondences: i64[npts], points: f64[npts, 3],
             parents: i64[nb], base_relatives: f64[nb, 4, 4], inverse_base_absolutes: f64[nb, 4, 4],
             base_positions: f64[nv, 4], weights: f64[nv, nb], triangles: i64[nt, 3],
             is_mirrored: bool, c: f64[npts, 3]) -> (f64[26], f64[nu, 2]) {
  vjp(objective, theta, us)(theta, us, correspondences, points, parents, base_relatives,
                            inverse_base_absolutes, base_positions, weights, triangles,
                            is_mirrored, c)
}
)";
  auto module = cotangent::Module::from_string(source.str(), "ht_vjp.cot");
  ASSERT_TRUE(module.ok()) << module.message();
  const Hand h = make_hand(12, 9, 7, true, 5);
  const json input = h.input();
  const json jacobian = evaluate("jacobian", input);
  ASSERT_EQ(jacobian.size(), 21u);

  auto args = evals().at("ht").arguments("jacobian", input);
  ASSERT_TRUE(args.ok()) << args.message();
  Uniform u(6);
  const std::vector<double> c = u.vector(jacobian.size());
  cotangent::Value ct = cotangent::Value::zeros(cotangent::DType::F64, {7, 3});
  std::copy(c.begin(), c.end(), ct.f64_mut().begin());
  args.value().push_back(ct);
  auto pulled = module.value().evaluate("pullback", args.value());
  ASSERT_TRUE(pulled.ok()) << pulled.message();
  const auto theta_bar = pulled.value().elems()[0].f64_data();
  const auto us_bar = pulled.value().elems()[1].f64_data();
  for (size_t k = 0; k < 26; ++k) {
    double jtc = 0;
    for (size_t r = 0; r < jacobian.size(); ++r) jtc += jacobian[r][2 + k].get<double>() * c[r];
    EXPECT_LE(rho(jtc, theta_bar[k]), 1e-10) << "theta[" << k << "]";
  }
  for (size_t i = 0; i < 7; ++i) {
    for (size_t j = 0; j < 2; ++j) {
      double jtc = 0;
      for (size_t r = 3 * i; r < 3 * i + 3; ++r) jtc += jacobian[r][j].get<double>() * c[r];
      EXPECT_LE(rho(jtc, us_bar[2 * i + j]), 1e-10) << "us[" << i << "][" << j << "]";
    }
  }
}

// ADBench's hand model and its first complicated workload, read from the data files as
// GradBench's evals/ht/io.py reads them (only when they are present).
TEST_F(GradbenchHt, AdbenchHandMatchesReference) {
  const std::filesystem::path dir = "/work/shared/data/gradbench/ht/complicated_small";
  if (!std::filesystem::exists(dir / "hand1_t26_c100.txt")) {
    GTEST_SKIP() << "no ADBench hand data at " << dir;
  }
  auto fields = [](const std::string& line) {
    std::vector<std::string> out;
    std::stringstream s(line);
    for (std::string f; std::getline(s, f, ':');) out.push_back(f);
    return out;
  };
  Hand h;
  std::ifstream bones(dir / "model/bones.txt");
  for (std::string line; std::getline(bones, line);) {
    const auto f = fields(line);
    h.parents.push_back(std::stoi(f[1]));
    Mat4 rel, inv;
    for (int k = 0; k < 16; ++k) {
      rel[k / 4][k % 4] = std::stod(f[2 + k]);
      inv[k / 4][k % 4] = std::stod(f[18 + k]);
    }
    h.base_relatives.push_back(rel);
    h.inverse_base_absolutes.push_back(inv);
  }
  std::ifstream vertices(dir / "model/vertices.txt");
  for (std::string line; std::getline(vertices, line);) {
    const auto f = fields(line);
    h.base_positions.push_back({std::stod(f[0]), std::stod(f[1]), std::stod(f[2]), 1.0});
    std::vector<double> w(h.parents.size(), 0.0);
    for (int k = 0; k < std::stoi(f[8]); ++k) w[std::stoi(f[9 + 2 * k])] = std::stod(f[10 + 2 * k]);
    h.weights.push_back(w);
  }
  std::ifstream triangles(dir / "model/triangles.txt");
  for (std::string line; std::getline(triangles, line);) {
    const auto f = fields(line);
    h.triangles.push_back({std::stoi(f[0]), std::stoi(f[1]), std::stoi(f[2])});
  }
  std::ifstream workload(dir / "hand1_t26_c100.txt");
  int npts = 0, ntheta = 0;
  workload >> npts >> ntheta;
  for (int i = 0; i < npts; ++i) {
    int c = 0;
    std::array<double, 3> p{};
    workload >> c >> p[0] >> p[1] >> p[2];
    h.correspondences.push_back(c);
    h.points.push_back(p);
  }
  for (int i = 0; i < npts; ++i) {
    std::array<double, 2> u{};
    workload >> u[0] >> u[1];
    h.us.push_back(u);
  }
  h.theta.resize(ntheta);
  for (double& t : h.theta) workload >> t;
  ASSERT_TRUE(workload) << "could not read " << dir / "hand1_t26_c100.txt";
  expect_matches_reference(h);
}

TEST_F(GradbenchHt, MalformedInputIsAFailureThatSaysWhere) {
  json input = make_hand(4, 3, 2, true, 7).input();
  input["data"]["model"]["weights"][1][3] = "heavy";
  const json r = respond("jacobian", input);
  EXPECT_FALSE(r.at("success").get<bool>());
  EXPECT_NE(r.at("error").get<std::string>().find(
                "input.data.model.weights[1][3]: expected a number, found a string"),
            std::string::npos)
      << r.dump();
  input = make_hand(4, 3, 2, true, 7).input();
  input["us"].erase(1);
  const json s = respond("objective", input);
  EXPECT_FALSE(s.at("success").get<bool>());
  EXPECT_NE(s.at("error").get<std::string>().find("input.us: expected 2 rows of 2 numbers"),
            std::string::npos)
      << s.dump();
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench::testing
