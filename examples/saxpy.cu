// examples/saxpy.cu: builds with nvcc for the GPU, or with g++ for the emulator.
#include <cstdio>
#include <vector>
#include "lockstep/cuda.h"

__global__ void saxpy(float a, const float* x, float* y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}

int main() {
  const int n = 1 << 20;
  std::vector<float> x(n, 1.0f), y(n, 2.0f);
  float *dx, *dy;
  cudaMalloc(&dx, n * sizeof(float));
  cudaMalloc(&dy, n * sizeof(float));
  cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  // grid, block, dynamic shared bytes (optional), then the kernel's arguments;
  // a launch outside the GPU's limits throws lockstep::launch_error.
  lockstep::launch(saxpy, (n + 255) / 256, 256)(3.0f, dx, dy, n);
  cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost);
  std::printf("y[0] = %g\n", y[0]);  // 5
  cudaFree(dx);
  cudaFree(dy);
}
