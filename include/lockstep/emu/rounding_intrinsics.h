// CUDA's floating-point intrinsics that name their rounding: arithmetic
// (__fadd_rd, __dmul_ru, __fmaf_rz, __fsqrt_rd, __drcp_rz, ...) and the
// conversions between floating point and integers (__float2int_ru,
// __ll2float_rd, __double2float_rz, ...), each rounded once, correctly, in the
// direction its suffix names, as the PTX instruction behind it does (.rn to
// nearest even, .rz toward zero, .rm down, .rp up), subnormals kept.
//
// Why not fesetround: the host's rounding mode is state the compiler does not
// see. Programs are built at -O3 without -frounding-math, some with
// -ffast-math, so the compiler folds, hoists and fuses floating-point
// operations as if the mode were always to nearest: an addition between two
// fesetround calls may well be computed outside them.
//
// So the directed modes compute the exact result and round it once. They do
// it in integers, the error-free way no flag can touch: floating-point
// error-free transformations (TwoSum, TwoProduct through fma) are what
// -ffast-math's reassociation folds away (in TwoSum, (a + b) - a becomes b),
// and their residuals underflow near the subnormals. A sum or product of the
// significands is exact in 128 bits; a sum whose operands lie too far apart,
// a quotient and a square root keep their last bit as a sticky bit (set when
// anything nonzero lies below it), which is enough for one correct rounding
// when it sits at least two bits below the rounding point. round_exact then
// rounds into the format: subnormals, overflow (to infinity, or to the
// largest finite value where the mode rounds toward zero on that side) and
// signed zeros included.
//
// The round-to-nearest arithmetic forms are the host's own IEEE operations,
// on values the optimiser cannot see through (opaque), so that, as CUDA
// promises, they are never fused into an FMA, reassociated or approximated.
// Integers classify NaN and infinity, which -ffinite-math-only would fold.
// The GPU's conversions to integers saturate, and give 0 for NaN from float to
// a 32-bit integer, else 1 << (bits - 1) (PTX ISA, cvt). NaN results are the
// host's quiet NaN, not the GPU's canonical one.
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "lockstep/emu/half_rounding.h"  // rounding

