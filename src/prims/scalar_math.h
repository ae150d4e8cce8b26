// The scalar semantics of the primitive table, in one header that both the interpreter (through
// prims/prim_table.cpp) and the native backend's generated C++ (which embeds this file) use, so
// compiled code computes what the reference computes, bit for bit (but for the vector variants
// of codegen/vector_math.h in vectorized loops). Self-contained on purpose: no
// project headers, only the C and C++ standard libraries.
//
// Convention: every real-valued primitive NAME of the table has the function cot_rt::NAME here,
// one template for f64 and f32; integer operations that can fail return false instead of
// overflowing (undefined behaviour in C++).
#pragma once

#include <math.h>  // lgamma_r, lgammaf_r: std::lgamma writes the global `signgam`

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace cot_rt {

template <class T>
inline T add(T a, T b) {
  return a + b;
}
template <class T>
inline T sub(T a, T b) {
  return a - b;
}
template <class T>
inline T mul(T a, T b) {
  return a * b;
}
template <class T>
inline T div(T a, T b) {
  return a / b;
}
template <class T>
inline T neg(T a) {
  return -a;
}
template <class T>
inline T pow(T a, T b) {
  return std::pow(a, b);
}
template <class T>
inline T exp(T a) {
  return std::exp(a);
}
template <class T>
inline T log(T a) {
  return std::log(a);
}
template <class T>
inline T sin(T a) {
  return std::sin(a);
}
template <class T>
inline T cos(T a) {
  return std::cos(a);
}
template <class T>
inline T tan(T a) {
  return std::tan(a);
}
template <class T>
inline T tanh(T a) {
  return std::tanh(a);
}
template <class T>
inline T sqrt(T a) {
  return std::sqrt(a);
}
template <class T>
inline T abs(T a) {
  return std::fabs(a);
}
// 1 / (1 + exp(-x)) overflows exp for large negative x; use exp(x) / (1 + exp(x)) there. The
// exponential is a parameter for the vector variant (codegen/vector_math.h).
template <class T, class Exp>
inline T sigmoid_with(T x, Exp exp_of) {
  if (x >= 0) return T(1) / (T(1) + exp_of(-x));
  T e = exp_of(x);
  return e / (T(1) + e);
}
template <class T>
inline T sigmoid(T x) {
  return sigmoid_with(x, [](T v) { return std::exp(v); });
}
template <class T>
inline T log1p(T a) {
  return std::log1p(a);
}
template <class T>
inline T expm1(T a) {
  return std::expm1(a);
}
template <class T>
inline T lgamma(T a) {
  int sign;  // the reentrant variants keep evaluation free of global state
  if constexpr (std::is_same_v<T, float>) {
    return ::lgammaf_r(a, &sign);
  } else {
    return ::lgamma_r(a, &sign);
  }
}
// digamma(x) = d/dx log|Γ(x)|: reflection for x < 0.5, the recurrence ψ(x) = ψ(x + 1) − 1/x
// up to x >= 10, then the asymptotic series (its next term is below 1e-15 there).
template <class T>
inline T digamma(T a) {
  double x = static_cast<double>(a);
  if (std::isnan(x)) return static_cast<T>(x);
  if (x <= 0 && std::floor(x) == x) return std::numeric_limits<T>::quiet_NaN();  // a pole
  double acc = 0;
  if (x < 0.5) {  // ψ(x) = ψ(1 − x) − π / tan(πx)
    const double pi = 3.14159265358979323846;
    acc -= pi / std::tan(pi * x);
    x = 1 - x;
  }
  for (; x < 10; x += 1) acc -= 1 / x;
  const double r = 1 / (x * x);
  const double series =
      std::log(x) - 0.5 / x -
      r * (1.0 / 12 -
           r * (1.0 / 120 -
                r * (1.0 / 252 - r * (1.0 / 240 - r * (1.0 / 132 - r * (691.0 / 32760))))));
  return static_cast<T>(acc + series);
}
// trigamma(x) = ψ'(x): reflection ψ'(1 − x) + ψ'(x) = π² / sin²(πx), the recurrence
// ψ'(x) = ψ'(x + 1) + 1/x², then the asymptotic series.
template <class T>
inline T trigamma(T a) {
  double x = static_cast<double>(a);
  if (std::isnan(x)) return static_cast<T>(x);
  if (x <= 0 && std::floor(x) == x) return std::numeric_limits<T>::infinity();  // a pole
  double acc = 0, sign = 1;
  if (x < 0.5) {
    const double pi = 3.14159265358979323846;
    const double s = std::sin(pi * x);
    acc = pi * pi / (s * s);
    sign = -1;
    x = 1 - x;
  }
  double t = 0;
  for (; x < 10; x += 1) t += 1 / (x * x);
  const double r = 1 / (x * x);
  t += 1 / x + r / 2 +
       r / x *
           (1.0 / 6 -
            r * (1.0 / 30 - r * (1.0 / 42 - r * (1.0 / 30 - r * (5.0 / 66 - r * (691.0 / 2730))))));
  return static_cast<T>(acc + sign * t);
}
template <class T>
inline T atan2(T y, T x) {
  return std::atan2(y, x);
}
// NaN in, NaN out (unlike fmax); on ties the first operand, whose derivative is used.
template <class T>
inline T max(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return a >= b ? a : b;
}
template <class T>
inline T min(T a, T b) {
  if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  return a <= b ? a : b;
}
template <class T>
inline T stop_gradient(T a) {
  return a;
}

// Reductions' combination of reals: max/min propagate NaN (a NaN term replaces the
// accumulator and stays), unlike std::max.
template <class T>
inline T max_combine(T acc, T x) {
  return (x > acc || std::isnan(x)) ? x : acc;
}
template <class T>
inline T min_combine(T acc, T x) {
  return (x < acc || std::isnan(x)) ? x : acc;
}

// --- i64: false on overflow or division by zero ---
inline bool add_i64(int64_t a, int64_t b, int64_t* r) {
  return !__builtin_add_overflow(a, b, r);
}
inline bool sub_i64(int64_t a, int64_t b, int64_t* r) {
  return !__builtin_sub_overflow(a, b, r);
}
inline bool mul_i64(int64_t a, int64_t b, int64_t* r) {
  return !__builtin_mul_overflow(a, b, r);
}
inline bool neg_i64(int64_t a, int64_t* r) {
  return !__builtin_sub_overflow(int64_t{0}, a, r);
}
inline bool abs_i64(int64_t a, int64_t* r) {
  if (a >= 0) {
    *r = a;
    return true;
  }
  return neg_i64(a, r);
}
inline int64_t max_i64(int64_t a, int64_t b) {
  return a >= b ? a : b;
}
inline int64_t min_i64(int64_t a, int64_t b) {
  return a <= b ? a : b;
}
// Floor division and the modulus with the divisor's sign (Python's semantics), and exact
// division (false also when b does not divide a).
enum class DivKind { Floor, Mod, Exact };
inline bool div_i64(DivKind k, int64_t a, int64_t b, int64_t* r) {
  if (b == 0) return false;
  if (b == -1) {  // a / -1 overflows for INT64_MIN; a % -1 is 0 but UB in C++
    if (k == DivKind::Mod) {
      *r = 0;
      return true;
    }
    if (a == INT64_MIN) return false;
    *r = -a;
    return true;
  }
  const int64_t q = a / b, m = a % b;
  if (k == DivKind::Exact) {
    *r = q;
    return m == 0;
  }
  // C++ truncates toward zero; adjust when the signs differ and the division is inexact.
  const bool adjust = m != 0 && ((m < 0) != (b < 0));
  if (k == DivKind::Floor) {
    *r = adjust ? q - 1 : q;
  } else {
    *r = adjust ? m + b : m;
  }
  return true;
}
// `i64(x)` of a real: truncation toward zero; false for NaN, infinities and values outside the
// i64 range ([-2^63, 2^63) is exactly the range whose truncation fits; NaN fails both).
inline bool real_to_i64(double x, int64_t* r) {
  if (x >= -0x1p63 && x < 0x1p63) {
    *r = static_cast<int64_t>(x);
    return true;
  }
  return false;
}

}  // namespace cot_rt
