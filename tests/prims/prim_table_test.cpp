#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <limits>
#include <set>
#include <vector>

#include "prims/prim.h"

namespace cot {
namespace COTANGENT_TEST_UNIT {

constexpr size_t kNum = static_cast<size_t>(Prim::kCount);
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<Prim> AllPrims() {
  std::vector<Prim> ps;
  for (size_t i = 0; i < kNum; ++i) ps.push_back(static_cast<Prim>(i));
  return ps;
}

// The relative/absolute distance used for accuracy: |x - y| / max(1, |x| + |y|).
double Rho(double x, double y) {
  return std::fabs(x - y) / std::max(1.0, std::fabs(x) + std::fabs(y));
}

double F64(Prim p, std::vector<double> args) {
  const PrimInfo& info = prim_info(p);
  EXPECT_EQ(static_cast<int>(args.size()), info.arity) << info.name;
  EXPECT_NE(info.eval_f64, nullptr) << info.name;
  return info.eval_f64(args.data());
}

float F32(Prim p, std::vector<float> args) {
  const PrimInfo& info = prim_info(p);
  EXPECT_NE(info.eval_f32, nullptr) << info.name;
  return info.eval_f32(args.data());
}

std::optional<int64_t> I64(Prim p, std::vector<int64_t> args, std::string* why = nullptr) {
  return eval_prim_i64(p, args, why);
}

std::optional<Scalar> TypeOf(Prim p, std::vector<Scalar> ops, std::string* why = nullptr) {
  return prim_result_type(p, ops, why);
}

TEST(PrimTable, EntriesAreIndexedByPrim) {
  std::set<std::string_view> function_names;
  for (Prim p : AllPrims()) {
    const PrimInfo& info = prim_info(p);
    EXPECT_EQ(info.prim, p);
    EXPECT_FALSE(info.name.empty());
    EXPECT_FALSE(info.symbol.empty());
    EXPECT_GE(info.arity, 1);
    EXPECT_LE(info.arity, 3);
    if (info.spelling == Spelling::Function) {
      EXPECT_EQ(info.symbol, info.name);
      EXPECT_TRUE(function_names.insert(info.name).second) << info.name;
      EXPECT_EQ(prim_by_name(info.name), p) << info.name;
    } else {
      EXPECT_EQ(prim_by_name(info.name), std::nullopt) << info.name;
      EXPECT_EQ(info.arity, info.spelling == Spelling::Prefix ? 1 : 2) << info.name;
    }
    // Real evaluation exists exactly for the primitives that compute reals from reals.
    bool real_valued = info.type_rule == TypeRule::SameReal ||
                       info.type_rule == TypeRule::SameNumeric || p == Prim::StopGradient;
    EXPECT_EQ(info.eval_f64 != nullptr, real_valued) << info.name;
    EXPECT_EQ(info.eval_f32 != nullptr, real_valued) << info.name;
  }
}

TEST(PrimTable, NamesAndSymbols) {
  struct Row {
    Prim p;
    const char* name;
    const char* symbol;
  };
  const Row rows[] = {
      {Prim::Add, "add", "+"},
      {Prim::Sub, "sub", "-"},
      {Prim::Mul, "mul", "*"},
      {Prim::Div, "div", "/"},
      {Prim::Neg, "neg", "-"},
      {Prim::Pow, "pow", "pow"},
      {Prim::FloorDiv, "floordiv", "//"},
      {Prim::Mod, "mod", "%"},
      {Prim::ExactDiv, "exactdiv", "/"},
      {Prim::Exp, "exp", "exp"},
      {Prim::Log, "log", "log"},
      {Prim::Sin, "sin", "sin"},
      {Prim::Cos, "cos", "cos"},
      {Prim::Tan, "tan", "tan"},
      {Prim::Tanh, "tanh", "tanh"},
      {Prim::Sqrt, "sqrt", "sqrt"},
      {Prim::Abs, "abs", "abs"},
      {Prim::Sigmoid, "sigmoid", "sigmoid"},
      {Prim::Log1p, "log1p", "log1p"},
      {Prim::Expm1, "expm1", "expm1"},
      {Prim::Lgamma, "lgamma", "lgamma"},
      {Prim::Digamma, "digamma", "digamma"},
      {Prim::Trigamma, "trigamma", "trigamma"},
      {Prim::Atan2, "atan2", "atan2"},
      {Prim::Max, "max", "max"},
      {Prim::Min, "min", "min"},
      {Prim::Lt, "lt", "<"},
      {Prim::Le, "le", "<="},
      {Prim::Gt, "gt", ">"},
      {Prim::Ge, "ge", ">="},
      {Prim::Eq, "eq", "=="},
      {Prim::Ne, "ne", "!="},
      {Prim::And, "and", "&&"},
      {Prim::Or, "or", "||"},
      {Prim::Not, "not", "!"},
      {Prim::Select, "select", "select"},
      {Prim::ToF64, "f64", "f64"},
      {Prim::ToF32, "f32", "f32"},
      {Prim::ToI64, "i64", "i64"},
      {Prim::StopGradient, "stop_gradient", "stop_gradient"},
  };
  EXPECT_EQ(std::size(rows), kNum);
  for (const Row& r : rows) {
    EXPECT_EQ(prim_info(r.p).name, r.name);
    EXPECT_EQ(prim_info(r.p).symbol, r.symbol);
  }
  EXPECT_EQ(prim_info(Prim::Neg).spelling, Spelling::Prefix);
  EXPECT_EQ(prim_info(Prim::Not).spelling, Spelling::Prefix);
  EXPECT_EQ(prim_info(Prim::Mod).spelling, Spelling::Infix);
  EXPECT_EQ(prim_info(Prim::Select).arity, 3);
  EXPECT_EQ(prim_by_name("exp"), Prim::Exp);
  EXPECT_EQ(prim_by_name("stop_gradient"), Prim::StopGradient);
  EXPECT_EQ(prim_by_name("i64"), Prim::ToI64);
  EXPECT_EQ(prim_by_name("+"), std::nullopt);
  EXPECT_EQ(prim_by_name("add"), std::nullopt);
  EXPECT_EQ(prim_by_name("size"), std::nullopt);
}

TEST(PrimTable, CostKinds) {
  EXPECT_EQ(prim_info(Prim::Add).cost, CostKind::Add);
  EXPECT_EQ(prim_info(Prim::Sub).cost, CostKind::Add);
  EXPECT_EQ(prim_info(Prim::Mul).cost, CostKind::Mul);
  EXPECT_EQ(prim_info(Prim::Div).cost, CostKind::Mul);
  EXPECT_EQ(prim_info(Prim::Neg).cost, CostKind::Mul);
  for (Prim p : {Prim::Exp, Prim::Log, Prim::Sin, Prim::Cos, Prim::Tan, Prim::Tanh, Prim::Sqrt,
                 Prim::Abs, Prim::Sigmoid, Prim::Log1p, Prim::Expm1, Prim::Lgamma, Prim::Pow,
                 Prim::Atan2, Prim::Max, Prim::Min}) {
    EXPECT_EQ(prim_info(p).cost, CostKind::Call) << prim_info(p).name;
  }
  for (Prim p : {Prim::Lt, Prim::Le, Prim::Gt, Prim::Ge, Prim::Eq, Prim::Ne, Prim::And, Prim::Or,
                 Prim::Not, Prim::Select, Prim::ToF64, Prim::ToF32, Prim::ToI64, Prim::StopGradient,
                 Prim::FloorDiv, Prim::Mod, Prim::ExactDiv}) {
    EXPECT_EQ(prim_info(p).cost, CostKind::Free) << prim_info(p).name;
  }
}

TEST(PrimTable, NondiffNotes) {
  EXPECT_NE(prim_info(Prim::Abs).nondiff_note.find("abs'(0) = 1"), std::string_view::npos);
  EXPECT_NE(prim_info(Prim::Max).nondiff_note.find("first operand"), std::string_view::npos);
  EXPECT_NE(prim_info(Prim::Min).nondiff_note.find("first operand"), std::string_view::npos);
  EXPECT_NE(prim_info(Prim::Sqrt).nondiff_note.find("inf"), std::string_view::npos);
  EXPECT_NE(prim_info(Prim::ToI64).nondiff_note.find("zero"), std::string_view::npos);
  EXPECT_NE(prim_info(Prim::Lt).nondiff_note.find("zero"), std::string_view::npos);
}

// Known values from mpmath at 40 digits, rounded to the nearest double.
TEST(PrimEval, RealFunctionsAgainstKnownValues) {
  struct Case {
    Prim p;
    std::vector<double> args;
    double expected;
  };
  const Case cases[] = {
      {Prim::Add, {1.5, 2.25}, 3.75},
      {Prim::Sub, {1.5, 2.25}, -0.75},
      {Prim::Mul, {1.5, -2.25}, -3.375},
      {Prim::Div, {1.0, 4.0}, 0.25},
      {Prim::Neg, {2.5}, -2.5},
      {Prim::Pow, {2.0, 0.5}, 1.4142135623730951},
      {Prim::Pow, {3.0, 2.5}, 15.588457268119896},
      {Prim::Pow, {2.0, 10.0}, 1024.0},
      {Prim::Exp, {1.0}, 2.718281828459045},
      {Prim::Exp, {-1.5}, 0.22313016014842982},
      {Prim::Log, {2.0}, 0.6931471805599453},
      {Prim::Log, {10.0}, 2.302585092994046},
      {Prim::Sin, {1.0}, 0.8414709848078965},
      {Prim::Sin, {-2.5}, -0.5984721441039565},
      {Prim::Cos, {1.0}, 0.5403023058681398},
      {Prim::Cos, {3.0}, -0.9899924966004454},
      {Prim::Tan, {1.0}, 1.5574077246549023},
      {Prim::Tan, {-0.7}, -0.8422883804630794},
      {Prim::Tanh, {1.0}, 0.7615941559557649},
      {Prim::Tanh, {-0.3}, -0.2913126124515909},
      {Prim::Sqrt, {2.0}, 1.4142135623730951},
      {Prim::Sqrt, {0.0}, 0.0},
      {Prim::Abs, {-3.5}, 3.5},
      {Prim::Abs, {3.5}, 3.5},
      {Prim::Sigmoid, {0.0}, 0.5},
      {Prim::Sigmoid, {1.0}, 0.7310585786300049},
      {Prim::Sigmoid, {-3.0}, 0.04742587317756678},
      {Prim::Sigmoid, {40.0}, 1.0},
      {Prim::Log1p, {1e-10}, 9.9999999995e-11},
      {Prim::Log1p, {2.0}, 1.0986122886681098},
      {Prim::Expm1, {1e-10}, 1.00000000005e-10},
      {Prim::Expm1, {-0.5}, -0.3934693402873666},
      {Prim::Lgamma, {0.5}, 0.5723649429247001},
      {Prim::Lgamma, {10.0}, 12.801827480081469},
      {Prim::Lgamma, {-0.5}, 1.2655121234846454},
      {Prim::Lgamma, {100.5}, 361.4355404677776},
      // digamma and trigamma: the closed forms ψ(1) = −γ, ψ(1/2) = −γ − 2 ln 2, ψ'(1) = π²/6,
      // ψ'(1/2) = π²/2, the recurrences ψ(x + 1) = ψ(x) + 1/x and ψ'(x + 1) = ψ'(x) − 1/x² for
      // −1/2, and tabulated values at 10.
      {Prim::Digamma, {1.0}, -0.5772156649015329},
      {Prim::Digamma, {0.5}, -1.9635100260214235},
      {Prim::Digamma, {10.0}, 2.251752589066721},
      {Prim::Digamma, {-0.5}, 0.03648997397857652},
      {Prim::Trigamma, {1.0}, 1.6449340668482264},
      {Prim::Trigamma, {0.5}, 4.934802200544679},
      {Prim::Trigamma, {10.0}, 0.10516633568168575},
      {Prim::Trigamma, {-0.5}, 8.934802200544679},
      {Prim::Atan2, {1.0, 1.0}, 0.7853981633974483},
      {Prim::Atan2, {1.0, -1.0}, 2.356194490192345},
      {Prim::Atan2, {-2.0, -1.0}, -2.0344439357957027},
      {Prim::Max, {1.0, 2.0}, 2.0},
      {Prim::Max, {-1.0, -2.0}, -1.0},
      {Prim::Min, {1.0, 2.0}, 1.0},
      {Prim::Min, {-1.0, -2.0}, -2.0},
      {Prim::StopGradient, {4.25}, 4.25},
  };
  for (const Case& c : cases) {
    double got = F64(c.p, c.args);
    // digamma and trigamma sum up to ten recurrence terms before their series: a few ulps.
    const bool series = c.p == Prim::Digamma || c.p == Prim::Trigamma;
    EXPECT_LE(Rho(got, c.expected), series ? 1e-14 : 1e-15)
        << prim_info(c.p).name << ": got " << got << ", expected " << c.expected;
    // f32 agrees to single precision.
    std::vector<float> fargs(c.args.begin(), c.args.end());
    float gotf = F32(c.p, fargs);
    EXPECT_LE(Rho(gotf, c.expected), 3e-7) << prim_info(c.p).name << " (f32)";
  }
}

TEST(PrimEval, SigmoidIsStableForLargeNegativeArguments) {
  // 1 / (1 + exp(800)) would compute exp(800) = inf; the result must be 0, not NaN.
  EXPECT_EQ(F64(Prim::Sigmoid, {-800.0}), 0.0);
  double tiny = F64(Prim::Sigmoid, {-700.0});
  EXPECT_NEAR(tiny / 9.85967654375977e-305, 1.0, 1e-14);
  EXPECT_NEAR(F64(Prim::Sigmoid, {-30.0}) / 9.357622968839299e-14, 1.0, 1e-14);
  EXPECT_EQ(F64(Prim::Sigmoid, {kInf}), 1.0);
  EXPECT_EQ(F64(Prim::Sigmoid, {-kInf}), 0.0);
  EXPECT_TRUE(std::isnan(F64(Prim::Sigmoid, {kNaN})));
  EXPECT_EQ(F32(Prim::Sigmoid, {-200.0f}), 0.0f);
  EXPECT_GT(F32(Prim::Sigmoid, {-100.0f}), 0.0f);  // a subnormal float, not a NaN
  EXPECT_NEAR(F32(Prim::Sigmoid, {-80.0f}) / 1.8048513878454153e-35, 1.0, 1e-6);
}

TEST(PrimEval, MaxMinPropagateNaNAndPreferTheFirstOperandOnTies) {
  EXPECT_TRUE(std::isnan(F64(Prim::Max, {kNaN, 1.0})));
  EXPECT_TRUE(std::isnan(F64(Prim::Max, {1.0, kNaN})));
  EXPECT_TRUE(std::isnan(F64(Prim::Min, {kNaN, 1.0})));
  EXPECT_TRUE(std::isnan(F64(Prim::Min, {1.0, kNaN})));
  EXPECT_TRUE(std::isnan(F32(Prim::Max, {1.0f, std::nanf("")})));
  // -0.0 == 0.0 is a tie: the first operand is returned.
  EXPECT_TRUE(std::signbit(F64(Prim::Max, {-0.0, 0.0})));
  EXPECT_FALSE(std::signbit(F64(Prim::Max, {0.0, -0.0})));
  EXPECT_TRUE(std::signbit(F64(Prim::Min, {-0.0, 0.0})));
  EXPECT_FALSE(std::signbit(F64(Prim::Min, {0.0, -0.0})));
  EXPECT_EQ(F64(Prim::Max, {-kInf, 3.0}), 3.0);
}

TEST(PrimEval, IEEEEdgeCases) {
  EXPECT_EQ(F64(Prim::Log, {0.0}), -kInf);
  EXPECT_TRUE(std::isnan(F64(Prim::Log, {-1.0})));
  EXPECT_TRUE(std::isnan(F64(Prim::Sqrt, {-1.0})));
  EXPECT_EQ(F64(Prim::Div, {1.0, 0.0}), kInf);
  EXPECT_EQ(F64(Prim::Exp, {1000.0}), kInf);
  EXPECT_EQ(F64(Prim::Abs, {-0.0}), 0.0);
  EXPECT_FALSE(std::signbit(F64(Prim::Abs, {-0.0})));
  EXPECT_EQ(F64(Prim::Lgamma, {1.0}), 0.0);
  EXPECT_EQ(F64(Prim::Lgamma, {0.0}), kInf);
}

TEST(PrimEval, Integers) {
  std::string why;
  EXPECT_EQ(I64(Prim::Add, {2, 3}), 5);
  EXPECT_EQ(I64(Prim::Sub, {2, 3}), -1);
  EXPECT_EQ(I64(Prim::Mul, {-4, 3}), -12);
  EXPECT_EQ(I64(Prim::Neg, {7}), -7);
  EXPECT_EQ(I64(Prim::Abs, {-7}), 7);
  EXPECT_EQ(I64(Prim::Abs, {7}), 7);
  EXPECT_EQ(I64(Prim::Max, {3, -4}), 3);
  EXPECT_EQ(I64(Prim::Min, {3, -4}), -4);
  EXPECT_EQ(I64(Prim::Max, {INT64_MIN, INT64_MAX}), INT64_MAX);
  EXPECT_EQ(I64(Prim::Select, {1, 10, 20}), 10);
  EXPECT_EQ(I64(Prim::Select, {0, 10, 20}), 20);
  EXPECT_EQ(I64(Prim::StopGradient, {9}), 9);
  EXPECT_EQ(I64(Prim::ToI64, {-9}), -9);
  EXPECT_EQ(I64(Prim::Exp, {1}, &why), std::nullopt);
  EXPECT_EQ(why, "`exp` is not an integer operation");
}

TEST(PrimEval, IntegerOverflowIsAnError) {
  std::string why;
  EXPECT_EQ(I64(Prim::Add, {INT64_MAX, 1}, &why), std::nullopt);
  EXPECT_EQ(why, "integer overflow in `+`");
  EXPECT_EQ(I64(Prim::Sub, {INT64_MIN, 1}, &why), std::nullopt);
  EXPECT_EQ(why, "integer overflow in `-`");
  EXPECT_EQ(I64(Prim::Mul, {INT64_MAX / 2 + 1, 2}, &why), std::nullopt);
  EXPECT_EQ(why, "integer overflow in `*`");
  EXPECT_EQ(I64(Prim::Neg, {INT64_MIN}, &why), std::nullopt);
  EXPECT_EQ(why, "integer overflow in `-`");
  EXPECT_EQ(I64(Prim::Abs, {INT64_MIN}, &why), std::nullopt);
  EXPECT_EQ(why, "integer overflow in `abs`");
  EXPECT_EQ(I64(Prim::FloorDiv, {INT64_MIN, -1}, &why), std::nullopt);
  EXPECT_EQ(why, "integer overflow in `//`");
  EXPECT_EQ(I64(Prim::ExactDiv, {INT64_MIN, -1}, &why), std::nullopt);
  EXPECT_EQ(why, "integer overflow in `/`");
  EXPECT_EQ(I64(Prim::Mod, {INT64_MIN, -1}), 0);
  EXPECT_EQ(I64(Prim::Add, {INT64_MAX, INT64_MIN}), -1);
  EXPECT_EQ(I64(Prim::Neg, {INT64_MAX}), -INT64_MAX);
}

TEST(PrimEval, FloorDivisionAndModulusFollowPython) {
  // (a, b, a // b, a % b) as Python computes them.
  const int64_t cases[][4] = {
      {7, 2, 3, 1},
      {-7, 2, -4, 1},
      {7, -2, -4, -1},
      {-7, -2, 3, -1},
      {6, 3, 2, 0},
      {-6, 3, -2, 0},
      {0, 5, 0, 0},
      {1, 5, 0, 1},
      {-1, 5, -1, 4},
      {5, 1, 5, 0},
      {INT64_MIN, 2, INT64_MIN / 2, 0},
      {INT64_MAX, -1, -INT64_MAX, 0},
      {INT64_MIN, INT64_MAX, -2, INT64_MAX - 1},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(I64(Prim::FloorDiv, {c[0], c[1]}), c[2]) << c[0] << " // " << c[1];
    EXPECT_EQ(I64(Prim::Mod, {c[0], c[1]}), c[3]) << c[0] << " % " << c[1];
  }
  std::string why;
  EXPECT_EQ(I64(Prim::FloorDiv, {1, 0}, &why), std::nullopt);
  EXPECT_EQ(why, "integer division by zero");
  EXPECT_EQ(I64(Prim::Mod, {1, 0}, &why), std::nullopt);
  EXPECT_EQ(why, "integer division by zero");
}

TEST(PrimEval, ExactDivision) {
  std::string why;
  EXPECT_EQ(I64(Prim::ExactDiv, {12, 4}), 3);
  EXPECT_EQ(I64(Prim::ExactDiv, {-6, 3}), -2);
  EXPECT_EQ(I64(Prim::ExactDiv, {0, -3}), 0);
  EXPECT_EQ(I64(Prim::ExactDiv, {7, 2}, &why), std::nullopt);
  EXPECT_EQ(why, "`/` on integers must divide exactly: 7 / 2; use `//` for floor division");
  EXPECT_EQ(I64(Prim::ExactDiv, {7, 0}, &why), std::nullopt);
  EXPECT_EQ(why, "integer division by zero");
}

TEST(PrimEval, ComparisonsAndLogic) {
  EXPECT_TRUE(eval_prim_compare_f64(Prim::Lt, 1.0, 2.0));
  EXPECT_FALSE(eval_prim_compare_f64(Prim::Lt, 2.0, 2.0));
  EXPECT_TRUE(eval_prim_compare_f64(Prim::Le, 2.0, 2.0));
  EXPECT_TRUE(eval_prim_compare_f64(Prim::Gt, 3.0, 2.0));
  EXPECT_TRUE(eval_prim_compare_f64(Prim::Ge, 2.0, 2.0));
  EXPECT_TRUE(eval_prim_compare_f64(Prim::Eq, 0.0, -0.0));
  EXPECT_TRUE(eval_prim_compare_f64(Prim::Ne, 1.0, 2.0));
  // IEEE: every ordered comparison with NaN is false, != is true.
  for (Prim p : {Prim::Lt, Prim::Le, Prim::Gt, Prim::Ge, Prim::Eq}) {
    EXPECT_FALSE(eval_prim_compare_f64(p, kNaN, 1.0));
  }
  EXPECT_TRUE(eval_prim_compare_f64(Prim::Ne, kNaN, kNaN));
  EXPECT_TRUE(eval_prim_compare_i64(Prim::Lt, INT64_MIN, INT64_MAX));
  EXPECT_FALSE(eval_prim_compare_i64(Prim::Gt, 1, 1));
  EXPECT_TRUE(eval_prim_compare_i64(Prim::Ge, 1, 1));
  EXPECT_TRUE(eval_prim_compare_i64(Prim::Le, -1, 1));
  EXPECT_TRUE(eval_prim_compare_i64(Prim::Eq, 5, 5));
  EXPECT_TRUE(eval_prim_compare_i64(Prim::Ne, 5, 6));
  bool tf[] = {true, false}, tt[] = {true, true}, ff[] = {false, false};
  EXPECT_FALSE(eval_prim_logic(Prim::And, tf));
  EXPECT_TRUE(eval_prim_logic(Prim::And, tt));
  EXPECT_TRUE(eval_prim_logic(Prim::Or, tf));
  EXPECT_FALSE(eval_prim_logic(Prim::Or, ff));
  EXPECT_FALSE(eval_prim_logic(Prim::Not, std::span<const bool>(tt, 1)));
  EXPECT_TRUE(eval_prim_logic(Prim::Not, std::span<const bool>(ff, 1)));
}

TEST(PrimEval, ConvertRealToI64) {
  std::string why;
  EXPECT_EQ(convert_real_to_i64(2.9, &why), 2);
  EXPECT_EQ(convert_real_to_i64(-2.9, &why), -2);
  EXPECT_EQ(convert_real_to_i64(-0.5, &why), 0);
  EXPECT_EQ(convert_real_to_i64(-0x1p63, &why), INT64_MIN);
  EXPECT_EQ(convert_real_to_i64(0x1p63 - 1024, &why), INT64_MAX - 1023);
  EXPECT_EQ(convert_real_to_i64(0x1p63, &why), std::nullopt);
  EXPECT_EQ(why, "`i64` of 9.2233720368547758e+18 is out of the i64 range");
  EXPECT_EQ(convert_real_to_i64(-0x1p63 - 2048, &why), std::nullopt);
  EXPECT_EQ(convert_real_to_i64(kNaN, &why), std::nullopt);
  EXPECT_EQ(why, "`i64` of NaN has no integer value");
  EXPECT_EQ(convert_real_to_i64(kInf, &why), std::nullopt);
  EXPECT_EQ(why, "`i64` of inf has no integer value");
  EXPECT_EQ(convert_real_to_i64(-kInf, nullptr), std::nullopt);
}

TEST(PrimTypes, Arithmetic) {
  using S = Scalar;
  std::string why;
  EXPECT_EQ(TypeOf(Prim::Add, {S::F64, S::F64}), S::F64);
  EXPECT_EQ(TypeOf(Prim::Add, {S::F32, S::F32}), S::F32);
  EXPECT_EQ(TypeOf(Prim::Add, {S::I64, S::I64}), S::I64);
  for (Prim p : {Prim::Sub, Prim::Mul, Prim::Max, Prim::Min}) {
    EXPECT_EQ(TypeOf(p, {S::I64, S::I64}), S::I64) << prim_info(p).name;
  }
  EXPECT_EQ(TypeOf(Prim::Neg, {S::I64}), S::I64);
  EXPECT_EQ(TypeOf(Prim::Abs, {S::I64}), S::I64);
  EXPECT_EQ(TypeOf(Prim::Add, {S::F64, S::F32}, &why), std::nullopt);
  EXPECT_EQ(why, "operands of `+` have different types f64 and f32");
  EXPECT_EQ(TypeOf(Prim::Add, {S::Bool, S::Bool}, &why), std::nullopt);
  EXPECT_EQ(why, "`+` needs numeric (f64, f32 or i64) operands, found bool");
  EXPECT_EQ(TypeOf(Prim::Div, {S::I64, S::I64}, &why), std::nullopt);
  EXPECT_EQ(why, "`/` needs real (f64 or f32) operands, found i64");
  EXPECT_EQ(TypeOf(Prim::Div, {S::F32, S::F32}), S::F32);
  EXPECT_EQ(TypeOf(Prim::Pow, {S::I64, S::I64}, &why), std::nullopt);
  EXPECT_EQ(why, "`pow` needs real (f64 or f32) arguments, found i64");
  EXPECT_EQ(TypeOf(Prim::Exp, {S::I64}, &why), std::nullopt);
  EXPECT_EQ(why, "`exp` needs a real (f64 or f32) argument, found i64");
  EXPECT_EQ(TypeOf(Prim::Neg, {S::Bool}, &why), std::nullopt);
  EXPECT_EQ(why, "`-` needs a numeric (f64, f32 or i64) operand, found bool");
  for (Prim p : {Prim::Exp, Prim::Log, Prim::Sin, Prim::Cos, Prim::Tan, Prim::Tanh, Prim::Sqrt,
                 Prim::Sigmoid, Prim::Log1p, Prim::Expm1, Prim::Lgamma}) {
    EXPECT_EQ(TypeOf(p, {S::F32}), S::F32) << prim_info(p).name;
    EXPECT_EQ(TypeOf(p, {S::I64}), std::nullopt) << prim_info(p).name;
  }
  EXPECT_EQ(TypeOf(Prim::Atan2, {S::F64, S::F64}), S::F64);
  EXPECT_EQ(TypeOf(Prim::Exp, {S::F64, S::F64}, &why), std::nullopt);
  EXPECT_EQ(why, "`exp` takes 1 argument, found 2");
}

TEST(PrimTypes, IntegersComparisonsLogicSelect) {
  using S = Scalar;
  std::string why;
  for (Prim p : {Prim::FloorDiv, Prim::Mod, Prim::ExactDiv}) {
    EXPECT_EQ(TypeOf(p, {S::I64, S::I64}), S::I64);
    EXPECT_EQ(TypeOf(p, {S::F64, S::F64}), std::nullopt);
  }
  EXPECT_EQ(TypeOf(Prim::FloorDiv, {S::F64, S::I64}, &why), std::nullopt);
  EXPECT_EQ(why, "`//` needs i64 operands, found f64 and i64");
  for (Prim p : {Prim::Lt, Prim::Le, Prim::Gt, Prim::Ge, Prim::Eq, Prim::Ne}) {
    EXPECT_EQ(TypeOf(p, {S::F64, S::F64}), S::Bool);
    EXPECT_EQ(TypeOf(p, {S::I64, S::I64}), S::Bool);
    EXPECT_EQ(TypeOf(p, {S::F32, S::F32}), S::Bool);
  }
  EXPECT_EQ(TypeOf(Prim::Eq, {S::Bool, S::Bool}), S::Bool);
  EXPECT_EQ(TypeOf(Prim::Ne, {S::Bool, S::Bool}), S::Bool);
  EXPECT_EQ(TypeOf(Prim::Lt, {S::Bool, S::Bool}, &why), std::nullopt);
  EXPECT_NE(why.find("`<` compares numbers"), std::string::npos);
  EXPECT_EQ(TypeOf(Prim::Lt, {S::F64, S::I64}, &why), std::nullopt);
  EXPECT_EQ(why, "operands of `<` have different types f64 and i64");
  EXPECT_EQ(TypeOf(Prim::And, {S::Bool, S::Bool}), S::Bool);
  EXPECT_EQ(TypeOf(Prim::Not, {S::Bool}), S::Bool);
  EXPECT_EQ(TypeOf(Prim::Or, {S::Bool, S::I64}, &why), std::nullopt);
  EXPECT_EQ(why, "`||` needs bool operands, found bool and i64");
  EXPECT_EQ(TypeOf(Prim::Select, {S::Bool, S::F32, S::F32}), S::F32);
  EXPECT_EQ(TypeOf(Prim::Select, {S::Bool, S::I64, S::I64}), S::I64);
  EXPECT_EQ(TypeOf(Prim::Select, {S::F64, S::F64, S::F64}, &why), std::nullopt);
  EXPECT_EQ(why, "the condition of `select` must be bool, found f64");
  EXPECT_EQ(TypeOf(Prim::Select, {S::Bool, S::F64, S::I64}, &why), std::nullopt);
  EXPECT_EQ(why, "branches of `select` have different types f64 and i64");
}

TEST(PrimTypes, ConversionsAcceptEveryScalar) {
  using S = Scalar;
  for (S s : {S::F64, S::F32, S::I64, S::Bool}) {
    EXPECT_EQ(TypeOf(Prim::ToF64, {s}), S::F64);
    EXPECT_EQ(TypeOf(Prim::ToF32, {s}), S::F32);
    EXPECT_EQ(TypeOf(Prim::ToI64, {s}), S::I64);
    EXPECT_EQ(TypeOf(Prim::StopGradient, {s}), s);
  }
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