namespace lockstep::emu::rounded {

using u128 = unsigned __int128;

template <class T>
struct binary_format;
template <>
struct binary_format<float> {
  using bits = std::uint32_t;
  static constexpr int precision = 24, max_exponent = 127, min_quantum = -149;  // min_quantum: the exponent of a subnormal's last bit
};
template <>
struct binary_format<double> {
  using bits = std::uint64_t;
  static constexpr int precision = 53, max_exponent = 1023, min_quantum = -1074;
};

template <class T>
using bits_of = typename binary_format<T>::bits;
template <class T>
inline constexpr bits_of<T> sign_bit = bits_of<T>{1} << (8 * sizeof(T) - 1);
template <class T>
inline constexpr bits_of<T> infinity_bits = static_cast<bits_of<T>>(2 * binary_format<T>::max_exponent + 1) << (binary_format<T>::precision - 1);

template <class T>
T from_bits(bool negative, bits_of<T> magnitude) {
  return std::bit_cast<T>(static_cast<bits_of<T>>((negative ? sign_bit<T> : 0) | magnitude));
}
template <class T>
T zero(bool negative) {
  return from_bits<T>(negative, 0);
}
template <class T>
T infinity(bool negative) {
  return from_bits<T>(negative, infinity_bits<T>);
}
template <class T>
T nan() {
  return std::numeric_limits<T>::quiet_NaN();
}
// Past the largest finite value: infinity where the mode rounds away from
// zero on that side, else the largest finite value.
template <class T>
T overflowed(bool negative, rounding mode) {
  const bool to_infinity = mode == rounding::nearest_even || (mode == rounding::up && !negative) || (mode == rounding::down && negative);
  return from_bits<T>(negative, to_infinity ? infinity_bits<T> : infinity_bits<T> - 1);
}

inline int bit_length(u128 m) {
  const auto high = static_cast<std::uint64_t>(m >> 64), low = static_cast<std::uint64_t>(m);
  return high ? 128 - std::countl_zero(high) : 64 - std::countl_zero(low);
}

// m / 2^shift (shift >= 0) rounded to an integer by the mode, for a value of
// the given sign.
inline u128 shift_rounded(u128 m, int shift, bool negative, rounding mode) {
  if (shift == 0) return m;
  u128 kept;
  bool half, below_half;  // the first bit shifted out; any bit after it
  if (shift > 128) {
    kept = 0, half = false, below_half = m != 0;
  } else {
    kept = shift == 128 ? 0 : m >> shift;
    half = (m >> (shift - 1)) & 1;
    below_half = (m & ((u128{1} << (shift - 1)) - 1)) != 0;
  }
  switch (mode) {
    case rounding::nearest_even:
      return kept + (half && (below_half || (kept & 1)));
    case rounding::toward_zero:
      return kept;
    case rounding::up:
      return kept + (!negative && (half || below_half));
    case rounding::down:
      return kept + (negative && (half || below_half));
  }
  return kept;
}

// (-1)^negative * m * 2^exponent, rounded once into T. The last bit of m may
// be a sticky bit (see the top of the file).
template <class T>
T round_exact(bool negative, u128 m, int exponent, rounding mode) {
  using F = binary_format<T>;
  if (m == 0) return zero<T>(negative);
  const int top = exponent + bit_length(m) - 1;  // the exponent of the leading bit
  if (top > F::max_exponent) return overflowed<T>(negative, mode);
  const int quantum = std::max(top - (F::precision - 1), F::min_quantum);  // the exponent of the result's last bit
  const u128 units = quantum <= exponent ? m << (exponent - quantum) : shift_rounded(m, quantum - exponent, negative, mode);
  // Exponent field and significand in one sum: a carry out of the significand raises the exponent.
  const u128 magnitude = (static_cast<u128>(quantum - F::min_quantum) << (F::precision - 1)) + units;
  if (magnitude >= infinity_bits<T>) return overflowed<T>(negative, mode);
  return from_bits<T>(negative, static_cast<bits_of<T>>(magnitude));
}

// A float or double taken apart: finite values are
// (-1)^negative * significand * 2^exponent.
enum class kind { zero, finite, infinite, nan };
struct unpacked {
  kind what;
  bool negative;
  std::uint64_t significand;
  int exponent;
};

template <class T>
unpacked unpack(T x) {
  using F = binary_format<T>;
  constexpr int fraction_bits = F::precision - 1;
  const auto bits = std::bit_cast<bits_of<T>>(x);
  const bool negative = (bits & sign_bit<T>) != 0;
  const int biased = static_cast<int>((bits >> fraction_bits) & (2 * F::max_exponent + 1));
  const std::uint64_t fraction = bits & ((bits_of<T>{1} << fraction_bits) - 1);
  if (biased == 2 * F::max_exponent + 1) return {fraction ? kind::nan : kind::infinite, negative, 0, 0};
  if (biased == 0) return {fraction ? kind::finite : kind::zero, negative, fraction, F::min_quantum};
  return {kind::finite, negative, fraction | (std::uint64_t{1} << fraction_bits), biased - 1 + F::min_quantum};
}

// A finite nonzero value with its significand shifted to exactly `precision` bits.
template <class T>
unpacked normalized(unpacked x) {
  const int shift = binary_format<T>::precision - bit_length(x.significand);
  return {x.what, x.negative, x.significand << shift, x.exponent - shift};
}

template <class T>
T exactly(unpacked x) {  // a finite value back, unrounded
  return x.what == kind::zero ? zero<T>(x.negative) : round_exact<T>(x.negative, x.significand, x.exponent, rounding::toward_zero);
}

// x + y for nonzero finite terms whose magnitudes are below 2^106, rounded once.
// The term with the higher leading bit is shifted up to bit 125; the other is
// aligned to it, and bits it loses below bit 0 leave bit 0 set (sticky). That
// only happens when the other term lies below bit 106, so the sum keeps its
// leading bit at 124 or above and is rounded 70 bits above the sticky bit.
template <class T>
T round_sum(bool x_negative, u128 x, int x_exponent, bool y_negative, u128 y, int y_exponent, rounding mode) {
  if (x_exponent + bit_length(x) < y_exponent + bit_length(y)) {
    std::swap(x_negative, y_negative);
    std::swap(x, y);
    std::swap(x_exponent, y_exponent);
  }
  const int up = 125 - (bit_length(x) - 1);
  const int exponent = x_exponent - up;
  x <<= up;
  const int align = y_exponent - exponent;
  if (align >= 0) {
    y <<= align;  // fits: its leading bit is not above x's
  } else if (align <= -128) {
    y = 1;
  } else {
    const bool lost = (y & ((u128{1} << -align) - 1)) != 0;
    y = (y >> -align) | lost;
  }
  if (x_negative == y_negative) return round_exact<T>(x_negative, x + y, exponent, mode);
  if (x == y) return zero<T>(mode == rounding::down);  // an exact zero: -0 rounding down, else +0
  return x > y ? round_exact<T>(x_negative, x - y, exponent, mode) : round_exact<T>(y_negative, y - x, exponent, mode);
}

template <class T>
T add(unpacked x, unpacked y, rounding mode) {
  if (x.what == kind::nan || y.what == kind::nan) return nan<T>();
  if (x.what == kind::infinite || y.what == kind::infinite) {
    if (x.what == y.what && x.negative != y.negative) return nan<T>();
    return infinity<T>(x.what == kind::infinite ? x.negative : y.negative);
  }
  if (x.what == kind::zero && y.what == kind::zero) return zero<T>(x.negative == y.negative ? x.negative : mode == rounding::down);
  if (x.what == kind::zero) return exactly<T>(y);
  if (y.what == kind::zero) return exactly<T>(x);
  return round_sum<T>(x.negative, x.significand, x.exponent, y.negative, y.significand, y.exponent, mode);
}

template <class T>
T add(T a, T b, rounding mode) {
  return add<T>(unpack(a), unpack(b), mode);
}
template <class T>
T subtract(T a, T b, rounding mode) {
  unpacked y = unpack(b);
  y.negative = !y.negative;
  return add<T>(unpack(a), y, mode);
}

template <class T>
T multiply(T a, T b, rounding mode) {
  const unpacked x = unpack(a), y = unpack(b);
  const bool negative = x.negative != y.negative;
  if (x.what == kind::nan || y.what == kind::nan) return nan<T>();
  if (x.what == kind::infinite || y.what == kind::infinite) return x.what == kind::zero || y.what == kind::zero ? nan<T>() : infinity<T>(negative);
  if (x.what == kind::zero || y.what == kind::zero) return zero<T>(negative);
  return round_exact<T>(negative, static_cast<u128>(x.significand) * y.significand, x.exponent + y.exponent, mode);
}

// a * b + c, rounded once.
template <class T>
T fused_multiply_add(T a, T b, T c, rounding mode) {
  const unpacked x = unpack(a), y = unpack(b), z = unpack(c);
  const bool product_negative = x.negative != y.negative;
  if (x.what == kind::nan || y.what == kind::nan || z.what == kind::nan) return nan<T>();
  if (x.what == kind::infinite || y.what == kind::infinite) {
    if (x.what == kind::zero || y.what == kind::zero) return nan<T>();
    if (z.what == kind::infinite && z.negative != product_negative) return nan<T>();
    return infinity<T>(product_negative);
  }
  if (z.what == kind::infinite) return infinity<T>(z.negative);
  if (x.what == kind::zero || y.what == kind::zero) {
    if (z.what == kind::zero) return zero<T>(z.negative == product_negative ? z.negative : mode == rounding::down);
    return exactly<T>(z);
  }
  const u128 product = static_cast<u128>(x.significand) * y.significand;
  const int product_exponent = x.exponent + y.exponent;
  if (z.what == kind::zero) return round_exact<T>(product_negative, product, product_exponent, mode);
  return round_sum<T>(product_negative, product, product_exponent, z.negative, z.significand, z.exponent, mode);
}

// a / b: 64 more quotient bits than the format's significand needs, and a sticky bit for the remainder.
template <class T>
T divide(T a, T b, rounding mode) {
  const unpacked x = unpack(a), y = unpack(b);
  const bool negative = x.negative != y.negative;
  if (x.what == kind::nan || y.what == kind::nan) return nan<T>();
  if (x.what == kind::infinite) return y.what == kind::infinite ? nan<T>() : infinity<T>(negative);
  if (y.what == kind::infinite) return zero<T>(negative);
  if (y.what == kind::zero) return x.what == kind::zero ? nan<T>() : infinity<T>(negative);
  if (x.what == kind::zero) return zero<T>(negative);
  const unpacked n = normalized<T>(x), d = normalized<T>(y);
  const u128 numerator = static_cast<u128>(n.significand) << 64;
  const u128 quotient = numerator / d.significand;  // in [2^63, 2^65)
  const bool inexact = numerator % d.significand != 0;
  return round_exact<T>(negative, (quotient << 1) | inexact, n.exponent - d.exponent - 65, mode);
}

// floor(sqrt(n)) for 0 < n < 2^126: the double's estimate, one Newton step, then exact checks.
inline u128 integer_sqrt(u128 n) {
  u128 r = static_cast<u128>(std::sqrt(static_cast<double>(n)));
  if (r == 0) r = 1;
  r = (r + n / r) >> 1;
  while (r * r > n) --r;
  while ((r + 1) * (r + 1) <= n) ++r;
  return r;
}

// sqrt(a): the root of the significand shifted to 125 or 126 bits (an even
// exponent), over 60 bits, and a sticky bit when it is not exact.
template <class T>
T square_root(T a, rounding mode) {
  const unpacked x = unpack(a);
  if (x.what == kind::nan) return nan<T>();
  if (x.what == kind::zero) return a;  // sqrt(-0) is -0
  if (x.negative) return nan<T>();
  if (x.what == kind::infinite) return a;
  const unpacked n = normalized<T>(x);
  int shift = 125 - binary_format<T>::precision;
  if ((n.exponent - shift) & 1) ++shift;
  const u128 radicand = static_cast<u128>(n.significand) << shift;
  const u128 root = integer_sqrt(radicand);
  return round_exact<T>(false, (root << 1) | (root * root != radicand), (n.exponent - shift) / 2 - 1, mode);
}

// 1 / sqrt(a) for a float: with a = s * 2^e (s of 24 or 25 bits, e even),
// the result is 2^(-e/2 - 63) * sqrt(2^126 / s), whose integer part is
// floor(sqrt(floor(2^126 / s))), over 50 bits.
inline float reciprocal_square_root(float a, rounding mode) {
  const unpacked x = unpack(a);
  if (x.what == kind::nan) return nan<float>();
  if (x.what == kind::zero) return infinity<float>(x.negative);
  if (x.negative) return nan<float>();
  if (x.what == kind::infinite) return 0.0f;
  unpacked n = normalized<float>(x);
  if (n.exponent & 1) n.significand <<= 1, --n.exponent;
  const u128 numerator = u128{1} << 126;
  const u128 quotient = numerator / n.significand;
  const u128 root = integer_sqrt(quotient);
  const bool inexact = numerator % n.significand != 0 || root * root != quotient;
  return round_exact<float>(false, (root << 1) | inexact, -n.exponent / 2 - 64, mode);
}

template <class T>
T from_integer(bool negative, unsigned long long magnitude, rounding mode) {
  return round_exact<T>(negative, magnitude, 0, mode);
}
template <class T>
T from_signed(long long v, rounding mode) {
  return from_integer<T>(v < 0, v < 0 ? 0ull - static_cast<unsigned long long>(v) : static_cast<unsigned long long>(v), mode);
}

template <class T>
T from_double(double v, rounding mode) {
  const unpacked x = unpack(v);
  if (x.what == kind::nan) return nan<T>();
  if (x.what == kind::infinite) return infinity<T>(x.negative);
  return round_exact<T>(x.negative, x.significand, x.exponent, mode);  // a zero has significand 0
}

// What the GPU's cvt to an integer gives for NaN: 0 from a float to a 32-bit
// integer, else 1 << (bits - 1) (INT_MIN, LLONG_MIN, 2^31 or 2^63 unsigned).
template <class Int, class T>
constexpr Int integer_for_nan() {
  if (std::is_same_v<T, float> && sizeof(Int) == 4) return 0;
  return static_cast<Int>(static_cast<std::make_unsigned_t<Int>>(1) << (8 * sizeof(Int) - 1));
}

// v rounded to an integer by the mode, saturated to Int's range.
template <class Int, class T>
Int to_integer(T v, rounding mode) {
  constexpr Int lowest = std::numeric_limits<Int>::min(), highest = std::numeric_limits<Int>::max();
  const unpacked x = unpack(v);
  if (x.what == kind::nan) return integer_for_nan<Int, T>();
  if (x.what == kind::infinite) return x.negative ? lowest : highest;
  if (x.what == kind::zero) return 0;
  u128 magnitude;
  if (x.exponent > 64)
    magnitude = u128{1} << 65;  // beyond every range
  else if (x.exponent >= 0)
    magnitude = static_cast<u128>(x.significand) << x.exponent;
  else
    magnitude = shift_rounded(x.significand, -x.exponent, x.negative, mode);
  if (!x.negative) return magnitude > static_cast<u128>(highest) ? highest : static_cast<Int>(magnitude);
  if (magnitude == 0) return 0;
  if constexpr (std::is_unsigned_v<Int>) {
    return 0;
  } else {
    const u128 limit = static_cast<u128>(std::make_unsigned_t<Int>{1}) << (8 * sizeof(Int) - 1);  // -lowest
    return magnitude >= limit ? lowest : static_cast<Int>(-static_cast<long long>(magnitude));
  }
}

// x, hidden from the optimiser: an operation on it is done as written, not
// fused with its neighbours into an FMA, reassociated or approximated. Only
// where the build allows that (-ffast-math, or FMA instructions that
// contraction may use, unless lockstep's builds of kernels say they turned it
// off: toolchain::kernel_code_flags): otherwise the host's own operation is
// already the one rounding CUDA's _rn names, and hiding the values would stop
// the host compiler from vectorising the loops around them.
template <class T>
inline T opaque(T x) {
#if !defined(__FAST_MATH__) && (defined(LOCKSTEP_FP_CONTRACT_OFF) || (!defined(__FMA__) && !defined(__FP_FAST_FMA) && !defined(__FP_FAST_FMAF)))
  return x;
#elif defined(__x86_64__)
  __asm__ volatile("" : "+x"(x));
#elif defined(__aarch64__)
  __asm__ volatile("" : "+w"(x));
#else
  volatile T copy = x;
  x = copy;
#endif
  return x;
}

}  // namespace lockstep::emu::rounded

