// Vector variants of the elementwise functions, for generated code: glibc's libmvec has
// 2-, 4- and 8-lane versions of exp, log, sin, ... (within 4 ulp, as glibc documents; the
// scalar functions are correctly rounded or within 1 ulp), and GCC calls them from loops under
// `omp simd` once the functions are declared `omp declare simd` (glibc's <math.h> does so only
// under -ffast-math, which would also drop IEEE semantics). Only loops the emitter marks (long
// generators and sums) are such loops: without -fno-math-errno GCC vectorizes no other call, so
// short loops keep the scalar functions' rounding. Embedded after prims/scalar_math.h in every
// generated translation unit; elsewhere (clang, other C libraries, no OpenMP) it declares
// nothing and the loops call the scalar functions.
#pragma once

#include <cmath>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(_OPENMP) && \
    defined(__GLIBC__) && defined(__GLIBC_PREREQ)
#if __GLIBC_PREREQ(2, 22)
extern "C" {
#pragma omp declare simd notinbranch
double exp(double);
#pragma omp declare simd notinbranch
double log(double);
#pragma omp declare simd notinbranch
double sin(double);
#pragma omp declare simd notinbranch
double cos(double);
#pragma omp declare simd notinbranch
double pow(double, double);
#pragma omp declare simd notinbranch
float expf(float);
#pragma omp declare simd notinbranch
float logf(float);
#pragma omp declare simd notinbranch
float sinf(float);
#pragma omp declare simd notinbranch
float cosf(float);
#pragma omp declare simd notinbranch
float powf(float, float);
}
#endif
#if __GLIBC_PREREQ(2, 35)
extern "C" {
#pragma omp declare simd notinbranch
double tan(double);
#pragma omp declare simd notinbranch
double tanh(double);
#pragma omp declare simd notinbranch
double log1p(double);
#pragma omp declare simd notinbranch
double expm1(double);
#pragma omp declare simd notinbranch
double atan2(double, double);
#pragma omp declare simd notinbranch
float tanf(float);
#pragma omp declare simd notinbranch
float tanhf(float);
#pragma omp declare simd notinbranch
float log1pf(float);
#pragma omp declare simd notinbranch
float expm1f(float);
#pragma omp declare simd notinbranch
float atan2f(float, float);
}
#endif
#endif
