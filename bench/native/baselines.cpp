// Straightforward hand-written C++ for the primals of bench/native/kernels.cot: the loops a
// programmer writes without tricks, compiled with the flags the native backend uses
// (bench/run_native.sh). Reads the same .npy inputs and times each call as `cotangent bench`
// does: one warm-up call, then N timed calls; prints {"median_s", "min_s", "runs", "value"}
// where value is a checksum of the result (to check both compute the same thing).
//
//   baselines KERNEL INPUT_DIR RUNS     (KERNEL: dot, matvec, conv, gmm, lstm)
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace {

struct Array {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

// A little-endian f64 C-order .npy file (as numpy.save writes it).
Array read_npy(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[8];
  in.read(magic, 8);
  uint16_t header_len = 0;
  if (magic[6] == 1) {
    in.read(reinterpret_cast<char*>(&header_len), 2);
  } else {
    uint32_t h = 0;
    in.read(reinterpret_cast<char*>(&h), 4);
    header_len = static_cast<uint16_t>(h);
  }
  std::string header(header_len, ' ');
  in.read(header.data(), header_len);
  Array a;
  const size_t open = header.find('(', header.find("shape"));
  const size_t close = header.find(')', open);
  std::string dims = header.substr(open + 1, close - open - 1);
  size_t pos = 0;
  while (pos < dims.size()) {
    size_t comma = dims.find(',', pos);
    std::string d = dims.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (d.find_first_of("0123456789") != std::string::npos) a.shape.push_back(std::stoll(d));
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  int64_t n = 1;
  for (int64_t d : a.shape) n *= d;
  a.data.resize(static_cast<size_t>(n));
  in.read(reinterpret_cast<char*>(a.data.data()), n * 8);
  return a;
}

double dot(const double* x, const double* y, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += x[i] * y[i];
  return s;
}

void matvec(const double* A, const double* x, int64_t m, int64_t n, double* out) {
  for (int64_t i = 0; i < m; ++i) {
    double s = 0;
    for (int64_t j = 0; j < n; ++j) s += A[i * n + j] * x[j];
    out[i] = s;
  }
}

void conv(const double* img, int64_t h, int64_t w, const double* ker, int64_t p, int64_t q,
          double* out) {
  const int64_t oh = h - p + 1, ow = w - q + 1;
  for (int64_t i = 0; i < oh; ++i) {
    for (int64_t j = 0; j < ow; ++j) {
      double s = 0;
      for (int64_t a = 0; a < p; ++a) {
        for (int64_t b = 0; b < q; ++b) s += img[(i + a) * w + j + b] * ker[a * q + b];
      }
      out[i * ow + j] = s;
    }
  }
}

double logsumexp(const double* x, int64_t n) {
  double m = -INFINITY;
  for (int64_t i = 0; i < n; ++i) m = std::max(m, x[i]);
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += std::exp(x[i] - m);
  return m + std::log(s);
}

// The GMM objective as ADBench's C++ reference computes it.
double gmm(const double* alphas, const double* means, const double* qs, const double* ls,
           const double* x, int64_t n, int64_t d, int64_t K, double gamma, double wm) {
  const int64_t nl = d * (d - 1) / 2;
  std::vector<double> sum_qs(K), xc(d), Qxc(d), main(K), qdiag(K * d);
  for (int64_t k = 0; k < K; ++k) {
    double s = 0;
    for (int64_t r = 0; r < d; ++r) {
      s += qs[k * d + r];
      qdiag[k * d + r] = std::exp(qs[k * d + r]);
    }
    sum_qs[k] = s;
  }
  double slse = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t k = 0; k < K; ++k) {
      for (int64_t r = 0; r < d; ++r) xc[r] = x[i * d + r] - means[k * d + r];
      // Q x with Q lower triangular: exp(q) on the diagonal, l packed column by column below.
      const double* l = ls + k * nl;
      for (int64_t r = 0; r < d; ++r) Qxc[r] = qdiag[k * d + r] * xc[r];
      int64_t at = 0;
      for (int64_t c = 0; c < d; ++c) {
        for (int64_t r = c + 1; r < d; ++r) Qxc[r] += l[at++] * xc[c];
      }
      double sq = 0;
      for (int64_t r = 0; r < d; ++r) sq += Qxc[r] * Qxc[r];
      main[k] = alphas[k] + sum_qs[k] - 0.5 * sq;
    }
    slse += logsumexp(main.data(), K);
  }
  const double constant = -static_cast<double>(n * d) * 0.5 * std::log(2.0 * 3.141592653589793);
  double prior = 0;
  for (int64_t k = 0; k < K; ++k) {
    double fro = 0;
    for (int64_t r = 0; r < d; ++r) {
      const double e = std::exp(qs[k * d + r]);
      fro += e * e;
    }
    for (int64_t j = 0; j < nl; ++j) fro += ls[k * nl + j] * ls[k * nl + j];
    prior += 0.5 * gamma * gamma * fro - wm * sum_qs[k];
  }
  return constant + slse - static_cast<double>(n) * logsumexp(alphas, K) + prior;
}

double sigmoid(double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}

void lstm_step(const double* Wx, const double* Wh, const double* b, const double* x,
               const double* hp, const double* cp, int64_t h, int64_t d, double* hn, double* c) {
  std::vector<double> z(static_cast<size_t>(4 * h));
  for (int64_t g = 0; g < 4; ++g) {
    for (int64_t i = 0; i < h; ++i) {
      double sx = 0, sh = 0;
      for (int64_t k = 0; k < d; ++k) sx += Wx[(g * h + i) * d + k] * x[k];
      for (int64_t j = 0; j < h; ++j) sh += Wh[(g * h + i) * h + j] * hp[j];
      z[g * h + i] = sx + sh + b[g * h + i];
    }
  }
  for (int64_t i = 0; i < h; ++i) {
    c[i] = sigmoid(z[h + i]) * cp[i] + sigmoid(z[i]) * std::tanh(z[2 * h + i]);
    hn[i] = sigmoid(z[3 * h + i]) * std::tanh(c[i]);
  }
}

double sum_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: baselines KERNEL INPUT_DIR RUNS\n");
    return 2;
  }
  const std::string kernel = argv[1], dir = argv[2];
  const int runs = std::atoi(argv[3]);
  auto in = [&](const char* name) { return read_npy(dir + "/" + name + ".npy"); };
  std::function<double()> call;
  Array a1, a2, a3, a4, a5, a6;
  std::vector<double> out1, out2;
  if (kernel == "dot") {
    a1 = in("x");
    a2 = in("y");
    call = [&] { return dot(a1.data.data(), a2.data.data(), a1.shape[0]); };
  } else if (kernel == "matvec") {
    a1 = in("A");
    a2 = in("x");
    out1.resize(static_cast<size_t>(a1.shape[0]));
    call = [&] {
      matvec(a1.data.data(), a2.data.data(), a1.shape[0], a1.shape[1], out1.data());
      return sum_of(out1);
    };
  } else if (kernel == "conv") {
    a1 = in("img");
    a2 = in("ker");
    out1.resize(
        static_cast<size_t>((a1.shape[0] - a2.shape[0] + 1) * (a1.shape[1] - a2.shape[1] + 1)));
    call = [&] {
      conv(a1.data.data(), a1.shape[0], a1.shape[1], a2.data.data(), a2.shape[0], a2.shape[1],
           out1.data());
      return sum_of(out1);
    };
  } else if (kernel == "gmm") {
    a1 = in("alphas");
    a2 = in("means");
    a3 = in("qs");
    a4 = in("ls");
    a5 = in("x");
    call = [&] {
      return gmm(a1.data.data(), a2.data.data(), a3.data.data(), a4.data.data(), a5.data.data(),
                 a5.shape[0], a5.shape[1], a1.shape[0], 1.0, 0.0);
    };
  } else if (kernel == "lstm") {
    a1 = in("Wx");
    a2 = in("Wh");
    a3 = in("b");
    a4 = in("x");
    a5 = in("hp");
    a6 = in("cp");
    const int64_t h = a1.shape[1], d = a1.shape[2];
    out1.resize(static_cast<size_t>(h));
    out2.resize(static_cast<size_t>(h));
    call = [&] {
      lstm_step(a1.data.data(), a2.data.data(), a3.data.data(), a4.data.data(), a5.data.data(),
                a6.data.data(), h, d, out1.data(), out2.data());
      return sum_of(out1) + sum_of(out2);
    };
  } else {
    std::fprintf(stderr, "unknown kernel %s\n", kernel.c_str());
    return 2;
  }
  double value = call();
  std::vector<double> times;
  for (int k = 0; k < runs; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    value = call();
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  const double median = n % 2 == 1 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  std::printf("{\"median_s\": %.9g, \"min_s\": %.9g, \"runs\": %d, \"value\": %.17g}\n", median,
              sorted.front(), runs, value);
  return 0;
}
