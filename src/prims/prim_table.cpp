// The primitive table (design.md §6): one constant entry per primitive, indexed by Prim.
#include <array>
#include <cmath>
#include <cstdio>

#include "prims/prim.h"
#include "prims/scalar_math.h"

namespace cot {
namespace {

// Real evaluation, written once for f64 and f32 over prims/scalar_math.h (which the native
// backend's generated code embeds, so both compute the same). `args` holds `arity` operands.
template <class T>
struct Real {
  static T add(const T* a) { return cot_rt::add(a[0], a[1]); }
  static T sub(const T* a) { return cot_rt::sub(a[0], a[1]); }
  static T mul(const T* a) { return cot_rt::mul(a[0], a[1]); }
  static T div(const T* a) { return cot_rt::div(a[0], a[1]); }
  static T neg(const T* a) { return cot_rt::neg(a[0]); }
  static T pow(const T* a) { return cot_rt::pow(a[0], a[1]); }
  static T exp(const T* a) { return cot_rt::exp(a[0]); }
  static T log(const T* a) { return cot_rt::log(a[0]); }
  static T sin(const T* a) { return cot_rt::sin(a[0]); }
  static T cos(const T* a) { return cot_rt::cos(a[0]); }
  static T tan(const T* a) { return cot_rt::tan(a[0]); }
  static T tanh(const T* a) { return cot_rt::tanh(a[0]); }
  static T sqrt(const T* a) { return cot_rt::sqrt(a[0]); }
  static T abs(const T* a) { return cot_rt::abs(a[0]); }
  static T sigmoid(const T* a) { return cot_rt::sigmoid(a[0]); }
  static T log1p(const T* a) { return cot_rt::log1p(a[0]); }
  static T expm1(const T* a) { return cot_rt::expm1(a[0]); }
  static T lgamma(const T* a) { return cot_rt::lgamma(a[0]); }
  static T digamma(const T* a) { return cot_rt::digamma(a[0]); }
  static T trigamma(const T* a) { return cot_rt::trigamma(a[0]); }
  static T atan2(const T* a) { return cot_rt::atan2(a[0], a[1]); }  // atan2(y, x)
  static T max(const T* a) { return cot_rt::max(a[0], a[1]); }
  static T min(const T* a) { return cot_rt::min(a[0], a[1]); }
  static T identity(const T* a) { return cot_rt::stop_gradient(a[0]); }
};

using D = Real<double>;
using F = Real<float>;
using S = Spelling;
using R = TypeRule;
using C = CostKind;

constexpr size_t kNumPrims = static_cast<size_t>(Prim::kCount);

// clang-format off
constexpr std::array<PrimInfo, kNumPrims> kTable = {{
  // prim, name, symbol, spelling, arity, type rule, allows i64, cost, f64, f32, note, partials,
  // linear
  {Prim::Add, "add", "+", S::Infix, 2, R::SameNumeric, true, C::Add, &D::add, &F::add, "",
   {"1.0", "1.0"}, {true, true}},
  {Prim::Sub, "sub", "-", S::Infix, 2, R::SameNumeric, true, C::Add, &D::sub, &F::sub, "",
   {"1.0", "-1.0"}, {true, true}},
  {Prim::Mul, "mul", "*", S::Infix, 2, R::SameNumeric, true, C::Mul, &D::mul, &F::mul, "",
   {"y", "x"}, {true, true}},
  {Prim::Div, "div", "/", S::Infix, 2, R::SameReal, false, C::Mul, &D::div, &F::div, "",
   {"1.0 / y", "-r / y"}, {true, false}},
  // Negation is multiplication by -1 in [Bernstein20]'s cost model (docs/language.md §10).
  {Prim::Neg, "neg", "-", S::Prefix, 1, R::SameNumeric, true, C::Mul, &D::neg, &F::neg, "",
   {"-1.0"}, {true}},
  {Prim::Pow, "pow", "pow", S::Function, 2, R::SameReal, false, C::Call, &D::pow, &F::pow,
   "pow(x, y): for x <= 0 the y-derivative x^y * log(x) is taken as 0; at y = 0 the "
   "x-derivative is 0",
   {"if y == 0.0 then 0.0 else y * pow(x, y - 1.0)", "[x > 0.0] * log(x) * r"}, {}},
  {Prim::FloorDiv, "floordiv", "//", S::Infix, 2, R::IntOnly, true, C::Free, nullptr, nullptr, "",
   {}, {}},
  {Prim::Mod, "mod", "%", S::Infix, 2, R::IntOnly, true, C::Free, nullptr, nullptr, "",
   {}, {}},
  {Prim::ExactDiv, "exactdiv", "/", S::Infix, 2, R::IntOnly, true, C::Free, nullptr, nullptr, "",
   {}, {}},
  {Prim::Exp, "exp", "exp", S::Function, 1, R::SameReal, false, C::Call, &D::exp, &F::exp, "",
   {"r"}, {}},
  // 1 / x would give log'(-0.0) = -inf; the table says +inf at 0 for both zeros. The `if`
  // turns -0.0 into +0.0 (abs runs only there, so the op count is that of 1 / x, and the
  // derivative of the divisor stays 1 for higher derivatives); its branches read no memory and
  // cannot trap, so C++ compilers still vectorize the loop (a branch around the division did not).
  {Prim::Log, "log", "log", S::Function, 1, R::SameReal, false, C::Call, &D::log, &F::log,
   "log'(0) = +inf (1 / x), for -0.0 too",
   {"1.0 / (if x == 0.0 then abs(x) else x)"}, {}},
  {Prim::Sin, "sin", "sin", S::Function, 1, R::SameReal, false, C::Call, &D::sin, &F::sin, "",
   {"cos(x)"}, {}},
  {Prim::Cos, "cos", "cos", S::Function, 1, R::SameReal, false, C::Call, &D::cos, &F::cos, "",
   {"-sin(x)"}, {}},
  {Prim::Tan, "tan", "tan", S::Function, 1, R::SameReal, false, C::Call, &D::tan, &F::tan, "",
   {"1.0 + r * r"}, {}},
  {Prim::Tanh, "tanh", "tanh", S::Function, 1, R::SameReal, false, C::Call, &D::tanh, &F::tanh, "",
   {"1.0 - r * r"}, {}},
  // sqrt(-0.0) is -0.0, and 0.5 / r would give -inf: as for log, the zero is made positive.
  {Prim::Sqrt, "sqrt", "sqrt", S::Function, 1, R::SameReal, false, C::Call, &D::sqrt, &F::sqrt,
   "sqrt'(0) = +inf (1 / (2 * sqrt(x))), for -0.0 too",
   {"0.5 / (if r == 0.0 then abs(r) else r)"}, {}},
  {Prim::Abs, "abs", "abs", S::Function, 1, R::SameNumeric, true, C::Call, &D::abs, &F::abs,
   "abs'(0) = 1: abs(x) is max(x, -x), and at a tie the first operand's derivative is used "
   "(docs/language.md §6.1)",
   {"if x >= 0.0 then 1.0 else -1.0"}, {}},
  {Prim::Sigmoid, "sigmoid", "sigmoid", S::Function, 1, R::SameReal, false, C::Call, &D::sigmoid,
   &F::sigmoid, "",
   {"r * (1.0 - r)"}, {}},
  {Prim::Log1p, "log1p", "log1p", S::Function, 1, R::SameReal, false, C::Call, &D::log1p,
   &F::log1p, "log1p'(-1) = +inf (1 / (1 + x))",
   {"1.0 / (1.0 + x)"}, {}},
  {Prim::Expm1, "expm1", "expm1", S::Function, 1, R::SameReal, false, C::Call, &D::expm1,
   &F::expm1, "",
   {"r + 1.0"}, {}},
  {Prim::Lgamma, "lgamma", "lgamma", S::Function, 1, R::SameReal, false, C::Call, &D::lgamma,
   &F::lgamma, "at the poles (0, -1, -2, ...) the derivative digamma(x) is infinite or NaN",
   {"digamma(x)"}, {}},
  {Prim::Digamma, "digamma", "digamma", S::Function, 1, R::SameReal, false, C::Call, &D::digamma,
   &F::digamma, "NaN at the poles (0, -1, -2, ...)",
   {"trigamma(x)"}, {}},
  {Prim::Trigamma, "trigamma", "trigamma", S::Function, 1, R::SameReal, false, C::Call,
   &D::trigamma, &F::trigamma, "+inf at the poles; its own derivative is not provided",
   {}, {}},
  {Prim::Atan2, "atan2", "atan2", S::Function, 2, R::SameReal, false, C::Call, &D::atan2,
   &F::atan2, "atan2(y, x) at (0, 0): derivative 0 in both operands",
   {"if x == 0.0 && y == 0.0 then 0.0 else y / (x * x + y * y)", "if x == 0.0 && y == 0.0 then 0.0 else -x / (x * x + y * y)"}, {}},
  {Prim::Max, "max", "max", S::Function, 2, R::SameNumeric, true, C::Call, &D::max, &F::max,
   "max(a, b) on ties (a == b): the derivative of the first operand, da",
   {"[x >= y]", "[x < y]"}, {}},
  {Prim::Min, "min", "min", S::Function, 2, R::SameNumeric, true, C::Call, &D::min, &F::min,
   "min(a, b) on ties (a == b): the derivative of the first operand, da",
   {"[x <= y]", "[x > y]"}, {}},
  {Prim::Lt, "lt", "<", S::Infix, 2, R::Compare, true, C::Free, nullptr, nullptr,
   "comparisons have zero derivative",
   {}, {}},
  {Prim::Le, "le", "<=", S::Infix, 2, R::Compare, true, C::Free, nullptr, nullptr,
   "comparisons have zero derivative",
   {}, {}},
  {Prim::Gt, "gt", ">", S::Infix, 2, R::Compare, true, C::Free, nullptr, nullptr,
   "comparisons have zero derivative",
   {}, {}},
  {Prim::Ge, "ge", ">=", S::Infix, 2, R::Compare, true, C::Free, nullptr, nullptr,
   "comparisons have zero derivative",
   {}, {}},
  {Prim::Eq, "eq", "==", S::Infix, 2, R::Compare, true, C::Free, nullptr, nullptr,
   "comparisons have zero derivative",
   {}, {}},
  {Prim::Ne, "ne", "!=", S::Infix, 2, R::Compare, true, C::Free, nullptr, nullptr,
   "comparisons have zero derivative",
   {}, {}},
  {Prim::And, "and", "&&", S::Infix, 2, R::Logic, false, C::Free, nullptr, nullptr, "",
   {}, {}},
  {Prim::Or, "or", "||", S::Infix, 2, R::Logic, false, C::Free, nullptr, nullptr, "",
   {}, {}},
  {Prim::Not, "not", "!", S::Prefix, 1, R::Logic, false, C::Free, nullptr, nullptr, "",
   {}, {}},
  {Prim::Select, "select", "select", S::Function, 3, R::Select, true, C::Free, nullptr, nullptr,
   "select(c, a, b): no derivative with respect to c",
   {"", "[x]", "[!x]"}, {false, true, true}},
  {Prim::ToF64, "f64", "f64", S::Function, 1, R::ConvertF64, true, C::Free, nullptr, nullptr,
   "f64(x): derivative 1 from a real operand; i64 and bool operands have none",
   {"1.0"}, {true}},
  {Prim::ToF32, "f32", "f32", S::Function, 1, R::ConvertF32, true, C::Free, nullptr, nullptr,
   "f32(x): derivative 1 from a real operand; i64 and bool operands have none",
   {"1.0"}, {true}},
  {Prim::ToI64, "i64", "i64", S::Function, 1, R::ConvertI64, true, C::Free, nullptr, nullptr,
   "i64(x) is not differentiable: zero derivative",
   {}, {}},
  {Prim::StopGradient, "stop_gradient", "stop_gradient", S::Function, 1, R::SameAny, true, C::Free,
   &D::identity, &F::identity, "stop_gradient(x): zero derivative by definition",
   {}, {}},
}};
// clang-format on

// The table is indexed by Prim: catch a reordered or missing entry at compile time.
constexpr bool table_in_order() {
  for (size_t i = 0; i < kNumPrims; ++i) {
    if (static_cast<size_t>(kTable[i].prim) != i) return false;
  }
  return true;
}
static_assert(table_in_order(), "kTable must list every primitive in Prim order");

std::string quoted(const PrimInfo& info) {
  return "`" + std::string(info.symbol) + "`";
}

bool fail(std::string* why, std::string msg) {
  if (why) *why = std::move(msg);
  return false;
}

std::string found(std::span<const Scalar> ops) {
  std::string s;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (i > 0) s += i + 1 == ops.size() ? " and " : ", ";
    s += to_string(ops[i]);
  }
  return s;
}

// Every operand has one type; reports the first pair that differs.
bool all_same(const PrimInfo& info, std::span<const Scalar> ops, std::string* why) {
  for (size_t i = 1; i < ops.size(); ++i) {
    if (ops[i] != ops[0]) {
      return fail(why, "operands of " + quoted(info) + " have different types " +
                           to_string(ops[0]) + " and " + to_string(ops[i]));
    }
  }
  return true;
}

std::optional<int64_t> int_fail(std::string* why, std::string msg) {
  if (why) *why = std::move(msg);
  return std::nullopt;
}

}  // namespace

