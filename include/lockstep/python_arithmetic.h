// Python's arithmetic where C++'s differs: floor division, modulo (the
// remainder takes the divisor's sign), integer powers, and round() with
// Python's rules; written once for the eager tensor ops (kernels/elementwise.cu
// through lockstep/kernels/op_functions.h), @lockstep.fuse's kernels (the
// same functions) and kernels in the numba dialect (lockstep/python_kernels.h).
//
// Every function computes in the type it is given, so each caller keeps its
// precision (the eager ops call the floating forms with double; fused and
// numba-dialect kernels with their own type, pow_in says how for float). Integer division never traps:
// division by zero gives 0 (NumPy's answer; a kernel cannot raise), and the
// one quotient that overflows, MIN / -1, wraps to MIN as the GPU's integer
// division does (its remainder is 0), where the host's division instruction
// would raise SIGFPE.
//
// Plain CUDA C++ without the standard library, so the host compiler, nvcc and
// NVRTC all read it.
#pragma once

#include "lockstep/cuda.h"

namespace lockstep::arithmetic {

// Which types are integers (bool among them), whether signed, and the
// unsigned type that holds their products modulo 2^bits; every other type
// (float, double, the 16-bit floats) is floating point. Member functions, not
// constants: NVRTC would give each kernel module a global per constant.
template <class T>
struct integer_traits {
  __host__ __device__ static constexpr bool integer() { return false; }
  __host__ __device__ static constexpr bool signed_type() { return false; }
};
#define LOCKSTEP_INTEGER_TRAITS(T, is_signed, Unsigned)                           \
  template <>                                                                     \
  struct integer_traits<T> {                                                      \
    __host__ __device__ static constexpr bool integer() { return true; }          \
    __host__ __device__ static constexpr bool signed_type() { return is_signed; } \
    using wide_unsigned = Unsigned;                                               \
  };
LOCKSTEP_INTEGER_TRAITS(bool, false, unsigned)
LOCKSTEP_INTEGER_TRAITS(char, (char(-1) < char(0)), unsigned)
LOCKSTEP_INTEGER_TRAITS(signed char, true, unsigned)
LOCKSTEP_INTEGER_TRAITS(unsigned char, false, unsigned)
LOCKSTEP_INTEGER_TRAITS(short, true, unsigned)
LOCKSTEP_INTEGER_TRAITS(unsigned short, false, unsigned)
LOCKSTEP_INTEGER_TRAITS(int, true, unsigned)
LOCKSTEP_INTEGER_TRAITS(unsigned, false, unsigned)
LOCKSTEP_INTEGER_TRAITS(long, true, unsigned long)
LOCKSTEP_INTEGER_TRAITS(unsigned long, false, unsigned long)
LOCKSTEP_INTEGER_TRAITS(long long, true, unsigned long long)
LOCKSTEP_INTEGER_TRAITS(unsigned long long, false, unsigned long long)
#undef LOCKSTEP_INTEGER_TRAITS

template <class T>
__host__ __device__ constexpr bool is_integer() {
  return integer_traits<T>::integer();
}
template <class T>
__host__ __device__ constexpr bool is_signed_integer() {
  return integer_traits<T>::signed_type();
}

// The floating functions for float (and the 16-bit floats, which convert to
// float) and for double. floor, fmod and rint are exact in any precision;
// pow of floats is whatever `pow` of two floats is where the kernel is
// compiled: powf on a GPU, the host compiler's double pow rounded to float on
// the emulator (as fusion's kernels have always computed it).
__host__ __device__ inline float floor_in(float x) { return floorf(x); }
__host__ __device__ inline double floor_in(double x) { return floor(x); }
__host__ __device__ inline float fmod_in(float a, float b) { return fmodf(a, b); }
__host__ __device__ inline double fmod_in(double a, double b) { return fmod(a, b); }
__host__ __device__ inline float pow_in(float a, float b) { return static_cast<float>(pow(a, b)); }
__host__ __device__ inline double pow_in(double a, double b) { return pow(a, b); }
__host__ __device__ inline float rint_in(float x) { return rintf(x); }
__host__ __device__ inline double rint_in(double x) { return rint(x); }

// -a modulo 2^bits: MIN for MIN, without the signed overflow of -MIN.
template <class T>
__host__ __device__ inline T wrapping_negate(T a) {
  using U = typename integer_traits<T>::wide_unsigned;
  return static_cast<T>(U(0) - static_cast<U>(a));
}

// C's truncating division (the tensor ops' div of integer tensors), with the
// integer answers above for b == 0 and MIN / -1; IEEE division for floats.
template <class T>
__host__ __device__ inline T divide(T a, T b) {
  if constexpr (is_integer<T>()) {
    if (b == T(0)) return T(0);
    if constexpr (is_signed_integer<T>())
      if (b == T(-1)) return wrapping_negate(a);
  }
  return static_cast<T>(a / b);
}

// Python's a // b: the quotient rounded toward minus infinity (floor(a / b)
// for floats).
template <class T>
__host__ __device__ inline T floor_divide(T a, T b) {
  if constexpr (is_integer<T>()) {
    const T q = divide(a, b);
    if constexpr (is_signed_integer<T>())
      if (b != T(0) && b != T(-1) && static_cast<T>(q * b) != a && ((a < T(0)) != (b < T(0)))) return static_cast<T>(q - T(1));
    return q;
  } else {
    return static_cast<T>(floor_in(a / b));
  }
}

// Python's a % b: a - b * (a // b), of the divisor's sign (0 for b == 0, and
// for b == -1, MIN's included); floats through fmod, a nonzero remainder of
// the other sign moved by b.
template <class T>
__host__ __device__ inline T remainder(T a, T b) {
  if constexpr (is_integer<T>()) {
    if (b == T(0)) return T(0);
    if constexpr (is_signed_integer<T>()) {
      if (b == T(-1)) return T(0);
      const T r = static_cast<T>(a % b);
      return r != T(0) && ((r < T(0)) != (b < T(0))) ? static_cast<T>(r + b) : r;
    } else {
      return static_cast<T>(a % b);
    }
  } else {
    T r = static_cast<T>(fmod_in(a, b));
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = static_cast<T>(r + b);
    return r;
  }
}

// base ** exponent. Integers by repeated squaring, exact (pow() in double can
// land one unit under an integer and truncate), wrapping modulo 2^bits as
// the GPU's multiplication does; a negative exponent gives 0 unless the base
// is 1 or -1 (Python gives a float, NumPy raises; a kernel can do neither).
template <class T>
__host__ __device__ inline T power(T base, T exponent) {
  if constexpr (is_integer<T>()) {
    if constexpr (is_signed_integer<T>())
      if (exponent < T(0)) return base == T(1) ? T(1) : base == T(-1) ? (exponent % 2 ? T(-1) : T(1)) : T(0);
    using U = typename integer_traits<T>::wide_unsigned;
    U result = 1, factor = static_cast<U>(base);
    for (; exponent > T(0); exponent = static_cast<T>(exponent / 2), factor *= factor)
      if (exponent % 2) result *= factor;
    return static_cast<T>(result);
  } else {
    return static_cast<T>(pow_in(base, exponent));
  }
}

// Python's round(x): halves to even (the current rounding mode's rint).
template <class T>
__host__ __device__ inline long long round_half_even(T x) {
  return static_cast<long long>(rint_in(x));
}

// round(x, ndigits) for floats, as numba (and CPython's fallback) computes it.
__host__ __device__ inline double round_digits(double x, long long ndigits) {
  if (isinf(x) || isnan(x)) return x;
  double pow1, pow2 = 1.0, y;
  if (ndigits >= 0) {
    if (ndigits > 22) {
      pow1 = ::pow(10.0, static_cast<double>(ndigits - 22));
      pow2 = 1e22;
    } else {
      pow1 = ::pow(10.0, static_cast<double>(ndigits));
    }
    y = (x * pow1) * pow2;
    if (isinf(y)) return x;
  } else {
    pow1 = ::pow(10.0, static_cast<double>(-ndigits));
    y = x / pow1;
  }
  double z = rint(y);
  if (fabs(y - z) == 0.5) z = 2.0 * rint(y / 2.0);
  z = ndigits >= 0 ? (z / pow2) / pow1 : z * pow1;
  return isinf(z) ? x : z;
}

}  // namespace lockstep::arithmetic
