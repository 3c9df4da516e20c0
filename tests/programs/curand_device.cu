// cuRAND's device API in kernels, as Monte Carlo programs use it: XORWOW and
// Philox states initialised per thread (seed, subsequence, offset), uniform
// and normal draws. On the emulator the CUDA toolkit's own curand_kernel.h
// runs, so the sequences are the GPU's: the program prints a checksum of the
// first draws that both builds print alike. It checks what must hold of any
// correct generator: uniforms in (0, 1], normals with mean 0 and variance 1,
// different subsequences giving different draws, and the same state the same.
#include <cmath>
#include <cstdio>
#include <vector>

#include <curand_kernel.h>

template <class State>
__global__ void draw(unsigned long long seed, float* uniforms, float* normals, int per_thread) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  State state;
  curand_init(seed, t, 0, &state);
  for (int i = 0; i < per_thread; ++i) {
    uniforms[t * per_thread + i] = curand_uniform(&state);
    normals[t * per_thread + i] = curand_normal(&state);
  }
}

template <class State>
int check(const char* name, unsigned long long seed) {
  const int threads = 256, per_thread = 64, n = threads * per_thread;
  float *uniforms = nullptr, *normals = nullptr;
  cudaMallocManaged(&uniforms, n * sizeof(float));
  cudaMallocManaged(&normals, n * sizeof(float));
  for (int i = 0; i < n; ++i) uniforms[i] = normals[i] = std::nanf("");
  draw<State><<<threads / 64, 64>>>(seed, uniforms, normals, per_thread);
  if (cudaDeviceSynchronize() != cudaSuccess) return 1;
  int failures = 0;
  double sum = 0, normal_sum = 0, normal_squares = 0, checksum = 0;
  for (int i = 0; i < n; ++i) {
    if (!(uniforms[i] > 0.0f && uniforms[i] <= 1.0f) || !std::isfinite(normals[i])) ++failures;
    sum += uniforms[i];
    normal_sum += normals[i];
    normal_squares += double(normals[i]) * normals[i];
    if (i % per_thread < 4) checksum += uniforms[i] * (i % 97 + 1);
  }
  const double mean = sum / n, normal_mean = normal_sum / n, normal_variance = normal_squares / n - normal_mean * normal_mean;
  // Five standard errors: 1/sqrt(12 n) for the uniform mean, 1/sqrt(n) for the normal mean, sqrt(2/n) for the variance.
  if (std::fabs(mean - 0.5) > 5 / std::sqrt(12.0 * n) || std::fabs(normal_mean) > 5 / std::sqrt(double(n)) ||
      std::fabs(normal_variance - 1) > 5 * std::sqrt(2.0 / n))
    ++failures;
  if (uniforms[0] == uniforms[per_thread]) ++failures;  // thread 0 and thread 1: different subsequences
  std::printf("%s: mean %.4f, normal mean %.4f, variance %.4f, checksum of the first draws %.6f\n", name, mean, normal_mean, normal_variance,
              checksum);
  // Again from the same seed: the same draws.
  std::vector<float> first(uniforms, uniforms + n);
  draw<State><<<threads / 64, 64>>>(seed, uniforms, normals, per_thread);
  cudaDeviceSynchronize();
  for (int i = 0; i < n; ++i)
    if (uniforms[i] != first[i]) {
      ++failures;
      break;
    }
  cudaFree(uniforms);
  cudaFree(normals);
  return failures;
}

int main() {
  const int failures = check<curandStateXORWOW_t>("XORWOW", 1234) + check<curandStatePhilox4_32_10_t>("Philox4_32_10", 1234);
  std::printf("curand_device: %s\n", failures ? "FAILED" : "passed");
  return failures ? 1 : 0;
}