const PrimInfo& prim_info(Prim p) {
  return kTable[static_cast<size_t>(p)];
}

std::optional<Prim> prim_by_name(std::string_view name) {
  for (const PrimInfo& info : kTable) {
    if (info.spelling == Spelling::Function && info.name == name) return info.prim;
  }
  return std::nullopt;
}

std::optional<Scalar> prim_result_type(Prim p, std::span<const Scalar> ops, std::string* why) {
  const PrimInfo& info = prim_info(p);
  if (static_cast<int>(ops.size()) != info.arity) {
    fail(why, quoted(info) + " takes " + std::to_string(info.arity) +
                  (info.arity == 1 ? " argument" : " arguments") + ", found " +
                  std::to_string(ops.size()));
    return std::nullopt;
  }
  switch (info.type_rule) {
    case TypeRule::SameNumeric:
    case TypeRule::SameReal: {
      if (!all_same(info, ops, why)) return std::nullopt;
      Scalar t = ops[0];
      bool ints = info.type_rule == TypeRule::SameNumeric && info.allows_int;
      if (is_real(t) || (ints && t == Scalar::I64)) return t;
      std::string what = ints ? "numeric (f64, f32 or i64) " : "real (f64 or f32) ";
      std::string noun = info.spelling == Spelling::Function ? "argument" : "operand";
      fail(why, quoted(info) + " needs " +
                    (info.arity == 1 ? "a " + what + noun : what + noun + "s") + ", found " +
                    to_string(t));
      return std::nullopt;
    }
    case TypeRule::IntOnly:
      if (ops[0] != Scalar::I64 || ops[1] != Scalar::I64) {
        fail(why, quoted(info) + " needs i64 operands, found " + found(ops));
        return std::nullopt;
      }
      return Scalar::I64;
    case TypeRule::Compare: {
      if (!all_same(info, ops, why)) return std::nullopt;
      bool eq = p == Prim::Eq || p == Prim::Ne;
      if (ops[0] == Scalar::Bool && !eq) {
        fail(why, quoted(info) +
                      " compares numbers (f64, f32 or i64), found bool; only `==` and "
                      "`!=` compare bool values");
        return std::nullopt;
      }
      return Scalar::Bool;
    }
    case TypeRule::Logic:
      for (Scalar t : ops) {
        if (t != Scalar::Bool) {
          fail(why, quoted(info) + " needs bool " + (info.arity == 1 ? "operand" : "operands") +
                        ", found " + found(ops));
          return std::nullopt;
        }
      }
      return Scalar::Bool;
    case TypeRule::Select:
      if (ops[0] != Scalar::Bool) {
        fail(why,
             std::string("the condition of `select` must be bool, found ") + to_string(ops[0]));
        return std::nullopt;
      }
      if (ops[1] != ops[2]) {
        fail(why, std::string("branches of `select` have different types ") + to_string(ops[1]) +
                      " and " + to_string(ops[2]));
        return std::nullopt;
      }
      return ops[1];
    case TypeRule::ConvertF64:
      return Scalar::F64;
    case TypeRule::ConvertF32:
      return Scalar::F32;
    case TypeRule::ConvertI64:
      return Scalar::I64;
    case TypeRule::SameAny:
      return ops[0];
  }
  return std::nullopt;
}

