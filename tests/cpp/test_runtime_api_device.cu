// The device as the CUDA runtime describes it: properties that agree with the
// attributes and with each other, kernel attributes, and occupancy answers by
// CUDA's rules. The same text runs on an H100 and on the emulator, which
// describes itself as one.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "test_util.h"

namespace {

__global__ void plain_kernel(float* out) { out[blockIdx.x * blockDim.x + threadIdx.x] = 1.0f; }

__global__ void kernel_with_tile(float* out) {
  __shared__ float tile[256];  // 1024 bytes of static shared memory
  tile[threadIdx.x % 256] = static_cast<float>(threadIdx.x);
  __syncthreads();
  out[blockIdx.x * blockDim.x + threadIdx.x] = tile[(threadIdx.x + 1) % 256];
}

cudaDeviceProp properties() {
  cudaDeviceProp p;
  std::memset(&p, 0, sizeof p);
  EXPECT_EQ(cudaGetDeviceProperties(&p, 0), cudaSuccess);
  return p;
}

int attribute(cudaDeviceAttr a) {
  int value = -12345;
  EXPECT_EQ(cudaDeviceGetAttribute(&value, a, 0), cudaSuccess) << "attribute " << static_cast<int>(a);
  return value;
}

TEST(RuntimeDevice, OneDeviceAtLeastAndBadOrdinalsRefused) {
  int count = 0;
  CUDA_OK(cudaGetDeviceCount(&count));
  ASSERT_GE(count, 1);
  int device = -1;
  CUDA_OK(cudaGetDevice(&device));
  EXPECT_GE(device, 0);
  EXPECT_LT(device, count);
  cudaDeviceProp p;
  EXPECT_EQ(cudaGetDeviceProperties(&p, count), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaSetDevice(count), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // not sticky
  CUDA_OK(cudaSetDevice(0));
}

TEST(RuntimeDevice, AttributesAgreeWithProperties) {
  const cudaDeviceProp p = properties();
  EXPECT_GT(std::strlen(p.name), 0u);
  EXPECT_EQ(attribute(cudaDevAttrMaxThreadsPerBlock), p.maxThreadsPerBlock);
  EXPECT_EQ(attribute(cudaDevAttrMaxBlockDimX), p.maxThreadsDim[0]);
  EXPECT_EQ(attribute(cudaDevAttrMaxBlockDimZ), p.maxThreadsDim[2]);
  EXPECT_EQ(attribute(cudaDevAttrMaxGridDimX), p.maxGridSize[0]);
  EXPECT_EQ(attribute(cudaDevAttrMaxGridDimY), p.maxGridSize[1]);
  EXPECT_EQ(attribute(cudaDevAttrMaxSharedMemoryPerBlock), static_cast<int>(p.sharedMemPerBlock));
  EXPECT_EQ(attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin), static_cast<int>(p.sharedMemPerBlockOptin));
  EXPECT_EQ(attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor), static_cast<int>(p.sharedMemPerMultiprocessor));
  EXPECT_EQ(attribute(cudaDevAttrReservedSharedMemoryPerBlock), static_cast<int>(p.reservedSharedMemPerBlock));
  EXPECT_EQ(attribute(cudaDevAttrWarpSize), p.warpSize);
  EXPECT_EQ(attribute(cudaDevAttrMultiProcessorCount), p.multiProcessorCount);
  EXPECT_EQ(attribute(cudaDevAttrMaxThreadsPerMultiProcessor), p.maxThreadsPerMultiProcessor);
  EXPECT_EQ(attribute(cudaDevAttrMaxBlocksPerMultiprocessor), p.maxBlocksPerMultiProcessor);
  EXPECT_EQ(attribute(cudaDevAttrMaxRegistersPerBlock), p.regsPerBlock);
  EXPECT_EQ(attribute(cudaDevAttrMaxRegistersPerMultiprocessor), p.regsPerMultiprocessor);
  EXPECT_EQ(attribute(cudaDevAttrComputeCapabilityMajor), p.major);
  EXPECT_EQ(attribute(cudaDevAttrComputeCapabilityMinor), p.minor);
  EXPECT_EQ(attribute(cudaDevAttrL2CacheSize), p.l2CacheSize);
  EXPECT_EQ(attribute(cudaDevAttrMaxPersistingL2CacheSize), p.persistingL2CacheMaxSize);
  EXPECT_EQ(attribute(cudaDevAttrGlobalMemoryBusWidth), p.memoryBusWidth);
  EXPECT_EQ(attribute(cudaDevAttrUnifiedAddressing), p.unifiedAddressing);
  EXPECT_EQ(attribute(cudaDevAttrManagedMemory), p.managedMemory);
  EXPECT_EQ(attribute(cudaDevAttrCanMapHostMemory), p.canMapHostMemory);
  EXPECT_EQ(attribute(cudaDevAttrCooperativeLaunch), p.cooperativeLaunch);
  EXPECT_EQ(attribute(cudaDevAttrConcurrentKernels), p.concurrentKernels);
  EXPECT_EQ(attribute(cudaDevAttrTotalConstantMemory), static_cast<int>(p.totalConstMem));
  EXPECT_EQ(attribute(cudaDevAttrPciBusId), p.pciBusID);
  char bus_id[32] = {};
  CUDA_OK(cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0));
  unsigned domain = 99, bus = 99, slot = 99;
  ASSERT_EQ(std::sscanf(bus_id, "%x:%x:%x", &domain, &bus, &slot), 3) << bus_id;
  EXPECT_EQ(static_cast<int>(domain), p.pciDomainID);
  EXPECT_EQ(static_cast<int>(bus), p.pciBusID);
  EXPECT_EQ(static_cast<int>(slot), p.pciDeviceID);
}

