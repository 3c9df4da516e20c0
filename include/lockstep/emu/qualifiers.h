// CUDA's declaration keywords, as the host compiler should read them.
#pragma once
// libstdc++ spells __attribute__((__noinline__)) in <memory>; include it before
// __noinline__ becomes a macro, as nvcc's own front end sidesteps the clash.
#include <memory>

// Kernels stay ordinary functions; `used` keeps a kernel that is only launched
// through a pointer from being dropped, so the emulator can find its symbol.
// The driver's preprocessing (LOCKSTEP_KEEP_KEYWORDS) keeps __global__ and
// __shared__ as written, for the host-source rewrite to find in its output.
#if defined(LOCKSTEP_KEEP_KEYWORDS)
#define __global__ __global__
#else
#define __global__ __attribute__((used))
#endif
#define __device__
#define __host__
// `used`: a `static __constant__` array that only the host writes (through
// cuModuleGetGlobal or cudaMemcpyToSymbol) is never written in its file, so
// the host compiler would fold its reads to zeros and drop it. The driver's
// preprocessing keeps the keyword, for the host-source rewrite to leave off
// `extern` declarations, where `used` draws a warning.
#if defined(LOCKSTEP_KEEP_KEYWORDS)
#define __constant__ __constant__
#else
#define __constant__ __attribute__((used))
#endif
#define __managed__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
// GNU form: CUDA code writes it among the decl-specifiers (`__shared__ __align__(32) T tile[...]`),
// where a standard alignas is an error.
#define __align__(n) __attribute__((aligned(n)))
#define __launch_bounds__(...)
#define __grid_constant__
#define __CUDA_ARCH_EMULATED__ 1

// A block runs on one OS thread at a time, so per-block memory is thread-local
// storage: `__shared__ float tile[16][16];` becomes a block-scope thread_local,
// which is implicitly static. The executor never runs two blocks on one OS
// thread at once, so each block in flight sees its own arrays.
// `extern __shared__ T name[];` (dynamic shared memory) is rewritten by the host
// build (lockstep_host_source, see cmake/) into a pointer to the launch's
// dynamic shared buffer, because no prefix macro can turn an extern array into
// a per-launch buffer.
#if defined(LOCKSTEP_KEEP_KEYWORDS)
#define __shared__ __shared__
#else
#define __shared__ thread_local
#endif
