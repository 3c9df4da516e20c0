// The CUDA runtime API on the emulator: what a program calls around its
// kernels. With it, programs written against the CUDA runtime compile
// unchanged for the emulator; names, numbers and answers follow CUDA 13's
// headers and an H100's behaviour. Split by subject:
//   runtime_types.h    error codes, copy kinds, handles, the sticky error
//   runtime_device.h   the one device (an H100's properties), kernel attributes, occupancy
//   runtime_streams.h  streams and events (launches are synchronous: work is done when queued)
//   runtime_ipc.h      memory and events shared with other processes (CUDA IPC, exportable pools)
//   runtime_memory.h   pitched, pinned, managed, asynchronous and peer memory; symbols
//   runtime_graphics.h OpenGL buffer objects mapped for kernels (graphics interop)
//   runtime_graphs.h   graphs are not provided: what programs call, answering cudaErrorNotSupported
//   runtime_textures.h CUDA arrays, 3D copies, texture and surface objects (kernels' side: textures.h)
// This file: device memory, copies, synchronisation, errors, versions, the profiler.
#pragma once
#include <cstddef>

// The include guards of CUDA's cuda_runtime.h and cuda_runtime_api.h, which
// programs test to see whether the runtime API is there (the samples'
// helper_cuda.h declares its device pickers only then).
#define __CUDA_RUNTIME_H__
#define __CUDA_RUNTIME_API_H__

#include "lockstep/emu/runtime_types.h"

cudaError_t cudaMalloc(void** ptr, std::size_t bytes);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorName(cudaError_t error);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaDriverGetVersion(int* version);
cudaError_t cudaRuntimeGetVersion(int* version);
// Accepted and without effect: no profiler watches the emulator (cuda_profiler_api.h).
cudaError_t cudaProfilerStart();
cudaError_t cudaProfilerStop();

// As CUDA's: through void*, so that a pointer to const data (`const float* p; cudaMalloc(&p, n)`) works too.
template <class T>
inline cudaError_t cudaMalloc(T** ptr, std::size_t bytes) {
  return cudaMalloc((void**)(void*)ptr, bytes);
}

#include "lockstep/emu/library_types.h"
#include "lockstep/emu/runtime_device.h"
#include "lockstep/emu/runtime_graphics.h"
#include "lockstep/emu/runtime_graphs.h"
#include "lockstep/emu/runtime_ipc.h"
#include "lockstep/emu/runtime_memory.h"
#include "lockstep/emu/runtime_pools.h"
#include "lockstep/emu/runtime_streams.h"
#include "lockstep/emu/runtime_textures.h"
