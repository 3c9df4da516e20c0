// The forms of CUDA's launch syntax real programs use, as they write them.
// Built for the emulator through `lockstep nvcc` and for the GPU by nvcc; the
// program checks every result itself and exits non-zero on a mismatch.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cuda_runtime.h>

#include "expect.h"

__global__ void add(float* y, float value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += value;
}

template <typename T, int times>
__global__ void scale(T* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] *= times;
}

// A kernel and the host function that launches it share a name (as llm.c's
// dev kernels do): the launch's argument count picks the kernel.
__global__ void negate(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = -y[i];
}
void negate(float* y, int n, int block_size) { negate<<<(n + block_size - 1) / block_size, block_size>>>(y, n); }

// An optional output, passed NULL (an integer for the compiler until it meets the parameter).
__global__ void negate_into(float* y, float* copy, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) {
    y[i] = -y[i];
    if (copy) copy[i] = y[i];
  }
}

// Dynamic shared memory declared at file scope (the CUDA samples'
// FunctionPointers), read through a cast as well as by index.
extern __shared__ unsigned char file_scope_block[];
__global__ void rotate_in_block(int* data) {
  int* staged = (int*)file_scope_block;
  staged[threadIdx.x] = data[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  const unsigned next = (threadIdx.x + 1) % blockDim.x;
  data[blockIdx.x * blockDim.x + threadIdx.x] = staged[next] + file_scope_block[0] * 0;
}

namespace kernels {
__global__ void reverse_in_block(int* data) {
  extern __shared__ int staged[];
  staged[threadIdx.x] = data[blockIdx.x * blockDim.x + threadIdx.x];
  __syncthreads();
  data[blockIdx.x * blockDim.x + threadIdx.x] = staged[blockDim.x - 1 - threadIdx.x];
}
}  // namespace kernels

// Template arguments the launch's arguments deduce: exactly (`T* y` from a
// float*), through a conversion (`const T*` from a float*, as the CUDA
// samples' Monte Carlo kernels are launched), and a default argument left out
// (as shfl_scan's `int* partial_sums = NULL`).
template <typename T>
__global__ void axpy(T* y, const T* x, T a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] += a * x[i];
}
template <typename T>
__global__ void fill(T* y, T value, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = value;
}
// Kernels overloaded on their parameters' types, as C++ allows.
__global__ void halve(float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] /= 2;
}
__global__ void halve(double* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] /= 4;  // tells the overloads apart
}
__global__ void add_rows(int* data, int width, int* row_sums = NULL) {
  int row = blockIdx.x, sum = 0;
  for (int c = 0; c < width; ++c) sum += data[row * width + c] += threadIdx.x == 0 ? 1 : 0;
  if (row_sums && threadIdx.x == 0) row_sums[row] = sum;
}

// A launch a macro expands to: seen because the driver preprocesses first.
#define ADD_ONE(ptr, n) add<<<((n) + 127) / 128, 128>>>(ptr, 1.0f, n)

template <typename T>
void scale_by_two(T* y, int n, cudaStream_t stream) {
  scale<T, 2><<<dim3((n + 63) / 64), dim3(64), 0, stream>>>(y, n);
}

// A kernel called through a pointer as a plain function (llm.c's benchmark_kernel in permute.cu does this).
template <class Kernel, class... Args>
void call_without_launch(Kernel kernel, Args... args) {
  kernel(args...);
}

