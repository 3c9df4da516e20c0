// CUDA's math functions and intrinsics as the host computes them.
//
// The single-precision functions of <cmath> (expf, sqrtf, fmaf, ...) are
// already host functions; here are CUDA's extra spellings. Fast intrinsics
// (__expf, __fdividef, ...) are computed exactly: results may differ from the
// GPU's approximations in the last bits, never the other way round.
#pragma once
#include <algorithm>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

// CUDA declares the classification functions in the global namespace, for
// device and host code alike (math_functions.h); code calls them unqualified.
using std::isfinite;
using std::isinf;
using std::isnan;
using std::signbit;

// CUDA puts min and max in the global namespace for every arithmetic type.
#define LOCKSTEP_MINMAX(T)                         \
  inline T min(T a, T b) { return a < b ? a : b; } \
  inline T max(T a, T b) { return a > b ? a : b; }
LOCKSTEP_MINMAX(int)
LOCKSTEP_MINMAX(unsigned int)
LOCKSTEP_MINMAX(long)
LOCKSTEP_MINMAX(unsigned long)
LOCKSTEP_MINMAX(long long)
LOCKSTEP_MINMAX(unsigned long long)
#undef LOCKSTEP_MINMAX
inline float min(float a, float b) { return std::fmin(a, b); }
inline float max(float a, float b) { return std::fmax(a, b); }
inline double min(double a, double b) { return std::fmin(a, b); }
inline double max(double a, double b) { return std::fmax(a, b); }
// CUDA's mixed overloads (crt/math_functions.hpp): a signed and an unsigned
// integer compare as the unsigned type, as C's conversions would; float and
// double compare as double.
#define LOCKSTEP_MIXED_MINMAX(Signed, Unsigned)                                          \
  inline Unsigned min(Signed a, Unsigned b) { return min(static_cast<Unsigned>(a), b); } \
  inline Unsigned min(Unsigned a, Signed b) { return min(a, static_cast<Unsigned>(b)); } \
  inline Unsigned max(Signed a, Unsigned b) { return max(static_cast<Unsigned>(a), b); } \
  inline Unsigned max(Unsigned a, Signed b) { return max(a, static_cast<Unsigned>(b)); }
LOCKSTEP_MIXED_MINMAX(int, unsigned int)
LOCKSTEP_MIXED_MINMAX(long, unsigned long)
LOCKSTEP_MIXED_MINMAX(long long, unsigned long long)
#undef LOCKSTEP_MIXED_MINMAX
inline double min(float a, double b) { return std::fmin(static_cast<double>(a), b); }
inline double min(double a, float b) { return std::fmin(a, static_cast<double>(b)); }
inline double max(float a, double b) { return std::fmax(static_cast<double>(a), b); }
inline double max(double a, float b) { return std::fmax(a, static_cast<double>(b)); }
// CUDA's spelled-out integer forms.
inline unsigned umin(unsigned a, unsigned b) { return min(a, b); }
inline unsigned umax(unsigned a, unsigned b) { return max(a, b); }
inline long long llmin(long long a, long long b) { return min(a, b); }
inline long long llmax(long long a, long long b) { return max(a, b); }
inline unsigned long long ullmin(unsigned long long a, unsigned long long b) { return min(a, b); }
inline unsigned long long ullmax(unsigned long long a, unsigned long long b) { return max(a, b); }

inline float rsqrtf(float x) { return 1.0f / std::sqrt(x); }
inline double rsqrt(double x) { return 1.0 / std::sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / std::cbrt(x); }
inline float exp10f(float x) { return std::pow(10.0f, x); }
inline float saturatef(float x) { return x > 0.0f ? (x < 1.0f ? x : 1.0f) : 0.0f; }  // NaN gives 0, as on the GPU
inline float __saturatef(float x) { return saturatef(x); }
inline void sincosf(float x, float* s, float* c) {
  *s = std::sin(x);
  *c = std::cos(x);
}
inline void sincos(double x, double* s, double* c) {
  *s = std::sin(x);
  *c = std::cos(x);
}
inline float normcdff(float x) { return 0.5f * std::erfc(-x / std::sqrt(2.0f)); }

inline float __expf(float x) { return std::exp(x); }
inline float __exp10f(float x) { return std::pow(10.0f, x); }
inline float __logf(float x) { return std::log(x); }
inline float __log2f(float x) { return std::log2(x); }
inline float __log10f(float x) { return std::log10(x); }
inline float __powf(float x, float y) { return std::pow(x, y); }
inline float __sinf(float x) { return std::sin(x); }
inline float __cosf(float x) { return std::cos(x); }
inline float __tanf(float x) { return std::tan(x); }
inline void __sincosf(float x, float* s, float* c) { sincosf(x, s, c); }
inline float __fdividef(float x, float y) { return x / y; }
// The intrinsics that name their rounding (__fadd_rn ... __fadd_ru, __float2int_rd, ...).
#include "lockstep/emu/rounding_intrinsics.h"

inline int __float_as_int(float x) { return std::bit_cast<int>(x); }
inline unsigned __float_as_uint(float x) { return std::bit_cast<unsigned>(x); }
inline float __int_as_float(int x) { return std::bit_cast<float>(x); }
inline float __uint_as_float(unsigned x) { return std::bit_cast<float>(x); }
inline long long __double_as_longlong(double x) { return std::bit_cast<long long>(x); }
inline double __longlong_as_double(long long x) { return std::bit_cast<double>(x); }

inline int __popc(unsigned x) { return std::popcount(x); }
inline int __popcll(unsigned long long x) { return std::popcount(x); }
inline int __clz(int x) { return std::countl_zero(static_cast<unsigned>(x)); }
inline int __clzll(long long x) { return std::countl_zero(static_cast<unsigned long long>(x)); }
inline int __ffs(int x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned>(x)) + 1; }
inline int __ffsll(long long x) { return x == 0 ? 0 : std::countr_zero(static_cast<unsigned long long>(x)) + 1; }
inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i) r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x))) << 32) | __brev(static_cast<unsigned>(x >> 32));
}
inline int __mul24(int a, int b) { return static_cast<int>(static_cast<long long>(a << 8 >> 8) * (b << 8 >> 8)); }
inline unsigned __umul24(unsigned a, unsigned b) { return (a & 0xffffffu) * (b & 0xffffffu); }
inline int __mulhi(int a, int b) { return static_cast<int>((static_cast<long long>(a) * b) >> 32); }
inline unsigned __umulhi(unsigned a, unsigned b) { return static_cast<unsigned>((static_cast<unsigned long long>(a) * b) >> 32); }
inline long long __mul64hi(long long a, long long b) { return static_cast<long long>((static_cast<__int128>(a) * b) >> 64); }
inline unsigned long long __umul64hi(unsigned long long a, unsigned long long b) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(a) * b) >> 64);
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((v << (shift & 31)) >> 32);
}
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(v >> (shift & 31));
}
inline unsigned __sad(int x, int y, unsigned z) { return z + static_cast<unsigned>(x > y ? x - y : y - x); }
inline int __hadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b) >> 1); }
inline int __rhadd(int a, int b) { return static_cast<int>((static_cast<long long>(a) + b + 1) >> 1); }