TEST(RuntimeDevice, PropertiesAreSelfConsistent) {
  const cudaDeviceProp p = properties();
  EXPECT_EQ(p.warpSize, 32);
  EXPECT_LE(p.maxThreadsPerBlock, p.maxThreadsPerMultiProcessor);
  EXPECT_EQ(p.maxThreadsPerMultiProcessor % p.warpSize, 0);
  EXPECT_LE(p.sharedMemPerBlock, p.sharedMemPerBlockOptin);
  EXPECT_LE(p.sharedMemPerBlockOptin + p.reservedSharedMemPerBlock, p.sharedMemPerMultiprocessor);
  EXPECT_LE(p.regsPerBlock, p.regsPerMultiprocessor);
  EXPECT_GE(p.maxBlocksPerMultiProcessor, p.maxThreadsPerMultiProcessor / p.maxThreadsPerBlock);
  EXPECT_GT(p.totalGlobalMem, std::size_t{1} << 30);
  EXPECT_GT(p.multiProcessorCount, 0);
  for (int d = 0; d < 3; ++d) EXPECT_LE(p.maxThreadsDim[d], p.maxThreadsPerBlock);
  EXPECT_GE(p.maxGridSize[0], 65535);
  EXPECT_GT(p.l2CacheSize, 0);
  EXPECT_LE(p.persistingL2CacheMaxSize, p.l2CacheSize);
  EXPECT_EQ(p.unifiedAddressing, 1);
  EXPECT_EQ(p.integrated, 0);
}

#if !defined(__CUDACC__)
TEST(RuntimeDevice, EmulatorIsAnH100) {
  const cudaDeviceProp p = properties();
  EXPECT_NE(std::string(p.name).find("lockstep"), std::string::npos) << p.name;
  EXPECT_EQ(p.major, 9);
  EXPECT_EQ(p.minor, 0);
  EXPECT_EQ(p.multiProcessorCount, 132);
  EXPECT_EQ(p.maxThreadsPerMultiProcessor, 2048);
  EXPECT_EQ(p.maxBlocksPerMultiProcessor, 32);
  EXPECT_EQ(p.sharedMemPerMultiprocessor, 228u * 1024);
  EXPECT_EQ(p.sharedMemPerBlockOptin, 227u * 1024);
  EXPECT_EQ(p.regsPerMultiprocessor, 65536);
  EXPECT_EQ(p.totalGlobalMem, std::size_t{80} << 30);
  // The fields CUDA 13 dropped, which older programs print.
  EXPECT_EQ(attribute(cudaDevAttrClockRate), p.clockRate);
  EXPECT_EQ(attribute(cudaDevAttrMemoryClockRate), p.memoryClockRate);
  EXPECT_EQ(attribute(cudaDevAttrGpuOverlap), p.deviceOverlap);
  EXPECT_EQ(attribute(cudaDevAttrKernelExecTimeout), p.kernelExecTimeoutEnabled);
  EXPECT_EQ(attribute(cudaDevAttrComputeMode), p.computeMode);
  EXPECT_EQ(attribute(cudaDevAttrCooperativeMultiDeviceLaunch), p.cooperativeMultiDeviceLaunch);
  EXPECT_GT(p.clockRate, 0);
  EXPECT_GT(p.memoryClockRate, 0);
  EXPECT_EQ(cudaGetDeviceProperties_v2(&const_cast<cudaDeviceProp&>(p), 0), cudaSuccess);
  int value = 0;
  EXPECT_EQ(cudaDeviceGetAttribute(&value, cudaDevAttrReserved92, 0), cudaErrorInvalidValue);
  cudaGetLastError();
}
#endif

