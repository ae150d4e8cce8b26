#include <gtest/gtest.h>
#include <unistd.h>

#include <bit>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "cotangent/io.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

namespace fs = std::filesystem;

ValueKind tensor(DType t, int rank, std::string spelling) {
  ValueKind k;
  k.dtype = t;
  k.rank = rank;
  k.spelling = std::move(spelling);
  return k;
}

// A fresh directory per test, removed afterwards.
class NpyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("cotangent_npy_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::string write_bytes(const std::string& name, const std::string& bytes) const {
    std::string p = path(name);
    std::ofstream(p, std::ios::binary) << bytes;
    return p;
  }

  static std::string read_bytes(const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  fs::path dir_;
};

// A .npy file as NumPy writes it: `dict` padded so that the data is 64-byte aligned.
std::string npy(const std::string& dict, const std::string& data, int major = 1) {
  size_t prefix = major == 1 ? 10 : 12;
  size_t total = (prefix + dict.size() + 1 + 63) / 64 * 64;
  size_t len = total - prefix;
  std::string s = "\x93NUMPY";
  s += static_cast<char>(major);
  s += '\0';
  for (size_t i = 0; i < prefix - 8; ++i) s += static_cast<char>((len >> (8 * i)) & 0xff);
  s += dict;
  s.append(total - s.size() - 1, ' ');
  s += '\n';
  return s + data;
}

template <class T>
std::string le_bytes(const std::vector<T>& xs) {
  std::string s;
  for (T x : xs) {
    auto u = std::bit_cast<std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>>(x);
    for (size_t i = 0; i < sizeof(T); ++i) s += static_cast<char>((u >> (8 * i)) & 0xff);
  }
  return s;
}

std::string dict(const std::string& descr, const std::string& shape, bool fortran = false) {
  return "{'descr': '" + descr + "', 'fortran_order': " + (fortran ? "True" : "False") +
         ", 'shape': " + shape + ", }";
}

// The first error of a failed result (copied: results are usually temporaries).
Error first_error(const Result<Value>& r) {
  EXPECT_FALSE(r.ok());
  return r.ok() ? Error{} : r.errors().front();
}

TEST_F(NpyTest, RoundTripsEveryDtype) {
  Value f64 = Value::zeros(DType::F64, {2, 3});
  for (int k = 0; k < 6; ++k) f64.f64_mut()[k] = k * 0.1 - 0.2;
  f64.f64_mut()[5] = std::numeric_limits<double>::quiet_NaN();
  Value f32 = Value::zeros(DType::F32, {4});
  for (int k = 0; k < 4; ++k) f32.f32_mut()[k] = k * 1.5f;
  f32.f32_mut()[3] = -std::numeric_limits<float>::infinity();
  Value i64 = Value::zeros(DType::I64, {3, 1, 2});
  for (int k = 0; k < 6; ++k) i64.i64_mut()[k] = k - 3;
  i64.i64_mut()[0] = std::numeric_limits<int64_t>::min();
  Value b = Value::zeros(DType::Bool, {5});
  b.bool_mut()[1] = b.bool_mut()[4] = 1;

  struct Case {
    Value v;
    ValueKind kind;
  };
  std::vector<Case> cases = {
      {f64, tensor(DType::F64, 2, "f64[n, m]")},
      {f32, tensor(DType::F32, 1, "f32[n]")},
      {i64, tensor(DType::I64, 3, "i64[a, b, c]")},
      {b, tensor(DType::Bool, 1, "bool[n]")},
      {Value::f64(2.5), tensor(DType::F64, 0, "f64")},
      {Value::i64(-7), tensor(DType::I64, 0, "i64")},
      {Value::boolean(true), tensor(DType::Bool, 0, "bool")},
      {Value::f32(0.25f), tensor(DType::F32, 0, "f32")},
      {Value::zeros(DType::F64, {0}), tensor(DType::F64, 1, "f64[n]")},
      {Value::zeros(DType::I64, {2, 0}), tensor(DType::I64, 2, "i64[n, m]")},
  };
  int i = 0;
  for (const Case& c : cases) {
    std::string p = path("v" + std::to_string(i++) + ".npy");
    auto w = write_npy(p, c.v);
    ASSERT_TRUE(w.ok()) << w.message();
    std::string bytes = read_bytes(p);
    ASSERT_GE(bytes.size(), 64u);
    EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
    size_t header_len = static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    EXPECT_EQ((10 + header_len) % 64, 0u);
    EXPECT_EQ(bytes[10 + header_len - 1], '\n');
    EXPECT_EQ(bytes.size(),
              10 + header_len +
                  c.v.numel() * (c.v.dtype() == DType::F64 || c.v.dtype() == DType::I64 ? 8
                                 : c.v.dtype() == DType::F32                            ? 4
                                                                                        : 1));
    auto r = read_npy(p, c.kind);
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(r.value().dtype(), c.v.dtype());
    EXPECT_EQ(r.value().shape(), c.v.shape());
    // JSON text compares every element exactly (and NaN equal to NaN).
    EXPECT_EQ(value_to_json(r.value()), value_to_json(c.v));
  }
}