std::optional<int64_t> eval_prim_i64(Prim p, std::span<const int64_t> args, std::string* why) {
  const PrimInfo& info = prim_info(p);
  if (static_cast<int>(args.size()) != info.arity) {
    return int_fail(why, quoted(info) + " takes " + std::to_string(info.arity) + " operands");
  }
  const std::string overflow = "integer overflow in " + quoted(info);
  int64_t r = 0;
  auto checked = [&](bool ok) -> std::optional<int64_t> {
    if (!ok) return int_fail(why, overflow);
    return r;
  };
  switch (p) {
    case Prim::Add:
      return checked(cot_rt::add_i64(args[0], args[1], &r));
    case Prim::Sub:
      return checked(cot_rt::sub_i64(args[0], args[1], &r));
    case Prim::Mul:
      return checked(cot_rt::mul_i64(args[0], args[1], &r));
    case Prim::Neg:
      return checked(cot_rt::neg_i64(args[0], &r));
    case Prim::Abs:
      return checked(cot_rt::abs_i64(args[0], &r));
    case Prim::Max:
      return cot_rt::max_i64(args[0], args[1]);
    case Prim::Min:
      return cot_rt::min_i64(args[0], args[1]);
    case Prim::FloorDiv:
    case Prim::Mod:
    case Prim::ExactDiv: {
      const int64_t a = args[0], b = args[1];
      if (b == 0) return int_fail(why, "integer division by zero");
      const cot_rt::DivKind k = p == Prim::FloorDiv ? cot_rt::DivKind::Floor
                                : p == Prim::Mod    ? cot_rt::DivKind::Mod
                                                    : cot_rt::DivKind::Exact;
      if (cot_rt::div_i64(k, a, b, &r)) return r;
      if (b == -1) return int_fail(why, overflow);
      return int_fail(why, "`/` on integers must divide exactly: " + std::to_string(a) + " / " +
                               std::to_string(b) + "; use `//` for floor division");
    }
    case Prim::Select:  // the condition as 0/1
      return args[0] != 0 ? args[1] : args[2];
    case Prim::ToI64:  // from i64 (or bool as 0/1)
    case Prim::StopGradient:
      return args[0];
    default:
      return int_fail(why, quoted(info) + " is not an integer operation");
  }
}

