// Memory beyond cudaMalloc: pitched 2D copies and sets, page-locked, mapped,
// registered and managed host memory that kernels use directly, pointer
// attributes, stream-ordered allocation, the memory budget and symbols.
// Kernels here touch host memory, so under check mode (the library's kernel
// tests run checked too) that memory must be registered as usable.
#include <cstdlib>

#include "test_util.h"

namespace {

__global__ void scale_rows(float* m, std::size_t pitch, int width, int height, float factor) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x < width && y < height) {
    float* row = reinterpret_cast<float*>(reinterpret_cast<char*>(m) + y * pitch);
    row[x] *= factor;
  }
}

__global__ void add_one(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

TEST(RuntimeMemory, PitchedCopiesMoveTheRightElements) {
  const int width = 37 + static_cast<int>(testing_util::random_vector<int>(1, 0, 90)[0]), height = 19;
  const int host_pitch = width + 5, out_pitch = width + 11;  // in elements
  std::vector<float> in = testing_util::random_vector<float>(std::size_t(host_pitch) * height);
  float* device = nullptr;
  std::size_t pitch = 0;
  CUDA_OK(cudaMallocPitch(&device, &pitch, width * sizeof(float), height));
  EXPECT_GE(pitch, width * sizeof(float));
  CUDA_OK(cudaMemcpy2D(device, pitch, in.data(), host_pitch * sizeof(float), width * sizeof(float), height, cudaMemcpyHostToDevice));
  lockstep::launch(scale_rows, dim3((width + 63) / 64, height), 64)(device, pitch, width, height, 2.0f);
  const float sentinel = -12345.0f;
  std::vector<float> out(std::size_t(out_pitch) * height, sentinel);
  CUDA_OK(cudaMemcpy2D(out.data(), out_pitch * sizeof(float), device, pitch, width * sizeof(float), height, cudaMemcpyDeviceToHost));
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) ASSERT_EQ(out[y * out_pitch + x], 2.0f * in[y * host_pitch + x]) << "(" << x << ", " << y << ")";
    for (int x = width; x < out_pitch; ++x) ASSERT_EQ(out[y * out_pitch + x], sentinel) << "padding (" << x << ", " << y << ") was written";
  }
  // A set of a sub-rectangle, then copy back the whole.
  CUDA_OK(cudaMemset2D(device, pitch, 0, 3 * sizeof(float), 4));
  CUDA_OK(cudaMemcpy2DAsync(out.data(), out_pitch * sizeof(float), device, pitch, width * sizeof(float), height, cudaMemcpyDeviceToHost, 0));
  CUDA_OK(cudaStreamSynchronize(0));
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x)
      ASSERT_EQ(out[y * out_pitch + x], x < 3 && y < 4 ? 0.0f : 2.0f * in[y * host_pitch + x]) << "(" << x << ", " << y << ")";
  CUDA_OK(cudaFree(device));
}

TEST(RuntimeMemory, PitchSmallerThanTheRowIsRefused) {
  float a[64], b[64];
  EXPECT_EQ(cudaMemcpy2D(a, 16, b, 32, 32, 2, cudaMemcpyHostToHost), cudaErrorInvalidPitchValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidPitchValue);
}

TEST(RuntimeMemory, PinnedMemoryIsMappedForKernels) {
  const int n = 3000;
  std::vector<float> in = testing_util::random_vector<float>(n);
  float* pinned = nullptr;
  CUDA_OK(cudaHostAlloc(&pinned, n * sizeof(float), cudaHostAllocMapped));
  std::memcpy(pinned, in.data(), n * sizeof(float));
  float* mapped = nullptr;
  CUDA_OK(cudaHostGetDevicePointer(&mapped, pinned, 0));
  lockstep::launch(add_one, (n + 255) / 256, 256)(mapped, n);
  CUDA_OK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) ASSERT_EQ(pinned[i], in[i] + 1.0f) << i;
  cudaPointerAttributes attributes;
  CUDA_OK(cudaPointerGetAttributes(&attributes, pinned + 5));
  EXPECT_EQ(attributes.type, cudaMemoryTypeHost);
  EXPECT_EQ(attributes.hostPointer, pinned + 5);
  CUDA_OK(cudaFreeHost(pinned));
}