TEST_F(NpyTest, WritesTheHeaderNumPyWrites) {
  Value v = Value::zeros(DType::F64, {3, 4});
  ASSERT_TRUE(write_npy(path("a.npy"), v).ok());
  std::string head = "{'descr': '<f8', 'fortran_order': False, 'shape': (3, 4), }";
  EXPECT_EQ(read_bytes(path("a.npy")).substr(10, head.size()), head);
  ASSERT_TRUE(write_npy(path("b.npy"), Value::zeros(DType::Bool, {7})).ok());
  head = "{'descr': '|b1', 'fortran_order': False, 'shape': (7,), }";
  EXPECT_EQ(read_bytes(path("b.npy")).substr(10, head.size()), head);
  ASSERT_TRUE(write_npy(path("c.npy"), Value::i64(1)).ok());
  head = "{'descr': '<i8', 'fortran_order': False, 'shape': (), }";
  EXPECT_EQ(read_bytes(path("c.npy")).substr(10, head.size()), head);
}

TEST_F(NpyTest, ReadsHandCraftedFiles) {
  // Version 2.0 and 3.0 headers, Python 2 longs in the shape, double-quoted keys.
  std::string data = le_bytes<double>({1, 2, 3, 4, 5, 6});
  for (int major : {1, 2, 3}) {
    std::string p = write_bytes("v" + std::to_string(major) + ".npy",
                                npy(dict("<f8", "(2L, 3L)"), data, major));
    auto r = read_npy(p, tensor(DType::F64, 2, "f64[n, m]"));
    ASSERT_TRUE(r.ok()) << r.message();
    EXPECT_EQ(value_to_json(r.value()), "[[1, 2, 3], [4, 5, 6]]");
  }
  std::string p = write_bytes(
      "q.npy",
      npy(R"({"shape": (2,), "fortran_order": False, "descr": "<f8"})", le_bytes<double>({7, 8})));
  auto r = read_npy(p, tensor(DType::F64, 1, "f64[n]"));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(value_to_json(r.value()), "[7, 8]");
}

TEST_F(NpyTest, ConvertsExactly) {
  // float32 data for an f64 parameter.
  std::string p = write_bytes("f.npy", npy(dict("<f4", "(2,)"), le_bytes<float>({0.1f, -2.5f})));
  auto r = read_npy(p, tensor(DType::F64, 1, "f64[n]"));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().dtype(), DType::F64);
  EXPECT_EQ(r.value().f64_data()[0], static_cast<double>(0.1f));
  EXPECT_EQ(r.value().f64_data()[1], -2.5);
  // int32 data for an i64 parameter.
  p = write_bytes("i.npy", npy(dict("<i4", "(3,)"), le_bytes<int32_t>({-1, 0, 2147483647})));
  r = read_npy(p, tensor(DType::I64, 1, "i64[n]"));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(value_to_json(r.value()), "[-1, 0, 2147483647]");
  // A float32 scalar for an f64 scalar.
  p = write_bytes("s.npy", npy(dict("<f4", "()"), le_bytes<float>({1.5f})));
  r = read_npy(p, tensor(DType::F64, 0, "f64"));
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().as_f64(), 1.5);
}

