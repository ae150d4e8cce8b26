// Wall-clock time of the introduction programs of [Bernstein20] (tests/opt/corpus/intro.cot:
// `traces`, four traces of diag(x), and `row_col`, the dot product of a row and a column of
// diag(x)) through the C++ API, for docs/benchmarks.md. bench/torch_intro.py times the same
// computations in PyTorch, by the same rule, in the same CSV format.
//
//   intro_scaling [--root DIR] [--sizes 100,1000,10000] [--opt 2,0] [--min-reps 5]
//                 [--budget 1.0] [--max-reps 100] [--max-seconds 60] [--api]
//
// One CSV line per (function, what, opt, n):
//   impl,fn,what,opt,n,reps,median_s,min_s
// what = primal: Module::evaluate(fn, {x});
//        grad:   Module::evaluate(fn_vg, {x}) where `def fn_vg(x) { value_and_grad(fn)(x) }` is
//                defined in the source, so the derived function is built and optimized when the
//                module loads and the timed call only runs it (loading and compiling excluded).
//        api_vg: (with --api) Module::value_and_grad(fn, {x}), which today derives and
//                optimizes the gradient again on every call: derivation plus run.
//
// Timing: std::chrono::steady_clock around each call, one untimed warm-up call (which checks
// the result), then repeated calls until at least --min-reps runs and --budget seconds, at most
// --max-reps runs, and no new run once --max-seconds have been spent (so a call of a minute is
// timed once); the median is reported, and the minimum beside it. Not Google Benchmark: the PyTorch
// side must be timed by exactly the same rule, and a dozen lines of chrono written identically in
// both languages make that visible, where Google Benchmark's adaptive iteration counts and its own
// statistics have no counterpart in the Python script. Every result is checked against its
// closed form (value 4·Σx or x[0]², gradient 4 or 2·x[0]·e0) in the warm-up call.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

namespace {

using cotangent::LoadOptions;
using cotangent::Module;
using cotangent::Value;

struct Options {
  std::string root = COTANGENT_SOURCE_DIR;
  std::vector<int64_t> sizes = {100, 1000, 10000};
  std::vector<int64_t> opts = {2, 0};
  int min_reps = 5;
  double budget = 1.0;
  int max_reps = 100;
  double max_seconds = 60.0;
  bool api = false;
};

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ',')) out.push_back(std::stoll(item));
  return out;
}

// The input, identical in bench/torch_intro.py.
Value input(int64_t n) {
  Value x = Value::zeros(cotangent::DType::F64, {n});
  auto d = x.f64_mut();
  for (int64_t i = 0; i < n; ++i)
    d[static_cast<size_t>(i)] = 1.0 + 0.001 * static_cast<double>(i % 1000);
  return x;
}

struct Timing {
  int reps = 0;
  double median = 0, min = 0;
};

// `warm_up` is called once, untimed (it checks the result); then `call` is timed.
Timing time_it(const std::function<void()>& warm_up, const std::function<void()>& call,
               const Options& o) {
  warm_up();
  std::vector<double> runs;
  double total = 0;
  auto more = [&] {
    const int reps = static_cast<int>(runs.size());
    if (reps >= o.max_reps) return false;
    // A call of many seconds (the quadratic cases at n = 10^4) is not repeated past
    // --max-seconds: its spread is small beside its size.
    if (reps >= 1 && total >= o.max_seconds) return false;
    return reps < o.min_reps || total < o.budget;
  };
  while (more()) {
    const auto t0 = std::chrono::steady_clock::now();
    call();
    const auto t1 = std::chrono::steady_clock::now();
    runs.push_back(std::chrono::duration<double>(t1 - t0).count());
    total += runs.back();
  }
  std::sort(runs.begin(), runs.end());
  const size_t m = runs.size();
  Timing t;
  t.reps = static_cast<int>(m);
  t.median = m % 2 ? runs[m / 2] : 0.5 * (runs[m / 2 - 1] + runs[m / 2]);
  t.min = runs.front();
  return t;
}

[[noreturn]] void fail(const std::string& what) {
  std::cerr << "intro_scaling: " << what << "\n";
  std::exit(1);
}

bool close(double a, double b) {
  return std::abs(a - b) <= 1e-9 * (1.0 + std::abs(b));
}

