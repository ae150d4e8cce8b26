#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "cotangent/io.h"

namespace cotangent {
namespace COTANGENT_TEST_UNIT {

ValueKind tensor(DType t, int rank, std::string spelling) {
  ValueKind k;
  k.dtype = t;
  k.rank = rank;
  k.spelling = std::move(spelling);
  return k;
}

ValueKind tuple(std::vector<ValueKind> elems, std::string spelling) {
  ValueKind k;
  k.is_tuple = true;
  k.elems = std::move(elems);
  k.spelling = std::move(spelling);
  return k;
}

const ValueKind kF64 = tensor(DType::F64, 0, "f64");
const ValueKind kVec = tensor(DType::F64, 1, "f64[n]");
const ValueKind kMat = tensor(DType::F64, 2, "f64[n, m]");
const ValueKind kIdx = tensor(DType::I64, 1, "i64[n]");

// Parses {"x": ...} for one parameter x of `kind`.
Result<std::vector<Value>> one(const std::string& text, const ValueKind& kind) {
  return arguments_from_json(text, "in.json", {"x"}, {kind});
}

// The single error of a failed result.
Error only_error(const Result<std::vector<Value>>& r) {
  EXPECT_FALSE(r.ok());
  if (r.ok()) return {};
  EXPECT_EQ(r.errors().size(), 1u) << r.message();
  return r.errors().front();
}

Value vec(std::vector<double> xs) {
  Value v = Value::zeros(DType::F64, {static_cast<int64_t>(xs.size())});
  std::copy(xs.begin(), xs.end(), v.f64_mut().begin());
  return v;
}

TEST(JsonInput, ReadsScalarsTensorsAndBooleans) {
  auto r = arguments_from_json(R"({"x": [[1, 2.5], [-3, 4e2]], "n": 7, "b": true, "s": 0.5})",
                               "in.json", {"x", "n", "b", "s"},
                               {kMat, tensor(DType::I64, 0, "i64"), tensor(DType::Bool, 0, "bool"),
                                tensor(DType::F32, 0, "f32")});
  ASSERT_TRUE(r.ok()) << r.message();
  const std::vector<Value>& v = r.value();
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].shape(), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(std::vector<double>(v[0].f64_data().begin(), v[0].f64_data().end()),
            (std::vector<double>{1, 2.5, -3, 400}));
  EXPECT_TRUE(v[1].is_scalar());
  EXPECT_EQ(v[1].dtype(), DType::I64);
  EXPECT_EQ(v[1].as_i64(), 7);
  EXPECT_TRUE(v[2].as_bool());
  EXPECT_EQ(v[3].dtype(), DType::F32);
  EXPECT_EQ(v[3].f32_data()[0], 0.5f);
}

TEST(JsonInput, ParametersComeInDeclarationOrderWhateverTheKeyOrder) {
  auto r = arguments_from_json(R"({"b": 2, "a": 1})", "in.json", {"a", "b"}, {kF64, kF64});
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value()[0].as_f64(), 1);
  EXPECT_EQ(r.value()[1].as_f64(), 2);
}

