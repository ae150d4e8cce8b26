// Per-call time of compiled functions called through the C++ API (CompiledFunction::call on
// views of the caller's memory), the baseline of the Python package's overhead
// (bench/run_python_overhead.sh runs this and call_overhead.py side by side).
// Usage: call_overhead CASE CALLS   (CASE: tiny, scale, gmm_grad); prints one JSON line with the
// median over 15 batches of the time per call in nanoseconds.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "cotangent/cotangent.h"

using cotangent::DType;
using cotangent::Value;

namespace {

// The inputs both sides build with the same formulas (call_overhead.py).
Value filled(std::vector<int64_t> shape, double phase) {
  Value v = Value::zeros(DType::F64, std::move(shape));
  auto d = v.f64_mut();
  for (size_t k = 0; k < d.size(); ++k) d[k] = 0.5 * std::sin(0.37 * static_cast<double>(k) + phase);
  return v;
}

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "%s\n", what.c_str());
  std::exit(1);
}

void leaves(const Value& v, std::vector<const Value*>& out) {
  if (!v.is_tuple()) {
    out.push_back(&v);
    return;
  }
  for (const Value& e : v.elems()) leaves(e, out);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) die("usage: call_overhead CASE CALLS");
  const std::string which = argv[1];
  const long calls = std::atol(argv[2]);
  const std::string dir = COTANGENT_SOURCE_DIR;
  std::string path = dir + "/bench/python/overhead.cot";
  std::vector<Value> args;
  std::string fn;
  std::vector<std::string> wrt;
  if (which == "tiny") {
    fn = "tiny";
    args = {Value::f64(0.75)};
  } else if (which == "scale") {
    fn = "scale";
    args = {Value::f64(2.0), filled({8}, 0.0)};
  } else if (which == "gmm_grad") {
    path = dir + "/examples/gradbench/gmm.cot";
    fn = "objective";
    wrt = {"alpha", "mu", "q", "l"};
    const int64_t d = 10, k = 25, n = 1000;
    args = {filled({k}, 0.1),         filled({k, d}, 0.2), filled({k, d}, 0.3),
            filled({k, d * (d - 1) / 2}, 0.4), filled({n, d}, 0.5), Value::i64(0),
            Value::f64(1.0)};
  } else {
    die("unknown case " + which);
  }
  auto m = cotangent::Module::from_file(path);
  if (!m.ok()) die(m.message());
  auto f = m.value().get(fn);
  if (!f.ok()) die(f.message());
  cotangent::Function target = f.value();
  if (!wrt.empty()) {
    auto g = target.derivative(cotangent::DerivativeKind::Grad, wrt);
    if (!g.ok()) die(g.message());
    target = g.value();
  }
  std::vector<const Value*> in;
  for (const Value& a : args) leaves(a, in);
  std::vector<cotangent::TensorRef> views;
  for (const Value* v : in) views.push_back({v->dtype(), v->shape(), v->raw_data()});
  cotangent::CompileOptions co;
  co.threads = 1;
  auto compiled = target.compile(views, co);
  if (!compiled.ok()) die(compiled.message());
  const cotangent::CompiledFunction& c = compiled.value();
  Value result = c.zero_result();
  std::vector<Value> out_leaves;
  if (result.is_tuple()) {
    out_leaves = result.elems();
  } else {
    out_leaves = {result};
  }
  std::vector<cotangent::MutableTensorRef> outs;
  for (Value& v : out_leaves) outs.push_back({v.dtype(), v.shape(), v.raw_mut()});
  std::vector<double> per_call;
  for (int batch = 0; batch < 16; ++batch) {
    const auto t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) {
      auto r = c.call(views, outs);
      if (!r.ok()) die(r.message());
    }
    const auto t1 = std::chrono::steady_clock::now();
    if (batch == 0) continue;  // warm-up
    per_call.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() /
                       static_cast<double>(calls));
  }
  std::sort(per_call.begin(), per_call.end());
  std::printf("{\"side\": \"cpp\", \"case\": \"%s\", \"ns_per_call\": %.1f}\n", which.c_str(),
              per_call[per_call.size() / 2]);
  return 0;
}
