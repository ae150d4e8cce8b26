// GradBench's `kmeans`: `cost` (the sum over the points of the squared distance to the nearest
// centroid) and `dir` (the Newton direction: the gradient with respect to the centroids divided
// by the Hessian's diagonal, k x d). The input is {points[n][d], centroids[k][d]}; GradBench
// takes the centroids from the points, so that every cluster has a point.
#include "gradbench/eval.h"
#include "gradbench/json_values.h"

namespace cot::gradbench {

Eval kmeans_eval() {
  Eval e;
  e.name = "kmeans";
  e.functions = {{"cost", "cost"}, {"dir", "dir"}};
  e.arguments =
      [](const std::string&,
         const nlohmann::json& input) -> cotangent::Result<std::vector<cotangent::Value>> {
    auto points = real_tensor(input, "points", 2);
    if (!points) return points.errors();
    auto centroids = real_tensor(input, "centroids", 2);
    if (!centroids) return centroids.errors();
    return std::vector<cotangent::Value>{points.value(), centroids.value()};
  };
  return e;
}

}  // namespace cot::gradbench
