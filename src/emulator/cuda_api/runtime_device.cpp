// The emulator as CUDA's device 0: an H100 SXM's properties and attributes,
// device settings, kernel attributes and occupancy by CUDA's rules over the
// H100's per-SM limits (launch_limits.h).
#include <cstdio>
#include <cstring>
#include <iterator>
#include <mutex>
#include <set>
#include <utility>

#include "execution/kernel_info.h"
#include "lockstep/emu/options.h"
#include "lockstep/emu/runtime_api.h"
#include "lockstep/launch_limits.h"
#include "runtime_calls.h"

namespace lockstep::emu {
namespace {

constexpr const auto& sm = h100_sm_limits;
constexpr const auto& block_limits = h100_limits;

cudaDeviceProp make_h100_properties() {
  cudaDeviceProp p{};
  std::snprintf(p.name, sizeof p.name, "%s", "lockstep emulator (H100 SXM limits)");
  std::memcpy(p.uuid.bytes, "lockstep-emu-h100", sizeof p.uuid.bytes);  // a fixed identity: there is one emulator
  p.totalGlobalMem = device_memory_bytes;
  p.sharedMemPerBlock = block_limits.static_shared_per_block;
  p.regsPerBlock = static_cast<int>(sm.registers_per_block);
  p.warpSize = static_cast<int>(sm.warp_size);
  p.memPitch = 2147483647;
  p.maxThreadsPerBlock = static_cast<int>(block_limits.max_threads_per_block);
  for (int d = 0; d < 3; ++d) {
    p.maxThreadsDim[d] = static_cast<int>(block_limits.max_block_dim[d]);
    p.maxGridSize[d] = static_cast<int>(block_limits.max_grid_dim[d]);
  }
  p.clockRate = static_cast<int>(sm.clock_khz);
  p.totalConstMem = 65536;
  p.major = 9;
  p.minor = 0;
  p.textureAlignment = 512;
  p.texturePitchAlignment = 32;
  p.deviceOverlap = 1;
  p.multiProcessorCount = static_cast<int>(sm.multiprocessors);
  p.kernelExecTimeoutEnabled = 0;
  p.integrated = 0;
  p.canMapHostMemory = 1;
  p.computeMode = cudaComputeModeDefault;
  p.maxTexture1D = 131072;
  p.maxTexture1DMipmap = 32768;
  p.maxTexture1DLinear = 268435456;
  p.maxTexture2D[0] = 131072, p.maxTexture2D[1] = 65536;
  p.maxTexture2DMipmap[0] = 32768, p.maxTexture2DMipmap[1] = 32768;
  p.maxTexture2DLinear[0] = 131072, p.maxTexture2DLinear[1] = 65000, p.maxTexture2DLinear[2] = 2097120;
  p.maxTexture2DGather[0] = 32768, p.maxTexture2DGather[1] = 32768;
  p.maxTexture3D[0] = 16384, p.maxTexture3D[1] = 16384, p.maxTexture3D[2] = 16384;
  p.maxTexture3DAlt[0] = 8192, p.maxTexture3DAlt[1] = 8192, p.maxTexture3DAlt[2] = 32768;
  p.maxTextureCubemap = 32768;
  p.maxTexture1DLayered[0] = 32768, p.maxTexture1DLayered[1] = 2048;
  p.maxTexture2DLayered[0] = 32768, p.maxTexture2DLayered[1] = 32768, p.maxTexture2DLayered[2] = 2048;
  p.maxTextureCubemapLayered[0] = 32768, p.maxTextureCubemapLayered[1] = 2046;
  p.maxSurface1D = 32768;
  p.maxSurface2D[0] = 131072, p.maxSurface2D[1] = 65536;
  p.maxSurface3D[0] = 16384, p.maxSurface3D[1] = 16384, p.maxSurface3D[2] = 16384;
  p.maxSurface1DLayered[0] = 32768, p.maxSurface1DLayered[1] = 2048;
  p.maxSurface2DLayered[0] = 32768, p.maxSurface2DLayered[1] = 32768, p.maxSurface2DLayered[2] = 2048;
  p.maxSurfaceCubemap = 32768;
  p.maxSurfaceCubemapLayered[0] = 32768, p.maxSurfaceCubemapLayered[1] = 2046;
  p.surfaceAlignment = 512;
  p.concurrentKernels = 1;
  p.ECCEnabled = 1;
  p.pciBusID = 0, p.pciDeviceID = 0, p.pciDomainID = 0;
  p.tccDriver = 0;
  p.asyncEngineCount = 3;
  p.unifiedAddressing = 1;
  p.memoryClockRate = 2619000;  // kHz, HBM3
  p.memoryBusWidth = 5120;
  p.l2CacheSize = 50 * 1024 * 1024;
  p.persistingL2CacheMaxSize = p.l2CacheSize / 4 * 3;
  p.maxThreadsPerMultiProcessor = static_cast<int>(sm.max_threads);
  p.streamPrioritiesSupported = 1;
  p.globalL1CacheSupported = 1;
  p.localL1CacheSupported = 1;
  p.sharedMemPerMultiprocessor = sm.shared_bytes;
  p.regsPerMultiprocessor = static_cast<int>(sm.registers);
  p.managedMemory = 1;
  p.isMultiGpuBoard = 0;
  p.multiGpuBoardGroupID = 0;
  p.hostNativeAtomicSupported = 0;
  p.singleToDoublePrecisionPerfRatio = 2;
  p.pageableMemoryAccess = 0;
  p.concurrentManagedAccess = 1;
  p.computePreemptionSupported = 1;
  p.canUseHostPointerForRegisteredMem = 1;
  p.cooperativeLaunch = 1;
  p.cooperativeMultiDeviceLaunch = 1;
  p.sharedMemPerBlockOptin = block_limits.shared_per_block_optin;
  p.pageableMemoryAccessUsesHostPageTables = 0;
  p.directManagedMemAccessFromHost = 0;
  p.maxBlocksPerMultiProcessor = static_cast<int>(sm.max_blocks);
  p.accessPolicyMaxWindowSize = 134213632;
  p.reservedSharedMemPerBlock = sm.reserved_shared_per_block;
  p.hostRegisterSupported = 1;
  p.sparseCudaArraySupported = 1;
  p.hostRegisterReadOnlySupported = 1;
  p.timelineSemaphoreInteropSupported = 1;
  p.memoryPoolsSupported = 1;  // cudaMallocAsync works
  // Features the emulator does not provide are reported absent, so programs that ask take their other path.
  p.gpuDirectRDMASupported = 0;
  p.gpuDirectRDMAFlushWritesOptions = 0;
  p.gpuDirectRDMAWritesOrdering = 0;
  p.memoryPoolSupportedHandleTypes = cudaMemHandleTypePosixFileDescriptor;  // pools shared between processes (runtime_ipc.h)
  p.deferredMappingCudaArraySupported = 0;
  p.ipcEventSupported = 1;
  p.clusterLaunch = 0;  // no thread-block clusters
  p.unifiedFunctionPointers = 0;
  p.deviceNumaConfig = 0;
  p.deviceNumaId = -1;
  p.mpsEnabled = 0;
  p.hostNumaId = -1;
  p.gpuPciDeviceID = 0x233010DEu;  // H100 SXM5 80GB (device 0x2330), NVIDIA (vendor 0x10DE)
  p.gpuPciSubsystemID = 0x16C110DEu;
  p.hostNumaMultinodeIpcSupported = 0;
  return p;
}

const cudaDeviceProp& h100_properties() {
  static const cudaDeviceProp p = make_h100_properties();
  return p;
}

// The device's settings: the flags and configurations programs set and read back.
struct device_settings {
  unsigned flags = 0;
  cudaFuncCache cache_config = cudaFuncCachePreferNone;
  cudaSharedMemConfig shared_config = cudaSharedMemBankSizeFourByte;
  // An H100's defaults, by cudaLimit.
  std::size_t limits[7] = {1024, 1 << 20, 8 << 20, 2, 2048, 64, 0};
};
std::mutex settings_mutex;
device_settings settings;
// The device each host thread works with (cudaSetDevice), as CUDA keeps it per thread.
thread_local int current_device = 0;
// Pairs (device, peer) with peer access enabled.
std::mutex peers_mutex;
std::set<std::pair<int, int>> peers;

}  // namespace

bool valid_device(int device) { return device >= 0 && device < static_cast<int>(get_options().devices); }

namespace {
// Device d's properties: an H100's, on PCI bus d.
cudaDeviceProp properties_of(int device) {
  cudaDeviceProp p = h100_properties();
  p.pciBusID = device;
  return p;
}
}  // namespace

void reset_device_settings() {
  {
    std::lock_guard lock(settings_mutex);
    settings = device_settings{};
  }
  // The current device's peer mappings go with it, as on a GPU.
  std::lock_guard lock(peers_mutex);
  for (auto it = peers.begin(); it != peers.end();) it = it->first == current_device ? peers.erase(it) : std::next(it);
}

cudaError_t max_potential_block_size(int* min_grid_size, int* block_size, const void* kernel, std::size_t (*shared_for)(int, const void*),
                                     const void* shared_context, int block_size_limit, unsigned int flags) {
  if (!min_grid_size || !block_size || !kernel) return record(cudaErrorInvalidValue);
  const int device_limit = static_cast<int>(block_limits.max_threads_per_block);
  const int granularity = static_cast<int>(sm.warp_size);
  int limit = block_size_limit == 0 || block_size_limit > device_limit ? device_limit : block_size_limit;
  int best_size = 0, best_blocks = 0, best_threads = 0;
  // From the largest size down, a warp at a time; a tie keeps the larger block.
  for (int aligned = (limit + granularity - 1) / granularity * granularity; aligned > 0; aligned -= granularity) {
    const int size = aligned > limit ? limit : aligned;
    int blocks = 0;
    if (cudaError_t e = cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(&blocks, kernel, size, shared_for(size, shared_context), flags))
      return e;
    if (blocks * size > best_threads) best_size = size, best_blocks = blocks, best_threads = blocks * size;
    if (best_threads == static_cast<int>(sm.max_threads)) break;
  }
  *min_grid_size = best_blocks * static_cast<int>(sm.multiprocessors);
  *block_size = best_size;
  return cudaSuccess;
}

}  // namespace lockstep::emu

