// Shared memory: static arrays in 1-D, 2-D and template-sized shapes, dynamic
// memory of different element types, the 48 KiB opt-in, per-block isolation.
#include "test_util.h"

using namespace testing_util;

namespace {

// Transpose through a 2-D tile padded by one column (the bank-conflict
// habit), exercising 2-D static arrays with a template size.
template <int tile>
__global__ void transpose_tiled(const float* in, float* out, int rows, int cols) {
  __shared__ float block_tile[tile][tile + 1];
  int x = blockIdx.x * tile + threadIdx.x, y = blockIdx.y * tile + threadIdx.y;
  if (x < cols && y < rows) block_tile[threadIdx.y][threadIdx.x] = in[y * cols + x];
  __syncthreads();
  x = blockIdx.y * tile + threadIdx.x;
  y = blockIdx.x * tile + threadIdx.y;
  if (x < rows && y < cols) out[y * rows + x] = block_tile[threadIdx.x][threadIdx.y];
}

template <int tile>
void check_transpose(int rows, int cols) {
  auto v = random_vector<float>(std::size_t(rows) * cols);
  device_buffer<float> in(v), out(v.size());
  lockstep::launch(transpose_tiled<tile>, dim3((cols + tile - 1) / tile, (rows + tile - 1) / tile), dim3(tile, tile))(in.get(), out.get(), rows,
                                                                                                                      cols);
  auto got = out.download();
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) ASSERT_EQ(got[std::size_t(c) * rows + r], v[std::size_t(r) * cols + c]) << r << "," << c;
}

TEST(SharedMemory, TemplateSized2DTiles) {
  check_transpose<8>(37, 53);
  check_transpose<16>(64, 17);
  check_transpose<32>(100, 33);
}

// Every block writes its own index into its static array, waits, and checks
// nobody else's block wrote there: blocks in flight do not share arrays.
__global__ void blocks_are_isolated(int* bad) {
  __shared__ int mine[256];
  mine[threadIdx.x] = blockIdx.x;
  __syncthreads();
  for (int i = 0; i < 1000; ++i) {
    if (mine[(threadIdx.x + i) % blockDim.x] != static_cast<int>(blockIdx.x)) atomicAdd(bad, 1);
  }
}

TEST(SharedMemory, BlocksInFlightDoNotShareArrays) {
  device_buffer<int> bad(1, 0);
  lockstep::launch(blocks_are_isolated, 64, 256)(bad.get());
  EXPECT_EQ(bad.download()[0], 0);
}

// Dynamic shared memory reinterpreted as different types in one kernel.
__global__ void dynamic_mixed_types(const double* in, double* out, int n) {
  extern __shared__ __align__(16) unsigned char raw[];
  double* as_double = reinterpret_cast<double*>(raw);
  int* as_int = reinterpret_cast<int*>(as_double + n);
  as_double[threadIdx.x] = in[threadIdx.x];
  as_int[threadIdx.x] = static_cast<int>(threadIdx.x) * 3;
  __syncthreads();
  const int j = n - 1 - threadIdx.x;
  out[threadIdx.x] = as_double[j] + as_int[j];
}

TEST(SharedMemory, DynamicReinterpretedTypes) {
  const int n = 200;
  auto v = random_vector<double>(n);
  device_buffer<double> in(v), out(n);
  lockstep::launch(dynamic_mixed_types, 1, n, n * (sizeof(double) + sizeof(int)))(in.get(), out.get(), n);
  auto got = out.download();
  for (int t = 0; t < n; ++t) ASSERT_EQ(got[t], v[n - 1 - t] + 3 * (n - 1 - t));
}

// Uses all of a large dynamic allocation: only legal after opting in.
__global__ void fill_and_sum_dynamic(float* out, int floats) {
  extern __shared__ float big[];
  for (int i = threadIdx.x; i < floats; i += blockDim.x) big[i] = static_cast<float>(i % 7);
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int i = 0; i < floats; ++i) s += big[i];
    out[blockIdx.x] = s;
  }
}

TEST(SharedMemory, LargeDynamicAfterOptIn) {
  for (int kib : {64, 100, 227}) {
    const int bytes = kib * 1024, floats = bytes / 4;
    CUDA_OK(cudaFuncSetAttribute(fill_and_sum_dynamic, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    device_buffer<float> out(3);
    lockstep::launch(fill_and_sum_dynamic, 3, 256, bytes)(out.get(), floats);
    double expect = 0;
    for (int i = 0; i < floats; ++i) expect += i % 7;
    for (float s : out.download()) ASSERT_EQ(s, expect) << kib << " KiB";
  }
}

// Two device functions declaring extern __shared__ see the same memory.
__device__ void write_dynamic(int v) {
  extern __shared__ int shared_a[];
  shared_a[threadIdx.x] = v;
}
__device__ int read_dynamic(int i) {
  extern __shared__ int shared_b[];
  return shared_b[i];
}
__global__ void extern_declarations_alias(int* out) {
  write_dynamic(static_cast<int>(threadIdx.x) + 100);
  __syncthreads();
  out[threadIdx.x] = read_dynamic(blockDim.x - 1 - threadIdx.x);
}

TEST(SharedMemory, ExternDeclarationsAlias) {
  device_buffer<int> out(64);
  lockstep::launch(extern_declarations_alias, 1, 64, 64 * sizeof(int))(out.get());
  auto got = out.download();
  for (int t = 0; t < 64; ++t) ASSERT_EQ(got[t], 100 + 63 - t);
}

}  // namespace