// --- Single precision arithmetic --------------------------------------------

inline float __fadd_rn(float a, float b) {
  using ::lockstep::emu::rounded::opaque;
  return opaque(opaque(a) + opaque(b));
}
inline float __fadd_rz(float a, float b) { return ::lockstep::emu::rounded::add(a, b, ::lockstep::emu::rounding::toward_zero); }
inline float __fadd_rd(float a, float b) { return ::lockstep::emu::rounded::add(a, b, ::lockstep::emu::rounding::down); }
inline float __fadd_ru(float a, float b) { return ::lockstep::emu::rounded::add(a, b, ::lockstep::emu::rounding::up); }

inline float __fsub_rn(float a, float b) {
  using ::lockstep::emu::rounded::opaque;
  return opaque(opaque(a) - opaque(b));
}
inline float __fsub_rz(float a, float b) { return ::lockstep::emu::rounded::subtract(a, b, ::lockstep::emu::rounding::toward_zero); }
inline float __fsub_rd(float a, float b) { return ::lockstep::emu::rounded::subtract(a, b, ::lockstep::emu::rounding::down); }
inline float __fsub_ru(float a, float b) { return ::lockstep::emu::rounded::subtract(a, b, ::lockstep::emu::rounding::up); }

inline float __fmul_rn(float a, float b) {
  using ::lockstep::emu::rounded::opaque;
  return opaque(opaque(a) * opaque(b));
}
inline float __fmul_rz(float a, float b) { return ::lockstep::emu::rounded::multiply(a, b, ::lockstep::emu::rounding::toward_zero); }
inline float __fmul_rd(float a, float b) { return ::lockstep::emu::rounded::multiply(a, b, ::lockstep::emu::rounding::down); }
inline float __fmul_ru(float a, float b) { return ::lockstep::emu::rounded::multiply(a, b, ::lockstep::emu::rounding::up); }

