// GradBench's `ba` (ADBench's bundle adjustment): `objective` (the reprojection and weight
// errors of every observation) and `jacobian` (their sparse Jacobian). The input is one camera,
// point, weight and feature with the counts n, m, p; the tool replicates them into n cameras,
// m points, p weights and features, observation i seeing camera i mod n and point i mod m, as
// GradBench's C++ input reader does. The program computes every observation; the output is
// the compressed form GradBench's manual tool prints (the validator demands its exact keys).
#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {
namespace {

using cotangent::DType;
using cotangent::Result;
using cotangent::Value;
using nlohmann::json;

constexpr int64_t kCamParams = 11;
constexpr int64_t kBlockCols = kCamParams + 3 + 1;  // nonzeros in a reprojection row of J
constexpr int64_t kPrinted = 2 * kBlockCols;        // leading entries of the sparse J printed

// The replicated problem: the program's arguments, and the counts that place its Jacobian
// blocks in the sparse J.
struct Problem {
  int64_t n = 0, m = 0, p = 0;
  Value cams, X, w, feats, obs;
};

Result<int64_t> count(const json& input, const std::string& name) {
  auto k = integer(input, name);
  if (!k) return k.errors();
  // GradBench's C++ input reader holds the counts in an int.
  if (k.value() < 1 || k.value() > std::numeric_limits<int32_t>::max()) {
    return input_error("input." + name,
                       "expected a count from 1 to 2^31 - 1, found " + std::to_string(k.value()));
  }
  return k.value();
}

Result<Value> vector_of(const json& input, const std::string& name, int64_t length,
                        const std::string& help) {
  auto v = real_tensor(input, name, 1);
  if (!v) return v.errors();
  if (v.value().shape()[0] != length) {
    return input_error("input." + name,
                       "expected " + std::to_string(length) + " numbers, found " +
                           std::to_string(v.value().shape()[0]),
                       help);
  }
  return v.value();
}

// `rows` copies of `row`, as a [rows, row length] tensor (a vector when the row is a scalar).
Value replicated(std::span<const double> row, int64_t rows, bool scalar) {
  const int64_t len = static_cast<int64_t>(row.size());
  Value v = Value::zeros(DType::F64,
                         scalar ? std::vector<int64_t>{rows} : std::vector<int64_t>{rows, len});
  std::span<double> out = v.f64_mut();
  for (int64_t i = 0; i < rows; ++i) std::copy(row.begin(), row.end(), out.begin() + i * len);
  return v;
}

Result<Problem> read_problem(const json& input) {
  Problem pr;
  for (auto [name, out] : {std::pair{"n", &pr.n}, {"m", &pr.m}, {"p", &pr.p}}) {
    auto k = count(input, name);
    if (!k) return k.errors();
    *out = k.value();
  }
  // The replicated tensors (the largest per count; the program's results are checked by the
  // compiled code) must fit the tensor limit, checked before any is allocated: a count up to
  // 2^31 - 1 is valid GradBench input but would need tens of GB.
  for (auto [name, shape] : {std::pair{"n", std::vector<int64_t>{pr.n, kCamParams}},
                             {"m", std::vector<int64_t>{pr.m, 3}},
                             {"p", std::vector<int64_t>{pr.p, 2}}}) {
    if (auto e = check_tensor_size(std::string("input.") + name, shape)) return *e;
  }
  auto cam = vector_of(input, "cam", kCamParams,
                       "a camera is [r1 r2 r3 C1 C2 C3 f u0 v0 k1 k2]: rotation (angle-axis), "
                       "centre, focal length, principal point, radial distortion");
  if (!cam) return cam.errors();
  auto x = vector_of(input, "x", 3, "a point is its 3 coordinates");
  if (!x) return x.errors();
  auto w = real(input, "w");
  if (!w) return w.errors();
  auto feat = vector_of(input, "feat", 2, "a feature is its 2 image coordinates");
  if (!feat) return feat.errors();

  pr.cams = replicated(cam.value().f64_data(), pr.n, false);
  pr.X = replicated(x.value().f64_data(), pr.m, false);
  const double wv = w.value();
  pr.w = replicated(std::span<const double>(&wv, 1), pr.p, true);
  pr.feats = replicated(feat.value().f64_data(), pr.p, false);
  pr.obs = Value::zeros(DType::I64, {pr.p, 2});
  std::span<int64_t> obs = pr.obs.i64_mut();
  for (int64_t i = 0; i < pr.p; ++i) {
    obs[2 * i] = i % pr.n;
    obs[2 * i + 1] = i % pr.m;
  }
  return pr;
}

// GradBench's sparse J in CSR form, as the manual tool builds it: rows 2i and 2i + 1 hold
// observation i's reprojection error (15 entries each: its camera's 11 columns, its point's 3,
// its weight's), and row 2p + i the weight error of observation i (1 entry). Columns: the
// cameras' parameters, then the points' coordinates, then the weights.
class SparseJacobian {
 public:
  SparseJacobian(const Problem& pr, const Value& blocks, const Value& w_derivatives)
      : pr_(pr),
        blocks_(blocks.f64_data()),
        w_d_(w_derivatives.f64_data()),
        obs_(pr.obs.i64_data()) {}