TEST_F(NpyTest, FortranOrderIsFineWhenItChangesNothing) {
  std::string p =
      write_bytes("f1.npy", npy(dict("<f8", "(3,)", true), le_bytes<double>({1, 2, 3})));
  auto r = read_npy(p, tensor(DType::F64, 1, "f64[n]"));
  ASSERT_TRUE(r.ok()) << r.message();
  p = write_bytes("f2.npy", npy(dict("<f8", "(2, 2)", true), le_bytes<double>({1, 2, 3, 4})));
  Error e = first_error(read_npy(p, tensor(DType::F64, 2, "f64[n, m]")));
  EXPECT_EQ(e.message,
            "Fortran-order .npy files are not supported; save with np.ascontiguousarray");
  EXPECT_EQ(e.file, p);
  EXPECT_EQ(e.line, 0);
}

TEST_F(NpyTest, KindMismatches) {
  std::string p = write_bytes("d.npy", npy(dict("<f8", "(3,)"), le_bytes<double>({1, 2, 3})));
  Error e1 = first_error(read_npy(p, tensor(DType::F32, 1, "f32[n]")));
  EXPECT_EQ(e1.message, "expected f32[n] but the file holds a float64 array of shape (3,)");
  EXPECT_EQ(e1.help, "convert it before saving, e.g. a.astype(np.float32)");
  EXPECT_EQ(e1.file, p);
  EXPECT_EQ(e1.rendered.rfind(p + ": error: expected f32[n]", 0), 0u) << e1.rendered;
  Error e2 = first_error(read_npy(p, tensor(DType::F64, 2, "f64[n, m]")));
  EXPECT_EQ(e2.message,
            "expected f64[n, m] (a tensor of rank 2) but the file holds a float64 array of shape "
            "(3,)");
  Error e3 = first_error(read_npy(p, tensor(DType::I64, 1, "i64[n]")));
  EXPECT_EQ(e3.message, "expected i64[n] but the file holds a float64 array of shape (3,)");
  std::string q = write_bytes("i.npy", npy(dict("<i8", "(1,)"), le_bytes<int64_t>({1})));
  Error e4 = first_error(read_npy(q, tensor(DType::F64, 1, "f64[n]")));
  EXPECT_EQ(e4.message, "expected f64[n] but the file holds an int64 array of shape (1,)");
  ValueKind tup;
  tup.is_tuple = true;
  tup.spelling = "(f64, f64)";
  Error e5 = first_error(read_npy(q, tup));
  EXPECT_EQ(e5.message, "a .npy file holds one tensor, but a tuple ((f64, f64)) is expected");
}

TEST_F(NpyTest, UnsupportedDtypes) {
  std::string p = write_bytes("be.npy", npy(dict(">f8", "(1,)"), le_bytes<double>({1})));
  Error e1 = first_error(read_npy(p, tensor(DType::F64, 1, "f64[n]")));
  EXPECT_EQ(e1.message, "big-endian .npy files are not supported (dtype '>f8')");
  p = write_bytes("c.npy", npy(dict("<c16", "(1,)"), std::string(16, '\0')));
  Error e2 = first_error(read_npy(p, tensor(DType::F64, 1, "f64[n]")));
  EXPECT_EQ(e2.message.rfind("unsupported .npy dtype '<c16'", 0), 0u) << e2.message;
  p = write_bytes("s.npy", npy("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (1,), }",
                               std::string(8, '\0')));
  Error e3 = first_error(read_npy(p, tensor(DType::F64, 1, "f64[n]")));
  EXPECT_NE(e3.message.find("structured dtypes are not supported"), std::string::npos);
}