TEST(JsonInput, ReadsI64AndBoolTensors) {
  auto r = arguments_from_json(
      R"({"i": [-9223372036854775808, 9223372036854775807, 0], "m": [[true, false]]})", "in.json",
      {"i", "m"}, {kIdx, tensor(DType::Bool, 2, "bool[n, m]")});
  ASSERT_TRUE(r.ok()) << r.message();
  auto i = r.value()[0].i64_data();
  EXPECT_EQ(i[0], std::numeric_limits<int64_t>::min());
  EXPECT_EQ(i[1], std::numeric_limits<int64_t>::max());
  EXPECT_EQ(r.value()[1].shape(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(r.value()[1].bool_data()[0], 1);
  EXPECT_EQ(r.value()[1].bool_data()[1], 0);
}

TEST(JsonInput, AcceptsNonFiniteStringsForReals) {
  auto r = one(R"({"x": ["inf", "-inf", "nan", 1]})", kVec);
  ASSERT_TRUE(r.ok()) << r.message();
  auto d = r.value()[0].f64_data();
  EXPECT_EQ(d[0], std::numeric_limits<double>::infinity());
  EXPECT_EQ(d[1], -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(d[2]));
  auto f =
      arguments_from_json(R"({"x": "-inf"})", "in.json", {"x"}, {tensor(DType::F32, 0, "f32")});
  ASSERT_TRUE(f.ok()) << f.message();
  EXPECT_EQ(f.value()[0].f32_data()[0], -std::numeric_limits<float>::infinity());
}

TEST(JsonInput, ZeroSizeTensors) {
  auto r = one(R"({"x": []})", kVec);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value()[0].shape(), (std::vector<int64_t>{0}));
  r = one(R"({"x": [[], []]})", kMat);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value()[0].shape(), (std::vector<int64_t>{2, 0}));
  r = one(R"({"x": []})", kMat);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value()[0].shape(), (std::vector<int64_t>{0, 0}));
}

TEST(JsonInput, Tuples) {
  ValueKind k = tuple({kF64, kIdx}, "(f64, i64[n])");
  auto r = one(R"({"x": [1.5, [1, 2, 3]]})", k);
  ASSERT_TRUE(r.ok()) << r.message();
  const Value& t = r.value()[0];
  ASSERT_TRUE(t.is_tuple());
  ASSERT_EQ(t.elems().size(), 2u);
  EXPECT_EQ(t.elems()[0].as_f64(), 1.5);
  EXPECT_EQ(t.elems()[1].shape(), (std::vector<int64_t>{3}));
  EXPECT_EQ(t.elems()[1].i64_data()[2], 3);
}

TEST(JsonInput, ByteOrderMarkAndCrlfAreFine) {
  auto r = one("\xEF\xBB\xBF{\r\n  \"x\": [1, 2]\r\n}\r\n", kVec);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value()[0].numel(), 2);
}

// --- syntax errors ---

TEST(JsonInputErrors, SyntaxErrorHasPositionCaretAndPlainMessage) {
  Error e = only_error(one(R"({"x": })", kVec));
  EXPECT_EQ(e.file, "in.json");
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.column, 7);
  EXPECT_EQ(e.message.rfind("invalid JSON: unexpected '}'", 0), 0u) << e.message;
  EXPECT_EQ(e.message.find("json.exception"), std::string::npos);
  EXPECT_EQ(e.message.find("line"), std::string::npos) << e.message;
  EXPECT_EQ(e.rendered.rfind("in.json:1:7: error: invalid JSON: unexpected '}'", 0), 0u)
      << e.rendered;
  EXPECT_NE(e.rendered.find("\n  {\"x\": }\n        ^\n"), std::string::npos) << e.rendered;
}

TEST(JsonInputErrors, SyntaxErrorOnALaterLine) {
  Error e = only_error(one("{\n  \"x\": [1, 2,\n}\n", kVec));
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.column, 1);
  EXPECT_NE(e.rendered.find("in.json:3:1: error: invalid JSON: unexpected '}'"), std::string::npos)
      << e.rendered;
}

TEST(JsonInputErrors, UnexpectedEndPointsJustAfterTheLastCharacter) {
  Error e = only_error(one("{\"x\": [1, 2", kVec));
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.column, 12);
  EXPECT_NE(e.message.find("end of input"), std::string::npos) << e.message;
  e = only_error(one("{\"x\": [1, 2\n\n\n", kVec));
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.column, 12);
}

TEST(JsonInputErrors, TabsKeepTheCaretAligned) {
  Error e = only_error(one("{\t\"x\":\t]", kVec));
  EXPECT_EQ(e.column, 8);
  EXPECT_NE(e.rendered.find("\n  {\t\"x\":\t]\n   \t    \t^\n"), std::string::npos) << e.rendered;
}

