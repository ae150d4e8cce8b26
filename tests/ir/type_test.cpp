#include "ir/type.h"

#include <gtest/gtest.h>

namespace cot {
namespace COTANGENT_TEST_UNIT {

TEST(Type, ScalarNames) {
  EXPECT_STREQ(to_string(Scalar::F64), "f64");
  EXPECT_STREQ(to_string(Scalar::F32), "f32");
  EXPECT_STREQ(to_string(Scalar::I64), "i64");
  EXPECT_STREQ(to_string(Scalar::Bool), "bool");
  EXPECT_TRUE(is_real(Scalar::F32));
  EXPECT_FALSE(is_real(Scalar::I64));
  EXPECT_TRUE(is_numeric(Scalar::I64));
  EXPECT_FALSE(is_numeric(Scalar::Bool));
}

TEST(Type, SourceSpelling) {
  SizeExpr n = SizeExpr::var("n"), m = SizeExpr::var("m"), k = SizeExpr::var("k");
  EXPECT_EQ(Type::scalar(Scalar::F64).to_string(), "f64");
  EXPECT_EQ(Type::scalar(Scalar::Bool).to_string(), "bool");
  EXPECT_EQ(Type::tensor(Scalar::F64, {n, m + SizeExpr::constant(1)}).to_string(), "f64[n, m + 1]");
  EXPECT_EQ(Type::tensor(Scalar::I64, {SizeExpr::constant(3)}).to_string(), "i64[3]");
  EXPECT_EQ(Type::tuple({Type::scalar(Scalar::F64), Type::tensor(Scalar::I64, {k})}).to_string(),
            "(f64, i64[k])");
  EXPECT_EQ(Type::tuple({Type::tuple({Type::scalar(Scalar::F32)}), Type::scalar(Scalar::F64)})
                .to_string(),
            "((f32), f64)");
}

TEST(Type, Shape) {
  Type t = Type::tensor(Scalar::F32, {SizeExpr::var("n"), SizeExpr::constant(2)});
  EXPECT_TRUE(t.is_tensor());
  EXPECT_FALSE(t.is_scalar());
  EXPECT_EQ(t.rank(), 2u);
  EXPECT_TRUE(Type::scalar(Scalar::I64).is_scalar());
  EXPECT_FALSE(Type::tuple({}).is_scalar());
}

TEST(Type, Equality) {
  SizeExpr n = SizeExpr::var("n"), k = SizeExpr::var("k");
  SizeExpr one = SizeExpr::constant(1);
  EXPECT_EQ(Type::tensor(Scalar::F64, {n - k + one}), Type::tensor(Scalar::F64, {one + n - k}));
  EXPECT_NE(Type::tensor(Scalar::F64, {n}), Type::tensor(Scalar::F32, {n}));
  EXPECT_NE(Type::tensor(Scalar::F64, {n}), Type::tensor(Scalar::F64, {k}));
  EXPECT_NE(Type::tensor(Scalar::F64, {n}), Type::tensor(Scalar::F64, {n, n}));
  EXPECT_NE(Type::scalar(Scalar::F64), Type::tuple({Type::scalar(Scalar::F64)}));
  EXPECT_EQ(Type::tuple({Type::scalar(Scalar::F64)}), Type::tuple({Type::scalar(Scalar::F64)}));
  EXPECT_NE(Type::tuple({Type::scalar(Scalar::F64)}), Type::tuple({Type::scalar(Scalar::I64)}));
  // A tuple's unused element-type field does not matter.
  Type a = Type::tuple({}), b = Type::tuple({});
  b.elem = Scalar::Bool;
  EXPECT_EQ(a, b);
}

TEST(Type, RealValued) {
  EXPECT_TRUE(Type::scalar(Scalar::F64).is_real_valued());
  EXPECT_TRUE(Type::tensor(Scalar::F32, {SizeExpr::var("n")}).is_real_valued());
  EXPECT_FALSE(Type::scalar(Scalar::I64).is_real_valued());
  EXPECT_FALSE(Type::scalar(Scalar::Bool).is_real_valued());
  EXPECT_TRUE(Type::tuple({Type::scalar(Scalar::F64), Type::tuple({Type::scalar(Scalar::F32)})})
                  .is_real_valued());
  EXPECT_FALSE(
      Type::tuple({Type::scalar(Scalar::F64), Type::scalar(Scalar::I64)}).is_real_valued());
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cot
