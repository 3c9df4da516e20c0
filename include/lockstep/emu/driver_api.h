// CUDA's driver API (<cuda.h>: cuInit, contexts, modules, cuLaunchKernel) on
// the emulator. A module is a shared object of emulated kernels: built by
// `lockstep nvcc -fatbin` (or -cubin, -ptx) from a .cu file, or by lockstep's
// NVRTC (nvrtc_api.h) from a string; cuModuleLoad and cuModuleLoadData load it,
// cuModuleGetFunction finds its kernels by name (the `extern "C"` name or the
// mangled one), and cuLaunchKernel launches them as cudaLaunchKernel does.
// A GPU binary or PTX is refused with CUDA_ERROR_INVALID_IMAGE and a message
// saying how to build the module for the emulator. Memory, streams and events
// are the runtime API's (a CUdeviceptr is a device pointer's address, a
// CUstream a cudaStream_t); contexts are bookkeeping around the one device.
// Names and numbers are CUDA 13's.
#pragma once
#include <cstddef>

#include "lockstep/emu/runtime_api.h"

// The include guard of CUDA's cuda.h, which programs test to see whether the
// driver API is there (the samples' helper_cuda.h names its errors then).
#define __cuda_cuda_h__
#ifndef CUDA_VERSION
#define CUDA_VERSION 13000
#endif
#define CUDAAPI
#define CUDA_CB

// CUDA's driver error codes; cuGetErrorName answers the name,
// cuGetErrorString the runtime's description of the same number.
#define LOCKSTEP_CU_RESULTS(X)                      \
  X(CUDA_SUCCESS, 0)                                \
  X(CUDA_ERROR_INVALID_VALUE, 1)                    \
  X(CUDA_ERROR_OUT_OF_MEMORY, 2)                    \
  X(CUDA_ERROR_NOT_INITIALIZED, 3)                  \
  X(CUDA_ERROR_DEINITIALIZED, 4)                    \
  X(CUDA_ERROR_PROFILER_DISABLED, 5)                \
  X(CUDA_ERROR_PROFILER_NOT_INITIALIZED, 6)         \
  X(CUDA_ERROR_PROFILER_ALREADY_STARTED, 7)         \
  X(CUDA_ERROR_PROFILER_ALREADY_STOPPED, 8)         \
  X(CUDA_ERROR_STUB_LIBRARY, 34)                    \
  X(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, 36)      \
  X(CUDA_ERROR_DEVICE_UNAVAILABLE, 46)              \
  X(CUDA_ERROR_NO_DEVICE, 100)                      \
  X(CUDA_ERROR_INVALID_DEVICE, 101)                 \
  X(CUDA_ERROR_DEVICE_NOT_LICENSED, 102)            \
  X(CUDA_ERROR_INVALID_IMAGE, 200)                  \
  X(CUDA_ERROR_INVALID_CONTEXT, 201)                \
  X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, 202)        \
  X(CUDA_ERROR_MAP_FAILED, 205)                     \
  X(CUDA_ERROR_UNMAP_FAILED, 206)                   \
  X(CUDA_ERROR_ARRAY_IS_MAPPED, 207)                \
  X(CUDA_ERROR_ALREADY_MAPPED, 208)                 \
  X(CUDA_ERROR_NO_BINARY_FOR_GPU, 209)              \
  X(CUDA_ERROR_ALREADY_ACQUIRED, 210)               \
  X(CUDA_ERROR_NOT_MAPPED, 211)                     \
  X(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, 212)            \
  X(CUDA_ERROR_NOT_MAPPED_AS_POINTER, 213)          \
  X(CUDA_ERROR_ECC_UNCORRECTABLE, 214)              \
  X(CUDA_ERROR_UNSUPPORTED_LIMIT, 215)              \
  X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, 216)         \
  X(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, 217)        \
  X(CUDA_ERROR_INVALID_PTX, 218)                    \
  X(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, 219)       \
  X(CUDA_ERROR_NVLINK_UNCORRECTABLE, 220)           \
  X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, 221)         \
  X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, 222)        \
  X(CUDA_ERROR_JIT_COMPILATION_DISABLED, 223)       \
  X(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, 224)      \
  X(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, 225)       \
  X(CUDA_ERROR_CONTAINED, 226)                      \
  X(CUDA_ERROR_INVALID_SOURCE, 300)                 \
  X(CUDA_ERROR_FILE_NOT_FOUND, 301)                 \
  X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, 302) \
  X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, 303)      \
  X(CUDA_ERROR_OPERATING_SYSTEM, 304)               \
  X(CUDA_ERROR_INVALID_HANDLE, 400)                 \
  X(CUDA_ERROR_ILLEGAL_STATE, 401)                  \
  X(CUDA_ERROR_LOSSY_QUERY, 402)                    \
  X(CUDA_ERROR_NOT_FOUND, 500)                      \
  X(CUDA_ERROR_NOT_READY, 600)                      \
  X(CUDA_ERROR_ILLEGAL_ADDRESS, 700)                \
  X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, 701)        \
  X(CUDA_ERROR_LAUNCH_TIMEOUT, 702)                 \
  X(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, 703)  \
  X(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, 704)    \
  X(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, 705)        \
  X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, 708)         \
  X(CUDA_ERROR_CONTEXT_IS_DESTROYED, 709)           \
  X(CUDA_ERROR_ASSERT, 710)                         \
  X(CUDA_ERROR_TOO_MANY_PEERS, 711)                 \
  X(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, 712) \
  X(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, 713)     \
  X(CUDA_ERROR_HARDWARE_STACK_ERROR, 714)           \
  X(CUDA_ERROR_ILLEGAL_INSTRUCTION, 715)            \
  X(CUDA_ERROR_MISALIGNED_ADDRESS, 716)             \
  X(CUDA_ERROR_INVALID_ADDRESS_SPACE, 717)          \
  X(CUDA_ERROR_INVALID_PC, 718)                     \
  X(CUDA_ERROR_LAUNCH_FAILED, 719)                  \
  X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, 720)   \
  X(CUDA_ERROR_TENSOR_MEMORY_LEAK, 721)             \
  X(CUDA_ERROR_NOT_PERMITTED, 800)                  \
  X(CUDA_ERROR_NOT_SUPPORTED, 801)                  \
  X(CUDA_ERROR_SYSTEM_NOT_READY, 802)               \
  X(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, 803)         \
  X(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, 804) \
  X(CUDA_ERROR_MPS_CONNECTION_FAILED, 805)          \
  X(CUDA_ERROR_MPS_RPC_FAILURE, 806)                \
  X(CUDA_ERROR_MPS_SERVER_NOT_READY, 807)           \
  X(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, 808)        \
  X(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, 809)    \
  X(CUDA_ERROR_MPS_CLIENT_TERMINATED, 810)          \
  X(CUDA_ERROR_CDP_NOT_SUPPORTED, 811)              \
  X(CUDA_ERROR_CDP_VERSION_MISMATCH, 812)           \
  X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, 900)     \
  X(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, 901)     \
  X(CUDA_ERROR_STREAM_CAPTURE_MERGE, 902)           \
  X(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, 903)       \
  X(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, 904)        \
  X(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, 905)       \
  X(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, 906)        \
  X(CUDA_ERROR_CAPTURED_EVENT, 907)                 \
  X(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, 908)    \
  X(CUDA_ERROR_TIMEOUT, 909)                        \
  X(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, 910)      \
  X(CUDA_ERROR_EXTERNAL_DEVICE, 911)                \
  X(CUDA_ERROR_INVALID_CLUSTER_SIZE, 912)           \
  X(CUDA_ERROR_FUNCTION_NOT_LOADED, 913)            \
  X(CUDA_ERROR_INVALID_RESOURCE_TYPE, 914)          \
  X(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, 915) \
  X(CUDA_ERROR_KEY_ROTATION, 916)                   \
  X(CUDA_ERROR_UNKNOWN, 999)

