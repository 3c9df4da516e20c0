// Reductions as the lectures write them: a warp-shuffle reduction, a block
// reduction in shared memory finished with an atomic, and a histogram with
// shared-memory atomics.
#include "test_util.h"

using namespace testing_util;

namespace {

__device__ float warp_sum(float v) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  return v;
}

// Grid-stride partial sums, a shuffle reduction per warp, one atomic per warp.
__global__ void sum_warp_shuffle(const float* in, float* out, int n) {
  float v = 0.0f;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) v += in[i];
  v = warp_sum(v);
  if ((threadIdx.x & (warpSize - 1)) == 0) atomicAdd(out, v);
}

// Tree reduction in shared memory, halving the active threads per step; one
// atomic per block. blockDim.x must be a power of two.
__global__ void sum_block_atomic(const float* in, float* out, int n) {
  extern __shared__ float partial[];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  partial[threadIdx.x] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, partial[0]);
}

// Bins counted in shared memory first, so global atomics happen once per bin
// per block instead of once per element.
template <int bins>
__global__ void histogram_shared(const unsigned char* in, unsigned* hist, int n) {
  __shared__ unsigned local[bins];
  for (int b = threadIdx.x; b < bins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) atomicAdd(&local[in[i] % bins], 1u);
  __syncthreads();
  for (int b = threadIdx.x; b < bins; b += blockDim.x) atomicAdd(&hist[b], local[b]);
}

double sum_reference(const std::vector<float>& v) {
  double s = 0;
  for (float x : v) s += x;
  return s;
}

// Summing n values of magnitude <= 1 in float32 in any order: error grows
// like sqrt(n) ulps of the running sum; bound it relative to sum(|x|).
void expect_sum(float got, const std::vector<float>& v) {
  double abs_sum = 0;
  for (float x : v) abs_sum += std::abs(x);
  EXPECT_NEAR(got, sum_reference(v), 1e-5 * abs_sum + 1e-6) << "seed " << fresh_seed();
}

TEST(Reductions, WarpShuffleSum) {
  for (int n : {1, 31, 32, 1000, 1 << 20}) {
    auto v = random_vector<float>(n);
    device_buffer<float> in(v), out(1, 0);
    lockstep::launch(sum_warp_shuffle, 64, 256)(in.get(), out.get(), n);
    expect_sum(out.download()[0], v);
  }
}

TEST(Reductions, BlockTreeSumWithAtomic) {
  for (int threads : {32, 128, 1024}) {
    const int n = 100000 + threads;  // not a multiple of the block
    auto v = random_vector<float>(n);
    device_buffer<float> in(v), out(1, 0);
    lockstep::launch(sum_block_atomic, (n + threads - 1) / threads, threads, threads * sizeof(float))(in.get(), out.get(), n);
    expect_sum(out.download()[0], v);
  }
}

TEST(Reductions, HistogramSharedAtomics) {
  const int n = 1 << 20;
  auto v = random_vector<unsigned char>(n, 0, 255);
  device_buffer<unsigned char> in(v);
  device_buffer<unsigned> hist(100, 0);
  lockstep::launch(histogram_shared<100>, 48, 256)(in.get(), hist.get(), n);
  std::vector<unsigned> ref(100, 0);
  for (unsigned char x : v) ++ref[x % 100];
  EXPECT_EQ(hist.download(), ref);
}

}  // namespace