// Division and square root in double, rounded once more to float: a result
// rounded to 53 bits and then to 24 is rounded correctly (53 >= 2 * 24 + 2),
// and unlike the float instructions, no flag (-mrecip) makes them approximations.
inline float __fdiv_rn(float a, float b) {
  using ::lockstep::emu::rounded::opaque;
  return static_cast<float>(opaque(static_cast<double>(opaque(a)) / static_cast<double>(opaque(b))));
}
inline float __fdiv_rz(float a, float b) { return ::lockstep::emu::rounded::divide(a, b, ::lockstep::emu::rounding::toward_zero); }
inline float __fdiv_rd(float a, float b) { return ::lockstep::emu::rounded::divide(a, b, ::lockstep::emu::rounding::down); }
inline float __fdiv_ru(float a, float b) { return ::lockstep::emu::rounded::divide(a, b, ::lockstep::emu::rounding::up); }

// std::fma, except where clang, with no FMA instruction to use, may split it
// into a multiply and an add (-fassociative-math, -ffast-math).
inline float __fmaf_rn(float a, float b, float c) {
#if defined(__clang__) && !defined(__FMA__)
  return ::lockstep::emu::rounded::fused_multiply_add(a, b, c, ::lockstep::emu::rounding::nearest_even);
#else
  using ::lockstep::emu::rounded::opaque;
  return opaque(std::fma(opaque(a), opaque(b), opaque(c)));
#endif
}
inline float __fmaf_rz(float a, float b, float c) {
  return ::lockstep::emu::rounded::fused_multiply_add(a, b, c, ::lockstep::emu::rounding::toward_zero);
}
inline float __fmaf_rd(float a, float b, float c) { return ::lockstep::emu::rounded::fused_multiply_add(a, b, c, ::lockstep::emu::rounding::down); }
inline float __fmaf_ru(float a, float b, float c) { return ::lockstep::emu::rounded::fused_multiply_add(a, b, c, ::lockstep::emu::rounding::up); }
// The same, but keeping subnormals under nvcc -ftz=true; the emulator never flushes them.
inline float __fmaf_ieee_rn(float a, float b, float c) { return __fmaf_rn(a, b, c); }
inline float __fmaf_ieee_rz(float a, float b, float c) { return __fmaf_rz(a, b, c); }
inline float __fmaf_ieee_rd(float a, float b, float c) { return __fmaf_rd(a, b, c); }
inline float __fmaf_ieee_ru(float a, float b, float c) { return __fmaf_ru(a, b, c); }