TEST_F(NpyTest, BogusFiles) {
  ValueKind k = tensor(DType::F64, 1, "f64[n]");
  auto message = [&](const std::string& name, const std::string& bytes) {
    std::string p = write_bytes(name, bytes);
    Error e = first_error(read_npy(p, k));
    EXPECT_EQ(e.file, p);
    EXPECT_EQ(e.line, 0);
    return e.message;
  };
  std::string good = npy(dict("<f8", "(2,)"), le_bytes<double>({1, 2}));
  EXPECT_EQ(message("empty.npy", ""),
            "not a NumPy .npy file (it does not start with \"\\x93NUMPY\")");
  EXPECT_EQ(message("text.npy", "hello, world\n"),
            "not a NumPy .npy file (it does not start with \"\\x93NUMPY\")");
  EXPECT_EQ(message("short.npy", good.substr(0, 9)),
            "not a NumPy .npy file (it does not start with \"\\x93NUMPY\")");
  std::string v4 = good;
  v4[6] = 4;
  EXPECT_EQ(message("v4.npy", v4),
            "unsupported .npy format version 4.0 (supported: 1.0, 2.0, 3.0)");
  EXPECT_NE(message("hdr.npy", good.substr(0, 40)).find("truncated: its header is 118 bytes"),
            std::string::npos);
  EXPECT_EQ(message("trunc.npy", good.substr(0, good.size() - 1)),
            "the .npy file is truncated: a float64 array of shape (2,) needs 16 bytes of data but "
            "15 bytes follow the header");
  EXPECT_EQ(message("long.npy", good + "x"),
            "the .npy file is too long: a float64 array of shape (2,) needs 16 bytes of data but "
            "17 bytes follow the header");
  EXPECT_EQ(message("garbage.npy", npy("garbage \x01\xff", "")),
            "malformed .npy header: expected '{' in \"garbage ??\"");
  EXPECT_EQ(message("nokey.npy", npy("{'descr': '<f8', 'fortran_order': False}", "")),
            "malformed .npy header: the key 'shape' is missing in \"{'descr': '<f8', "
            "'fortran_order': False}\"");
  EXPECT_NE(message("extra.npy", npy(dict("<f8", "(0,)").replace(0, 1, "{'x': 1, "), ""))
                .find("unexpected key 'x'"),
            std::string::npos);
  EXPECT_NE(message("neg.npy", npy(dict("<f8", "(-1,)"), "")).find("expected a dimension"),
            std::string::npos);
  EXPECT_NE(message("unterminated.npy", npy("{'descr': '<f8", "")).find("malformed"),
            std::string::npos);
  // A header that claims a huge shape must not allocate it.
  EXPECT_NE(message("huge.npy", npy(dict("<f8", "(1073741824,)"), le_bytes<double>({1})))
                .find("needs 8589934592 bytes of data but 8 bytes follow"),
            std::string::npos);
  std::string ov = write_bytes("overflow.npy", npy(dict("<f8", "(2147483648, 2147483648)"), ""));
  EXPECT_NE(first_error(read_npy(ov, tensor(DType::F64, 2, "f64[n, m]")))
                .message.find("needs too many bytes"),
            std::string::npos);
  EXPECT_NE(
      message("toolarge.npy", npy(dict("<f8", "(99999999999999999999999,)"), "")).find("too large"),
      std::string::npos);
}

TEST_F(NpyTest, MissingFilesAndUnwritablePaths) {
  std::string p = path("missing.npy");
  Error e = first_error(read_npy(p, tensor(DType::F64, 1, "f64[n]")));
  EXPECT_EQ(e.file, p);
  EXPECT_NE(e.message.find("cannot read the file"), std::string::npos) << e.message;
  auto w = write_npy(path("no/such/dir/x.npy"), Value::f64(1));
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.errors()[0].message.find("cannot create a temporary file in " + path("no/such/dir") +
                                       " to write the file: No such file or directory"),
            std::string::npos)
      << w.errors()[0].message;
  auto t = write_npy(path("t.npy"), Value::tuple({Value::f64(1), Value::f64(2)}));
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.errors()[0].message, "cannot write a tuple ((f64, f64)) to a .npy file");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