TEST(JsonInputErrors, BareNanGetsAHelp) {
  for (const char* text :
       {R"({"x": NaN})", R"({"x": nan})", R"({"x": -Infinity})", R"({"x": inf})"}) {
    Error e = only_error(one(text, kF64));
    EXPECT_EQ(e.line, 1) << text;
    EXPECT_EQ(e.column, 7) << text;  // the start of the word
    EXPECT_EQ(e.message.rfind("invalid JSON: invalid ", 0), 0u) << text;
    EXPECT_NE(e.help.find("\"nan\""), std::string::npos) << text << ": " << e.rendered;
  }
}

TEST(JsonInputErrors, SingleQuotesGetAHelp) {
  Error e = only_error(one("{'x': 1}", kF64));
  EXPECT_EQ(e.column, 2);
  EXPECT_EQ(e.help, "JSON strings use double quotes");
}

TEST(JsonInputErrors, NumberOverflowIsAnErrorWithAPosition) {
  Error e = only_error(one("{\"x\": [1,\n 1e400]}", kVec));
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.column, 2);
  EXPECT_NE(e.message.find("number overflow"), std::string::npos) << e.message;
}

TEST(JsonInputErrors, EmptyInput) {
  for (const char* text : {"", "  \n\t"}) {
    Error e = only_error(one(text, kVec));
    EXPECT_EQ(e.message, "the JSON input is empty");
    EXPECT_EQ(e.file, "in.json");
  }
}

TEST(JsonInputErrors, InvalidUtf8IsAnError) {
  Error e = only_error(one("{\"x\": \"\xff\"}", kVec));
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.message.rfind("invalid JSON", 0), 0u) << e.message;
}

TEST(JsonInputErrors, DeepNestingIsRejectedWithoutCrashing) {
  std::string deep = "{\"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}";
  Error e = only_error(one(deep, kVec));
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.column, 7 + 255);  // the bracket that opens level 257
  EXPECT_NE(e.message.find("nested more than 256 levels"), std::string::npos) << e.message;
  // Unbalanced deep input too.
  e = only_error(one(std::string(1000000, '['), kVec));
  EXPECT_NE(e.message.find("nested"), std::string::npos);
  // The rendered line is a window, not the whole megabyte.
  EXPECT_LT(e.rendered.size(), 400u);
}

TEST(JsonInputErrors, BracketsInsideStringsDoNotCountAsNesting) {
  std::string text = "{\"x\": \"" + std::string(1000, '[') + "\"}";
  Error e = only_error(one(text, kVec));
  EXPECT_NE(e.message.find("x must be a tensor of rank 1"), std::string::npos) << e.message;
}

// --- semantic errors ---

TEST(JsonInputErrors, NotAnObject) {
  auto r =
      arguments_from_json("[1, 2]", "in.json", {"x", "n"}, {kVec, tensor(DType::I64, 0, "i64")});
  ASSERT_FALSE(r.ok());
  const Error& e = r.errors().front();
  EXPECT_EQ(e.message,
            "the input must be a JSON object with one entry per parameter, found an array of 2 "
            "elements");
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.column, 1);
  EXPECT_EQ(e.help, R"(for example {"x": [0.5, 1.5], "n": 1})");
}

TEST(JsonInputErrors, MissingParameter) {
  auto r = arguments_from_json(R"({"x": [1]})", "in.json", {"x", "y"}, {kVec, kVec});
  Error e = only_error(r);
  EXPECT_EQ(e.message, "parameter 'y' is missing from the input; expected f64[n]");
  EXPECT_EQ(e.file, "in.json");
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.column, 1);
  EXPECT_EQ(e.help, R"(add an entry such as "y": [0.5, 1.5])");
}

TEST(JsonInputErrors, UnknownEntry) {
  auto r = arguments_from_json("{\"x\": [1],\n \"y\": [2],\n \"z\": 3}", "in.json", {"x", "y"},
                               {kVec, kVec});
  Error e = only_error(r);
  EXPECT_EQ(e.message,
            "input has an entry 'z' that is not a parameter of the function (parameters: x, y)");
  EXPECT_EQ(e.line, 3);
  EXPECT_EQ(e.column, 2);
  EXPECT_EQ(e.help, "remove the entry");
}

