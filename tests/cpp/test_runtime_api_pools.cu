// Stream-ordered memory pools and stream attributes: what programs set and
// read back, allocations from a pool used by a kernel, and the refusals.
#include <cstdint>

#include "test_util.h"

namespace {

__global__ void add_one(float* data, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += 1.0f;
}

TEST(RuntimePools, DefaultPoolAttributesAndAllocations) {
  cudaMemPool_t pool = nullptr, current = nullptr;
  CUDA_OK(cudaDeviceGetDefaultMemPool(&pool, 0));
  CUDA_OK(cudaDeviceGetMemPool(&current, 0));
  EXPECT_EQ(pool, current);
  std::uint64_t threshold = UINT64_MAX, read = 0;
  CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &read));
  EXPECT_EQ(read, threshold);
  int reuse = 0;
  CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse));
  reuse = 1;
  CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse));
  EXPECT_EQ(reuse, 0);
  reuse = 1;
  CUDA_OK(cudaMemPoolSetAttribute(pool, cudaMemPoolReuseAllowOpportunistic, &reuse));

  const int n = 1000 + static_cast<int>(testing_util::random_vector<int>(1, 0, 500)[0]);
  std::vector<float> in = testing_util::random_vector<float>(n), out(n, -1.0f);
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreate(&stream));
  float* data = nullptr;
  CUDA_OK(cudaMallocFromPoolAsync(&data, n * sizeof(float), pool, stream));
  CUDA_OK(cudaMemcpyAsync(data, in.data(), n * sizeof(float), cudaMemcpyHostToDevice, stream));
  add_one<<<(n + 127) / 128, 128, 0, stream>>>(data, n);
  CUDA_OK(cudaMemcpyAsync(out.data(), data, n * sizeof(float), cudaMemcpyDeviceToHost, stream));
  std::uint64_t used = 0;
  CUDA_OK(cudaStreamSynchronize(stream));
  CUDA_OK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used));
  EXPECT_GE(used, n * sizeof(float));
  CUDA_OK(cudaFreeAsync(data, stream));
  CUDA_OK(cudaStreamSynchronize(stream));
  for (int i = 0; i < n; ++i) ASSERT_EQ(out[i], in[i] + 1.0f) << i;
  CUDA_OK(cudaMemPoolTrimTo(pool, 0));
  CUDA_OK(cudaStreamDestroy(stream));
}

TEST(RuntimePools, CreatedPoolBecomesTheDevicesAndGoes) {
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = 0;
  cudaMemPool_t pool = nullptr, current = nullptr, original = nullptr;
  CUDA_OK(cudaDeviceGetMemPool(&original, 0));
  CUDA_OK(cudaMemPoolCreate(&pool, &props));
  CUDA_OK(cudaDeviceSetMemPool(0, pool));
  CUDA_OK(cudaDeviceGetMemPool(&current, 0));
  EXPECT_EQ(current, pool);
  float* data = nullptr;
  CUDA_OK(cudaMallocAsync(&data, 256 * sizeof(float), nullptr));  // from the device's current pool
  CUDA_OK(cudaFreeAsync(data, nullptr));
  CUDA_OK(cudaDeviceSynchronize());
  CUDA_OK(cudaDeviceSetMemPool(0, original));
  CUDA_OK(cudaMemPoolDestroy(pool));
  props.allocType = cudaMemAllocationTypeInvalid;
  EXPECT_EQ(cudaMemPoolCreate(&pool, &props), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemPoolCreate(&pool, nullptr), cudaErrorInvalidValue);
  cudaGetLastError();
}

TEST(RuntimeStreamAttributes, AccessPolicyWindowIsKept) {
  cudaStream_t stream = nullptr;
  CUDA_OK(cudaStreamCreate(&stream));
  float* data = nullptr;
  CUDA_OK(cudaMalloc(&data, 1 << 20));
  cudaStreamAttrValue set{};
  set.accessPolicyWindow.base_ptr = data;
  set.accessPolicyWindow.num_bytes = 1 << 20;
  set.accessPolicyWindow.hitRatio = 0.625f;
  set.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  set.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  CUDA_OK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &set));
  cudaStreamAttrValue got{};
  CUDA_OK(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &got));
  EXPECT_EQ(got.accessPolicyWindow.base_ptr, static_cast<void*>(data));
  EXPECT_EQ(got.accessPolicyWindow.num_bytes, std::size_t{1} << 20);
  EXPECT_EQ(got.accessPolicyWindow.hitRatio, 0.625f);
  EXPECT_EQ(got.accessPolicyWindow.hitProp, cudaAccessPropertyPersisting);
  EXPECT_EQ(got.accessPolicyWindow.missProp, cudaAccessPropertyStreaming);
  CUDA_OK(cudaCtxResetPersistingL2Cache());
  set.accessPolicyWindow.hitRatio = 2.0f;
  EXPECT_EQ(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &set), cudaErrorInvalidValue);
  cudaGetLastError();
  CUDA_OK(cudaFree(data));
  CUDA_OK(cudaStreamDestroy(stream));
}

}  // namespace