enum CUresult {
#define LOCKSTEP_CU_RESULT_ENUM(name, value) name = value,
  LOCKSTEP_CU_RESULTS(LOCKSTEP_CU_RESULT_ENUM)
#undef LOCKSTEP_CU_RESULT_ENUM
};
using cudaError_enum = CUresult;

using CUdevice = int;
using CUdevice_v1 = CUdevice;
using CUdeviceptr = unsigned long long;
using CUdeviceptr_v2 = CUdeviceptr;
struct CUctx_st;
using CUcontext = CUctx_st*;
struct CUmod_st;
using CUmodule = CUmod_st*;
struct CUfunc_st;
using CUfunction = CUfunc_st*;
using CUstream = cudaStream_t;
using CUevent = cudaEvent_t;
using CUmemGenericAllocationHandle = unsigned long long;
using CUoccupancyB2DSize = std::size_t (*)(int block_size);
using CUstreamCallback = void (*)(CUstream stream, CUresult status, void* user_data);
struct CUexecAffinityParam;
struct CUctxCigParam;

// By CUDA's numbers, which are the runtime's for device attributes (cudaDeviceAttr).
enum CUdevice_attribute {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y = 3,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z = 4,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y = 6,
  CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z = 7,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_SHARED_MEMORY_PER_BLOCK = 8,
  CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY = 9,
  CU_DEVICE_ATTRIBUTE_WARP_SIZE = 10,
  CU_DEVICE_ATTRIBUTE_MAX_PITCH = 11,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK = 12,
  CU_DEVICE_ATTRIBUTE_REGISTERS_PER_BLOCK = 12,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT = 14,
  CU_DEVICE_ATTRIBUTE_GPU_OVERLAP = 15,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT = 17,
  CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
  CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_WIDTH = 21,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_WIDTH = 22,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_HEIGHT = 23,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH = 24,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT = 25,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH = 26,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_WIDTH = 27,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_HEIGHT = 28,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LAYERED_LAYERS = 29,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_WIDTH = 27,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_HEIGHT = 28,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_ARRAY_NUMSLICES = 29,
  CU_DEVICE_ATTRIBUTE_SURFACE_ALIGNMENT = 30,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS = 31,
  CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT = 40,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_WIDTH = 42,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LAYERED_LAYERS = 43,
  CU_DEVICE_ATTRIBUTE_CAN_TEX2D_GATHER = 44,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_WIDTH = 45,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_GATHER_HEIGHT = 46,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_WIDTH_ALTERNATE = 47,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_HEIGHT_ALTERNATE = 48,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE3D_DEPTH_ALTERNATE = 49,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT = 51,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_WIDTH = 52,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_WIDTH = 53,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURECUBEMAP_LAYERED_LAYERS = 54,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_WIDTH = 55,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_WIDTH = 56,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_HEIGHT = 57,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_WIDTH = 58,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_HEIGHT = 59,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE3D_DEPTH = 60,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_WIDTH = 61,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE1D_LAYERED_LAYERS = 62,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_WIDTH = 63,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_HEIGHT = 64,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACE2D_LAYERED_LAYERS = 65,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_WIDTH = 66,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_WIDTH = 67,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_SURFACECUBEMAP_LAYERED_LAYERS = 68,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_LINEAR_WIDTH = 69,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_WIDTH = 70,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_HEIGHT = 71,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_LINEAR_PITCH = 72,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_WIDTH = 73,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE2D_MIPMAPPED_HEIGHT = 74,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MAXIMUM_TEXTURE1D_MIPMAPPED_WIDTH = 77,
  CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED = 78,
  CU_DEVICE_ATTRIBUTE_GLOBAL_L1_CACHE_SUPPORTED = 79,
  CU_DEVICE_ATTRIBUTE_LOCAL_L1_CACHE_SUPPORTED = 80,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR = 81,
  CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR = 82,
  CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
  CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84,
  CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD_GROUP_ID = 85,
  CU_DEVICE_ATTRIBUTE_HOST_NATIVE_ATOMIC_SUPPORTED = 86,
  CU_DEVICE_ATTRIBUTE_SINGLE_TO_DOUBLE_PRECISION_PERF_RATIO = 87,
  CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
  CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED = 90,
  CU_DEVICE_ATTRIBUTE_CAN_USE_HOST_POINTER_FOR_REGISTERED_MEM = 91,
  CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_MEM_OPS_V1 = 92,
  CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS_V1 = 93,
  CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR_V1 = 94,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_MULTI_DEVICE_LAUNCH = 96,
  CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97,
  CU_DEVICE_ATTRIBUTE_CAN_FLUSH_REMOTE_WRITES = 98,
  CU_DEVICE_ATTRIBUTE_HOST_REGISTER_SUPPORTED = 99,
  CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS_USES_HOST_PAGE_TABLES = 100,
  CU_DEVICE_ATTRIBUTE_DIRECT_MANAGED_MEM_ACCESS_FROM_HOST = 101,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_ADDRESS_MANAGEMENT_SUPPORTED = 102,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_HANDLE_SUPPORTED = 104,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_WIN32_KMT_HANDLE_SUPPORTED = 105,
  CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR = 106,
  CU_DEVICE_ATTRIBUTE_GENERIC_COMPRESSION_SUPPORTED = 107,
  CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE = 108,
  CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE = 109,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED = 110,
  CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK = 111,
  CU_DEVICE_ATTRIBUTE_SPARSE_CUDA_ARRAY_SUPPORTED = 112,
  CU_DEVICE_ATTRIBUTE_READ_ONLY_HOST_REGISTER_SUPPORTED = 113,
  CU_DEVICE_ATTRIBUTE_TIMELINE_SEMAPHORE_INTEROP_SUPPORTED = 114,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_FLUSH_WRITES_OPTIONS = 117,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WRITES_ORDERING = 118,
  CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 119,
  CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH = 120,
  CU_DEVICE_ATTRIBUTE_DEFERRED_MAPPING_CUDA_ARRAY_SUPPORTED = 121,
  CU_DEVICE_ATTRIBUTE_CAN_USE_64_BIT_STREAM_MEM_OPS = 122,
  CU_DEVICE_ATTRIBUTE_CAN_USE_STREAM_WAIT_VALUE_NOR = 123,
  CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED = 124,
  CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED = 125,
  CU_DEVICE_ATTRIBUTE_MEM_SYNC_DOMAIN_COUNT = 126,
  CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED = 127,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 128,
  CU_DEVICE_ATTRIBUTE_UNIFIED_FUNCTION_POINTERS = 129,
  CU_DEVICE_ATTRIBUTE_NUMA_CONFIG = 130,
  CU_DEVICE_ATTRIBUTE_NUMA_ID = 131,
  CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED = 132,
  CU_DEVICE_ATTRIBUTE_MPS_ENABLED = 133,
  CU_DEVICE_ATTRIBUTE_HOST_NUMA_ID = 134,
  CU_DEVICE_ATTRIBUTE_D3D12_CIG_SUPPORTED = 135,
  CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_ALGORITHM_MASK = 136,
  CU_DEVICE_ATTRIBUTE_MEM_DECOMPRESS_MAXIMUM_LENGTH = 137,
  CU_DEVICE_ATTRIBUTE_VULKAN_CIG_SUPPORTED = 138,
  CU_DEVICE_ATTRIBUTE_GPU_PCI_DEVICE_ID = 139,
  CU_DEVICE_ATTRIBUTE_GPU_PCI_SUBSYSTEM_ID = 140,
  CU_DEVICE_ATTRIBUTE_HOST_NUMA_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 141,
  CU_DEVICE_ATTRIBUTE_HOST_NUMA_MEMORY_POOLS_SUPPORTED = 142,
  CU_DEVICE_ATTRIBUTE_HOST_NUMA_MULTINODE_IPC_SUPPORTED = 143,
  CU_DEVICE_ATTRIBUTE_HOST_MEMORY_POOLS_SUPPORTED = 144,
  CU_DEVICE_ATTRIBUTE_HOST_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 145,
  CU_DEVICE_ATTRIBUTE_HOST_ALLOC_DMA_BUF_SUPPORTED = 146,
  CU_DEVICE_ATTRIBUTE_ONLY_PARTIAL_HOST_NATIVE_ATOMIC_SUPPORTED = 147,
  CU_DEVICE_ATTRIBUTE_MAX,
};
enum CUjit_option {
  CU_JIT_MAX_REGISTERS = 0,
  CU_JIT_THREADS_PER_BLOCK = 1,
  CU_JIT_WALL_TIME = 2,
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
  CU_JIT_OPTIMIZATION_LEVEL = 7,
  CU_JIT_TARGET_FROM_CUCONTEXT = 8,
  CU_JIT_TARGET = 9,
  CU_JIT_FALLBACK_STRATEGY = 10,
  CU_JIT_GENERATE_DEBUG_INFO = 11,
  CU_JIT_LOG_VERBOSE = 12,
  CU_JIT_GENERATE_LINE_INFO = 13,
  CU_JIT_CACHE_MODE = 14,
  CU_JIT_NEW_SM3X_OPT = 15,
  CU_JIT_FAST_COMPILE = 16,
  CU_JIT_GLOBAL_SYMBOL_NAMES = 17,
  CU_JIT_GLOBAL_SYMBOL_ADDRESSES = 18,
  CU_JIT_GLOBAL_SYMBOL_COUNT = 19,
  CU_JIT_LTO = 20,
  CU_JIT_FTZ = 21,
  CU_JIT_PREC_DIV = 22,
  CU_JIT_PREC_SQRT = 23,
  CU_JIT_FMA = 24,
  CU_JIT_REFERENCED_KERNEL_NAMES = 25,
  CU_JIT_REFERENCED_KERNEL_COUNT = 26,
  CU_JIT_REFERENCED_VARIABLE_NAMES = 27,
  CU_JIT_REFERENCED_VARIABLE_COUNT = 28,
  CU_JIT_OPTIMIZE_UNUSED_DEVICE_VARIABLES = 29,
  CU_JIT_POSITION_INDEPENDENT_CODE = 30,
  CU_JIT_MIN_CTA_PER_SM = 31,
  CU_JIT_MAX_THREADS_PER_BLOCK = 32,
  CU_JIT_OVERRIDE_DIRECTIVE_VALUES = 33,
  CU_JIT_SPLIT_COMPILE = 34,
  CU_JIT_NUM_OPTIONS,
};
enum CUfunction_attribute {
  CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0,
  CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1,
  CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES = 2,
  CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3,
  CU_FUNC_ATTRIBUTE_NUM_REGS = 4,
  CU_FUNC_ATTRIBUTE_PTX_VERSION = 5,
  CU_FUNC_ATTRIBUTE_BINARY_VERSION = 6,
  CU_FUNC_ATTRIBUTE_CACHE_MODE_CA = 7,
  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8,
  CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 9,
  CU_FUNC_ATTRIBUTE_CLUSTER_SIZE_MUST_BE_SET = 10,
  CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH = 11,
  CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT = 12,
  CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH = 13,
  CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED = 14,
  CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE = 15,
  CU_FUNC_ATTRIBUTE_MAX,
};
enum CUlimit {
  CU_LIMIT_STACK_SIZE = 0x00,
  CU_LIMIT_PRINTF_FIFO_SIZE = 0x01,
  CU_LIMIT_MALLOC_HEAP_SIZE = 0x02,
  CU_LIMIT_DEV_RUNTIME_SYNC_DEPTH = 0x03,
  CU_LIMIT_DEV_RUNTIME_PENDING_LAUNCH_COUNT = 0x04,
  CU_LIMIT_MAX_L2_FETCH_GRANULARITY = 0x05,
  CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06,
  CU_LIMIT_SHMEM_SIZE = 0x07,
  CU_LIMIT_CIG_ENABLED = 0x08,
  CU_LIMIT_CIG_SHMEM_FALLBACK_ENABLED = 0x09,
  CU_LIMIT_MAX,
};
enum CUmemorytype {
  CU_MEMORYTYPE_HOST = 0x01,
  CU_MEMORYTYPE_DEVICE = 0x02,
  CU_MEMORYTYPE_ARRAY = 0x03,
  CU_MEMORYTYPE_UNIFIED = 0x04,
};
enum CUpointer_attribute {
  CU_POINTER_ATTRIBUTE_CONTEXT = 1,
  CU_POINTER_ATTRIBUTE_MEMORY_TYPE = 2,
  CU_POINTER_ATTRIBUTE_DEVICE_POINTER = 3,
  CU_POINTER_ATTRIBUTE_HOST_POINTER = 4,
  CU_POINTER_ATTRIBUTE_P2P_TOKENS = 5,
  CU_POINTER_ATTRIBUTE_SYNC_MEMOPS = 6,
  CU_POINTER_ATTRIBUTE_BUFFER_ID = 7,
  CU_POINTER_ATTRIBUTE_IS_MANAGED = 8,
  CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL = 9,
  CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE = 10,
  CU_POINTER_ATTRIBUTE_RANGE_START_ADDR = 11,
  CU_POINTER_ATTRIBUTE_RANGE_SIZE = 12,
  CU_POINTER_ATTRIBUTE_MAPPED = 13,
  CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES = 14,
  CU_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE = 15,
  CU_POINTER_ATTRIBUTE_ACCESS_FLAGS = 16,
  CU_POINTER_ATTRIBUTE_MEMPOOL_HANDLE = 17,
  CU_POINTER_ATTRIBUTE_MAPPING_SIZE = 18,
  CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR = 19,
  CU_POINTER_ATTRIBUTE_MEMORY_BLOCK_ID = 20,
  CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE = 21,
};
enum CUctx_flags {
  CU_CTX_SCHED_AUTO = 0x00,
  CU_CTX_SCHED_SPIN = 0x01,
  CU_CTX_SCHED_YIELD = 0x02,
  CU_CTX_SCHED_BLOCKING_SYNC = 0x04,
  CU_CTX_BLOCKING_SYNC = 0x04,
  CU_CTX_SCHED_MASK = 0x07,
  CU_CTX_MAP_HOST = 0x08,
  CU_CTX_LMEM_RESIZE_TO_MAX = 0x10,
  CU_CTX_COREDUMP_ENABLE = 0x20,
  CU_CTX_USER_COREDUMP_ENABLE = 0x40,
  CU_CTX_SYNC_MEMOPS = 0x80,
  CU_CTX_FLAGS_MASK = 0xFF,
};
enum CUstream_flags {
  CU_STREAM_DEFAULT = 0x0,
  CU_STREAM_NON_BLOCKING = 0x1,
};
enum CUevent_flags {
  CU_EVENT_DEFAULT = 0x0,
  CU_EVENT_BLOCKING_SYNC = 0x1,
  CU_EVENT_DISABLE_TIMING = 0x2,
  CU_EVENT_INTERPROCESS = 0x4,
};
enum CUmemAllocationHandleType {
  CU_MEM_HANDLE_TYPE_NONE = 0x0,
  CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 0x1,
  CU_MEM_HANDLE_TYPE_WIN32 = 0x2,
  CU_MEM_HANDLE_TYPE_WIN32_KMT = 0x4,
  CU_MEM_HANDLE_TYPE_FABRIC = 0x8,
  CU_MEM_HANDLE_TYPE_MAX = 0x7FFFFFFF,
};
enum CUmemAccess_flags {
  CU_MEM_ACCESS_FLAGS_PROT_NONE = 0x0,
  CU_MEM_ACCESS_FLAGS_PROT_READ = 0x1,
  CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 0x3,
  CU_MEM_ACCESS_FLAGS_PROT_MAX = 0x7FFFFFFF,
};
enum CUmemLocationType {
  CU_MEM_LOCATION_TYPE_INVALID = 0x0,
  CU_MEM_LOCATION_TYPE_NONE = 0x0,
  CU_MEM_LOCATION_TYPE_DEVICE = 0x1,
  CU_MEM_LOCATION_TYPE_HOST = 0x2,
  CU_MEM_LOCATION_TYPE_HOST_NUMA = 0x3,
  CU_MEM_LOCATION_TYPE_HOST_NUMA_CURRENT = 0x4,
  CU_MEM_LOCATION_TYPE_MAX = 0x7FFFFFFF,
};
enum CUmemAllocationType {
  CU_MEM_ALLOCATION_TYPE_INVALID = 0x0,
  CU_MEM_ALLOCATION_TYPE_PINNED = 0x1,
  CU_MEM_ALLOCATION_TYPE_MANAGED = 0x2,
  CU_MEM_ALLOCATION_TYPE_MAX = 0x7FFFFFFF,
};
enum CUmemAllocationGranularity_flags {
  CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0x0,
  CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 0x1,
};
enum CUfunc_cache {
  CU_FUNC_CACHE_PREFER_NONE = 0x00,
  CU_FUNC_CACHE_PREFER_SHARED = 0x01,
  CU_FUNC_CACHE_PREFER_L1 = 0x02,
  CU_FUNC_CACHE_PREFER_EQUAL = 0x03,
};
enum CUcomputemode {
  CU_COMPUTEMODE_DEFAULT = 0,
  CU_COMPUTEMODE_PROHIBITED = 2,
  CU_COMPUTEMODE_EXCLUSIVE_PROCESS = 3,
};

