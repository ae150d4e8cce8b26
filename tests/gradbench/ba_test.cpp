// GradBench's ba through the tool and through the program's functions: the reprojection errors
// against a direct C++ projection with the rotation as a matrix (ρ ≤ 1e-10: the projection,
// near 270 pixels, minus a feature near it loses digits to cancellation, and the two rotation
// formulas round differently), the Jacobian blocks against fourth-order central differences
// of it (ρ ≤ 1e-8: the relative step 1e-3 leaves truncation and rounding errors near 1e-11)
// and against forward mode (jvp of the per-observation function, ρ ≤ 1e-12), and the sparse
// layout (row starts, columns) exactly as GradBench's manual tool prints it.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <memory>
#include <optional>
#include <vector>

#include "cotangent/cotangent.h"
#include "eval_harness.h"

namespace cot::gradbench::testing {
namespace COTANGENT_TEST_UNIT {

using cotangent::DType;
using cotangent::Value;
using nlohmann::json;

// One observation's parameters: camera [r1 r2 r3 C1 C2 C3 f u0 v0 k1 k2], point, weight.
using Params = std::array<double, 15>;
using Feature = std::array<double, 2>;

// The reprojection error, with the rotation as the matrix I + sin θ K + (1 − cos θ) K² of the
// unit axis' cross-product matrix K, and I + [r]× for a zero rotation.
std::array<double, 2> reference_error(const Params& q, const Feature& feat) {
  const double r[3] = {q[0], q[1], q[2]};
  const double d[3] = {q[11] - q[3], q[12] - q[4], q[13] - q[5]};
  const double theta2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
  double R[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  auto cross_matrix = [](const double v[3], double K[3][3]) {
    K[0][0] = 0, K[0][1] = -v[2], K[0][2] = v[1];
    K[1][0] = v[2], K[1][1] = 0, K[1][2] = -v[0];
    K[2][0] = -v[1], K[2][1] = v[0], K[2][2] = 0;
  };
  double K[3][3];
  if (theta2 == 0) {
    cross_matrix(r, K);
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 3; ++b) R[a][b] += K[a][b];
  } else {
    const double theta = std::sqrt(theta2);
    const double axis[3] = {r[0] / theta, r[1] / theta, r[2] / theta};
    cross_matrix(axis, K);
    for (int a = 0; a < 3; ++a) {
      for (int b = 0; b < 3; ++b) {
        double K2 = 0;
        for (int c = 0; c < 3; ++c) K2 += K[a][c] * K[c][b];
        R[a][b] += std::sin(theta) * K[a][b] + (1 - std::cos(theta)) * K2;
      }
    }
  }
  double Xcam[3];
  for (int a = 0; a < 3; ++a) Xcam[a] = R[a][0] * d[0] + R[a][1] * d[1] + R[a][2] * d[2];
  const double u = Xcam[0] / Xcam[2], v = Xcam[1] / Xcam[2];
  const double rsq = u * u + v * v;
  const double L = 1 + q[9] * rsq + q[10] * rsq * rsq;
  return {q[14] * (q[6] * L * u + q[7] - feat[0]), q[14] * (q[6] * L * v + q[8] - feat[1])};
}

// The 2 x 15 Jacobian of reference_error by fourth-order central differences.
std::array<std::array<double, 15>, 2> reference_block(Params q, const Feature& feat) {
  std::array<std::array<double, 15>, 2> J{};
  for (int j = 0; j < 15; ++j) {
    const double x = q[j];
    const double h = 1e-3 * std::max(1.0, std::abs(x));
    auto at = [&](double s) {
      q[j] = x + s * h;
      return reference_error(q, feat);
    };
    const auto p1 = at(1), m1 = at(-1), p2 = at(2), m2 = at(-2);
    q[j] = x;
    for (int r = 0; r < 2; ++r) {
      J[r][j] = (8 * (p1[r] - m1[r]) - (p2[r] - m2[r])) / (12 * h);
    }
  }
  return J;
}

// ADBench ba1's camera, point, weight and feature (a realistic operating point).
const std::array<double, 11> kCam = {-0.758453, -1.109613, -0.845551,  34.556073,
                                     39.676747, 53.881673, 419.194514, 5.864426,
                                     -8.518870, 0.087812,  0.002739};
const std::array<double, 3> kPoint = {7.203245, 0.001144, 3.023326};
const double kWeight = 0.417022;
const Feature kFeat = {271.760969, 834.209256};

Params params_of(const std::array<double, 11>& cam, const std::array<double, 3>& X, double w) {
  Params q{};
  std::copy(cam.begin(), cam.end(), q.begin());
  std::copy(X.begin(), X.end(), q.begin() + 11);
  q[14] = w;
  return q;
}

json ba_input(int n, int m, int p, const std::array<double, 11>& cam) {
  return {{"n", n},       {"m", m},        {"p", p},        {"cam", cam},      {"x", kPoint},
          {"w", kWeight}, {"feat", kFeat}, {"min_runs", 1}, {"min_seconds", 0}};
}

// GradBench's printed output for n cameras, m points and p identical observations (p ≥ 10):
// the objective's first errors, and the sparse J's first 30 CSR entries and last one.
json expected_objective(int p, const std::array<double, 11>& cam) {
  const auto e = reference_error(params_of(cam, kPoint, kWeight), kFeat);
  return {{"reproj_error", {{"elements", {e[0], e[1]}}, {"repeated", p}}},
          {"w_err", {{"element", 1 - kWeight * kWeight}, {"repeated", p}}}};
}

json expected_jacobian(int n, int m, int p, const std::array<double, 11>& cam) {
  const auto J = reference_block(params_of(cam, kPoint, kWeight), kFeat);
  json rows = json::array(), cols = json::array(), vals = json::array();
  // Rows 0 .. 2p - 1 have 15 entries each, the p weight rows 1 each.
  for (int r = 0; r < 30; ++r) rows.push_back(r <= 2 * p ? 15 * r : 30 * p + (r - 2 * p));
  rows.push_back(31 * p);
  // Observation 0 sees camera 0 and point 0; the last entry is the last weight's.
  for (int r = 0; r < 2; ++r) {
    for (int j = 0; j < 15; ++j) {
      cols.push_back(j < 11 ? j : j < 14 ? 11 * n + (j - 11) : 11 * n + 3 * m);
      vals.push_back(J[r][j]);
    }
  }
  cols.push_back(11 * n + 3 * m + p - 1);
  vals.push_back(-2 * kWeight);
  return {{"rows", rows}, {"cols", cols}, {"vals", vals}};
}

inline constexpr char kBaModule[] = "ba";  // inline: a template argument needs linkage

class GradbenchBa : public DefinedEval<kBaModule> {
 protected:
  static std::string error(const json& input) {
    const json r = respond("jacobian", input);
    EXPECT_FALSE(r.value("success", true)) << r.dump();
    return r.value("error", std::string());
  }

