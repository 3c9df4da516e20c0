// The CUDA driver API, loaded with dlopen on first use so that liblockstep
// builds and loads on machines without an NVIDIA driver or toolkit.
//
// The types, constants and function signatures below are declared here, not
// taken from <cuda.h>; their numeric values are those of the CUDA 13 toolkit's
// cuda.h (stable across CUDA 11-13), and where cuda.h #defines a name to a
// versioned entry point (cuMemAlloc -> cuMemAlloc_v2, ...) the loader resolves
// that versioned symbol.
#pragma once
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "lockstep/errors.h"

namespace lockstep::detail::cu {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st*;
using CUmodule = struct CUmod_st*;
using CUfunction = struct CUfunc_st*;
using CUevent = struct CUevent_st*;
// The same tag as cudaStream_t (lockstep/emu/runtime_api.h and CUDA's own
// headers), so a launch_config's stream passes through unconverted.
using CUstream = ::CUstream_st*;

// CUresult values (cuda.h, enum cudaError_enum). The common ones equal the
// runtime's cudaError_t numbers, which lockstep's exceptions carry.
inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
inline constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
inline constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
inline constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
inline constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
inline constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_ADDRESS = 700;
inline constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;
inline constexpr CUresult CUDA_ERROR_LAUNCH_TIMEOUT = 702;
inline constexpr CUresult CUDA_ERROR_ASSERT = 710;
inline constexpr CUresult CUDA_ERROR_HARDWARE_STACK_ERROR = 714;
inline constexpr CUresult CUDA_ERROR_ILLEGAL_INSTRUCTION = 715;
inline constexpr CUresult CUDA_ERROR_MISALIGNED_ADDRESS = 716;
inline constexpr CUresult CUDA_ERROR_INVALID_ADDRESS_SPACE = 717;
inline constexpr CUresult CUDA_ERROR_INVALID_PC = 718;
inline constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;

// CUdevice_attribute values used for the device's name, arch and limits.
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;  // Y = 3, Z = 4
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5;   // Y = 6, Z = 7
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
inline constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
inline constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
inline constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;

// CUfunction_attribute values.
inline constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
inline constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;

inline constexpr unsigned CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr int CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4;
inline constexpr unsigned CU_EVENT_DEFAULT = 0x0;

// The entry points lockstep uses, named as cuda.h spells them for callers.
struct driver_api {
  CUresult (*cuInit)(unsigned flags);
  CUresult (*cuGetErrorName)(CUresult error, const char** name);
  CUresult (*cuGetErrorString)(CUresult error, const char** text);

  CUresult (*cuDeviceGetCount)(int* count);
  CUresult (*cuDeviceGet)(CUdevice* device, int ordinal);
  CUresult (*cuDeviceGetName)(char* name, int length, CUdevice device);
  CUresult (*cuDeviceGetAttribute)(int* value, int attribute, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext* context, CUdevice device);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice device);  // _v2
  CUresult (*cuCtxSetCurrent)(CUcontext context);
  CUresult (*cuCtxSynchronize)();

  CUresult (*cuMemAlloc)(CUdeviceptr* ptr, std::size_t bytes);                                          // _v2
  CUresult (*cuMemFree)(CUdeviceptr ptr);                                                               // _v2
  CUresult (*cuMemcpyDtoH)(void* dst, CUdeviceptr src, std::size_t bytes);                              // _v2
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream);  // _v2
  CUresult (*cuMemcpyDtoHAsync)(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream);        // _v2
  CUresult (*cuMemcpyDtoDAsync)(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream);  // _v2
  CUresult (*cuMemsetD8Async)(CUdeviceptr dst, unsigned char value, std::size_t count, CUstream stream);

  CUresult (*cuStreamCreate)(CUstream* stream, unsigned flags);
  CUresult (*cuStreamDestroy)(CUstream stream);  // _v2
  CUresult (*cuStreamSynchronize)(CUstream stream);
  CUresult (*cuEventCreate)(CUevent* event, unsigned flags);
  CUresult (*cuEventDestroy)(CUevent event);  // _v2
  CUresult (*cuEventRecord)(CUevent event, CUstream stream);
  CUresult (*cuEventSynchronize)(CUevent event);
  CUresult (*cuEventElapsedTime)(float* ms, CUevent start, CUevent stop);  // _v2 where the driver has it

  CUresult (*cuModuleLoadData)(CUmodule* module, const void* image);
  CUresult (*cuModuleUnload)(CUmodule module);
  CUresult (*cuModuleGetFunction)(CUfunction* function, CUmodule module, const char* name);
  CUresult (*cuModuleGetGlobal)(CUdeviceptr* ptr, std::size_t* bytes, CUmodule module, const char* name);  // _v2
  CUresult (*cuFuncGetAttribute)(int* value, int attribute, CUfunction function);
  CUresult (*cuFuncSetAttribute)(CUfunction function, int attribute, int value);
  CUresult (*cuLaunchKernel)(CUfunction function, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x, unsigned block_y,
                             unsigned block_z, unsigned shared_bytes, CUstream stream, void** params, void** extra);

  // Optional: null where the driver lacks them (stream-ordered allocation
  // came with CUDA 11.2, tensor maps with CUDA 12).
  CUresult (*cuMemAllocAsync)(CUdeviceptr* ptr, std::size_t bytes, CUstream stream);
  CUresult (*cuMemFreeAsync)(CUdeviceptr ptr, CUstream stream);
  CUresult (*cuDeviceGetDefaultMemPool)(void** pool, CUdevice device);
  CUresult (*cuMemPoolSetAttribute)(void* pool, int attribute, void* value);

  // The enum parameters are C enums (int), named in cuda.h's CUtensorMap*.
  CUresult (*cuTensorMapEncodeTiled)(void* map, int data_type, unsigned rank, void* address, const std::uint64_t* dims, const std::uint64_t* strides,
                                     const unsigned* box, const unsigned* element_strides, int interleave, int swizzle, int l2_promotion,
                                     int oob_fill);
};

// The loaded driver, initialised (cuInit) and seeing at least one GPU; throws
// device_unavailable with driver_unavailable_reason() otherwise.
const driver_api& driver();
int driver_device_count();  // 0 when the driver is unusable
// Why driver() throws, saying what to do; "" when it does not.
std::string driver_unavailable_reason();

// "<what> failed: CUDA_ERROR_X (the driver's text). <what to do>" for `error`.
std::string describe_error(CUresult error, const std::string& what);
// Throws for anything but CUDA_SUCCESS: kernel_error for a fault of a kernel
// that ran (an illegal address, a device assert: reported by whichever call
// comes next), cuda_error otherwise.
void check(CUresult error, const char* what);
// For a failed cuLaunchKernel: kernel_error for an earlier kernel's fault,
// launch_error otherwise.
[[noreturn]] void throw_launch_error(CUresult error, const std::string& what);

// The first of `candidates` that dlopen loads, kept loaded for the process's
// life (unloading a CUDA library while its threads run is not safe); nullptr
// if none does, with `attempts` listing each candidate and dlerror's reason.
void* open_first_library(const std::vector<std::string>& candidates, std::string& attempts);
// The first of `names` that `library` exports (a versioned name, then the
// older one for libraries that predate it); nullptr if none, with the first
// name added to the comma-separated `missing`.
void* find_symbol(void* library, std::initializer_list<const char*> names, std::string& missing);

}  // namespace lockstep::detail::cu