struct CUctxCreateParams {
  CUexecAffinityParam* execAffinityParams;
  int numExecAffinityParams;
  CUctxCigParam* cigParams;
};
struct CUmemLocation {
  CUmemLocationType type;
  int id;
};
struct CUmemAllocationProp {
  CUmemAllocationType type;
  CUmemAllocationHandleType requestedHandleTypes;
  CUmemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
};
struct CUmemAccessDesc {
  CUmemLocation location;
  CUmemAccess_flags flags;
};
using CUdevprop = cudaDeviceProp;

#define CU_LAUNCH_PARAM_END_AS_INT 0x00
#define CU_LAUNCH_PARAM_END ((void*)CU_LAUNCH_PARAM_END_AS_INT)
#define CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT 0x01
#define CU_LAUNCH_PARAM_BUFFER_POINTER ((void*)CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT)
#define CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT 0x02
#define CU_LAUNCH_PARAM_BUFFER_SIZE ((void*)CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT)
#define CU_MEMHOSTALLOC_PORTABLE 0x01
#define CU_MEMHOSTALLOC_DEVICEMAP 0x02
#define CU_MEMHOSTALLOC_WRITECOMBINED 0x04
#define CU_MEMHOSTREGISTER_PORTABLE 0x01
#define CU_MEMHOSTREGISTER_DEVICEMAP 0x02
#define CU_STREAM_LEGACY ((CUstream)0x1)
#define CU_STREAM_PER_THREAD ((CUstream)0x2)