TEST(JsonInputErrors, UnknownEntrySuggestsACloseName) {
  auto r = arguments_from_json(R"({"weights": [1], "bais": 2})", "in.json", {"weights", "bias"},
                               {kVec, kF64});
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.errors().size(), 2u) << r.message();  // the unknown entry and the missing one
  EXPECT_EQ(r.errors()[0].help, "did you mean 'bias'?");
  EXPECT_EQ(r.errors()[1].message, "parameter 'bias' is missing from the input; expected f64");
}

TEST(JsonInputErrors, NoParameters) {
  auto r = arguments_from_json(R"({"z": 1})", "in.json", {}, {});
  Error e = only_error(r);
  EXPECT_EQ(e.message,
            "input has an entry 'z' that is not a parameter of the function (the function has no "
            "parameters)");
  auto ok = arguments_from_json("{}", "in.json", {}, {});
  ASSERT_TRUE(ok.ok());
  EXPECT_TRUE(ok.value().empty());
}

TEST(JsonInputErrors, DuplicateEntry) {
  Error e = only_error(one("{\"x\": [1],\n \"x\": [2]}", kVec));
  EXPECT_EQ(e.message, "input has two entries for 'x'");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.column, 2);
}

TEST(JsonInputErrors, RaggedArrays) {
  Error e = only_error(one("{\"x\": [[1, 2, 3],\n       [4, 5]]}", kMat));
  EXPECT_EQ(e.message, "x[1] has 2 elements but x[0] has 3");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.column, 8);
  EXPECT_EQ(e.help, "every row of a tensor must have the same length");
  e = only_error(
      one(R"({"x": [[[1], [2]], [[3], [4, 5]]]})", tensor(DType::F64, 3, "f64[a, b, c]")));
  EXPECT_EQ(e.message, "x[1][1] has 2 elements but x[0][0] has 1");
  e = only_error(one(R"({"x": [[], [1]]})", kMat));
  EXPECT_EQ(e.message, "x[1] has 1 element but x[0] has 0");
}

TEST(JsonInputErrors, RealWhereAnIntegerIsExpected) {
  Error e = only_error(one(R"({"x": [1, 2, 1.5]})", kIdx));
  EXPECT_EQ(e.message, "x[2] must be an integer (i64), found 1.5");
  EXPECT_EQ(e.line, 1);
  EXPECT_EQ(e.column, 14);
  EXPECT_FALSE(e.help.empty());
  e = only_error(one(R"({"x": [2.0]})", kIdx));
  EXPECT_EQ(e.message, "x[0] must be an integer (i64), found 2.0");
  e = only_error(one(R"({"x": ["nan"]})", kIdx));
  EXPECT_EQ(e.message, "x[0] must be an integer (i64), found the string \"nan\"");
}

TEST(JsonInputErrors, IntegersBeyondI64) {
  for (const char* text : {R"({"x": [9223372036854775808]})", R"({"x": [18446744073709551616]})",
                           R"({"x": [-9223372036854775809]})", R"({"x": [1e20]})"}) {
    Error e = only_error(one(text, kIdx));
    EXPECT_NE(e.message.find("does not fit in i64"), std::string::npos) << e.message;
    EXPECT_EQ(e.message.rfind("x[0] = ", 0), 0u) << e.message;
  }
}

TEST(JsonInputErrors, BooleansAndNumbersDoNotMix) {
  Error e = only_error(one(R"({"x": 1})", tensor(DType::Bool, 0, "bool")));
  EXPECT_EQ(e.message, "x must be a boolean (bool), found 1");
  EXPECT_EQ(e.help, "write true or false");
  e = only_error(one(R"({"x": [1, true]})", kVec));
  EXPECT_EQ(e.message, "x[1] must be a real number (f64), found true");
  e = only_error(one(R"({"x": [null]})", tensor(DType::F32, 1, "f32[n]")));
  EXPECT_EQ(e.message, "x[0] must be a real number (f32), found null");
}

