// Scalar primitives in the interpreter: every category, each dtype in its own precision.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "interp/interpreter.h"
#include "interp/tensor_ops.h"
#include "interp_test_util.h"

namespace cot::interp::testing {
namespace COTANGENT_TEST_UNIT {

using ir::Builder;

// Applies one primitive to scalar arguments passed as parameters.
Outcome apply_prim(Prim p, const std::vector<Value>& args) {
  ir::Function f = make_function("p", [&](Builder& b) {
    std::vector<Atom> operands;
    for (size_t k = 0; k < args.size(); ++k) {
      operands.push_back(
          var(b.param("a" + std::to_string(k), Type::scalar(scalar_of(args[k].dtype())))));
    }
    return var(b.prim(p, operands, span(1)));
  });
  return run(f, args);
}

double f64_of(Prim p, std::vector<double> xs) {
  std::vector<Value> args;
  for (double x : xs) args.push_back(Value::f64(x));
  Value v = apply_prim(p, args).value();
  EXPECT_EQ(v.dtype(), DType::F64);
  return v.as_f64();
}
float f32_of(Prim p, std::vector<float> xs) {
  std::vector<Value> args;
  for (float x : xs) args.push_back(Value::f32(x));
  Value v = apply_prim(p, args).value();
  EXPECT_EQ(v.dtype(), DType::F32);
  return v.f32_data()[0];
}
int64_t i64_of(Prim p, std::vector<int64_t> xs) {
  std::vector<Value> args;
  for (int64_t x : xs) args.push_back(Value::i64(x));
  return apply_prim(p, args).value().as_i64();
}

TEST(InterpPrims, RealArithmetic) {
  EXPECT_EQ(f64_of(Prim::Add, {1.5, 2.25}), 3.75);
  EXPECT_EQ(f64_of(Prim::Sub, {1.5, 2.25}), -0.75);
  EXPECT_EQ(f64_of(Prim::Mul, {1.5, 2}), 3);
  EXPECT_EQ(f64_of(Prim::Div, {1, 4}), 0.25);
  EXPECT_EQ(f64_of(Prim::Div, {1, 0}), std::numeric_limits<double>::infinity());  // IEEE
  EXPECT_EQ(f64_of(Prim::Neg, {2}), -2);
  EXPECT_EQ(f64_of(Prim::Pow, {2, 10}), 1024);
  EXPECT_LE(rho(f64_of(Prim::Exp, {1}), std::exp(1.0)), 1e-14);
  EXPECT_LE(rho(f64_of(Prim::Log, {10}), std::log(10.0)), 1e-14);
  EXPECT_LE(rho(f64_of(Prim::Sin, {0.5}), std::sin(0.5)), 1e-14);
  EXPECT_LE(rho(f64_of(Prim::Cos, {0.5}), std::cos(0.5)), 1e-14);
  EXPECT_LE(rho(f64_of(Prim::Tan, {0.5}), std::tan(0.5)), 1e-14);
  EXPECT_LE(rho(f64_of(Prim::Tanh, {0.5}), std::tanh(0.5)), 1e-14);
  EXPECT_EQ(f64_of(Prim::Sqrt, {16}), 4);
  EXPECT_EQ(f64_of(Prim::Abs, {-3}), 3);
  EXPECT_LE(rho(f64_of(Prim::Sigmoid, {0.3}), 1 / (1 + std::exp(-0.3))), 1e-14);
  EXPECT_LE(rho(f64_of(Prim::Log1p, {1e-10}), std::log1p(1e-10)), 1e-14);
  EXPECT_LE(rho(f64_of(Prim::Expm1, {1e-10}), std::expm1(1e-10)), 1e-14);
  EXPECT_LE(rho(f64_of(Prim::Lgamma, {5}), std::log(24.0)), 1e-14);
  EXPECT_LE(rho(f64_of(Prim::Atan2, {1, -1}), std::atan2(1.0, -1.0)), 1e-14);
  EXPECT_EQ(f64_of(Prim::Max, {1, 2}), 2);
  EXPECT_EQ(f64_of(Prim::Min, {1, 2}), 1);
  EXPECT_TRUE(std::isnan(f64_of(Prim::Max, {std::numeric_limits<double>::quiet_NaN(), 2})));
}

TEST(InterpPrims, SinglePrecisionIsComputedInFloat) {
  EXPECT_EQ(f32_of(Prim::Add, {0.1f, 0.2f}), 0.1f + 0.2f);
  EXPECT_EQ(f32_of(Prim::Div, {1.0f, 3.0f}), 1.0f / 3.0f);
  EXPECT_EQ(f32_of(Prim::Exp, {1.0f}), std::exp(1.0f));
  EXPECT_EQ(f32_of(Prim::Mul, {3e38f, 10.0f}), std::numeric_limits<float>::infinity());
}

TEST(InterpPrims, IntegerArithmetic) {
  EXPECT_EQ(i64_of(Prim::Add, {2, 3}), 5);
  EXPECT_EQ(i64_of(Prim::Sub, {2, 3}), -1);
  EXPECT_EQ(i64_of(Prim::Mul, {-4, 3}), -12);
  EXPECT_EQ(i64_of(Prim::Neg, {4}), -4);
  EXPECT_EQ(i64_of(Prim::Abs, {-4}), 4);
  EXPECT_EQ(i64_of(Prim::Max, {-4, 3}), 3);
  EXPECT_EQ(i64_of(Prim::Min, {-4, 3}), -4);
  EXPECT_EQ(i64_of(Prim::ExactDiv, {12, -4}), -3);
  EXPECT_FALSE(apply_prim(Prim::ExactDiv, {Value::i64(7), Value::i64(2)}).ok());
}

TEST(InterpPrims, FloorDivisionAndModulusOfNegatives) {
  EXPECT_EQ(i64_of(Prim::FloorDiv, {7, 2}), 3);
  EXPECT_EQ(i64_of(Prim::Mod, {7, 2}), 1);
  EXPECT_EQ(i64_of(Prim::FloorDiv, {-7, 2}), -4);
  EXPECT_EQ(i64_of(Prim::Mod, {-7, 2}), 1);
  EXPECT_EQ(i64_of(Prim::FloorDiv, {7, -2}), -4);
  EXPECT_EQ(i64_of(Prim::Mod, {7, -2}), -1);
  EXPECT_EQ(i64_of(Prim::FloorDiv, {-7, -2}), 3);
  EXPECT_EQ(i64_of(Prim::Mod, {-7, -2}), -1);
  EXPECT_EQ(i64_of(Prim::FloorDiv, {-6, 2}), -3);
  EXPECT_EQ(i64_of(Prim::Mod, {-6, 2}), 0);
  EXPECT_EQ(i64_of(Prim::Mod, {std::numeric_limits<int64_t>::min(), -1}), 0);
}

TEST(InterpPrims, ComparisonsAndLogic) {
  auto b = [](Prim p, std::vector<Value> args) { return apply_prim(p, args).value().as_bool(); };
  EXPECT_TRUE(b(Prim::Lt, {Value::f64(1), Value::f64(2)}));
  EXPECT_FALSE(b(Prim::Ge, {Value::f64(1), Value::f64(2)}));
  EXPECT_TRUE(b(Prim::Le, {Value::i64(2), Value::i64(2)}));
  EXPECT_TRUE(b(Prim::Gt, {Value::f32(2.5f), Value::f32(2)}));
  EXPECT_TRUE(b(Prim::Ne, {Value::boolean(true), Value::boolean(false)}));
  EXPECT_TRUE(b(Prim::Eq, {Value::boolean(false), Value::boolean(false)}));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(b(Prim::Eq, {Value::f64(nan), Value::f64(nan)}));
  EXPECT_TRUE(b(Prim::Ne, {Value::f64(nan), Value::f64(nan)}));
  EXPECT_TRUE(b(Prim::And, {Value::boolean(true), Value::boolean(true)}));
  EXPECT_FALSE(b(Prim::And, {Value::boolean(true), Value::boolean(false)}));
  EXPECT_TRUE(b(Prim::Or, {Value::boolean(false), Value::boolean(true)}));
  EXPECT_TRUE(b(Prim::Not, {Value::boolean(false)}));
}

TEST(InterpPrims, SelectAndStopGradient) {
  EXPECT_EQ(apply_prim(Prim::Select, {Value::boolean(true), Value::f64(1), Value::f64(2)})
                .value()
                .as_f64(),
            1);
  EXPECT_EQ(apply_prim(Prim::Select, {Value::boolean(false), Value::i64(1), Value::i64(2)})
                .value()
                .as_i64(),
            2);
  EXPECT_EQ(f64_of(Prim::StopGradient, {2.5}), 2.5);
}

TEST(InterpPrims, Conversions) {
  EXPECT_EQ(apply_prim(Prim::ToF64, {Value::boolean(true)}).value().as_f64(), 1);
  EXPECT_EQ(apply_prim(Prim::ToF64, {Value::i64(-3)}).value().as_f64(), -3);
  EXPECT_EQ(apply_prim(Prim::ToF64, {Value::f32(0.1f)}).value().as_f64(),
            static_cast<double>(0.1f));
  EXPECT_EQ(apply_prim(Prim::ToF32, {Value::f64(0.1)}).value().f32_data()[0], 0.1f);
  EXPECT_EQ(apply_prim(Prim::ToF32, {Value::f64(1e300)}).value().f32_data()[0],
            std::numeric_limits<float>::infinity());
  EXPECT_EQ(apply_prim(Prim::ToF32, {Value::f64(-1e300)}).value().f32_data()[0],
            -std::numeric_limits<float>::infinity());
  // Just above the largest float, but below the rounding midpoint: the largest float.
  const double above = static_cast<double>(std::numeric_limits<float>::max()) * (1 + 1e-9);
  EXPECT_EQ(apply_prim(Prim::ToF32, {Value::f64(above)}).value().f32_data()[0],
            std::numeric_limits<float>::max());
  EXPECT_TRUE(
      std::isnan(apply_prim(Prim::ToF32, {Value::f64(std::numeric_limits<double>::quiet_NaN())})
                     .value()
                     .f32_data()[0]));
  EXPECT_EQ(apply_prim(Prim::ToF32, {Value::boolean(true)}).value().f32_data()[0], 1.0f);
  EXPECT_EQ(apply_prim(Prim::ToI64, {Value::f64(2.9)}).value().as_i64(), 2);
  EXPECT_EQ(apply_prim(Prim::ToI64, {Value::f32(-2.9f)}).value().as_i64(), -2);
  EXPECT_EQ(apply_prim(Prim::ToI64, {Value::boolean(true)}).value().as_i64(), 1);
  EXPECT_FALSE(apply_prim(Prim::ToI64, {Value::f64(std::numeric_limits<double>::infinity())}).ok());
}

TEST(InterpPrims, LiteralOperands) {
  // f32 literals are rounded to float once.
  ir::Function f = make_function("f", [](Builder& b) {
    VarId x = b.param("x", f32t());
    return var(b.prim(Prim::Add, {var(x), Atom::real(0.1, Scalar::F32)}));
  });
  EXPECT_EQ(run(f, {Value::f32(0.2f)}).value().f32_data()[0], 0.2f + 0.1f);
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot::interp::testing
