// Randomized tests of automatic differentiation: random well-typed programs
// (tests/ad/random_program.h) with a scalar function f and a vector function g, on random
// inputs, checked against finite differences and against identities that relate the derivative
// operators to each other:
//
//   AdRandom.GeneratedProgramsCheckAndRun  every program checks, and f and g evaluate
//   AdRandom.GradMatchesFiniteDifferences  grad(f) against central differences, ρ ≤ 1e-5
//   AdIdentity.TransposeJvpVjp             ⟨ct, J t⟩ = ⟨Jᵀ ct, t⟩ with jvp(g) and vjp(g), ρ ≤ 1e-10
//   AdIdentity.JacobianMatchesJvpAndVjp    jacobian(g, a) = jvp columns = vjp rows, ρ ≤ 1e-10
//   AdIdentity.HessianMatchesFdAndHvp      hessian(f, a) symmetric, = FD of grad(f, a) (ρ ≤ 1e-5),
//                                          jvp(grad(f, a), a)(x, t) = H t and
//                                          grad(<grad(f, a), w>, a) = H w (ρ ≤ 1e-9)
// Every third program (seed divisible by 3) nests its loops (RandomProgramOptions::loop_nests).
//   AdIdentity.ValueAndGradMatchesGrad     value_and_grad(f) = (f, grad(f)) exactly
//
// ρ(x, y) = |x − y| / max(1, |x| + |y|); inner products and matrix-vector products are compared
// relative to the sum of the magnitudes of their terms instead of |x| + |y|, which is what
// their rounding error scales with.
//
// The derived functions are written into each program's source (def gf(...) { grad(f)(...) },
// ...) and evaluated through the Module API. Points where f (or grad f) is not smooth within the
// finite-difference step, where a value is not finite, or where f uses stop_gradient (finite
// differences do not see it) are skipped and counted; most points must run.
//
// Budget: the tests stop generating programs after about 20 seconds in all. Environment:
//   COT_AD_FUZZ_SECONDS=S   spend about S seconds in all instead (split as below)
//   COT_AD_FUZZ_SEED=N      first program seed (default 1); programs use seeds N, N + 1, ...
//                           (after the seeds of kRegressionSeeds, which every run checks first)
//   COT_AD_FUZZ_COUNT=C     run exactly C programs per test, whatever the time
//   COT_AD_FUZZ_VERBOSE=1   print each seed and its program before running it (to find a crash)
//   COT_AD_FUZZ_DUMP=DIR    write the message of every failure to DIR/seed_<seed>_<fn>.txt
// A failure prints the seed, the program (with its derived functions) and the inputs as JSON,
// so `cotangent run prog.cot gf --input in.json` reproduces it.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <iterator>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "ad/fd_harness.h"
#include "ad/random_program.h"
#include "cotangent/cotangent.h"
#include "cotangent/io.h"