  int64_t num_rows() const { return 3 * pr_.p; }
  int64_t num_entries() const { return (2 * kBlockCols + 1) * pr_.p; }

  // Where row r starts among the entries (r = num_rows() is the end).
  int64_t row_start(int64_t r) const {
    return r <= 2 * pr_.p ? kBlockCols * r : 2 * kBlockCols * pr_.p + (r - 2 * pr_.p);
  }

  int64_t column(int64_t k) const {
    const int64_t points = kCamParams * pr_.n;
    const int64_t weights = points + 3 * pr_.m;
    if (k >= 2 * kBlockCols * pr_.p) return weights + (k - 2 * kBlockCols * pr_.p);
    const int64_t i = k / (2 * kBlockCols);
    const int64_t j = k % kBlockCols;
    if (j < kCamParams) return kCamParams * obs_[2 * i] + j;
    if (j < kCamParams + 3) return points + 3 * obs_[2 * i + 1] + (j - kCamParams);
    return weights + i;
  }

  // The program's blocks are [p, 2, 15], row-major: entry k of the reprojection rows is
  // element k of the blocks.
  double value(int64_t k) const {
    const int64_t reprojection = 2 * kBlockCols * pr_.p;
    return k < reprojection ? blocks_[k] : w_d_[k - reprojection];
  }

 private:
  const Problem& pr_;
  std::span<const double> blocks_, w_d_;
  std::span<const int64_t> obs_;
};

// The manual tool's output: the first 30 entries of each CSR array and its last entry (the
// observations are alike, so these show every kind of entry).
json printed_jacobian(const SparseJacobian& J) {
  json rows = json::array(), cols = json::array(), vals = json::array();
  const int64_t row_starts = J.num_rows() + 1;
  for (int64_t r = 0; r < std::min(kPrinted, row_starts); ++r) rows.push_back(J.row_start(r));
  rows.push_back(J.row_start(row_starts - 1));
  for (int64_t k = 0; k < kPrinted; ++k) {
    cols.push_back(J.column(k));
    vals.push_back(J.value(k));
  }
  cols.push_back(J.column(J.num_entries() - 1));
  vals.push_back(J.value(J.num_entries() - 1));
  return {{"rows", rows}, {"cols", cols}, {"vals", vals}};
}

json printed_objective(const Value& reprojection, const Value& w_err, int64_t p) {
  std::span<const double> r = reprojection.f64_data();
  return {{"reproj_error", {{"elements", {r[0], r[1]}}, {"repeated", p}}},
          {"w_err", {{"element", w_err.f64_data()[0]}, {"repeated", p}}}};
}

}  // namespace

Eval ba_eval() {
  Eval e;
  e.name = "ba";
  e.functions = {{"objective", "objective"}, {"jacobian", "jacobian_blocks"}};
  e.arguments = [](const std::string&, const json& input) -> Result<std::vector<Value>> {
    auto pr = read_problem(input);
    if (!pr) return pr.errors();
    return std::vector<Value>{pr.value().cams, pr.value().X, pr.value().w, pr.value().feats,
                              pr.value().obs};
  };
  // The sparse J's columns follow the counts and the observations: the arguments'.
  e.output = [](const std::string& function, const std::vector<Value>& args,
                const Value& result) -> json {
    const Problem pr{args[0].shape()[0],
                     args[1].shape()[0],
                     args[2].shape()[0],
                     args[0],
                     args[1],
                     args[2],
                     args[3],
                     args[4]};
    const Value& errors_or_blocks = result.elems().at(0);
    const Value& weights = result.elems().at(1);
    if (function == "objective") return printed_objective(errors_or_blocks, weights, pr.p);
    return printed_jacobian(SparseJacobian(pr, errors_or_blocks, weights));
  };
  return e;
}

}  // namespace cot::gradbench