CUresult cuInit(unsigned int flags);
CUresult cuDriverGetVersion(int* version);
CUresult cuGetErrorName(CUresult error, const char** name);
CUresult cuGetErrorString(CUresult error, const char** text);

CUresult cuDeviceGet(CUdevice* device, int ordinal);
CUresult cuDeviceGetCount(int* count);
CUresult cuDeviceGetName(char* name, int length, CUdevice device);
CUresult cuDeviceGetAttribute(int* value, CUdevice_attribute attribute, CUdevice device);
CUresult cuDeviceTotalMem(std::size_t* bytes, CUdevice device);
CUresult cuDeviceComputeCapability(int* major, int* minor, CUdevice device);
CUresult cuDeviceGetPCIBusId(char* bus_id, int length, CUdevice device);
CUresult cuDeviceCanAccessPeer(int* can_access, CUdevice device, CUdevice peer);

// Contexts: one device, so a context is a name for it; each thread keeps a stack of current ones.
CUresult cuCtxCreate(CUcontext* context, CUctxCreateParams* params, unsigned int flags, CUdevice device);  // CUDA 13
CUresult cuCtxCreate(CUcontext* context, unsigned int flags, CUdevice device);                             // before
CUresult cuCtxDestroy(CUcontext context);
CUresult cuCtxPushCurrent(CUcontext context);
CUresult cuCtxPopCurrent(CUcontext* context);
CUresult cuCtxSetCurrent(CUcontext context);
CUresult cuCtxGetCurrent(CUcontext* context);
CUresult cuCtxGetDevice(CUdevice* device);
CUresult cuCtxSynchronize();
CUresult cuCtxGetApiVersion(CUcontext context, unsigned int* version);
CUresult cuCtxSetLimit(CUlimit limit, std::size_t value);
CUresult cuCtxGetLimit(std::size_t* value, CUlimit limit);
CUresult cuCtxSetCacheConfig(CUfunc_cache config);
CUresult cuCtxEnablePeerAccess(CUcontext peer, unsigned int flags);
CUresult cuDevicePrimaryCtxRetain(CUcontext* context, CUdevice device);
CUresult cuDevicePrimaryCtxRelease(CUdevice device);
CUresult cuDevicePrimaryCtxReset(CUdevice device);
CUresult cuDevicePrimaryCtxSetFlags(CUdevice device, unsigned int flags);