inline float __frcp_rn(float x) {
  using ::lockstep::emu::rounded::opaque;
  return static_cast<float>(opaque(1.0 / static_cast<double>(opaque(x))));
}
inline float __frcp_rz(float x) { return ::lockstep::emu::rounded::divide(1.0f, x, ::lockstep::emu::rounding::toward_zero); }
inline float __frcp_rd(float x) { return ::lockstep::emu::rounded::divide(1.0f, x, ::lockstep::emu::rounding::down); }
inline float __frcp_ru(float x) { return ::lockstep::emu::rounded::divide(1.0f, x, ::lockstep::emu::rounding::up); }

inline float __fsqrt_rn(float x) {
  using ::lockstep::emu::rounded::opaque;
  return static_cast<float>(opaque(std::sqrt(static_cast<double>(opaque(x)))));
}
inline float __fsqrt_rz(float x) { return ::lockstep::emu::rounded::square_root(x, ::lockstep::emu::rounding::toward_zero); }
inline float __fsqrt_rd(float x) { return ::lockstep::emu::rounded::square_root(x, ::lockstep::emu::rounding::down); }
inline float __fsqrt_ru(float x) { return ::lockstep::emu::rounded::square_root(x, ::lockstep::emu::rounding::up); }

// Correctly rounded on the GPU (0 ulp), which 1.0f / sqrtf(x), rounded twice, is not.
inline float __frsqrt_rn(float x) { return ::lockstep::emu::rounded::reciprocal_square_root(x, ::lockstep::emu::rounding::nearest_even); }

