// Thrust as CUDA programs use it: device_vector, sort_by_key, reduce,
// transform, and a cudaMalloc'd buffer wrapped in a device_ptr. On the emulator
// lockstep nvcc builds Thrust's C++ backend (the CUDA backend is CUB's GPU
// code), over device memory, which is host memory there; nvcc builds the CUDA
// backend. Each result is checked against the C++ standard library.
#include <thrust/device_ptr.h>
#include <thrust/device_vector.h>
#include <thrust/functional.h>
#include <thrust/host_vector.h>
// No <thrust/reduce.h>, <thrust/sequence.h> or <thrust/transform.h>: as in
// the CUDA samples (smokeParticles), <thrust/sort.h> brings them with Thrust's
// CUDA backend, and lockstep nvcc gives a Thrust program the same headers.
#include <thrust/sort.h>

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "expect.h"

struct square {
  __host__ __device__ long long operator()(int x) const { return static_cast<long long>(x) * x; }
};

__global__ void add_index(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] += i;
}

int main() {
  const int n = 100003;
  std::mt19937 random(std::random_device{}());
  std::vector<unsigned> keys(n);
  for (unsigned& k : keys) k = random();
  thrust::device_vector<unsigned> d_keys(keys.begin(), keys.end());
  thrust::device_vector<int> d_values(n);
  thrust::sequence(d_values.begin(), d_values.end());
  thrust::sort_by_key(d_keys.begin(), d_keys.end(), d_values.begin());
  thrust::host_vector<unsigned> sorted_keys = d_keys;
  thrust::host_vector<int> permutation = d_values;
  std::vector<unsigned> expected = keys;
  std::sort(expected.begin(), expected.end());
  EXPECT(std::equal(expected.begin(), expected.end(), sorted_keys.begin()));
  for (int i = 0; i < n; ++i) EXPECT(keys[permutation[i]] == sorted_keys[i]);

  // A kernel's output in cudaMalloc'd memory, reduced and transformed by Thrust.
  int* raw = nullptr;
  cudaMalloc(&raw, n * sizeof(int));
  cudaMemset(raw, 0, n * sizeof(int));
  add_index<<<(n + 255) / 256, 256>>>(raw, n);
  EXPECT(cudaDeviceSynchronize() == cudaSuccess);
  thrust::device_ptr<int> data(raw);
  const long long sum = thrust::reduce(data, data + n, 0LL, thrust::plus<long long>());
  EXPECT(sum == static_cast<long long>(n) * (n - 1) / 2);
  thrust::device_vector<long long> squares(n);
  thrust::transform(data, data + n, squares.begin(), square());
  const long long sum_of_squares = thrust::reduce(squares.begin(), squares.end());
  long long expected_squares = 0;
  for (long long i = 0; i < n; ++i) expected_squares += i * i;
  EXPECT(sum_of_squares == expected_squares);
  cudaFree(raw);

  // thrust::system_error caught without including <thrust/system_error.h>: Thrust's CUDA backend headers bring
  // it in, and programs rely on that (lockstep nvcc includes it for a program that uses Thrust).
  bool caught = false;
  try {
    throw thrust::system_error(1, thrust::generic_category(), "thrown by the test");
  } catch (const thrust::system_error& e) {
    caught = std::string(e.what()).find("thrown by the test") != std::string::npos;
  }
  EXPECT(caught);

  if (failures) return 1;
  std::printf("thrust_algorithms: all results as expected\n");
  return 0;
}
