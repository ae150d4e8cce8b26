// Fits the quick start's linear model by gradient descent with the loss and gradient that
// `cotangent emit` generated ahead of time (examples/quickstart.cot: loss(w, X, y), emitted as
// cot_fn_loss, and its gradient, cot_grad_loss), then
// prints the loss and its gradient at the starting point, one number per line (a test compares
// them with `cotangent grad`), and the loss after the descent.
#include <cstdint>
#include <cstdio>
#include <vector>

#include "cot_fn_loss.h"
#include "cot_grad_loss.h"

int main() {
  const int64_t k = 2, m = 4;  // w: f64[k], X: f64[m, k], y: f64[m]
  std::vector<double> w = {0.5, -0.25};
  const std::vector<double> X = {1, 2, 3, 4, 5, 6, 7, 8};
  const std::vector<double> y = {1, 2, 3, 4};
  // The header lists the size variables in order: sizes[0] = k, sizes[1] = m.
  const int64_t sizes[] = {k, m};
  char message[512];
  double value = 0;
  if (cot_fn_loss(sizes, w.data(), X.data(), y.data(), &value, 1, message, sizeof message) != 0) {
    std::fprintf(stderr, "%s\n", message);
    return 1;
  }
  std::vector<double> gw(k), gX(m * k), gy(m);
  if (cot_grad_loss(sizes, w.data(), X.data(), y.data(), gw.data(), gX.data(), gy.data(), 1,
                    message, sizeof message) != 0) {
    std::fprintf(stderr, "%s\n", message);
    return 1;
  }
  std::printf("%.17g\n", value);
  for (double g : gw) std::printf("%.17g\n", g);
  for (double g : gX) std::printf("%.17g\n", g);
  for (double g : gy) std::printf("%.17g\n", g);
  for (int step = 0; step < 200; ++step) {
    cot_grad_loss(sizes, w.data(), X.data(), y.data(), gw.data(), gX.data(), gy.data(), 1, nullptr,
                  0);
    for (int64_t j = 0; j < k; ++j) w[j] -= 0.004 * gw[j];
  }
  cot_fn_loss(sizes, w.data(), X.data(), y.data(), &value, 1, nullptr, 0);
  std::fprintf(stderr, "loss after 200 steps: %.6g (w = %.6g, %.6g)\n", value, w[0], w[1]);
  return 0;
}
