"""One whole CUDA program holding a batch of kernels: built once per compiler, run once per engine.

main() fills the inputs from a fixed seed, poisons the outputs, launches each kernel and prints
one line per kernel, `name digest`, a 64-bit FNV-1a hash of everything the kernel wrote
(its per-thread slots and its atomic accumulators), or `name error <cuda error>`.
"""

from __future__ import annotations

from .generator import ACCUMULATORS, MAX_BLOCKS, Kernel

# What generated kernels call: helpers in the forms issue 51 names (an inline
# __host__ __device__ cdiv, a template, structs holding arrays and pointers, a view),
# and device functions holding barriers.
PRELUDE = r"""
#include <cstdio>
#include <cstring>
#include <vector>

__host__ __device__ inline unsigned cdiv(unsigned a, unsigned b) { return (a + b - 1u) / b; }
template <typename T>
__host__ __device__ inline T mix(T a, T b) { return (a ^ (b >> 3)) * T(0x9e3779b1u) + b; }
__device__ inline unsigned rotl(unsigned a, unsigned b) { return (a << (b & 31u)) | (a >> ((32u - (b & 31u)) & 31u)); }
struct agg { unsigned a[4]; unsigned x; };
struct holder { unsigned* p; };
struct view {
  unsigned* p;
  __device__ unsigned& operator[](unsigned i) const { return p[i]; }
};
__device__ void put_slot(unsigned* p, unsigned i, unsigned v) { p[i & 3u] = v; }

// Interleaved tree reduction over the first ACTIVE slots; begins and ends on a barrier.
template <unsigned NT, unsigned ACTIVE>
__device__ unsigned block_sum(unsigned* scratch, unsigned v, unsigned tid) {
  __syncthreads();
  scratch[tid] = v;
  __syncthreads();
  for (unsigned s = 1; s < ACTIVE; s <<= 1) {
    if (tid % (2u * s) == 0u && tid + s < ACTIVE) scratch[tid] += scratch[tid + s];
    __syncthreads();
  }
  unsigned r = scratch[0];
  __syncthreads();
  return r;
}
template <unsigned NT, unsigned ACTIVE>
__device__ unsigned block_max(unsigned* scratch, unsigned v, unsigned tid) {
  __syncthreads();
  scratch[tid] = v;
  __syncthreads();
  unsigned m = 0;
  for (unsigned k = 0; k < ACTIVE; ++k) m = scratch[k] > m ? scratch[k] : m;
  __syncthreads();
  return m;
}
template <unsigned NT, unsigned ACTIVE>
__device__ unsigned neighbour(unsigned* scratch, unsigned v, unsigned tid) {
  __syncthreads();
  scratch[tid] = v;
  __syncthreads();
  unsigned r = scratch[(tid + 1u) % ACTIVE];
  __syncthreads();
  return r;
}
"""

MAIN_HEAD = r"""
static unsigned long long digest(const void* p, size_t bytes, unsigned long long h) {
  const unsigned char* b = static_cast<const unsigned char*>(p);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

int main() {
  const unsigned words_in = 1024, slots = 4 * MAX_BLOCKS * 256, accumulators = ACCUMULATORS;
  std::vector<unsigned> host_in(words_in);
  unsigned long long state = 0x2545F4914F6CDD1Dull;
  for (auto& w : host_in) {
    state ^= state << 13; state ^= state >> 7; state ^= state << 17;
    w = static_cast<unsigned>(state >> 11);
  }
  unsigned* in; unsigned long long* out; unsigned* acc;
  cudaMalloc(&in, words_in * sizeof(unsigned));
  cudaMalloc(&out, slots * sizeof(unsigned long long));
  cudaMalloc(&acc, accumulators * sizeof(unsigned));
  cudaMemcpy(in, host_in.data(), words_in * sizeof(unsigned), cudaMemcpyHostToDevice);
  std::vector<unsigned long long> host_out(slots);
  std::vector<unsigned> host_acc(accumulators);
  const unsigned n = 37;
  auto report = [&](const char* name) {
    cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) e = cudaGetLastError();
    if (e != cudaSuccess) { std::printf("%s error %s\n", name, cudaGetErrorName(e)); return; }
    cudaMemcpy(host_out.data(), out, slots * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
    cudaMemcpy(host_acc.data(), acc, accumulators * sizeof(unsigned), cudaMemcpyDeviceToHost);
    unsigned long long h = digest(host_out.data(), slots * sizeof(unsigned long long), 1469598103934665603ull);
    std::printf("%s %016llx\n", name, digest(host_acc.data(), accumulators * sizeof(unsigned), h));
    std::fflush(stdout);
  };
  auto poison = [&] {
    cudaMemset(out, 0xab, slots * sizeof(unsigned long long));
    cudaMemset(acc, 0x5a, accumulators * sizeof(unsigned));
  };
"""


def source(kernels: list[Kernel]) -> str:
    """The program of these kernels."""
    parts = [PRELUDE]
    parts += [k.source for k in kernels]
    parts.append(f"constexpr unsigned MAX_BLOCKS = {MAX_BLOCKS}, ACCUMULATORS = {ACCUMULATORS};")
    parts.append(MAIN_HEAD)
    for k in kernels:
        parts.append(f'  poison();\n  {k.launch};\n  report("{k.name}");')
    parts.append("  return 0;\n}\n")
    return "\n".join(parts)
