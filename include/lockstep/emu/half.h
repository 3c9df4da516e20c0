// __half and __nv_bfloat16 for the host compiler: 16-bit storage with the
// arithmetic done in float, as the GPU does for most half operations.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#define LOCKSTEP_EMU_HALF 1

namespace lockstep::emu {
// float -> IEEE binary16 bits, round to nearest even.
inline std::uint16_t float_to_half_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  const std::uint32_t sign = (x >> 16) & 0x8000u, abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u : 0u));
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);
  if (abs < 0x38800000u) {  // half subnormal or zero: count units of 2^-24
    float scaled;
    std::memcpy(&scaled, &abs, 4);
    scaled *= 16777216.0f;
    const auto units = static_cast<std::uint32_t>(scaled);
    const float rest = scaled - static_cast<float>(units);
    return static_cast<std::uint16_t>(sign | (units + (rest > 0.5f || (rest == 0.5f && (units & 1u)))));
  }
  return static_cast<std::uint16_t>(sign | ((abs + 0x0fffu + ((abs >> 13) & 1u) - 0x38000000u) >> 13));
}
inline float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16, exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  std::uint32_t x;
  if (exponent == 0x1f)
    x = sign | 0x7f800000u | (mantissa << 13);
  else if (exponent != 0)
    x = sign | ((exponent + 112) << 23) | (mantissa << 13);
  else {
    float f = static_cast<float>(mantissa) / 16777216.0f;  // subnormal: mantissa * 2^-24
    return sign ? -f : f;
  }
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
inline std::uint16_t float_to_bfloat16_bits(float f) {
  std::uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((x >> 16) | 0x40u);
  return static_cast<std::uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}
inline float bfloat16_bits_to_float(std::uint16_t b) {
  const std::uint32_t x = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
}  // namespace lockstep::emu

// Both convert from any arithmetic type through float, as cuda_fp16.h's do.
struct __half {
  std::uint16_t __x;
  constexpr __half() : __x(0) {}  // constant-initialised: a __shared__ array of them needs no thread_local guard
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  __half(T value) : __x(::lockstep::emu::float_to_half_bits(static_cast<float>(value))) {}
  operator float() const { return ::lockstep::emu::half_bits_to_float(__x); }
};

struct __nv_bfloat16 {
  std::uint16_t __x;
  constexpr __nv_bfloat16() : __x(0) {}  // constant-initialised: a __shared__ array of them needs no thread_local guard
  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  __nv_bfloat16(T value) : __x(::lockstep::emu::float_to_bfloat16_bits(static_cast<float>(value))) {}
  operator float() const { return ::lockstep::emu::bfloat16_bits_to_float(__x); }
};

inline __half __float2half(float f) { return __half(f); }
inline float __half2float(__half h) { return static_cast<float>(h); }
inline __nv_bfloat16 __float2bfloat16(float f) { return __nv_bfloat16(f); }
inline float __bfloat162float(__nv_bfloat16 b) { return static_cast<float>(b); }