// --- Double precision arithmetic --------------------------------------------

inline double __dadd_rn(double a, double b) {
  using ::lockstep::emu::rounded::opaque;
  return opaque(opaque(a) + opaque(b));
}
inline double __dadd_rz(double a, double b) { return ::lockstep::emu::rounded::add(a, b, ::lockstep::emu::rounding::toward_zero); }
inline double __dadd_rd(double a, double b) { return ::lockstep::emu::rounded::add(a, b, ::lockstep::emu::rounding::down); }
inline double __dadd_ru(double a, double b) { return ::lockstep::emu::rounded::add(a, b, ::lockstep::emu::rounding::up); }

inline double __dsub_rn(double a, double b) {
  using ::lockstep::emu::rounded::opaque;
  return opaque(opaque(a) - opaque(b));
}
inline double __dsub_rz(double a, double b) { return ::lockstep::emu::rounded::subtract(a, b, ::lockstep::emu::rounding::toward_zero); }
inline double __dsub_rd(double a, double b) { return ::lockstep::emu::rounded::subtract(a, b, ::lockstep::emu::rounding::down); }
inline double __dsub_ru(double a, double b) { return ::lockstep::emu::rounded::subtract(a, b, ::lockstep::emu::rounding::up); }

inline double __dmul_rn(double a, double b) {
  using ::lockstep::emu::rounded::opaque;
  return opaque(opaque(a) * opaque(b));
}
inline double __dmul_rz(double a, double b) { return ::lockstep::emu::rounded::multiply(a, b, ::lockstep::emu::rounding::toward_zero); }
inline double __dmul_rd(double a, double b) { return ::lockstep::emu::rounded::multiply(a, b, ::lockstep::emu::rounding::down); }
inline double __dmul_ru(double a, double b) { return ::lockstep::emu::rounded::multiply(a, b, ::lockstep::emu::rounding::up); }

