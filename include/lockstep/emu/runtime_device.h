// The emulator as a CUDA device: one device, 0, with an H100 SXM's properties
// and limits (the numbers kernels are checked against, launch_limits.h), its
// attributes by CUDA's numbers, kernel attributes and occupancy answers as an
// H100 gives them. Names and numbers follow CUDA 13's driver_types.h; fields
// CUDA 13 removed from cudaDeviceProp (clockRate, deviceOverlap, ...) are kept,
// as programs written for older toolkits still read them.
#pragma once
#include <cstddef>

#include "lockstep/emu/runtime_types.h"

struct CUuuid_st {
  char bytes[16];
};
using cudaUUID_t = CUuuid_st;

struct cudaDeviceProp {
  char name[256];
  cudaUUID_t uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  std::size_t totalGlobalMem;
  std::size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  std::size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  int clockRate;  // kHz; removed in CUDA 13
  std::size_t totalConstMem;
  int major;
  int minor;
  std::size_t textureAlignment;
  std::size_t texturePitchAlignment;
  int deviceOverlap;  // removed in CUDA 13
  int multiProcessorCount;
  int kernelExecTimeoutEnabled;  // removed in CUDA 13
  int integrated;
  int canMapHostMemory;
  int computeMode;  // removed in CUDA 13
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture1DLinear;  // removed in CUDA 13
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  std::size_t surfaceAlignment;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryClockRate;  // kHz; removed in CUDA 13
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  std::size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int singleToDoublePrecisionPerfRatio;  // removed in CUDA 13
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  int cooperativeMultiDeviceLaunch;  // removed in CUDA 13
  std::size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  std::size_t reservedSharedMemPerBlock;
  int hostRegisterSupported;
  int sparseCudaArraySupported;
  int hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported;
  int memoryPoolsSupported;
  int gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported;
  int ipcEventSupported;
  int clusterLaunch;
  int unifiedFunctionPointers;
  int deviceNumaConfig;
  int deviceNumaId;
  int mpsEnabled;
  int hostNumaId;
  unsigned int gpuPciDeviceID;
  unsigned int gpuPciSubsystemID;
  int hostNumaMultinodeIpcSupported;
  int reserved[56];
};

