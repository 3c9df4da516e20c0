// The types every part of the emulator's CUDA runtime API shares: CUDA's error
// codes, copy directions, stream and event handles, with CUDA's names and
// numbers (driver_types.h), so that code written against CUDA compiles
// unchanged and error codes print as the same numbers.
#pragma once
#include <cstddef>

// The include guard of CUDA's driver_types.h, which these types stand for:
// programs test it to see whether the runtime's types are there (the samples'
// helper_cuda.h defines checkCudaErrors only then).
#define __DRIVER_TYPES_H__

// CUDA's error codes (the runtime's numbers, which the driver API shares for
// these); name and description in runtime_api.cpp.
#define LOCKSTEP_CUDA_ERRORS(X)                                                                                          \
  X(cudaSuccess, 0, "no error")                                                                                          \
  X(cudaErrorInvalidValue, 1, "invalid argument")                                                                        \
  X(cudaErrorMemoryAllocation, 2, "out of memory")                                                                       \
  X(cudaErrorInitializationError, 3, "initialization error")                                                             \
  X(cudaErrorCudartUnloading, 4, "driver shutting down")                                                                 \
  X(cudaErrorProfilerDisabled, 5, "profiler disabled while using external profiling tool")                               \
  X(cudaErrorProfilerNotInitialized, 6, "profiler not initialized: call cudaProfilerInitialize()")                       \
  X(cudaErrorProfilerAlreadyStarted, 7, "profiler already started")                                                      \
  X(cudaErrorProfilerAlreadyStopped, 8, "profiler already stopped")                                                      \
  X(cudaErrorInvalidConfiguration, 9, "invalid configuration argument")                                                  \
  X(cudaErrorInvalidPitchValue, 12, "invalid pitch argument")                                                            \
  X(cudaErrorInvalidSymbol, 13, "invalid device symbol")                                                                 \
  X(cudaErrorInvalidHostPointer, 16, "invalid host pointer")                                                             \
  X(cudaErrorInvalidDevicePointer, 17, "invalid device pointer")                                                         \
  X(cudaErrorInvalidTexture, 18, "invalid texture reference")                                                            \
  X(cudaErrorInvalidTextureBinding, 19, "texture is not bound to a pointer")                                             \
  X(cudaErrorInvalidChannelDescriptor, 20, "invalid channel descriptor")                                                 \
  X(cudaErrorInvalidMemcpyDirection, 21, "invalid copy direction for memcpy")                                            \
  X(cudaErrorSynchronizationError, 25, "incorrect use of __syncthreads()")                                               \
  X(cudaErrorInvalidFilterSetting, 26, "linear filtering not supported for non-float type")                              \
  X(cudaErrorInvalidNormSetting, 27, "read as normalized float not supported for 32-bit non float type")                 \
  X(cudaErrorNotYetImplemented, 31, "feature not yet implemented")                                                       \
  X(cudaErrorInsufficientDriver, 35, "CUDA driver version is insufficient for CUDA runtime version")                     \
  X(cudaErrorCallRequiresNewerDriver, 36, "API call is not supported in the installed CUDA driver")                      \
  X(cudaErrorInvalidSurface, 37, "invalid surface reference")                                                            \
  X(cudaErrorDevicesUnavailable, 46, "CUDA-capable device(s) is/are busy or unavailable")                                \
  X(cudaErrorMissingConfiguration, 52, "__global__ function call is not configured")                                     \
  X(cudaErrorPriorLaunchFailure, 53, "unspecified launch failure in prior launch")                                       \
  X(cudaErrorInvalidDeviceFunction, 98, "invalid device function")                                                       \
  X(cudaErrorNoDevice, 100, "no CUDA-capable device is detected")                                                        \
  X(cudaErrorInvalidDevice, 101, "invalid device ordinal")                                                               \
  X(cudaErrorStartupFailure, 127, "device init failed")                                                                  \
  X(cudaErrorInvalidKernelImage, 200, "device kernel image is invalid")                                                  \
  X(cudaErrorDeviceUninitialized, 201, "invalid device context")                                                         \
  X(cudaErrorMapBufferObjectFailed, 205, "mapping of buffer object failed")                                              \
  X(cudaErrorUnmapBufferObjectFailed, 206, "unmapping of buffer object failed")                                          \
  X(cudaErrorArrayIsMapped, 207, "array is mapped")                                                                      \
  X(cudaErrorAlreadyMapped, 208, "resource already mapped")                                                              \
  X(cudaErrorNoKernelImageForDevice, 209, "no kernel image is available for execution on the device")                    \
  X(cudaErrorNotMapped, 211, "resource not mapped")                                                                      \
  X(cudaErrorNotMappedAsArray, 212, "resource not mapped as array")                                                      \
  X(cudaErrorNotMappedAsPointer, 213, "resource not mapped as pointer")                                                  \
  X(cudaErrorECCUncorrectable, 214, "uncorrectable ECC error encountered")                                               \
  X(cudaErrorUnsupportedLimit, 215, "limit is not supported on this architecture")                                       \
  X(cudaErrorDeviceAlreadyInUse, 216, "exclusive-thread device already in use by a different thread")                    \
  X(cudaErrorPeerAccessUnsupported, 217, "peer access is not supported between these two devices")                       \
  X(cudaErrorInvalidPtx, 218, "a PTX JIT compilation failed")                                                            \
  X(cudaErrorInvalidGraphicsContext, 219, "invalid OpenGL or DirectX context")                                           \
  X(cudaErrorUnsupportedPtxVersion, 222, "the provided PTX was compiled with an unsupported toolchain")                  \
  X(cudaErrorInvalidSource, 300, "invalid source")                                                                       \
  X(cudaErrorFileNotFound, 301, "file not found")                                                                        \
  X(cudaErrorOperatingSystem, 304, "OS call failed or operation not supported on this OS")                               \
  X(cudaErrorInvalidResourceHandle, 400, "invalid resource handle")                                                      \
  X(cudaErrorIllegalState, 401, "the operation cannot be performed in the present state")                                \
  X(cudaErrorSymbolNotFound, 500, "named symbol not found")                                                              \
  X(cudaErrorNotReady, 600, "device not ready")                                                                          \
  X(cudaErrorIllegalAddress, 700, "an illegal memory access was encountered")                                            \
  X(cudaErrorLaunchOutOfResources, 701, "too many resources requested for launch")                                       \
  X(cudaErrorLaunchTimeout, 702, "the launch timed out and was terminated")                                              \
  X(cudaErrorPeerAccessAlreadyEnabled, 704, "peer access is already enabled")                                            \
  X(cudaErrorPeerAccessNotEnabled, 705, "peer access has not been enabled")                                              \
  X(cudaErrorSetOnActiveProcess, 708, "cannot set while device is active in this process")                               \
  X(cudaErrorContextIsDestroyed, 709, "context is destroyed")                                                            \
  X(cudaErrorAssert, 710, "device-side assert triggered")                                                                \
  X(cudaErrorTooManyPeers, 711, "peer mapping resources exhausted")                                                      \
  X(cudaErrorHostMemoryAlreadyRegistered, 712, "part or all of the requested memory range is already mapped")            \
  X(cudaErrorHostMemoryNotRegistered, 713, "pointer does not correspond to a registered memory region")                  \
  X(cudaErrorHardwareStackError, 714, "hardware stack error")                                                            \
  X(cudaErrorIllegalInstruction, 715, "an illegal instruction was encountered")                                          \
  X(cudaErrorMisalignedAddress, 716, "misaligned address")                                                               \
  X(cudaErrorInvalidAddressSpace, 717, "operation not supported on global/shared address space")                         \
  X(cudaErrorInvalidPc, 718, "invalid program counter")                                                                  \
  X(cudaErrorLaunchFailure, 719, "unspecified launch failure")                                                           \
  X(cudaErrorCooperativeLaunchTooLarge, 720, "too many blocks in cooperative launch")                                    \
  X(cudaErrorNotPermitted, 800, "operation not permitted")                                                               \
  X(cudaErrorNotSupported, 801, "operation not supported")                                                               \
  X(cudaErrorStreamCaptureUnsupported, 900, "operation not permitted when stream is capturing")                          \
  X(cudaErrorStreamCaptureInvalidated, 901, "operation failed due to a previous error during capture")                   \
  X(cudaErrorStreamCaptureImplicit, 906, "operation would make the legacy stream depend on a capturing blocking stream") \
  X(cudaErrorCapturedEvent, 907, "operation not permitted on an event last recorded in a capturing stream")              \
  X(cudaErrorTimeout, 909, "wait operation timed out")                                                                   \
  X(cudaErrorInvalidClusterSize, 912, "invalid cluster size")                                                            \
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