CUresult cuMemAlloc(CUdeviceptr* ptr, std::size_t bytes);
CUresult cuMemAllocPitch(CUdeviceptr* ptr, std::size_t* pitch, std::size_t width_bytes, std::size_t height, unsigned int element_bytes);
CUresult cuMemAllocManaged(CUdeviceptr* ptr, std::size_t bytes, unsigned int flags);
CUresult cuMemFree(CUdeviceptr ptr);
CUresult cuMemAllocHost(void** ptr, std::size_t bytes);
CUresult cuMemHostAlloc(void** ptr, std::size_t bytes, unsigned int flags);
CUresult cuMemFreeHost(void* ptr);
CUresult cuMemHostGetDevicePointer(CUdeviceptr* device_ptr, void* host_ptr, unsigned int flags);
CUresult cuMemHostRegister(void* ptr, std::size_t bytes, unsigned int flags);
CUresult cuMemHostUnregister(void* ptr);
CUresult cuMemGetInfo(std::size_t* free, std::size_t* total);
CUresult cuMemGetAddressRange(CUdeviceptr* base, std::size_t* bytes, CUdeviceptr ptr);
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes);
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, std::size_t bytes);
CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, std::size_t bytes);
CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes);
CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream);
CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void* src, std::size_t bytes, CUstream stream);
CUresult cuMemcpyDtoHAsync(void* dst, CUdeviceptr src, std::size_t bytes, CUstream stream);
CUresult cuMemcpyDtoDAsync(CUdeviceptr dst, CUdeviceptr src, std::size_t bytes, CUstream stream);
CUresult cuMemsetD8(CUdeviceptr dst, unsigned char value, std::size_t count);
CUresult cuMemsetD16(CUdeviceptr dst, unsigned short value, std::size_t count);
CUresult cuMemsetD32(CUdeviceptr dst, unsigned int value, std::size_t count);
CUresult cuMemsetD8Async(CUdeviceptr dst, unsigned char value, std::size_t count, CUstream stream);
CUresult cuMemsetD32Async(CUdeviceptr dst, unsigned int value, std::size_t count, CUstream stream);