using lockstep::emu::record;
using lockstep::emu::valid_device;

cudaError_t cudaGetDeviceCount(int* count) {
  if (!count) return record(cudaErrorInvalidValue);
  *count = static_cast<int>(lockstep::emu::get_options().devices);
  return cudaSuccess;
}

cudaError_t cudaGetDevice(int* device) {
  if (!device) return record(cudaErrorInvalidValue);
  *device = valid_device(lockstep::emu::current_device) ? lockstep::emu::current_device : 0;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int device) {
  if (!valid_device(device)) return record(cudaErrorInvalidDevice);
  lockstep::emu::current_device = device;
  return cudaSuccess;
}

cudaError_t cudaChooseDevice(int* device, const cudaDeviceProp* prop) {
  if (!device || !prop) return record(cudaErrorInvalidValue);
  *device = 0;  // every device is alike, whatever was asked for
  return cudaSuccess;
}

cudaError_t cudaSetDeviceFlags(unsigned int flags) {
  const unsigned schedule = flags & cudaDeviceScheduleMask;
  const bool one_schedule = schedule == cudaDeviceScheduleAuto || schedule == cudaDeviceScheduleSpin || schedule == cudaDeviceScheduleYield ||
                            schedule == cudaDeviceScheduleBlockingSync;
  if ((flags & ~static_cast<unsigned>(cudaDeviceMask)) || !one_schedule) return record(cudaErrorInvalidValue);
  std::lock_guard lock(lockstep::emu::settings_mutex);
  lockstep::emu::settings.flags = flags;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceFlags(unsigned int* flags) {
  if (!flags) return record(cudaErrorInvalidValue);
  std::lock_guard lock(lockstep::emu::settings_mutex);
  *flags = lockstep::emu::settings.flags;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* prop, int device) {
  if (!prop) return record(cudaErrorInvalidValue);
  if (!valid_device(device)) return record(cudaErrorInvalidDevice);
  *prop = lockstep::emu::properties_of(device);
  return cudaSuccess;
}

cudaError_t cudaDeviceGetAttribute(int* value, cudaDeviceAttr attribute, int device) {
  if (!value) return record(cudaErrorInvalidValue);
  if (!valid_device(device)) return record(cudaErrorInvalidDevice);
  const cudaDeviceProp p = lockstep::emu::properties_of(device);
  auto as_int = [](std::size_t v) { return static_cast<int>(v); };
  switch (attribute) {
    case cudaDevAttrMaxThreadsPerBlock:
      *value = p.maxThreadsPerBlock;
      break;
    case cudaDevAttrMaxBlockDimX:
      *value = p.maxThreadsDim[0];
      break;
    case cudaDevAttrMaxBlockDimY:
      *value = p.maxThreadsDim[1];
      break;
    case cudaDevAttrMaxBlockDimZ:
      *value = p.maxThreadsDim[2];
      break;
    case cudaDevAttrMaxGridDimX:
      *value = p.maxGridSize[0];
      break;
    case cudaDevAttrMaxGridDimY:
      *value = p.maxGridSize[1];
      break;
    case cudaDevAttrMaxGridDimZ:
      *value = p.maxGridSize[2];
      break;
    case cudaDevAttrMaxSharedMemoryPerBlock:
      *value = as_int(p.sharedMemPerBlock);
      break;
    case cudaDevAttrTotalConstantMemory:
      *value = as_int(p.totalConstMem);
      break;
    case cudaDevAttrWarpSize:
      *value = p.warpSize;
      break;
    case cudaDevAttrMaxPitch:
      *value = as_int(p.memPitch);
      break;
    case cudaDevAttrMaxRegistersPerBlock:
      *value = p.regsPerBlock;
      break;
    case cudaDevAttrClockRate:
      *value = p.clockRate;
      break;
    case cudaDevAttrTextureAlignment:
      *value = as_int(p.textureAlignment);
      break;
    case cudaDevAttrGpuOverlap:
      *value = p.deviceOverlap;
      break;
    case cudaDevAttrMultiProcessorCount:
      *value = p.multiProcessorCount;
      break;
    case cudaDevAttrKernelExecTimeout:
      *value = p.kernelExecTimeoutEnabled;
      break;
    case cudaDevAttrIntegrated:
      *value = p.integrated;
      break;
    case cudaDevAttrCanMapHostMemory:
      *value = p.canMapHostMemory;
      break;
    case cudaDevAttrComputeMode:
      *value = p.computeMode;
      break;
    case cudaDevAttrMaxTexture1DWidth:
      *value = p.maxTexture1D;
      break;
    case cudaDevAttrMaxTexture2DWidth:
      *value = p.maxTexture2D[0];
      break;
    case cudaDevAttrMaxTexture2DHeight:
      *value = p.maxTexture2D[1];
      break;
    case cudaDevAttrMaxTexture3DWidth:
      *value = p.maxTexture3D[0];
      break;
    case cudaDevAttrMaxTexture3DHeight:
      *value = p.maxTexture3D[1];
      break;
    case cudaDevAttrMaxTexture3DDepth:
      *value = p.maxTexture3D[2];
      break;
    case cudaDevAttrMaxTexture2DLayeredWidth:
      *value = p.maxTexture2DLayered[0];
      break;
    case cudaDevAttrMaxTexture2DLayeredHeight:
      *value = p.maxTexture2DLayered[1];
      break;
    case cudaDevAttrMaxTexture2DLayeredLayers:
      *value = p.maxTexture2DLayered[2];
      break;
    case cudaDevAttrSurfaceAlignment:
      *value = as_int(p.surfaceAlignment);
      break;
    case cudaDevAttrConcurrentKernels:
      *value = p.concurrentKernels;
      break;
    case cudaDevAttrEccEnabled:
      *value = p.ECCEnabled;
      break;
    case cudaDevAttrPciBusId:
      *value = p.pciBusID;
      break;
    case cudaDevAttrPciDeviceId:
      *value = p.pciDeviceID;
      break;
    case cudaDevAttrTccDriver:
      *value = p.tccDriver;
      break;
    case cudaDevAttrMemoryClockRate:
      *value = p.memoryClockRate;
      break;
    case cudaDevAttrGlobalMemoryBusWidth:
      *value = p.memoryBusWidth;
      break;
    case cudaDevAttrL2CacheSize:
      *value = p.l2CacheSize;
      break;
    case cudaDevAttrMaxThreadsPerMultiProcessor:
      *value = p.maxThreadsPerMultiProcessor;
      break;
    case cudaDevAttrAsyncEngineCount:
      *value = p.asyncEngineCount;
      break;
    case cudaDevAttrUnifiedAddressing:
      *value = p.unifiedAddressing;
      break;
    case cudaDevAttrMaxTexture1DLayeredWidth:
      *value = p.maxTexture1DLayered[0];
      break;
    case cudaDevAttrMaxTexture1DLayeredLayers:
      *value = p.maxTexture1DLayered[1];
      break;
    case cudaDevAttrMaxTexture2DGatherWidth:
      *value = p.maxTexture2DGather[0];
      break;
    case cudaDevAttrMaxTexture2DGatherHeight:
      *value = p.maxTexture2DGather[1];
      break;
    case cudaDevAttrMaxTexture3DWidthAlt:
      *value = p.maxTexture3DAlt[0];
      break;
    case cudaDevAttrMaxTexture3DHeightAlt:
      *value = p.maxTexture3DAlt[1];
      break;
    case cudaDevAttrMaxTexture3DDepthAlt:
      *value = p.maxTexture3DAlt[2];
      break;
    case cudaDevAttrPciDomainId:
      *value = p.pciDomainID;
      break;
    case cudaDevAttrTexturePitchAlignment:
      *value = as_int(p.texturePitchAlignment);
      break;
    case cudaDevAttrMaxTextureCubemapWidth:
      *value = p.maxTextureCubemap;
      break;
    case cudaDevAttrMaxTextureCubemapLayeredWidth:
      *value = p.maxTextureCubemapLayered[0];
      break;
    case cudaDevAttrMaxTextureCubemapLayeredLayers:
      *value = p.maxTextureCubemapLayered[1];
      break;
    case cudaDevAttrMaxSurface1DWidth:
      *value = p.maxSurface1D;
      break;
    case cudaDevAttrMaxSurface2DWidth:
      *value = p.maxSurface2D[0];
      break;
    case cudaDevAttrMaxSurface2DHeight:
      *value = p.maxSurface2D[1];
      break;
    case cudaDevAttrMaxSurface3DWidth:
      *value = p.maxSurface3D[0];
      break;
    case cudaDevAttrMaxSurface3DHeight:
      *value = p.maxSurface3D[1];
      break;
    case cudaDevAttrMaxSurface3DDepth:
      *value = p.maxSurface3D[2];
      break;
    case cudaDevAttrMaxSurface1DLayeredWidth:
      *value = p.maxSurface1DLayered[0];
      break;
    case cudaDevAttrMaxSurface1DLayeredLayers:
      *value = p.maxSurface1DLayered[1];
      break;
    case cudaDevAttrMaxSurface2DLayeredWidth:
      *value = p.maxSurface2DLayered[0];
      break;
    case cudaDevAttrMaxSurface2DLayeredHeight:
      *value = p.maxSurface2DLayered[1];
      break;
    case cudaDevAttrMaxSurface2DLayeredLayers:
      *value = p.maxSurface2DLayered[2];
      break;
    case cudaDevAttrMaxSurfaceCubemapWidth:
      *value = p.maxSurfaceCubemap;
      break;
    case cudaDevAttrMaxSurfaceCubemapLayeredWidth:
      *value = p.maxSurfaceCubemapLayered[0];
      break;
    case cudaDevAttrMaxSurfaceCubemapLayeredLayers:
      *value = p.maxSurfaceCubemapLayered[1];
      break;
    case cudaDevAttrMaxTexture1DLinearWidth:
      *value = p.maxTexture1DLinear;
      break;
    case cudaDevAttrMaxTexture2DLinearWidth:
      *value = p.maxTexture2DLinear[0];
      break;
    case cudaDevAttrMaxTexture2DLinearHeight:
      *value = p.maxTexture2DLinear[1];
      break;
    case cudaDevAttrMaxTexture2DLinearPitch:
      *value = p.maxTexture2DLinear[2];
      break;
    case cudaDevAttrMaxTexture2DMipmappedWidth:
      *value = p.maxTexture2DMipmap[0];
      break;
    case cudaDevAttrMaxTexture2DMipmappedHeight:
      *value = p.maxTexture2DMipmap[1];
      break;
    case cudaDevAttrComputeCapabilityMajor:
      *value = p.major;
      break;
    case cudaDevAttrComputeCapabilityMinor:
      *value = p.minor;
      break;
    case cudaDevAttrMaxTexture1DMipmappedWidth:
      *value = p.maxTexture1DMipmap;
      break;
    case cudaDevAttrStreamPrioritiesSupported:
      *value = p.streamPrioritiesSupported;
      break;
    case cudaDevAttrGlobalL1CacheSupported:
      *value = p.globalL1CacheSupported;
      break;
    case cudaDevAttrLocalL1CacheSupported:
      *value = p.localL1CacheSupported;
      break;
    case cudaDevAttrMaxSharedMemoryPerMultiprocessor:
      *value = as_int(p.sharedMemPerMultiprocessor);
      break;
    case cudaDevAttrMaxRegistersPerMultiprocessor:
      *value = p.regsPerMultiprocessor;
      break;
    case cudaDevAttrManagedMemory:
      *value = p.managedMemory;
      break;
    case cudaDevAttrIsMultiGpuBoard:
      *value = p.isMultiGpuBoard;
      break;
    case cudaDevAttrMultiGpuBoardGroupID:
      *value = p.multiGpuBoardGroupID;
      break;
    case cudaDevAttrHostNativeAtomicSupported:
      *value = p.hostNativeAtomicSupported;
      break;
    case cudaDevAttrSingleToDoublePrecisionPerfRatio:
      *value = p.singleToDoublePrecisionPerfRatio;
      break;
    case cudaDevAttrPageableMemoryAccess:
      *value = p.pageableMemoryAccess;
      break;
    case cudaDevAttrConcurrentManagedAccess:
      *value = p.concurrentManagedAccess;
      break;
    case cudaDevAttrComputePreemptionSupported:
      *value = p.computePreemptionSupported;
      break;
    case cudaDevAttrCanUseHostPointerForRegisteredMem:
      *value = p.canUseHostPointerForRegisteredMem;
      break;
    case cudaDevAttrCooperativeLaunch:
      *value = p.cooperativeLaunch;
      break;
    case cudaDevAttrCooperativeMultiDeviceLaunch:
      *value = p.cooperativeMultiDeviceLaunch;
      break;
    case cudaDevAttrMaxSharedMemoryPerBlockOptin:
      *value = as_int(p.sharedMemPerBlockOptin);
      break;
    case cudaDevAttrCanFlushRemoteWrites:
      *value = 0;
      break;
    case cudaDevAttrHostRegisterSupported:
      *value = p.hostRegisterSupported;
      break;
    case cudaDevAttrPageableMemoryAccessUsesHostPageTables:
      *value = p.pageableMemoryAccessUsesHostPageTables;
      break;
    case cudaDevAttrDirectManagedMemAccessFromHost:
      *value = p.directManagedMemAccessFromHost;
      break;
    case cudaDevAttrMaxBlocksPerMultiprocessor:
      *value = p.maxBlocksPerMultiProcessor;
      break;
    case cudaDevAttrMaxPersistingL2CacheSize:
      *value = p.persistingL2CacheMaxSize;
      break;
    case cudaDevAttrMaxAccessPolicyWindowSize:
      *value = p.accessPolicyMaxWindowSize;
      break;
    case cudaDevAttrReservedSharedMemoryPerBlock:
      *value = as_int(p.reservedSharedMemPerBlock);
      break;
    case cudaDevAttrSparseCudaArraySupported:
      *value = p.sparseCudaArraySupported;
      break;
    case cudaDevAttrHostRegisterReadOnlySupported:
      *value = p.hostRegisterReadOnlySupported;
      break;
    case cudaDevAttrTimelineSemaphoreInteropSupported:
      *value = p.timelineSemaphoreInteropSupported;
      break;
    case cudaDevAttrMemoryPoolsSupported:
      *value = p.memoryPoolsSupported;
      break;
    case cudaDevAttrGPUDirectRDMASupported:
      *value = p.gpuDirectRDMASupported;
      break;
    case cudaDevAttrGPUDirectRDMAFlushWritesOptions:
      *value = static_cast<int>(p.gpuDirectRDMAFlushWritesOptions);
      break;
    case cudaDevAttrGPUDirectRDMAWritesOrdering:
      *value = p.gpuDirectRDMAWritesOrdering;
      break;
    case cudaDevAttrMemoryPoolSupportedHandleTypes:
      *value = static_cast<int>(p.memoryPoolSupportedHandleTypes);
      break;
    case cudaDevAttrClusterLaunch:
      *value = p.clusterLaunch;
      break;
    case cudaDevAttrDeferredMappingCudaArraySupported:
      *value = p.deferredMappingCudaArraySupported;
      break;
    case cudaDevAttrIpcEventSupport:
      *value = p.ipcEventSupported;
      break;
    case cudaDevAttrMemSyncDomainCount:
      *value = 4;
      break;  // an H100's
    case cudaDevAttrNumaConfig:
      *value = p.deviceNumaConfig;
      break;
    case cudaDevAttrNumaId:
      *value = p.deviceNumaId;
      break;
    case cudaDevAttrMpsEnabled:
      *value = p.mpsEnabled;
      break;
    case cudaDevAttrHostNumaId:
      *value = p.hostNumaId;
      break;
    case cudaDevAttrD3D12CigSupported:
      *value = 0;
      break;
    case cudaDevAttrVulkanCigSupported:
      *value = 0;
      break;
    case cudaDevAttrGpuPciDeviceId:
      *value = static_cast<int>(p.gpuPciDeviceID);
      break;
    case cudaDevAttrGpuPciSubsystemId:
      *value = static_cast<int>(p.gpuPciSubsystemID);
      break;
    case cudaDevAttrHostNumaMemoryPoolsSupported:
      *value = 0;
      break;
    case cudaDevAttrHostNumaMultinodeIpcSupported:
      *value = p.hostNumaMultinodeIpcSupported;
      break;
    case cudaDevAttrHostMemoryPoolsSupported:
      *value = 0;
      break;
    case cudaDevAttrOnlyPartialHostNativeAtomicSupported:
      *value = 0;
      break;
    default:
      return record(cudaErrorInvalidValue);  // a reserved number, or none of CUDA's
  }
  return cudaSuccess;
}

cudaError_t cudaDeviceReset() {
  lockstep::emu::destroy_streams_and_events();
  lockstep::emu::reset_device_settings();
  lockstep::emu::set_sticky_error(cudaSuccess);  // also clears this thread's last error
  return cudaSuccess;
}

cudaError_t cudaDeviceGetLimit(std::size_t* value, cudaLimit limit) {
  if (!value) return record(cudaErrorInvalidValue);
  if (limit < cudaLimitStackSize || limit > cudaLimitPersistingL2CacheSize) return record(cudaErrorUnsupportedLimit);
  std::lock_guard lock(lockstep::emu::settings_mutex);
  *value = lockstep::emu::settings.limits[limit];
  return cudaSuccess;
}

cudaError_t cudaDeviceSetLimit(cudaLimit limit, std::size_t value) {
  if (limit < cudaLimitStackSize || limit > cudaLimitPersistingL2CacheSize) return record(cudaErrorUnsupportedLimit);
  if (limit == cudaLimitPersistingL2CacheSize && value > static_cast<std::size_t>(lockstep::emu::h100_properties().persistingL2CacheMaxSize))
    return record(cudaErrorInvalidValue);
  std::lock_guard lock(lockstep::emu::settings_mutex);
  lockstep::emu::settings.limits[limit] = value;
  return cudaSuccess;
}

cudaError_t cudaDeviceGetCacheConfig(cudaFuncCache* config) {
  if (!config) return record(cudaErrorInvalidValue);
  std::lock_guard lock(lockstep::emu::settings_mutex);
  *config = lockstep::emu::settings.cache_config;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetCacheConfig(cudaFuncCache config) {
  if (config < cudaFuncCachePreferNone || config > cudaFuncCachePreferEqual) return record(cudaErrorInvalidValue);
  std::lock_guard lock(lockstep::emu::settings_mutex);
  lockstep::emu::settings.cache_config = config;  // a preference; shared memory is never short here
  return cudaSuccess;
}

cudaError_t cudaDeviceGetSharedMemConfig(cudaSharedMemConfig* config) {
  if (!config) return record(cudaErrorInvalidValue);
  std::lock_guard lock(lockstep::emu::settings_mutex);
  *config = lockstep::emu::settings.shared_config;
  return cudaSuccess;
}

cudaError_t cudaDeviceSetSharedMemConfig(cudaSharedMemConfig config) {
  if (config < cudaSharedMemBankSizeDefault || config > cudaSharedMemBankSizeEightByte) return record(cudaErrorInvalidValue);
  return cudaSuccess;  // as on an H100, whose banks are 4 bytes wide whatever is asked: Get still answers FourByte
}

cudaError_t cudaDeviceGetPCIBusId(char* bus_id, int length, int device) {
  if (!bus_id || length <= 0) return record(cudaErrorInvalidValue);
  if (!valid_device(device)) return record(cudaErrorInvalidDevice);
  const cudaDeviceProp p = lockstep::emu::properties_of(device);
  std::snprintf(bus_id, static_cast<std::size_t>(length), "%04x:%02x:%02x.0", p.pciDomainID, p.pciBusID, p.pciDeviceID);
  return cudaSuccess;
}

// Any two devices are peers: they share the process's memory.
cudaError_t cudaDeviceCanAccessPeer(int* can_access, int device, int peer_device) {
  if (!can_access) return record(cudaErrorInvalidValue);
  if (!valid_device(device) || !valid_device(peer_device)) return record(cudaErrorInvalidDevice);
  *can_access = device != peer_device;  // a device is not its own peer
  return cudaSuccess;
}

cudaError_t cudaDeviceEnablePeerAccess(int peer_device, unsigned int flags) {
  if (flags != 0) return record(cudaErrorInvalidValue);
  if (!valid_device(peer_device)) return record(cudaErrorInvalidDevice);
  int device = 0;
  cudaGetDevice(&device);
  // An H100 refuses itself as its own peer (bench/RESULTS.md).
  if (peer_device == device) return record(cudaErrorPeerAccessUnsupported);
  std::lock_guard lock(lockstep::emu::peers_mutex);
  return lockstep::emu::peers.insert({device, peer_device}).second ? cudaSuccess : record(cudaErrorPeerAccessAlreadyEnabled);
}

cudaError_t cudaDeviceDisablePeerAccess(int peer_device) {
  if (!valid_device(peer_device)) return record(cudaErrorInvalidDevice);
  int device = 0;
  cudaGetDevice(&device);
  std::lock_guard lock(lockstep::emu::peers_mutex);
  return lockstep::emu::peers.erase({device, peer_device}) ? cudaSuccess : record(cudaErrorPeerAccessNotEnabled);
}

cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attributes, const void* kernel) {
  if (!attributes) return record(cudaErrorInvalidValue);
  if (!kernel) return record(cudaErrorInvalidDeviceFunction);
  const auto& info = lockstep::emu::kernel_info_for(kernel);
  const auto& limits = lockstep::h100_limits;
  cudaFuncAttributes a{};
  a.sharedSizeBytes = info.static_shared_bytes;
  a.maxThreadsPerBlock = static_cast<int>(limits.max_threads_per_block);
  a.numRegs = static_cast<int>(lockstep::emulated_registers_per_thread);
  a.ptxVersion = 90;
  a.binaryVersion = 90;
  // Unraised, the dynamic limit is what the 48 KiB leave beside the static arrays, as CUDA reports it.
  std::size_t dynamic = info.max_dynamic_shared_bytes;
  if (dynamic == limits.static_shared_per_block) dynamic = info.static_shared_bytes < dynamic ? dynamic - info.static_shared_bytes : 0;
  a.maxDynamicSharedSizeBytes = static_cast<int>(dynamic);
  a.preferredShmemCarveout = -1;
  *attributes = a;
  return cudaSuccess;
}

cudaError_t cudaFuncGetName(const char** name, const void* kernel) {
  if (!name) return record(cudaErrorInvalidValue);
  if (!kernel) return record(cudaErrorInvalidDeviceFunction);
  *name = lockstep::emu::kernel_info_for(kernel).name.c_str();  // kernel_info lives as long as the process
  return cudaSuccess;
}

cudaError_t cudaFuncSetAttributeForKernel(const void* kernel, cudaFuncAttribute attribute, int value) {
  if (!kernel) return record(cudaErrorInvalidDeviceFunction);
  auto& info = lockstep::emu::kernel_info_for(kernel);
  if (attribute == cudaFuncAttributePreferredSharedMemoryCarveout) return value >= -1 && value <= 100 ? cudaSuccess : record(cudaErrorInvalidValue);
  if (attribute != cudaFuncAttributeMaxDynamicSharedMemorySize) return record(cudaErrorInvalidValue);
  const auto limit = lockstep::h100_limits.shared_per_block_optin - info.static_shared_bytes;
  if (value < 0 || static_cast<std::size_t>(value) > limit) return record(cudaErrorInvalidValue);
  info.max_dynamic_shared_bytes = static_cast<std::size_t>(value);
  return cudaSuccess;
}

cudaError_t cudaFuncSetCacheConfig(const void* kernel, cudaFuncCache config) {
  if (!kernel) return record(cudaErrorInvalidDeviceFunction);
  if (config < cudaFuncCachePreferNone || config > cudaFuncCachePreferEqual) return record(cudaErrorInvalidValue);
  return cudaSuccess;  // a preference; occupancy answers assume the largest shared-memory carveout
}

cudaError_t cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags(int* blocks, const void* kernel, int block_size, std::size_t dynamic_shared_bytes,
                                                                   unsigned int flags) {
  if (!blocks || block_size <= 0 || (flags & ~static_cast<unsigned>(cudaOccupancyDisableCachingOverride))) return record(cudaErrorInvalidValue);
  if (!kernel) return record(cudaErrorInvalidDeviceFunction);
  const auto& info = lockstep::emu::kernel_info_for(kernel);
  const auto& limits = lockstep::h100_limits;
  // A block that could not be launched holds no place (CUDA answers 0, not an error).
  const std::size_t shared = info.static_shared_bytes + dynamic_shared_bytes;
  const std::size_t per_block_limit =
      info.max_dynamic_shared_bytes > limits.static_shared_per_block ? limits.shared_per_block_optin : limits.static_shared_per_block;
  if (static_cast<unsigned>(block_size) > limits.max_threads_per_block || shared > per_block_limit ||
      dynamic_shared_bytes > info.max_dynamic_shared_bytes) {
    *blocks = 0;
    return cudaSuccess;
  }
  *blocks = static_cast<int>(
      lockstep::max_blocks_per_sm(lockstep::h100_sm_limits, static_cast<unsigned>(block_size), lockstep::emulated_registers_per_thread, shared));
  return cudaSuccess;
}
