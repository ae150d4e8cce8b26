// Derivatives of every function of the end-to-end test programs (tests/e2e/programs/*.cot and
// examples/*.cot, found as e2e_test.cpp finds them) against finite differences.
//
// For each function with at least one real parameter and an all-real result, and for up to two
// of its (non-error) end-to-end cases: integer and boolean arguments and all shapes are taken
// from the case, the real arguments are drawn at random (fixed seeds), and
//   - a real scalar result: grad(f) and value_and_grad(f) against the FD gradient;
//   - a real tensor result: jacobian(f, a) for each real tensor parameter a against the FD
//     Jacobian;
//   - every all-real result, tuples included: jvp(f)(x, t) = (f(x), J t) and
//     vjp(f)(x, ct) = Jᵀ ct for random t and ct.
// Inputs where the function fails, is not finite, or where the finite differences are
// inconsistent (a kink or pole within the step) are redrawn once with positive reals and then
// skipped; skips are counted, and most cases of every program must run.
#include <gtest/gtest.h>

#include <cctype>
#include <iostream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "ad/fd_harness.h"
#include "e2e/e2e_cases.h"

namespace cotangent::adtest {
namespace COTANGENT_TEST_UNIT {

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

bool mentions_f32(const TypeSpec& t) {
  if (!t.is_tuple) return t.dtype == DType::F32;
  for (const TypeSpec& e : t.elems) {
    if (mentions_f32(e)) return true;
  }
  return false;
}

std::string spelled(DType t, const std::vector<std::string>& dims) {
  std::string s = dtype_name(t);
  if (dims.empty()) return s;
  s += "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? ", " : "") + dims[i];
  return s + "]";
}

struct Target {
  FunctionInfo info;
  std::vector<int> active;  // real parameters
  std::vector<TypeSpec> param_types;
  TypeSpec result;
  bool f32 = false;
};

// Derived functions of `fn`, appended to the program: adt_grad and adt_vag (scalar results),
// adt_jvp, adt_vjp, and adt_jac_<k> for each real tensor parameter k (tensor results).
std::string wrappers(const Target& t) {
  const FunctionInfo& f = t.info;
  std::string decl, call;
  for (size_t i = 0; i < f.params.size(); ++i) {
    decl += (i ? ", " : "") + f.params[i].name + ": " + f.params[i].type;
    call += (i ? ", " : "") + f.params[i].name;
  }
  std::string G;
  if (t.active.size() == 1) {
    G = f.params[static_cast<size_t>(t.active[0])].type;
  } else {
    G = "(";
    for (size_t i = 0; i < t.active.size(); ++i) {
      G += (i ? ", " : "") + f.params[static_cast<size_t>(t.active[i])].type;
    }
    G += ")";
  }
  const std::string& R = f.result_type;
  std::ostringstream s;
  s << "\n# derived functions for the AD finite-difference test\n";
  if (t.result.is_scalar()) {
    s << "def adt_grad(" << decl << ") -> " << G << " { grad(" << f.name << ")(" << call << ") }\n";
    s << "def adt_vag(" << decl << ") -> (" << R << ", " << G << ") { value_and_grad(" << f.name
      << ")(" << call << ") }\n";
  }
  std::string tdecl, tcall;
  for (int a : t.active) {
    const ParamInfo& p = f.params[static_cast<size_t>(a)];
    tdecl += ", adt_t_" + p.name + ": " + p.type;
    tcall += ", adt_t_" + p.name;
  }
  s << "def adt_jvp(" << decl << tdecl << ") -> (" << R << ", " << R << ") { jvp(" << f.name << ")("
    << call << tcall << ") }\n";
  s << "def adt_vjp(" << decl << ", adt_ct: " << R << ") -> " << G << " { vjp(" << f.name << ")("
    << call << ", adt_ct) }\n";
  if (!t.result.is_tuple) {
    for (int a : t.active) {
      const TypeSpec& pt = t.param_types[static_cast<size_t>(a)];
      if (pt.is_tuple) continue;
      std::vector<std::string> dims = t.result.dims;
      dims.insert(dims.end(), pt.dims.begin(), pt.dims.end());
      s << "def adt_jac_" << a << "(" << decl << ") -> " << spelled(t.result.dtype, dims)
        << " { jacobian(" << f.name << ", " << f.params[static_cast<size_t>(a)].name << ")(" << call
        << ") }\n";
    }
  }
  return s.str();
}

struct Stats {
  int attempted = 0;
  int ran = 0;
  std::map<std::string, int> skipped;  // by reason
  std::set<std::string> functions;
};

const EvalOptions kEval{100000};

// Runs the checks for one case. Records a skip when no usable input is found.
void check_case(const Module& m, const Target& t, const std::vector<Value>& base,
                std::mt19937_64& rng, Stats& stats) {
  ++stats.attempted;
  FdOptions opt;
  opt.max_columns = 60;
  if (t.f32) opt.rel_step = opt.f32_rel_step;
  const double tol = t.f32 ? 2e-3 : kFdTol;
  const double max_inconsistency = t.f32 ? 1e-2 : 1e-4;
  std::vector<Value> args;
  Result<FdJacobian> J = Error{};
  std::string reason;
  for (auto [lo, hi] : {std::pair{-1.0, 1.0}, std::pair{0.2, 1.2}}) {
    args = base;
    for (int a : t.active) {
      args[static_cast<size_t>(a)] = random_like(base[static_cast<size_t>(a)], rng, lo, hi);
    }
    J = fd_jacobian(m, t.info.name, args, t.active, opt);
    if (!J.ok()) {
      reason = "evaluation error";
      continue;
    }
    if (!J.value().finite) {
      reason = "not finite";
      continue;
    }
    if (J.value().inconsistency > max_inconsistency) {
      reason = "finite differences inconsistent";
      continue;
    }
    reason.clear();
    break;
  }
  if (!reason.empty()) {
    ++stats.skipped[reason];
    return;
  }
  ++stats.ran;
  const FdJacobian& fd = J.value();
  std::ostringstream where;
  where << t.info.name << " at ";
  for (size_t i = 0; i < args.size(); ++i) {
    where << (i ? ", " : "") << t.info.params[i].name << " = " << value_to_json(args[i]);
  }
  SCOPED_TRACE(where.str());
  auto eval = [&](const std::string& fn, const std::vector<Value>& a) {
    return m.evaluate(fn, a, kEval);
  };
  if (t.result.is_scalar()) {
    auto g = eval("adt_grad", args);
    if (g.ok()) {
      std::string d = compare_reals(real_elements(g.value()), fd.row(0), tol, &fd.computed);
      EXPECT_TRUE(d.empty()) << "grad vs finite differences: " << d;
    } else {
      ADD_FAILURE() << "grad(" << t.info.name << ") failed:\n" << g.message();
    }
    auto vg = eval("adt_vag", args);
    if (vg.ok()) {
      ASSERT_TRUE(vg.value().is_tuple());
      EXPECT_TRUE(ValueNear(vg.value().elems()[0], fd.value, 1e-12)) << "value_and_grad value";
      std::string d =
          compare_reals(real_elements(vg.value().elems()[1]), fd.row(0), tol, &fd.computed);
      EXPECT_TRUE(d.empty()) << "value_and_grad vs finite differences: " << d;
    } else {
      ADD_FAILURE() << "value_and_grad(" << t.info.name << ") failed:\n" << vg.message();
    }
  }
  if (!t.result.is_tuple) {
    int64_t offset = 0;
    for (int a : t.active) {
      const int64_t n = real_count(args[static_cast<size_t>(a)]);
      if (!t.param_types[static_cast<size_t>(a)].is_tuple) {
        const std::string jac = "adt_jac_" + std::to_string(a);
        auto r = eval(jac, args);
        if (r.ok()) {
          std::vector<double> want;
          std::vector<bool> mask;
          for (int64_t row = 0; row < fd.rows; ++row) {
            for (int64_t c = offset; c < offset + n; ++c) {
              want.push_back(fd.at(row, c));
              mask.push_back(fd.computed[static_cast<size_t>(c)]);
            }
          }
          std::string d = compare_reals(real_elements(r.value()), want, tol, &mask);
          EXPECT_TRUE(d.empty()) << "jacobian(" << t.info.name << ", "
                                 << t.info.params[static_cast<size_t>(a)].name
                                 << ") vs finite differences: " << d;
        } else {
          ADD_FAILURE() << "jacobian(" << t.info.name << ", "
                        << t.info.params[static_cast<size_t>(a)].name << ") failed:\n"
                        << r.message();
        }
      }
      offset += n;
    }
  }
  // jvp with a random tangent supported on the computed columns.
  {
    std::vector<double> tan = random_reals(static_cast<size_t>(fd.cols), rng);
    for (int64_t c = 0; c < fd.cols; ++c) {
      if (!fd.computed[static_cast<size_t>(c)]) tan[static_cast<size_t>(c)] = 0.0;
    }
    std::vector<Value> jargs = args;
    size_t pos = 0;
    for (int a : t.active) {
      jargs.push_back(with_real_elements(args[static_cast<size_t>(a)], tan, &pos));
    }
    auto r = eval("adt_jvp", jargs);
    if (r.ok()) {
      ASSERT_TRUE(r.value().is_tuple());
      ASSERT_EQ(r.value().elems().size(), 2u);
      EXPECT_TRUE(ValueNear(r.value().elems()[0], fd.value, 1e-12)) << "jvp primal value";
      // f32 tangents are rounded: compare with J t of the rounded tangent.
      std::vector<double> rounded;
      for (size_t i = static_cast<size_t>(args.size()); i < jargs.size(); ++i) {
        for (double v : real_elements(jargs[i])) rounded.push_back(v);
      }
      std::string d = compare_reals(real_elements(r.value().elems()[1]), fd.times(rounded), tol);
      EXPECT_TRUE(d.empty()) << "jvp tangent vs J t: " << d;
    } else {
      ADD_FAILURE() << "jvp(" << t.info.name << ") failed:\n" << r.message();
    }
  }
  // vjp with a random cotangent.
  {
    Value ct = random_like(fd.result, rng);
    std::vector<Value> vargs = args;
    vargs.push_back(ct);
    auto r = eval("adt_vjp", vargs);
    if (r.ok()) {
      std::string d = compare_reals(real_elements(r.value()), fd.transpose_times(real_elements(ct)),
                                    tol, &fd.computed);
      EXPECT_TRUE(d.empty()) << "vjp vs Jᵀ ct: " << d;
    } else {
      ADD_FAILURE() << "vjp(" << t.info.name << ") failed:\n" << r.message();
    }
  }
}

// Functions whose derivative finite differences cannot measure, by "program/function". Their
// AD derivative is right and differs from what a finite difference sees. (Functions that use
// stop_gradient, directly or through a call, are recognised from their printed Core IR.)
const std::map<std::string, std::string>& not_fd_differentiable() {
  static const std::map<std::string, std::string> m = {
      {"while_loops/cbrt_bisect",
       "bisection: the result depends on c only through comparisons (derivative 0), but it "
       "approximates cbrt(c) to 1e-12, far below the finite-difference step"},
  };
  return m;
}

class ProgramDerivatives : public ::testing::TestWithParam<e2e::Program> {};

TEST_P(ProgramDerivatives, MatchFiniteDifferences) {
  const e2e::Program& p = GetParam();
  const std::string source = e2e::read_text(p.source);
  const std::string file = p.source.substr(p.source.rfind('/') + 1);
  auto base = Module::from_string(source, file);
  ASSERT_TRUE(base.ok()) << base.message();
  const std::vector<e2e::Case> cases = e2e::load_cases(p);
  Stats stats;
  int functions = 0;
  for (const std::string& fn : base.value().function_names()) {
    auto info = base.value().function(fn);
    ASSERT_TRUE(info.ok()) << info.message();
    Target t;
    t.info = info.value();
    bool parsed = true;
    for (size_t i = 0; i < t.info.params.size(); ++i) {
      TypeSpec ts;
      std::string why;
      parsed = parsed && parse_type(t.info.params[i].type, &ts, &why);
      t.param_types.push_back(ts);
      if (kind_is_real(t.info.params[i].kind)) t.active.push_back(static_cast<int>(i));
      if (mentions_f32(ts)) t.f32 = true;
    }
    std::string why;
    ASSERT_TRUE(parsed && parse_type(t.info.result_type, &t.result, &why))
        << fn << ": " << t.info.result_type << " " << why;
    if (t.active.empty() || !t.result.all_real()) continue;
    if (mentions_f32(t.result)) t.f32 = true;
    if (not_fd_differentiable().count(p.name + "/" + fn)) continue;
    auto printed = base.value().print(fn);
    ASSERT_TRUE(printed.ok()) << printed.message();
    if (printed.value().find("stop_gradient") != std::string::npos) continue;
    ++functions;
    SCOPED_TRACE(p.name + "/" + fn);
    auto m = Module::from_string(source + wrappers(t), file);
    if (!m.ok()) {
      ADD_FAILURE() << "the derived functions of " << fn << " do not check:\n"
                    << wrappers(t) << "\n"
                    << m.message();
      continue;
    }
    // Up to two cases of this function, as sources of shapes and integer arguments.
    int used = 0;
    for (const e2e::Case& c : cases) {
      if (c.fn != fn || c.is_error() || used >= 2) continue;
      auto args = e2e::case_arguments(m.value(), c);
      if (!args.ok()) continue;
      int64_t reals = 0;
      for (int a : t.active) reals += real_count(args.value()[static_cast<size_t>(a)]);
      if (reals == 0) continue;  // nothing to differentiate
      ++used;
      std::mt19937_64 rng(fnv1a(c.key()));
      stats.functions.insert(fn);
      check_case(m.value(), t, args.value(), rng, stats);
    }
    if (used == 0) {
      // No usable case: random arguments (sizes 3..5, integers 0..2).
      std::mt19937_64 rng(fnv1a(p.name + "/" + fn));
      auto args = random_arguments(t.info, rng);
      ASSERT_TRUE(args.ok()) << args.message();
      stats.functions.insert(fn);
      check_case(m.value(), t, args.value(), rng, stats);
    }
  }
  std::ostringstream summary;
  summary << p.name << ": " << functions << " differentiable functions, " << stats.attempted
          << " cases, " << stats.ran << " ran";
  for (const auto& [reason, n] : stats.skipped)
    summary << ", " << n << " skipped (" << reason << ")";
  RecordProperty("summary", summary.str());
  std::cout << "[ AD-FD    ] " << summary.str() << "\n";
  // Most cases must run: the skips are for inputs outside a function's domain.
  EXPECT_GE(4 * stats.ran, 3 * stats.attempted) << summary.str();
}

INSTANTIATE_TEST_SUITE_P(AdFiniteDiffPrograms, ProgramDerivatives,
                         ::testing::ValuesIn(e2e::programs()),
                         [](const ::testing::TestParamInfo<e2e::Program>& info) {
                           std::string s = info.param.name;
                           for (char& ch : s) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return s;
                         });

// Every program with differentiable functions is covered, and the programs exist.
TEST(AdFiniteDiffProgramsCoverage, ProgramsAreFound) {
  const std::vector<e2e::Program> ps = e2e::programs();
  EXPECT_GE(ps.size(), 20u);
  bool quickstart = false;
  for (const e2e::Program& p : ps) quickstart = quickstart || p.name == "examples/quickstart";
  EXPECT_TRUE(quickstart);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent::adtest