TEST(JsonInputErrors, OnlyThreeStringsAreReals) {
  Error e = only_error(one(R"({"x": "Infinity"})", kF64));
  EXPECT_EQ(e.message, "x must be a real number (f64), found the string \"Infinity\"");
  EXPECT_NE(e.help.find("\"inf\", \"-inf\" and \"nan\""), std::string::npos);
}

TEST(JsonInputErrors, F32Overflow) {
  ValueKind f32 = tensor(DType::F32, 1, "f32[n]");
  Error e = only_error(one(R"({"x": [1e39]})", f32));
  EXPECT_EQ(e.message, "x[0] = 1e+39 is too large for f32");
  // The largest f32 as printed with 9 digits reads back.
  auto r = one(R"({"x": [3.40282347e+38, -3.40282347e+38]})", f32);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value()[0].f32_data()[0], std::numeric_limits<float>::max());
}

TEST(JsonInputErrors, RankMismatch) {
  Error e = only_error(one(R"({"x": [1, 2]})", kMat));
  EXPECT_EQ(e.message, "x must be a tensor of rank 2 (f64[n, m]), found a nested array of depth 1");
  EXPECT_EQ(e.column, 7);
  EXPECT_EQ(e.help,
            "a tensor of rank 2 is written as 2 nested arrays, e.g. [[0.5, 1.5], [2.5, 3.5]]");
  e = only_error(one(R"({"x": [[1]]})", kVec));
  EXPECT_EQ(e.message, "x must be a tensor of rank 1 (f64[n]), found a nested array of depth 2");
  e = only_error(one(R"({"x": [[[]]]})", kVec));
  EXPECT_EQ(e.message, "x must be a tensor of rank 1 (f64[n]), found a nested array of depth 3");
  e = only_error(one(R"({"x": 3})", kVec));
  EXPECT_EQ(e.message, "x must be a tensor of rank 1 (f64[n]), found 3");
  e = only_error(one(R"({"x": {"a": 1}})", kVec));
  EXPECT_EQ(e.message, "x must be a tensor of rank 1 (f64[n]), found an object");
  e = only_error(one(R"({"x": [1, 2]})", kF64));
  EXPECT_EQ(e.message, "x must be a real number (f64), found an array of 2 elements");
}

TEST(JsonInputErrors, IrregularDepth) {
  Error e = only_error(one(R"({"x": [[1, 2], 3]})", kMat));
  EXPECT_EQ(e.message, "x[1] must be an array of 2 elements like x[0], found 3");
  e = only_error(one(R"({"x": [1, [2]]})", kVec));
  EXPECT_EQ(e.message, "x[1] must be a real number (f64), found an array of 1 element");
  EXPECT_EQ(e.column, 11);
}

TEST(JsonInputErrors, TupleArityAndElements) {
  ValueKind k = tuple({kF64, kIdx}, "(f64, i64[n])");
  Error e = only_error(one(R"({"x": [1.5]})", k));
  EXPECT_EQ(e.message,
            "x must be a tuple of 2 elements ((f64, i64[n])), found an array of 1 element");
  EXPECT_EQ(e.help, "a tuple is written as an array, e.g. [0.5, [1, 2]]");
  e = only_error(one(R"({"x": 1.5})", k));
  EXPECT_EQ(e.message, "x must be a tuple of 2 elements ((f64, i64[n])), found 1.5");
  e = only_error(one("{\"x\": [1.5,\n  [1, 2.5]]}", k));
  EXPECT_EQ(e.message, "x[1][1] must be an integer (i64), found 2.5");
  EXPECT_EQ(e.line, 2);
  EXPECT_EQ(e.column, 7);
  // Ragged tensors inside tuples name the tensor's own first row.
  ValueKind km = tuple({kF64, kMat}, "(f64, f64[n, m])");
  e = only_error(one(R"({"x": [0, [[1, 2], [3]]]})", km));
  EXPECT_EQ(e.message, "x[1][1] has 1 element but x[1][0] has 2");
}