// Virtual memory management: reserved ranges of addresses, physical
// allocations (memory objects of the process) mapped into them, and access.
CUresult cuMemGetAllocationGranularity(std::size_t* granularity, const CUmemAllocationProp* prop, CUmemAllocationGranularity_flags option);
CUresult cuMemAddressReserve(CUdeviceptr* ptr, std::size_t bytes, std::size_t alignment, CUdeviceptr address, unsigned long long flags);
CUresult cuMemAddressFree(CUdeviceptr ptr, std::size_t bytes);
CUresult cuMemCreate(CUmemGenericAllocationHandle* handle, std::size_t bytes, const CUmemAllocationProp* prop, unsigned long long flags);
CUresult cuMemRelease(CUmemGenericAllocationHandle handle);
CUresult cuMemMap(CUdeviceptr ptr, std::size_t bytes, std::size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags);
CUresult cuMemUnmap(CUdeviceptr ptr, std::size_t bytes);
CUresult cuMemSetAccess(CUdeviceptr ptr, std::size_t bytes, const CUmemAccessDesc* descriptors, std::size_t count);

CUresult cuStreamCreate(CUstream* stream, unsigned int flags);
CUresult cuStreamDestroy(CUstream stream);
CUresult cuStreamSynchronize(CUstream stream);
CUresult cuStreamQuery(CUstream stream);
CUresult cuStreamWaitEvent(CUstream stream, CUevent event, unsigned int flags);
CUresult cuStreamAddCallback(CUstream stream, CUstreamCallback callback, void* user_data, unsigned int flags);
CUresult cuEventCreate(CUevent* event, unsigned int flags);
CUresult cuEventDestroy(CUevent event);
CUresult cuEventRecord(CUevent event, CUstream stream);
CUresult cuEventQuery(CUevent event);
CUresult cuEventSynchronize(CUevent event);
CUresult cuEventElapsedTime(float* milliseconds, CUevent start, CUevent end);

