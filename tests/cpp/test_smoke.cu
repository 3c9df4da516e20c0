#include "test_util.h"

using namespace testing_util;

__global__ void add_vectors(const float* a, const float* b, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = a[i] + b[i];
}

__global__ void reverse_in_block(int* data) {
  __shared__ int tile[256];
  int t = threadIdx.x;
  tile[t] = data[blockIdx.x * blockDim.x + t];
  __syncthreads();
  data[blockIdx.x * blockDim.x + t] = tile[blockDim.x - 1 - t];
}

TEST(Smoke, AddVectors) {
  const int n = 1000;
  auto a = random_vector<float>(n), b = random_vector<float>(n);
  device_buffer<float> da(a), db(b), out(n);
  lockstep::launch(add_vectors, (n + 127) / 128, 128)(da.get(), db.get(), out.get(), n);
  std::vector<double> ref(n);
  for (int i = 0; i < n; ++i) ref[i] = double(a[i]) + double(b[i]);
  EXPECT_CLOSE(out.download(), ref, 1e-6);
}

TEST(Smoke, ReverseWithBarrier) {
  auto v = random_vector<int>(256 * 3, -1000, 1000);
  device_buffer<int> d(v);
  lockstep::launch(reverse_in_block, 3, 256)(d.get());
  auto out = d.download();
  for (int b = 0; b < 3; ++b)
    for (int t = 0; t < 256; ++t) ASSERT_EQ(out[b * 256 + t], v[b * 256 + 255 - t]);
}