namespace cotangent::adtest {
namespace COTANGENT_TEST_UNIT {

constexpr double kFdTolerance = 1e-5;
constexpr double kIdentityTol = 1e-10;
constexpr double kHvpTol = 1e-9;
constexpr double kFdStep = 1e-4;
constexpr int kMaxReported = 4;  // failures printed in full per test; later ones by seed only

double env_double(const char* name, double dflt) {
  const char* v = std::getenv(name);
  return v && *v ? std::atof(v) : dflt;
}

double total_budget() {
  return env_double("COT_AD_FUZZ_SECONDS", 20.0);
}
uint64_t first_seed() {
  return static_cast<uint64_t>(env_double("COT_AD_FUZZ_SEED", 1));
}
int fixed_count() {
  return static_cast<int>(env_double("COT_AD_FUZZ_COUNT", 0));
}
bool verbose() {
  return env_double("COT_AD_FUZZ_VERBOSE", 0) != 0;
}

std::string fmt(double x) {
  std::ostringstream s;
  s.precision(17);
  s << x;
  return s.str();
}

bool all_finite(const std::vector<double>& xs) {
  for (double x : xs) {
    if (!std::isfinite(x)) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// A program with its derived functions.

std::string dims_of(const GenParam& p) {
  std::string s;
  for (size_t i = 0; i < p.dims.size(); ++i) s += (i ? ", " : "") + p.dims[i];
  return s;
}

struct Case {
  RandomProgram prog;
  int active = -1;  // the tensor parameter of jacobian(g, a) and hessian(f, a)
  std::string source;
  std::optional<Module> module;
  std::string load_error;

  const GenParam& a() const { return prog.params[static_cast<size_t>(active)]; }
};

// The derived functions, by name: def gf(P) -> G { grad(f)(p) }, value_and_grad, jvp and vjp
// of g (every real parameter), and with respect to the one tensor parameter a: jacobian(g, a),
// jvp(g, a), vjp(g, a), grad(f, a), hessian(f, a) and jvp(grad(f, a), a).
std::map<std::string, std::string> derived_functions(const Case& c) {
  const RandomProgram& p = c.prog;
  const std::string D = p.decl(), C = p.call();
  const std::vector<int> real = p.real_params();
  std::string G, tdecl, tcall;
  for (size_t i = 0; i < real.size(); ++i) {
    const GenParam& q = p.params[static_cast<size_t>(real[i])];
    G += (i ? ", " : "") + q.type;
    tdecl += ", tg_" + q.name + ": " + q.type;
    tcall += ", tg_" + q.name;
  }
  if (real.size() > 1) G = "(" + G + ")";
  const std::string Y = "f64[" + p.g_len + "]";
  const GenParam& a = c.a();
  const std::string Ta = a.type, da = dims_of(a);
  std::map<std::string, std::string> s;
  s["gf"] = "def gf(" + D + ") -> " + G + " { grad(f)(" + C + ") }\n";
  s["vgf"] = "def vgf(" + D + ") -> (f64, " + G + ") { value_and_grad(f)(" + C + ") }\n";
  s["jg"] = "def jg(" + D + tdecl + ") -> (" + Y + ", " + Y + ") { jvp(g)(" + C + tcall + ") }\n";
  s["vg"] = "def vg(" + D + ", ct_: " + Y + ") -> " + G + " { vjp(g)(" + C + ", ct_) }\n";
  s["Jg"] = "def Jg(" + D + ") -> f64[" + p.g_len + ", " + da + "] { jacobian(g, " + a.name + ")(" +
            C + ") }\n";
  s["jga"] = "def jga(" + D + ", ta_: " + Ta + ") -> (" + Y + ", " + Y + ") { jvp(g, " + a.name +
             ")(" + C + ", ta_) }\n";
  s["vga"] = "def vga(" + D + ", ct_: " + Y + ") -> " + Ta + " { vjp(g, " + a.name + ")(" + C +
             ", ct_) }\n";
  s["gfa"] = "def gfa(" + D + ") -> " + Ta + " { grad(f, " + a.name + ")(" + C + ") }\n";
  s["Hf"] = "def Hf(" + D + ") -> f64[" + da + ", " + da + "] { hessian(f, " + a.name + ")(" + C +
            ") }\n";
  s["hvp"] = "def hvp(" + D + ", ta_: " + Ta + ") -> (" + Ta + ", " + Ta + ") { jvp(grad(f, " +
             a.name + "), " + a.name + ")(" + C + ", ta_) }\n";
  // Reverse over reverse: the gradient of <grad(f, a), w> with respect to a is H w.
  const std::string at = a.dims.size() == 1 ? "[i_]" : "[i_, j_]";
  const std::string over = a.dims.size() == 1 ? "i_" : "i_, j_";
  s["gw"] = "def gw(" + D + ", w_: " + Ta + ") -> f64 { let G_ = grad(f, " + a.name + ")(" + C +
            "); sum " + over + ". G_" + at + " * w_" + at + " }\n";
  s["rr"] = "def rr(" + D + ", w_: " + Ta + ") -> " + Ta + " { grad(gw, " + a.name + ")(" + C +
            ", w_) }\n";
  return s;
}

// The program with the derived functions `names`. When it does not load, each derived function
// is tried alone, so that the message says which operator fails.
Case make_case(uint64_t seed, const std::vector<std::string>& names) {
  Case c;
  // Every third program nests its loops, so each operator meets loops two and three deep.
  RandomProgramOptions options;
  options.loop_nests = seed % 3 == 0;
  c.prog = random_program(seed, options);
  const std::vector<int> tensors = c.prog.tensor_params();
  c.active = tensors[seed % tensors.size()];
  const std::map<std::string, std::string> all = derived_functions(c);
  const std::string file = "random_" + std::to_string(seed) + ".cot";
  c.source = c.prog.source + "\n# Derived functions under test.\n";
  for (const std::string& n : names) c.source += all.at(n);
  if (verbose()) std::cerr << c.source << std::endl;
  auto m = Module::from_string(c.source, file);
  if (m.ok()) {
    c.module.emplace(std::move(m).value());
    return c;
  }
  c.load_error = m.message();
  for (const std::string& n : names) {
    auto alone = Module::from_string(c.prog.source + all.at(n), file);
    if (!alone.ok()) c.load_error += "\n(" + n + " alone fails: " + alone.message() + ")";
  }
  return c;
}

std::string inputs_json(const Case& c, const std::vector<Value>& args,
                        const std::vector<std::pair<std::string, Value>>& extra = {}) {
  std::string s = "{";
  for (size_t i = 0; i < c.prog.params.size() && i < args.size(); ++i) {
    s += (i ? ", \"" : "\"") + c.prog.params[i].name + "\": " + value_to_json(args[i]);
  }
  for (const auto& [name, v] : extra) s += ", \"" + name + "\": " + value_to_json(v);
  return s + "}";
}

std::string repro(const Case& c, const std::vector<Value>& args,
                  const std::vector<std::pair<std::string, Value>>& extra = {}) {
  return "program seed " + std::to_string(c.prog.seed) + "\n----- program -----\n" + c.source +
         "----- input -----\n" + inputs_json(c, args, extra) + "\n";
}

Result<Value> eval(const Case& c, const std::string& fn, const std::vector<Value>& args) {
  EvalOptions opt;
  opt.max_while_iterations = 100000;
  return c.module->evaluate(fn, args, opt);
}

// ---------------------------------------------------------------------------------------------
// The driver: runs `check` on programs with seeds first_seed(), first_seed() + 1, ... until the
// test's share of the budget is spent.

// Seeds whose programs once found a bug (each fixed since), run first by every test: a longer
// run with COT_AD_FUZZ_SEED elsewhere found them. 1403: output fission stopped before a split
// that an earlier split made pay, so its postcondition failed. From the hour-long campaign
// (docs/campaigns.md): 25017359, 25028789, 25029861 and 25048951, strong zeros lost where a
// tensor stored them (a Jacobian of NaN where jvp and vjp gave 0); 25008114 and 25010652, licm
// moved a statement that names a saving loop's count out of the guard whose body binds it;
// 25022509 and 25050867, a branch independent of the input had an ordinary zero tangent, so jvp
// gave NaN at norm2(0) where jacobian gave 0.
constexpr uint64_t kRegressionSeeds[] = {1403,     25017359, 25028789, 25029861, 25048951,
                                         25008114, 25010652, 25022509, 25050867};

enum class Outcome { Ran, Skipped, Failed };

struct Checked {
  Outcome outcome = Outcome::Ran;
  std::string why;  // the reason of a skip, or the failure message
  static Checked ran() { return {}; }
  static Checked skip(std::string why) { return {Outcome::Skipped, std::move(why)}; }
  static Checked fail(std::string why) { return {Outcome::Failed, std::move(why)}; }
};

using Check = std::function<Checked(const Case&, std::mt19937_64&)>;

void fuzz(const char* what, double share, const std::vector<std::string>& names,
          const Check& check) {
  const auto start = std::chrono::steady_clock::now();
  const double budget = total_budget() * share;
  const int count = fixed_count();
  int programs = 0, ran = 0, skipped = 0, failed = 0;
  std::map<std::string, int> skips;
  std::vector<uint64_t> failing;
  const size_t regressions = std::size(kRegressionSeeds);
  for (uint64_t i = 0;; ++i) {
    const bool regression = i < regressions;
    const uint64_t seed = regression ? kRegressionSeeds[i] : first_seed() + (i - regressions);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const int drawn = programs - static_cast<int>(std::min<uint64_t>(i, regressions));
    if (!regression && (count > 0 ? drawn >= count : (elapsed > budget && drawn >= 5))) break;
    if (verbose()) std::cerr << what << ": seed " << seed << std::endl;
    ++programs;
    const Case c = make_case(seed, names);
    Checked r;
    if (!c.module) {
      r = Checked::fail("the program with its derived functions does not load:\n" + c.load_error +
                        "\n----- program -----\n" + c.source);
    } else {
      std::mt19937_64 rng(seed * 0x9E3779B97F4A7C15ull + 12345);
      r = check(c, rng);
    }
    if (r.outcome == Outcome::Ran) ++ran;
    if (r.outcome == Outcome::Skipped) {
      ++skipped;
      ++skips[r.why];
    }
    if (r.outcome == Outcome::Failed) {
      ++failed;
      failing.push_back(seed);
      if (const char* dir = std::getenv("COT_AD_FUZZ_DUMP"); dir && *dir) {
        std::ofstream(std::string(dir) + "/seed_" + std::to_string(seed) + "_" + names[0] + ".txt")
            << r.why;
      }
      if (failed <= kMaxReported) {
        ADD_FAILURE() << what << ": " << r.why;
      }
    }
  }
  std::ostringstream summary;
  summary << what << ": " << programs << " programs, " << ran << " ran, " << skipped << " skipped, "
          << failed << " failed";
  for (const auto& [why, n] : skips) summary << "\n  skipped " << n << ": " << why;
  if (!failing.empty()) {
    summary << "\n  failing seeds:";
    for (uint64_t s : failing) summary << " " << s;
  }
  std::cout << summary.str() << std::endl;
  ::testing::Test::RecordProperty("programs", programs);
  EXPECT_EQ(failed, 0) << summary.str();
  EXPECT_GE(ran + failed, (programs + 1) / 2) << "too many programs skipped\n" << summary.str();
}

// Draws arguments until `accept` takes them (at most 3 draws).
struct Point {
  std::vector<Value> args;
  std::map<std::string, int64_t> sizes;
};

// Positions of the real elements of the arguments: (argument, element) for each coordinate.
std::vector<std::pair<int, int64_t>> coordinates(const std::vector<Value>& args,
                                                 const std::vector<int>& which) {
  std::vector<std::pair<int, int64_t>> out;
  for (int a : which) {
    const int64_t n = real_count(args[static_cast<size_t>(a)]);
    for (int64_t k = 0; k < n; ++k) out.push_back({a, k});
  }
  return out;
}

std::vector<Value> perturbed(const std::vector<Value>& args, std::pair<int, int64_t> at,
                             double delta) {
  std::vector<Value> out = args;
  Value& v = out[static_cast<size_t>(at.first)];
  std::vector<double> xs = real_elements(v);
  xs[static_cast<size_t>(at.second)] += delta;
  v = with_real_elements(v, xs);
  return out;
}

// Central differences with Richardson extrapolation of a vector-valued function (the real
// elements of `fn`'s result) along each coordinate. A coordinate where a one-sided difference
// disagrees with the other beyond what curvature explains (the second differences at h and h/2
// are not in ratio 4), or where the estimates at h and h/2 disagree, is non-smooth.
struct Fd {
  std::vector<std::vector<double>> cols;  // per coordinate: d result / d coordinate
  bool smooth = true;
  bool finite = true;
  std::string error;  // evaluation failed
  std::string where;  // the first non-smooth coordinate
};

Fd finite_differences(const Case& c, const std::string& fn, const std::vector<Value>& args,
                      const std::vector<std::pair<int, int64_t>>& coords,
                      const std::vector<double>& base) {
  Fd out;
  auto at = [&](std::pair<int, int64_t> k, double delta) -> std::optional<std::vector<double>> {
    auto r = eval(c, fn, perturbed(args, k, delta));
    if (!r.ok()) {
      out.error = fn + " fails at a perturbed point:\n" + r.message();
      return std::nullopt;
    }
    return real_elements(r.value());
  };
  for (size_t j = 0; j < coords.size(); ++j) {
    const double x = real_elements(
        args[static_cast<size_t>(coords[j].first)])[static_cast<size_t>(coords[j].second)];
    const double h = kFdStep * std::max(1.0, std::fabs(x));
    auto p1 = at(coords[j], h), m1 = at(coords[j], -h), p2 = at(coords[j], h / 2),
         m2 = at(coords[j], -h / 2);
    if (!p1 || !m1 || !p2 || !m2) return out;
    std::vector<double> col(base.size());
    for (size_t r = 0; r < base.size(); ++r) {
      const double a1 = (*p1)[r], b1 = (*m1)[r], a2 = (*p2)[r], b2 = (*m2)[r], f0 = base[r];
      if (!std::isfinite(a1) || !std::isfinite(b1) || !std::isfinite(a2) || !std::isfinite(b2)) {
        out.finite = false;
        return out;
      }
      const double c1 = (a1 - b1) / (2 * h), c2 = (a2 - b2) / h;
      const double d1 = a1 - 2 * f0 + b1, d2 = a2 - 2 * f0 + b2;
      const double scale = std::max({1.0, std::fabs(f0), std::fabs(a1), std::fabs(b1)});
      if (std::fabs(d1 - 4 * d2) > 1e-9 * scale || rho(c1, c2) > 1e-5) {
        out.smooth = false;
        out.where = "coordinate " + std::to_string(j) + ", output " + std::to_string(r) +
                    ": central differences " + fmt(c1) + " (h) and " + fmt(c2) + " (h/2)";
        return out;
      }
      col[r] = (4 * c2 - c1) / 3;
    }
    out.cols.push_back(std::move(col));
  }
  return out;
}

// Compares elementwise; "" when equal within tol (non-finite values must match exactly).
std::string compare(const std::string& what, const std::vector<double>& got,
                    const std::vector<double>& want, double tol) {
  std::string d = compare_reals(got, want, tol);
  return d.empty() ? "" : what + ": " + d + "\n";
}

// ⟨u, v⟩ and the sum of |u_i v_i|.
std::pair<double, double> inner(const std::vector<double>& u, const std::vector<double>& v) {
  double s = 0, m = 0;
  for (size_t i = 0; i < u.size() && i < v.size(); ++i) {
    s += u[i] * v[i];
    m += std::fabs(u[i] * v[i]);
  }
  return {s, m};
}

double scaled_rho(double x, double y, double magnitude) {
  return std::fabs(x - y) / std::max({1.0, std::fabs(x) + std::fabs(y), magnitude});
}

// ---------------------------------------------------------------------------------------------
// Checks.

// Evaluates `fn`; a failure of a function under test is a failure of the case.
#define EVAL_OR_FAIL(var, c, fn, args, extra)                                       \
  auto var##_r = eval(c, fn, args);                                                 \
  if (!var##_r.ok()) {                                                              \
    return Checked::fail(std::string(fn) + " fails:\n" + var##_r.message() + "\n" + \
                         repro(c, args, extra));                                    \
  }                                                                                 \
  const Value var = var##_r.value()

// Draws inputs where f and g evaluate to finite values (3 tries).
std::optional<std::vector<Value>> finite_point(const Case& c, std::mt19937_64& rng,
                                               std::string* error) {
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::vector<Value> args = random_program_arguments(c.prog, rng);
    auto f = eval(c, "f", args);
    auto g = eval(c, "g", args);
    if (!f.ok() || !g.ok()) {
      *error = "f or g fails (a generator bug?):\n" + (f.ok() ? g.message() : f.message()) + "\n" +
               repro(c, args);
      return std::nullopt;
    }
    if (all_finite(real_elements(f.value())) && all_finite(real_elements(g.value()))) return args;
  }
  return std::nullopt;
}

Checked check_grad_fd(const Case& c, std::mt19937_64& rng) {
  if (c.prog.uses_stop_gradient) return Checked::skip("uses stop_gradient");
  std::string why = "f not smooth";
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string error;
    auto args = finite_point(c, rng, &error);
    if (!error.empty()) return Checked::fail(error);
    if (!args) return Checked::skip("f or g not finite");
    EVAL_OR_FAIL(f0, c, "f", *args, {});
    const auto coords = coordinates(*args, c.prog.real_params());
    Fd fd = finite_differences(c, "f", *args, coords, real_elements(f0));
    if (!fd.error.empty()) return Checked::fail(fd.error + "\n" + repro(c, *args));
    if (!fd.finite) {
      why = "f not finite near the point";
      continue;
    }
    if (!fd.smooth) continue;
    EVAL_OR_FAIL(G, c, "gf", *args, {});
    // A point where a documented slope is infinite (sqrt or norm2 at 0, log at 0) gives an
    // infinite or NaN derivative, as in JAX and PyTorch, while differences see a kink.
    bool finite = true;
    for (double g : real_elements(G)) finite = finite && std::isfinite(g);
    if (!finite) {
      why = "an infinite slope at the point";
      continue;
    }
    std::vector<double> want;
    for (const auto& col : fd.cols) want.push_back(col[0]);
    const std::string d =
        compare("grad(f) vs finite differences", real_elements(G), want, kFdTolerance);
    if (!d.empty()) return Checked::fail(d + repro(c, *args));
    return Checked::ran();
  }
  return Checked::skip(why);
}

Checked check_transpose(const Case& c, std::mt19937_64& rng) {
  std::string error;
  auto args = finite_point(c, rng, &error);
  if (!error.empty()) return Checked::fail(error);
  if (!args) return Checked::skip("f or g not finite");
  EVAL_OR_FAIL(g0, c, "g", *args, {});
  // Tangents for every real parameter, a cotangent like g's result.
  std::vector<Value> jargs = *args;
  std::vector<std::pair<std::string, Value>> extra;
  std::vector<double> t_all;
  for (int k : c.prog.real_params()) {
    Value t = random_like((*args)[static_cast<size_t>(k)], rng);
    for (double x : real_elements(t)) t_all.push_back(x);
    jargs.push_back(t);
    extra.push_back({"tg_" + c.prog.params[static_cast<size_t>(k)].name, t});
  }
  const Value ct = random_like(g0, rng);
  std::vector<Value> vargs = *args;
  vargs.push_back(ct);
  EVAL_OR_FAIL(J, c, "jg", jargs, extra);
  extra.push_back({"ct_", ct});
  EVAL_OR_FAIL(V, c, "vg", vargs, extra);
  if (!J.is_tuple() || J.elems().size() != 2) {
    return Checked::fail("jvp(g) did not return a pair\n" + repro(c, *args, extra));
  }
  std::string d =
      compare("jvp(g) value vs g", real_elements(J.elems()[0]), real_elements(g0), 1e-12);
  const std::vector<double> jt = real_elements(J.elems()[1]), vct = real_elements(V);
  if (!all_finite(jt) || !all_finite(vct)) return Checked::skip("derivative not finite");
  const auto [lhs, ml] = inner(real_elements(ct), jt);
  const auto [rhs, mr] = inner(vct, t_all);
  if (vct.size() != t_all.size()) {
    d += "vjp(g) has " + std::to_string(vct.size()) + " real elements, expected " +
         std::to_string(t_all.size()) + "\n";
  } else if (scaled_rho(lhs, rhs, ml + mr) > kIdentityTol) {
    d += "<ct, J t> = " + fmt(lhs) + " but <J^T ct, t> = " + fmt(rhs) +
         "\n  J t (jvp):      " + to_text(jt) + "\n  J^T ct (vjp):   " + to_text(vct) + "\n";
  }
  if (!d.empty()) return Checked::fail(d + repro(c, *args, extra));
  return Checked::ran();
}

Value basis_like(const Value& like, size_t k) {
  std::vector<double> xs(static_cast<size_t>(real_count(like)), 0.0);
  xs[k] = 1.0;
  return with_real_elements(like, xs);
}

Checked check_jacobian(const Case& c, std::mt19937_64& rng) {
  std::string error;
  auto args = finite_point(c, rng, &error);
  if (!error.empty()) return Checked::fail(error);
  if (!args) return Checked::skip("f or g not finite");
  EVAL_OR_FAIL(g0, c, "g", *args, {});
  EVAL_OR_FAIL(J, c, "Jg", *args, {});
  const Value& a = (*args)[static_cast<size_t>(c.active)];
  const size_t rows = static_cast<size_t>(real_count(g0)),
               cols = static_cast<size_t>(real_count(a));
  const std::vector<double> jac = real_elements(J);
  if (jac.size() != rows * cols) {
    return Checked::fail("jacobian(g) has " + std::to_string(jac.size()) + " elements, expected " +
                         std::to_string(rows) + " x " + std::to_string(cols) + "\n" +
                         repro(c, *args));
  }
  if (!all_finite(jac)) return Checked::skip("jacobian not finite");
  std::string d;
  for (size_t k = 0; k < cols && d.empty(); ++k) {
    std::vector<Value> jargs = *args;
    jargs.push_back(basis_like(a, k));
    EVAL_OR_FAIL(T, c, "jga", jargs,
                 (std::vector<std::pair<std::string, Value>>{{"ta_", jargs.back()}}));
    std::vector<double> col(rows);
    for (size_t r = 0; r < rows; ++r) col[r] = jac[r * cols + k];
    d = compare("column " + std::to_string(k) + " of jacobian(g) vs jvp(g, a)",
                real_elements(T.elems().at(1)), col, kIdentityTol);
  }
  for (size_t r = 0; r < rows && d.empty(); ++r) {
    std::vector<Value> vargs = *args;
    vargs.push_back(basis_like(g0, r));
    EVAL_OR_FAIL(R, c, "vga", vargs,
                 (std::vector<std::pair<std::string, Value>>{{"ct_", vargs.back()}}));
    const std::vector<double> row(jac.begin() + static_cast<long>(r * cols),
                                  jac.begin() + static_cast<long>((r + 1) * cols));
    d = compare("row " + std::to_string(r) + " of jacobian(g) vs vjp(g, a)", real_elements(R), row,
                kIdentityTol);
  }
  if (!d.empty()) return Checked::fail(d + "  jacobian: " + to_text(jac) + "\n" + repro(c, *args));
  return Checked::ran();
}

// Empty when `got` (named `what`) is H v (named `product`), H being n by n row-major, within
// kHvpTol of each element's scale; else why not.
std::string compare_with_hessian_times(const std::string& what, const std::string& product,
                                       const std::vector<double>& got, const std::vector<double>& h,
                                       const std::vector<double>& v) {
  const size_t n = v.size();
  if (got.size() != n) return what + " has the wrong number of elements\n";
  for (size_t i = 0; i < n; ++i) {
    const std::vector<double> row(h.begin() + static_cast<long>(i * n),
                                  h.begin() + static_cast<long>((i + 1) * n));
    const auto [want, mag] = inner(row, v);
    if (scaled_rho(got[i], want, mag) > kHvpTol) {
      return what + " element " + std::to_string(i) + " = " + fmt(got[i]) + " but (" + product +
             ") = " + fmt(want) + "\n  got:     " + to_text(got) + "\n  hessian: " + to_text(h) +
             "\n";
    }
  }
  return "";
}

Checked check_hessian(const Case& c, std::mt19937_64& rng) {
  std::string why = "grad f not smooth";
  for (int attempt = 0; attempt < 3; ++attempt) {
    std::string error;
    auto args = finite_point(c, rng, &error);
    if (!error.empty()) return Checked::fail(error);
    if (!args) return Checked::skip("f or g not finite");
    EVAL_OR_FAIL(H, c, "Hf", *args, {});
    EVAL_OR_FAIL(ga, c, "gfa", *args, {});
    const Value& a = (*args)[static_cast<size_t>(c.active)];
    const size_t na = static_cast<size_t>(real_count(a));
    const std::vector<double> h = real_elements(H), grad = real_elements(ga);
    if (h.size() != na * na) {
      return Checked::fail("hessian(f) has " + std::to_string(h.size()) + " elements, expected " +
                           std::to_string(na * na) + "\n" + repro(c, *args));
    }
    if (!all_finite(h) || !all_finite(grad)) {
      why = "hessian not finite";
      continue;
    }
    std::string d;
    for (size_t i = 0; i < na && d.empty(); ++i) {
      for (size_t j = 0; j < i && d.empty(); ++j) {
        if (rho(h[i * na + j], h[j * na + i]) > kIdentityTol) {
          d = "hessian(f) is not symmetric: H[" + std::to_string(i) + ", " + std::to_string(j) +
              "] = " + fmt(h[i * na + j]) + " but H[" + std::to_string(j) + ", " +
              std::to_string(i) + "] = " + fmt(h[j * na + i]) + "\n  hessian: " + to_text(h) + "\n";
        }
      }
    }
    // jvp(grad(f, a), a)(x, t) = (grad(f, a), H t).
    const Value t = random_like(a, rng);
    std::vector<Value> hargs = *args;
    hargs.push_back(t);
    const std::vector<std::pair<std::string, Value>> extra = {{"ta_", t}};
    EVAL_OR_FAIL(HV, c, "hvp", hargs, extra);
    if (d.empty()) {
      d = compare("jvp(grad(f, a), a) primal vs grad(f, a)", real_elements(HV.elems().at(0)), grad,
                  1e-12);
    }
    if (d.empty()) {
      d = compare_with_hessian_times("jvp(grad(f, a), a)(x, t)", "H t",
                                     real_elements(HV.elems().at(1)), h, real_elements(t));
    }
    // grad(<grad(f, a), w>, a) = H w, reverse over reverse, with w = t.
    EVAL_OR_FAIL(RR, c, "rr", hargs, extra);
    if (d.empty()) {
      d = compare_with_hessian_times("grad(<grad(f, a), w>, a)", "H w", real_elements(RR), h,
                                     real_elements(t));
    }
    if (!d.empty()) return Checked::fail(d + repro(c, *args, extra));
    if (c.prog.uses_stop_gradient) return Checked::ran();  // no finite differences
    // Finite differences of grad(f, a), column by column.
    const auto coords = coordinates(*args, {c.active});
    Fd fd = finite_differences(c, "gfa", *args, coords, grad);
    if (!fd.error.empty()) return Checked::fail(fd.error + "\n" + repro(c, *args));
    if (!fd.finite) {
      why = "grad f not finite near the point";
      continue;
    }
    if (!fd.smooth) continue;
    for (size_t j = 0; j < na && d.empty(); ++j) {
      std::vector<double> col(na);
      for (size_t i = 0; i < na; ++i) col[i] = h[i * na + j];
      d = compare("column " + std::to_string(j) + " of hessian(f) vs finite differences of grad",
                  col, fd.cols[j], kFdTolerance);
    }
    if (!d.empty()) return Checked::fail(d + "  hessian: " + to_text(h) + "\n" + repro(c, *args));
    return Checked::ran();
  }
  return Checked::skip(why);
}

Checked check_value_and_grad(const Case& c, std::mt19937_64& rng) {
  std::string error;
  auto args = finite_point(c, rng, &error);
  if (!error.empty()) return Checked::fail(error);
  if (!args) return Checked::skip("f or g not finite");
  EVAL_OR_FAIL(f0, c, "f", *args, {});
  EVAL_OR_FAIL(G, c, "gf", *args, {});
  EVAL_OR_FAIL(VG, c, "vgf", *args, {});
  if (!VG.is_tuple() || VG.elems().size() != 2) {
    return Checked::fail("value_and_grad(f) did not return a pair\n" + repro(c, *args));
  }
  std::string d =
      compare("value_and_grad(f) value vs f", real_elements(VG.elems()[0]), real_elements(f0), 0.0);
  d += compare("value_and_grad(f) gradient vs grad(f)", real_elements(VG.elems()[1]),
               real_elements(G), 0.0);
  if (!d.empty()) return Checked::fail(d + repro(c, *args));
  return Checked::ran();
}

// ---------------------------------------------------------------------------------------------
// Tests.

TEST(AdRandom, GeneratorIsDeterministic) {
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    EXPECT_EQ(random_program(seed).source, random_program(seed).source);
  }
  EXPECT_NE(random_program(1).source, random_program(2).source);
}

// Every generated program checks, and f and g run on random inputs: otherwise the generator
// has a bug (or the checker or interpreter does).
TEST(AdRandom, GeneratedProgramsCheckAndRun) {
  int programs = 0, finite = 0;
  const auto start = std::chrono::steady_clock::now();
  const double budget = total_budget() * 0.1;
  const int count = fixed_count() > 0 ? fixed_count() : 400;
  for (uint64_t seed = first_seed(); programs < count; ++seed) {
    if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > budget &&
        programs >= 50) {
      break;
    }
    ++programs;
    const RandomProgram p = random_program(seed);
    auto m = Module::from_string(p.source, "random_" + std::to_string(seed) + ".cot");
    ASSERT_TRUE(m.ok()) << "program seed " << seed << " does not check:\n"
                        << m.message() << "\n----- program -----\n"
                        << p.source;
    std::mt19937_64 rng(seed);
    const std::vector<Value> args = random_program_arguments(p, rng);
    EvalOptions opt;
    opt.max_while_iterations = 100000;
    bool all = true;
    for (const char* fn : {"f", "g"}) {
      auto r = m.value().evaluate(fn, args, opt);
      ASSERT_TRUE(r.ok()) << fn << " fails on program seed " << seed << ":\n"
                          << r.message() << "\n----- program -----\n"
                          << p.source;
      all = all && all_finite(real_elements(r.value()));
    }
    finite += all;
  }
  std::cout << "AdRandom.GeneratedProgramsCheckAndRun: " << programs << " programs, " << finite
            << " with finite f and g" << std::endl;
  EXPECT_GE(finite, programs * 8 / 10);
}

TEST(AdRandom, GradMatchesFiniteDifferences) {
  fuzz("grad(f) vs finite differences", 0.25, {"gf"}, check_grad_fd);
}

TEST(AdIdentity, TransposeJvpVjp) {
  fuzz("<ct, J t> = <J^T ct, t>", 0.15, {"jg", "vg"}, check_transpose);
}

TEST(AdIdentity, JacobianMatchesJvpAndVjp) {
  fuzz("jacobian(g) vs jvp and vjp", 0.15, {"Jg", "jga", "vga"}, check_jacobian);
}

TEST(AdIdentity, HessianMatchesFdAndHvp) {
  fuzz("hessian(f) vs finite differences, hvp and reverse over reverse", 0.25,
       {"Hf", "gfa", "hvp", "gw", "rr"}, check_hessian);
}

TEST(AdIdentity, ValueAndGradMatchesGrad) {
  fuzz("value_and_grad(f) vs f and grad(f)", 0.1, {"gf", "vgf"}, check_value_and_grad);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::adtest
