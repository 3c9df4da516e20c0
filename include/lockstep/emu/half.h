// <cuda_fp16.h> and <cuda_bf16.h> for the host compiler: __half, __half2,
// __nv_bfloat16, __nv_bfloat162, their raw forms, and the functions CUDA
// declares on them. Values are stored in 16 bits; each operation computes
// wider and rounds once, so results equal the GPU's correctly rounded ones.
// The two types share their API name for name: half_family.h spells it once
// and is included here once per type.
#pragma once
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "lockstep/emu/half_rounding.h"
#include "lockstep/emu/vector_types.h"

#define LOCKSTEP_EMU_HALF 1

struct __half;
struct __nv_bfloat16;
struct alignas(2) __half_raw {
  unsigned short x;
};
struct alignas(4) __half2_raw {
  unsigned short x, y;
};
struct alignas(2) __nv_bfloat16_raw {
  unsigned short x;
};
struct alignas(4) __nv_bfloat162_raw {
  unsigned short x, y;
};

namespace lockstep::emu {

template <class H>
H round_to(double x, rounding mode = rounding::nearest_even);

// To the nearest integral value, ties to even, keeping the sign of zero.
inline double round_half_even(double x) {
  double r = std::floor(x);
  const double rest = x - r;
  if (rest > 0.5 || (rest == 0.5 && std::fmod(r, 2.0) != 0)) r += 1;
  return std::copysign(r, x);
}

// A float or double value to integer type I by a rounding mode, as cvt.*i
// does: saturated at I's limits, NaN to 0 (to 0x8000000000000000 for 64-bit I).
template <class I>
I to_integer(double x, rounding mode) {
  if (x != x) return sizeof(I) == 8 ? static_cast<I>(std::uint64_t{1} << 63) : I{0};
  double r;
  switch (mode) {
    case rounding::toward_zero:
      r = std::trunc(x);
      break;
    case rounding::down:
      r = std::floor(x);
      break;
    case rounding::up:
      r = std::ceil(x);
      break;
    default:
      r = round_half_even(x);
      break;
  }
  if (r <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (r >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}

// The GPU's 16-bit atomics update the 32-bit word holding the value; so does
// this compare-and-swap loop. next(old) gives the new 16 bits.
template <class F>
std::uint16_t atomic_update_16(void* address, F next) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  auto* word = reinterpret_cast<std::uint32_t*>(at & ~std::uintptr_t{3});
  const unsigned shift = (at & 2u) * 8;  // little-endian: the upper half of the word
  std::atomic_ref<std::uint32_t> ref(*word);
  std::uint32_t old = ref.load(std::memory_order_relaxed);
  while (!ref.compare_exchange_weak(
      old, (old & ~(0xffffu << shift)) | (static_cast<std::uint32_t>(next(static_cast<std::uint16_t>(old >> shift))) << shift),
      std::memory_order_relaxed)) {
  }
  return static_cast<std::uint16_t>(old >> shift);
}

}  // namespace lockstep::emu

#define LOCKSTEP_HALF_CAT_(a, b, c) a##b##c
#define LOCKSTEP_HALF_CAT(a, b, c) LOCKSTEP_HALF_CAT_(a, b, c)

#if defined(__CUDA_NO_HALF_OPERATORS__)
#define LOCKSTEP_H_OPERATORS 0
#else
#define LOCKSTEP_H_OPERATORS 1
#endif
#if defined(__CUDA_NO_HALF2_OPERATORS__)
#define LOCKSTEP_H2_OPERATORS 0
#else
#define LOCKSTEP_H2_OPERATORS 1
#endif
#define LOCKSTEP_H __half
#define LOCKSTEP_H2 __half2
#define LOCKSTEP_H_RAW __half_raw
#define LOCKSTEP_H2_RAW __half2_raw
#define LOCKSTEP_H_OTHER __nv_bfloat16
#define LOCKSTEP_S half
#define LOCKSTEP_S2 half2
#define LOCKSTEP_H_FORMAT ::lockstep::emu::binary16_format
#define LOCKSTEP_H_FROM_FLOAT ::lockstep::emu::float_to_half_bits
#define LOCKSTEP_H_TO_FLOAT ::lockstep::emu::half_bits_to_float
#include "lockstep/emu/half_family.h"  // IWYU pragma: keep
#undef LOCKSTEP_H
#undef LOCKSTEP_H2
#undef LOCKSTEP_H_RAW
#undef LOCKSTEP_H2_RAW
#undef LOCKSTEP_H_OTHER
#undef LOCKSTEP_S
#undef LOCKSTEP_S2
#undef LOCKSTEP_H_FORMAT
#undef LOCKSTEP_H_FROM_FLOAT
#undef LOCKSTEP_H_TO_FLOAT
#undef LOCKSTEP_H_OPERATORS
#undef LOCKSTEP_H2_OPERATORS

#if defined(__CUDA_NO_BFLOAT16_OPERATORS__)
#define LOCKSTEP_H_OPERATORS 0
#else
#define LOCKSTEP_H_OPERATORS 1
#endif
#if defined(__CUDA_NO_BFLOAT162_OPERATORS__)
#define LOCKSTEP_H2_OPERATORS 0
#else
#define LOCKSTEP_H2_OPERATORS 1
#endif
#define LOCKSTEP_H __nv_bfloat16
#define LOCKSTEP_H2 __nv_bfloat162
#define LOCKSTEP_H_RAW __nv_bfloat16_raw
#define LOCKSTEP_H2_RAW __nv_bfloat162_raw
#define LOCKSTEP_H_OTHER __half
#define LOCKSTEP_S bfloat16
#define LOCKSTEP_S2 bfloat162
#define LOCKSTEP_H_FORMAT ::lockstep::emu::bfloat16_format
#define LOCKSTEP_H_FROM_FLOAT ::lockstep::emu::float_to_bfloat16_bits
#define LOCKSTEP_H_TO_FLOAT ::lockstep::emu::bfloat16_bits_to_float
#include "lockstep/emu/half_family.h"  // IWYU pragma: keep
#undef LOCKSTEP_H
#undef LOCKSTEP_H2
#undef LOCKSTEP_H_RAW
#undef LOCKSTEP_H2_RAW
#undef LOCKSTEP_H_OTHER
#undef LOCKSTEP_S
#undef LOCKSTEP_S2
#undef LOCKSTEP_H_FORMAT
#undef LOCKSTEP_H_FROM_FLOAT
#undef LOCKSTEP_H_TO_FLOAT
#undef LOCKSTEP_H_OPERATORS
#undef LOCKSTEP_H2_OPERATORS
#undef LOCKSTEP_HALF_CAT_
#undef LOCKSTEP_HALF_CAT

// Between the two: through float, which holds both exactly, rounded once.
inline __half::__half(const __nv_bfloat16 b) : __x(::lockstep::emu::float_to_half_bits(static_cast<float>(b))) {}
inline __nv_bfloat16::__nv_bfloat16(const __half h) : __x(::lockstep::emu::float_to_bfloat16_bits(static_cast<float>(h))) {}

typedef __half half;
typedef __half2 half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

#define CUDART_INF_FP16 __ushort_as_half((unsigned short)0x7C00U)
#define CUDART_NAN_FP16 __ushort_as_half((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_FP16 __ushort_as_half((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_FP16 __ushort_as_half((unsigned short)0x7BFFU)
#define CUDART_NEG_ZERO_FP16 __ushort_as_half((unsigned short)0x8000U)
#define CUDART_ZERO_FP16 __ushort_as_half((unsigned short)0x0000U)
#define CUDART_ONE_FP16 __ushort_as_half((unsigned short)0x3C00U)
#define CUDART_INF_BF16 __ushort_as_bfloat16((unsigned short)0x7F80U)
#define CUDART_NAN_BF16 __ushort_as_bfloat16((unsigned short)0x7FFFU)
#define CUDART_MIN_DENORM_BF16 __ushort_as_bfloat16((unsigned short)0x0001U)
#define CUDART_MAX_NORMAL_BF16 __ushort_as_bfloat16((unsigned short)0x7F7FU)
#define CUDART_NEG_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x8000U)
#define CUDART_ZERO_BF16 __ushort_as_bfloat16((unsigned short)0x0000U)
#define CUDART_ONE_BF16 __ushort_as_bfloat16((unsigned short)0x3F80U)
