// 16-byte accesses: one 128-bit load or store moves a vector16 of T; the
// kernels take that path only where aligned16 holds for every pointer.
#pragma once
#include "lockstep/cuda.h"
#include "lockstep/kernels/launch_shapes.h"

namespace lockstep::kernels {

template <class T>
struct alignas(vector_bytes) vector16 {
  static constexpr int size = vector_bytes / static_cast<int>(sizeof(T));
  T lane[size];
};

__device__ __forceinline__ bool aligned16(const void* p) { return reinterpret_cast<unsigned long long>(p) % 16 == 0; }

}  // namespace lockstep::kernels
