#include "cotangent/value.h"

#include <gtest/gtest.h>

#include <climits>
#include <cmath>

#include "cotangent/error.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

TEST(Value, DefaultIsF64Zero) {
  Value v;
  EXPECT_TRUE(v.is_scalar());
  EXPECT_EQ(v.dtype(), DType::F64);
  EXPECT_EQ(v.as_f64(), 0.0);
  EXPECT_EQ(v.numel(), 1);
  EXPECT_EQ(v.type_string(), "f64");
}

TEST(Value, Scalars) {
  Value a = Value::f64(2.5), b = Value::f32(1.5f), c = Value::i64(-7), d = Value::boolean(true);
  EXPECT_EQ(a.as_f64(), 2.5);
  EXPECT_EQ(b.as_f64(), 1.5);
  EXPECT_EQ(c.as_i64(), -7);
  EXPECT_TRUE(d.as_bool());
  EXPECT_FALSE(Value::boolean(false).as_bool());
  EXPECT_EQ(a.rank(), 0);
  EXPECT_EQ(c.numel(), 1);
  EXPECT_EQ(b.type_string(), "f32");
  EXPECT_EQ(c.type_string(), "i64");
  EXPECT_EQ(d.type_string(), "bool");
  // A scalar's data is a one-element span over the inline value.
  ASSERT_EQ(a.f64_data().size(), 1u);
  EXPECT_EQ(a.f64_data()[0], 2.5);
  EXPECT_EQ(b.f32_data()[0], 1.5f);
  EXPECT_EQ(c.i64_data()[0], -7);
  EXPECT_EQ(d.bool_data()[0], 1);
  EXPECT_TRUE(a.i64_data().empty());  // wrong dtype
  EXPECT_EQ(c.element_as_f64(0), -7.0);
  EXPECT_EQ(d.element_as_f64(0), 1.0);
  Value e = Value::i64(3);
  e.i64_mut()[0] = 4;
  EXPECT_EQ(e.as_i64(), 4);
}

TEST(Value, Zeros) {
  Value t = Value::zeros(DType::F64, {2, 3});
  EXPECT_FALSE(t.is_scalar());
  EXPECT_EQ(t.rank(), 2);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.type_string(), "f64[2, 3]");
  ASSERT_EQ(t.f64_data().size(), 6u);
  for (double x : t.f64_data()) EXPECT_EQ(x, 0.0);
  t.f64_mut()[4] = 9.5;
  EXPECT_EQ(t.element_as_f64(4), 9.5);
  EXPECT_TRUE(std::isnan(t.element_as_f64(6)));
  // Copies share storage.
  Value u = t;
  EXPECT_EQ(u.f64_data()[4], 9.5);

  Value i = Value::zeros(DType::I64, {4});
  EXPECT_EQ(i.i64_data().size(), 4u);
  Value f = Value::zeros(DType::F32, {0, 5});
  EXPECT_EQ(f.numel(), 0);
  EXPECT_TRUE(f.f32_data().empty());
  Value b = Value::zeros(DType::Bool, {3});
  EXPECT_EQ(b.bool_data().size(), 3u);
  EXPECT_EQ(b.type_string(), "bool[3]");
  // Rank 0 gives a scalar zero whose accessors work.
  Value s = Value::zeros(DType::I64, {});
  EXPECT_TRUE(s.is_scalar());
  EXPECT_EQ(s.as_i64(), 0);
  EXPECT_EQ(s.i64_data().size(), 1u);
  // A large tensor (its storage on huge pages) is zero throughout and writable at its end.
  Value big = Value::zeros(DType::F32, {3, 1 << 20});
  ASSERT_EQ(big.f32_data().size(), size_t{3} << 20);
  int64_t nonzero = 0;
  for (float x : big.f32_data()) nonzero += x != 0.0f;
  EXPECT_EQ(nonzero, 0);
  big.f32_mut()[(size_t{3} << 20) - 1] = 2.5f;
  EXPECT_EQ(big.element_as_f64((int64_t{3} << 20) - 1), 2.5);
}

TEST(Value, CheckedNumel) {
  int64_t n = -1;
  EXPECT_TRUE(Value::checked_numel({}, &n));
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(Value::checked_numel({2, 3, 4}, &n));
  EXPECT_EQ(n, 24);
  EXPECT_TRUE(Value::checked_numel({0, INT64_MAX}, &n));
  EXPECT_EQ(n, 0);
  EXPECT_FALSE(Value::checked_numel({-1, 2}, &n));
  EXPECT_FALSE(Value::checked_numel({int64_t{1} << 32, int64_t{1} << 32}, &n));
  EXPECT_FALSE(Value::checked_numel({INT64_MAX, 2}, &n));
  // zeros() with an invalid shape allocates nothing instead of failing.
  Value bad = Value::zeros(DType::F64, {int64_t{1} << 40, int64_t{1} << 40});
  EXPECT_EQ(bad.numel(), 0);
  EXPECT_TRUE(bad.f64_data().empty());
}

TEST(Value, Tuples) {
  Value t = Value::tuple({Value::f64(1.0), Value::zeros(DType::I64, {4})});
  EXPECT_TRUE(t.is_tuple());
  EXPECT_FALSE(t.is_scalar());
  EXPECT_EQ(t.elems().size(), 2u);
  EXPECT_EQ(t.type_string(), "(f64, i64[4])");
  EXPECT_EQ(Value::tuple({}).type_string(), "()");
  EXPECT_EQ(Value::tuple({t, Value::boolean(false)}).type_string(), "((f64, i64[4]), bool)");
  EXPECT_TRUE(t.f64_data().empty());
}

TEST(Value, DTypeNames) {
  EXPECT_STREQ(dtype_name(DType::F64), "f64");
  EXPECT_STREQ(dtype_name(DType::F32), "f32");
  EXPECT_STREQ(dtype_name(DType::I64), "i64");
  EXPECT_STREQ(dtype_name(DType::Bool), "bool");
}

TEST(Error, ToStringConcatenatesRenderedTexts) {
  Error a;
  a.rendered = "a.cot:1:2: error: first\n";
  Error b;
  b.file = "b.cot";
  b.line = 3;
  b.column = 4;
  b.message = "second";
  b.help = "do this";
  Error c;
  c.message = "no location";
  EXPECT_EQ(to_string({a, b, c}),
            "a.cot:1:2: error: first\n"
            "b.cot:3:4: error: second\n  help: do this\n"
            "error: no location\n");
  EXPECT_EQ(to_string({}), "");
  Result<int> r = Error{"f.cot", 1, 1, "bad", "", ""};
  EXPECT_FALSE(r.ok());
  EXPECT_EQ(r.message(), "f.cot:1:1: error: bad\n");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