TEST(RuntimeMemory, RegisteredMemoryIsMappedForKernels) {
  const int n = 1024;
  std::vector<float> in = testing_util::random_vector<float>(n);
  void* raw = std::aligned_alloc(4096, n * sizeof(float));
  float* host = static_cast<float*>(raw);
  std::memcpy(host, in.data(), n * sizeof(float));
  CUDA_OK(cudaHostRegister(host, n * sizeof(float), cudaHostRegisterMapped));
  EXPECT_EQ(cudaHostRegister(host, n * sizeof(float), cudaHostRegisterMapped), cudaErrorHostMemoryAlreadyRegistered);
  EXPECT_EQ(cudaGetLastError(), cudaErrorHostMemoryAlreadyRegistered);
  float* mapped = nullptr;
  CUDA_OK(cudaHostGetDevicePointer(&mapped, host, 0));
  lockstep::launch(add_one, n / 256, 256)(mapped, n);
  CUDA_OK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) ASSERT_EQ(host[i], in[i] + 1.0f) << i;
  CUDA_OK(cudaHostUnregister(host));
  EXPECT_EQ(cudaHostUnregister(host), cudaErrorHostMemoryNotRegistered);
  EXPECT_EQ(cudaGetLastError(), cudaErrorHostMemoryNotRegistered);
  std::free(raw);
}

TEST(RuntimeMemory, ManagedMemoryIsSharedByHostAndKernels) {
  const int n = 5000;
  std::vector<float> in = testing_util::random_vector<float>(n);
  float* managed = nullptr;
  CUDA_OK(cudaMallocManaged(&managed, n * sizeof(float)));
  for (int i = 0; i < n; ++i) managed[i] = in[i];
  cudaMemLocation device{cudaMemLocationTypeDevice, 0}, host{cudaMemLocationTypeHost, 0};
  CUDA_OK(cudaMemAdvise(managed, n * sizeof(float), cudaMemAdviseSetPreferredLocation, device));
  CUDA_OK(cudaMemPrefetchAsync(managed, n * sizeof(float), device, 0, 0));
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  CUDA_OK(cudaStreamAttachMemAsync(stream, managed));
  lockstep::launch(add_one, (n + 255) / 256, 256, 0, stream)(managed, n);
  CUDA_OK(cudaStreamSynchronize(stream));
  CUDA_OK(cudaStreamDestroy(stream));
  CUDA_OK(cudaMemPrefetchAsync(managed, n * sizeof(float), host, 0, 0));
  CUDA_OK(cudaDeviceSynchronize());
  for (int i = 0; i < n; ++i) ASSERT_EQ(managed[i], in[i] + 1.0f) << i;
  cudaPointerAttributes attributes;
  CUDA_OK(cudaPointerGetAttributes(&attributes, managed));
  EXPECT_EQ(attributes.type, cudaMemoryTypeManaged);
  EXPECT_EQ(attributes.devicePointer, managed);
  EXPECT_EQ(attributes.hostPointer, managed);
  CUDA_OK(cudaFree(managed));
}

TEST(RuntimeMemory, PointerAttributesTellDeviceFromHost) {
  testing_util::device_buffer<float> device(64);
  cudaPointerAttributes attributes;
  CUDA_OK(cudaPointerGetAttributes(&attributes, device.get() + 3));
  EXPECT_EQ(attributes.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attributes.devicePointer, device.get() + 3);
  EXPECT_EQ(attributes.device, 0);
  std::vector<float> pageable(64);
  CUDA_OK(cudaPointerGetAttributes(&attributes, pageable.data()));
  EXPECT_EQ(attributes.type, cudaMemoryTypeUnregistered);
}