// CUDA's device attributes, by CUDA's numbers (gaps are numbers CUDA reserves).
enum cudaDeviceAttr {
  cudaDevAttrMaxThreadsPerBlock = 1,
  cudaDevAttrMaxBlockDimX = 2,
  cudaDevAttrMaxBlockDimY = 3,
  cudaDevAttrMaxBlockDimZ = 4,
  cudaDevAttrMaxGridDimX = 5,
  cudaDevAttrMaxGridDimY = 6,
  cudaDevAttrMaxGridDimZ = 7,
  cudaDevAttrMaxSharedMemoryPerBlock = 8,
  cudaDevAttrTotalConstantMemory = 9,
  cudaDevAttrWarpSize = 10,
  cudaDevAttrMaxPitch = 11,
  cudaDevAttrMaxRegistersPerBlock = 12,
  cudaDevAttrClockRate = 13,
  cudaDevAttrTextureAlignment = 14,
  cudaDevAttrGpuOverlap = 15,
  cudaDevAttrMultiProcessorCount = 16,
  cudaDevAttrKernelExecTimeout = 17,
  cudaDevAttrIntegrated = 18,
  cudaDevAttrCanMapHostMemory = 19,
  cudaDevAttrComputeMode = 20,
  cudaDevAttrMaxTexture1DWidth = 21,
  cudaDevAttrMaxTexture2DWidth = 22,
  cudaDevAttrMaxTexture2DHeight = 23,
  cudaDevAttrMaxTexture3DWidth = 24,
  cudaDevAttrMaxTexture3DHeight = 25,
  cudaDevAttrMaxTexture3DDepth = 26,
  cudaDevAttrMaxTexture2DLayeredWidth = 27,
  cudaDevAttrMaxTexture2DLayeredHeight = 28,
  cudaDevAttrMaxTexture2DLayeredLayers = 29,
  cudaDevAttrSurfaceAlignment = 30,
  cudaDevAttrConcurrentKernels = 31,
  cudaDevAttrEccEnabled = 32,
  cudaDevAttrPciBusId = 33,
  cudaDevAttrPciDeviceId = 34,
  cudaDevAttrTccDriver = 35,
  cudaDevAttrMemoryClockRate = 36,
  cudaDevAttrGlobalMemoryBusWidth = 37,
  cudaDevAttrL2CacheSize = 38,
  cudaDevAttrMaxThreadsPerMultiProcessor = 39,
  cudaDevAttrAsyncEngineCount = 40,
  cudaDevAttrUnifiedAddressing = 41,
  cudaDevAttrMaxTexture1DLayeredWidth = 42,
  cudaDevAttrMaxTexture1DLayeredLayers = 43,
  cudaDevAttrMaxTexture2DGatherWidth = 45,
  cudaDevAttrMaxTexture2DGatherHeight = 46,
  cudaDevAttrMaxTexture3DWidthAlt = 47,
  cudaDevAttrMaxTexture3DHeightAlt = 48,
  cudaDevAttrMaxTexture3DDepthAlt = 49,
  cudaDevAttrPciDomainId = 50,
  cudaDevAttrTexturePitchAlignment = 51,
  cudaDevAttrMaxTextureCubemapWidth = 52,
  cudaDevAttrMaxTextureCubemapLayeredWidth = 53,
  cudaDevAttrMaxTextureCubemapLayeredLayers = 54,
  cudaDevAttrMaxSurface1DWidth = 55,
  cudaDevAttrMaxSurface2DWidth = 56,
  cudaDevAttrMaxSurface2DHeight = 57,
  cudaDevAttrMaxSurface3DWidth = 58,
  cudaDevAttrMaxSurface3DHeight = 59,
  cudaDevAttrMaxSurface3DDepth = 60,
  cudaDevAttrMaxSurface1DLayeredWidth = 61,
  cudaDevAttrMaxSurface1DLayeredLayers = 62,
  cudaDevAttrMaxSurface2DLayeredWidth = 63,
  cudaDevAttrMaxSurface2DLayeredHeight = 64,
  cudaDevAttrMaxSurface2DLayeredLayers = 65,
  cudaDevAttrMaxSurfaceCubemapWidth = 66,
  cudaDevAttrMaxSurfaceCubemapLayeredWidth = 67,
  cudaDevAttrMaxSurfaceCubemapLayeredLayers = 68,
  cudaDevAttrMaxTexture1DLinearWidth = 69,
  cudaDevAttrMaxTexture2DLinearWidth = 70,
  cudaDevAttrMaxTexture2DLinearHeight = 71,
  cudaDevAttrMaxTexture2DLinearPitch = 72,
  cudaDevAttrMaxTexture2DMipmappedWidth = 73,
  cudaDevAttrMaxTexture2DMipmappedHeight = 74,
  cudaDevAttrComputeCapabilityMajor = 75,
  cudaDevAttrComputeCapabilityMinor = 76,
  cudaDevAttrMaxTexture1DMipmappedWidth = 77,
  cudaDevAttrStreamPrioritiesSupported = 78,
  cudaDevAttrGlobalL1CacheSupported = 79,
  cudaDevAttrLocalL1CacheSupported = 80,
  cudaDevAttrMaxSharedMemoryPerMultiprocessor = 81,
  cudaDevAttrMaxRegistersPerMultiprocessor = 82,
  cudaDevAttrManagedMemory = 83,
  cudaDevAttrIsMultiGpuBoard = 84,
  cudaDevAttrMultiGpuBoardGroupID = 85,
  cudaDevAttrHostNativeAtomicSupported = 86,
  cudaDevAttrSingleToDoublePrecisionPerfRatio = 87,
  cudaDevAttrPageableMemoryAccess = 88,
  cudaDevAttrConcurrentManagedAccess = 89,
  cudaDevAttrComputePreemptionSupported = 90,
  cudaDevAttrCanUseHostPointerForRegisteredMem = 91,
  cudaDevAttrReserved92 = 92,
  cudaDevAttrReserved93 = 93,
  cudaDevAttrReserved94 = 94,
  cudaDevAttrCooperativeLaunch = 95,
  cudaDevAttrCooperativeMultiDeviceLaunch = 96,  // CUDA 12's name; Reserved96 in CUDA 13
  cudaDevAttrReserved96 = 96,
  cudaDevAttrMaxSharedMemoryPerBlockOptin = 97,
  cudaDevAttrCanFlushRemoteWrites = 98,
  cudaDevAttrHostRegisterSupported = 99,
  cudaDevAttrPageableMemoryAccessUsesHostPageTables = 100,
  cudaDevAttrDirectManagedMemAccessFromHost = 101,
  cudaDevAttrMaxBlocksPerMultiprocessor = 106,
  cudaDevAttrMaxPersistingL2CacheSize = 108,
  cudaDevAttrMaxAccessPolicyWindowSize = 109,
  cudaDevAttrReservedSharedMemoryPerBlock = 111,
  cudaDevAttrSparseCudaArraySupported = 112,
  cudaDevAttrHostRegisterReadOnlySupported = 113,
  cudaDevAttrTimelineSemaphoreInteropSupported = 114,
  cudaDevAttrMaxTimelineSemaphoreInteropSupported = 114,  // the older name
  cudaDevAttrMemoryPoolsSupported = 115,
  cudaDevAttrGPUDirectRDMASupported = 116,
  cudaDevAttrGPUDirectRDMAFlushWritesOptions = 117,
  cudaDevAttrGPUDirectRDMAWritesOrdering = 118,
  cudaDevAttrMemoryPoolSupportedHandleTypes = 119,
  cudaDevAttrClusterLaunch = 120,
  cudaDevAttrDeferredMappingCudaArraySupported = 121,
  cudaDevAttrReserved122 = 122,
  cudaDevAttrReserved123 = 123,
  cudaDevAttrReserved124 = 124,
  cudaDevAttrIpcEventSupport = 125,
  cudaDevAttrMemSyncDomainCount = 126,
  cudaDevAttrReserved127 = 127,
  cudaDevAttrReserved128 = 128,
  cudaDevAttrReserved129 = 129,
  cudaDevAttrNumaConfig = 130,
  cudaDevAttrNumaId = 131,
  cudaDevAttrReserved132 = 132,
  cudaDevAttrMpsEnabled = 133,
  cudaDevAttrHostNumaId = 134,
  cudaDevAttrD3D12CigSupported = 135,
  cudaDevAttrVulkanCigSupported = 138,
  cudaDevAttrGpuPciDeviceId = 139,
  cudaDevAttrGpuPciSubsystemId = 140,
  cudaDevAttrReserved141 = 141,
  cudaDevAttrHostNumaMemoryPoolsSupported = 142,
  cudaDevAttrHostNumaMultinodeIpcSupported = 143,
  cudaDevAttrHostMemoryPoolsSupported = 144,
  cudaDevAttrReserved145 = 145,
  cudaDevAttrOnlyPartialHostNativeAtomicSupported = 147,
  cudaDevAttrMax
};