// The closed forms of both programs (EX-11 and EX-12 of tests/ad/examples_000_test.cpp).
void check(const std::string& fn, const Value& x, double value, const Value* grad) {
  const auto d = x.f64_data();
  double want = 0;
  if (fn == "traces") {
    for (double v : d) want += 4.0 * v;
  } else {
    want = d[0] * d[0];
  }
  if (!close(value, want))
    fail(fn + ": value " + std::to_string(value) + ", expected " + std::to_string(want));
  if (!grad) return;
  const auto g = grad->f64_data();
  if (g.size() != d.size()) fail(fn + ": gradient of the wrong size");
  for (size_t i = 0; i < g.size(); ++i) {
    const double w = fn == "traces" ? 4.0 : (i == 0 ? 2.0 * d[0] : 0.0);
    if (!close(g[i], w))
      fail(fn + ": gradient[" + std::to_string(i) + "] = " + std::to_string(g[i]));
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int k = 1; k < argc; ++k) {
    const std::string a = argv[k];
    auto next = [&]() -> std::string {
      if (k + 1 >= argc) fail(a + " needs a value");
      return argv[++k];
    };
    if (a == "--root") {
      o.root = next();
    } else if (a == "--sizes") {
      o.sizes = parse_list(next());
    } else if (a == "--opt") {
      o.opts = parse_list(next());
    } else if (a == "--min-reps") {
      o.min_reps = std::stoi(next());
    } else if (a == "--budget") {
      o.budget = std::stod(next());
    } else if (a == "--max-reps") {
      o.max_reps = std::stoi(next());
    } else if (a == "--max-seconds") {
      o.max_seconds = std::stod(next());
    } else if (a == "--api") {
      o.api = true;
    } else {
      std::cerr << "usage: intro_scaling [--root DIR] [--sizes 100,1000,10000] [--opt 2,0] "
                   "[--min-reps 5] [--budget 1.0] [--max-reps 100] [--max-seconds 60] [--api]\n";
      return 2;
    }
  }

  std::ifstream in(o.root + "/tests/opt/corpus/intro.cot", std::ios::binary);
  if (!in) fail("cannot read " + o.root + "/tests/opt/corpus/intro.cot");
  std::ostringstream text;
  text << in.rdbuf();
  // The gradients as a user compiles them: derivative operators in the source.
  const std::string source = text.str() +
                             "\ndef traces_vg(x: f64[n]) -> (f64, f64[n]) { "
                             "value_and_grad(traces)(x) }\n"
                             "def row_col_vg(x: f64[n]) -> (f64, f64[n]) { "
                             "value_and_grad(row_col)(x) }\n";

  std::cout << "impl,fn,what,opt,n,reps,median_s,min_s\n";
  for (int64_t level : o.opts) {
    LoadOptions lo;
    lo.opt_level = static_cast<int>(level);
    auto loaded = Module::from_string(source, "intro.cot", lo);
    if (!loaded) fail(loaded.message());
    const Module& m = loaded.value();
    for (const std::string fn : {"traces", "row_col"}) {
      for (int64_t n : o.sizes) {
        const std::vector<Value> args = {input(n)};
        if (n == o.sizes.front()) {
          // The gradient compiled from the source is the one the API builds: same op count.
          auto c1 = m.cost(fn + "_vg", args);
          auto c2 = m.derivative_cost(fn, cotangent::DerivativeKind::ValueAndGrad, args);
          if (!c1) fail(c1.message());
          if (!c2) fail(c2.message());
          if (c1.value().ops != c2.value().ops) {
            std::cerr << "intro_scaling: note: " << fn << " at n = " << n << ", --opt=" << level
                      << ": ops(" << fn << "_vg) = " << c1.value().ops
                      << " but derivative_cost = " << c2.value().ops << "\n";
          }
        }
        auto report = [&](const char* what, const std::function<void()>& warm_up,
                          const std::function<void()>& call) {
          const Timing t = time_it(warm_up, call, o);
          std::printf("cotangent,%s,%s,%lld,%lld,%d,%.6e,%.6e\n", fn.c_str(), what,
                      static_cast<long long>(level), static_cast<long long>(n), t.reps, t.median,
                      t.min);
          std::fflush(stdout);
        };
        report(
            "primal",
            [&] {
              auto r = m.evaluate(fn, args);
              if (!r) fail(r.message());
              check(fn, args[0], r.value().as_f64(), nullptr);
            },
            [&] {
              if (!m.evaluate(fn, args)) fail("evaluate failed");
            });
        report(
            "grad",
            [&] {
              auto r = m.evaluate(fn + "_vg", args);
              if (!r) fail(r.message());
              check(fn, args[0], r.value().elems().at(0).as_f64(), &r.value().elems().at(1));
            },
            [&] {
              if (!m.evaluate(fn + "_vg", args)) fail("evaluate failed");
            });
        if (o.api) {
          report(
              "api_vg",
              [&] {
                auto r = m.value_and_grad(fn, args);
                if (!r) fail(r.message());
                check(fn, args[0], r.value().value.as_f64(), &r.value().grad.at(0).value);
              },
              [&] {
                if (!m.value_and_grad(fn, args)) fail("value_and_grad failed");
              });
        }
      }
    }
  }
  return 0;
}
