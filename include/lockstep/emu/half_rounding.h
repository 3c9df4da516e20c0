// Rounding into IEEE binary16 and bfloat16 bits, as the GPU's cvt does: any
// float, double or integer, rounded once, to nearest even or by a directed
// mode; NaN becomes the canonical NaN 0x7fff, as the GPU's conversions give.
#pragma once
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace lockstep::emu {

// A 16-bit float format: significand bits (with the hidden one), and the
// exponents of its least and greatest normal numbers.
struct half_format {
  int significand_bits, min_exponent, max_exponent;
};
inline constexpr half_format binary16_format{11, -14, 15}, bfloat16_format{8, -126, 127};
enum class rounding { nearest_even, toward_zero, down, up };

inline constexpr std::uint16_t canonical_nan_bits = 0x7fff;

constexpr std::uint16_t infinity_bits(half_format f) {
  return static_cast<std::uint16_t>((f.max_exponent - f.min_exponent + 2) << (f.significand_bits - 1));
}

// magnitude * 2^exponent, exactly, rounded once into the format.
inline std::uint16_t round_scaled(half_format f, bool negative, std::uint64_t magnitude, int exponent, rounding mode) {
  const std::uint16_t sign = negative ? 0x8000u : 0u;
  if (magnitude == 0) return sign;
  const int p = f.significand_bits;
  const std::uint16_t inf = infinity_bits(f);
  // Past the largest finite value: infinity, or the largest finite value where the mode rounds toward zero.
  const bool overflow_to_infinity = mode == rounding::nearest_even || (mode == rounding::up && !negative) || (mode == rounding::down && negative);
  const auto overflow = [&] { return static_cast<std::uint16_t>(sign | (overflow_to_infinity ? inf : inf - 1)); };
  const int top = 63 - std::countl_zero(magnitude) + exponent;  // the exponent of the leading bit
  if (top > f.max_exponent) return overflow();
  const int quantum = std::max(top, f.min_exponent) - (p - 1);  // the exponent of the result's last bit
  const int shift = quantum - exponent;
  std::uint64_t units;  // of 2^quantum, truncated
  bool above_half = false, at_half = false, inexact = false;
  if (shift <= 0) {
    units = magnitude << -shift;  // exact: fewer than p bits
  } else if (shift > 64) {
    units = 0, inexact = true;  // the rest is below half a unit
  } else {
    const unsigned __int128 wide = magnitude, rest = wide & ((static_cast<unsigned __int128>(1) << shift) - 1);
    const unsigned __int128 half = static_cast<unsigned __int128>(1) << (shift - 1);
    units = static_cast<std::uint64_t>(wide >> shift);
    above_half = rest > half, at_half = rest == half, inexact = rest != 0;
  }
  switch (mode) {
    case rounding::nearest_even:
      units += above_half || (at_half && (units & 1u));
      break;
    case rounding::toward_zero:
      break;
    case rounding::up:
      units += inexact && !negative;
      break;
    case rounding::down:
      units += inexact && negative;
      break;
  }
  // Exponent field and significand in one sum, so a carry out of the significand raises the exponent.
  const std::uint64_t bits = (static_cast<std::uint64_t>(quantum - (f.min_exponent - (p - 1))) << (p - 1)) + units;
  if (bits >= inf) return overflow();
  return static_cast<std::uint16_t>(sign | bits);
}

inline std::uint16_t round_double(half_format f, double x, rounding mode) {
  std::uint64_t bits;
  std::memcpy(&bits, &x, 8);
  const bool negative = bits >> 63;
  const int biased = static_cast<int>((bits >> 52) & 0x7ffu);
  const std::uint64_t fraction = bits & ((std::uint64_t{1} << 52) - 1);
  if (biased == 0x7ff) return fraction ? canonical_nan_bits : static_cast<std::uint16_t>((negative ? 0x8000u : 0u) | infinity_bits(f));
  if (biased == 0) return round_scaled(f, negative, fraction, -1074, mode);
  return round_scaled(f, negative, fraction | (std::uint64_t{1} << 52), biased - 1075, mode);
}

inline std::uint16_t round_signed(half_format f, long long v, rounding mode) {
  const std::uint64_t magnitude = v < 0 ? 0 - static_cast<std::uint64_t>(v) : static_cast<std::uint64_t>(v);
  return round_scaled(f, v < 0, magnitude, 0, mode);
}
inline std::uint16_t round_unsigned(half_format f, unsigned long long v, rounding mode) { return round_scaled(f, false, v, 0, mode); }

// The common case, float to nearest even, without the general path.
inline std::uint16_t float_to_half_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u, abs = x & 0x7fffffffu;
  if (abs > 0x7f800000u) return canonical_nan_bits;
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // 65520 and up: infinity
  if (abs < 0x38800000u) {                                                    // half subnormal or zero: count units of 2^-24
    float scaled;
    std::memcpy(&scaled, &abs, 4);
    scaled *= 16777216.0f;
    const auto units = static_cast<std::uint32_t>(scaled);
    const float rest = scaled - static_cast<float>(units);
    return static_cast<std::uint16_t>(sign | (units + (rest > 0.5f || (rest == 0.5f && (units & 1u)))));
  }
  return static_cast<std::uint16_t>(sign | ((abs + 0x0fffu + ((abs >> 13) & 1u) - 0x38000000u) >> 13));
}
// cvt.f32.f16: exact; a NaN becomes the canonical float NaN.
inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  std::uint32_t x;
  if (exponent == 0x1f)
    x = mantissa ? 0x7fffffffu : sign | 0x7f800000u;
  else if (exponent != 0)
    x = sign | ((exponent + 112) << 23) | (mantissa << 13);
  else {
    const float f = static_cast<float>(mantissa) / 16777216.0f;  // subnormal: mantissa * 2^-24
    return sign ? -f : f;
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
inline std::uint16_t float_to_bfloat16_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return canonical_nan_bits;
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
// bfloat16 is the top half of a float: widening is a shift, NaN payloads included.
inline float bfloat16_bits_to_float(std::uint16_t b) {
  const std::uint32_t x = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

// a * b + c rounded once into the format. The product of two 16-bit values
// is exact in double; the sum is made round-to-odd (its last bit set when
// inexact), which a second rounding to fewer than 51 bits leaves correct.
inline std::uint16_t fused_multiply_add_bits(half_format f, double a, double b, double c) {
  const double product = a * b, sum = product + c;
  if (!std::isfinite(sum)) return round_double(f, sum, rounding::nearest_even);
  // TwoSum: sum + error == product + c exactly.
  const double b_virtual = sum - product, a_virtual = sum - b_virtual;
  const double error = (product - a_virtual) + (c - b_virtual);
  double odd = sum;
  std::uint64_t bits;
  std::memcpy(&bits, &odd, 8);
  if (error != 0 && (bits & 1u) == 0) {
    // The exact value lies between sum and its neighbour toward error; that neighbour is odd.
    bits = ((error > 0) == (sum > 0)) ? bits + 1 : bits - 1;
    std::memcpy(&odd, &bits, 8);
  }
  return round_double(f, odd, rounding::nearest_even);
}

}  // namespace lockstep::emu