enum cudaComputeMode {
  cudaComputeModeDefault = 0,
  cudaComputeModeExclusive = 1,
  cudaComputeModeProhibited = 2,
  cudaComputeModeExclusiveProcess = 3,
};

enum cudaLimit {
  cudaLimitStackSize = 0x00,
  cudaLimitPrintfFifoSize = 0x01,
  cudaLimitMallocHeapSize = 0x02,
  cudaLimitDevRuntimeSyncDepth = 0x03,
  cudaLimitDevRuntimePendingLaunchCount = 0x04,
  cudaLimitMaxL2FetchGranularity = 0x05,
  cudaLimitPersistingL2CacheSize = 0x06,
};

enum cudaFuncCache {
  cudaFuncCachePreferNone = 0,
  cudaFuncCachePreferShared = 1,
  cudaFuncCachePreferL1 = 2,
  cudaFuncCachePreferEqual = 3,
};

enum cudaSharedMemConfig {
  cudaSharedMemBankSizeDefault = 0,
  cudaSharedMemBankSizeFourByte = 1,
  cudaSharedMemBankSizeEightByte = 2,
};

enum cudaSharedCarveout {
  cudaSharedmemCarveoutDefault = -1,
  cudaSharedmemCarveoutMaxShared = 100,
  cudaSharedmemCarveoutMaxL1 = 0,
};