// CUDA arrays, 2D copies and texture and surface objects (driver_textures.cpp),
// over the runtime's (runtime_textures.h). Without CU_TRSF_READ_AS_INTEGER a
// texture of 8- or 16-bit integers reads normalized floats, as the driver's do.
using CUarray = cudaArray*;
using CUtexObject = unsigned long long;
using CUsurfObject = unsigned long long;
enum CUarray_format {
  CU_AD_FORMAT_UNSIGNED_INT8 = 0x01,
  CU_AD_FORMAT_UNSIGNED_INT16 = 0x02,
  CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
  CU_AD_FORMAT_SIGNED_INT8 = 0x08,
  CU_AD_FORMAT_SIGNED_INT16 = 0x09,
  CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
  CU_AD_FORMAT_HALF = 0x10,
  CU_AD_FORMAT_FLOAT = 0x20,
};
enum CUaddress_mode { CU_TR_ADDRESS_MODE_WRAP = 0, CU_TR_ADDRESS_MODE_CLAMP = 1, CU_TR_ADDRESS_MODE_MIRROR = 2, CU_TR_ADDRESS_MODE_BORDER = 3 };
enum CUfilter_mode { CU_TR_FILTER_MODE_POINT = 0, CU_TR_FILTER_MODE_LINEAR = 1 };
enum CUresourcetype {
  CU_RESOURCE_TYPE_ARRAY = 0x00,
  CU_RESOURCE_TYPE_MIPMAPPED_ARRAY = 0x01,
  CU_RESOURCE_TYPE_LINEAR = 0x02,
  CU_RESOURCE_TYPE_PITCH2D = 0x03,
};
#define CU_TRSF_READ_AS_INTEGER 0x01
#define CU_TRSF_NORMALIZED_COORDINATES 0x02
#define CU_TRSF_SRGB 0x10
#define CU_TRSF_DISABLE_TRILINEAR_OPTIMIZATION 0x20
#define CU_TRSF_SEAMLESS_CUBEMAP 0x40
struct CUDA_ARRAY_DESCRIPTOR {
  std::size_t Width;
  std::size_t Height;
  CUarray_format Format;
  unsigned int NumChannels;
};
struct CUDA_MEMCPY2D {
  std::size_t srcXInBytes, srcY;
  CUmemorytype srcMemoryType;
  const void* srcHost;
  CUdeviceptr srcDevice;
  CUarray srcArray;
  std::size_t srcPitch;
  std::size_t dstXInBytes, dstY;
  CUmemorytype dstMemoryType;
  void* dstHost;
  CUdeviceptr dstDevice;
  CUarray dstArray;
  std::size_t dstPitch;
  std::size_t WidthInBytes;
  std::size_t Height;
};
struct CUDA_RESOURCE_DESC {
  CUresourcetype resType;
  union {
    struct {
      CUarray hArray;
    } array;
    struct {
      void* hMipmappedArray;
    } mipmap;
    struct {
      CUdeviceptr devPtr;
      CUarray_format format;
      unsigned int numChannels;
      std::size_t sizeInBytes;
    } linear;
    struct {
      CUdeviceptr devPtr;
      CUarray_format format;
      unsigned int numChannels;
      std::size_t width;
      std::size_t height;
      std::size_t pitchInBytes;
    } pitch2D;
    struct {
      int reserved[32];
    } reserved;
  } res;
  unsigned int flags;
};
struct CUDA_TEXTURE_DESC {
  CUaddress_mode addressMode[3];
  CUfilter_mode filterMode;
  unsigned int flags;
  unsigned int maxAnisotropy;
  CUfilter_mode mipmapFilterMode;
  float mipmapLevelBias;
  float minMipmapLevelClamp;
  float maxMipmapLevelClamp;
  float borderColor[4];
  int reserved[12];
};
struct CUDA_RESOURCE_VIEW_DESC;
CUresult cuArrayCreate(CUarray* array, const CUDA_ARRAY_DESCRIPTOR* descriptor);
CUresult cuArrayGetDescriptor(CUDA_ARRAY_DESCRIPTOR* descriptor, CUarray array);
CUresult cuArrayDestroy(CUarray array);
CUresult cuMemcpy2D(const CUDA_MEMCPY2D* copy);
CUresult cuMemcpy2DUnaligned(const CUDA_MEMCPY2D* copy);
CUresult cuMemcpy2DAsync(const CUDA_MEMCPY2D* copy, CUstream stream);
CUresult cuTexObjectCreate(CUtexObject* texture, const CUDA_RESOURCE_DESC* resource, const CUDA_TEXTURE_DESC* texture_desc,
                           const CUDA_RESOURCE_VIEW_DESC* view);