// Handles: a stream or event is an object of the emulator's (runtime_streams.cpp);
// the null stream, cudaStreamLegacy and cudaStreamPerThread are the default stream.
struct CUstream_st;
using cudaStream_t = CUstream_st*;
struct CUevent_st;
using cudaEvent_t = CUevent_st*;
#define cudaStreamLegacy ((cudaStream_t)0x1)
#define cudaStreamPerThread ((cudaStream_t)0x2)

// The one device's number for the host (cudaMemPrefetchAsync, cudaMemAdvise) and for none.
#define cudaCpuDeviceId ((int)-1)
#define cudaInvalidDeviceId ((int)-2)

// Calling conventions CUDA's headers spell out (empty on Linux), which
// programs write in their callbacks' declarations.
#define CUDART_CB
#define CUDARTAPI

// The CUDA Toolkit whose runtime API this follows (cudaRuntimeGetVersion answers it).
#define CUDART_VERSION 13000

namespace lockstep::emu {
// CUDA's rule for faults in kernels: the context is broken. After
// set_sticky_error(e) (the launch that faulted calls it), every synchronizing
// call, copy and allocation, cudaGetLastError and cudaPeekAtLastError return e,
// and cudaGetLastError does not clear it; only cudaDeviceReset does.
void set_sticky_error(cudaError_t error);
cudaError_t sticky_error();  // cudaSuccess while the context is sound
}  // namespace lockstep::emu
