// Every launch limit of an H100 refused with a message that names it. The
// same checks run before a real launch on the GPU (with the card's limits).
#include "test_util.h"

namespace {

__global__ void noop(int* out) {
  if (out && threadIdx.x == 0 && blockIdx.x == 0) *out = 1;
}

// Launches and returns the launch_error, failing the test if there is none.
lockstep::launch_error refused(dim3 grid, dim3 block, std::size_t shared = 0) {
  try {
    lockstep::launch(noop, grid, block, shared)(nullptr);
  } catch (const lockstep::launch_error& e) {
    return e;
  }
  ADD_FAILURE() << "launch with grid (" << grid.x << "," << grid.y << "," << grid.z << ") block (" << block.x << "," << block.y << "," << block.z
                << ") was not refused";
  return lockstep::launch_error(cudaSuccess, "");
}

void expect_refused(dim3 grid, dim3 block, std::size_t shared, cudaError_t code, const std::vector<std::string>& phrases) {
  const lockstep::launch_error e = refused(grid, block, shared);
  EXPECT_EQ(e.code(), code) << e.what();
  for (const auto& phrase : phrases)
    EXPECT_NE(std::string(e.what()).find(phrase), std::string::npos) << "missing '" << phrase << "' in: " << e.what();
  EXPECT_NE(std::string(e.what()).find("noop"), std::string::npos) << "the message names the kernel: " << e.what();
}

TEST(LaunchLimits, ThreadsPerBlock) {
  expect_refused(1, dim3(1025), 0, cudaErrorInvalidValue, {"1025 threads", "1024 threads per block"});
  expect_refused(1, dim3(32, 32, 2), 0, cudaErrorInvalidValue, {"2048 threads", "1024 threads per block"});
}

TEST(LaunchLimits, BlockDimensionZ) { expect_refused(1, dim3(1, 1, 65), 0, cudaErrorInvalidValue, {"block dimension z is 65", "limit is 64"}); }

TEST(LaunchLimits, GridDimensions) {
  expect_refused(dim3(2147483648u), 1, 0, cudaErrorInvalidValue, {"grid dimension x is 2147483648", "2147483647"});
  expect_refused(dim3(1, 65536), 1, 0, cudaErrorInvalidValue, {"grid dimension y is 65536", "65535"});
  expect_refused(dim3(1, 1, 65536), 1, 0, cudaErrorInvalidValue, {"grid dimension z is 65536", "65535"});
}

TEST(LaunchLimits, ZeroDimensions) {
  expect_refused(dim3(0), 32, 0, cudaErrorInvalidValue, {"grid dimension x is 0"});
  expect_refused(1, dim3(32, 0), 0, cudaErrorInvalidValue, {"block dimension y is 0"});
}

TEST(LaunchLimits, DynamicSharedAbove48KiBNeedsOptIn) {
  expect_refused(1, 32, 48 * 1024 + 4, cudaErrorInvalidValue, {"49156 bytes of dynamic shared memory", "cudaFuncSetAttribute"});
}

TEST(LaunchLimits, OptInIsCappedAt227KiB) {
  EXPECT_EQ(cudaFuncSetAttribute(noop, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024 + 1), cudaErrorInvalidValue);
  cudaGetLastError();
  CUDA_OK(cudaFuncSetAttribute(noop, cudaFuncAttributeMaxDynamicSharedMemorySize, 100 * 1024));
  lockstep::launch(noop, 1, 32, 100 * 1024)(nullptr);  // allowed now
  expect_refused(1, 32, 100 * 1024 + 1, cudaErrorInvalidValue, {"allows 102400"});
  CUDA_OK(cudaFuncSetAttribute(noop, cudaFuncAttributeMaxDynamicSharedMemorySize, 48 * 1024));
}

TEST(LaunchLimits, LargestLegalLaunchesRun) {
  testing_util::device_buffer<int> out(1, 0);
  lockstep::launch(noop, 1, 1024)(out.get());
  lockstep::launch(noop, 1, dim3(1, 16, 64))(out.get());
  lockstep::launch(noop, dim3(1, 65535), 1)(out.get());
  EXPECT_EQ(out.download()[0], 1);
}

#if !defined(__CUDACC__)
// On the GPU a kernel like this does not compile (ptxas: "uses too much
// shared data"); the emulator refuses it at launch with the same limit.
__global__ void too_much_static_shared(float* out) {
  __shared__ float big[13 * 1024];  // 53248 bytes
  big[threadIdx.x] = 1.0f;
  __syncthreads();
  out[threadIdx.x] = big[(threadIdx.x + 1) % blockDim.x];
}

__global__ void static_shared_40k(float* out) {
  __shared__ float a[5 * 1024];
  __shared__ float b[5 * 1024];  // 40960 bytes in all
  a[threadIdx.x] = 1.0f;
  b[threadIdx.x] = 2.0f;
  __syncthreads();
  out[threadIdx.x] = a[threadIdx.x] + b[threadIdx.x];
}

TEST(LaunchLimits, StaticSharedAbove48KiB) {
  testing_util::device_buffer<float> out(32);
  try {
    lockstep::launch(too_much_static_shared, 1, 32)(out.get());
    FAIL() << "not refused";
  } catch (const lockstep::launch_error& e) {
    EXPECT_EQ(e.code(), cudaErrorInvalidValue);
    EXPECT_NE(std::string(e.what()).find("53248 bytes of static __shared__ memory"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("too_much_static_shared"), std::string::npos) << e.what();
  }
}

TEST(LaunchLimits, StaticPlusDynamicWithinOptIn) {
  testing_util::device_buffer<float> out(32);
  lockstep::launch(static_shared_40k, 1, 32)(out.get());  // 40 KiB static is fine
  // 40 KiB static leaves 227 - 40 = 187 KiB to opt into.
  EXPECT_EQ(cudaFuncSetAttribute(static_shared_40k, cudaFuncAttributeMaxDynamicSharedMemorySize, 188 * 1024), cudaErrorInvalidValue);
  cudaGetLastError();
  CUDA_OK(cudaFuncSetAttribute(static_shared_40k, cudaFuncAttributeMaxDynamicSharedMemorySize, 187 * 1024));
  lockstep::launch(static_shared_40k, 1, 32, 187 * 1024)(out.get());
  EXPECT_EQ(out.download()[5], 3.0f);
}

TEST(LaunchLimits, RefusalIsAnExceptionNotAStickyError) {
  cudaGetLastError();
  refused(1, 2048);
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
}
#endif

}  // namespace