TEST(RuntimeDevice, VersionsAndFlags) {
  int runtime = 0, driver = 0;
  CUDA_OK(cudaRuntimeGetVersion(&runtime));
  CUDA_OK(cudaDriverGetVersion(&driver));
  EXPECT_EQ(runtime, CUDART_VERSION);
  EXPECT_GE(driver, runtime);
  CUDA_OK(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync | cudaDeviceMapHost));
  unsigned flags = 0;
  CUDA_OK(cudaGetDeviceFlags(&flags));
  EXPECT_EQ(flags & cudaDeviceScheduleMask, static_cast<unsigned>(cudaDeviceScheduleBlockingSync));
  EXPECT_EQ(cudaSetDeviceFlags(cudaDeviceScheduleSpin | cudaDeviceScheduleYield), cudaErrorInvalidValue);  // two schedules
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  CUDA_OK(cudaSetDeviceFlags(cudaDeviceScheduleAuto));
}

TEST(RuntimeDevice, LimitsReadBackWhatWasSet) {
  std::size_t heap = 0, stack = 0;
  CUDA_OK(cudaDeviceGetLimit(&heap, cudaLimitMallocHeapSize));
  CUDA_OK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
  EXPECT_GT(heap, 0u);
  EXPECT_GT(stack, 0u);
  const std::size_t wanted = heap + (std::size_t{16} << 20);
  CUDA_OK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, wanted));
  std::size_t now = 0;
  CUDA_OK(cudaDeviceGetLimit(&now, cudaLimitMallocHeapSize));
  EXPECT_EQ(now, wanted);
  CUDA_OK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
  CUDA_OK(cudaDeviceSetCacheConfig(cudaFuncCachePreferShared));
  cudaFuncCache cache = cudaFuncCachePreferNone;
  CUDA_OK(cudaDeviceGetCacheConfig(&cache));
  EXPECT_EQ(cache, cudaFuncCachePreferShared);
  CUDA_OK(cudaDeviceSetCacheConfig(cudaFuncCachePreferNone));
}

TEST(RuntimeDevice, NoPeerOfItself) {
  int can = -1;
  CUDA_OK(cudaDeviceCanAccessPeer(&can, 0, 0));
  EXPECT_EQ(can, 0);
  EXPECT_EQ(cudaDeviceEnablePeerAccess(0, 0), cudaErrorPeerAccessUnsupported);  // what the H100 answers
  EXPECT_EQ(cudaGetLastError(), cudaErrorPeerAccessUnsupported);
}

TEST(RuntimeDevice, FunctionAttributes) {
  cudaFuncAttributes plain, tiled;
  CUDA_OK(cudaFuncGetAttributes(&plain, plain_kernel));
  CUDA_OK(cudaFuncGetAttributes(&tiled, kernel_with_tile));
  EXPECT_EQ(plain.sharedSizeBytes, 0u);
  EXPECT_EQ(tiled.sharedSizeBytes, 256 * sizeof(float));
  EXPECT_EQ(plain.maxThreadsPerBlock, 1024);
  EXPECT_GT(plain.numRegs, 0);
  // Unraised, the dynamic limit is what 48 KiB leave beside the static arrays.
  EXPECT_EQ(plain.maxDynamicSharedSizeBytes, 48 * 1024);
  EXPECT_EQ(tiled.maxDynamicSharedSizeBytes, 48 * 1024 - 1024);
  const char* name = nullptr;
  CUDA_OK(cudaFuncGetName(&name, kernel_with_tile));
  ASSERT_NE(name, nullptr);
  EXPECT_NE(std::string(name).find("kernel_with_tile"), std::string::npos) << name;
  CUDA_OK(cudaFuncSetCacheConfig(plain_kernel, cudaFuncCachePreferL1));
  CUDA_OK(cudaFuncSetCacheConfig(plain_kernel, cudaFuncCachePreferNone));
}