inline double __ddiv_rn(double a, double b) {
  using ::lockstep::emu::rounded::opaque;
  return opaque(opaque(a) / opaque(b));
}
inline double __ddiv_rz(double a, double b) { return ::lockstep::emu::rounded::divide(a, b, ::lockstep::emu::rounding::toward_zero); }
inline double __ddiv_rd(double a, double b) { return ::lockstep::emu::rounded::divide(a, b, ::lockstep::emu::rounding::down); }
inline double __ddiv_ru(double a, double b) { return ::lockstep::emu::rounded::divide(a, b, ::lockstep::emu::rounding::up); }

inline double __fma_rn(double a, double b, double c) {  // as __fmaf_rn
#if defined(__clang__) && !defined(__FMA__)
  return ::lockstep::emu::rounded::fused_multiply_add(a, b, c, ::lockstep::emu::rounding::nearest_even);
#else
  using ::lockstep::emu::rounded::opaque;
  return opaque(std::fma(opaque(a), opaque(b), opaque(c)));
#endif
}
inline double __fma_rz(double a, double b, double c) {
  return ::lockstep::emu::rounded::fused_multiply_add(a, b, c, ::lockstep::emu::rounding::toward_zero);
}
inline double __fma_rd(double a, double b, double c) {
  return ::lockstep::emu::rounded::fused_multiply_add(a, b, c, ::lockstep::emu::rounding::down);
}
inline double __fma_ru(double a, double b, double c) { return ::lockstep::emu::rounded::fused_multiply_add(a, b, c, ::lockstep::emu::rounding::up); }

inline double __drcp_rn(double x) {
  using ::lockstep::emu::rounded::opaque;
  return opaque(1.0 / opaque(x));
}
inline double __drcp_rz(double x) { return ::lockstep::emu::rounded::divide(1.0, x, ::lockstep::emu::rounding::toward_zero); }
inline double __drcp_rd(double x) { return ::lockstep::emu::rounded::divide(1.0, x, ::lockstep::emu::rounding::down); }
inline double __drcp_ru(double x) { return ::lockstep::emu::rounded::divide(1.0, x, ::lockstep::emu::rounding::up); }

inline double __dsqrt_rn(double x) {
  using ::lockstep::emu::rounded::opaque;
  return opaque(std::sqrt(opaque(x)));
}
inline double __dsqrt_rz(double x) { return ::lockstep::emu::rounded::square_root(x, ::lockstep::emu::rounding::toward_zero); }
inline double __dsqrt_rd(double x) { return ::lockstep::emu::rounded::square_root(x, ::lockstep::emu::rounding::down); }
inline double __dsqrt_ru(double x) { return ::lockstep::emu::rounded::square_root(x, ::lockstep::emu::rounding::up); }

