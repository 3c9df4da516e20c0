// threadIdx, blockIdx, blockDim, gridDim and warpSize on the emulator.
//
// The executor keeps the running thread's coordinates in one thread-local
// record and rewrites it at every fiber switch; the built-ins read it.
#pragma once
#include "lockstep/emu/vector_types.h"

namespace lockstep::emu {

class block_runner;

struct thread_context {
  uint3 thread_idx{0, 0, 0};
  uint3 block_idx{0, 0, 0};
  dim3 block_dim{1, 1, 1};
  dim3 grid_dim{1, 1, 1};
  unsigned int linear_tid = 0;    // x fastest, then y, then z
  block_runner* block = nullptr;  // null outside a kernel
  unsigned char* dynamic_shared = nullptr;
};

// constinit: a trivially initialised thread_local needs no per-access wrapper.
extern thread_local constinit thread_context current;

// Throws a clear error when a device built-in is used outside a kernel.
[[noreturn]] void outside_kernel(const char* what);

inline thread_context& in_kernel(const char* what) {
  if (!current.block) outside_kernel(what);
  return current;
}

inline unsigned char* dynamic_shared_memory() { return in_kernel("extern __shared__").dynamic_shared; }

}  // namespace lockstep::emu

#define threadIdx (static_cast<const uint3&>(::lockstep::emu::in_kernel("threadIdx").thread_idx))
#define blockIdx (static_cast<const uint3&>(::lockstep::emu::in_kernel("blockIdx").block_idx))
#define blockDim (static_cast<const dim3&>(::lockstep::emu::in_kernel("blockDim").block_dim))
#define gridDim (static_cast<const dim3&>(::lockstep::emu::in_kernel("gridDim").grid_dim))
inline constexpr int warpSize = 32;