CUresult cuTexObjectDestroy(CUtexObject texture);
CUresult cuSurfObjectCreate(CUsurfObject* surface, const CUDA_RESOURCE_DESC* resource);
CUresult cuSurfObjectDestroy(CUsurfObject surface);

// Modules (driver_modules.cpp).
CUresult cuModuleLoad(CUmodule* module, const char* path);
CUresult cuModuleLoadData(CUmodule* module, const void* image);
CUresult cuModuleLoadDataEx(CUmodule* module, const void* image, unsigned int option_count, CUjit_option* options, void** option_values);
CUresult cuModuleLoadFatBinary(CUmodule* module, const void* image);
CUresult cuModuleUnload(CUmodule module);
CUresult cuModuleGetFunction(CUfunction* function, CUmodule module, const char* name);
CUresult cuModuleGetGlobal(CUdeviceptr* ptr, std::size_t* bytes, CUmodule module, const char* name);
CUresult cuFuncGetAttribute(int* value, CUfunction_attribute attribute, CUfunction function);
CUresult cuFuncSetAttribute(CUfunction function, CUfunction_attribute attribute, int value);
CUresult cuFuncSetCacheConfig(CUfunction function, CUfunc_cache config);
CUresult cuFuncGetName(const char** name, CUfunction function);
// Arguments either as `params` (one pointer per parameter) or packed in
// `extra`'s CU_LAUNCH_PARAM_BUFFER_POINTER at the parameters' natural alignment.
CUresult cuLaunchKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, unsigned int block_x,
                        unsigned int block_y, unsigned int block_z, unsigned int shared_bytes, CUstream stream, void** params, void** extra);
CUresult cuLaunchCooperativeKernel(CUfunction function, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z, unsigned int block_x,
                                   unsigned int block_y, unsigned int block_z, unsigned int shared_bytes, CUstream stream, void** params);
CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, CUfunction function, int block_size, std::size_t dynamic_shared_bytes);
CUresult cuOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size, CUfunction function, CUoccupancyB2DSize shared_for_block_size,
                                          std::size_t dynamic_shared_bytes, int block_size_limit);