  // The printed objective and Jacobian for a camera, against the reference.
  static void expect_outputs_match(const std::array<double, 11>& cam) {
    // p = 12: the first 30 row starts cover the 24 reprojection rows and the weight rows.
    const int n = 3, m = 5, p = 12;
    const json input = ba_input(n, m, p, cam);
    expect_json_near(expected_objective(p, cam), evaluate("objective", input), 1e-10);
    const json jacobian = evaluate("jacobian", input);
    const json expected = expected_jacobian(n, m, p, cam);
    ASSERT_TRUE(jacobian.is_object()) << jacobian.dump();
    ASSERT_EQ(jacobian.size(), 3u) << jacobian.dump();
    EXPECT_EQ(expected.at("rows"), jacobian.at("rows"));
    EXPECT_EQ(expected.at("cols"), jacobian.at("cols"));
    expect_json_near(expected.at("vals"), jacobian.at("vals"), 1e-8, "vals");
  }
};

TEST_F(GradbenchBa, ObjectiveAndJacobianMatchReferences) {
  expect_outputs_match(kCam);
}

TEST_F(GradbenchBa, ZeroRotationTakesTheFirstOrderForm) {
  // Central differences see the full rotation on both sides of 0: its derivative there is the
  // first-order form's, -[X - C]x with respect to the rotation.
  std::array<double, 11> cam = kCam;
  cam[0] = cam[1] = cam[2] = 0;
  expect_outputs_match(cam);
}

TEST_F(GradbenchBa, MalformedInputIsAFailureThatSaysWhere) {
  json input = ba_input(3, 5, 12, kCam);
  input["cam"] = std::vector<double>(10, 1.0);
  EXPECT_NE(error(input).find("input.cam: expected 11 numbers, found 10"), std::string::npos);
  input = ba_input(3, 5, 12, kCam);
  input["m"] = 0;
  EXPECT_NE(error(input).find("input.m: expected a count from 1"), std::string::npos);
  input = ba_input(3, 5, 12, kCam);
  input.erase("feat");
  EXPECT_NE(error(input).find("`feat` is missing"), std::string::npos);
}

// The program itself on distinct cameras, points, weights, features and observations: every
// observation's errors and Jacobian block, not only the first one the output shows.
class GradbenchBaProgram : public ::testing::Test {
 protected:
  static constexpr int kN = 3, kM = 5, kP = 12;  // the shapes of the tests above: one compile