int main() {
  const int n = 1000;
  std::vector<float> host(n);
  for (int i = 0; i < n; ++i) host[i] = static_cast<float>(std::rand() % 100);
  float* y = nullptr;
  cudaMalloc(&y, n * sizeof(float));
  cudaMemcpy(y, host.data(), n * sizeof(float), cudaMemcpyHostToDevice);

  add<<<(n + 255) / 256, 256>>>(y, 3.0f, n);  // plain
  EXPECT(cudaGetLastError() == cudaSuccess);
  ADD_ONE(y, n);  // through a macro
  scale<float, 3><<<dim3((n + 127) / 128, 1, 1), dim3(128, 1, 1)>>>(y,
                                                                    n);  // template arguments, split over lines
  cudaStream_t stream = nullptr;
  cudaStreamCreate(&stream);
  scale_by_two(y, n, stream);  // inside a template, on a stream
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
  void (*pointer)(float*, float, int) = add;
  (*pointer)<<<(n + 255) / 256, 256>>>(y, -1.0f, n);  // through a function pointer
  // The runtime API's launch: arguments as an array of pointers, the kernel
  // typed or cast to void* (as the CUDA samples write it).
  float plus = 0.5f, minus = -0.5f;
  int count = n;
  void* add_half[] = {&y, &plus, &count};
  EXPECT(cudaLaunchKernel((void*)add, dim3((n + 255) / 256), dim3(256), add_half, 0, nullptr) == cudaSuccess);
  void* subtract_half[] = {&y, &minus, &count};
  EXPECT(cudaLaunchKernel(add, dim3((n + 255) / 256), dim3(256), subtract_half) == cudaSuccess);
  negate(y, n, 128);
  negate_into<<<(n + 255) / 256, 256>>>(y, NULL, n);
  negate_into<<<(n + 255) / 256, 256>>>(y, 0, n);
  std::vector<float> out(n);
  cudaMemcpy(out.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) EXPECT(out[i] == -(((host[i] + 3.0f + 1.0f) * 3.0f * 2.0f) - 1.0f));

  // Dynamic shared memory, a namespace-qualified kernel.
  const int blocks = 3, threads = 64;
  std::vector<int> values(blocks * threads);
  for (int i = 0; i < blocks * threads; ++i) values[i] = std::rand();
  int* d = nullptr;
  cudaMalloc(&d, values.size() * sizeof(int));
  cudaMemcpy(d, values.data(), values.size() * sizeof(int), cudaMemcpyHostToDevice);
  kernels::reverse_in_block<<<blocks, threads, threads * sizeof(int)>>>(d);
  std::vector<int> reversed(values.size());
  cudaMemcpy(reversed.data(), d, values.size() * sizeof(int), cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) EXPECT(reversed[b * threads + t] == values[b * threads + threads - 1 - t]);
  rotate_in_block<<<blocks, threads, threads * sizeof(int)>>>(d);
  std::vector<int> rotated(values.size());
  cudaMemcpy(rotated.data(), d, values.size() * sizeof(int), cudaMemcpyDeviceToHost);
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < threads; ++t) EXPECT(rotated[b * threads + t] == reversed[b * threads + (t + 1) % threads]);

  // Deduced template arguments and default arguments.
  double* dy = nullptr;
  double* dx = nullptr;
  cudaMalloc(&dy, n * sizeof(double));
  cudaMalloc(&dx, n * sizeof(double));
  fill<<<(n + 255) / 256, 256>>>(dx, 2.0, n);  // T = double, exact types
  fill<<<(n + 255) / 256, 256>>>(dy, 1.0, n);
  axpy<<<(n + 127) / 128, 128>>>(dy, dx, 0.25, n);  // T = double, x converted to const double*
  std::vector<double> axpy_out(n);
  cudaMemcpy(axpy_out.data(), dy, n * sizeof(double), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) EXPECT(axpy_out[i] == 1.5);
  halve<<<(n + 127) / 128, 128>>>(dy, n);  // the double overload
  cudaMemcpy(axpy_out.data(), dy, n * sizeof(double), cudaMemcpyDeviceToHost);
  for (int i = 0; i < n; ++i) EXPECT(axpy_out[i] == 1.5 / 4);
  axpy<<<1, 2048>>>(dy, dx, 0.25, n);  // refused as any launch is
  EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);
  const int rows = 4, width = 8;
  int *grid_cells = nullptr, *row_sums = nullptr;
  cudaMalloc(&grid_cells, rows * width * sizeof(int));
  cudaMalloc(&row_sums, rows * sizeof(int));
  cudaMemset(grid_cells, 0, rows * width * sizeof(int));
  cudaMemset(row_sums, 0, rows * sizeof(int));
  add_rows<<<rows, 1>>>(grid_cells, width);  // row_sums left to its default
  add_rows<<<rows, 1>>>(grid_cells, width, row_sums);
  std::vector<int> sums(rows);
  cudaMemcpy(sums.data(), row_sums, rows * sizeof(int), cudaMemcpyDeviceToHost);
  for (int r = 0; r < rows; ++r) EXPECT(sums[r] == 2 * width);
  EXPECT_ERROR(cudaDeviceSynchronize(), cudaSuccess);
  cudaFree(dy);
  cudaFree(dx);
  cudaFree(grid_cells);
  cudaFree(row_sums);

  // A launch outside the device's limits fails as on the GPU: the kernel does
  // not run and the error waits in cudaPeekAtLastError / cudaGetLastError.
  add<<<1, 2048>>>(y, 100.0f, n);
  EXPECT_ERROR(cudaPeekAtLastError(), cudaErrorInvalidValue);  // what an H100 answers with CUDA 13, for every bad shape
  EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);
  EXPECT_ERROR(cudaGetLastError(), cudaSuccess);
  cudaMemcpy(out.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
  EXPECT(out[0] == -(((host[0] + 3.0f + 1.0f) * 3.0f * 2.0f) - 1.0f));
  add<<<dim3(1, 70000), 32>>>(y, 100.0f, n);  // grid.y above 65535
  EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);
  add<<<1, dim3(1, 1, 65)>>>(y, 100.0f, n);  // block.z above 64
  EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);
  add<<<0, 32>>>(y, 100.0f, n);  // an empty grid
  EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);
  add<<<1, dim3(32, 0)>>>(y, 100.0f, n);  // an empty block
  EXPECT_ERROR(cudaGetLastError(), cudaErrorInvalidValue);

  // Called from host code without a launch, a kernel runs nowhere: as the H100 answers (CUDA 13), the last
  // error is cudaErrorMissingConfiguration, not sticky, and memory is untouched.
  call_without_launch(add, y, 100.0f, n);
  call_without_launch(fill<float>, y, 7.0f, n);
  EXPECT_ERROR(cudaGetLastError(), cudaErrorMissingConfiguration);
  EXPECT_ERROR(cudaDeviceSynchronize(), cudaSuccess);
  cudaMemcpy(out.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
  EXPECT(out[0] == -(((host[0] + 3.0f + 1.0f) * 3.0f * 2.0f) - 1.0f));

  cudaFree(y);
  cudaFree(d);
  if (failures) return 1;
  std::printf("launch_forms: all launches gave the expected results\n");
  return 0;
}