TEST(JsonInputErrors, RenderedSemanticErrorHasCaretAndHelp) {
  Error e = only_error(one("{\n  \"x\": [1, 2, 1.5]\n}", kIdx));
  EXPECT_EQ(e.rendered,
            "in.json:2:15: error: x[2] must be an integer (i64), found 1.5\n"
            "    \"x\": [1, 2, 1.5]\n"
            "                ^\n"
            "  help: i64 values are written without a decimal point or exponent, e.g. 2\n");
}

TEST(JsonInputErrors, EveryBadParameterIsReported) {
  auto r = arguments_from_json(R"({"a": [1.5], "b": true, "c": 1})", "in.json", {"a", "b", "d"},
                               {kIdx, kVec, kF64});
  ASSERT_FALSE(r.ok());
  ASSERT_EQ(r.errors().size(), 4u) << r.message();
  EXPECT_NE(r.message().find("'c'"), std::string::npos);
  EXPECT_NE(r.message().find("a[0] must be an integer"), std::string::npos);
  EXPECT_NE(r.message().find("b must be a tensor of rank 1"), std::string::npos);
  EXPECT_NE(r.message().find("parameter 'd' is missing"), std::string::npos);
}

TEST(JsonInputErrors, ASmallInputCannotClaimAHugeTensor) {
  // The first element at each level says 2000 x 2000 x 2000 (64 GB of f64); the rest is not.
  std::string row = "[";
  for (int i = 0; i < 2000; ++i) row += i > 0 ? ",0" : "0";
  row += "]";
  std::string plane = "[" + row;
  for (int i = 1; i < 2000; ++i) plane += ",[]";
  plane += "]";
  std::string text = "{\"x\": [" + plane;
  for (int i = 1; i < 2000; ++i) text += ",0";
  text += "]}";
  Error e = only_error(one(text, tensor(DType::F64, 3, "f64[a, b, c]")));
  EXPECT_EQ(e.message, "x[0][1] has 0 elements but x[0][0] has 2000");
}

TEST(JsonInputErrors, ManyUnknownEntriesAreCapped) {
  std::string text = "{";
  for (int i = 0; i < 1000; ++i) text += "\"k" + std::to_string(i) + "\": 1, ";
  text += "\"x\": 1}";
  auto r = one(text, kF64);
  ASSERT_FALSE(r.ok());
  // Twenty errors, then one that counts the rest.
  ASSERT_EQ(r.errors().size(), 21u);
  EXPECT_EQ(r.errors()[19].message,
            "input has an entry 'k19' that is not a parameter of the function (parameters: x)");
  EXPECT_EQ(r.errors()[20].message, "980 more errors in the input are not shown");
  EXPECT_EQ(r.errors()[20].line, 0);
}

TEST(JsonInputErrors, LongLinesAreShownAsAWindow) {
  std::string text = "{\"x\": [";
  for (int i = 0; i < 5000; ++i) text += "1, ";
  text += "true]}";
  Error e = only_error(one(text, kVec));
  EXPECT_EQ(e.message, "x[5000] must be a real number (f64), found true");
  EXPECT_LT(e.rendered.size(), 400u) << e.rendered;
  // The caret is under "true" in the shown window.
  size_t line = e.rendered.find("\n  ...") + 1;
  size_t caret_line = e.rendered.find('\n', line) + 1;
  size_t caret = e.rendered.find('^', caret_line) - caret_line;
  EXPECT_EQ(e.rendered.substr(line + caret, 4), "true") << e.rendered;
}

// --- single values and output ---

TEST(JsonValue, ReadsOneValue) {
  auto r = value_from_json(" [[1, 2], [3, 4]] ", "v.json", kMat);
  ASSERT_TRUE(r.ok()) << r.message();
  EXPECT_EQ(r.value().shape(), (std::vector<int64_t>{2, 2}));
  auto bad = value_from_json("[[1, 2], [3]]", "v.json", kMat);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.errors()[0].message, "value[1] has 1 element but value[0] has 2");
  EXPECT_EQ(bad.errors()[0].column, 10);
}

