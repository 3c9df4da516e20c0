// The part of CUDA's runtime API that a kernel's host harness needs, on the
// emulator: memory, copies, synchronisation, errors and kernel attributes.
// With these a test or example written against the CUDA runtime compiles
// unchanged for the emulator; the numeric error codes match CUDA's.
#pragma once
#include <cstddef>

// CUDA's error codes (the runtime's numbers, which the driver API shares for
// these); name and description in runtime_api.cpp.
#define LOCKSTEP_CUDA_ERRORS(X)                                                                         \
  X(cudaSuccess, 0, "no error")                                                                         \
  X(cudaErrorInvalidValue, 1, "invalid argument")                                                       \
  X(cudaErrorMemoryAllocation, 2, "out of memory")                                                      \
  X(cudaErrorInitializationError, 3, "initialization error")                                            \
  X(cudaErrorInvalidConfiguration, 9, "invalid configuration argument")                                 \
  X(cudaErrorInvalidDevicePointer, 17, "invalid device pointer")                                        \
  X(cudaErrorInvalidMemcpyDirection, 21, "invalid copy direction for memcpy")                           \
  X(cudaErrorInsufficientDriver, 35, "CUDA driver version is insufficient for CUDA runtime version")    \
  X(cudaErrorInvalidDeviceFunction, 98, "invalid device function")                                      \
  X(cudaErrorNoDevice, 100, "no CUDA-capable device is detected")                                       \
  X(cudaErrorInvalidDevice, 101, "invalid device ordinal")                                              \
  X(cudaErrorDeviceUninitialized, 201, "invalid device context")                                        \
  X(cudaErrorNoKernelImageForDevice, 209, "no kernel image is available for execution on the device")   \
  X(cudaErrorInvalidPtx, 218, "a PTX JIT compilation failed")                                           \
  X(cudaErrorUnsupportedPtxVersion, 222, "the provided PTX was compiled with an unsupported toolchain") \
  X(cudaErrorInvalidSource, 300, "device kernel image is invalid")                                      \
  X(cudaErrorInvalidResourceHandle, 400, "invalid resource handle")                                     \
  X(cudaErrorSymbolNotFound, 500, "named symbol not found")                                             \
  X(cudaErrorNotReady, 600, "device not ready")                                                         \
  X(cudaErrorIllegalAddress, 700, "an illegal memory access was encountered")                           \
  X(cudaErrorLaunchOutOfResources, 701, "too many resources requested for launch")                      \
  X(cudaErrorLaunchTimeout, 702, "the launch timed out and was terminated")                             \
  X(cudaErrorAssert, 710, "device-side assert triggered")                                               \
  X(cudaErrorIllegalInstruction, 715, "an illegal instruction was encountered")                         \
  X(cudaErrorMisalignedAddress, 716, "misaligned address")                                              \
  X(cudaErrorLaunchFailure, 719, "unspecified launch failure")                                          \
  X(cudaErrorNotSupported, 801, "operation not supported")                                              \
  X(cudaErrorUnknown, 999, "unknown error")

enum cudaError_t {
#define LOCKSTEP_CUDA_ERROR_ENUM(name, value, text) name = value,
  LOCKSTEP_CUDA_ERRORS(LOCKSTEP_CUDA_ERROR_ENUM)
#undef LOCKSTEP_CUDA_ERROR_ENUM
};
using cudaError = cudaError_t;

enum cudaMemcpyKind {
  cudaMemcpyHostToHost = 0,
  cudaMemcpyHostToDevice = 1,
  cudaMemcpyDeviceToHost = 2,
  cudaMemcpyDeviceToDevice = 3,
  cudaMemcpyDefault = 4,
};

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};

struct CUstream_st;
using cudaStream_t = CUstream_st*;

cudaError_t cudaMalloc(void** ptr, std::size_t bytes);
cudaError_t cudaFree(void* ptr);
cudaError_t cudaMemcpy(void* dst, const void* src, std::size_t bytes, cudaMemcpyKind kind);
cudaError_t cudaMemset(void* ptr, int value, std::size_t bytes);
cudaError_t cudaDeviceSynchronize();
cudaError_t cudaStreamSynchronize(cudaStream_t stream);
cudaError_t cudaGetLastError();
cudaError_t cudaPeekAtLastError();
const char* cudaGetErrorName(cudaError_t error);
const char* cudaGetErrorString(cudaError_t error);
cudaError_t cudaFuncSetAttributeForKernel(const void* kernel, cudaFuncAttribute attribute, int value);

template <class T>
inline cudaError_t cudaMalloc(T** ptr, std::size_t bytes) {
  return cudaMalloc(reinterpret_cast<void**>(ptr), bytes);
}
template <class Kernel>
inline cudaError_t cudaFuncSetAttribute(Kernel* kernel, cudaFuncAttribute attribute, int value) {
  return cudaFuncSetAttributeForKernel(reinterpret_cast<const void*>(kernel), attribute, value);
}