// --- Floating point to integer: rounded, saturated ---------------------------

#define LOCKSTEP_TO_INTEGER(name, From, To)                                                                                    \
  inline To name##_rn(From x) { return ::lockstep::emu::rounded::to_integer<To>(x, ::lockstep::emu::rounding::nearest_even); } \
  inline To name##_rz(From x) { return ::lockstep::emu::rounded::to_integer<To>(x, ::lockstep::emu::rounding::toward_zero); }  \
  inline To name##_rd(From x) { return ::lockstep::emu::rounded::to_integer<To>(x, ::lockstep::emu::rounding::down); }         \
  inline To name##_ru(From x) { return ::lockstep::emu::rounded::to_integer<To>(x, ::lockstep::emu::rounding::up); }
LOCKSTEP_TO_INTEGER(__float2int, float, int)
LOCKSTEP_TO_INTEGER(__float2uint, float, unsigned int)
LOCKSTEP_TO_INTEGER(__float2ll, float, long long int)
LOCKSTEP_TO_INTEGER(__float2ull, float, unsigned long long int)
LOCKSTEP_TO_INTEGER(__double2int, double, int)
LOCKSTEP_TO_INTEGER(__double2uint, double, unsigned int)
LOCKSTEP_TO_INTEGER(__double2ll, double, long long int)
LOCKSTEP_TO_INTEGER(__double2ull, double, unsigned long long int)
#undef LOCKSTEP_TO_INTEGER

// --- Integer to floating point, and double to float ---------------------------
// To nearest, the host's own conversion; the directed modes round the exact value.

#define LOCKSTEP_FROM_SIGNED(name, From, To)                                                                                   \
  inline To name##_rn(From x) { return static_cast<To>(x); }                                                                   \
  inline To name##_rz(From x) { return ::lockstep::emu::rounded::from_signed<To>(x, ::lockstep::emu::rounding::toward_zero); } \
  inline To name##_rd(From x) { return ::lockstep::emu::rounded::from_signed<To>(x, ::lockstep::emu::rounding::down); }        \
  inline To name##_ru(From x) { return ::lockstep::emu::rounded::from_signed<To>(x, ::lockstep::emu::rounding::up); }
#define LOCKSTEP_FROM_UNSIGNED(name, From, To)                                                                                         \
  inline To name##_rn(From x) { return static_cast<To>(x); }                                                                           \
  inline To name##_rz(From x) { return ::lockstep::emu::rounded::from_integer<To>(false, x, ::lockstep::emu::rounding::toward_zero); } \
  inline To name##_rd(From x) { return ::lockstep::emu::rounded::from_integer<To>(false, x, ::lockstep::emu::rounding::down); }        \
  inline To name##_ru(From x) { return ::lockstep::emu::rounded::from_integer<To>(false, x, ::lockstep::emu::rounding::up); }
LOCKSTEP_FROM_SIGNED(__int2float, int, float)
LOCKSTEP_FROM_UNSIGNED(__uint2float, unsigned int, float)
LOCKSTEP_FROM_SIGNED(__ll2float, long long int, float)
LOCKSTEP_FROM_UNSIGNED(__ull2float, unsigned long long int, float)
LOCKSTEP_FROM_SIGNED(__ll2double, long long int, double)
LOCKSTEP_FROM_UNSIGNED(__ull2double, unsigned long long int, double)
#undef LOCKSTEP_FROM_SIGNED
#undef LOCKSTEP_FROM_UNSIGNED
// Exact: every int is a double.
inline double __int2double_rn(int x) { return static_cast<double>(x); }
inline double __uint2double_rn(unsigned int x) { return static_cast<double>(x); }

inline float __double2float_rn(double x) { return static_cast<float>(x); }
inline float __double2float_rz(double x) { return ::lockstep::emu::rounded::from_double<float>(x, ::lockstep::emu::rounding::toward_zero); }
inline float __double2float_rd(double x) { return ::lockstep::emu::rounded::from_double<float>(x, ::lockstep::emu::rounding::down); }
inline float __double2float_ru(double x) { return ::lockstep::emu::rounded::from_double<float>(x, ::lockstep::emu::rounding::up); }
