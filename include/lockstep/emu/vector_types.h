// CUDA's vector types (float4, int2, uchar4, ...) with CUDA's sizes and
// alignments, their make_* constructors, and dim3.
#pragma once
// CUDA's headers (vector_types.h) define these around deprecated
// declarations, and other CUDA headers use them (cuRAND's).
#ifndef __NV_SILENCE_DEPRECATION_BEGIN
#define __NV_SILENCE_DEPRECATION_BEGIN _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wdeprecated-declarations\"")
#define __NV_SILENCE_DEPRECATION_END _Pragma("GCC diagnostic pop")
#endif
#include <cstddef>

#define LOCKSTEP_VECTOR_TYPES(T, name, a2, a4)                                 \
  struct name##1 {                                                             \
    T x;                                                                       \
  };                                                                           \
  struct alignas(a2) name##2 {                                                 \
    T x, y;                                                                    \
  };                                                                           \
  struct name##3 {                                                             \
    T x, y, z;                                                                 \
  };                                                                           \
  struct alignas(a4) name##4 {                                                 \
    T x, y, z, w;                                                              \
  };                                                                           \
  inline constexpr name##1 make_##name##1(T x) { return {x}; }                 \
  inline constexpr name##2 make_##name##2(T x, T y) { return {x, y}; }         \
  inline constexpr name##3 make_##name##3(T x, T y, T z) { return {x, y, z}; } \
  inline constexpr name##4 make_##name##4(T x, T y, T z, T w) { return {x, y, z, w}; }

// Alignments follow CUDA's vector_types.h: the 2-vector is aligned to its
// size, the 4-vector to its size capped at 16 bytes.
LOCKSTEP_VECTOR_TYPES(signed char, char, 2, 4)
LOCKSTEP_VECTOR_TYPES(unsigned char, uchar, 2, 4)
LOCKSTEP_VECTOR_TYPES(short, short, 4, 8)
LOCKSTEP_VECTOR_TYPES(unsigned short, ushort, 4, 8)
LOCKSTEP_VECTOR_TYPES(int, int, 8, 16)
LOCKSTEP_VECTOR_TYPES(unsigned int, uint, 8, 16)
LOCKSTEP_VECTOR_TYPES(long, long, 2 * sizeof(long), 16)
LOCKSTEP_VECTOR_TYPES(unsigned long, ulong, 2 * sizeof(long), 16)
LOCKSTEP_VECTOR_TYPES(long long, longlong, 16, 16)
LOCKSTEP_VECTOR_TYPES(unsigned long long, ulonglong, 16, 16)
LOCKSTEP_VECTOR_TYPES(float, float, 8, 16)
LOCKSTEP_VECTOR_TYPES(double, double, 16, 16)
#undef LOCKSTEP_VECTOR_TYPES

// CUDA 13's 4-vectors of 8-byte elements with a stated alignment (16 or 32
// bytes), which CUDA 13 asks for instead of long4, double4, ... (libcu++'s
// tuple support names them all).
#define LOCKSTEP_ALIGNED_VECTOR4(T, name, bytes) \
  struct alignas(bytes) name##4_##bytes##a {     \
    T x, y, z, w;                                \
  };                                             \
  inline constexpr name##4_##bytes##a make_##name##4_##bytes##a(T x, T y, T z, T w) { return {x, y, z, w}; }
LOCKSTEP_ALIGNED_VECTOR4(long, long, 16)
LOCKSTEP_ALIGNED_VECTOR4(long, long, 32)
LOCKSTEP_ALIGNED_VECTOR4(unsigned long, ulong, 16)
LOCKSTEP_ALIGNED_VECTOR4(unsigned long, ulong, 32)
LOCKSTEP_ALIGNED_VECTOR4(long long, longlong, 16)
LOCKSTEP_ALIGNED_VECTOR4(long long, longlong, 32)
LOCKSTEP_ALIGNED_VECTOR4(unsigned long long, ulonglong, 16)
LOCKSTEP_ALIGNED_VECTOR4(unsigned long long, ulonglong, 32)
LOCKSTEP_ALIGNED_VECTOR4(double, double, 16)
LOCKSTEP_ALIGNED_VECTOR4(double, double, 32)
#undef LOCKSTEP_ALIGNED_VECTOR4

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1) : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return {x, y, z}; }
};