std::string spell_application(Prim p, std::span<const int64_t> xs) {
  const PrimInfo& info = prim_info(p);
  const size_t n = xs.size();
  std::string sym(info.symbol);
  if (info.spelling == Spelling::Infix && n == 2) {
    return std::to_string(xs[0]) + " " + sym + " " + std::to_string(xs[1]);
  }
  if (info.spelling == Spelling::Prefix && n == 1) return sym + std::to_string(xs[0]);
  std::string s = std::string(info.name) + "(";
  for (size_t k = 0; k < n; ++k) s += (k > 0 ? ", " : "") + std::to_string(xs[k]);
  return s + ")";
}

namespace {
template <class T>
bool compare_values(Prim p, T a, T b) {
  switch (p) {
    case Prim::Lt:
      return a < b;
    case Prim::Le:
      return a <= b;
    case Prim::Gt:
      return a > b;
    case Prim::Ge:
      return a >= b;
    case Prim::Eq:
      return a == b;
    case Prim::Ne:
      return a != b;
    default:
      return false;
  }
}
}  // namespace

bool eval_prim_compare_f64(Prim p, double a, double b) {
  return compare_values(p, a, b);
}

bool eval_prim_compare_i64(Prim p, int64_t a, int64_t b) {
  return compare_values(p, a, b);
}

bool eval_prim_logic(Prim p, std::span<const bool> args) {
  switch (p) {
    case Prim::And:
      return args[0] && args[1];
    case Prim::Or:
      return args[0] || args[1];
    case Prim::Not:
      return !args[0];
    default:
      return false;
  }
}

std::optional<int64_t> convert_real_to_i64(double x, std::string* why) {
  int64_t r = 0;
  if (cot_rt::real_to_i64(x, &r)) return r;
  std::string what = std::isnan(x) ? "NaN" : std::isinf(x) ? (x > 0 ? "inf" : "-inf") : "";
  if (what.empty()) {
    char buf[64];
    snprintf(buf, sizeof buf, "%.17g", x);
    what = buf;
    return int_fail(why, "`i64` of " + what + " is out of the i64 range");
  }
  return int_fail(why, "`i64` of " + what + " has no integer value");
}

}  // namespace cot