  static void SetUpTestSuite() {
    auto m = cotangent::Module::from_file(std::string(COTANGENT_SOURCE_DIR) +
                                          "/examples/gradbench/ba.cot");
    ASSERT_TRUE(m.ok()) << m.message();
    module_ = std::make_unique<cotangent::Module>(std::move(m.value()));
  }
  static void TearDownTestSuite() { module_.reset(); }

  void SetUp() override {
    ASSERT_NE(module_, nullptr);
    Uniform u(11);
    cams_ = Value::zeros(DType::F64, {kN, 11});
    for (int c = 0; c < kN; ++c) {
      for (int k = 0; k < 11; ++k) {
        // Perturbed around ba1's camera: the points stay in front of it.
        const double scale = k < 3 ? 0.2 : k < 6 ? 1.0 : k == 6 ? 20.0 : k < 9 ? 2.0 : 0.01;
        cams_.f64_mut()[c * 11 + k] = kCam[k] + scale * (2 * u() - 1);
      }
    }
    X_ = Value::zeros(DType::F64, {kM, 3});
    for (int x = 0; x < kM; ++x) {
      for (int k = 0; k < 3; ++k) X_.f64_mut()[x * 3 + k] = kPoint[k] + (2 * u() - 1);
    }
    w_ = Value::zeros(DType::F64, {kP});
    feats_ = Value::zeros(DType::F64, {kP, 2});
    obs_ = Value::zeros(DType::I64, {kP, 2});
    for (int i = 0; i < kP; ++i) {
      w_.f64_mut()[i] = 0.2 + u();
      feats_.f64_mut()[2 * i] = kFeat[0] + 100 * (2 * u() - 1);
      feats_.f64_mut()[2 * i + 1] = kFeat[1] + 100 * (2 * u() - 1);
      obs_.i64_mut()[2 * i] = static_cast<int64_t>(u() * kN);
      obs_.i64_mut()[2 * i + 1] = static_cast<int64_t>(u() * kM);
    }
  }

  Value call(const std::string& fn) {
    const std::vector<Value> args = {cams_, X_, w_, feats_, obs_};
    cotangent::CompileOptions options;
    options.threads = 1;
    auto compiled = module_->compile({{fn, std::nullopt, {}, args}}, options);
    EXPECT_TRUE(compiled.ok()) << compiled.message();
    if (!compiled.ok()) return Value();
    auto r = compiled.value().at(0).call(args);
    EXPECT_TRUE(r.ok()) << r.message();
    return r.ok() ? r.value() : Value();
  }

