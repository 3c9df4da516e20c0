// A kernel that writes through a null pointer: as on a GPU, the launch itself
// returns cudaSuccess (here through cudaLaunchKernel, whose answer can be seen), the fault surfaces at the next synchronizing call, and the context
// stays broken: cudaGetLastError reports the error once (then cudaSuccess, as
// on an H100), and every later synchronizing call fails with it. The process goes on (on the emulator, the reason is printed).
#include <cstdio>

#include <cuda_runtime.h>

__global__ void write_through(float* p, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i] = 1.0f;
}

int main() {
  float* good = nullptr;
  if (cudaMalloc(&good, 256 * sizeof(float)) != cudaSuccess) return 2;
  write_through<<<1, 256>>>(good, 256);
  if (cudaDeviceSynchronize() != cudaSuccess) return 3;

  float* null_pointer = nullptr;
  int n = 1024;
  void* args[] = {&null_pointer, &n};
  const cudaError_t launched = cudaLaunchKernel((const void*)write_through, dim3(4), dim3(256), args, 0, nullptr);
  const cudaError_t at_sync = cudaDeviceSynchronize();
  const cudaError_t last = cudaGetLastError();
  const cudaError_t still = cudaGetLastError();
  float host[4];
  const cudaError_t copy = cudaMemcpy(host, good, sizeof host, cudaMemcpyDeviceToHost);
  std::printf("kernel_fault: launch %s, sync %s, last %s, again %s, copy %s\n", cudaGetErrorName(launched), cudaGetErrorName(at_sync),
              cudaGetErrorName(last), cudaGetErrorName(still), cudaGetErrorName(copy));
  const bool as_cuda = launched == cudaSuccess && at_sync == cudaErrorIllegalAddress && last == cudaErrorIllegalAddress && still == cudaSuccess &&
                       copy == cudaErrorIllegalAddress;
  return as_cuda ? 0 : 1;
}
