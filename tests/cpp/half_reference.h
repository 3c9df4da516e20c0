// A host reference for the 16-bit float formats (binary16 and bfloat16),
// written from the IEEE rules alone: decoding bits, and rounding a long
// double into the format by a search over its values, so it shares nothing
// with the code under test. Plain C++ (nvcc and host compilers alike).
#pragma once
#include <cmath>
#include <cstdint>

namespace half_reference {

struct format {
  int exponent_bits, fraction_bits;
  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  std::uint16_t infinity() const { return static_cast<std::uint16_t>(((1u << exponent_bits) - 1) << fraction_bits); }
  bool is_nan(std::uint16_t bits) const { return (bits & 0x7fffu) > infinity(); }
};
inline constexpr format binary16{5, 10}, bfloat16{8, 7};

inline long double decode(format f, std::uint16_t bits) {
  const int e = (bits & 0x7fffu) >> f.fraction_bits;
  const long double fraction = bits & ((1u << f.fraction_bits) - 1);
  long double magnitude;
  if (e == (1 << f.exponent_bits) - 1)
    magnitude = fraction != 0 ? NAN : INFINITY;
  else if (e == 0)
    magnitude = std::ldexp(fraction, 1 - f.bias() - f.fraction_bits);
  else
    magnitude = std::ldexp(fraction + (1u << f.fraction_bits), e - f.bias() - f.fraction_bits);
  return (bits & 0x8000u) ? -magnitude : magnitude;
}

enum class mode { nearest_even, toward_zero, down, up };

// x rounded into the format; NaN gives the format's infinity bits | 1 (a NaN).
inline std::uint16_t round(format f, long double x, mode m) {
  if (std::isnan(x)) return static_cast<std::uint16_t>(f.infinity() | 1u);
  const bool negative = std::signbit(x);
  const long double a = std::fabs(x);
  const std::uint16_t sign = negative ? 0x8000u : 0u;
  if (std::isinf(a)) return sign | f.infinity();
  // The largest finite non-negative bits whose value is <= a.
  std::uint16_t lo = 0, hi = f.infinity() - 1;
  while (lo < hi) {
    const std::uint16_t mid = static_cast<std::uint16_t>((lo + hi + 1) / 2);
    if (decode(f, mid) <= a)
      lo = mid;
    else
      hi = static_cast<std::uint16_t>(mid - 1);
  }
  const long double below = decode(f, lo);
  // The next value up: for the largest finite one, 2^(emax+1), where rounding overflows.
  const long double above = lo + 1 == f.infinity() ? std::ldexp(1.0L, f.bias() + 1) : decode(f, static_cast<std::uint16_t>(lo + 1));
  const bool exact = a == below;
  bool up_one;
  switch (m) {
    case mode::nearest_even:
      up_one = a - below > above - a || (a - below == above - a && (lo & 1u));
      break;
    case mode::toward_zero:
      up_one = false;
      break;
    case mode::up:
      up_one = !exact && !negative;
      break;
    default:
      up_one = !exact && negative;
      break;
  }
  return static_cast<std::uint16_t>(sign | (lo + (up_one ? 1 : 0)));
}

// How many representable values apart two finite values of one format are.
inline long ulp_distance(std::uint16_t a, std::uint16_t b) {
  const auto ordered = [](std::uint16_t v) { return (v & 0x8000u) ? -static_cast<long>(v & 0x7fffu) : static_cast<long>(v); };
  return std::labs(ordered(a) - ordered(b));
}

}  // namespace half_reference