enum cudaFuncAttribute {
  cudaFuncAttributeMaxDynamicSharedMemorySize = 8,
  cudaFuncAttributePreferredSharedMemoryCarveout = 9,
};

struct cudaFuncAttributes {
  std::size_t sharedSizeBytes;  // the kernel's static __shared__ bytes
  std::size_t constSizeBytes;
  std::size_t localSizeBytes;
  int maxThreadsPerBlock;
  int numRegs;  // lockstep::emulated_registers_per_thread
  int ptxVersion;
  int binaryVersion;
  int cacheModeCA;
  int maxDynamicSharedSizeBytes;
  int preferredShmemCarveout;
  int clusterDimMustBeSet;
  int requiredClusterWidth;
  int requiredClusterHeight;
  int requiredClusterDepth;
  int clusterSchedulingPolicyPreference;
  int nonPortableClusterSizeAllowed;
  int reserved[16];
};

// cudaSetDeviceFlags' flags.
#define cudaDeviceScheduleAuto 0x00
#define cudaDeviceScheduleSpin 0x01
#define cudaDeviceScheduleYield 0x02
#define cudaDeviceScheduleBlockingSync 0x04
#define cudaDeviceBlockingSync 0x04
#define cudaDeviceScheduleMask 0x07
#define cudaDeviceMapHost 0x08
#define cudaDeviceLmemResizeToMax 0x10
#define cudaDeviceSyncMemops 0x80
#define cudaDeviceMask 0xff
#define cudaPeerAccessDefault 0x00
#define cudaOccupancyDefault 0x00
#define cudaOccupancyDisableCachingOverride 0x01

cudaError_t cudaGetDeviceCount(int* count);
cudaError_t cudaGetDevice(int* device);
cudaError_t cudaSetDevice(int device);
cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop);
cudaError_t cudaSetDeviceFlags(unsigned int flags);
cudaError_t cudaGetDeviceFlags(unsigned int* flags);
cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device);
// CUDA 12 named the function this; its headers mapped the plain name onto it.
inline cudaError_t cudaGetDeviceProperties_v2(cudaDeviceProp* prop, int device) { return cudaGetDeviceProperties(prop, device); }
cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device);
// Ends the context: clears the sticky error, destroys every stream and event,
// and restores the flags, limits and configurations. Allocations stay valid
// (the emulator's memory is the process's; CUDA would free them).
cudaError_t cudaDeviceReset();
cudaError_t cudaDeviceGetLimit(std::size_t* value, cudaLimit limit);
cudaError_t cudaDeviceSetLimit(cudaLimit limit, std::size_t value);
cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config);
cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config);
cudaError_t cudaDeviceGetSharedMemConfig(cudaSharedMemConfig* config);
cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig config);
// "0000:00:00.0": the domain, bus and device numbers of cudaDeviceProp.
cudaError_t cudaDeviceGetPCIBusId(char* bus_id, int length, int device);
cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer_device);
cudaError_t cudaDeviceEnablePeerAccess(int peer_device, unsigned int flags);
cudaError_t cudaDeviceDisablePeerAccess(int peer_device);

// Kernel attributes and occupancy, by the kernel's address (the templates
// below take the kernel itself, as CUDA's C++ API does).
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, const void* kernel);
// The kernel's name as the emulator knows it (demangled, "?" when unknown).
cudaError_t cudaFuncGetName(const char** name, const void* kernel);
cudaError_t cudaFuncSetAttributeForKernel(const void* kernel, cudaFuncAttribute attribute, int value);
cudaError_t cudaFuncSetCacheConfig(const void* kernel, cudaFuncCache config);
cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void* kernel, int block_size, std::size_t dynamic_shared_bytes,
                                                                   unsigned int flags);
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, const void* kernel, int block_size, std::size_t dynamic_shared_bytes) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, kernel, block_size, dynamic_shared_bytes, cudaOccupancyDefault);
}

