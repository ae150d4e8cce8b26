// Vector variants of the elementwise functions, for generated code: cot_vec::NAME computes what
// cot_rt::NAME (prims/scalar_math.h) computes, through glibc's libmvec, which has 2-, 4- and
// 8-lane versions of exp, log, sin, ... (within 4 ulp, as glibc documents; the scalar functions
// are correctly rounded or within 1 ulp). GCC calls a vector version from a vectorized loop
// once the function is declared `omp declare simd` (glibc's <math.h> does so only under
// -ffast-math, which would also drop IEEE semantics). The declarations name the libm symbols
// under other names (cot_simd_exp is `exp`), so that only the calls the emitter writes as
// cot_vec::NAME, in the loops it marks `omp simd` (long generators and sums), can become
// vector calls: any other loop GCC vectorizes still calls the scalar functions and keeps their
// rounding. Embedded after prims/scalar_math.h in every generated translation unit; elsewhere
// (clang, other C libraries, no OpenMP) cot_vec::NAME is cot_rt::NAME.
#pragma once

#include <cmath>
#include <type_traits>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(_OPENMP) && \
    defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 22)
#define COT_VEC_22 1
extern "C" {
#pragma omp declare simd notinbranch
double cot_simd_exp(double) __asm__("exp");
#pragma omp declare simd notinbranch
double cot_simd_log(double) __asm__("log");
#pragma omp declare simd notinbranch
double cot_simd_sin(double) __asm__("sin");
#pragma omp declare simd notinbranch
double cot_simd_cos(double) __asm__("cos");
#pragma omp declare simd notinbranch
double cot_simd_pow(double, double) __asm__("pow");
#pragma omp declare simd notinbranch
float cot_simd_expf(float) __asm__("expf");
#pragma omp declare simd notinbranch
float cot_simd_logf(float) __asm__("logf");
#pragma omp declare simd notinbranch
float cot_simd_sinf(float) __asm__("sinf");
#pragma omp declare simd notinbranch
float cot_simd_cosf(float) __asm__("cosf");
#pragma omp declare simd notinbranch
float cot_simd_powf(float, float) __asm__("powf");
}
#endif
#if __GLIBC_PREREQ(2, 35)
#define COT_VEC_35 1
extern "C" {
#pragma omp declare simd notinbranch
double cot_simd_tan(double) __asm__("tan");
#pragma omp declare simd notinbranch
double cot_simd_tanh(double) __asm__("tanh");
#pragma omp declare simd notinbranch
double cot_simd_log1p(double) __asm__("log1p");
#pragma omp declare simd notinbranch
double cot_simd_expm1(double) __asm__("expm1");
#pragma omp declare simd notinbranch
double cot_simd_atan2(double, double) __asm__("atan2");
#pragma omp declare simd notinbranch
float cot_simd_tanf(float) __asm__("tanf");
#pragma omp declare simd notinbranch
float cot_simd_tanhf(float) __asm__("tanhf");
#pragma omp declare simd notinbranch
float cot_simd_log1pf(float) __asm__("log1pf");
#pragma omp declare simd notinbranch
float cot_simd_expm1f(float) __asm__("expm1f");
#pragma omp declare simd notinbranch
float cot_simd_atan2f(float, float) __asm__("atan2f");
}
#endif
#endif

namespace cot_vec {

// NAME's vector-callable version where libmvec has one (glibc `SINCE`), else cot_rt::NAME.
#define COT_VEC_UNARY(NAME, SINCE)                            \
  template <class T>                                          \
  inline T NAME(T a) {                                        \
    if constexpr (SINCE && std::is_same_v<T, double>) {       \
      return cot_simd_##NAME(a);                              \
    } else if constexpr (SINCE && std::is_same_v<T, float>) { \
      return cot_simd_##NAME##f(a);                           \
    } else {                                                  \
      return cot_rt::NAME(a);                                 \
    }                                                         \
  }
#define COT_VEC_BINARY(NAME, SINCE)                           \
  template <class T>                                          \
  inline T NAME(T a, T b) {                                   \
    if constexpr (SINCE && std::is_same_v<T, double>) {       \
      return cot_simd_##NAME(a, b);                           \
    } else if constexpr (SINCE && std::is_same_v<T, float>) { \
      return cot_simd_##NAME##f(a, b);                        \
    } else {                                                  \
      return cot_rt::NAME(a, b);                              \
    }                                                         \
  }
#ifndef COT_VEC_22
#define COT_VEC_22 0
#endif
#ifndef COT_VEC_35
#define COT_VEC_35 0
#endif
COT_VEC_UNARY(exp, COT_VEC_22)
COT_VEC_UNARY(log, COT_VEC_22)
COT_VEC_UNARY(sin, COT_VEC_22)
COT_VEC_UNARY(cos, COT_VEC_22)
COT_VEC_BINARY(pow, COT_VEC_22)
COT_VEC_UNARY(tan, COT_VEC_35)
COT_VEC_UNARY(tanh, COT_VEC_35)
COT_VEC_UNARY(log1p, COT_VEC_35)
COT_VEC_UNARY(expm1, COT_VEC_35)
COT_VEC_BINARY(atan2, COT_VEC_35)
#undef COT_VEC_UNARY
#undef COT_VEC_BINARY

template <class T>
inline T sigmoid(T x) {
  return cot_rt::sigmoid_with(x, [](T v) { return cot_vec::exp(v); });
}

}  // namespace cot_vec