TEST(JsonOutput, Reals) {
  EXPECT_EQ(value_to_json(Value::f64(0.1)), "0.10000000000000001");
  EXPECT_EQ(value_to_json(Value::f64(1.0)), "1");
  EXPECT_EQ(value_to_json(Value::f64(-2.5e-300)), "-2.5e-300");
  EXPECT_EQ(value_to_json(Value::f64(1e300)), "1.0000000000000001e+300");
  EXPECT_EQ(value_to_json(Value::f64(-0.0)), "-0.0");
  EXPECT_EQ(value_to_json(Value::f32(0.1f)), "0.10000000149011612");
  EXPECT_EQ(value_to_json(Value::f64(std::numeric_limits<double>::infinity())), "\"inf\"");
  EXPECT_EQ(value_to_json(Value::f64(-std::numeric_limits<double>::infinity())), "\"-inf\"");
  EXPECT_EQ(value_to_json(Value::f64(std::nan(""))), "\"nan\"");
  EXPECT_EQ(value_to_json(Value::f32(-std::numeric_limits<float>::infinity())), "\"-inf\"");
}

TEST(JsonOutput, IntegersBooleansTensorsTuples) {
  EXPECT_EQ(value_to_json(Value::i64(std::numeric_limits<int64_t>::min())), "-9223372036854775808");
  EXPECT_EQ(value_to_json(Value::boolean(true)), "true");
  Value m = Value::zeros(DType::I64, {2, 3});
  for (int k = 0; k < 6; ++k) m.i64_mut()[k] = k;
  EXPECT_EQ(value_to_json(m), "[[0, 1, 2], [3, 4, 5]]");
  Value b = Value::zeros(DType::Bool, {2});
  b.bool_mut()[1] = 1;
  EXPECT_EQ(value_to_json(b), "[false, true]");
  EXPECT_EQ(value_to_json(Value::zeros(DType::F64, {2, 0})), "[[], []]");
  EXPECT_EQ(value_to_json(Value::zeros(DType::F64, {0, 3})), "[]");
  Value t = Value::tuple(
      {Value::f64(1.5), vec({1, std::nan("")}), Value::tuple({Value::boolean(false)})});
  EXPECT_EQ(value_to_json(t), "[1.5, [1, \"nan\"], [false]]");
}

TEST(JsonOutput, RoundTripsExactly) {
  Value v = vec({0.1, -1.0 / 3.0, 1e-310, std::numeric_limits<double>::max(),
                 std::numeric_limits<double>::infinity(), -0.0});
  auto back = value_from_json(value_to_json(v), "rt.json", kVec);
  ASSERT_TRUE(back.ok()) << back.message();
  auto a = v.f64_data(), b = back.value().f64_data();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(std::bit_cast<uint64_t>(a[i]), std::bit_cast<uint64_t>(b[i])) << i;
  }
  Value f = Value::zeros(DType::F32, {3});
  f.f32_mut()[0] = 0.1f;
  f.f32_mut()[1] = std::numeric_limits<float>::denorm_min();
  f.f32_mut()[2] = -std::numeric_limits<float>::max();
  auto fb = value_from_json(value_to_json(f), "rt.json", tensor(DType::F32, 1, "f32[n]"));
  ASSERT_TRUE(fb.ok()) << fb.message();
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(f.f32_data()[i], fb.value().f32_data()[i]);
  ValueKind tk = tuple({kF64, kIdx}, "(f64, i64[n])");
  Value t = Value::tuple({Value::f64(2.25), Value::zeros(DType::I64, {0})});
  auto tb = value_from_json(value_to_json(t), "rt.json", tk);
  ASSERT_TRUE(tb.ok()) << tb.message();
  EXPECT_EQ(value_to_json(tb.value()), "[2.25, []]");
}

}  // namespace COTANGENT_TEST_UNIT
}  // namespace cotangent