namespace lockstep::emu {
// cudaOccupancyMaxPotentialBlockSize's search (the block size with the most
// resident threads per SM, the larger on ties), over the dynamic shared bytes
// each block size needs.
cudaError_t max_potential_block_size(int* min_grid_size, int* block_size, const void* kernel, std::size_t (*shared_for)(int, const void*),
                                     const void* shared_context, int block_size_limit, unsigned int flags);
}  // namespace lockstep::emu

template <class Kernel>
inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, Kernel* kernel) {
  return cudaFuncGetAttributes(attributes, reinterpret_cast<const void*>(kernel));
}
template <class Kernel>
inline cudaError_t cudaFuncGetName(const char** name, Kernel* kernel) {
  return cudaFuncGetName(name, reinterpret_cast<const void*>(kernel));
}
template <class Kernel>
inline cudaError_t cudaFuncSetAttribute(Kernel* kernel, cudaFuncAttribute attribute, int value) {
  return cudaFuncSetAttributeForKernel(reinterpret_cast<const void*>(kernel), attribute, value);
}
template <class Kernel>
inline cudaError_t cudaFuncSetCacheConfig(Kernel* kernel, cudaFuncCache config) {
  return cudaFuncSetCacheConfig(reinterpret_cast<const void*>(kernel), config);
}
template <class Kernel>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessor(int* blocks, Kernel* kernel, int block_size, std::size_t dynamic_shared_bytes) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, reinterpret_cast<const void*>(kernel), block_size, dynamic_shared_bytes,
                                                                cudaOccupancyDefault);
}
template <class Kernel>
inline cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, Kernel* kernel, int block_size,
                                                                          std::size_t dynamic_shared_bytes, unsigned int flags) {
  return cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(blocks, reinterpret_cast<const void*>(kernel), block_size, dynamic_shared_bytes,
                                                                flags);
}
// The block size that keeps the most threads resident per SM, and the grid that fills every SM with it.
template <class Kernel>
inline cudaError_t cudaOccupancyMaxPotentialBlockSize(int* min_grid_size, int* block_size, Kernel* kernel, std::size_t dynamic_shared_bytes = 0,
                                                      int block_size_limit = 0) {
  std::size_t (*same)(int, const void*) = [](int, const void* bytes) { return *static_cast<const std::size_t*>(bytes); };
  return lockstep::emu::max_potential_block_size(min_grid_size, block_size, reinterpret_cast<const void*>(kernel), same, &dynamic_shared_bytes,
                                                 block_size_limit, cudaOccupancyDefault);
}
template <class Kernel>
inline cudaError_t cudaOccupancyMaxPotentialBlockSizeWithFlags(int* min_grid_size, int* block_size, Kernel* kernel,
                                                               std::size_t dynamic_shared_bytes = 0, int block_size_limit = 0,
                                                               unsigned int flags = 0) {
  std::size_t (*same)(int, const void*) = [](int, const void* bytes) { return *static_cast<const std::size_t*>(bytes); };
  return lockstep::emu::max_potential_block_size(min_grid_size, block_size, reinterpret_cast<const void*>(kernel), same, &dynamic_shared_bytes,
                                                 block_size_limit, flags);
}
// The same where a block's dynamic shared memory depends on its size: shared_for(block_size) gives it.
template <class Kernel, class SharedForBlockSize>
inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(int* min_grid_size, int* block_size, Kernel* kernel,
                                                                           SharedForBlockSize shared_for, int block_size_limit = 0,
                                                                           unsigned int flags = 0) {
  std::size_t (*call)(int, const void*) = [](int size, const void* f) {
    return static_cast<std::size_t>((*static_cast<const SharedForBlockSize*>(f))(size));
  };
  return lockstep::emu::max_potential_block_size(min_grid_size, block_size, reinterpret_cast<const void*>(kernel), call, &shared_for,
                                                 block_size_limit, flags);
}
template <class Kernel, class SharedForBlockSize>
inline cudaError_t cudaOccupancyMaxPotentialBlockSizeVariableSMem(int* min_grid_size, int* block_size, Kernel* kernel, SharedForBlockSize shared_for,
                                                                  int block_size_limit = 0) {
  return cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags(min_grid_size, block_size, kernel, shared_for, block_size_limit,
                                                                 cudaOccupancyDefault);
}
