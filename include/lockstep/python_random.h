// numba.cuda.random's generator, written from its algorithm: xoroshiro128+
// (Blackman and Vigna) with splitmix64 seeding, each generator's start 2**64
// steps past the previous one's. The same operations in the same order as
// numba's, so seeded streams are numba's bit for bit: uniform floats from the
// top 53 bits; a float32 uniform is the float64 one rounded; the normals are
// one Box-Muller value from two float32 uniforms (numba's normal_float64 too).
// Included by python_kernels.h; plain CUDA C++ for the host compiler and NVRTC.
#pragma once

namespace lockstep::py {

// One generator: numba's xoroshiro128p_dtype, {s0, s1} as two uint64.
struct xoroshiro128p_state {
  unsigned long long s0;
  unsigned long long s1;
};

__device__ __forceinline__ unsigned long long xoroshiro128p_rotl(unsigned long long x, unsigned k) { return (x << k) | (x >> (64u - k)); }

__device__ __forceinline__ void init_xoroshiro128p_state(xoroshiro128p_state& state, unsigned long long seed) {
  unsigned long long z = seed + 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30u)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27u)) * 0x94D049BB133111EBull;
  z = z ^ (z >> 31u);
  state.s0 = z;
  state.s1 = z;
}

__device__ __forceinline__ unsigned long long xoroshiro128p_next(xoroshiro128p_state& state) {
  const unsigned long long s0 = state.s0;
  unsigned long long s1 = state.s1;
  const unsigned long long result = s0 + s1;
  s1 ^= s0;
  state.s0 = xoroshiro128p_rotl(s0, 55u) ^ s1 ^ (s1 << 14u);
  state.s1 = xoroshiro128p_rotl(s1, 36u);
  return result;
}

// 2**64 steps ahead: the state after that many xoroshiro128p_next calls.
__device__ inline void xoroshiro128p_jump(xoroshiro128p_state& state) {
  const unsigned long long jump[2] = {0xbeac0467eba5facbull, 0xd86b048b86aa9922ull};
  unsigned long long s0 = 0, s1 = 0;
  for (int i = 0; i < 2; ++i)
    for (unsigned b = 0; b < 64u; ++b) {
      if (jump[i] & (1ull << b)) {
        s0 ^= state.s0;
        s1 ^= state.s1;
      }
      xoroshiro128p_next(state);
    }
  state.s0 = s0;
  state.s1 = s1;
}

// numba's init_xoroshiro128p_states_cpu: generator 0 from the seed, moved on by
// subsequence_start jumps; each next one a jump past the one before.
__device__ inline void init_xoroshiro128p_states(xoroshiro128p_state* states, long long n, unsigned long long seed,
                                                 unsigned long long subsequence_start) {
  if (n < 1) return;
  init_xoroshiro128p_state(states[0], seed);
  for (unsigned long long k = 0; k < subsequence_start; ++k) xoroshiro128p_jump(states[0]);
  for (long long i = 1; i < n; ++i) {
    states[i] = states[i - 1];
    xoroshiro128p_jump(states[i]);
  }
}

__device__ __forceinline__ double uint64_to_unit_float64(unsigned long long x) {
  return static_cast<double>(x >> 11u) * (1.0 / static_cast<double>(1ull << 53u));
}

__device__ __forceinline__ float uint64_to_unit_float32(unsigned long long x) { return static_cast<float>(uint64_to_unit_float64(x)); }

__device__ __forceinline__ float xoroshiro128p_uniform_float32(xoroshiro128p_state& state) {
  return uint64_to_unit_float32(xoroshiro128p_next(state));
}

__device__ __forceinline__ double xoroshiro128p_uniform_float64(xoroshiro128p_state& state) {
  return uint64_to_unit_float64(xoroshiro128p_next(state));
}

// numba's TWO_PI_FLOAT32 (np.float32(2 * math.pi)) and TWO_PI_FLOAT64.
constexpr float xoroshiro128p_two_pi_float32 = 6.2831854820251465f;
constexpr double xoroshiro128p_two_pi_float64 = 6.283185307179586;

__device__ __forceinline__ float xoroshiro128p_normal_float32(xoroshiro128p_state& state) {
  const float u1 = xoroshiro128p_uniform_float32(state);
  const float u2 = xoroshiro128p_uniform_float32(state);
  return sqrtf(-2.0f * logf(u1)) * cosf(xoroshiro128p_two_pi_float32 * u2);
}

// As numba's: from two float32 uniforms, their log in float32, the rest in float64.
__device__ __forceinline__ double xoroshiro128p_normal_float64(xoroshiro128p_state& state) {
  const float u1 = xoroshiro128p_uniform_float32(state);
  const float u2 = xoroshiro128p_uniform_float32(state);
  return sqrt(-2.0 * static_cast<double>(logf(u1))) * cos(xoroshiro128p_two_pi_float64 * static_cast<double>(u2));
}

}  // namespace lockstep::py