  Params params(int i) const {
    std::array<double, 11> cam;
    std::array<double, 3> X;
    const int64_t c = obs_.i64_data()[2 * i], x = obs_.i64_data()[2 * i + 1];
    for (int k = 0; k < 11; ++k) cam[k] = cams_.f64_data()[c * 11 + k];
    for (int k = 0; k < 3; ++k) X[k] = X_.f64_data()[x * 3 + k];
    return params_of(cam, X, w_.f64_data()[i]);
  }
  Feature feat(int i) const { return {feats_.f64_data()[2 * i], feats_.f64_data()[2 * i + 1]}; }

  static inline std::unique_ptr<cotangent::Module> module_;
  Value cams_, X_, w_, feats_, obs_;
};

TEST_F(GradbenchBaProgram, EveryObservationMatchesTheReference) {
  const Value objective = call("objective");
  ASSERT_TRUE(objective.is_tuple());
  const Value jacobian = call("jacobian_blocks");
  ASSERT_TRUE(jacobian.is_tuple());
  const auto errors = objective.elems()[0].f64_data();
  const auto w_errors = objective.elems()[1].f64_data();
  ASSERT_EQ(jacobian.elems()[0].shape(), (std::vector<int64_t>{kP, 2, 15}));
  const auto blocks = jacobian.elems()[0].f64_data();
  const auto w_derivatives = jacobian.elems()[1].f64_data();
  for (int i = 0; i < kP; ++i) {
    const auto e = reference_error(params(i), feat(i));
    const auto J = reference_block(params(i), feat(i));
    const double w = w_.f64_data()[i];
    for (int r = 0; r < 2; ++r) {
      EXPECT_LE(rho(e[r], errors[2 * i + r]), 1e-10) << "observation " << i << " row " << r;
      for (int j = 0; j < 15; ++j) {
        EXPECT_LE(rho(J[r][j], blocks[(i * 2 + r) * 15 + j]), 1e-8)
            << "observation " << i << " row " << r << " column " << j << ": expected " << J[r][j]
            << ", got " << blocks[(i * 2 + r) * 15 + j];
      }
    }
    EXPECT_LE(rho(1 - w * w, w_errors[i]), 1e-15);
    EXPECT_LE(rho(-2 * w, w_derivatives[i]), 1e-15);
  }
}

// The blocks (whichever mode `jacobian` picks) against forward mode: one jvp of the
// per-observation function per column.
TEST_F(GradbenchBaProgram, JacobianBlocksMatchForwardMode) {
  const Value jacobian = call("jacobian_blocks");
  ASSERT_TRUE(jacobian.is_tuple());
  const auto blocks = jacobian.elems()[0].f64_data();
  Value params = Value::zeros(DType::F64, {15});
  Value feat = Value::zeros(DType::F64, {2});
  Value tangent = Value::zeros(DType::F64, {15});
  cotangent::CompileOptions options;
  options.threads = 1;
  auto jvp = module_->compile({{"reprojection_error_of",
                                cotangent::DerivativeKind::Jvp,
                                {"params"},
                                {params, feat, tangent}}},
                              options);
  ASSERT_TRUE(jvp.ok()) << jvp.message();
  for (int i = 0; i < kP; ++i) {
    const Params q = this->params(i);
    std::copy(q.begin(), q.end(), params.f64_mut().begin());
    feat.f64_mut()[0] = this->feat(i)[0];
    feat.f64_mut()[1] = this->feat(i)[1];
    for (int j = 0; j < 15; ++j) {
      tangent.f64_mut()[j] = 1;
      auto r = jvp.value().at(0).call({params, feat, tangent});
      tangent.f64_mut()[j] = 0;
      ASSERT_TRUE(r.ok()) << r.message();
      const auto column = r.value().elems().at(1).f64_data();
      for (int row = 0; row < 2; ++row) {
        EXPECT_LE(rho(column[row], blocks[(i * 2 + row) * 15 + j]), 1e-12)
            << "observation " << i << " row " << row << " column " << j;
      }
    }
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::gradbench::testing
