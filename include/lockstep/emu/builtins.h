// threadIdx, blockIdx, blockDim, gridDim and warpSize on the emulator.
//
// The executor keeps the running thread's coordinates in one thread-local
// record and rewrites it at every fiber switch; the built-ins read it.
#pragma once
#include <cstddef>

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

// `extern __shared__ T name[];` at file scope: the running block's buffer,
// read where a kernel uses the name (a pointer to T, as the array decays to).
template <class T>
struct dynamic_shared_array {
  operator T*() const { return reinterpret_cast<T*>(dynamic_shared_memory()); }
  template <class U>
  explicit operator U*() const {
    return reinterpret_cast<U*>(dynamic_shared_memory());
  }
  T& operator[](std::ptrdiff_t i) const { return static_cast<T*>(*this)[i]; }
};

// What threadIdx, blockIdx, blockDim and gridDim read.
inline const uint3& builtin_thread_idx() { return in_kernel("threadIdx").thread_idx; }
inline const uint3& builtin_block_idx() { return in_kernel("blockIdx").block_idx; }
inline const dim3& builtin_block_dim() { return in_kernel("blockDim").block_dim; }
inline const dim3& builtin_grid_dim() { return in_kernel("gridDim").grid_dim; }

}  // namespace lockstep::emu

// The driver's preprocessing keeps the names, which its rewrite maps, as it
// maps a program's own variables of those names
// (src/emulator/compile_time/host_source/builtin_variables.cpp); a program's host-only
// files (.cpp, LOCKSTEP_HOST_ONLY_FILE) have no built-in variables, as under nvcc.
#if !defined(LOCKSTEP_KEEP_KEYWORDS) && !defined(LOCKSTEP_HOST_ONLY_FILE)
#define threadIdx (::lockstep::emu::builtin_thread_idx())
#define blockIdx (::lockstep::emu::builtin_block_idx())
#define blockDim (::lockstep::emu::builtin_block_dim())
#define gridDim (::lockstep::emu::builtin_grid_dim())
#endif
inline constexpr int warpSize = 32;

// Address-space conversions: the emulator has one address space, so a
// shared, global, constant or local address is the generic one.
inline std::size_t __cvta_generic_to_shared(const void* p) { return reinterpret_cast<std::size_t>(p); }
inline std::size_t __cvta_generic_to_global(const void* p) { return reinterpret_cast<std::size_t>(p); }
inline std::size_t __cvta_generic_to_constant(const void* p) { return reinterpret_cast<std::size_t>(p); }
inline std::size_t __cvta_generic_to_local(const void* p) { return reinterpret_cast<std::size_t>(p); }
inline void* __cvta_shared_to_generic(std::size_t address) { return reinterpret_cast<void*>(address); }
inline void* __cvta_global_to_generic(std::size_t address) { return reinterpret_cast<void*>(address); }
inline void* __cvta_constant_to_generic(std::size_t address) { return reinterpret_cast<void*>(address); }
inline void* __cvta_local_to_generic(std::size_t address) { return reinterpret_cast<void*>(address); }