// CUDA's occupancy rules, written out from the properties: warps, blocks,
// registers (per warp, rounded to 256, in four quarters of the SM) and shared
// memory (rounded to 128 bytes, with the driver's reserve).
int expected_blocks_per_sm(const cudaDeviceProp& p, const cudaFuncAttributes& a, int threads, std::size_t dynamic) {
  const int warps = (threads + p.warpSize - 1) / p.warpSize;
  int blocks = std::min(p.maxBlocksPerMultiProcessor, p.maxThreadsPerMultiProcessor / p.warpSize / warps);
  const int per_warp = (a.numRegs * p.warpSize + 255) / 256 * 256;
  blocks = std::min(blocks, p.regsPerMultiprocessor / 4 / per_warp * 4 / warps);
  const std::size_t shared = (a.sharedSizeBytes + p.reservedSharedMemPerBlock + dynamic + 127) / 128 * 128;
  return std::min(blocks, static_cast<int>(p.sharedMemPerMultiprocessor / shared));
}

TEST(RuntimeDevice, OccupancyFollowsTheRules) {
  const cudaDeviceProp p = properties();
  cudaFuncAttributes plain, tiled;
  CUDA_OK(cudaFuncGetAttributes(&plain, plain_kernel));
  CUDA_OK(cudaFuncGetAttributes(&tiled, kernel_with_tile));
  struct shape {
    int threads;
    std::size_t dynamic;
    int h100;  // the answer of an H100 for a kernel of at most 32 registers
  };
  const shape shapes[] = {{32, 0, 32}, {256, 0, 8}, {1024, 0, 2}, {96, 0, 21}, {128, 48 * 1024, 4}, {64, 20000, 11}, {512, 30 * 1024, 4}};
  for (const shape& s : shapes) {
    int blocks = -1;
    CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, plain_kernel, s.threads, s.dynamic));
    EXPECT_EQ(blocks, expected_blocks_per_sm(p, plain, s.threads, s.dynamic)) << s.threads << " threads, " << s.dynamic << " bytes";
    if (p.major == 9 && p.minor == 0 && plain.numRegs <= 32) EXPECT_EQ(blocks, s.h100) << s.threads << " threads, " << s.dynamic << " bytes";
  }
  int blocks = -1;
  CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel_with_tile, 256, 10000));
  EXPECT_EQ(blocks, expected_blocks_per_sm(p, tiled, 256, 10000));
  // More dynamic shared memory than the kernel allows: no block fits.
  CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, plain_kernel, 128, 48 * 1024 + 16));
  EXPECT_EQ(blocks, 0);
}

TEST(RuntimeDevice, PotentialBlockSizeFillsTheMultiprocessor) {
  const cudaDeviceProp p = properties();
  int grid = 0, block = 0;
  CUDA_OK(cudaOccupancyMaxPotentialBlockSize(&grid, &block, plain_kernel));
  int blocks = 0;
  CUDA_OK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, plain_kernel, block, 0));
  EXPECT_EQ(block * blocks, p.maxThreadsPerMultiProcessor);
  EXPECT_EQ(grid, blocks * p.multiProcessorCount);

  // 64 bytes of shared memory per thread: the search must find the size that keeps the most threads.
  cudaFuncAttributes a;
  CUDA_OK(cudaFuncGetAttributes(&a, plain_kernel));
  auto shared_for = [](int threads) { return static_cast<std::size_t>(threads) * 64; };
  CUDA_OK(cudaOccupancyMaxPotentialBlockSizeVariableSMem(&grid, &block, plain_kernel, shared_for));
  int best = 0, best_threads = 0;
  for (int size = 1024; size > 0; size -= 32) {
    const int fit =
        shared_for(size) <= static_cast<std::size_t>(a.maxDynamicSharedSizeBytes) ? expected_blocks_per_sm(p, a, size, shared_for(size)) : 0;
    if (fit * size > best_threads) best = size, best_threads = fit * size;
  }
  EXPECT_EQ(block, best);
  if (p.major == 9 && p.minor == 0 && a.numRegs <= 32) EXPECT_EQ(block, 512);
}

}  // namespace