TEST(RuntimeMemory, StreamOrderedAllocationAndAsyncCopies) {
  const int n = 2048;
  std::vector<float> in = testing_util::random_vector<float>(n), out(n, 0.0f);
  cudaStream_t stream;
  CUDA_OK(cudaStreamCreate(&stream));
  float* device = nullptr;
  CUDA_OK(cudaMallocAsync(&device, n * sizeof(float), stream));
  CUDA_OK(cudaMemsetAsync(device, 0, n * sizeof(float), stream));
  CUDA_OK(cudaMemcpyAsync(device, in.data(), n / 2 * sizeof(float), cudaMemcpyHostToDevice, stream));
  lockstep::launch(add_one, n / 256, 256, 0, stream)(device, n);
  CUDA_OK(cudaMemcpyAsync(out.data(), device, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
  CUDA_OK(cudaFreeAsync(device, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], (i < n / 2 ? in[i] : 0.0f) + 1.0f) << i;
  CUDA_OK(cudaStreamDestroy(stream));
}

TEST(RuntimeMemory, MemoryInfoCountsAllocations) {
  std::size_t free_before = 0, total = 0, free_after = 0;
  CUDA_OK(cudaMemGetInfo(&free_before, &total));
  EXPECT_LE(free_before, total);
  const std::size_t bytes = std::size_t{64} << 20;
  void* p = nullptr;
  CUDA_OK(cudaMalloc(&p, bytes));
  CUDA_OK(cudaMemGetInfo(&free_after, &total));
  EXPECT_GE(free_before, free_after + bytes);
  CUDA_OK(cudaFree(p));
  void* too_much = nullptr;
  EXPECT_EQ(cudaMalloc(&too_much, total + 1), cudaErrorMemoryAllocation);
  EXPECT_EQ(cudaGetLastError(), cudaErrorMemoryAllocation);
}

__device__ float device_table[64];
__constant__ int constant_offsets[4];

__global__ void gather_through_symbols(float* out) {
  const int i = threadIdx.x;
  out[i] = device_table[(i + constant_offsets[i % 4]) % 64];
}

TEST(RuntimeMemory, SymbolsRoundTrip) {
  std::vector<float> table = testing_util::random_vector<float>(64);
  std::vector<int> offsets = testing_util::random_vector<int>(4, 0, 63);
  CUDA_OK(cudaMemcpyToSymbol(device_table, table.data(), 64 * sizeof(float)));
  CUDA_OK(cudaMemcpyToSymbol(constant_offsets, offsets.data(), 2 * sizeof(int)));
  CUDA_OK(cudaMemcpyToSymbolAsync(constant_offsets, offsets.data() + 2, 2 * sizeof(int), 2 * sizeof(int), cudaMemcpyHostToDevice, 0));
  testing_util::device_buffer<float> out(64);
  lockstep::launch(gather_through_symbols, 1, 64)(out.get());
  const std::vector<float> got = out.download();
  for (int i = 0; i < 64; ++i) ASSERT_EQ(got[i], table[(i + offsets[i % 4]) % 64]) << i;

  std::vector<float> back(64, 0.0f);
  CUDA_OK(cudaMemcpyFromSymbol(back.data(), device_table, 60 * sizeof(float), 4 * sizeof(float)));
  for (int i = 0; i < 60; ++i) ASSERT_EQ(back[i], table[i + 4]) << i;
  std::size_t size = 0;
  CUDA_OK(cudaGetSymbolSize(&size, constant_offsets));
  EXPECT_EQ(size, 4 * sizeof(int));
  void* address = nullptr;
  CUDA_OK(cudaGetSymbolAddress(&address, device_table));
  float first = 0;
  CUDA_OK(cudaMemcpy(&first, address, sizeof first, cudaMemcpyDeviceToHost));
  EXPECT_EQ(first, table[0]);
  // Past the variable's end.
  EXPECT_EQ(cudaMemcpyToSymbol(constant_offsets, offsets.data(), 2 * sizeof(int), 3 * sizeof(int)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpyFromSymbol(back.data(), device_table, 65 * sizeof(float)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidValue);
}

}  // namespace
