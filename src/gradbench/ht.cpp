// GradBench's `ht` (ADBench's hand tracking): `objective` (the residuals of every point, flat:
// 3 per point) and `jacobian` (their dense Jacobian, one row per residual: the two columns of
// the point's own barycentric coordinates in the complicated variant, then the 26 of theta).
// The input is {theta[26], us[npts][2] (empty: the simple variant), data: {correspondences,
// points, model: {parents, base_relatives, inverse_base_absolutes, base_positions, weights,
// triangles, is_mirrored, ...}}}; the program takes the arrays as its parameters.
#include <algorithm>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {
namespace {

using cotangent::DType;
using cotangent::Result;
using cotangent::Value;
using nlohmann::json;

constexpr int64_t kBones = 22;  // the layout of theta assumes ADBench's hand skeleton

// The readers of json_values.h name places from the input's root ("input.x"); a field of a
// nested object is named from the root too ("input.data.points").
template <class T>
Result<T> at_path(Result<T> r, const std::string& path) {
  if (r) return r;
  std::vector<cotangent::Error> errors = r.errors();
  for (cotangent::Error& e : errors) {
    if (e.message.rfind("input", 0) == 0) e.message.replace(0, 5, path);
  }
  return errors;
}

// `us` is [npts][2], or empty in the simple variant (an empty JSON array has no column count:
// the program takes it as [0, 2]).
Result<Value> barycentric_coordinates(const json& input, int64_t npts) {
  auto j = field(input, "us");
  if (!j) return j.errors();
  if (j.value()->is_array() && j.value()->empty()) return Value::zeros(DType::F64, {0, 2});
  auto us = real_tensor(input, "us", 2);
  if (!us) return us.errors();
  const std::vector<int64_t>& shape = us.value().shape();
  if (shape[0] != npts || shape[1] != 2) {
    return input_error("input.us",
                       "expected " + std::to_string(npts) + " rows of 2 numbers, found [" +
                           std::to_string(shape[0]) + ", " + std::to_string(shape[1]) + "]",
                       "us holds each point's barycentric coordinates in its triangle, or is "
                       "empty (the simple variant)");
  }
  return us;
}

// The mesh cut down to the vertices the residuals read: the corners of the points' triangles
// (complicated) or the points' vertices (simple), each once, with the correspondences (and the
// triangles) renumbered. The other vertices (most of the 10,000-vertex mesh) do not affect the
// residuals or their derivatives, so the program need not skin them. This is preparing the
// input, as GradBench's tools do before the timed runs, and our PyTorch peer does the same.
// Indices are checked here, since they are followed here.
Result<bool> keep_used_vertices(std::vector<Value>& args) {
  Value& correspondences = args[2];
  Value& base_positions = args[7];
  Value& weights = args[8];
  Value& triangles = args[9];
  const bool simple = args[1].shape()[0] == 0;
  const int64_t nv = base_positions.shape()[0];
  const int64_t nt = triangles.shape()[0];
  if (weights.shape()[0] != nv || base_positions.shape()[1] != 4) {
    return input_error("input.data.model",
                       "base_positions must be [nverts][4] and weights [nverts][22]");
  }
  std::vector<int64_t> new_vertex(static_cast<size_t>(nv), -1);
  std::vector<int64_t> used;  // old vertex ids, in the order first used
  auto use = [&](int64_t v, const std::string& where) -> Result<int64_t> {
    if (v < 0 || v >= nv) {
      return input_error(where, "vertex " + std::to_string(v) + " is not among the model's " +
                                    std::to_string(nv) + " vertices");
    }
    auto& id = new_vertex[static_cast<size_t>(v)];
    if (id < 0) {
      id = static_cast<int64_t>(used.size());
      used.push_back(v);
    }
    return id;
  };
  std::span<int64_t> c = correspondences.i64_mut();
  if (simple) {
    for (size_t i = 0; i < c.size(); ++i) {
      auto id = use(c[i], "input.data.correspondences[" + std::to_string(i) + "]");
      if (!id) return id.errors();
      c[i] = id.value();
    }
  } else {
    if (triangles.shape()[1] != 3)
      return input_error("input.data.model.triangles", "expected [ntri][3]");
    std::vector<int64_t> new_triangle(static_cast<size_t>(nt), -1);
    std::vector<int64_t> kept;  // renumbered corners of the triangles used
    const std::span<const int64_t> t = triangles.i64_data();
    for (size_t i = 0; i < c.size(); ++i) {
      const std::string where = "input.data.correspondences[" + std::to_string(i) + "]";
      if (c[i] < 0 || c[i] >= nt) {
        return input_error(where, "triangle " + std::to_string(c[i]) +
                                      " is not among the model's " + std::to_string(nt) +
                                      " triangles");
      }
      auto& id = new_triangle[static_cast<size_t>(c[i])];
      if (id < 0) {
        id = static_cast<int64_t>(kept.size() / 3);
        for (int k = 0; k < 3; ++k) {
          auto v = use(t[static_cast<size_t>(3 * c[i] + k)], where + " (a corner of its triangle)");
          if (!v) return v.errors();
          kept.push_back(v.value());
        }
      }
      c[i] = id;
    }
    Value compact = Value::zeros(DType::I64, {static_cast<int64_t>(kept.size() / 3), 3});
    std::copy(kept.begin(), kept.end(), compact.i64_mut().begin());
    triangles = compact;
  }
  const int64_t nb = weights.shape()[1];
  Value positions = Value::zeros(DType::F64, {static_cast<int64_t>(used.size()), 4});
  Value used_weights = Value::zeros(DType::F64, {static_cast<int64_t>(used.size()), nb});
  for (size_t u = 0; u < used.size(); ++u) {
    const auto v = static_cast<size_t>(used[u]);
    std::copy_n(base_positions.f64_data().begin() + static_cast<long>(4 * v), 4,
                positions.f64_mut().begin() + static_cast<long>(4 * u));
    std::copy_n(weights.f64_data().begin() + static_cast<long>(nb * v), nb,
                used_weights.f64_mut().begin() + static_cast<long>(nb * u));
  }
  base_positions = positions;
  weights = used_weights;
  return true;
}

Result<std::vector<Value>> arguments(const json& input) {
  auto theta = real_tensor(input, "theta", 1);
  if (!theta) return theta.errors();
  auto data = field(input, "data");
  if (!data) return data.errors();
  const json& d = *data.value();
  auto correspondences = at_path(int_tensor(d, "correspondences", 1), "input.data");
  if (!correspondences) return correspondences.errors();
  auto points = at_path(real_tensor(d, "points", 2), "input.data");
  if (!points) return points.errors();
  auto us = barycentric_coordinates(input, correspondences.value().shape()[0]);
  if (!us) return us.errors();

  auto model = at_path(field(d, "model"), "input.data");
  if (!model) return model.errors();
  const json& m = *model.value();
  const std::string where = "input.data.model";
  auto parents = at_path(int_tensor(m, "parents", 1), where);
  if (!parents) return parents.errors();
  if (parents.value().shape()[0] != kBones) {
    return input_error(where + ".parents",
                       "expected the 22 bones of ADBench's hand, found " +
                           std::to_string(parents.value().shape()[0]),
                       "theta poses the wrist, five fingers of four bones and the forearm");
  }
  auto base_relatives = at_path(real_tensor(m, "base_relatives", 3), where);
  if (!base_relatives) return base_relatives.errors();
  auto inverse_base_absolutes = at_path(real_tensor(m, "inverse_base_absolutes", 3), where);
  if (!inverse_base_absolutes) return inverse_base_absolutes.errors();
  auto base_positions = at_path(real_tensor(m, "base_positions", 2), where);
  if (!base_positions) return base_positions.errors();
  auto weights = at_path(real_tensor(m, "weights", 2), where);
  if (!weights) return weights.errors();
  auto triangles = at_path(int_tensor(m, "triangles", 2), where);
  if (!triangles) return triangles.errors();
  auto mirrored = at_path(field(m, "is_mirrored"), where);
  if (!mirrored) return mirrored.errors();
  if (!mirrored.value()->is_boolean()) {
    return input_error(where + ".is_mirrored", "expected true or false");
  }
  std::vector<Value> args{theta.value(),
                          us.value(),
                          correspondences.value(),
                          points.value(),
                          parents.value(),
                          base_relatives.value(),
                          inverse_base_absolutes.value(),
                          base_positions.value(),
                          weights.value(),
                          triangles.value(),
                          Value::boolean(mirrored.value()->get<bool>())};
  auto kept = keep_used_vertices(args);
  if (!kept) return kept.errors();
  return args;
}

// The program's column groups, each [rows / 3, 3, columns] (the first has no rows in the simple
// variant), as the rows of one dense matrix.
json jacobian_rows(const Value& groups) {
  json rows = json::array();
  const int64_t npts = groups.elems().back().shape()[0];
  for (int64_t row = 0; row < 3 * npts; ++row) {
    json r = json::array();
    for (const Value& g : groups.elems()) {
      if (g.shape()[0] == 0) continue;
      const int64_t cols = g.shape()[2];
      for (double x : g.f64_data().subspan(row * cols, cols)) r.push_back(x);
    }
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

Eval ht_eval() {
  Eval e;
  e.name = "ht";
  e.functions = {{"objective", "objective"}, {"jacobian", "objective_jacobian"}};
  e.arguments = [](const std::string&, const json& input) { return arguments(input); };
  e.output = [](const std::string& function, const std::vector<Value>&,
                const Value& result) -> json {
    return function == "objective" ? flat_json(result) : jacobian_rows(result);
  };
  return e;
}

}  // namespace cot::gradbench
